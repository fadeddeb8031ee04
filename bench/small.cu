// --small: launch-bound sizes, core rows fp32 and bf16 forward out of place. GPU time per call from CUDA
// graphs of 100 calls, host time per call to enqueue, and the cost of cuact's argument
// validation, for a bare one-float4-per-thread kernel, cub::DeviceTransform and cuact::forward.
// Every size runs in a fresh child process (--small-one N), as in --sweep, so CUB's cached tile
// configuration comes from a first call at that size.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common.cuh"
#include "modes.cuh"
#include "ops.cuh"

namespace bench {
namespace {

constexpr std::size_t sizes[] = {std::size_t{1} << 10, std::size_t{1} << 16, std::size_t{1} << 20,
                                 std::size_t{1} << 22, std::size_t{1} << 24};
constexpr dtype types[] = {dtype::f32, dtype::bf16};
constexpr int graph_calls = 100;
constexpr int host_calls = 1000;
constexpr int host_reps = 7;
constexpr std::size_t alignment = 256;
std::size_t pad(std::size_t bytes) { return (bytes + alignment - 1) / alignment * alignment; }

std::string short_size(std::size_t n) {
  return n >= (1u << 20) ? format("%zuM", n >> 20) : format("%zuK", n >> 10);
}

int hot_reps(const options& opts) { return opts.reps > 0 ? opts.reps : 51; }
int cold_reps(const options& opts) { return opts.reps > 0 ? opts.reps : 21; }

}  // namespace

int run_small_one(const device_info& device, const options& opts, std::size_t n) {
  for (const dtype t : types) {
    const std::size_t bytes = size_of(t);
    const std::size_t target = 4 * device.l2_bytes;
    // Buffer sets for the "cold" column: in + out per set, total >= 4x L2.
    const std::size_t array_stride = pad(n * bytes);
    const std::size_t sets =
        std::max<std::size_t>(1, (target + 2 * n * bytes - 1) / (2 * n * bytes));
    device_buffer arena(sets * 2 * array_stride);
    stream_handle stream_owner;
    const cudaStream_t stream = stream_owner.get();
    fill_random(arena.get(), arena.bytes() / bytes, t, fresh_seed(), stream);

    for (const entry& e : table_entries()) {
      if (!e.core || !e.is_forward() || e.type != t) continue;
      struct contestant {
        const char* label;
        const launch_fn* launch;
      };
      const contestant contestants[] = {{"bare", &e.bare}, {"cub", &e.cub}, {"cuact", &e.cuact}};
      for (const contestant& c : contestants) {
        if (!*c.launch) fail(format("no %s launcher for %s", c.label, e.label().c_str()));
        const launch_fn& launch = *c.launch;
        const auto enqueue_set = [&](std::int64_t set) {
          char* base = arena.as<char>() + static_cast<std::size_t>(set) * 2 * array_stride;
          call_args args;
          args.in0 = base;
          args.out = base + array_stride;
          args.n = n;
          return launch(args, stream);
        };
        const enqueue_fn hot_enqueue = [&](std::int64_t) { return enqueue_set(0); };
        const enqueue_fn cold_enqueue = [&](std::int64_t call) {
          return enqueue_set(call % static_cast<std::int64_t>(sets));
        };
        timing_options hot;
        hot.batch = graph_calls;
        hot.graph = true;
        hot.reps = hot_reps(opts);
        hot.busy_start = false;  // from an idle GPU, as this table always was
        timing_options cold = hot;
        cold.reps = cold_reps(opts);
        cold.fresh_graph_per_rep = true;
        cold.rotation_sets = static_cast<std::int64_t>(sets);

        const timing hot_time = measure(stream, hot_enqueue, hot);
        const timing cold_time = measure(stream, cold_enqueue, cold);
        const double host = measure_host_us(stream, hot_enqueue, host_calls, host_reps);
        const bool relaxed = hot_time.relaxed_capture || cold_time.relaxed_capture;
        std::printf("@small %s/%s %s %.4f %.4f %.1f %.4f %d\n", e.activation.c_str(), name(t),
                    c.label, hot_time.ms_per_call * 1e3, cold_time.ms_per_call * 1e3,
                    gbps(e.bytes_moved(n), cold_time.ms_per_call), host, relaxed ? 1 : 0);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

int run_small(const device_info& device, const options& opts) {
  print_device(device, "--small", stdout);
  std::printf(
      "# core rows, fp32 and bf16 forward out of place, n %% 8 == 0; each size in a fresh child "
      "process "
      "(cuact_bench --small-one N), so CUB's first call is at that size\n");
  std::printf(
      "# GPU us/call: graph of %d calls captured on a non-blocking stream, median of replays / "
      "%d\n",
      graph_calls, graph_calls);
  std::printf("#   hot: the same in/out every call (%d replays; L2-resident up to ~%.0f MB);\n",
              hot_reps(opts), device.l2_bytes / 1e6 / 2);
  std::printf(
      "#   cold: every call uses the next of many in/out sets (>= %.0f MB in all; %d graphs, each "
      "freshly captured when the sets outnumber its calls)\n",
      4 * device.l2_bytes / 1e6, cold_reps(opts));
  std::printf(
      "# host us/call: steady_clock around %d enqueues without synchronizing, median of %d; "
      "bare = one 16-byte vector per thread, 256 threads, plus cudaGetLastError\n\n",
      host_calls, host_reps);

  const table out(stdout, {{"n", 4},
                           {"op", 11, true},
                           {"impl", 6, true},
                           {"GPU us hot", 10},
                           {"GPU us cold", 11},
                           {"GB/s cold", 9},
                           {"host us", 7},
                           {"host - bare", 11},
                           {"note", 4, true}});
  out.header();
  int failures = 0;
  for (const std::size_t n : sizes) {
    std::vector<std::string> arguments{"--small-one", std::to_string(n)};
    if (opts.reps > 0) arguments.insert(arguments.end(), {"--reps", std::to_string(opts.reps)});
    int status = 0;
    const std::vector<std::string> lines = run_child(arguments, status);
    if (status != 0) {
      ++failures;
      std::printf("# n = %s: child exited with status %d\n", short_size(n).c_str(), status);
    }
    double bare_host = 0;
    for (const std::string& line : lines) {
      const std::vector<std::string> w = split_words(line);
      if (w.size() != 8 || w[0] != "small") continue;
      const bool is_bare = w[2] == "bare";
      const double host = std::atof(w[6].c_str());
      if (is_bare) bare_host = host;
      out.row({short_size(n), w[1], w[2], format("%.2f", std::atof(w[3].c_str())),
               format("%.2f", std::atof(w[4].c_str())), w[5], format("%.2f", host),
               is_bare ? "-" : format("%+.2f", host - bare_host),
               w[7] == "1" ? "captured in relaxed mode" : ""});
    }
    out.rule();
  }

  // What cuact::forward's validation costs on the host: cudaGetDevice and one
  // cudaPointerGetAttributes per distinct array (in and out).
  device_buffer buffer(2 * alignment);
  stream_handle stream_owner;
  const cudaStream_t stream = stream_owner.get();
  char* base = buffer.as<char>();
  char* other = base + alignment;
  const enqueue_fn attributes = [&](std::int64_t) {
    cudaPointerAttributes a{}, b{};
    const cudaError_t first = cudaPointerGetAttributes(&a, base);
    const cudaError_t second = cudaPointerGetAttributes(&b, other);
    return first != cudaSuccess ? first : second;
  };
  const enqueue_fn attributes_and_device = [&](std::int64_t call) {
    int current = 0;
    const cudaError_t status = cudaGetDevice(&current);
    return status != cudaSuccess ? status : attributes(call);
  };
  std::printf("\n# validation alone, host us per call (median of %d x %d):\n", host_reps,
              host_calls);
  std::printf("#   2 x cudaPointerGetAttributes:                %.3f\n",
              measure_host_us(stream, attributes, host_calls, host_reps));
  std::printf("#   cudaGetDevice + 2 x cudaPointerGetAttributes: %.3f\n",
              measure_host_us(stream, attributes_and_device, host_calls, host_reps));
  std::printf(
      "# 'host - bare' above: the row's host time minus the bare kernel's (same n and op)\n");
  return failures == 0 ? 0 : 1;
}

}  // namespace bench
