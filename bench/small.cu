// --small: launch-bound sizes. GPU time per call from CUDA graphs of 100 calls, host time per
// call to enqueue, and the cost of cuact's argument validation, for cub::DeviceTransform, a bare
// one-float4-per-thread kernel, and cuact::forward.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cuact/activations.cuh>
#include <string>

#include "common.cuh"
#include "modes.cuh"
#include "ops.cuh"

namespace bench {
namespace {

/// The floor for an elementwise kernel: one float4 per thread, grid covers n (n % 4 == 0),
/// no alignment checks, no validation.
template <class Activation>
__global__ void bare_float4_kernel(const float4* in, float4* out, std::size_t vectors) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < vectors) {
    const Activation act{};
    float4 v = in[i];
    v.x = act(v.x);
    v.y = act(v.y);
    v.z = act(v.z);
    v.w = act(v.w);
    out[i] = v;
  }
}

template <class Activation>
cudaError_t bare_call(const call_args& a, cudaStream_t stream) {
  constexpr unsigned threads = 256;
  const std::size_t vectors = a.n / 4;
  const auto blocks = static_cast<unsigned>((vectors + threads - 1) / threads);
  bare_float4_kernel<Activation><<<blocks, threads, 0, stream>>>(
      static_cast<const float4*>(a.in0), static_cast<float4*>(a.out), vectors);
  return cudaGetLastError();
}

constexpr std::size_t sizes[] = {std::size_t{1} << 10, std::size_t{1} << 16, std::size_t{1} << 20,
                                 std::size_t{1} << 22};
constexpr int graph_calls = 100;
constexpr std::size_t alignment = 256;
std::size_t pad(std::size_t bytes) { return (bytes + alignment - 1) / alignment * alignment; }

std::string short_size(std::size_t n) {
  return n >= (1u << 20) ? format("%zuM", n >> 20) : format("%zuK", n >> 10);
}

}  // namespace

int run_small(const device_info& device, const options& opts) {
  const dtype t = dtype::f32;
  const std::size_t target = 4 * device.l2_bytes;
  // Buffer sets for the "cold" column: in + out per set, total >= 4x L2 at every size.
  std::size_t arena_bytes = 0;
  for (const std::size_t n : sizes) {
    const std::size_t sets = (target + 2 * n * 4 - 1) / (2 * n * 4);
    arena_bytes = std::max(arena_bytes, sets * 2 * pad(n * 4));
  }
  device_buffer arena(arena_bytes);
  stream_handle stream_owner;
  const cudaStream_t stream = stream_owner.get();
  fill_random(arena.get(), arena_bytes / 4, t, fresh_seed(), stream);

  const int hot_reps = opts.reps > 0 ? opts.reps : 51;
  const int cold_reps = opts.reps > 0 ? opts.reps : 21;
  constexpr int host_calls = 1000;
  constexpr int host_reps = 7;

  print_device(device, "--small", stdout);
  std::printf(
      "# fp32, out of place, n %% 4 == 0. GPU us/call: graph of %d calls captured on a "
      "non-blocking stream, median of replays / %d\n",
      graph_calls, graph_calls);
  std::printf("#   hot: the same in/out every call (%d replays; L2-resident up to ~%.0f MB);\n",
              hot_reps, device.l2_bytes / 1e6 / 2);
  std::printf(
      "#   cold: every call uses the next of many in/out sets (>= %.0f MB in all; %d "
      "graphs, each freshly captured when the sets outnumber its calls)\n",
      target / 1e6, cold_reps);
  std::printf(
      "# host us/call: steady_clock around %d enqueues without synchronizing, median of "
      "%d; bare = one float4 per thread, 256 threads, plus cudaGetLastError\n\n",
      host_calls, host_reps);

  const table out(stdout, {{"n", 4},
                           {"op", 4, true},
                           {"impl", 6, true},
                           {"GPU us hot", 10},
                           {"GPU us cold", 11},
                           {"GB/s cold", 9},
                           {"host us", 7},
                           {"host - bare", 11},
                           {"note", 4, true}});
  out.header();
  for (const std::size_t n : sizes) {
    const std::size_t array_stride = pad(n * 4);
    const std::size_t sets = arena_bytes / (2 * array_stride);
    for (const op o : {op::relu, op::selu}) {
      struct contestant {
        const char* label;
        launch_fn launch;
      };
      const contestant contestants[] = {
          {"bare", o == op::relu ? &bare_call<cuact::relu> : &bare_call<cuact::selu>},
          {"cub", find_launcher(impl::cub, o, t)},
          {"cuact", find_launcher(impl::cuact, o, t)}};
      double bare_host = 0;
      for (const contestant& c : contestants) {
        if (c.launch == nullptr) fail(format("no %s launcher for %s", c.label, name(o)));
        const auto enqueue_set = [&](std::int64_t set) {
          char* base = arena.as<char>() + static_cast<std::size_t>(set) * 2 * array_stride;
          call_args args;
          args.in0 = base;
          args.out = base + array_stride;
          args.n = n;
          return c.launch(args, stream);
        };
        const enqueue_fn hot_enqueue = [&](std::int64_t) { return enqueue_set(0); };
        const enqueue_fn cold_enqueue = [&](std::int64_t call) {
          return enqueue_set(call % static_cast<std::int64_t>(sets));
        };

        timing_options hot;
        hot.batch = graph_calls;
        hot.graph = true;
        hot.reps = hot_reps;
        timing_options cold = hot;
        cold.reps = cold_reps;
        cold.fresh_graph_per_rep = true;
        cold.rotation_sets = static_cast<std::int64_t>(sets);

        const timing hot_time = measure(stream, hot_enqueue, hot);
        const timing cold_time = measure(stream, cold_enqueue, cold);
        const double host = measure_host_us(stream, hot_enqueue, host_calls, host_reps);
        const bool is_bare = &c == &contestants[0];
        if (is_bare) bare_host = host;
        const bool relaxed = hot_time.relaxed_capture || cold_time.relaxed_capture;
        out.row({short_size(n), name(o), c.label, format("%.2f", hot_time.ms_per_call * 1e3),
                 format("%.2f", cold_time.ms_per_call * 1e3),
                 format("%.0f", gbps(bytes_moved(o, t, n), cold_time.ms_per_call)),
                 format("%.2f", host), is_bare ? "-" : format("%+.2f", host - bare_host),
                 relaxed ? "captured in relaxed mode" : ""});
      }
    }
    out.rule();
  }

  // What cuact::forward's validation costs on the host: cudaGetDevice and one
  // cudaPointerGetAttributes per distinct array (in and out).
  char* base = arena.as<char>();
  char* other = base + pad(4 * 4);
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
  return 0;
}

}  // namespace bench
