// CPU grid simulation of the elementwise engine (common/grid_simulation.hpp): the per-thread body
// the GPU runs, over host arrays with every access recorded, for every vector width, every
// vectors_per_thread the kernel allows, pointer offsets 0..15, sizes straddling vector and
// grid-stride tile edges, in and out of place, and the grids the launch model gives (plus one
// thread, one warp, odd and oversized grids); multiple outputs and mixed element types; the launch
// model's shapes; validation's overlap rules. Every activation of the op table: cpu_grid_table.cu.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <set>
#include <tuple>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "grid_simulation.hpp"
#include "model_devices.hpp"

using namespace cuact_test;
using cuact::detail::type_list;

namespace {

/// Sizes that straddle the edges of V-element vectors and of grid-stride tiles (k vectors per
/// thread over a 3 x 37-thread grid, and over two 128-thread blocks).
std::vector<std::size_t> edge_sizes(std::size_t v, std::size_t k) {
  std::vector<std::size_t> sizes{0, 1, 2, v - 1, v, v + 1, 2 * v + 1, 33};
  for (std::size_t tile : {k * v * 111, k * v * 256}) {
    sizes.push_back(tile - 1);
    sizes.push_back(tile + v + 1);
  }
  sizes.push_back(k * v * 256 + 15);  // plus a 15-element head
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// The op of relu_matrix: the pass's own, or as detail::one_vector_op (the instantiation
/// run_elementwise launches where it holds more resident blocks).
template <class T, cuact_test::pass P, bool OneVector>
auto relu_pass_op() {
  const auto own = pass_op<P, T>(cuact::relu{});
  if constexpr (OneVector) {
    return cuact::detail::one_vector_op<std::remove_const_t<decltype(own)>>{own};
  } else {
    return own;
  }
}

/// One pass of relu over T with width W: every vectors_per_thread, size, offset and placement.
template <class T, cuact_test::pass P, int W, bool OneVector = false>
void relu_matrix(tally& total) {
  constexpr int inputs = pass_inputs(P);
  constexpr int V = resolved_width(W, sizeof(T));
  const auto op = relu_pass_op<T, P, OneVector>();
  using params_t = decltype(cuact::make_elementwise_params<V>(op, static_cast<T*>(nullptr), 0,
                                                              static_cast<const T*>(nullptr)));
  static_assert(!OneVector || params_t::max_vectors_per_thread == 1);
  const auto run = [&](const sim_layout& layout, bool all_grids) {
    const std::string what = type_name<T>() + " relu " + pass_name(P) +
                             (OneVector ? " one_vector_op" : "") + " W=" + std::to_string(W) + " " +
                             describe_layout(layout, inputs, 1);
    sim_result r;
    if constexpr (inputs == 1) {
      elementwise_sim<V, decltype(op), type_list<T>, type_list<T>> sim(op, layout);
      r = sim.run(grids_for(sim.params(), all_grids));
    } else {
      elementwise_sim<V, decltype(op), type_list<T>, type_list<T, T>> sim(op, layout);
      r = sim.run(grids_for(sim.params(), all_grids));
    }
    report_case(r, what, total, layout.n);
  };
  std::uint64_t seed = 1000 * W + 10 * static_cast<int>(P);
  for (unsigned k = 1; k <= static_cast<unsigned>(params_t::max_vectors_per_thread); ++k) {
    for (std::size_t n : edge_sizes(V, k)) {
      std::vector<std::size_t> offsets;
      if (k == 1) {
        for (std::size_t o = 0; o < 16; ++o) offsets.push_back(o);
      } else {
        // push_back, not `= {...}`: g++ 12 -O3 warns (-Wnonnull, a false positive) on
        // vector::assign from an initializer list here
        for (std::size_t o : {std::size_t(0), std::size_t(1), std::size_t(V) - 1}) {
          offsets.push_back(o);
        }
      }
      for (std::size_t o : offsets) {
        const bool all_grids = o == 0 || o == 3;
        sim_layout l;
        l.n = n;
        l.vectors_per_thread = k;
        l.seed = ++seed;
        std::fill(std::begin(l.in_offset), std::end(l.in_offset), o);
        std::fill(std::begin(l.out_offset), std::end(l.out_offset), o);
        run(l, all_grids);        // co-aligned: head, vectors, tail
        l.in_place = inputs - 1;  // forward over x, backward over dy
        run(l, all_grids);
        l.in_place = -1;  // one pointer at another offset: scalars only
        const std::size_t other = (o + 1 + o % 7) % 16;
        if (o % 2 == 0) {
          l.out_offset[0] = other;
        } else {
          l.in_offset[0] = other;
        }
        run(l, false);
        if (inputs == 2) {  // backward in place over dy with x misaligned against it
          l.in_offset[0] = other;
          l.in_offset[1] = l.out_offset[0] = o;
          l.in_place = 1;
          run(l, false);
        }
      }
    }
  }
}

}  // namespace

// The engine holds 16-bit inputs as the 32-bit words they were loaded in and widens the pairs
// itself (detail::lanes_of): every bit pattern, in both halves of a word, must widen exactly as
// the per-element conversion (NaN payloads, -0, subnormals and infinities included).
TEMPLATE_TEST_CASE("engine: 16-bit lanes widened from words equal the per-element conversion",
                   "[cpu][engine]", __half, __nv_bfloat16) {
  using T = TestType;
  using cuact::detail::held_vector_t;
  static_assert(std::is_same_v<held_vector_t<T, 8>, cuact::detail::vector_of<std::uint32_t, 4>>);
  static_assert(std::is_same_v<held_vector_t<T, 1>, cuact::detail::vector_of<T, 1>>);
  for (std::uint32_t low = 0; low < (1u << 16); ++low) {
    const std::uint32_t high = (low * 40503u + 12345u) & 0xffffu;  // a bijection: all values
    const held_vector_t<T, 2> held{{low | (high << 16)}};
    const auto lanes = cuact::detail::lanes_of<T, 2>(held);
    const float expected_low =
        cuact::detail::to_compute(from_bits<T>(static_cast<std::uint16_t>(low)));
    const float expected_high =
        cuact::detail::to_compute(from_bits<T>(static_cast<std::uint16_t>(high)));
    REQUIRE(bits_of(lanes.elements[0]) == bits_of(expected_low));  // bit for bit, NaNs too
    REQUIRE(bits_of(lanes.elements[1]) == bits_of(expected_high));
  }
}

TEMPLATE_TEST_CASE("grid simulation: every width x vectors per thread x offset x size x grid",
                   "[cpu][grid]", CUACT_TEST_DTYPES) {
  using T = TestType;
  tally total;
  for_each_width<T>([&](auto w) {
    relu_matrix<T, pass::forward, decltype(w)::value>(total);
    relu_matrix<T, pass::forward, decltype(w)::value, /*OneVector=*/true>(total);
    relu_matrix<T, pass::backward, decltype(w)::value>(total);
  });
  total.print("grid simulation " + type_name<T>());
  CHECK(total.failed_cases == 0);
  CHECK(total.cases > 0);
}

namespace {

/// Three inputs of three types, two outputs of two more: a + b * c and a - b.
struct three_in_two_out {
  template <class A, class B, class C>
  __host__ __device__ cuda::std::tuple<A, A> operator()(A a, B b, C c) const {
    return {a + A(b) * A(c), a - A(b)};
  }
};

/// A mixed-type op at width W: every vectors_per_thread, sizes, and offsets equal (co-aligned),
/// different (scalars only) and in place where output 0 and input 0 have one type.
template <int W, class... Out, class... In, class Op>
void mixed_matrix(const Op& op, type_list<Out...> outs, type_list<In...> ins, const char* name,
                  tally& total) {
  constexpr int V = resolved_width(W, cuact::detail::max_size_of<Out..., In...>());
  using params_t = cuact::detail::elementwise_params<Op, V, type_list<Out...>, type_list<In...>>;
  using out0 = std::tuple_element_t<0, std::tuple<Out...>>;
  using in0 = std::tuple_element_t<0, std::tuple<In...>>;
  std::uint64_t seed = 77;
  for (unsigned k = 1; k <= static_cast<unsigned>(params_t::max_vectors_per_thread); ++k) {
    for (std::size_t n : edge_sizes(V, k)) {
      for (std::size_t o : {0, 1, 3, 6}) {
        for (int placement = 0; placement < 3; ++placement) {
          if (placement == 2 && !std::is_same_v<out0, in0>) continue;
          sim_layout l;
          l.n = n;
          l.vectors_per_thread = k;
          l.seed = ++seed;
          std::fill(std::begin(l.in_offset), std::end(l.in_offset), o);
          std::fill(std::begin(l.out_offset), std::end(l.out_offset), o);
          if (placement == 1) l.out_offset[sizeof...(Out) - 1] = o + 1;  // not co-aligned
          if (placement == 2) l.in_place = 0;
          const std::string what = std::string(name) + " W=" + std::to_string(W) + " " +
                                   describe_layout(l, sizeof...(In), sizeof...(Out));
          elementwise_sim<V, Op, type_list<Out...>, type_list<In...>> sim(op, l);
          report_case(sim.run(grids_for(sim.params(), o == 3)), what, total, n);
        }
      }
    }
  }
  (void)outs;
  (void)ins;
}

}  // namespace

TEST_CASE("grid simulation: several outputs and mixed element types", "[cpu][grid]") {
  tally total;
  using bf16 = __nv_bfloat16;
  using e4m3 = __nv_fp8_e4m3;
  using e5m2 = __nv_fp8_e5m2;
  const auto selu_to_bf16 = cuact::forward_op<cuact::selu, bf16>{};
  mixed_matrix<1>(selu_to_bf16, type_list<bf16>{}, type_list<float>{}, "fp32 -> bf16 selu", total);
  mixed_matrix<2>(selu_to_bf16, type_list<bf16>{}, type_list<float>{}, "fp32 -> bf16 selu", total);
  mixed_matrix<cuact::auto_width>(selu_to_bf16, type_list<bf16>{}, type_list<float>{},
                                  "fp32 -> bf16 selu", total);
  mixed_matrix<cuact::auto_width>(cuact::forward_op<cuact::relu, e4m3>{}, type_list<e4m3>{},
                                  type_list<float>{}, "fp32 -> fp8 e4m3 relu", total);
  mixed_matrix<8>(cuact::forward_op<cuact::relu, e5m2>{}, type_list<e5m2>{}, type_list<__half>{},
                  "fp16 -> fp8 e5m2 relu", total);
  mixed_matrix<cuact::auto_width>(cuact::gradient_op<cuact::selu, bf16>{}, type_list<bf16>{},
                                  type_list<float, bf16>{},
                                  "selu backward (fp32 x, bf16 dy) -> bf16", total);
  mixed_matrix<cuact::auto_width>(three_in_two_out{}, type_list<float, bf16>{},
                                  type_list<float, __half, bf16>{}, "3 inputs -> 2 outputs", total);
  mixed_matrix<2>(three_in_two_out{}, type_list<double, __half>{},
                  type_list<double, float, float>{}, "3 inputs -> 2 outputs, fp64", total);
  total.print("grid simulation, mixed types");
  CHECK(total.failed_cases == 0);
}

// gelu's forward is compute-bound, through cuact::forward and through its adaptor with
// cuact::transform; its backward adaptors, and the activations without the hint, are heavy
static_assert(cuact::detail::forward_cost<cuact::gelu> == cuact::detail::cost_hint::compute_bound);
static_assert(cuact::detail::forward_cost<cuact::forward_op<cuact::gelu, float>> ==
              cuact::detail::cost_hint::compute_bound);
static_assert(cuact::detail::forward_cost<cuact::gradient_op<cuact::gelu, float>> ==
              cuact::detail::cost_hint::heavy);
static_assert(cuact::detail::declared_cost<cuact::gelu> == cuact::detail::cost_hint::heavy);
static_assert(cuact::detail::forward_cost<cuact::forward_op<cuact::selu, float>> ==
              cuact::detail::cost_hint::heavy);
static_assert(cuact::detail::forward_cost<cuact::forward_op<cuact::relu, float>> ==
              cuact::detail::cost_hint::light);
// the passes a compute-bound forward declares reach the model through forward_op and bias_op
// (bias + activation is a forward, walked or flat); gelu_tanh declares four too, an activation
// declaring none takes the default two
struct compute_bound_only {
  static constexpr cuact::cost cost = cuact::cost::compute_bound;
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return x;
  }
};
static_assert(cuact::detail::compute_bound_passes_of<cuact::forward_op<cuact::gelu, float>> == 4);
static_assert(cuact::detail::compute_bound_passes_of<cuact::bias_op<cuact::gelu, float>> == 4);
static_assert(cuact::detail::compute_bound_passes_of<
                  cuact::detail::flat_bias_op<cuact::gelu, float, float>> == 4);
