// Catch2 main for GPU tests (Catch2 v3 or v2: see catch.hpp): with no usable CUDA device the whole
// executable exits with 77, which CTest reports as "Skipped" (SKIP_RETURN_CODE), never as passed.
#define CATCH_CONFIG_RUNNER
#include "catch.hpp"

#include <cuda_runtime.h>

#include <cstdio>

int main(int argc, char* argv[]) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  return cuact_catch_run(argc, argv);
}
