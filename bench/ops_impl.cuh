/// \file
/// The templates that build entries (ops.cuh) from an activation and a dtype. Included only by
/// ops_<type>.cu and ops_user.cu, each of which instantiates one dtype (or the user functors).
///
/// Every contestant of an entry runs the very same functor: cuact's own forward_op /
/// gradient_op / gradient_from_output_op, which cuact's entries launch, are also what
/// cub::DeviceTransform runs, behind `cub_op`, which converts storage values to the compute type
/// and back with cuact's own conversions (CUB calls its op with storage-typed values).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>
#include <cuact/cuact.cuh>
#include <cub/device/device_transform.cuh>
#include <cuda/std/tuple>
#include <type_traits>

#include "op_table.hpp"
#include "ops.cuh"

namespace bench {
namespace ops_detail {

template <class T>
constexpr dtype dtype_of() {
  if constexpr (std::is_same_v<T, float>) {
    return dtype::f32;
  } else if constexpr (std::is_same_v<T, double>) {
    return dtype::f64;
  } else if constexpr (std::is_same_v<T, __half>) {
    return dtype::f16;
  } else {
    static_assert(std::is_same_v<T, __nv_bfloat16>, "bench: unsupported dtype");
    return dtype::bf16;
  }
}

/// The rows that every build times (headline, sweep, small, shapes). With CUACT_BENCH_FAMILY off
/// only these are instantiated, and fp64 has only these in every build (only the headline and
/// the sweep time fp64).
template <class A>
inline constexpr bool is_core_v = std::is_same_v<A, cuact::relu> || std::is_same_v<A, cuact::selu>;
template <class T, class A>
inline constexpr bool built_v = is_core_v<A> ||
                                (CUACT_BENCH_FAMILY != 0 && !std::is_same_v<T, double>);

template <class T>
const T* in_ptr(const void* p) {
  return static_cast<const T*>(p);
}
template <class T>
T* out_ptr(void* p) {
  return static_cast<T*>(p);
}

/// cuact's adaptor Op (forward_op, gradient_op, gradient_from_output_op) around act, built the way
/// that works whatever base classes the adaptor has.
template <class Op, class A>
Op make_op(const A& act) {
  Op op{};
  op.act = act;
  return op;
}

/// CUB's functor: cuact's op between cuact's conversions (storage -> compute -> storage).
template <class Op, class Out>
struct cub_op {
  Op op;
  template <class... Storage>
  __host__ __device__ Out operator()(Storage... values) const {
    return cuact::detail::from_compute<Out>(op(cuact::detail::to_compute(values)...));
  }
};

// CUB's offset type follows num_items: std::int64_t, so every n works.
using cub_items_t = std::int64_t;

template <class T, class Op, class... In>
cudaError_t cub_transform(Op op, T* out, std::size_t n, cudaStream_t stream, const In*... in) {
  return cub::DeviceTransform::Transform(::cuda::std::make_tuple(in...), out,
                                         static_cast<cub_items_t>(n), cub_op<Op, T>{op}, stream);
}

/// The vector width cuact's entries use for these arrays (detail/dispatch.cuh: auto width).
template <class T, class... In>
inline constexpr int entry_width_v =
    cuact::detail::resolve_width<cuact::auto_width, cuact::detail::max_size_of<T, In...>()>();

/// `report` completed with a launch shape of a kernel over Params and its registers.
template <class Params>
shape_report shape_of(const cuact::detail::launch_shape& shape, int registers,
                      shape_report report) {
  report.available = true;
  report.blocks = shape.blocks;
  report.threads_per_block = shape.threads_per_block;
  report.vectors_per_thread = shape.vectors_per_thread;
  report.passes = shape.passes;
  report.max_vectors_per_thread = static_cast<unsigned>(Params::max_vectors_per_thread);
  report.heavy = shape.heavy;
  report.registers = registers;
  return report;
}

/// The launch shape the model picks for op over these arrays: the same params type as cuact's
/// entry builds, the same kernel instantiation, the same plan (detail::plan_launch, as
/// detail::launch_modelled makes it: the kernel too, elementwise or bulk tiles).
/// A tabulable op (a forward: Tabulable) on bf16 data over at least tabulated_min_elements, whose
/// calls now take the table (detail::untimed_table_path: the measured choice, or the table while
/// undecided), reports the tabulated kernel's fixed shape (detail::run_tabulated), its registers
/// and its resident blocks with the table in shared memory.
template <class T, bool Tabulable = false, class Op, class... In>
shape_report modelled_shape(Op op, cuact::detail::cost_hint hint, T* out, std::size_t n,
                            const In*... in) {
  const auto params = cuact::make_elementwise_params<entry_width_v<T, In...>>(
      op, cuact::outputs(out), n, cuact::inputs(in...));
  using params_t = std::remove_const_t<decltype(params)>;
  shape_report report;
  if constexpr (Tabulable && sizeof...(In) == 1 && std::is_same_v<T, __nv_bfloat16>) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
      cudaGetLastError();
      return report;
    }
    if (cuact::detail::tabulates(hint, n) &&
        cuact::detail::untimed_table_path<params_t>(device) == cuact::detail::table_path::table) {
      const auto table_params = cuact::detail::tabulated_params(params, nullptr);
      const auto kernel =
          cuact::detail::tabulated_kernel<std::remove_const_t<decltype(table_params)>>;
      cuact::detail::device_facts facts{};
      if (cuact::detail::get_device_facts(device, facts) != cudaSuccess) {
        cudaGetLastError();
        return report;
      }
      const cuact::detail::launch_shape shape = cuact::detail::tabulated_launch_shape(
          facts, params.vectors, params.head + params.tail, params_t::max_vectors_per_thread);
      cudaFuncAttributes attributes{};
      if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess ||
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(
              &report.resident_blocks_per_sm, kernel, static_cast<int>(shape.threads_per_block),
              cuact::detail::bf16_table_window::bytes) != cudaSuccess) {
        cudaGetLastError();
        return report;
      }
      report.tabulated = true;
      return shape_of<params_t>(shape, attributes.numRegs, report);
    }
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return report;
  }
  // the instantiation run_elementwise launches (its own, or the one-vector one), planned as
  // launch_modelled plans it (its kernel: elementwise_kernel, or bulk tiles)
  const cudaError_t status =
      cuact::detail::with_launched_params(params, device, hint, [&](const auto& launched) {
        auto planned = launched;
        using launched_t = std::remove_const_t<std::remove_reference_t<decltype(launched)>>;
        cuact::detail::launch_plan plan{};
        if (const cudaError_t s = cuact::detail::plan_launch(planned, device, hint, true, plan);
            s != cudaSuccess) {
          return s;
        }
        const auto kernel = cuact::detail::planned_kernel(planned, plan);
        cuact::detail::kernel_facts facts{};
        if (const cudaError_t s = cuact::detail::get_kernel_facts(kernel, device, facts);
            s != cudaSuccess) {
          return s;
        }
        report.resident_blocks_per_sm = facts.resident_blocks_per_sm;
        report.bulk_tiles = plan.bulk_tiles;
        if (plan.shape.dynamic_shared_bytes != 0) {  // residency capped by the shared memory
          if (const cudaError_t s = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                  &report.resident_blocks_per_sm, kernel,
                  static_cast<int>(plan.shape.threads_per_block), plan.shape.dynamic_shared_bytes);
              s != cudaSuccess) {
            return s;
          }
        }
        report = shape_of<launched_t>(plan.shape, facts.registers_per_thread, report);
        return cudaSuccess;
      });
  if (status != cudaSuccess) {
    cudaGetLastError();
    return shape_report{};
  }
  return report;
}

