// The activation is passed to the kernel by value, so it must be copyable.
// EXPECT-ERROR: cuact: an activation must be copyable
#include <cuact/cuact.cuh>

struct move_only {
  move_only() = default;
  move_only(const move_only&) = delete;
  move_only(move_only&&) = default;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x;
  }
};

cudaError_t call(const float* in, float* out, std::size_t n) {
  return cuact::forward(move_only{}, in, out, n);
}
