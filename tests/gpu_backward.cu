// cuact::backward and cuact::backward_from_output on the device for every activation of the op
// table that has them and every dtype: dx out of place and over dy (in place), x and dy at their
// own offsets, sizes straddling vector edges up to 2^20 + 3, every element against the reference
// kernel, poisoned outputs fully written, no byte outside [0, n) written, inputs unchanged. relu
// and selu also at every explicit width, at 2^24 + 5 elements and launched directly with every
// vectors_per_thread and odd grids. The harness: common/gpu_cases.hpp. The ReLU mask: gpu_mask.cu.
#include "catch.hpp"
#include "gpu_cases.hpp"

TEMPLATE_TEST_CASE("backward on the device: every activation of the op table", "[gpu][backward]",
                   CUACT_TEST_DTYPES) {
  cuact_test::run_table_pass<cuact_test::pass::backward, TestType>("backward");
}

TEMPLATE_TEST_CASE("backward_from_output on the device: every activation of the op table",
                   "[gpu][backward]", CUACT_TEST_DTYPES) {
  cuact_test::run_table_pass<cuact_test::pass::backward_from_output, TestType>(
      "backward_from_output");
}
