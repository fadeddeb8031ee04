// cuact::forward on std::int8_t storage (in place): rejected like every non-floating type.
// EXPECT-ERROR: cuact: unsupported input element type
#include <cuact/cuact.cuh>

#include <cstdint>

cudaError_t call(std::int8_t* data, std::size_t n) {
  return cuact::forward(cuact::relu{}, data, n);
}
