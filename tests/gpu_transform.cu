// cuact::transform on the device with several outputs and mixed element types: two inputs of two
// types into two outputs of two types (in and out of place), fp32 -> bf16, and fp32 -> fp8
// (e4m3, e5m2) through forward_op<Activation, fp8>, every element against the reference kernel,
// guards, poison and offsets as in gpu_forward; and fp8's saturation and NaN on chosen values.
#include <cmath>
#include <limits>
#include <vector>

#include "catch.hpp"
#include "gpu_cases.hpp"

using namespace cuact_test;
using cuact::detail::type_list;
using bf16 = __nv_bfloat16;
using e4m3 = __nv_fp8_e4m3;
using e5m2 = __nv_fp8_e5m2;

namespace cuact_test {
// Ops launched as kernels live in a named namespace: a type with internal linkage would give the
// kernel internal linkage, which its hidden visibility attribute warns about.

/// Two inputs, two outputs: (a + b, a * b) where a > 0, else (a, -b).
struct sum_and_product {
  template <class A, class B>
  __host__ __device__ cuda::std::tuple<A, A> operator()(A a, B b) const {
    return a > A(0) ? cuda::std::tuple<A, A>(a + A(b), a * A(b)) : cuda::std::tuple<A, A>(a, -A(b));
  }
};

/// The identity, to see the output conversion alone.
struct identity {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x;
  }
};

}  // namespace cuact_test

namespace {

/// op over outputs Out... and inputs In... through cuact::transform<W> (or a direct launch), for
/// sizes and layouts of the matrix; in place over input 0 when output 0 has its type.
template <int W, class Op, class... Out, class... In>
void run_transform_matrix(const Op& op, type_list<Out...>, type_list<In...>,
                          const std::string& name, guarded_arena& arena,
                          const test_streams& streams, tally& total) {
  constexpr int V = resolved_width(W, cuact::detail::max_size_of<Out..., In...>());
  constexpr bool can_be_in_place = std::is_same_v<std::tuple_element_t<0, std::tuple<Out...>>,
                                                  std::tuple_element_t<0, std::tuple<In...>>>;
  const auto launch = [op](gpu_case& c, const cuda::std::tuple<Out*...>& out,
                           const cuda::std::tuple<const In*...>& in,
                           cudaStream_t stream) -> cudaError_t {
    if (c.launch.direct) return launch_direct<V>(c, op, out, in, stream);
    return cuact::transform<W>(
        op, cuda::std::apply([](Out*... p) { return cuact::outputs(p...); }, out), c.n,
        cuda::std::apply([](const In*... p) { return cuact::inputs(p...); }, in), stream);
  };
  case_batch<Op, type_list<Out...>, type_list<In...>> batch(op, name + " W=" + std::to_string(W),
                                                            arena, streams, total);
  std::uint64_t seed = 1 << 20;
  const bool quick = quick_mode();
  for (std::size_t n : matrix_sizes(V, quick)) {
    for (gpu_case c : matrix_layouts(static_cast<int>(sizeof...(In)), n, quick)) {
      if (c.in_place >= 0) {
        if (!can_be_in_place) continue;
        c.in_place = 0;
        c.in_offset[0] = c.out_offset[0];
        c.in_place_overload = false;
      }
      c.width = W;
      c.seed = seed += 8;
      c.launch.direct = c.seed % 3 == 0;
      c.launch.grid_choice = static_cast<unsigned>(c.seed / 8);
      c.launch.block_choice = static_cast<unsigned>(c.seed / 24);
      c.launch.vectors_per_thread = 1 + static_cast<unsigned>(c.seed / 8 % 4);
      c.launch.stream = static_cast<int>(c.seed / 8 % 3);
      batch.add(c, launch);
    }
  }
  batch.flush(launch);
}

}  // namespace

TEST_CASE("transform: two inputs and two outputs of mixed types", "[gpu][transform]") {
  guarded_arena arena;
  test_streams streams;
  tally total;
  run_transform_matrix<cuact::auto_width>(sum_and_product{}, type_list<bf16, float>{},
                                          type_list<float, __half>{},
                                          "(fp32, fp16) -> (bf16, fp32)", arena, streams, total);
  run_transform_matrix<2>(sum_and_product{}, type_list<bf16, float>{}, type_list<float, __half>{},
                          "(fp32, fp16) -> (bf16, fp32)", arena, streams, total);
  run_transform_matrix<cuact::auto_width>(
      sum_and_product{}, type_list<float, bf16>{}, type_list<float, __half>{},
      "(fp32, fp16) -> (fp32, bf16), in place", arena, streams, total);
  run_transform_matrix<cuact::auto_width>(
      sum_and_product{}, type_list<double, e4m3>{}, type_list<double, float>{},
      "(fp64, fp32) -> (fp64, fp8 e4m3)", arena, streams, total);
  total.print("transform, several outputs");
  CHECK(total.failed_cases == 0);
  CHECK(total.cases > 0);
}