static_assert(cuact::detail::forward_cost<cuact::bias_op<cuact::gelu, float>> ==
              cuact::detail::cost_hint::compute_bound);
static_assert(cuact::detail::compute_bound_passes_of<cuact::forward_op<cuact::gelu_tanh, float>> ==
              4);
static_assert(
    cuact::detail::compute_bound_passes_of<cuact::forward_op<compute_bound_only, float>> ==
    cuact::detail::default_compute_bound_passes);
static_assert(cuact::detail::forward_cost<compute_bound_only> ==
              cuact::detail::cost_hint::compute_bound);
static_assert(cuact::detail::forward_cost<cuact::gelu_tanh> ==
              cuact::detail::cost_hint::compute_bound);
// sigmoid's backward from the output (y (1 - y)) is light where its forward and backward are
// heavy: through cuact::backward_from_output, through its adaptor with cuact::transform, and
// through cuact::affine; an activation whose traits say nothing of it keeps its hint (silu, whose
// backward from the output would need x) or is estimated (no hint at all)
static_assert(cuact::detail::from_output_cost<cuact::sigmoid> == cuact::detail::cost_hint::light);
static_assert(cuact::detail::forward_cost<cuact::gradient_from_output_op<cuact::sigmoid, float>> ==
              cuact::detail::cost_hint::light);
static_assert(cuact::detail::forward_cost<cuact::gradient_op<cuact::sigmoid, float>> ==
              cuact::detail::cost_hint::heavy);
static_assert(cuact::detail::from_output_cost<cuact::affine_activation<cuact::tanh>> ==
              cuact::detail::cost_hint::light);
static_assert(cuact::detail::declared_cost<cuact::affine_activation<cuact::tanh>> ==
              cuact::detail::cost_hint::heavy);
static_assert(cuact::detail::from_output_cost<cuact::silu> == cuact::detail::cost_hint::heavy);
static_assert(cuact::detail::forward_cost<cuact::gradient_from_output_op<cuact::relu, float>> ==
              cuact::detail::cost_hint::light);
struct no_hint_activation {
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return x;
  }
};
static_assert(cuact::detail::from_output_cost<no_hint_activation> ==
              cuact::detail::cost_hint::estimate);
static_assert(
    cuact::detail::forward_cost<cuact::gradient_from_output_op<no_hint_activation, float>> ==
    cuact::detail::cost_hint::estimate);

TEST_CASE("launch model: the one-vector kernel where it holds more resident blocks",
          "[cpu][grid][launch]") {
  using cuact::detail::kernel_facts;
  using cuact::detail::launches_one_vector;
  // {resident blocks per SM, registers}: gelu fp32 with two vectors (39) against one (32)
  CHECK(launches_one_vector(kernel_facts{12, 39}, kernel_facts{16, 32}));
  // selu fp64 (31 against 29 registers), the 16-bit mask backward: 16 blocks either way
  CHECK_FALSE(launches_one_vector(kernel_facts{16, 31}, kernel_facts{16, 29}));
  CHECK_FALSE(launches_one_vector(kernel_facts{16, 29}, kernel_facts{12, 40}));
  // the one-vector op caps its params at one vector; the op's own takes the load cap's count
  using own_t = cuact::forward_op<cuact::gelu, float>;
  using own_params = decltype(cuact::make_elementwise_params<4>(
      own_t{}, static_cast<float*>(nullptr), 0, static_cast<const float*>(nullptr)));
  using one_params = decltype(cuact::make_elementwise_params<4>(
      cuact::detail::one_vector_op<own_t>{}, static_cast<float*>(nullptr), 0,
      static_cast<const float*>(nullptr)));
  static_assert(own_params::max_vectors_per_thread ==
                cuact::detail::max_load_bytes_per_thread / 16);
  static_assert(one_params::max_vectors_per_thread == 1);
  // the public spelling, for users' own launches: the same op, its parameters kept
  static_assert(std::is_same_v<cuact::one_vector<own_t>, cuact::detail::one_vector_op<own_t>>);
  const cuact::one_vector<cuact::elu> elu_one{{0.5}};
  CHECK(elu_one.alpha == 0.5);
  CHECK(elu_one(-1.0f) == cuact::elu{0.5}(-1.0f));
  const cuact::one_vector<cuact::elu> elu_copy{cuact::elu{0.25}};  // from an op value
  CHECK(elu_copy.alpha == 0.25);
  // and keeps the op's hints: gelu's compute-bound passes reach the model through it
  static_assert(cuact::detail::compute_bound_passes_of<cuact::detail::one_vector_op<own_t>> ==
                cuact::tuning_traits<cuact::gelu>::compute_bound_passes);
}

namespace {
/// A user's heavy activation whose bf16 forward is short (tuning_traits: has_short_bf16_math).
struct short_bf16_activation {
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return x;
  }
};
}  // namespace

