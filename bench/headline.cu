// --headline: the seeds' shape (4096 x 393216 elements; fp64 half as many), the core rows (relu,
// selu) forward out of place and in place, backward and backward_from_output, fp32 / bf16 / fp16
// / fp64, and the ReLU mask pair; each against cudaMemcpyAsync of the same bytes and
// cub::DeviceTransform with the same functor, with the launch shape cuact's model chose.
#include <cstdio>

#include "modes.cuh"
#include "ops.cuh"
#include "rows.cuh"

namespace bench {

int run_headline(const device_info& device, const options& opts) {
  const int reps = opts.reps > 0 ? opts.reps : 15;
  row_runner runner(seeds_n * 4, seeds_n, reps);
  print_device(device, "--headline", stdout);
  const double copy_bytes = 2.0 * static_cast<double>(seeds_n) * 4;
  const double copy = runner.memcpy_gbps(copy_bytes);
  std::printf(
      "# measured cudaMemcpyAsync D2D at the start: %.1f GB/s (%.2f GB read + written per call)\n",
      copy, copy_bytes / 1e9);
  std::printf(
      "# n = 4096 x 393216 = %zu elements (fp64: %zu); inputs: fresh standard normal values; "
      "median of %d calls after 2 warm-up calls, CUDA events around each call enqueued while the "
      "GPU is kept busy (GPU time, host enqueue excluded: busy_start.cuh)\n",
      seeds_n, seeds_n / 2, reps);
  std::printf(
      "# GB/s = (bytes read + written) / time; x memcpy: over cudaMemcpyAsync D2D of the same "
      "total bytes timed right after the row (copy GB/s); x CUB: over cub::DeviceTransform "
      "with the same functor (first called at this n)\n");
  std::printf(
      "# blocks/thr/vpt/heavy: the launch shape cuact's model chose for this call (heavy = "
      "table: a bf16 forward looked up from a table of its results); regs and blk/SM: the "
      "kernel's registers per thread and resident blocks per SM (at the launch's shared memory: "
      "the model's cap where it sets one); check: cuact vs CUB's (or "
      "another cuact route's) result\n\n");
  runner.print_header();

  std::vector<row_result> rows;
  for (const dtype t : {dtype::f32, dtype::bf16, dtype::f16, dtype::f64}) {
    const std::size_t n = seeds_n_for(t);
    for (const entry& e : table_entries()) {
      if (!e.core || e.type != t) continue;
      rows.push_back(runner.run(e, n, placement::out_of_place));
      if (e.is_forward()) rows.push_back(runner.run(e, n, placement::in_place));
    }
    runner.print_rule();
  }

  std::printf("\n");
  for (const row_result& mask : rows) {
    if (mask.source->kind != op_kind::relu_backward_mask) continue;
    for (const row_result& plain : rows) {
      if (plain.source->kind != op_kind::backward || plain.source->type != mask.source->type ||
          plain.source->activation != mask.source->activation) {
        continue;
      }
      const double speedup = plain.cuact_ms / mask.cuact_ms;
      std::printf(
          "# relu_backward_mask vs relu backward, %s: %.3f ms vs %.3f ms: %.2fx as fast "
          "(target >= 1.40: %s; bytes ratio %.3f)\n",
          name(mask.source->type), mask.cuact_ms, plain.cuact_ms, speedup,
          speedup >= 1.4 ? "met" : "MISSED", mask.bytes / plain.bytes);
    }
  }
  return finish_mode(runner, rows, "headline");
}

}  // namespace bench