TEST_CASE("transform: fp32 -> bf16 and fp32 -> fp8 through forward_op", "[gpu][transform][fp8]") {
  guarded_arena arena;
  test_streams streams;
  tally total;
  run_transform_matrix<cuact::auto_width>(cuact::forward_op<cuact::selu, bf16>{}, type_list<bf16>{},
                                          type_list<float>{}, "selu fp32 -> bf16", arena, streams,
                                          total);
  run_transform_matrix<cuact::auto_width>(cuact::forward_op<cuact::selu, e4m3>{}, type_list<e4m3>{},
                                          type_list<float>{}, "selu fp32 -> fp8 e4m3", arena,
                                          streams, total);
  run_transform_matrix<4>(cuact::forward_op<cuact::relu, e5m2>{}, type_list<e5m2>{},
                          type_list<float>{}, "relu fp32 -> fp8 e5m2", arena, streams, total);
  run_transform_matrix<cuact::auto_width>(cuact::gradient_op<cuact::selu, e5m2>{},
                                          type_list<e5m2>{}, type_list<float, float>{},
                                          "selu backward fp32 -> fp8 e5m2", arena, streams, total);
  total.print("transform, fp32 -> bf16 / fp8");
  CHECK(total.failed_cases == 0);
}

TEST_CASE("transform: fp8 outputs saturate to the largest finite value and keep NaN",
          "[gpu][transform][fp8]") {
  const float inf = std::numeric_limits<float>::infinity();
  // input, e4m3 bits, e5m2 bits (round to nearest even, saturating: TransformerEngine's casts)
  struct expectation {
    float x;
    unsigned e4m3_bits, e5m2_bits;
  };
  const std::vector<expectation> table = {
      {1e6f, 0x7E, 0x7B},          {-1e6f, 0xFE, 0xFB}, {inf, 0x7E, 0x7B},   {-inf, 0xFE, 0xFB},
      {448.f, 0x7E, 0x5F},         {464.f, 0x7E, 0x5F}, {480.f, 0x7E, 0x60}, {57344.f, 0x7E, 0x7B},
      {61440.f, 0x7E, 0x7B},       {0.5f, 0x30, 0x38},  {-0.0f, 0x80, 0x80}, {1e-9f, 0x00, 0x00},
      {0.0009765625f, 0x00, 0x14}, {3.3f, 0x45, 0x43}};
  const std::size_t n = table.size() + 1;  // + NaN
  std::vector<float> host(n);
  for (std::size_t i = 0; i < table.size(); ++i) host[i] = table[i].x;
  host[n - 1] = std::numeric_limits<float>::quiet_NaN();
  device_memory in(n * sizeof(float)), out4(n), out5(n);
  CUACT_CUDA_REQUIRE(cudaMemcpy(in.get(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cuact::transform(cuact::forward_op<identity, e4m3>{}, cuact::outputs(out4.get<e4m3>()), n,
                         cuact::inputs(in.get<float>())) == cudaSuccess);
  CHECK(cuact::transform(cuact::forward_op<identity, e5m2>{}, cuact::outputs(out5.get<e5m2>()), n,
                         cuact::inputs(in.get<float>())) == cudaSuccess);
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  std::vector<e4m3> got4(n);
  std::vector<e5m2> got5(n);
  CUACT_CUDA_REQUIRE(cudaMemcpy(got4.data(), out4.get(), n, cudaMemcpyDeviceToHost));
  CUACT_CUDA_REQUIRE(cudaMemcpy(got5.data(), out5.get(), n, cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < table.size(); ++i) {
    CAPTURE(table[i].x);
    CHECK(bits_of(got4[i]) == table[i].e4m3_bits);
    CHECK(bits_of(got5[i]) == table[i].e5m2_bits);
  }
  CHECK(is_nan(got4[n - 1]));
  CHECK(is_nan(got5[n - 1]));
}
