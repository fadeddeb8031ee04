// The concept's one hint is `cost`; the removed `is_heavy` flag is refused with a message that
// names its replacement, rather than silently estimated.
// EXPECT-ERROR: cuact: the is_heavy flag is gone
#include <cuact/forward.cuh>

struct old_style {
  static constexpr bool is_heavy = true;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x;
  }
};

cudaError_t call(const float* in, float* out, std::size_t n) {
  return cuact::forward(old_style{}, in, out, n);
}
