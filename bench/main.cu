// cuact_bench: bandwidth and launch-overhead benchmarks of cuact against cudaMemcpyAsync and
// cub::DeviceTransform, over the op table. See bench/README.md.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common.cuh"
#include "modes.cuh"
#include "ops.cuh"

namespace {

/// --list: every entry this build has, without touching a device.
int list_entries() {
  std::printf("# %s build: %zu op-table entries, %zu user entries\n",
              bench::family_built() ? "family" : "core-only (CUACT_BENCH_FAMILY=OFF)",
              bench::table_entries().size(), bench::user_entries().size());
  const bench::table out(stdout, {{"op", 40, true},
                                  {"dtype", 5, true},
                                  {"core", 4, true},
                                  {"bytes/elem", 10},
                                  {"cub", 3, true},
                                  {"prepare", 7, true},
                                  {"reference", 9, true},
                                  {"shape", 5, true},
                                  {"direct", 6, true},
                                  {"bare", 4, true}});
  out.header();
  for (const auto* entries : {&bench::table_entries(), &bench::user_entries()}) {
    for (const bench::entry& e : *entries) {
      const auto yes = [](bool b) { return b ? "yes" : "-"; };
      out.row({e.label(), bench::name(e.type), yes(e.core),
               bench::format("%.3f", e.bytes_moved(1 << 20) / (1 << 20)), yes(bool(e.cub)),
               yes(bool(e.prepare)), yes(bool(e.reference)), yes(bool(e.shape)),
               yes(bool(e.direct)), yes(bool(e.bare))});
    }
  }
  return 0;
}

void print_help() {
  std::printf(
      "usage: cuact_bench [--headline | --family | --user | --sweep [--csv FILE] | --small |\n"
      "                    --shapes [--ops LIST]] [--only LIST] [--reps N]\n"
      "\n"
      "  --headline  (default) n = 4096 x 393216 (fp64: half): relu and selu forward out of and\n"
      "              in place, backward, backward_from_output, fp32/bf16/fp16/fp64, and the ReLU\n"
      "              mask pair; GB/s, x memcpy, x CUB, the launch shape cuact's model chose\n"
      "  --family    every op-table row, forward / backward / backward_from_output,\n"
      "              fp32/bf16/fp16, same columns; --only S1,S2,... keeps the rows whose\n"
      "              \"activation kind dtype\" label contains one of the substrings\n"
      "  --user      plainly written user functors (no cost hint), fp32/bf16 forward and\n"
      "              backward, with the registers and the model's heavy estimate\n"
      "  --sweep     n = 2^10 ... 2^30, relu/selu forward fp32/bf16/fp16/fp64 and backward\n"
      "              fp32/bf16; every size in a fresh child process (fair to CUB's cached\n"
      "              configuration); --csv FILE writes one line per contestant\n"
      "  --small     1K..4M fp32: GPU time per call from CUDA graphs, host enqueue time per call,\n"
      "              cuact vs CUB vs a bare 16-byte-vector kernel (each size in a child process)\n"
      "  --shapes    cuact's entries under forced policies (cuact::scoped_policy) over threads\n"
      "              per block x vectors per thread x passes, against memcpy, with\n"
      "              select_policy's choice;\n"
      "              --ops activation:kind:dtype,... (e.g. user_softplus:forward:bf16, names as\n"
      "              --list prints them) instead of relu/selu\n"
      "  --reps N    timed repetitions per measurement (median reported); default per mode\n"
      "  --list      the entries (activation x operation x dtype) this build has; no GPU needed\n"
      "  --help      this text\n"
      "\n"
      "Exit status: 0 on success, 1 on a CUDA error, 2 if a result check failed.\n");
}

}  // namespace

int main(int argc, char** argv) {
  enum class mode { headline, family, user, sweep, sweep_one, small, small_one, shapes };
  mode chosen = mode::headline;
  std::size_t one_n = 0;
  bench::options opts;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](const char* what) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cuact_bench: %s needs %s\n", arg.c_str(), what);
        std::exit(1);
      }
      return argv[++i];
    };
    const auto size_value = [&] {
      const std::string text = value("a size");
      const unsigned long long n = std::strtoull(text.c_str(), nullptr, 10);
      if (n == 0) {
        std::fprintf(stderr, "cuact_bench: %s needs a positive size\n", arg.c_str());
        std::exit(1);
      }
      return static_cast<std::size_t>(n);
    };
    if (arg == "--help" || arg == "-h") {
      print_help();
      return 0;
    } else if (arg == "--list") {
      return list_entries();
    } else if (arg == "--headline") {
      chosen = mode::headline;
    } else if (arg == "--family") {
      chosen = mode::family;
    } else if (arg == "--user") {
      chosen = mode::user;
    } else if (arg == "--sweep") {
      chosen = mode::sweep;
    } else if (arg == "--sweep-one") {  // internal: one size of --sweep, in a child process
      chosen = mode::sweep_one;
      one_n = size_value();
    } else if (arg == "--small") {
      chosen = mode::small;
    } else if (arg == "--small-one") {  // internal: one size of --small, in a child process
      chosen = mode::small_one;
      one_n = size_value();
    } else if (arg == "--shapes") {
      chosen = mode::shapes;
    } else if (arg == "--ops") {
      opts.ops = value("a list activation:kind:dtype,...");
    } else if (arg == "--only") {
      opts.only = value("a list of label substrings");
    } else if (arg == "--csv") {
      opts.csv = value("a file name");
    } else if (arg == "--reps") {
      opts.reps = std::atoi(value("a number").c_str());
      if (opts.reps < 1) {
        std::fprintf(stderr, "cuact_bench: --reps needs a positive number\n");
        return 1;
      }
    } else {
      std::fprintf(stderr, "cuact_bench: unknown argument '%s' (try --help)\n", arg.c_str());
      return 1;
    }
  }
  if (!opts.ops.empty() && chosen != mode::shapes) {
    std::fprintf(stderr, "cuact_bench: --ops applies to --shapes only\n");
    return 1;
  }
  if (!opts.only.empty() && chosen != mode::family) {
    std::fprintf(stderr, "cuact_bench: --only applies to --family only\n");
    return 1;
  }
  if (!opts.csv.empty() && chosen != mode::sweep) {
    std::fprintf(stderr, "cuact_bench: --csv applies to --sweep only\n");
    return 1;
  }

  const bench::device_info device = bench::query_device();
  switch (chosen) {
    case mode::headline:
      return bench::run_headline(device, opts);
    case mode::family:
      return bench::run_family(device, opts);
    case mode::user:
      return bench::run_user(device, opts);
    case mode::sweep:
      return bench::run_sweep(device, opts);
    case mode::sweep_one:
      return bench::run_sweep_one(device, opts, one_n);
    case mode::small:
      return bench::run_small(device, opts);
    case mode::small_one:
      return bench::run_small_one(device, opts, one_n);
    case mode::shapes:
      return bench::run_shapes(device, opts);
  }
  return 1;
}
