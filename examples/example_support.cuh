// Shared by the examples: a device check that explains itself, and error checking that says
// which call failed. Exit code 77 means "no GPU here" (CTest reports the example as skipped).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

inline void require_gpu(const char* example) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("%s: no CUDA device on this machine; this example needs a GPU to run.\n", example);
    std::exit(77);
  }
}

#define EXAMPLE_CHECK(call)                                            \
  do {                                                                 \
    const cudaError_t status_ = (call);                                \
    if (status_ != cudaSuccess) {                                      \
      std::printf("%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, \
                  cudaGetErrorString(status_));                        \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)
