// cuact::backward and cuact::backward_from_output on the device for bfloat16 (relu, selu x every width x
// dx == dy or not x misalignment x n), selu's gradient against central differences, and the
// from-output gradient against the from-input one. The matrices are in common/gpu_support.hpp.
#include "gpu_support.hpp"

TEST_CASE("backward on the device: bfloat16", "[gpu][backward]") {
  cuact_test::run_backward_matrix<__nv_bfloat16>(Catch::rngSeed() + 201);
}

TEST_CASE("selu backward matches central differences: bfloat16", "[gpu][backward]") {
  cuact_test::run_finite_difference_check<__nv_bfloat16>(Catch::rngSeed() + 301);
}

TEST_CASE("selu backward_from_output agrees with backward: bfloat16", "[gpu][backward]") {
  cuact_test::run_from_output_consistency<__nv_bfloat16>(Catch::rngSeed() + 401);
}
