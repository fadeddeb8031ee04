/// \file
/// Activation + scaled cast (fp8 quantization) with the absolute maximum of the unscaled result:
/// out[i] = saturate(act(in[i]) * scale), amax = max over i of |act(in[i])| (TransformerEngine's
/// Float8Quantizer: the amax feeds the next step's scale).
///
/// The per-element work is elementwise_thread's, unchanged: its op (fused.cuh's amax_op) returns
/// act(x) * scale and keeps the running maximum of |act(x)| in a variable of the calling thread.
/// quantize_thread, the __host__ __device__ part the CPU tests run, returns that thread's
/// maximum; the kernel reduces it per block (warp shuffles, then one warp over the warps' maxima
/// in shared memory) and one thread per block folds it into the device scalar with atomicMax on
/// the float's bits (non-negative floats order as their bit patterns do as unsigned integers).
///
/// NaN: |NaN| is skipped by the maximum, as fmaxf does (and TransformerEngine's amax).
/// The block reduction is written out (12 lines) rather than taken from cub::BlockReduce so that
/// cuact.cuh, which every user translation unit includes, does not pull in CUB.
#pragma once

#include <cuda/std/cstddef>

#include "../config.cuh"
#include "../numeric.cuh"
#include "../tuning_table.cuh"
#include "elementwise.cuh"
#include "table.cuh"

namespace cuact {
namespace detail {

/// The per-thread body: elementwise_thread with this thread's own amax (the op's `float* amax`,
/// pointed at a local here); returns it (>= 0). `scale`, where not null, is read once (a device
/// scalar, as TransformerEngine's delayed scaling keeps it) and replaces the op's.
#pragma nv_exec_check_disable
template <class Params, class Access = global_memory_access>
CUACT_HOST_DEVICE float quantize_thread(const Params& params, const float* scale,
                                        cuda::std::size_t thread, cuda::std::size_t num_threads,
                                        const Access& access = {}) {
  float amax = 0.0f;
  Params own = params;
  own.op.amax = &amax;
  if (scale != nullptr) own.op.scale = *scale;
  elementwise_thread(own, thread, num_threads, access);
  return amax;
}

#if defined(__CUDACC__)
/// The block's maximum of v >= 0, valid in thread 0 (blockDim.x a multiple of 32, at most 1024).
__device__ __forceinline__ float block_max(float v) {
  __shared__ float warp_max[32];
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(~0u, v, offset));
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_max[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? warp_max[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(~0u, v, offset));
  }
  return v;
}

#endif

/// One launch's arguments: the elementwise params (op: an amax op), the device scalar for the
/// amax and the device scale (null: the op's own).
template <class Params>
struct quantize_params {
  Params elementwise;
  float* amax;
  const float* scale;
};

#if defined(__CUDACC__)
/// One block of a quantize kernel: quantize_thread over the grid, then the block's maximum into
/// *amax.
template <class Params, class Access>
__device__ __forceinline__ void quantize_block(const quantize_params<Params>& params,
                                               const Access& access) {
  const cuda::std::size_t thread =
      static_cast<cuda::std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const cuda::std::size_t num_threads = static_cast<cuda::std::size_t>(gridDim.x) * blockDim.x;
  const float block =
      block_max(quantize_thread(params.elementwise, params.scale, thread, num_threads, access));
  if (threadIdx.x == 0 && block > 0.0f) {
    atomicMax(reinterpret_cast<unsigned*>(params.amax), __float_as_uint(block));
  }
}

CUACT_KERNELS_BEGIN
/// The kernel.
template <class Params>
CUACT_KERNEL void quantize_kernel(const quantize_params<Params> params) {
  quantize_block(params, global_memory_access{});
}
CUACT_KERNELS_END

CUACT_KERNELS_BEGIN
/// The kernel for a bf16_table_quantize_op, with bf16_table_window::bytes_of<float> of dynamic
/// shared memory: the table's copy there as the tabulated bf16 forward makes it (table.cuh:
/// tabulating_access). Launched in blocks of tabulated_quantize_threads_per_block, and compiled to
/// keep tabulated_quantize_min_blocks per SM.
template <class Params>
CUACT_KERNEL void __launch_bounds__(tabulated_quantize_threads_per_block,
                                    tabulated_quantize_min_blocks)
    tabulated_quantize_kernel(const quantize_params<Params> params) {
  quantize_block(params, tabulating_access<float>{{}, params.elementwise.op.entries});
}
CUACT_KERNELS_END
#endif

}  // namespace detail
}  // namespace cuact
