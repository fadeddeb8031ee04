// cuact::forward on the device for bfloat16: relu, selu and a user-defined leaky relu (no derivative)
// x every vector width x in/out of place x pointer misalignment x n, every element checked, no write
// outside [0, n). One type per file so the build parallelizes; the matrix is in common/gpu_support.hpp.
#include "gpu_support.hpp"

TEST_CASE("forward on the device: bfloat16", "[gpu][forward]") {
  cuact_test::run_forward_matrix<__nv_bfloat16>(Catch::rngSeed() + 101);
}
