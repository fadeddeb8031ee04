/// \file
/// The operations the benchmark times, behind one type-erased launcher each, so that the modes
/// are plain loops and the template instantiations (CUB's are the heavy ones) live in one
/// translation unit per element type (ops_f32.cu, ops_f16.cu, ops_bf16.cu, ops_f64.cu), which
/// compile in parallel.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common.cuh"

namespace bench {

enum class op {
  relu,                       ///< forward: out = relu(in)
  selu,                       ///< forward: out = selu(in)
  relu_backward,              ///< dx = relu'(x) dy, from x
  selu_backward,              ///< dx = selu'(x) dy, from x
  relu_backward_from_output,  ///< dx from y = relu(x)
  selu_backward_from_output,  ///< dx from y = selu(x)
  relu_forward_mask,          ///< y = relu(x) and a 1-bit mask
  relu_backward_mask,         ///< dx = mask bit ? dy : 0
};
const char* name(op o);
bool is_forward(op o);  ///< relu or selu (in place or not)

enum class impl { memcpy, cub, cuact };
const char* name(impl i);

/// One call's arrays.
/// - forward:            in0 = input, out = output (out == in0: in place)
/// - backward (x or y):  in0 = x or y, in1 = dy, out = dx
/// - relu_forward_mask:  in0 = x, out = y, out2 = mask
/// - relu_backward_mask: in0 = mask, in1 = dy, out = dx
struct call_args {
  const void* in0 = nullptr;
  const void* in1 = nullptr;
  void* out = nullptr;
  void* out2 = nullptr;
  std::size_t n = 0;
};

using launch_fn = cudaError_t (*)(const call_args& args, cudaStream_t stream);

/// The launcher for (implementation, operation, element type), or nullptr where this benchmark
/// does not build that combination (impl::memcpy has none: see memcpy_call).
launch_fn find_launcher(impl i, op o, dtype t);

/// Bytes one call reads plus writes for n elements of t (the mask counts n / 8 bytes).
double bytes_moved(op o, dtype t, std::size_t n);

/// The copy ceiling: a device-to-device cudaMemcpyAsync (moves 2 * copy_bytes: read + write).
inline cudaError_t memcpy_call(void* to, const void* from, std::size_t copy_bytes,
                               cudaStream_t stream) {
  return cudaMemcpyAsync(to, from, copy_bytes, cudaMemcpyDeviceToDevice, stream);
}

/// Per element type, implemented by ops_<type>.cu.
launch_fn find_launcher_f32(impl i, op o);
launch_fn find_launcher_f16(impl i, op o);
launch_fn find_launcher_bf16(impl i, op o);
launch_fn find_launcher_f64(impl i, op o);

}  // namespace bench