template <>
struct cuact::tuning_traits<short_bf16_activation>
    : cuact::detail::tuning_values<cuact::detail::cost_hint::heavy> {
  static constexpr bool has_short_bf16_math = true;
};

TEST_CASE("launch model: a heavy op runs one vector on 16-bit data, and on float data where roomy",
          "[cpu][grid][launch]") {
  using cuact::detail::cost_hint;
  using cuact::detail::heavy_runs_one_vector;
  using cuact::detail::kernel_facts;
  const cuact::detail::device_facts h100 = model_h100, h200 = model_h200;
  // a forward (two arrays) of `bytes` per element: 4 (16-bit), 8 (fp32), 16 (fp64)
  CHECK(heavy_runs_one_vector(h100, cost_hint::heavy, 4, 2));         // 16-bit: about 20 per array
  CHECK(heavy_runs_one_vector(h100, cost_hint::heavy, 8, 2));         // fp32: about 40 per array
  CHECK(heavy_runs_one_vector(h100, cost_hint::heavy, 12, 3));        // an fp32 backward
  CHECK_FALSE(heavy_runs_one_vector(h100, cost_hint::heavy, 16, 2));  // double math
  CHECK_FALSE(heavy_runs_one_vector(h100, cost_hint::heavy, 6, 2));   // fp32 in, bf16 out
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::heavy, 6, 2));
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::heavy, 8, 2));  // 28, under 32: tight
  // 16-bit data runs one vector wherever the budget stands (on the H200 in two passes: 14 per
  // array, tight), forwards and backwards, unless its math is declared long, which keeps two
  // where the budget is tight only
  CHECK(heavy_runs_one_vector(h200, cost_hint::heavy, 4, 2));
  CHECK(heavy_runs_one_vector(h200, cost_hint::heavy, 6, 3));
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::heavy, 4, 2, true));
  CHECK(heavy_runs_one_vector(h100, cost_hint::heavy, 4, 2, true));
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::heavy, 8, 2, true));
  CHECK(heavy_runs_one_vector(h100, cost_hint::heavy, 8, 2, true));
  // not light ops (they keep the bytes-in-flight count) nor compute-bound ones (the model's two
  // vectors); functors without a hint only where heavy math on their data has room (16-bit and
  // fp32 on the H100: estimate_takes_heavy_launch), not on the H200, not double, not a cast
  CHECK_FALSE(heavy_runs_one_vector(h100, cost_hint::light, 4, 2));
  CHECK_FALSE(heavy_runs_one_vector(h100, cost_hint::compute_bound, 8, 2));
  CHECK(heavy_runs_one_vector(h100, cost_hint::estimate, 4, 2));
  CHECK(heavy_runs_one_vector(h100, cost_hint::estimate, 8, 2));
  CHECK(heavy_runs_one_vector(h100, cost_hint::estimate, 12, 3));
  CHECK_FALSE(heavy_runs_one_vector(h100, cost_hint::estimate, 16, 2));
  CHECK_FALSE(heavy_runs_one_vector(h100, cost_hint::estimate, 6, 2));
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::light, 4, 2));
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::compute_bound, 4, 2));
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::estimate, 4, 2));
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::estimate, 8, 2));
  // the declaration reaches the forward's ops (the bias forward's too), not the backward's
  using cuact::detail::has_long_16bit_math_of;
  static_assert(has_long_16bit_math_of<cuact::forward_op<cuact::softplus, __half>>);
  static_assert(has_long_16bit_math_of<cuact::forward_op<cuact::tanhshrink, __half>>);
  static_assert(
      has_long_16bit_math_of<cuact::detail::flat_bias_op<cuact::softplus, __half, __half>>);
  static_assert(!has_long_16bit_math_of<cuact::forward_op<cuact::sigmoid, __half>>);
  // a short bf16 forward (tanh's one tanh.approx) is light there, and only there; bias + tanh,
  // which adds a load and a column per vector, stays heavy
  using cuact::detail::forward_cost;
  static_assert(forward_cost<cuact::forward_op<cuact::tanh, __nv_bfloat16>> == cost_hint::light);
  static_assert(forward_cost<cuact::forward_op<cuact::tanh, __half>> == cost_hint::heavy);
  static_assert(forward_cost<cuact::forward_op<cuact::tanh, float>> == cost_hint::heavy);
  static_assert(forward_cost<cuact::forward_op<cuact::sigmoid, __nv_bfloat16>> == cost_hint::heavy);
  static_assert(forward_cost<cuact::forward_op<short_bf16_activation, __nv_bfloat16>> ==
                cost_hint::light);
  static_assert(forward_cost<cuact::forward_op<short_bf16_activation, __half>> == cost_hint::heavy);
  static_assert(forward_cost<cuact::forward_op<cuact::gelu, __nv_bfloat16>> ==
                cost_hint::compute_bound);
  static_assert(forward_cost<cuact::forward_op<cuact::gelu, float>> == cost_hint::compute_bound);
  static_assert(cuact::detail::declared_cost<
                    cuact::detail::flat_bias_op<cuact::tanh, __nv_bfloat16, __nv_bfloat16>> ==
                cost_hint::heavy);
  // and through the gated forward, the affine wrapper and compositions (either part)
  static_assert(has_long_16bit_math_of<cuact::gated_op<cuact::softplus, __half>>);
  static_assert(!has_long_16bit_math_of<cuact::gated_op<cuact::silu, __half>>);
  static_assert(has_long_16bit_math_of<cuact::affine_activation<cuact::softplus>>);
  static_assert(has_long_16bit_math_of<cuact::composition<cuact::linear, cuact::tanhshrink>>);
  static_assert(!has_long_16bit_math_of<cuact::composition<cuact::linear, cuact::sigmoid>>);
  static_assert(!has_long_16bit_math_of<cuact::gradient_op<cuact::softplus, __half>>);
  // and it takes the one-vector kernel whatever the registers
  CHECK(cuact::detail::launches_one_vector(kernel_facts{16, 32}, kernel_facts{16, 30}, true));
}

TEST_CASE("launch model: a heavy float forward declared short runs one vector where not roomy",
          "[cpu][grid][launch]") {
  using cuact::detail::cost_hint;
  using cuact::detail::heavy_runs_one_vector;
  const cuact::detail::device_facts h100 = model_h100, h200 = model_h200;
  // float data (8 bytes over two arrays; 12 over three) on the H200 too, where the budget is not
  // roomy for float math
  CHECK(heavy_runs_one_vector(h200, cost_hint::heavy, 8, 2, false, true));
  CHECK(heavy_runs_one_vector(h200, cost_hint::heavy, 12, 3, false, true));
  CHECK(heavy_runs_one_vector(h100, cost_hint::heavy, 8, 2, false, true));
  // not double, not a float-in, 16-bit-out cast, not 16-bit data whose math is declared long,
  // not a compute-bound or a light op
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::heavy, 16, 2, false, true));
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::heavy, 6, 2, false, true));
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::heavy, 4, 2, true, true));
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::compute_bound, 8, 2, false, true));
  CHECK_FALSE(heavy_runs_one_vector(h200, cost_hint::light, 8, 2, false, true));
  // the declaration reaches the forward's ops (the bias forward's and the affine wrapper's too),
  // not the backward's, the gated forward's (three arrays) or a composition's
  using cuact::detail::has_short_float_math_of;
  static_assert(has_short_float_math_of<cuact::forward_op<cuact::sigmoid, float>>);
  static_assert(has_short_float_math_of<cuact::forward_op<cuact::silu, float>>);
  static_assert(has_short_float_math_of<cuact::forward_op<cuact::tanh, float>>);
  static_assert(has_short_float_math_of<cuact::forward_op<cuact::tanhshrink, float>>);
  static_assert(has_short_float_math_of<cuact::forward_op<cuact::softsign, float>>);
  static_assert(!has_short_float_math_of<cuact::forward_op<cuact::mish, float>>);
  static_assert(!has_short_float_math_of<cuact::forward_op<cuact::softplus, float>>);
  static_assert(!has_short_float_math_of<cuact::forward_op<cuact::selu, float>>);
  static_assert(has_short_float_math_of<cuact::detail::flat_bias_op<cuact::silu, float, float>>);
  static_assert(has_short_float_math_of<cuact::affine_activation<cuact::sigmoid>>);
  static_assert(!has_short_float_math_of<cuact::composition<cuact::linear, cuact::sigmoid>>);
  static_assert(!has_short_float_math_of<cuact::gradient_op<cuact::sigmoid, float>>);
  static_assert(!has_short_float_math_of<cuact::gated_op<cuact::silu, float>>);
}

