// cuact::forward on the device for every activation of the op table and every dtype: out of place
// and in place (both overloads), pointer offsets 0..15, sizes straddling vector edges up to
// 2^20 + 3, every element against the reference kernel, poisoned outputs fully written, no byte
// outside [0, n) written, inputs unchanged. relu and selu (one cheap, one compute-heavy activation)
// also at every explicit vector width, at 2^24 + 5 elements (where the launch model gives several
// vectors or passes per thread), and launched directly with every vectors_per_thread and odd
// grids. The harness: common/gpu_cases.hpp.
#include "catch.hpp"
#include "gpu_cases.hpp"

TEMPLATE_TEST_CASE("forward on the device: every activation of the op table", "[gpu][forward]",
                   CUACT_TEST_DTYPES) {
  cuact_test::run_table_pass<cuact_test::pass::forward, TestType>("forward");
}
