/// \file
/// What every public entry does after its compile-time checks: n == 0, validation, vector width,
/// launch model, launch. One path for the elementwise kernel, its row-wise sibling (run_rows) and
/// its sign-mask sibling; the pieces (describe_arrays, model_shape) serve fused.cuh's kernels too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "config.cuh"
#include "host_lock.cuh"
#include "kernels/bulk_tile.cuh"
#include "kernels/elementwise.cuh"
#include "kernels/relu_mask.cuh"
#include "kernels/rows.cuh"
#include "kernels/table.cuh"
#include "launch.cuh"
#include "numeric.cuh"
#include "table_measure.cuh"
#include "validate.cuh"

namespace cuact {
namespace detail {

/// Vector width chosen from the element types: 16 bytes / the largest element.
inline constexpr int auto_width_tag = 0;

template <class T>
constexpr void check_input_type() {
  static_assert(is_supported_type_v<T>,
                "cuact: unsupported input element type; supported are float, double, __half and "
                "__nv_bfloat16");
}
template <class T>
constexpr void check_output_type() {
  static_assert(is_supported_type_v<T> || is_output_only_type_v<T>,
                "cuact: unsupported output element type; supported are float, double, __half, "
                "__nv_bfloat16, and (output only) __nv_fp8_e4m3 and __nv_fp8_e5m2");
}

/// The vector width for arrays whose largest element has `largest` bytes.
template <int VecWidth, std::size_t largest>
constexpr int resolve_width() {
  static_assert(VecWidth == auto_width_tag || VecWidth == 1 || VecWidth == 2 || VecWidth == 4 ||
                    VecWidth == 8 || VecWidth == 16,
                "cuact: VecWidth must be cuact::auto_width, 1, 2, 4, 8 or 16");
  constexpr int width = VecWidth == auto_width_tag ? static_cast<int>(16 / largest) : VecWidth;
  static_assert(width * largest <= 16,
                "cuact: VecWidth * sizeof(T) must be at most 16 bytes (one vector access)");
  return width;
}

/// The vector width of an elementwise launch: resolve_width's (16 bytes of the largest type),
/// except for one 2-byte input mapped to one 1-byte output (bf16 or fp16 to fp8: forward_cast)
/// where 16 elements make each store one 16-byte access (and each load two): with 8, each store
/// moves only 8 bytes and such casts fell short of the copy ceiling; the quantize takes it too
/// (fused_dispatch.cuh: run_quantize).
template <int VecWidth, class... Out, class... In>
constexpr int elementwise_width(type_list<Out...>, type_list<In...>) {
  if constexpr (VecWidth == auto_width_tag && sizeof...(Out) == 1 && sizeof...(In) == 1 &&
                ((sizeof(Out) == 1) && ...) && ((sizeof(In) == 2) && ...)) {
    return 16;
  } else {
    return resolve_width<VecWidth, max_size_of<Out..., In...>()>();
  }
}

/// Which inputs may be exactly an output (bit i: input i), for validation.
using in_place_inputs = unsigned;
inline constexpr in_place_inputs every_input_in_place = ~0u;

/// The validation view of a 1-D operation's arrays (n elements each) plus `extra` (at most 2):
/// writes them to `arrays` (room for every output, input and extra) and returns their count.
template <class... Out, class... In>
std::size_t describe_arrays(const output_arrays<Out...>& outputs, std::size_t n,
                            const input_arrays<In...>& inputs, in_place_inputs in_place,
                            const array_arg* extra, std::size_t extra_count, array_arg* arrays) {
  std::size_t used = 0;
  detail::apply([&](auto*... p) { ((arrays[used++] = array_of(p, n, array_role::output)), ...); },
                outputs.pointers);
  detail::apply(
      [&](auto*... p) {
        ((arrays[used] =
              array_of(p, n,
                       (in_place >> (used - sizeof...(Out))) & 1u ? array_role::input_or_in_place
                                                                  : array_role::input),
          ++used),
         ...);
      },
      inputs.pointers);
  for (std::size_t e = 0; e < extra_count && e < 2; ++e) arrays[used++] = extra[e];
  return used;
}

/// The launch model for `rows` rows of the split in `p` (an elementwise_params; rows = 1 for a
/// 1-D launch), for `kernel`, whose instantiation the model reads (registers, occupancy).
/// `extra_arrays`: per-element work the params' arrays do not show (the quantize's amax).
template <class Params, class KernelParams>
cudaError_t model_shape(void (*kernel)(KernelParams), int device, cost_hint hint, const Params& p,
                        std::size_t rows, launch_shape& shape, unsigned extra_arrays = 0) {
  return choose_launch_shape(
      kernel, device, hint, p.vectors * rows, (p.head + p.tail) * rows, Params::vector_load_bytes,
      Params::bytes_per_element, Params::arrays_per_element + extra_arrays,
      Params::max_vectors_per_thread, shape, compute_bound_passes_of<decltype(p.op)>);
}

/// Table buffers kept per op type: distinct op values (and devices) beyond this many are computed
/// directly.
inline constexpr int table_buffers_per_op_type = 8;

/// The device buffer for the table of `op` on `device` (bf16_table_window::bytes_of<Entry>),
/// allocated on first use and kept for the process: one per op type, entry type, device and op
/// value (its bytes). Why not stream-ordered memory per call: cudaMallocFromPoolAsync and
/// cudaFreeAsync around each call cost measurable device time at every size the table is taken
/// for, and host time per call. Why per op value: every
/// call fills its own table before reading it, and two calls that share a buffer, on any streams,
/// write the same bits into it, so a concurrent fill never changes what another call reads (a
/// functor that reads device memory through a pointer member fills with what its own call reads, in
/// stream order, as its direct path would; two such calls on unordered streams while that memory
/// changes race here as their direct paths would race on the memory itself). Returns
/// cudaErrorNotSupported, nothing recorded, when no buffer can be had (the caller computes
/// directly): the slots are taken, the allocation failed, or the stream is being captured and the
/// buffer would have to be allocated (cudaMalloc would invalidate the capture).
template <class Op, class Entry>
cudaError_t get_table_buffer(const Op& op, int device, cudaStream_t stream, Entry*& entries) {
  static_assert(std::is_trivially_copyable_v<Op>, "cuact: ops are copied to the device as bytes");
  struct buffer {
    int device;
    unsigned char op_bytes[sizeof(Op)];
    Entry* entries;
  };
  static host_mutex lock;
  static buffer buffers[table_buffers_per_op_type];
  static int used = 0;
  unsigned char op_bytes[sizeof(Op)];
  std::memcpy(op_bytes, &op, sizeof(Op));
  const host_lock_guard guard(lock);
  for (int b = 0; b < used; ++b) {
    if (buffers[b].device == device &&
        std::memcmp(buffers[b].op_bytes, op_bytes, sizeof(Op)) == 0) {
      entries = buffers[b].entries;
      return cudaSuccess;
    }
  }
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (used == table_buffers_per_op_type || cudaStreamIsCapturing(stream, &capture) != cudaSuccess ||
      capture != cudaStreamCaptureStatusNone ||
      cudaMalloc(reinterpret_cast<void**>(&entries), bf16_table_window::bytes_of<Entry>) !=
          cudaSuccess) {
    cudaGetLastError();
    return cudaErrorNotSupported;
  }
  buffers[used].device = device;
  std::memcpy(buffers[used].op_bytes, op_bytes, sizeof(Op));
  buffers[used].entries = entries;
  ++used;
  return cudaSuccess;
}

/// Launches fill_bf16_table_kernel: op's table of Entry at `entries`, one thread per entry.
template <class Op, class Entry>
cudaError_t fill_bf16_table(const Op& op, Entry* entries, cudaStream_t stream) {
  constexpr unsigned fill_threads = table_fill_threads_per_block;
  return launch_kernel_grid(
      fill_bf16_table_kernel<Op, Entry>, bf16_table_fill<Op, Entry>{op, entries},
      dim3((bf16_table_window::entries_of<Entry> + fill_threads - 1) / fill_threads), fill_threads,
      stream);
}

/// Launches a tabulated bf16 forward over the arrays of `params` (kernels/table.cuh): the fill
/// kernel writes op's table, the lookup kernel reads it. Returns cudaErrorNotSupported, with
/// nothing launched and no error recorded, when there is no buffer for the table
/// (get_table_buffer): the caller computes directly.
template <class Params>
cudaError_t run_tabulated(const Params& params, int device, cudaStream_t stream) {
  std::uint16_t* entries = nullptr;
  if (get_table_buffer(params.op, device, stream, entries) != cudaSuccess) {
    return cudaErrorNotSupported;
  }
  auto table_params = tabulated_params(params, entries);
  const auto kernel = tabulated_kernel<decltype(table_params)>;
  kernel_facts facts{};
  if (const cudaError_t status = get_kernel_facts(kernel, device, facts); status != cudaSuccess) {
    return status;
  }
  device_facts device_info{};
  if (const cudaError_t status = get_device_facts(device, device_info); status != cudaSuccess) {
    return status;
  }
  if (const cudaError_t status = fill_bf16_table(params.op, entries, stream);
      status != cudaSuccess) {
    return status;
  }
  const launch_shape shape = tabulated_launch_shape(
      device_info, params.vectors, params.head + params.tail, Params::max_vectors_per_thread);
  table_params.vectors_per_thread = shape.vectors_per_thread;
  // Started while the fill runs, its first loads in flight, where its code waits for the fill
  // (compiled for sm_90 on: tabulating_access::ready), so the fill's time overlaps the loads.
  return launch_kernel_grid(kernel, table_params, dim3(shape.blocks), shape.threads_per_block,
                            stream, bf16_table_window::bytes, facts.binary_version >= 90);
}

/// with_launched_params' rule: the one-vector kernel where it holds more resident blocks per SM
/// (registers), or where `heavy_one_vector` (heavy_runs_one_vector) holds.
inline bool launches_one_vector(const kernel_facts& own, const kernel_facts& one_vector,
                                bool heavy_one_vector = false) {
  return heavy_one_vector || one_vector.resident_blocks_per_sm > own.resident_blocks_per_sm;
}

/// Whether a declared-heavy operation runs one vector per thread on `device`: where its data is
/// 16-bit and its math not declared long (`long_16bit_math`: the op's `has_long_16bit_math`),
/// where its data is float and its math declared short (`short_float_math`: the op's
/// `has_short_float_math`), or where the budget leaves float math room (launch.cuh:
/// budget_is_roomy_for_float_math, which says for which data and devices); and so does an
/// operation without a hint where it takes a heavy one's launch (launch.cuh:
/// estimate_takes_heavy_launch). Other threads' loads hide its
/// arithmetic there, and the second vector that launch.cuh's model gives heavy ops only makes
/// threads longer-lived. Exceptions, from measuring against two vectors: 16-bit forwards with
/// long math (softplus, tanhshrink) keep two, as do float forwards whose math is long where the
/// budget is not roomy (mish, softplus); short float math (sigmoid, silu, tanh) runs one.
/// Double data is left out (libdevice-length double math needs two vectors in flight; the
/// registers rule above already picks one where it pays), and so is an op that reads float and
/// writes 16-bit (a cast), which sits between the two bounds and was not measured.
inline bool heavy_runs_one_vector(const device_facts& device, cost_hint hint,
                                  std::size_t bytes_per_element, unsigned arrays_per_element,
                                  bool long_16bit_math = false, bool short_float_math = false) {
  if (hint == cost_hint::estimate) {
    return estimate_takes_heavy_launch(device, bytes_per_element, arrays_per_element);
  }
  return hint == cost_hint::heavy &&
         ((is_half_data(bytes_per_element, arrays_per_element) && !long_16bit_math) ||
          (is_single_float_data(bytes_per_element, arrays_per_element) && short_float_math) ||
          budget_is_roomy_for_float_math(device, bytes_per_element, arrays_per_element));
}

/// Whether params have a one-vector instantiation apart from their own (one_vector_op of their op:
/// their kernel is compiled for several vectors per thread).
template <class Params>
inline constexpr bool has_one_vector_code_v =
    Params::max_vectors_per_thread > 1 && std::is_class_v<decltype(Params::op)> &&
    !std::is_final_v<decltype(Params::op)>;

/// Returns launch(p) for the params run_elementwise launches elementwise_kernel with on `device`:
/// `params`, or the same with its op as one_vector_op where that kernel holds more resident
/// blocks per SM than params' own, compiled for several vectors per thread (registers), or where
/// heavy_runs_one_vector holds for `hint`.
template <class Params, class Launch>
cudaError_t with_launched_params(const Params& params, int device, cost_hint hint,
                                 Launch&& launch) {
  using op_t = decltype(params.op);
  if constexpr (has_one_vector_code_v<Params>) {
    auto one_vector = with_op(params, one_vector_op<op_t>{params.op});
    kernel_facts own{}, one_vector_facts{};
    if (const cudaError_t status = get_kernel_facts(elementwise_kernel<Params>, device, own);
        status != cudaSuccess) {
      return status;
    }
    if (const cudaError_t status =
            get_kernel_facts(elementwise_kernel<decltype(one_vector)>, device, one_vector_facts);
        status != cudaSuccess) {
      return status;
    }
    device_facts device_info{};
    if (const cudaError_t status = get_device_facts(device, device_info); status != cudaSuccess) {
      return status;
    }
    const bool heavy_one_vector = heavy_runs_one_vector(
        device_info, hint, Params::bytes_per_element, Params::arrays_per_element,
        has_long_16bit_math_of<op_t>, has_short_float_math_of<op_t>);
    if (launches_one_vector(own, one_vector_facts, heavy_one_vector)) return launch(one_vector);
  }
  return launch(params);
}

/// Returns launch(p) for the params elementwise_kernel runs: with `one_vector_code`
/// (launch_plan's, policy.cuh: takes_one_vector_code), params with their op as one_vector_op,
/// whose kernel with_launched_params instantiates already; else params.
template <class Params, class Launch>
cudaError_t with_shape_code(const Params& params, [[maybe_unused]] bool one_vector_code,
                            Launch&& launch) {
  if constexpr (has_one_vector_code_v<Params>) {
    using op_t = decltype(params.op);
    if (one_vector_code) return launch(with_op(params, one_vector_op<op_t>{params.op}));
  }
  return launch(params);
}

/// The launch as the model shaped it, unchanged (launch_elementwise's default `adjust`).
struct keep_shape {
  template <class Params>
  void operator()(Params&, launch_shape&) const {}
};

/// The params a bulk-tile launch runs: one_vector_op's own op where params carry it, since a
/// bulk tile is one vector per thread either way, so both instantiations share one kernel.
template <class Params>
const Params& bulk_params_of(const Params& params) {
  return params;
}
template <class Op, int VecWidth, class Outputs, class Inputs>
auto bulk_params_of(
    const elementwise_params<one_vector_op<Op>, VecWidth, Outputs, Inputs>& params) {
  return with_op(params, static_cast<const Op&>(params.op));
}

/// Params whose launches may run as bulk tiles (policy.cuh: takes_bulk_tiles): one input, one
/// output, both 16-bit, both float or both double, fitting the kernel (bulk_tiles_fit_v). Only
/// these instantiate bulk_tile_kernel.
/// Whether an op's traits let it run as bulk tiles (takes_bulk_tiles: light, or heavy and gaining
/// from them): the bulk-tile kernel is not instantiated for other ops (compute-bound forwards,
/// heavy ones without the gain, functors without a hint), which never take it.
template <class Op>
inline constexpr bool may_take_bulk_tiles_v =
    declared_cost<Op> == cost_hint::light || forward_cost<Op> == cost_hint::light ||
    gains_from_bulk_tiles_of<Op>;

template <class Params>
inline constexpr bool bulk_tiles_considered_v =
    bulk_tiles_fit_v<Params>&& may_take_bulk_tiles_v<decltype(Params::op)>&& Params::num_inputs ==
        1 &&
    Params::num_outputs == 1 &&
    (Params::bytes_per_element == 4 || Params::bytes_per_element == 8 ||
     Params::bytes_per_element == 16);

/// The launch launch_modelled makes: its shape, and whether bulk_tile_kernel runs it rather than
/// elementwise_kernel (launch.cuh: takes_bulk_tiles). The bench reports it and gpu_bulk checks it,
/// from this one plan (plan_launch), so neither repeats the choice.
struct launch_plan {
  launch_shape shape{};
  bool bulk_tiles = false;
  /// elementwise_kernel runs the one-vector instantiation (with_shape_code)
  bool one_vector_code = false;
};

/// Where takes_bulk_tiles holds for params with cost `hint`, which the model shaped as plan.shape
/// (for bulk_tile_kernel's facts on `device`), plan becomes theirs.
template <class Params>
cudaError_t choose_bulk_tiles(const Params& params, int device, [[maybe_unused]] cost_hint hint,
                              launch_plan& plan) {
  if constexpr (bulk_tiles_considered_v<Params>) {
    device_facts device_info{};
    if (const cudaError_t status = get_device_facts(device, device_info); status != cudaSuccess) {
      return status;
    }
    kernel_facts bulk_facts{};
    using bulk_params_t =
        std::remove_cv_t<std::remove_reference_t<decltype(bulk_params_of(params))>>;
    if (const cudaError_t status =
            get_kernel_facts(bulk_tile_kernel<bulk_params_t>, device, bulk_facts);
        status != cudaSuccess) {
      return status;
    }
    // under a scoped_policy its algorithm decides, where the launch can run as bulk tiles
    const bool take = policy_overridden()
                          ? plan.shape.algorithm == algorithm::bulk_tiles &&
                                bulk_tiles_fit(bulk_facts, params.vectors)
                          : takes_bulk_tiles(device_info, bulk_facts, hint,
                                             gains_from_bulk_tiles_of<decltype(params.op)>,
                                             plan.shape, params.vectors, Params::bytes_per_element,
                                             Params::arrays_per_element);
    if (take) {
      plan.bulk_tiles = true;
      plan.shape = bulk_tile_launch_shape(
          plan.shape, params.vectors,
          bulk_tile_staging_bytes<bulk_params_t>(bulk_tile_threads_per_block));
    }
  }
  return cudaSuccess;
}

/// Plans params' launch: the model's shape for elementwise_kernel (its vectors per thread set in
/// params), then bulk tiles where `may_take_bulk_tiles` and choose_bulk_tiles takes them.
template <class Params>
cudaError_t plan_launch(Params& params, int device, cost_hint hint, bool may_take_bulk_tiles,
                        launch_plan& plan) {
  plan = launch_plan{};
  if (const cudaError_t status =
          model_shape(elementwise_kernel<Params>, device, hint, params, 1, plan.shape);
      status != cudaSuccess) {
    return status;
  }
  params.vectors_per_thread = plan.shape.vectors_per_thread;
  const cudaError_t status =
      may_take_bulk_tiles ? choose_bulk_tiles(params, device, hint, plan) : cudaSuccess;
  if (!plan.bulk_tiles) plan.shape.algorithm = algorithm::elementwise;  // what runs it
  if constexpr (has_one_vector_code_v<Params>) {
    if (status == cudaSuccess && !plan.bulk_tiles) {
      device_facts device_info{};
      kernel_facts facts{};
      if (const cudaError_t s =
              get_launch_facts(elementwise_kernel<Params>, device, device_info, facts);
          s != cudaSuccess) {
        return s;
      }
      plan.one_vector_code = takes_one_vector_code(device_info, facts, plan.shape, params.vectors);
    }
  }
  return status;
}

/// The kernel that runs params as `plan` says, for its facts (the bench reports them). A bulk-tile
/// kernel of one_vector_op params is its op's (bulk_params_of), and where plan.one_vector_code
/// the one-vector kernel runs (with_shape_code), each cast to this params' kernel type so that
/// all branches return one type: query its attributes, never launch it with these params.
template <class Params>
auto planned_kernel(const Params& params, const launch_plan& plan) {
  if constexpr (bulk_tiles_considered_v<Params>) {
    using kernel_t = void (*)(Params);
    if (plan.bulk_tiles) {
      // through void (*)(), the form -Wcast-function-type accepts for a deliberate cast
      return reinterpret_cast<kernel_t>(
          reinterpret_cast<void (*)()>(bulk_tile_kernel_for(bulk_params_of(params))));
    }
  }
  if constexpr (has_one_vector_code_v<Params>) {
    if (plan.one_vector_code) {  // with_shape_code's kernel, cast as above
      using one_vector_t = decltype(with_op(params, one_vector_op<decltype(params.op)>{params.op}));
      return reinterpret_cast<void (*)(Params)>(
          reinterpret_cast<void (*)()>(elementwise_kernel<one_vector_t>));
    }
  }
  return elementwise_kernel<Params>;
}

/// Launches params' split as plan_launch plans it, after adjust(params, shape) (the flat bias pass
/// rounds its grid to whole rows there; not under a scoped_policy, whose grid stands), in the
/// instantiation with_shape_code picks for the shape; an adjusted launch never runs as bulk tiles.
template <class Params, class Adjust = keep_shape>
cudaError_t launch_modelled(Params params, int device, cost_hint hint, cudaStream_t stream,
                            const Adjust& adjust = {}) {
  launch_plan plan{};
  if (const cudaError_t status =
          plan_launch(params, device, hint, std::is_same_v<Adjust, keep_shape>, plan);
      status != cudaSuccess) {
    return status;
  }
  if constexpr (bulk_tiles_considered_v<Params>) {
    if (plan.bulk_tiles) {
      const auto bulk_params = bulk_params_of(params);
      return launch_kernel(bulk_tile_kernel_for(bulk_params), bulk_params, plan.shape, stream);
    }
  }
  if (!policy_overridden()) adjust(params, plan.shape);
  // the adjusted shape keeps the plan's vectors per thread (the flat bias pass rounds blocks)
  return with_shape_code(
      params, plan.one_vector_code && plan.shape.vectors_per_thread == 1, [&](auto launched) {
        // a small grid running sm_90 code: a programmatic dependent launch (elementwise_kernel waits)
        const auto kernel = elementwise_kernel<decltype(launched)>;
        device_facts device_info{};
        kernel_facts facts{};
        if (const cudaError_t status = get_launch_facts(kernel, device, device_info, facts);
            status != cudaSuccess) {
          return status;
        }
        launched.waits_for_previous = overlaps_previous_kernel(device_info, facts, plan.shape);
        return launch_kernel_grid(kernel, launched, dim3(plan.shape.blocks),
                                  plan.shape.threads_per_block, stream,
                                  plan.shape.dynamic_shared_bytes, launched.waits_for_previous);
      });
}

/// Launches params (validated) as run_elementwise does: the instantiation with_launched_params
/// picks, in the launch model's shape (then `adjust`, as launch_modelled).
template <class Params, class Adjust = keep_shape>
cudaError_t launch_elementwise(const Params& params, int device, cost_hint hint,
                               cudaStream_t stream, const Adjust& adjust = {}) {
  return with_launched_params(params, device, hint, [&](const auto& launched) {
    return launch_modelled(launched, device, hint, stream, adjust);
  });
}

/// Validates, then launches elementwise_kernel over n elements: outputs[i] = op(inputs[i]...).
/// `extra` lists arrays the op reads by itself (the ReLU mask), validated with the others.
/// Tabulable: op is a pure function of its one input (an activation's forward), so a bf16 one may
/// be tabulated (policy.cuh: tabulates), where measured faster (table_measure.cuh).
template <int VecWidth, bool Tabulable = false, class Op, class... Out, class... In>
cudaError_t run_elementwise(Op op, const output_arrays<Out...>& outputs, std::size_t n,
                            const input_arrays<In...>& inputs, cudaStream_t stream, cost_hint hint,
                            in_place_inputs in_place, const array_arg* extra = nullptr,
                            std::size_t extra_count = 0) {
  (check_output_type<Out>(), ...);
  (check_input_type<In>(), ...);
  constexpr int width = elementwise_width<VecWidth>(type_list<Out...>{}, type_list<In...>{});
  if (n == 0) return accepted_without_launch();
  array_arg arrays[sizeof...(Out) + sizeof...(In) + 2];
  const std::size_t used =
      describe_arrays(outputs, n, inputs, in_place, extra, extra_count, arrays);
  int device = 0;
  if (const cudaError_t status = validate_arrays(arrays, used, device); status != cudaSuccess) {
    return status;
  }
  auto params = make_params<width>(op, outputs, n, inputs);
  if constexpr (Tabulable && sizeof...(In) == 1 &&
                (std::is_same_v<type_list<Out..., In...>,
                                type_list<__nv_bfloat16, __nv_bfloat16>>)) {
    if (tabulates(hint, n)) {  // the table or direct math, as measured (table_measure.cuh)
      return run_table_or_direct<decltype(params)>(
          device, stream, n, [&] { return run_tabulated(params, device, stream); },
          [&] { return launch_elementwise(params, device, hint, stream); });
    }
  }
  return launch_elementwise(params, device, hint, stream);
}

/// The row-wise sibling of launch_elementwise, for arrays validated on `device` (run_rows):
/// launches rows_kernel: for each row r, outputs[m] + r * output_pitch[m] and inputs[k] + r *
/// input_pitch[k] are one row of cols elements, inputs in Broadcast (bit k) the same row for
/// every r (kernels/rows.cuh). The launch model sees the whole work (rows x one row's split); its
/// vectors per thread and passes shape the grid (rows_grid_for). Walking columns (broadcast
/// inputs), it sees the bytes one row's step loads and moves (broadcast inputs come from cache)
/// and its vectors per thread are the rows a thread loads together.
template <int VecWidth, unsigned Broadcast = 0,
          unsigned WalkLoadBytes = max_walk_load_bytes_per_thread, class Op, class... Out,
          class... In>
cudaError_t launch_rows(Op op, const output_arrays<Out...>& row0_outputs,
                        const std::size_t (&output_pitch)[sizeof...(Out)], std::size_t rows,
                        std::size_t cols, const input_arrays<In...>& row0_inputs,
                        const std::size_t (&input_pitch)[sizeof...(In)], int device,
                        cudaStream_t stream, cost_hint hint) {
  (check_output_type<Out>(), ...);
  (check_input_type<In>(), ...);
  constexpr int width = resolve_width<VecWidth, max_size_of<Out..., In...>()>();
  if (rows == 0 || cols == 0) return accepted_without_launch();
  auto params = make_rows_params<width, Broadcast, WalkLoadBytes>(
      op, row0_outputs, output_pitch, rows, cols, row0_inputs, input_pitch);
  using params_t = decltype(params);
  launch_shape shape{};
  if constexpr (params_t::walks_columns) {
    if (const cudaError_t status = choose_launch_shape(
            rows_kernel<params_t>, device, hint, params.row.vectors * rows,
            (params.row.head + params.row.tail) * rows, params_t::row_load_bytes,
            params_t::bytes_per_element, params_t::arrays_per_element, params_t::max_rows_in_flight,
            shape, compute_bound_passes_of<Op>, params_t::max_rows_in_flight);
        status != cudaSuccess) {
      return status;
    }
    // The model's rows in flight are at least the kernel's cap (rows_params: four 16-byte rows,
    // unless the op's float math is compute-bound), fewer only where little work spreads over
    // every SM; its passes multiply them as they do vectors.
    params.rows_in_flight = shape.vectors_per_thread;
    // A walking thread pays its setup (the broadcast inputs' loads, the row loop's) once per
    // column vector: it walks at least min_walk_elements elements (fewer paid the setup too
    // often, more left too few threads). A compute-bound forward's passes where tight come on
    // top, as they do for elementwise launches. A scoped_policy's passes stand.
    const unsigned walk = shape.vectors_per_thread * width;
    const unsigned min_passes = (min_walk_elements + walk - 1) / walk;
    if (shape.passes < min_passes && !policy_overridden()) shape.passes = min_passes;
  } else {
    if (const cudaError_t status =
            model_shape(rows_kernel<params_t>, device, hint, params.row, rows, shape);
        status != cudaSuccess) {
      return status;
    }
    params.row.vectors_per_thread = shape.vectors_per_thread;
  }
  // walking columns, the model's vectors per thread are rows in flight
  const unsigned along_row = params_t::walks_columns ? 1 : shape.vectors_per_thread;
  const unsigned rows_per_thread =
      (params_t::walks_columns ? shape.vectors_per_thread : 1) * shape.passes;
  const rows_grid grid = rows_grid_for(rows, params.row.vectors, params.row.head + params.row.tail,
                                       along_row, rows_per_thread, shape.threads_per_block);
  return launch_kernel_grid(rows_kernel<params_t>, params, dim3(grid.blocks_x, grid.blocks_y),
                            shape.threads_per_block, stream, shape.dynamic_shared_bytes);
}

/// The row-wise sibling of run_elementwise: validates `arrays` (the caller's view of the whole
/// layout: a packed [rows, 2 * cols] buffer is one array there, two in the kernel), then
/// launch_rows.
template <int VecWidth, unsigned Broadcast = 0,
          unsigned WalkLoadBytes = max_walk_load_bytes_per_thread, class Op, class... Out,
          class... In>
cudaError_t run_rows(Op op, const output_arrays<Out...>& row0_outputs,
                     const std::size_t (&output_pitch)[sizeof...(Out)], std::size_t rows,
                     std::size_t cols, const input_arrays<In...>& row0_inputs,
                     const std::size_t (&input_pitch)[sizeof...(In)], const array_arg* arrays,
                     std::size_t count, cudaStream_t stream, cost_hint hint) {
  if (rows == 0 || cols == 0) return accepted_without_launch();
  int device = 0;
  if (const cudaError_t status = validate_arrays(arrays, count, device); status != cudaSuccess) {
    return status;
  }
  return launch_rows<VecWidth, Broadcast, WalkLoadBytes>(
      op, row0_outputs, output_pitch, rows, cols, row0_inputs, input_pitch, device, stream, hint);
}

/// The launch model's shape for the sign-mask forward over n elements on `device`: a thread per
/// sign_mask_items (fp32, fp64: the model's 128-thread blocks are staged_mask_threads, as the CPU
/// test checks); an element moves its input and output, two arrays, the mask's bits riding along.
/// The request is also what a policy selector is asked (sign_mask_request).
template <class T, class Activation>
policy_request sign_mask_request(const device_facts& device, const kernel_facts& kernel,
                                 std::size_t n) {
  return {device,
          kernel,
          {cost_hint::light, default_compute_bound_passes},
          {sign_mask_items<T>(n), 0, sign_mask_params<T, Activation>::vector_load_bytes,
           2 * sizeof(T), 2, 1, 1}};
}
/// The staged forward (fp32, fp64) keeps blocks of staged_mask_threads where the model picks
/// another block for little work: only those blocks take staged steps.
template <class T, class Activation>
launch_shape sign_mask_launch_shape(const device_facts& device, const kernel_facts& kernel,
                                    std::size_t n) {
  const policy_request r = sign_mask_request<T, Activation>(device, kernel, n);
  const launch_shape modelled = select_policy(r.device, r.kernel, r.op, r.work);
  if (!mask_is_staged<T> || modelled.threads_per_block == staged_mask_threads) return modelled;
  launch_shape staged = modelled;
  staged.threads_per_block = staged_mask_threads;
  staged.blocks =
      grid_blocks(std::size_t(modelled.blocks) * modelled.threads_per_block, staged_mask_threads);
  return staged;
}

/// sign_mask_launch_shape on `device`, with its facts and the kernel's (queried once: launch.cuh),
/// or the calling thread's scoped_policy's (selected_policy). Any grid and block are correct:
/// blocks of other than staged_mask_threads threads take no staged steps (kernels/relu_mask.cuh).
template <class T, class Activation>
cudaError_t model_sign_mask_shape(int device, std::size_t n, launch_shape& shape) {
  device_facts device_info{};
  kernel_facts kernel_info{};
  if (const cudaError_t status = get_launch_facts(sign_mask_forward_kernel<T, Activation>, device,
                                                  device_info, kernel_info);
      status != cudaSuccess) {
    return status;
  }
  shape = selected_policy(current_policy_selector(),
                          sign_mask_request<T, Activation>(device_info, kernel_info, n),
                          sign_mask_launch_shape<T, Activation>(device_info, kernel_info, n));
  return cudaSuccess;
}

/// Validates, then launches the sign-mask forward (out = act(in), mask bit = in > 0).
template <class T, class Activation>
cudaError_t run_sign_mask_forward(Activation act, const T* in, T* out, std::uint32_t* mask,
                                  std::size_t n, cudaStream_t stream) {
  check_input_type<T>();
  if (n == 0) return accepted_without_launch();
  const array_arg arrays[] = {array_of(out, n, array_role::output),
                              array_of(in, n, array_role::input_or_in_place),
                              {mask, checked_bytes(mask_words(n), sizeof(std::uint32_t)),
                               alignof(std::uint32_t), array_role::output}};
  int device = 0;
  if (const cudaError_t status = validate_arrays(arrays, 3, device); status != cudaSuccess) {
    return status;
  }
  const sign_mask_params<T, Activation> params = make_sign_mask_params(act, in, out, mask, n);
  launch_shape shape{};
  if (const cudaError_t status = model_sign_mask_shape<T, Activation>(device, n, shape);
      status != cudaSuccess) {
    return status;
  }
  return launch_kernel(sign_mask_forward_kernel<T, Activation>, params, shape, stream);
}

}  // namespace detail
}  // namespace cuact