namespace {

/// The vectors of the backwards the two launch-model cases below ask the model about.
constexpr std::size_t backward_vectors = std::size_t(1) << 28;

/// The model's shape for a backward over backward_vectors (or `v`) vectors: two 16-byte input
/// vectors, three arrays, one vector per thread at most; `bytes` per element.
cuact::detail::launch_shape modelled_backward(const cuact::detail::device_facts& device,
                                              const cuact::detail::kernel_facts& kernel,
                                              cuact::detail::cost_hint hint, std::size_t bytes,
                                              std::size_t v = backward_vectors) {
  return cuact::detail::model_launch_shape(device, kernel, hint, v, 0, 32, bytes, 3, 1);
}

/// A kernel that fills the SM at 128 threads (16 blocks of 32 registers), and one that does not.
const cuact::detail::kernel_facts full_sm{16, 32}, partial_sm{12, 40};

}  // namespace

TEST_CASE("launch model: wide blocks for one-pass three-array ops that fill the SM",
          "[cpu][grid][launch]") {
  using cuact::detail::cost_hint;
  const cuact::detail::device_facts h100 = model_h100, h200 = model_h200;
  const unsigned wide = cuact::detail::wide_threads_per_block;
  const unsigned narrow = cuact::detail::threads_per_block;
  // light backwards on a device whose shared memory is not known, so that neither a throttle nor
  // moderation can cap them; the H200 moderates its own (next test case but one), the H100 caps
  // them (next test case)
  for (std::size_t bytes : {6, 12, 24}) {
    CAPTURE(bytes);
    const auto shape = modelled_backward(model_h100_no_shared, full_sm, cost_hint::light, bytes);
    CHECK(shape.threads_per_block == wide);
    CHECK(shape.blocks == cuact::detail::grid_blocks(backward_vectors, wide));
    CHECK(shape.dynamic_shared_bytes == 0);
    CHECK(modelled_backward(h100, full_sm, cost_hint::light, bytes).threads_per_block == narrow);
  }
  // heavy ones where the budget leaves their math room (the H100's 16-bit and fp32, not double)
  // and the residency is not capped: on an H100 it is (next test case), so wide where the shared
  // memory is not known
  CHECK(modelled_backward(model_h100_no_shared, full_sm, cost_hint::heavy, 6).threads_per_block ==
        wide);
  CHECK(modelled_backward(model_h100_no_shared, full_sm, cost_hint::heavy, 12).threads_per_block ==
        wide);
  CHECK(modelled_backward(model_h100_no_shared, full_sm, cost_hint::heavy, 24).threads_per_block ==
        narrow);
  CHECK(modelled_backward(h100, full_sm, cost_hint::heavy, 12).threads_per_block == narrow);
  CHECK(modelled_backward(h100, full_sm, cost_hint::heavy, 24).threads_per_block == narrow);
  CHECK(modelled_backward(h200, full_sm, cost_hint::heavy, 12).threads_per_block ==
        narrow);                                                             // tight
  CHECK(modelled_backward(h200, full_sm, cost_hint::heavy, 6).passes == 2);  // two passes: narrow
  CHECK(modelled_backward(h200, full_sm, cost_hint::heavy, 6).threads_per_block == narrow);
  // not where 128-thread blocks leave thread slots empty, nor with little work (the light
  // little-work block there), nor for forwards
  CHECK(modelled_backward(h100, partial_sm, cost_hint::light, 12).threads_per_block == narrow);
  CHECK(modelled_backward(h100, full_sm, cost_hint::light, 12, 1000).threads_per_block ==
        cuact::detail::little_work_light_threads_per_block);
  CHECK(modelled_backward(h100, full_sm, cost_hint::heavy, 12, 1000).threads_per_block == narrow);
  CHECK(cuact::detail::model_launch_shape(h100, full_sm, cost_hint::light, backward_vectors, 0, 16,
                                          8, 2, 2)
            .threads_per_block == narrow);
}

TEST_CASE("launch model: three-array ops capped where their loads oversubscribe memory",
          "[cpu][grid][launch]") {
  using cuact::detail::cost_hint;
  const cuact::detail::device_facts h100 = model_h100, h200 = model_h200;
  const unsigned narrow = cuact::detail::threads_per_block;
  // the H100: 64 KiB of loads in flight at 16 blocks (3.2 x its modelled 20 KiB) -> 10 blocks, 14
  // for a heavy op (its math needs the threads)
  CHECK(cuact::detail::throttled_resident_blocks(h100, full_sm, 32) == 10);
  CHECK(cuact::detail::throttled_resident_blocks(h100, full_sm, 32, true) == 14);
  CHECK(cuact::detail::throttled_resident_blocks(h200, full_sm, 32) == 0);  // 2.2 x its 29 KiB
  CHECK(cuact::detail::throttled_resident_blocks(h200, full_sm, 32, true) == 0);
  CHECK(cuact::detail::throttled_resident_blocks(h100, partial_sm, 32) == 0);  // 48 KiB: 2.4 x
  CHECK(cuact::detail::throttled_resident_blocks(h100, full_sm, 16) == 0);     // a forward's loads
  const std::size_t shared = cuact::detail::shared_bytes_for_resident_blocks(h100, 10);
  const std::size_t heavy_shared = cuact::detail::shared_bytes_for_resident_blocks(h100, 14);
  CHECK(shared > heavy_shared);
  CHECK(heavy_shared > 0);
  // light ones of every dtype; heavy ones where the budget leaves their math room: the H100's
  // 16-bit and fp32, not double
  const std::tuple<cost_hint, std::size_t, std::size_t> capped[] = {
      {cost_hint::light, 6, shared},
      {cost_hint::light, 12, shared},
      {cost_hint::light, 24, shared},
      {cost_hint::heavy, 6, heavy_shared},
      {cost_hint::heavy, 12, heavy_shared}};
  for (const auto& [hint, bytes, want_shared] : capped) {
    CAPTURE(static_cast<int>(hint), bytes);
    const auto shape = modelled_backward(h100, full_sm, hint, bytes);
    CHECK(shape.threads_per_block == narrow);
    CHECK(shape.blocks == cuact::detail::grid_blocks(backward_vectors, narrow));
    CHECK(shape.vectors_per_thread == 1);
    CHECK(shape.passes == 1);
    CHECK(shape.dynamic_shared_bytes == want_shared);
  }
  CHECK(modelled_backward(h100, full_sm, cost_hint::heavy, 24).dynamic_shared_bytes == 0);
  // an op without a hint takes a heavy one's launch where heavy math has room (16-bit and fp32
  // on the H100: one pass, capped as heavy), two passes elsewhere (fp64; the H200), not capped
  CHECK(modelled_backward(h100, full_sm, cost_hint::estimate, 12).passes == 1);
  CHECK(modelled_backward(h100, full_sm, cost_hint::estimate, 12).dynamic_shared_bytes ==
        heavy_shared);
  CHECK(modelled_backward(h100, full_sm, cost_hint::estimate, 6).dynamic_shared_bytes ==
        heavy_shared);
  CHECK(modelled_backward(h100, full_sm, cost_hint::estimate, 24).passes == 2);
  CHECK(modelled_backward(h100, full_sm, cost_hint::estimate, 24).dynamic_shared_bytes == 0);
  CHECK(modelled_backward(h200, full_sm, cost_hint::estimate, 12).passes == 2);
  CHECK(modelled_backward(h200, full_sm, cost_hint::estimate, 12).dynamic_shared_bytes == 0);
  CHECK(modelled_backward(h200, full_sm, cost_hint::heavy, 12).dynamic_shared_bytes == 0);
  // not with little work, or on a device whose shared memory is not known
  CHECK(modelled_backward(h100, full_sm, cost_hint::light, 12, 1000).dynamic_shared_bytes == 0);
  CHECK(
      modelled_backward(model_h100_no_shared, full_sm, cost_hint::light, 12).dynamic_shared_bytes ==
      0);
  CHECK(modelled_backward(model_h100_no_shared, full_sm, cost_hint::light, 12).threads_per_block ==
        cuact::detail::wide_threads_per_block);
  // the shared memory leaves room for exactly the capped blocks (the runtime's reservation and
  // 128-byte units included), and none is asked above the default 48 KiB per block
  for (unsigned blocks = 1; blocks <= 32; ++blocks) {
    CAPTURE(blocks);
    const std::size_t bytes = cuact::detail::shared_bytes_for_resident_blocks(h100, blocks);
    if (bytes == 0) {
      CHECK(blocks <= 4);  // a quarter of 228 KiB is above 48 KiB
      continue;
    }
    CHECK(bytes % 128 == 0);
    CHECK(bytes <= cuact::detail::default_dynamic_shared_limit);
    const std::size_t per_block = bytes + std::size_t(h100.reserved_shared_bytes_per_block);
    CHECK(std::size_t(h100.shared_bytes_per_sm) / per_block == blocks);
  }
  CHECK(cuact::detail::shared_bytes_for_resident_blocks(h100, 0) == 0);
}

