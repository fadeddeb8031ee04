/// \file
/// Validation and launch of fused.cuh's two kernels that the elementwise and row-wise paths
/// cannot express: the quantizing forward with its amax (a block reduction and an atomic) and the
/// bias backward with its column sums (two stages); and the choice between the bias forward's
/// two paths (a flat elementwise pass or the row walk). Both validate with dispatch.cuh's pieces
/// (describe_arrays, validate_arrays) and the quantize launch uses its launch model (model_shape).
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <numeric>

#include "config.cuh"
#include "dispatch.cuh"
#include "fast_divmod.cuh"
#include "kernels/column_sum.cuh"
#include "kernels/quantize.cuh"
#include "launch.cuh"
#include "validate.cuh"

namespace cuact {
namespace detail {

/// rows * cols * factor elements, or 0 when that overflows size_t (validation then rejects the
/// array: a byte size of 0 is invalid).
inline std::size_t checked_elements(std::size_t rows, std::size_t cols, std::size_t factor = 1) {
  const std::size_t per_row = checked_bytes(cols, factor);
  return per_row == 0 ? 0 : checked_bytes(rows, per_row);
}

/// The direct quantize's shape from the model's (`model`, its amax counted as a third array).
/// Each block ends in a reduction (two rounds of warp shuffles, a barrier) and an atomicMax on
/// the one amax, so:
/// - a light op's blocks hold at least quantize_light_min_threads threads: the model's 128-thread
///   blocks for light fp32 ops made twice the blocks, and twice the reductions, which kept them
///   short of the copy ceiling; heavy ops lost a little in larger blocks and keep theirs;
/// - from quantize_shortened_passes x quantize_min_blocks blocks on, that many times fewer blocks
///   make that many times the passes, so that cost is spread over more elements (the grid-stride loop is correct for any
///   grid).
inline launch_shape quantize_launch_shape(launch_shape model) {
  if (!model.heavy && model.threads_per_block < quantize_light_min_threads) {
    const unsigned factor =
        (quantize_light_min_threads + model.threads_per_block - 1) / model.threads_per_block;
    model.threads_per_block = quantize_light_min_threads;
    model.blocks = (model.blocks + factor - 1) / factor;
  }
  if (model.blocks >= quantize_shortened_passes * quantize_min_blocks) {
    model.blocks = (model.blocks + quantize_shortened_passes - 1) / quantize_shortened_passes;
    model.passes *= quantize_shortened_passes;
  }
  return model;
}

/// The shape of a tabulated quantize over `vectors` 16-element vectors and `scalars` scalars.
inline launch_shape tabulated_quantize_launch_shape(std::size_t vectors, std::size_t scalars) {
  return fixed_launch_shape(vectors, scalars, tabulated_quantize_threads_per_block, 1,
                            tabulated_quantize_passes);
}

/// Launches the tabulated quantize of `params` (its op a bf16_table_quantize_op) with its table at
/// `entries`: the fill kernel writes the table, then tabulated_quantize_kernel, started while the
/// fill runs (its first loads in flight; it waits for the fill before it reads the table:
/// tabulating_access::ready), with `shape` (its vectors_per_thread already in params).
template <class Params>
cudaError_t launch_tabulated_quantize(quantize_params<Params> params, float* entries,
                                      const launch_shape& shape, cudaStream_t stream) {
  params.elementwise.op.entries = entries;
  if (const cudaError_t status = fill_bf16_table(params.elementwise.op.fn, entries, stream);
      status != cudaSuccess) {
    return status;
  }
  return launch_kernel_grid(tabulated_quantize_kernel<Params>, params, dim3(shape.blocks),
                            shape.threads_per_block, stream, bf16_table_window::bytes_of<float>,
                            true);
}

/// Validates, zeroes *amax when `reset`, then launches quantize_kernel: out[i] = op(in[i]), the
/// op (fused.cuh's amax_op) keeping max |act(in[i])|. amax is a float no other array overlaps;
/// `scale`, where not null, a device float read in place of the op's scale. `Tabulated`: op is a
/// bf16_table_quantize_op (kernels/table.cuh) whose table this call fills in a buffer of its own
/// (get_table_buffer) and the tabulated kernel reads; returns cudaErrorNotSupported, nothing
/// launched or recorded, where there is no buffer (the caller computes directly).
///
/// Its vector width is elementwise_width's: 16 elements from a 2-byte input to a 1-byte output,
/// every word of the 16-byte store two fp8 pairs (elementwise.cuh: convert_vector). Why: with
/// 8-element vectors each thread stores 8 bytes, and light and compute-bound quantizes alike fell
/// well short of the copy ceiling; 16-byte stores reach it.
template <int VecWidth, bool Tabulated = false, class Op, class U, class T>
cudaError_t run_quantize(Op op, U* out, std::size_t n, const T* in, float* amax, const float* scale,
                         bool reset, cudaStream_t stream, cost_hint hint) {
  check_output_type<U>();
  check_input_type<T>();
  constexpr int width = elementwise_width<VecWidth>(type_list<U>{}, type_list<T>{});
  if (n == 0) return accepted_without_launch();
  const array_arg scalars[2] = {{amax, sizeof(float), alignof(float), array_role::output},
                                {scale, sizeof(float), alignof(float), array_role::input}};
  array_arg arrays[4];
  const std::size_t used =
      describe_arrays(output_arrays<U>{{out}}, n, input_arrays<T>{{in}}, every_input_in_place,
                      scalars, scale != nullptr ? 2 : 1, arrays);
  int device = 0;
  if (const cudaError_t status = validate_arrays(arrays, used, device); status != cudaSuccess) {
    return status;
  }
  [[maybe_unused]] float* entries = nullptr;
  if constexpr (Tabulated) {
    if (get_table_buffer(op.fn, device, stream, entries) != cudaSuccess) {
      return cudaErrorNotSupported;
    }
  }
  auto elementwise = make_params<width>(op, output_arrays<U>{{out}}, n, input_arrays<T>{{in}});
  using params_t = quantize_params<decltype(elementwise)>;
  launch_shape shape{};
  if constexpr (Tabulated) {
    shape =
        tabulated_quantize_launch_shape(elementwise.vectors, elementwise.head + elementwise.tail);
  } else {
    // The amax counts as a third array: every element updates it (a compare, then a block
    // reduction), work the model's per-array budget otherwise leaves out. With it the quantize
    // keeps the shape it had before that budget was per array (launch.cuh): one pass where the
    // budget is roomy, two where it is tight and the quantize is compute-bound.
    if (const cudaError_t status = model_shape(quantize_kernel<decltype(elementwise)>, device, hint,
                                               elementwise, 1, shape, 1);
        status != cudaSuccess) {
      return status;
    }
    if (!policy_overridden()) shape = quantize_launch_shape(shape);  // a scoped_policy's stands
  }
  elementwise.vectors_per_thread = shape.vectors_per_thread;
  if (reset) {
    if (const cudaError_t status = cudaMemsetAsync(amax, 0, sizeof(float), stream);
        status != cudaSuccess) {
      return returned(status);
    }
  }
  const params_t params{elementwise, amax, scale};
  if constexpr (Tabulated) {
    return launch_tabulated_quantize(params, entries, shape, stream);
  } else {
    return launch_kernel(quantize_kernel<decltype(elementwise)>, params, shape, stream);
  }
}

/// Whether the bias forward over [rows, cols] can run as one flat elementwise pass of Width-element
/// vectors (fused.cuh: flat_bias_op): the flat index fits fast_divmod in chunks of whole rows
/// (cols below 2^31, at least 2), vectors do not cross rows (cols a multiple of Width) and x, out
/// and bias are aligned to their vectors (so the bias vector at a vector's column is too).
/// Otherwise the row walk, which serves every layout.
template <int Width, class T, class U>
bool flat_bias_applies(const T* x, const T* bias, const U* out, std::size_t cols) {
  const auto aligned = [](const void* p, std::size_t bytes) {
    return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
  };
  return fast_divmod::divides_by(cols) && cols % Width == 0 && aligned(x, Width * sizeof(T)) &&
         aligned(bias, Width * sizeof(T)) && aligned(out, Width * sizeof(U));
}

/// Whether the row walk beats the flat pass on `device`: a compute-bound forward (gelu's hint) on
/// data of under 4 bytes per array, where the device's budget is tight for it (launch.cuh:
/// instruction_bound_budget_per_array). There the walk's one bias
/// load per column and no index arithmetic win; everywhere else the flat pass's registers do
/// (the walk needs many more registers, so too few blocks stay resident).
inline bool bias_walks(const device_facts& device, cost_hint hint, std::size_t bytes_per_element,
                       unsigned arrays_per_element) {
  return hint == cost_hint::compute_bound &&
         !is_float_data(bytes_per_element, arrays_per_element) &&
         budget_is_tight(device, bytes_per_element, arrays_per_element,
                         instruction_bound_budget_per_array);
}

/// Blocks for a flat bias launch the model shaped as `blocks` blocks of `per_block` vectors per
/// grid-stride step, over `vectors` vectors of `width` elements in rows of `cols` (a multiple of
/// width): `blocks` rounded up to make a step whole rows, where the rounded grid still takes
/// several steps (then each thread's bias vectors are the same on every step, and the engine
/// loads them once: flat_bias_op::whole_rows_step); 0 where that does not hold (one step covers the
/// work, or gridDim.x's limit). Rounding up adds fewer blocks than one whole-rows step needs
/// (cols / width / gcd(cols / width, per_block)): 0 for 4096 x 393216 fp32 in four passes.
/// Why: compute-bound bias forwards gained from loading the bias once; light ones lose a little
/// to the second loop's code, taken or not.
inline unsigned flat_bias_whole_row_blocks(unsigned blocks, std::size_t per_block,
                                           std::size_t vectors, std::size_t cols, int width) {
  const std::size_t row_vectors = cols / static_cast<std::size_t>(width);
  // blocks per whole-rows step: lcm(row_vectors, per_block) / per_block
  const std::size_t unit = row_vectors / std::gcd(row_vectors, per_block);
  const std::size_t rounded = (blocks + unit - 1) / unit * unit;
  if (rounded == 0 || rounded > static_cast<std::size_t>(INT_MAX) ||
      rounded * per_block >= vectors) {
    return 0;
  }
  return static_cast<unsigned>(rounded);
}

/// launch_elementwise's adjustment for the flat bias pass: the grid in whole-row steps where
/// flat_bias_whole_row_blocks gives one, and the op told the step.
struct flat_bias_whole_rows {
  std::size_t cols;
  template <class Params>
  void operator()(Params& params, launch_shape& shape) const {
    const std::size_t per_block =
        std::size_t(shape.threads_per_block) * params.effective_vectors_per_thread();
    const unsigned blocks = flat_bias_whole_row_blocks(shape.blocks, per_block, params.vectors,
                                                       cols, Params::vec_width);
    if (blocks == 0) return;
    shape.blocks = blocks;
    params.op.whole_rows_step = blocks * per_block * Params::vec_width;
  }
};

/// Rows per launch of the flat bias pass: the most whole rows below fast_divmod_limit elements.
inline std::size_t flat_bias_chunk_rows(std::size_t cols) { return (fast_divmod_limit - 1) / cols; }

/// The bias forward out[r, c] = act(x[r, c] + bias[c]): validates `arrays` (the whole layout),
/// then runs `flat` (flat_bias_op over `bias`, its columns filled in here) over it where
/// flat_bias_applies and bias_walks does not hold, in launches of flat_bias_chunk_rows rows; else
/// walk(device) (launch_rows on the validated arrays' device).
template <int VecWidth, class FlatOp, class T, class U, class Walk>
cudaError_t run_bias_forward(FlatOp flat, const T* x, const T* bias, U* out, std::size_t rows,
                             std::size_t cols, const array_arg* arrays, std::size_t count,
                             cudaStream_t stream, cost_hint hint, Walk&& walk) {
  check_output_type<U>();
  check_input_type<T>();
  constexpr int width = resolve_width<VecWidth, max_size_of<U, T>()>();
  if (rows == 0 || cols == 0) return accepted_without_launch();
  int device = 0;
  if (const cudaError_t status = validate_arrays(arrays, count, device); status != cudaSuccess) {
    return status;
  }
  if (!flat_bias_applies<width>(x, bias, out, cols)) return walk(device);
  device_facts facts{};
  if (const cudaError_t status = get_device_facts(device, facts); status != cudaSuccess) {
    return status;
  }
  if (bias_walks(facts, hint, sizeof(T) + sizeof(U), 2)) return walk(device);
  flat.columns = fast_divmod::of(static_cast<std::uint32_t>(cols));
  const std::size_t chunk_rows = flat_bias_chunk_rows(cols);
  for (std::size_t row = 0; row < rows; row += chunk_rows) {
    const std::size_t chunk = rows - row < chunk_rows ? rows - row : chunk_rows;
    const auto params = make_params<width>(flat, output_arrays<U>{{out + row * cols}}, chunk * cols,
                                           input_arrays<T>{{x + row * cols}});
    if (const cudaError_t status =
            launch_elementwise(params, device, hint, stream, flat_bias_whole_rows{cols});
        status != cudaSuccess) {
      return status;
    }
  }
  return cudaSuccess;
}

/// Bytes of the partial column sums the bias backward needs for a [rows, cols] layout of T.
template <int VecWidth, class T>
std::size_t bias_gradient_workspace(std::size_t rows, std::size_t cols) {
  constexpr int width = resolve_width<VecWidth, sizeof(T)>();
  const row_chunks c = bias_gradient_chunks(rows, cols, width);
  return checked_elements(c.chunks, cols, sizeof(compute_t<T>));
}

static_assert(bias_gradient_block_threads == threads_per_block,
              "kernel_facts counts resident blocks of threads_per_block threads");

/// Whether stage 1 runs its capped kernel (kernels/column_sum.cuh): where the compiler's own
/// registers leave too few resident threads for the launch model's bytes in flight on `device`
/// (launch.cuh: target_bytes_in_flight_per_sm) with each thread's one row of loads
/// (`row_load_bytes`), and the capped kernel keeps more blocks resident without spilling (fp64
/// derivatives of 80-112 registers spill at 64): the elementwise model's rule, applied to a kernel
/// whose loads per thread are fixed. Why: light fp32 backwards whose registers leave fewer bytes
/// in flight than the device's target gained from the cap; where the compiler's registers
/// already meet the target (a smaller target, heavier derivatives) capping loses.
inline bool bias_gradient_capped(const device_facts& device, const kernel_facts& own,
                                 const kernel_facts& capped, std::size_t row_load_bytes) {
  const double own_bytes = static_cast<double>(own.resident_blocks_per_sm) *
                           bias_gradient_block_threads * static_cast<double>(row_load_bytes);
  return own_bytes < target_bytes_in_flight_per_sm(device) &&
         capped.resident_blocks_per_sm > own.resident_blocks_per_sm &&
         capped.local_bytes_per_thread <= own.local_bytes_per_thread;
}

/// Stage 1's grid for `params` (make_bias_gradient_params) cut into `chunks`: x along the columns,
/// a thread per column vector (or per scalar column where those are more), y one per row chunk.
template <class Params>
dim3 bias_gradient_launch_grid(const Params& params, const row_chunks& chunks) {
  const std::size_t column_threads =
      params.vectors > params.head + params.tail ? params.vectors : params.head + params.tail;
  return dim3(grid_blocks(column_threads, bias_gradient_block_threads),
              static_cast<unsigned>(chunks.chunks));
}

/// What a policy selector is asked for stage 1 over `params` with kernel facts `kernel`: a thread
/// per column vector (or scalar column, where those are more), its row of x, dy and dx three
/// arrays, one step of the compiled rows in flight per thread. The op's hint is not read here.
template <class Held, class Op, int VecWidth, class T>
policy_request bias_gradient_request(const device_facts& device, const kernel_facts& kernel,
                                     const bias_gradient_params<Op, VecWidth, T>& params) {
  return {device,
          kernel,
          {},
          {params.vectors, params.head + params.tail, 2 * sizeof(Held), 3 * sizeof(T), 3, 1, 1}};
}

/// Stage 1's launch: bias_gradient_launch_grid's grid in blocks of bias_gradient_block_threads,
/// or under a scoped_policy its block, grid x (0: a thread per column vector) and residency cap,
/// fitted to `kernel` (selected_policy). Its vectors per thread and passes do not apply: the rows
/// a thread loads together are compiled (bias_gradient_rows_in_flight), and the row chunks, grid
/// y, fix the summation order (bias_gradient_chunks). Any grid is correct.
template <class Held, class Params>
launch_shape bias_gradient_shape(const device_facts& device, const kernel_facts& kernel,
                                 const Params& params, const row_chunks& chunks) {
  const launch_shape modelled{bias_gradient_launch_grid(params, chunks).x,
                              bias_gradient_block_threads, 1, 1, false};
  return selected_policy(current_policy_selector(),
                         bias_gradient_request<Held>(device, kernel, params), modelled);
}

/// Validates, then runs the two stages of kernels/column_sum.cuh. `workspace` null: the partial
/// sums live in a stream-ordered allocation (cudaMallocAsync / cudaFreeAsync on `stream`).
template <int VecWidth, class Op, class T>
cudaError_t run_bias_gradient(Op op, const T* x, const T* bias, const T* dy, T* dx, T* dbias,
                              std::size_t rows, std::size_t cols, void* workspace,
                              std::size_t workspace_bytes, cudaStream_t stream) {
  check_input_type<T>();
  constexpr int width = resolve_width<VecWidth, sizeof(T)>();
  using A = compute_t<T>;
  if (cols == 0) return accepted_without_launch();
  int device = 0;
  if (rows == 0) {  // the sum over no rows: dbias = +0
    const array_arg dbias_only[] = {array_of(dbias, cols, array_role::output)};
    if (const cudaError_t status = validate_arrays(dbias_only, 1, device); status != cudaSuccess) {
      return status;
    }
    return returned(cudaMemsetAsync(dbias, 0, cols * sizeof(T), stream));
  }
  const std::size_t n = checked_elements(rows, cols);
  const std::size_t partial_bytes = bias_gradient_workspace<VecWidth, T>(rows, cols);
  const array_arg arrays[] = {array_of(dx, n, array_role::output),
                              array_of(dbias, cols, array_role::output),
                              array_of(x, n, array_role::input_or_in_place),
                              array_of(dy, n, array_role::input_or_in_place),
                              array_of(bias, cols, array_role::input),
                              {workspace, workspace_bytes < partial_bytes ? 0 : partial_bytes,
                               alignof(A), array_role::output}};
  if (const cudaError_t status =
          validate_arrays(arrays, workspace == nullptr && workspace_bytes == 0 ? 5 : 6, device);
      status != cudaSuccess) {
    return status;
  }
  if (partial_bytes == 0) {  // chunks x cols overflows
    return reject(cudaErrorInvalidValue, "the bias gradient's workspace size overflows size_t");
  }
  using params_t = bias_gradient_params<Op, width, T>;
  using held = held_vector_t<T, width>;
  device_facts device_info{};
  kernel_facts own{}, capped_facts{};
  if (const cudaError_t status =
          get_launch_facts(bias_gradient_kernel<params_t>, device, device_info, own);
      status != cudaSuccess) {
    return status;
  }
  if (const cudaError_t status =
          get_kernel_facts(bias_gradient_capped_kernel<params_t>, device, capped_facts);
      status != cudaSuccess) {
    return status;
  }
  bool capped = bias_gradient_capped(device_info, own, capped_facts,
                                     2 * sizeof(held) * bias_gradient_rows_in_flight<held>);
  void* partial = workspace;
  if (partial == nullptr) {
    if (const cudaError_t status = cudaMallocAsync(&partial, partial_bytes, stream);
        status != cudaSuccess) {
      return returned(status);
    }
  }
  const auto params =
      make_bias_gradient_params<width>(op, x, bias, dy, dx, static_cast<A*>(partial), rows, cols);
  const row_chunks chunks = bias_gradient_chunks(rows, cols, width);
  const launch_shape stage1 = bias_gradient_shape<held>(device_info, own, params, chunks);
  // a forced block above the capped kernel's launch bounds runs the kernel without them
  if (capped &&
      stage1.threads_per_block > static_cast<unsigned>(capped_facts.max_threads_per_block)) {
    capped = false;
  }
  cudaError_t status = launch_kernel_grid(
      capped ? bias_gradient_capped_kernel<params_t> : bias_gradient_kernel<params_t>, params,
      dim3(stage1.blocks, static_cast<unsigned>(chunks.chunks)), stage1.threads_per_block, stream,
      stage1.dynamic_shared_bytes);
  if (status == cudaSuccess) {
    const A* partial_sums = static_cast<const A*>(partial);
    std::size_t chunk_count = chunks.chunks;
    void* args[] = {&partial_sums, &chunk_count, &cols, &dbias};
    status = cudaLaunchKernel(reinterpret_cast<const void*>(&column_sum_kernel<A, T>),
                              dim3(grid_blocks(cols, threads_per_block)), dim3(threads_per_block),
                              args, 0, stream);
  }
  if (workspace == nullptr) {
    const cudaError_t freed = cudaFreeAsync(partial, stream);
    if (status == cudaSuccess) status = freed;
  }
  return returned(status);
}

}  // namespace detail
}  // namespace cuact
