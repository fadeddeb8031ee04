// cuact_bench: bandwidth and launch-overhead benchmarks of cuact against cudaMemcpyAsync and
// cub::DeviceTransform. See bench/README.md.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common.cuh"
#include "modes.cuh"

namespace {

void print_help() {
  std::printf(
      "usage: cuact_bench [--headline | --sweep [--csv FILE] | --small | --blocks] [--reps N]\n"
      "\n"
      "  --headline  (default) n = 4096 x 393216: memcpy, cub::DeviceTransform and cuact,\n"
      "              forward relu/selu fp32/bf16 in and out of place, backward (from x, from y),\n"
      "              relu with a 1-bit mask; GB/s and ratios to memcpy and CUB\n"
      "  --sweep     n = 2^10 ... 2^30 and the seeds' n, fp32/fp16/bf16/fp64, forward and\n"
      "              backward; memcpy, CUB and cuact per row, rotating buffer sets so that small\n"
      "              sizes are not served from L2; --csv FILE writes one line per contestant\n"
      "  --small     launch-bound sizes 1K..4M fp32: GPU time per call from CUDA graphs, host\n"
      "              enqueue time per call, and what cuact's argument validation costs\n"
      "  --blocks    the public elementwise_kernel at the seeds' n with block sizes 128..1024 and\n"
      "              grids covering n in 1, 2 or 4 passes, against memcpy\n"
      "  --reps N    timed repetitions per measurement (median reported); default per mode\n"
      "  --help      this text\n"
      "\n"
      "Exit status: 0 on success, 1 on a CUDA error, 2 if a result check failed.\n");
}

}  // namespace

int main(int argc, char** argv) {
  enum class mode { headline, sweep, small, blocks } chosen = mode::headline;
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
    if (arg == "--help" || arg == "-h") {
      print_help();
      return 0;
    } else if (arg == "--headline") {
      chosen = mode::headline;
    } else if (arg == "--sweep") {
      chosen = mode::sweep;
    } else if (arg == "--small") {
      chosen = mode::small;
    } else if (arg == "--blocks") {
      chosen = mode::blocks;
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
  if (!opts.csv.empty() && chosen != mode::sweep) {
    std::fprintf(stderr, "cuact_bench: --csv applies to --sweep only\n");
    return 1;
  }

  const bench::device_info device = bench::query_device();
  switch (chosen) {
    case mode::headline:
      return bench::run_headline(device, opts);
    case mode::sweep:
      return bench::run_sweep(device, opts);
    case mode::small:
      return bench::run_small(device, opts);
    case mode::blocks:
      return bench::run_blocks(device, opts);
  }
  return 1;
}