TEST_CASE("launch model: light three-array ops moderated where their loads do not oversubscribe",
          "[cpu][grid][launch]") {
  using cuact::detail::cost_hint;
  const cuact::detail::device_facts h100 = model_h100, h200 = model_h200;
  const unsigned moderated = cuact::detail::moderated_threads_per_block;
  // the H200: 1.5 x its 29 KiB in 384-thread blocks of two 16-byte vectors -> 4 blocks (48 KiB)
  CHECK(cuact::detail::moderated_resident_blocks(h200, 32) == 4);
  const std::size_t shared = cuact::detail::shared_bytes_for_resident_blocks(h200, 4);
  REQUIRE(shared > 0);
  CHECK(std::size_t(h200.shared_bytes_per_sm) /
            (shared + std::size_t(h200.reserved_shared_bytes_per_block)) ==
        4);
  // light backwards of 16-bit, float and double data there: one vector, one pass, capped to 4
  // blocks (a vector of two doubles is 16 bytes too)
  for (std::size_t bytes : {6, 12, 24}) {
    CAPTURE(bytes);
    const auto shape = modelled_backward(h200, full_sm, cost_hint::light, bytes);
    CHECK(shape.threads_per_block == moderated);
    CHECK(shape.blocks == cuact::detail::grid_blocks(backward_vectors, moderated));
    CHECK(shape.vectors_per_thread == 1);
    CHECK(shape.passes == 1);
    CHECK(shape.dynamic_shared_bytes == shared);
    CHECK_FALSE(shape.heavy);
  }
  // not heavy ops, estimated ones (two passes there), kernels that leave thread slots empty,
  // little work, forwards, casts (float in, 16-bit out: not measured), nor where the H100
  // throttles instead
  CHECK(modelled_backward(h200, full_sm, cost_hint::heavy, 12).threads_per_block != moderated);
  CHECK(modelled_backward(h200, full_sm, cost_hint::heavy, 24).threads_per_block != moderated);
  CHECK(modelled_backward(h200, full_sm, cost_hint::light, 10).threads_per_block != moderated);
  CHECK(modelled_backward(h200, full_sm, cost_hint::estimate, 12).threads_per_block != moderated);
  CHECK(modelled_backward(h200, partial_sm, cost_hint::light, 12).threads_per_block != moderated);
  CHECK(modelled_backward(h200, full_sm, cost_hint::light, 12, 1000).threads_per_block !=
        moderated);
  CHECK(cuact::detail::model_launch_shape(h200, full_sm, cost_hint::light, backward_vectors, 0, 16,
                                          8, 2, 2)
            .threads_per_block != moderated);
  for (std::size_t bytes : {6, 12}) {
    CHECK(modelled_backward(h100, full_sm, cost_hint::light, bytes).threads_per_block ==
          cuact::detail::threads_per_block);
  }
  // no cap where the bytes asked fill the SM's threads anyway (a device with far more bandwidth
  // per SM), or where one block's loads exceed them
  const cuact::detail::device_facts fast{132, 2048, 12e12, 1.98e9, 233472, 1024};
  CHECK(cuact::detail::moderated_resident_blocks(fast, 32) == 0);
  CHECK(modelled_backward(fast, full_sm, cost_hint::light, 12).threads_per_block ==
        cuact::detail::wide_threads_per_block);
  CHECK(cuact::detail::moderated_resident_blocks(h200, 1) == 0);
}