/// The public kernel launched directly with a chosen shape.
template <class T, class Op, class... In>
cudaError_t direct_launch(Op op, T* out, std::size_t n, unsigned threads_per_block,
                          unsigned vectors_per_thread, int passes, cudaStream_t stream,
                          const In*... in) {
  const auto params = cuact::make_elementwise_params<entry_width_v<T, In...>>(
      op, cuact::outputs(out), n, cuact::inputs(in...), vectors_per_thread);
  const std::size_t per_pass =
      static_cast<std::size_t>(threads_per_block) * static_cast<std::size_t>(passes);
  std::size_t grid = (params.work_items() + per_pass - 1) / per_pass;
  if (grid == 0) grid = 1;
  if (grid > static_cast<std::size_t>(INT_MAX)) return cudaErrorInvalidConfiguration;
  cuact::elementwise_kernel<<<static_cast<unsigned>(grid), threads_per_block, 0, stream>>>(params);
  return cudaGetLastError();
}

/// Fills the parts of an entry that every elementwise op shares: CUB, shape and direct launch
/// for `op` reading in0 (Inputs == 1) or in0, in1 (Inputs == 2). Tabulable: op is a forward
/// (cuact::forward may tabulate it).
template <class T, int Inputs, class Op, bool Tabulable = false>
void set_elementwise(entry& e, Op op, cuact::detail::cost_hint hint) {
  e.element_inputs = Inputs;
  if constexpr (Inputs == 1) {
    e.cub = [op](const call_args& a, cudaStream_t s) {
      return cub_transform<T>(op, out_ptr<T>(a.out), a.n, s, in_ptr<T>(a.in0));
    };
    e.shape = [op, hint](const call_args& a) {
      return modelled_shape<T, Tabulable>(op, hint, out_ptr<T>(a.out), a.n, in_ptr<T>(a.in0));
    };
    e.direct = [op](const call_args& a, unsigned block, unsigned k, int passes, cudaStream_t s) {
      return direct_launch<T>(op, out_ptr<T>(a.out), a.n, block, k, passes, s, in_ptr<T>(a.in0));
    };
  } else {
    static_assert(Inputs == 2, "bench: one or two element inputs");
    e.cub = [op](const call_args& a, cudaStream_t s) {
      return cub_transform<T>(op, out_ptr<T>(a.out), a.n, s, in_ptr<T>(a.in0), in_ptr<T>(a.in1));
    };
    e.shape = [op, hint](const call_args& a) {
      return modelled_shape<T>(op, hint, out_ptr<T>(a.out), a.n, in_ptr<T>(a.in0),
                               in_ptr<T>(a.in1));
    };
    e.direct = [op](const call_args& a, unsigned block, unsigned k, int passes, cudaStream_t s) {
      return direct_launch<T>(op, out_ptr<T>(a.out), a.n, block, k, passes, s, in_ptr<T>(a.in0),
                              in_ptr<T>(a.in1));
    };
  }
}

