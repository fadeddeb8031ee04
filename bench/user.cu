// --user: activations written plainly as a user would (ops_user.cu: no cost hint), fp32 and
// bf16 forward and backward at the seeds' shape, against memcpy and cub::DeviceTransform with the
// same functor; the registers and the heavy flag show what cuact's launch model estimated.
#include <cstdio>

#include "modes.cuh"
#include "ops.cuh"
#include "rows.cuh"

namespace bench {

int run_user(const device_info& device, const options& opts) {
  const int reps = opts.reps > 0 ? opts.reps : 9;
  row_runner runner(seeds_n * 4, seeds_n, reps);
  print_device(device, "--user", stdout);
  std::printf(
      "# n = 4096 x 393216 = %zu elements; user functors without a cost hint: heavy = the model's "
      "estimate (table: bf16, looked up from a table of the functor's results); median of %d "
      "calls; columns as --headline (x memcpy: over a copy of the row's bytes timed right after "
      "it)\n\n",
      seeds_n, reps);
  runner.print_header();
  std::vector<row_result> rows;
  for (const dtype t : {dtype::f32, dtype::bf16}) {
    for (const entry& e : user_entries()) {
      if (e.type == t) rows.push_back(runner.run(e, seeds_n, placement::out_of_place));
    }
    runner.print_rule();
  }
  return finish_mode(runner, rows, "user");
}

}  // namespace bench
