// CPU grid simulation for double: see common/grid_simulation.hpp. One type per file so the build
// parallelizes.
#include "grid_simulation.hpp"

TEST_CASE("grid simulation: double, every op x width x place x misalignment x n x grid", "[cpu][grid]") {
  std::mt19937_64 rng(Catch::rngSeed() + 1);
  cuact_test::run_all_ops<double>(rng);
}
