// cuact_bench_corpus: the corpus functors (corpus_functors.cuh), written as users write them,
// through cuact::forward at 4096 x 393216 in fp32, bf16 and fp16, against the same functor in a
// one-element-per-thread kernel with an int index, in a 16-byte grid-stride loop, in
// cub::DeviceTransform, and against cudaMemcpyAsync of the same bytes. Per row: medians, the
// ratios, the path cuact took (table: the bf16 lookup table; direct: computed) and its check.
//
// usage: cuact_bench_corpus [--reps N] [--only NAME,NAME...]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuact/detail/table_choice.cuh>

#include "corpus.cuh"
#include "rows.cuh"

namespace bench {
namespace {

std::vector<corpus_row> all_rows() {
  std::vector<corpus_row> rows;
  add_corpus_0_f32(rows), add_corpus_1_f32(rows), add_corpus_2_f32(rows), add_corpus_3_f32(rows);
  add_corpus_0_bf16(rows), add_corpus_1_bf16(rows), add_corpus_2_bf16(rows);
  add_corpus_3_bf16(rows);
  add_corpus_0_f16(rows), add_corpus_1_f16(rows), add_corpus_2_f16(rows), add_corpus_3_f16(rows);
  return rows;
}

/// Bench tolerance between two routes of the same functor: one rounding of the dtype, and the
/// compiler's contractions.
double tolerance(dtype t) {
  return t == dtype::f32 ? 1e-5 : t == dtype::f16 ? 2.0 / 1024 : 2.0 / 128;
}

bool selected(const std::string& only, const std::string& name) {
  if (only.empty()) return true;
  for (const std::string& part : split_at(only, ',')) {
    if (part == name) return true;
  }
  return false;
}

const char* path_of(const shape_report& sh) {
  if (!sh.available) return "-";
  if (sh.tabulated) return "table";
  if (sh.bulk_tiles) return sh.heavy ? "heavy/B" : "light/B";
  return sh.heavy ? "heavy" : "light";
}

int run(int reps, const std::string& only) {
  const device_info device = query_device();
  print_device(device, "--corpus", stdout);
  std::printf(
      "# n = 4096 x 393216 = %zu elements; corpus functors without hints; median of %d calls; "
      "x memcpy over a copy of the row's bytes timed right after it; x CUB: cub::DeviceTransform "
      "with the same functor; x hand: over the faster of the hand-written kernels (int: one "
      "element per thread, int index; 16B: 16-byte grid-stride loop); path: what cuact took "
      "(table = the bf16 lookup table; light/heavy = computed, the model's cost estimate; /B = "
      "bulk tiles)\n\n",
      seeds_n, reps);
  const table out(stdout, {{"op", 40, true},
                           {"dtype", 5, true},
                           {"place", 5, true},
                           {"GB/s", 7},
                           {"x memcpy", 8},
                           {"copy GB/s", 9},
                           {"CUB GB/s", 8},
                           {"x CUB", 6},
                           {"x hand", 6},
                           {"int GB/s", 8},
                           {"16B GB/s", 8},
                           {"hand x memcpy", 13},
                           {"path", 7, true},
                           {"regs", 4},
                           {"int/16B regs", 12},
                           {"check", 8, true}});
  out.header();

  const std::vector<corpus_row> rows = all_rows();
  const std::size_t n = seeds_n;
  if (3 * n * 4 > usable_device_memory()) {  // three fp32 arrays
    fail(format("needs %.1f GB of device memory", 3.0 * n * 4 / 1e9));
  }
  const stream_handle stream;
  const cudaStream_t s = stream.get();
  device_buffer x(n * 4), ours(n * 4), theirs(n * 4);
  timing_options settings;
  settings.warmup_calls = 2;
  settings.reps = reps;
  // cuact's bf16 rows: the measured choice between the table and direct math decides in these
  // calls, each waited for, so the timed calls run the decided path (the others' settle too)
  settings.settle_calls = cuact::detail::table_choice_settling_calls;

  int failed = 0, rows_run = 0;
  int below_hand = 0, below_cub = 0, below_memcpy_where_hand = 0;
  double min_hand = 1e9, min_cub = 1e9;
  std::string min_hand_row, min_cub_row;
  dtype last = dtype::f32;
  for (const corpus_row& row : rows) {
    if (!selected(only, row.name)) continue;
    if (rows_run > 0 && row.type != last) out.rule();
    last = row.type;
    ++rows_run;
    const dtype t = row.type;
    const double moved = 2.0 * static_cast<double>(n * size_of(t));
    fill_random(x.get(), n, t, fresh_seed(), s);
    call_args a;
    a.in0 = x.get();
    a.n = n;

    // Each contestant into a poisoned output; cuact's result is kept in `ours`, the others'
    // compared with it.
    double worst = 0;
    const auto time_into = [&](const launch_fn& launch, void* into, bool compare) {
      poison(into, n, t, s);
      a.out = into;
      const timing r = measure(
          s, [&](std::int64_t) { return launch(a, s); }, settings);
      if (compare) {
        const double d = max_difference(into, ours.get(), n, t, s);
        if (d > worst) worst = d;
      }
      return gbps(moved, r.ms_per_call);
    };
    const double cuact_gbps = time_into(row.forward.cuact, ours.get(), false);
    const double cub_gbps = time_into(row.forward.cub, theirs.get(), true);
    const double int_gbps = time_into(row.per_element, theirs.get(), true);
    const double v16_gbps = time_into(row.grid_stride, theirs.get(), true);
    a.out = ours.get();
    const shape_report sh = row.forward.shape(a);
    BENCH_CHECK(cudaStreamSynchronize(s));
    void* const copy_from = x.get();
    void* const copy_to = theirs.get();
    const timing copy = measure(
        s, [&](std::int64_t) { return memcpy_call(copy_to, copy_from, n * size_of(t), s); },
        settings);
    const double copy_gbps = gbps(moved, copy.ms_per_call);

    const double hand = int_gbps > v16_gbps ? int_gbps : v16_gbps;
    const bool ok = worst <= tolerance(t);
    if (!ok) ++failed;
    const double x_hand = cuact_gbps / hand, x_cub = cuact_gbps / cub_gbps;
    if (x_hand < 1.0) ++below_hand;
    if (x_cub < 1.0) ++below_cub;
    if (hand / copy_gbps >= 0.98 && cuact_gbps / copy_gbps < 0.98) ++below_memcpy_where_hand;
    if (x_hand < min_hand) min_hand = x_hand, min_hand_row = row.name + " " + name(t);
    if (x_cub < min_cub) min_cub = x_cub, min_cub_row = row.name + " " + name(t);
    out.row({row.name + " forward", name(t), "out", format("%.1f", cuact_gbps),
             ratio_text(cuact_gbps, copy_gbps), format("%.1f", copy_gbps), format("%.1f", cub_gbps),
             ratio_text(cuact_gbps, cub_gbps), ratio_text(cuact_gbps, hand),
             format("%.1f", int_gbps), format("%.1f", v16_gbps), ratio_text(hand, copy_gbps),
             path_of(sh), sh.available ? format("%d", sh.registers) : "-",
             format("%d/%d", row.per_element_regs, row.grid_stride_regs),
             ok ? "ok" : format("BAD %.2g", worst)});
    std::fflush(stdout);
  }
  std::printf(
      "# corpus: %d rows; min x hand %.3f (%s), %d rows below 1.00; min x CUB %.3f (%s), "
      "%d rows below 1.00; %d rows below 0.98 x memcpy where the hand-written form "
      "reaches it\n",
      rows_run, min_hand, min_hand_row.c_str(), below_hand, min_cub, min_cub_row.c_str(), below_cub,
      below_memcpy_where_hand);
  if (failed > 0) {
    std::printf("# %d CHECK(S) FAILED\n", failed);
    return 2;
  }
  std::printf("# every check passed\n");
  return 0;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  int reps = 7;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--corpus") {
      // the mode's name, accepted for symmetry with cuact_bench
    } else {
      std::fprintf(stderr, "usage: cuact_bench_corpus [--reps N] [--only NAME,NAME...]\n");
      return 1;
    }
  }
  if (reps < 1) reps = 1;
  return bench::run(reps, only);
}
