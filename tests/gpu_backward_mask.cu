// The ReLU bit mask on the device: relu_forward_mask then relu_backward_mask equals backward(relu)
// bit for bit, the mask bits are exactly x > 0 with zero tail bits, for every type and width, n
// straddling word edges, misaligned and in-place arrays.
#include "gpu_support.hpp"

TEMPLATE_TEST_CASE("relu mask round trip on the device", "[gpu][backward][mask]", float, double, __half,
                   __nv_bfloat16) {
  cuact_test::run_mask_matrix<TestType>(Catch::rngSeed() + 501 + sizeof(TestType));
}
