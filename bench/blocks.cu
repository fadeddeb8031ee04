// --blocks: tuning data for detail/launch.cuh. The public kernel launched directly
// (make_elementwise_params + elementwise_kernel<<<grid, block>>>) at the seeds' n, out of place,
// with block sizes 128..1024 and grids that cover the work in 1, 2 or 4 grid-stride passes.
#include <cuda_bf16.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cuact/cuact.cuh>
#include <string>
#include <type_traits>
#include <vector>

#include "common.cuh"
#include "modes.cuh"
#include "ops.cuh"

namespace bench {
namespace {

constexpr unsigned block_sizes[] = {128, 256, 512, 1024};
constexpr int passes_list[] = {1, 2, 4};

/// Launches the public kernel with `block` threads and enough blocks for `passes` passes.
/// Op: an activation (forward, reads `in`) or a gradient op (backward, reads `in` and `dy`).
template <class T, class Op>
cudaError_t launch_public(const T* in, const T* dy, T* out, std::size_t n, unsigned block, int passes,
                          cudaStream_t stream) {
  constexpr int width = static_cast<int>(16 / sizeof(T));
  const auto params = [&] {
    if constexpr (std::is_same_v<Op, cuact::relu> || std::is_same_v<Op, cuact::selu>) {
      return cuact::make_elementwise_params<width>(Op{}, out, n, in);
    } else {
      return cuact::make_elementwise_params<width>(Op{}, out, n, in, dy);
    }
  }();
  const std::size_t threads = (params.work_items() + passes - 1) / passes;
  const std::size_t grid = (threads + block - 1) / block;
  if (grid == 0 || grid > static_cast<std::size_t>(INT_MAX)) return cudaErrorInvalidConfiguration;
  cuact::elementwise_kernel<<<static_cast<unsigned>(grid), block, 0, stream>>>(params);
  return cudaGetLastError();
}

using public_launch_fn = cudaError_t (*)(const void*, const void*, void*, std::size_t, unsigned,
                                         int, cudaStream_t);

template <class T, class Op>
cudaError_t launch_erased(const void* in, const void* dy, void* out, std::size_t n, unsigned block,
                          int passes, cudaStream_t stream) {
  return launch_public<T, Op>(static_cast<const T*>(in), static_cast<const T*>(dy),
                              static_cast<T*>(out), n, block, passes, stream);
}

template <class T>
public_launch_fn public_launcher_for(op o) {
  switch (o) {
    case op::relu: return &launch_erased<T, cuact::relu>;
    case op::selu: return &launch_erased<T, cuact::selu>;
    case op::relu_backward: return &launch_erased<T, cuact::detail::gradient_from_input<cuact::relu>>;
    default: return &launch_erased<T, cuact::detail::gradient_from_input<cuact::selu>>;
  }
}

public_launch_fn public_launcher(op o, dtype t) {
  return t == dtype::f32 ? public_launcher_for<float>(o) : public_launcher_for<__nv_bfloat16>(o);
}

}  // namespace

int run_blocks(const device_info& device, const options& opts) {
  const std::size_t n = seeds_n;
  const std::size_t array_bytes = n * sizeof(float);
  if (3 * array_bytes > usable_device_memory()) {
    fail(format("--blocks needs %.1f GB of device memory", 3 * array_bytes / 1e9));
  }
  device_buffer in(array_bytes);
  device_buffer dy(array_bytes);
  device_buffer out(array_bytes);
  stream_handle stream_owner;
  const cudaStream_t stream = stream_owner.get();
  timing_options options;
  options.reps = opts.reps > 0 ? opts.reps : 15;

  print_device(device, "--blocks", stdout);
  std::printf(
      "# n = %zu, out of place; cells: GB/s / memcpy GB/s of the same dtype (GB/s in "
      "parentheses); median of %d\n",
      n, options.reps);
  std::printf(
      "# grid = ceil(work items / (block x passes)), work items = vectors of 16 bytes; "
      "cuact::forward today (detail::choose_launch_shape at this n): fp32 relu block %u x %u "
      "pass(es), bf16 selu block %u x %u\n",
      cuact::detail::choose_launch_shape<float, cuact::relu, 1>(n / 4).threads_per_block,
      cuact::detail::choose_launch_shape<float, cuact::relu, 1>(n / 4).passes,
      cuact::detail::choose_launch_shape<__nv_bfloat16, cuact::selu, 1>(n / 8).threads_per_block,
      cuact::detail::choose_launch_shape<__nv_bfloat16, cuact::selu, 1>(n / 8).passes);

  for (const dtype t : {dtype::f32, dtype::bf16}) {
    const std::size_t bytes = n * size_of(t);
    fill_random(in.get(), n, t, fresh_seed(), stream);
    fill_random(dy.get(), n, t, fresh_seed(), stream);
    const timing copy = measure(
        stream, [&](std::int64_t) { return memcpy_call(out.get(), in.get(), bytes, stream); },
        options);
    const double copy_gbps = gbps(2.0 * bytes, copy.ms_per_call);
    for (const op o : {op::relu, op::selu, op::relu_backward, op::selu_backward}) {
      // cuact::forward as shipped, for reference.
      const launch_fn api = find_launcher(impl::cuact, o, t);
      const call_args args{in.get(), dy.get(), out.get(), nullptr, n};
      const timing shipped = measure(
          stream, [&](std::int64_t) { return api(args, stream); }, options);
      const double shipped_gbps = gbps(bytes_moved(o, t, n), shipped.ms_per_call);
      std::printf("\n%s %s: memcpy %.0f GB/s; cuact::forward %.0f GB/s = %.3f x memcpy\n", name(o),
                  name(t), copy_gbps, shipped_gbps, shipped_gbps / copy_gbps);
      std::vector<std::string> titles{"passes"};
      for (const unsigned block : block_sizes) titles.push_back(format("block %u", block));
      std::vector<column> columns{{titles[0].c_str(), 6}};
      for (std::size_t k = 1; k < titles.size(); ++k) columns.push_back({titles[k].c_str(), 14});
      const table grid_table(stdout, columns);
      grid_table.header();
      const public_launch_fn launch = public_launcher(o, t);
      for (const int passes : passes_list) {
        std::vector<std::string> cells{format("%d", passes)};
        for (const unsigned block : block_sizes) {
          const timing result = measure(
              stream,
              [&](std::int64_t) { return launch(in.get(), dy.get(), out.get(), n, block, passes, stream); },
              options);
          const double rate = gbps(bytes_moved(o, t, n), result.ms_per_call);
          cells.push_back(format("%.3f (%4.0f)", rate / copy_gbps, rate));
        }
        grid_table.row(cells);
      }
    }
  }
  return 0;
}

}  // namespace bench