namespace {

/// Sizes that straddle the edges of bulk tiles of V-element vectors: tiles of 37 and of
/// bulk_tile_threads_per_block vectors, one tile, several, and a 15-element head past them.
std::vector<std::size_t> bulk_sizes(std::size_t v) {
  const std::size_t tile = v * cuact::detail::bulk_tile_threads_per_block;
  std::vector<std::size_t> sizes{0,          1,        v - 1,         v,           v + 1,
                                 37 * v - 1, 37 * v,   38 * v + 1,    tile - 1,    tile,
                                 tile + 1,   tile + v, 3 * tile + 15, 7 * tile + 3};
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// The grids a bulk-tile launch of `p` must survive, each covering the tiles (the kernel takes one
/// tile per block): the launch model's (a block per tile of bulk_tile_threads_per_block vectors),
/// tiles of 37 and 32 vectors, one vector per block, and a grid far larger than the tiles.
template <class Params>
std::vector<grid_shape> bulk_grids_for(const Params& p) {
  const auto model = cuact::detail::bulk_tile_launch_shape({}, p.vectors, 0);
  const std::size_t block = model.threads_per_block;
  const auto covering = [&](std::size_t threads) {
    return grid_shape{std::max<std::size_t>(1, (p.vectors + threads - 1) / threads), threads};
  };
  return {{std::max<std::size_t>(1, model.blocks), block},
          covering(37),
          covering(32),
          covering(1),
          {2 * model.blocks + 1, block}};
}

/// Op (a pass of relu) over T in bulk tiles: every size of bulk_sizes, offsets 0..15, in place,
/// and one pointer at another offset (scalars only: no tile).
template <class T, cuact_test::pass P>
void bulk_tile_matrix(tally& total) {
  constexpr int inputs = pass_inputs(P);
  constexpr int V = static_cast<int>(16 / sizeof(T));
  const auto op = pass_op<P, T>(cuact::relu{});
  std::uint64_t seed = 5000 + 10 * static_cast<int>(P);
  const auto run = [&](const sim_layout& layout) {
    const std::string what = type_name<T>() + " relu " + pass_name(P) + " bulk tiles " +
                             describe_layout(layout, inputs, 1);
    sim_result r;
    if constexpr (inputs == 1) {
      elementwise_sim<V, decltype(op), type_list<T>, type_list<T>> sim(op, layout);
      static_assert(cuact::detail::bulk_tiles_fit_v<decltype(sim.params())>);
      r = sim.run(bulk_grids_for(sim.params()));
    } else {
      elementwise_sim<V, decltype(op), type_list<T>, type_list<T, T>> sim(op, layout);
      r = sim.run(bulk_grids_for(sim.params()));
    }
    report_case(r, what, total, layout.n);
  };
  for (std::size_t n : bulk_sizes(V)) {
    for (std::size_t o = 0; o < 16; ++o) {
      sim_layout l;
      l.n = n;
      l.seed = ++seed;
      l.bulk_tiles = true;
      std::fill(std::begin(l.in_offset), std::end(l.in_offset), o);
      std::fill(std::begin(l.out_offset), std::end(l.out_offset), o);
      run(l);
      l.in_place = inputs - 1;
      run(l);
      if (o % 5 == 0) {
        l.in_place = -1;
        l.out_offset[0] = (o + 1) % 16;
        run(l);
      }
    }
  }
}

}  // namespace

TEST_CASE("bulk tiles: every offset x size x grid, in and out of place", "[cpu][grid][bulk]") {
  // The model takes them for one-input forwards (16-bit on the H100); the kernel serves any params
  // whose inputs' vectors are 16 bytes, so backwards (two inputs) are simulated too.
  tally total;
  bulk_tile_matrix<__nv_bfloat16, pass::forward>(total);
  bulk_tile_matrix<__half, pass::forward>(total);
  bulk_tile_matrix<float, pass::forward>(total);
  bulk_tile_matrix<double, pass::forward>(total);
  bulk_tile_matrix<__nv_bfloat16, pass::backward>(total);
  bulk_tile_matrix<float, pass::backward>(total);
  total.print("bulk tiles");
  CHECK(total.failed_cases == 0);
  CHECK(total.cases > 0);
  // what does not fit: vector state by index (the ReLU mask backward, the flat bias pass), the
  // held-vector table lookup, vectors narrower than 16 bytes
  using cuact::detail::bulk_tiles_fit_v;
  using bf16_params = decltype(cuact::make_elementwise_params<8>(
      cuact::forward_op<cuact::relu, __nv_bfloat16>{}, static_cast<__nv_bfloat16*>(nullptr), 0,
      static_cast<const __nv_bfloat16*>(nullptr)));
  static_assert(bulk_tiles_fit_v<bf16_params>);
  // the launches that instantiate bulk_tile_kernel at all: one input and one output of 16-bit,
  // float or double data (the model then decides: takes_bulk_tiles), not a cast nor two inputs
  using cuact::detail::bulk_tiles_considered_v;
  static_assert(bulk_tiles_considered_v<bf16_params>);
  static_assert(bulk_tiles_considered_v<decltype(cuact::make_elementwise_params<2>(
                    cuact::forward_op<cuact::relu, double>{}, static_cast<double*>(nullptr), 0,
                    static_cast<const double*>(nullptr)))>);
  static_assert(
      !bulk_tiles_considered_v<decltype(cuact::make_elementwise_params<8>(
          cuact::gradient_op<cuact::relu, __nv_bfloat16>{}, static_cast<__nv_bfloat16*>(nullptr), 0,
          static_cast<const __nv_bfloat16*>(nullptr),
          static_cast<const __nv_bfloat16*>(nullptr)))>);
  static_assert(
      !bulk_tiles_fit_v<decltype(cuact::make_elementwise_params<4>(
          cuact::forward_op<cuact::relu, __nv_bfloat16>{}, static_cast<__nv_bfloat16*>(nullptr), 0,
          static_cast<const __nv_bfloat16*>(nullptr)))>);
  static_assert(!bulk_tiles_fit_v<decltype(cuact::detail::tabulated_params(
                    std::declval<bf16_params>(), nullptr))>);
  static_assert(!bulk_tiles_fit_v<decltype(cuact::make_elementwise_params<4>(
                    cuact::detail::flat_bias_op<cuact::relu, float, float>{},
                    static_cast<float*>(nullptr), 0, static_cast<const float*>(nullptr)))>);
  // the instantiation without scalar steps runs params with no head and no tail, only them
  const auto params_of = [](std::size_t n, std::size_t offset) {
    auto* data = reinterpret_cast<__nv_bfloat16*>(std::uintptr_t(256) + 2 * offset);
    return cuact::make_elementwise_params<8>(cuact::forward_op<cuact::relu, __nv_bfloat16>{}, data,
                                             n, static_cast<const __nv_bfloat16*>(data));
  };
  using cuact::detail::bulk_tile_kernel;
  using cuact::detail::bulk_tile_kernel_for;
  CHECK(bulk_tile_kernel_for(params_of(4096, 0)) == bulk_tile_kernel<bf16_params, false>);
  CHECK(bulk_tile_kernel_for(params_of(4099, 0)) == bulk_tile_kernel<bf16_params, true>);
  CHECK(bulk_tile_kernel_for(params_of(4096, 3)) == bulk_tile_kernel<bf16_params, true>);
}

TEST_CASE("launch model: bulk tiles for the H100's forwards of declared cost",
          "[cpu][grid][launch][bulk]") {
  using cuact::detail::cost_hint;
  const cuact::detail::device_facts h100 = model_h100, h200 = model_h200;
  const cuact::detail::kernel_facts sm90{16, 32, 90}, sm80{16, 32, 80};
  constexpr std::size_t vectors = backward_vectors;
  // what the model gives a forward (two arrays) of `bytes` per element on each device: a heavy one
  // in its one-vector instantiation (heavy_runs_one_vector, or more resident blocks)
  const auto forward = [&](const cuact::detail::device_facts& device, cost_hint hint,
                           std::size_t bytes, std::size_t v = backward_vectors) {
    const unsigned max_vectors = hint == cost_hint::light ? 2 : 1;
    return cuact::detail::model_launch_shape(device, {16, 32}, hint, v, 0, 16, bytes, 2,
                                             max_vectors);
  };
  // whether the model's forward launch with `hint` runs as bulk tiles
  const auto takes = [&](const cuact::detail::device_facts& device,
                         const cuact::detail::kernel_facts& bulk, cost_hint hint, std::size_t bytes,
                         bool gains = true, std::size_t v = backward_vectors) {
    return cuact::detail::takes_bulk_tiles(device, bulk, hint, gains,
                                           forward(device, hint, bytes, v), v, bytes, 2);
  };
  for (std::size_t bytes : {4, 8, 16}) {  // 16-bit, fp32, fp64
    CAPTURE(bytes);
    for (const cost_hint hint : {cost_hint::light, cost_hint::heavy}) {
      CAPTURE(static_cast<int>(hint));
      REQUIRE(forward(h100, hint, bytes).vectors_per_thread == 1);
      REQUIRE(forward(h100, hint, bytes).passes == 1);
      CHECK(takes(h100, sm90, hint, bytes));
      CHECK_FALSE(takes(h100, sm80, hint, bytes));  // no bulk copy before sm_90
      // nor on the H200 (the budget is tight), nor little work
      CHECK_FALSE(takes(h200, sm90, hint, bytes));
      CHECK_FALSE(takes(h100, sm90, hint, bytes, true, 1000));
    }
    // a light op whatever it declares; not a heavy one that does not declare the gain, nor
    // compute-bound ops, nor functors without a hint (taken as heavy)
    CHECK(takes(h100, sm90, cost_hint::light, bytes, false));
    CHECK_FALSE(takes(h100, sm90, cost_hint::heavy, bytes, false));
    CHECK_FALSE(takes(h100, sm90, cost_hint::compute_bound, bytes));
    CHECK_FALSE(takes(h100, sm90, cost_hint::estimate, bytes));
  }
  // the hint as forward_op carries it: declared by the activations that gain, not carried by the
  // adaptors, absent from plain functors
  using cuact::detail::gains_from_bulk_tiles_of;
  static_assert(gains_from_bulk_tiles_of<cuact::forward_op<cuact::silu, float>>);
  static_assert(gains_from_bulk_tiles_of<cuact::forward_op<cuact::selu, __nv_bfloat16>>);
  static_assert(!gains_from_bulk_tiles_of<cuact::forward_op<cuact::softplus, float>>);
  static_assert(!gains_from_bulk_tiles_of<cuact::forward_op<cuact::gelu, float>>);
  static_assert(!gains_from_bulk_tiles_of<
                cuact::forward_op<decltype(cuact::affine(cuact::silu{}, 1.702)), float>>);
  // nor more tiles than a grid holds (the kernel takes one tile per block)
  const std::size_t too_many =
      (std::size_t(INT_MAX) + 1) * cuact::detail::bulk_tile_threads_per_block;
  CHECK_FALSE(cuact::detail::takes_bulk_tiles(h100, sm90, cost_hint::light, true,
                                              forward(h100, cost_hint::light, 4, too_many),
                                              too_many, 4, 2));
  // and as many as a grid holds do (grid_holds: INT_MAX blocks), the grid exact
  const std::size_t most = std::size_t(INT_MAX) * cuact::detail::bulk_tile_threads_per_block;
  CHECK(cuact::detail::takes_bulk_tiles(h100, sm90, cost_hint::light, true,
                                        forward(h100, cost_hint::light, 4, most), most, 4, 2));
  CHECK(cuact::detail::grid_holds(most, cuact::detail::bulk_tile_threads_per_block));
  CHECK_FALSE(cuact::detail::grid_holds(most + 1, cuact::detail::bulk_tile_threads_per_block));
  CHECK(cuact::detail::grid_blocks(most, cuact::detail::bulk_tile_threads_per_block) ==
        static_cast<unsigned>(INT_MAX));
  CHECK(cuact::detail::grid_blocks(most + 1, cuact::detail::bulk_tile_threads_per_block) ==
        static_cast<unsigned>(INT_MAX));
  // nor a float-to-16-bit cast, or a backward (three arrays)
  CHECK_FALSE(cuact::detail::takes_bulk_tiles(h100, sm90, cost_hint::light, true,
                                              forward(h100, cost_hint::light, 6), vectors, 6, 2));
  CHECK_FALSE(cuact::detail::takes_bulk_tiles(h100, sm90, cost_hint::light, true,
                                              forward(h100, cost_hint::light, 4), vectors, 6, 3));
  // the bulk shape: a block of 256 threads per tile of 256 vectors, the model's heavy kept, the
  // staging shared
  const auto heavy = forward(h100, cost_hint::heavy, 4);
  const auto bulk = cuact::detail::bulk_tile_launch_shape(heavy, vectors + 1, 4096);
  CHECK(bulk.threads_per_block == cuact::detail::bulk_tile_threads_per_block);
  CHECK(bulk.blocks == vectors / cuact::detail::bulk_tile_threads_per_block + 1);
  CHECK(bulk.vectors_per_thread == 1);
  CHECK(bulk.passes == 1);
  CHECK(bulk.heavy);
  CHECK(bulk.dynamic_shared_bytes == 4096);
}

TEST_CASE("launch model: a heavy op makes two passes where the budget per array is short",
          "[cpu][grid][launch]") {
  using cuact::detail::cost_hint;
  const cuact::detail::device_facts h100 = model_h100, h200 = model_h200;
  const cuact::detail::kernel_facts gelu_fp32{12, 40};
  const std::size_t vectors = std::size_t(1) << 28;  // 2^30 fp32 elements
  // A forward: one 16-byte input vector, two arrays, at most two vectors per thread; `bytes` per
  // element (8: fp32, 4: 16-bit)
  auto shape = [&](const cuact::detail::device_facts& d, cost_hint hint, std::size_t bytes) {
    return cuact::detail::model_launch_shape(d, gelu_fp32, hint, vectors, 0, 16, bytes, 2, 2);
  };
  // A backward: two 16-byte input vectors, three arrays, one vector per thread
  auto backward = [&](const cuact::detail::device_facts& d, cost_hint hint, std::size_t bytes) {
    return cuact::detail::model_launch_shape(d, gelu_fp32, hint, vectors, 0, 32, bytes, 3, 1);
  };
  // H200 fp32 (about 56 modelled): two passes for the compute-bound forward (or the passes it
  // declares: gelu's four), one for heavy ops
  CHECK(shape(h200, cost_hint::compute_bound, 8).passes == 2);
  CHECK(cuact::detail::model_launch_shape(h200, gelu_fp32, cost_hint::compute_bound, vectors, 0, 16,
                                          8, 2, 2, 4)
            .passes == 4);
  CHECK(cuact::detail::model_launch_shape(h100, gelu_fp32, cost_hint::compute_bound, vectors, 0, 16,
                                          8, 2, 2, 4)
            .passes == 1);
  CHECK(shape(h200, cost_hint::heavy, 8).passes == 1);
  // H100 fp32 (about 80): one pass, as any heavy op, with two vectors in flight
  CHECK(shape(h100, cost_hint::compute_bound, 8).passes == 1);
  CHECK(shape(h100, cost_hint::compute_bound, 8).vectors_per_thread == 2);
  // 16-bit forwards (4 bytes per element): instruction-bound on the H200 (about 28), not on the
  // H100 (about 40: one pass of two vectors); a compute-bound hint describes the float forward, so
  // 16-bit data take the heavy rule (and not its declared passes)
  CHECK(shape(h200, cost_hint::heavy, 4).passes == 2);
  CHECK(shape(h200, cost_hint::heavy, 4).vectors_per_thread == 2);
  CHECK(shape(h100, cost_hint::heavy, 4).passes == 1);
  CHECK(shape(h100, cost_hint::heavy, 4).vectors_per_thread == 2);
  CHECK(shape(h100, cost_hint::compute_bound, 4).passes == 1);
  CHECK(shape(h200, cost_hint::compute_bound, 4).passes == 2);
  CHECK(cuact::detail::model_launch_shape(h200, gelu_fp32, cost_hint::compute_bound, vectors, 0, 16,
                                          4, 2, 2, 4)
            .passes == 2);
  // 16-bit backwards (6 bytes, three arrays): two passes on the H200 (about 42), one on the H100
  // (about 60); fp32 backwards (12 bytes) one on both
  CHECK(backward(h200, cost_hint::heavy, 6).passes == 2);
  CHECK(backward(h100, cost_hint::heavy, 6).passes == 1);
  CHECK(backward(h200, cost_hint::heavy, 12).passes == 1);
  // fp32 -> fp8 quantize (5 bytes; its amax counted as a third array, fused_dispatch.cuh): one
  // pass on the H100 (about 50), two on the H200 (about 35), as before the budget was per array
  auto quantize = [&](const cuact::detail::device_facts& d) {
    return cuact::detail::model_launch_shape(d, gelu_fp32, cost_hint::heavy, vectors, 0, 16, 5, 3,
                                             2);
  };
  CHECK(quantize(h100).passes == 1);
  CHECK(quantize(h200).passes == 2);
  // declared passes keep at least one wave of resident threads (gelu_fp32: 12 x 128 x 132 =
  // 202752 threads): eight declared, at 5 waves of one-vector work five passes, below 4 waves (the
  // little-work edge) one, at 100 waves all eight
  const std::size_t wave = 12 * 128 * 132;
  auto gelu8 = [&](std::size_t v) {
    return cuact::detail::model_launch_shape(h200, gelu_fp32, cost_hint::compute_bound, v, 0, 16, 8,
                                             2, 1, 8);
  };
  CHECK(gelu8(100 * wave).passes == 8);
  CHECK(gelu8(5 * wave).passes == 5);
  CHECK(gelu8(5 * wave).blocks * std::size_t(128) >= wave);
  CHECK(gelu8(4 * wave - 1).passes == 1);
  for (std::size_t v = 4 * wave; v < 12 * wave; v += wave / 3) {
    CAPTURE(v);
    CHECK(gelu8(v).blocks * std::size_t(128) >= wave);
  }
  // Without a hint: two passes, except where heavy math on the data has room (16-bit and fp32 on
  // the H100: one, as a declared-heavy op's); forwards of `bytes` per element, then backwards
  const std::tuple<const cuact::detail::device_facts*, std::size_t, unsigned> estimated[] = {
      {&h100, 4, 1}, {&h100, 8, 1}, {&h100, 16, 2}, {&h200, 4, 2}, {&h200, 8, 2}};
  for (const auto& [device, bytes, passes] : estimated) {
    CAPTURE(device->bytes_per_second, bytes);
    CHECK(shape(*device, cost_hint::estimate, bytes).passes == passes);
  }
  CHECK(backward(h100, cost_hint::estimate, 12).passes == 1);
  CHECK(backward(h200, cost_hint::estimate, 12).passes == 2);
  // A walk over rows (bias + activation) keeps its cap of rows in flight (min_vectors_per_thread),
  // with the passes of its hint on top; with little work, one row per thread over every SM
  auto walk = [&](const cuact::detail::device_facts& d, cost_hint hint, std::size_t bytes,
                  std::size_t rows_vectors) {
    return cuact::detail::model_launch_shape(d, gelu_fp32, hint, rows_vectors, 0, 16, bytes, 2, 4,
                                             cuact::detail::default_compute_bound_passes, 4);
  };
  CHECK(walk(h200, cost_hint::heavy, 4, vectors).vectors_per_thread == 4);
  CHECK(walk(h200, cost_hint::heavy, 4, vectors).passes == 2);
  CHECK(walk(h100, cost_hint::light, 8, vectors).vectors_per_thread == 4);
  CHECK(walk(h100, cost_hint::light, 8, vectors).passes == 1);
  CHECK(walk(h200, cost_hint::light, 4, 1000).vectors_per_thread == 1);
}

TEST_CASE("launch model: every shape it chooses covers the work", "[cpu][grid][launch]") {
  using cuact::detail::cost_hint;
  const cuact::detail::device_facts devices[] = {model_h100,  // H100 SXM
                                                 {132, 2048, 4.9e12, 1.98e9, 233472, 1024},  // H200
                                                 {108, 2048, 2.0e12, 1.41e9},  // A100-like
                                                 {1, 1024, 1e11, 1e9}};        // tiny
  const cuact::detail::kernel_facts kernels[] = {{16, 32}, {16, 40}, {12, 40}, {8, 56},
                                                 {4, 96},  {2, 128}, {1, 255}};
  const cost_hint hints[] = {cost_hint::estimate, cost_hint::light, cost_hint::heavy,
                             cost_hint::compute_bound};
  struct load {
    std::size_t vector_bytes, element_bytes;
    unsigned arrays, max_k;
  };
  // fp32 forward, fp32 backward, bf16 forward, fp64 backward, three fp32 inputs, fp32 -> bf16
  const load loads[] = {{16, 8, 2, 2},  {32, 12, 3, 1}, {16, 4, 2, 2}, {32, 24, 3, 1},
                        {48, 16, 4, 1}, {16, 6, 2, 4},  {8, 4, 2, 8}};
  const std::size_t vectors[] = {0,
                                 1,
                                 1000,
                                 270335,
                                 270336,
                                 540672,
                                 1081344,
                                 1u << 22,
                                 std::size_t(1) << 28,
                                 (std::size_t(1) << 31) / 8 + 7,
                                 std::size_t(1) << 40};
  std::set<std::tuple<unsigned, unsigned, unsigned>> shapes;  // (vectors_per_thread, passes, block)
  std::size_t checked = 0, capped = 0, moderated = 0;
  for (const auto& device : devices) {
    for (const auto& kernel : kernels) {
      for (cost_hint hint : hints) {
        for (const load& l : loads) {
          for (std::size_t v : vectors) {
            for (std::size_t scalars : {std::size_t(0), std::size_t(7)}) {
              const auto shape = cuact::detail::model_launch_shape(device, kernel, hint, v, scalars,
                                                                   l.vector_bytes, l.element_bytes,
                                                                   l.arrays, l.max_k);
              CAPTURE(device.sm_count, device.bytes_per_second, kernel.resident_blocks_per_sm,
                      kernel.registers_per_thread, static_cast<int>(hint), l.vector_bytes, l.max_k,
                      v, scalars);
              REQUIRE(shape.vectors_per_thread >= 1);
              REQUIRE(shape.vectors_per_thread <= l.max_k);
              REQUIRE(shape.passes >= 1);
              const bool fills_sm =
                  kernel.resident_blocks_per_sm * int(cuact::detail::threads_per_block) >=
                  device.max_threads_per_sm;
              if (shape.dynamic_shared_bytes != 0) {
                // capped residency: a one-pass, one-vector op over three arrays, SMs full, a
                // heavy one only where the budget leaves its math room
                REQUIRE((hint == cost_hint::light || cuact::detail::budget_is_roomy_for_float_math(
                                                         device, l.element_bytes, 3)));
                REQUIRE(l.arrays == 3);
                REQUIRE(shape.vectors_per_thread == 1);
                REQUIRE(shape.passes == 1);
                REQUIRE(fills_sm);
                // 128-thread blocks where throttled; moderated ones for light ops elsewhere
                REQUIRE((shape.threads_per_block == cuact::detail::threads_per_block ||
                         (shape.threads_per_block == cuact::detail::moderated_threads_per_block &&
                          hint == cost_hint::light)));
                REQUIRE(shape.dynamic_shared_bytes <= cuact::detail::default_dynamic_shared_limit);
                ++capped;
              }
              if (shape.threads_per_block == cuact::detail::wide_threads_per_block ||
                  shape.threads_per_block == cuact::detail::moderated_threads_per_block) {
                // wide or moderated blocks: one pass of one vector over three arrays, SMs full
                REQUIRE(l.arrays == 3);
                REQUIRE(shape.vectors_per_thread == 1);
                REQUIRE(shape.passes == 1);
                REQUIRE(fills_sm);
              } else if (shape.threads_per_block ==
                         cuact::detail::little_work_light_threads_per_block) {
                // larger blocks only for a declared-light op's little work: one vector, one pass
                REQUIRE(hint == cost_hint::light);
                REQUIRE(shape.vectors_per_thread == 1);
                REQUIRE(shape.passes == 1);
              } else {
                REQUIRE(shape.threads_per_block == cuact::detail::threads_per_block);
              }
              if (shape.threads_per_block == cuact::detail::moderated_threads_per_block) {
                REQUIRE(shape.dynamic_shared_bytes != 0);  // moderated blocks are always capped
                ++moderated;
              }
              REQUIRE(shape.blocks <= static_cast<unsigned>(INT_MAX));
              const std::size_t per_thread = std::size_t(shape.vectors_per_thread) * shape.passes;
              const std::size_t work = std::max((v + per_thread - 1) / per_thread, scalars);
              const std::size_t threads = std::size_t(shape.blocks) * shape.threads_per_block;
              if (shape.blocks < static_cast<unsigned>(INT_MAX)) {
                REQUIRE(threads >= work);                           // the passes cover the work
                REQUIRE(threads < work + shape.threads_per_block);  // with no spare block
              }
              const double wave = double(kernel.resident_blocks_per_sm) *
                                  cuact::detail::threads_per_block * device.sm_count;
              if (cuact::detail::is_little_work(v, wave)) {  // one vector per thread in one pass
                REQUIRE(shape.vectors_per_thread == 1);
                REQUIRE(shape.passes == 1);
              }
              if ((hint == cost_hint::heavy || hint == cost_hint::compute_bound) &&
                  double(v) >= 8 * wave && l.max_k >= 2) {
                REQUIRE(shape.vectors_per_thread * shape.passes >= 2);  // loads hide the math
              }
              if (hint == cost_hint::light) REQUIRE_FALSE(shape.heavy);
              if (hint == cost_hint::heavy || hint == cost_hint::compute_bound) {
                REQUIRE(shape.heavy);
              }
              shapes.insert({shape.vectors_per_thread, shape.passes, shape.threads_per_block});
              ++checked;
            }
          }
        }
      }
    }
  }
  // Every shape it chose, scaled to small n: the grid the model's formula gives for that n, k and
  // number of passes (grids_for), simulated over relu forward on 16-bit data at width 2 (k <= 8).
  tally total;
  for (const auto& [k, passes, block] : shapes) {
    INFO("vectors_per_thread " << k << ", passes " << passes << ", " << block
                               << " threads per block");
    for (std::size_t n : {std::size_t(1000), std::size_t(k) * passes * 2 * 128 * 3 + 5}) {
      sim_layout l;
      l.n = n;
      l.vectors_per_thread = k;
      l.seed = k;
      l.in_offset[0] = l.out_offset[0] = 1;
      elementwise_sim<2, cuact::forward_op<cuact::relu, __half>, type_list<__half>,
                      type_list<__half>>
          sim({}, l);
      report_case(sim.run(grids_for(sim.params(), false, passes, block)),
                  "fp16 " + describe_layout(l, 1, 1), total, n);
    }
  }
  std::printf("launch model: %zu shapes checked, %zu distinct (k, passes, block)\n", checked,
              shapes.size());
  CHECK(total.failed_cases == 0);
  CHECK(shapes.size() >= 2);
  CHECK(shapes.count({1u, 1u, cuact::detail::wide_threads_per_block}) == 1);
  CHECK(shapes.count({1u, 1u, cuact::detail::moderated_threads_per_block}) == 1);
  CHECK(capped > 0);  // capped launches' blocks are among the shapes simulated above
  CHECK(moderated > 0);
}

TEST_CASE("validation: overlap rules and byte sizes", "[cpu][validate]") {
  using cuact::detail::array_arg;
  using cuact::detail::array_role;
  using cuact::detail::may_overlap;
  using cuact::detail::ranges_overlap;
  alignas(64) static char memory[4096];
  const auto arg = [](std::size_t at, std::size_t bytes, array_role role) {
    return array_arg{memory + at, bytes, 4, role};
  };
  const auto out = [&](std::size_t at, std::size_t bytes = 400) {
    return arg(at, bytes, array_role::output);
  };
  const auto in = [&](std::size_t at, std::size_t bytes = 400) {
    return arg(at, bytes, array_role::input);
  };
  const auto in_place = [&](std::size_t at, std::size_t bytes = 400) {
    return arg(at, bytes, array_role::input_or_in_place);
  };
  const auto mask = [&](std::size_t at, std::size_t bytes = 52) {
    return arg(at, bytes, array_role::exclusive_input);
  };
  // sharing a byte
  CHECK(ranges_overlap(out(0), in(399)));
  CHECK_FALSE(ranges_overlap(out(0), in(400)));  // adjacent
  CHECK(ranges_overlap(in(399), out(0)));
  CHECK_FALSE(ranges_overlap(in(400), out(0)));
  CHECK(ranges_overlap(out(100, 4), in(0)));  // inside
  // who may share bytes
  CHECK(may_overlap(in(0), in(4)));  // inputs with inputs
  CHECK(may_overlap(in_place(0), in(4)));
  CHECK(may_overlap(out(0), in_place(0)));  // in place: exactly the output
  CHECK(may_overlap(in_place(0), out(0)));
  CHECK_FALSE(may_overlap(out(0), in_place(4)));       // shifted
  CHECK_FALSE(may_overlap(out(0), in_place(0, 200)));  // same pointer, another byte size
  CHECK_FALSE(may_overlap(out(0), in(0)));   // an input that may not be in place (backward's x)
  CHECK_FALSE(may_overlap(out(0), out(0)));  // two outputs
  CHECK_FALSE(may_overlap(mask(0), in(0)));  // the mask shares nothing
  CHECK_FALSE(may_overlap(mask(0), in_place(0)));
  CHECK_FALSE(may_overlap(mask(0), out(0)));
  // validate_arrays rejects before it asks the runtime anything
  int device = -1;
  const array_arg overlapping[] = {out(0), in_place(4)};
  CHECK(cuact::detail::validate_arrays(overlapping, 2, device) == cudaErrorInvalidValue);
  const array_arg two_outputs[] = {out(0), out(200), in(1000)};
  CHECK(cuact::detail::validate_arrays(two_outputs, 3, device) == cudaErrorInvalidValue);
  const array_arg mask_in_input[] = {out(0), in(1000), mask(1200)};
  CHECK(cuact::detail::validate_arrays(mask_in_input, 3, device) == cudaErrorInvalidValue);
  const array_arg misaligned[] = {out(2), in(1000)};
  CHECK(cuact::detail::validate_arrays(misaligned, 2, device) == cudaErrorInvalidValue);
  const array_arg null[] = {out(0), {nullptr, 400, 4, array_role::input}};
  CHECK(cuact::detail::validate_arrays(null, 2, device) == cudaErrorInvalidValue);
  const array_arg overflowing[] = {out(0, 0), in(1000)};  // byte size 0: it overflowed
  CHECK(cuact::detail::validate_arrays(overflowing, 2, device) == cudaErrorInvalidValue);
  CHECK(device == -1);  // never reached the runtime
  // byte sizes
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  CHECK(cuact::detail::checked_bytes(max / 4, 4) == max / 4 * 4);
  CHECK(cuact::detail::checked_bytes(max / 4 + 1, 4) == 0);
  CHECK(cuact::detail::checked_bytes(max, 1) == max);
  CHECK(cuact::detail::checked_bytes(max / 2 + 1, 2) == 0);
}
