// Keeping the GPU busy while the host enqueues a timed call, so that the events around the call
// measure the GPU's time only (nvbench's blocking kernel does the same). On an idle GPU the start
// event runs at once and the interval also holds the host's enqueue, which differs between
// contestants (cuact's argument checks, CUB's dispatch) and would skew their ratios. Included by
// cuact_bench's timing (common.cu) and by cuact_bench_fused.
#pragma once

#include <cuda_runtime.h>

namespace bench {

/// Spins one thread until `nanoseconds` have passed on the GPU's global timer.
static __global__ void busy_start_kernel(unsigned long long nanoseconds) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

/// How long busy_start keeps the GPU busy: above the host's enqueue of any contestant (tens of
/// microseconds) with room for the host's occasional stalls.
constexpr unsigned long long busy_start_nanoseconds = 200000;

/// Enqueues busy_start_kernel on `stream`; record the start event right after it.
inline cudaError_t busy_start(cudaStream_t stream) {
  busy_start_kernel<<<1, 1, 0, stream>>>(busy_start_nanoseconds);
  return cudaGetLastError();
}

}  // namespace bench
