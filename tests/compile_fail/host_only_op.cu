// A cuact::transform op whose operator() is host code only: the kernel must not compile; the
// error names the op and the rule.
// EXPECT-ERROR: calling a __host__ function("host_only_product::operator ()(float, float) const")
// EXPECT-ERROR: ops_must_be_callable_from_device_code
#include <cuact/cuact.cuh>

struct host_only_product {
  float operator()(float x, float y) const { return x * y; }
};

cudaError_t call(const float* x, const float* y, float* out, std::size_t n) {
  return cuact::transform(host_only_product{}, cuact::outputs(out), n, cuact::inputs(x, y));
}