/// The entries of one activation for dtype T: forward, and backward / backward_from_output where
/// the activation has them.
template <class T, class A>
void add_activation(std::vector<entry>& out, const char* activation, const A& act, bool core,
                    int row) {
  constexpr cuact::detail::cost_hint hint = cuact::detail::declared_cost<A>;
  entry base;
  base.activation = activation;
  base.type = dtype_of<T>();
  base.core = core;
  base.row = row;

  entry forward = base;
  forward.kind = op_kind::forward;
  forward.cuact = [act](const call_args& a, cudaStream_t s) {
    return cuact::forward(act, in_ptr<T>(a.in0), out_ptr<T>(a.out), a.n, s);
  };
  // the forward's own hint (gelu's cost::compute_bound, tanh's light bf16), as cuact::forward
  // passes it
  using forward_t = cuact::forward_op<A, T>;
  set_elementwise<T, 1, forward_t, /*Tabulable=*/true>(forward, make_op<forward_t>(act),
                                                       cuact::detail::forward_cost<forward_t>);
  out.push_back(forward);

  if constexpr (cuact::has_derivative_v<A>) {
    entry backward = base;
    backward.kind = op_kind::backward;
    backward.cuact = [act](const call_args& a, cudaStream_t s) {
      return cuact::backward(act, in_ptr<T>(a.in0), in_ptr<T>(a.in1), out_ptr<T>(a.out), a.n, s);
    };
    set_elementwise<T, 2>(backward, make_op<cuact::gradient_op<A, T>>(act), hint);
    out.push_back(backward);
  }

  if constexpr (cuact::has_derivative_from_output_v<A>) {
    entry from_output = base;
    from_output.kind = op_kind::backward_from_output;
    from_output.cuact = [act](const call_args& a, cudaStream_t s) {
      return cuact::backward_from_output(act, in_ptr<T>(a.in0), in_ptr<T>(a.in1), out_ptr<T>(a.out),
                                         a.n, s);
    };
    // y = act(x), in place over the x that in0 holds.
    from_output.prepare = [act](const call_args& a, cudaStream_t s) {
      T* data = const_cast<T*>(in_ptr<T>(a.in0));
      return cuact::forward(act, data, a.n, s);
    };
    // the backward from the output's own hint (sigmoid's light from_output_cost), as
    // cuact::backward_from_output passes it
    set_elementwise<T, 2>(from_output, make_op<cuact::gradient_from_output_op<A, T>>(act),
                          cuact::detail::from_output_cost<A>);
    out.push_back(from_output);
  }
}

