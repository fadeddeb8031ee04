// Stand-in for ATen/cuda/CUDAContext.h (see torch/extension.h here): the current stream and the
// launch check the ModelNew files use.
#pragma once

#include <stdexcept>

#include <cuda_runtime.h>

namespace at {
namespace cuda {
// torch returns a CUDAStream, which converts to cudaStream_t.
cudaStream_t getCurrentCUDAStream();
}  // namespace cuda
}  // namespace at

#define C10_CUDA_KERNEL_LAUNCH_CHECK()                                                       \
  do {                                                                                       \
    if (cudaGetLastError() != cudaSuccess) throw std::runtime_error("kernel launch failed"); \
  } while (false)
