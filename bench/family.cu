// --family: every op-table row, forward, backward and backward_from_output where the activation
// has them, fp32 / bf16 / fp16, at the seeds' shape; against memcpy of the same bytes and
// cub::DeviceTransform with the same functor; with the launch shape cuact's model chose.
#include <cstdio>
#include <string>

#include "modes.cuh"
#include "ops.cuh"
#include "rows.cuh"

namespace bench {
namespace {

/// Whether `label` contains one of the comma-separated substrings of `only` (every label matches
/// an empty list).
bool matches_only(const std::string& label, const std::string& only) {
  if (only.empty()) return true;
  for (const std::string& part : split_at(only, ',')) {
    if (label.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

int run_family(const device_info& device, const options& opts) {
  const int reps = opts.reps > 0 ? opts.reps : 9;
  row_runner runner(seeds_n * 4, seeds_n, reps);
  print_device(device, "--family", stdout);
  if (!family_built()) {
    std::printf(
        "# built with CUACT_BENCH_FAMILY=OFF: only the core rows (relu, selu) are in this "
        "executable\n");
  }
  std::printf(
      "# n = 4096 x 393216 = %zu elements; fresh standard normal inputs; median of %d calls "
      "after 2 warm-up calls; columns as --headline (x memcpy: over a copy of the row's bytes "
      "timed right after it)\n\n",
      seeds_n, reps);
  runner.print_header();
  std::vector<row_result> all;
  for (const dtype t : {dtype::f32, dtype::bf16, dtype::f16}) {
    std::vector<row_result> rows;
    for (const entry& e : table_entries()) {
      if (e.type != t || e.kind == op_kind::relu_forward_mask ||
          e.kind == op_kind::relu_backward_mask ||
          !matches_only(e.label() + " " + name(t), opts.only)) {
        continue;
      }
      rows.push_back(runner.run(e, seeds_n, placement::out_of_place));
    }
    if (rows.empty()) continue;
    runner.print_rule();
    print_minimums(rows, name(t));
    all.insert(all.end(), rows.begin(), rows.end());
  }
  if (all.empty()) std::printf("# no row matches --only %s\n", opts.only.c_str());
  return finish_mode(runner, all, "family");
}

}  // namespace bench