/// relu_forward_mask and relu_backward_mask for dtype T (cuact only: CUB has no 1-bit output).
template <class T>
void add_relu_mask(std::vector<entry>& out, int row) {
  entry base;
  base.activation = "relu";
  base.type = dtype_of<T>();
  base.core = true;
  base.row = row;

  entry forward = base;
  forward.kind = op_kind::relu_forward_mask;
  forward.writes_mask = true;
  forward.cuact = [](const call_args& a, cudaStream_t s) {
    return cuact::relu_forward_mask(in_ptr<T>(a.in0), out_ptr<T>(a.out),
                                    static_cast<std::uint32_t*>(a.mask), a.n, s);
  };
  forward.reference = [](const call_args& a, cudaStream_t s) {
    return cuact::forward(cuact::relu{}, in_ptr<T>(a.in0), out_ptr<T>(a.out), a.n, s);
  };
  // The sign-mask kernel's shape, as detail::run_sign_mask_forward chooses it.
  forward.shape = [](const call_args& a) {
    using act_t = cuact::forward_op<cuact::relu, T>;
    const auto kernel = cuact::detail::sign_mask_forward_kernel<T, act_t>;
    shape_report report;
    int device = 0;
    cuact::detail::kernel_facts facts{};
    cuact::detail::launch_shape shape{};
    if (cudaGetDevice(&device) != cudaSuccess ||
        cuact::detail::get_kernel_facts(kernel, device, facts) != cudaSuccess ||
        cuact::detail::model_sign_mask_shape<T, act_t>(device, a.n, shape) != cudaSuccess) {
      cudaGetLastError();
      return report;
    }
    report.available = true;
    report.blocks = shape.blocks;
    report.threads_per_block = shape.threads_per_block;
    report.vectors_per_thread = shape.vectors_per_thread;
    report.passes = shape.passes;
    report.max_vectors_per_thread = 1;
    report.heavy = shape.heavy;
    report.registers = facts.registers_per_thread;
    report.resident_blocks_per_sm = facts.resident_blocks_per_sm;
    return report;
  };
  out.push_back(forward);

  entry backward = base;
  backward.kind = op_kind::relu_backward_mask;
  backward.element_inputs = 1;
  backward.reads_mask = true;
  backward.uses_aux = true;
  backward.cuact = [](const call_args& a, cudaStream_t s) {
    return cuact::relu_backward_mask(static_cast<const std::uint32_t*>(a.mask), in_ptr<T>(a.in0),
                                     out_ptr<T>(a.out), a.n, s);
  };
  // The mask of aux (x); out is scratch here, the timed calls overwrite it.
  backward.prepare = [](const call_args& a, cudaStream_t s) {
    return cuact::relu_forward_mask(in_ptr<T>(a.aux), out_ptr<T>(a.out),
                                    static_cast<std::uint32_t*>(a.mask), a.n, s);
  };
  backward.reference = [](const call_args& a, cudaStream_t s) {
    return cuact::backward(cuact::relu{}, in_ptr<T>(a.aux), in_ptr<T>(a.in0), out_ptr<T>(a.out),
                           a.n, s);
  };
  backward.shape = [](const call_args& a) {
    return modelled_shape<T>(
        cuact::detail::make_masked_gradient<T>(static_cast<const std::uint32_t*>(a.mask), a.n),
        cuact::detail::cost_hint::light, out_ptr<T>(a.out), a.n, in_ptr<T>(a.in0));
  };
  backward.direct = [](const call_args& a, unsigned block, unsigned k, int passes, cudaStream_t s) {
    return direct_launch<T>(
        cuact::detail::make_masked_gradient<T>(static_cast<const std::uint32_t*>(a.mask), a.n),
        out_ptr<T>(a.out), a.n, block, k, passes, s, in_ptr<T>(a.in0));
  };
  out.push_back(backward);
}

/// The floor for an elementwise kernel: one 16-byte vector per thread (a float4, or eight bf16),
/// the grid covers n (a multiple of the vector), no alignment checks, no validation, the same
/// functor as cuact's forward.
template <class T, class Op>
__global__ void bare_vector_kernel(const uint4* in, uint4* out, std::size_t vectors, Op op) {
  constexpr int width = static_cast<int>(16 / sizeof(T));
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < vectors) {
    alignas(16) T v[width];
    *reinterpret_cast<uint4*>(v) = in[i];
#pragma unroll
    for (int j = 0; j < width; ++j) v[j] = T(op(static_cast<float>(v[j])));
    out[i] = *reinterpret_cast<const uint4*>(v);
  }
}

template <class T, class A>
launch_fn bare_launcher(const A& act) {
  return [act](const call_args& a, cudaStream_t s) {
    constexpr unsigned threads = 256;
    const std::size_t vectors = a.n / (16 / sizeof(T));
    const auto blocks = static_cast<unsigned>((vectors + threads - 1) / threads);
    bare_vector_kernel<T><<<blocks, threads, 0, s>>>(static_cast<const uint4*>(a.in0),
                                                     static_cast<uint4*>(a.out), vectors,
                                                     make_op<cuact::forward_op<A, T>>(act));
    return cudaGetLastError();
  };
}

/// Every op-table row built for T (built_v), then the mask pair (not for fp64).
template <class T>
void add_table_entries(std::vector<entry>& out) {
  int position = 0;
  cuact_test::for_each_activation([&](const auto& row) {
    using A = std::decay_t<decltype(row.act)>;
    if constexpr (built_v<T, A>) {
      const std::size_t forward = out.size();
      add_activation<T>(out, row.name, row.act, is_core_v<A>, position);
      if constexpr (is_core_v<A> &&
                    (std::is_same_v<T, float> || std::is_same_v<T, __nv_bfloat16>)) {
        out[forward].bare = bare_launcher<T>(row.act);
      }
    }
    ++position;
  });
  if constexpr (!std::is_same_v<T, double>) add_relu_mask<T>(out, position);
}

}  // namespace ops_detail
}  // namespace bench
