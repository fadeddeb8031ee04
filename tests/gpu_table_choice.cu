// The measured choice between a functor's bf16 table and direct math (detail/table_choice.cuh,
// detail/table_measure.cuh) on the device: for a light functor without a cost hint (a leaky ReLU)
// and a long one (tanh(log1p(exp(x)))), cuact::forward at sizes just at and above
// detail::tabulated_min_elements, in the four placements (co-aligned, a scalar head, not
// co-aligned, in place), each call waited for: after the measurement's timed calls the decision is
// direct math for the light functor and the table for the long one, and every call's output, on
// whichever path it ran, is bit for bit the direct path's (NaN included), into poisoned outputs,
// guard bytes around them untouched. The inputs are about N(0, 2), the table's window, with every
// 4099th element a special (NaN, +-inf, +-0, a denormal, a magnitude beyond the window). The same
// for forward_quantize to e4m3 (bytes and amax bit for bit; the long functor's decision the
// table). Calls under a scoped_policy or a stream capture are never timed: the measurement stays
// undecided through them.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "catch.hpp"
#include "device.hpp"

namespace cuact_test {
// Functors launched as kernels live in a named namespace (hidden visibility, as gpu_transform).
namespace choice {
struct light {
  __host__ __device__ float operator()(float x) const { return x > 0.0f ? x : 0.01f * x; }
};
struct long_math {
  __host__ __device__ float operator()(float x) const { return tanhf(log1pf(expf(x))); }
};
/// The same functors again, as distinct types: each measurement is per operation type.
struct light_captured : light {};
struct long_overridden : long_math {};
}  // namespace choice

/// in[i] for i in [0, n): about N(0, 2), every 4099th a special value.
__global__ void choice_input_kernel(__nv_bfloat16* in, std::size_t n) {
  const unsigned short specials[] = {0x7fc0, 0xffc1, 0x7f80, 0xff80, 0x0000, 0x8000,
                                     0x0001, 0x8033, 0x4f00, 0xcf00, 0x3400, 0x3580};
  for (std::size_t i = global_thread(); i < n; i += grid_threads()) {
    __nv_bfloat16_raw raw;
    if (i % 4099 == 0) {
      raw.x = specials[(i / 4099) % (sizeof(specials) / sizeof(specials[0]))];
    } else {
      std::uint64_t h = (i + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
      h ^= h >> 31;
      const float u = (static_cast<float>(h >> 40) + 0.5f) * 0x1p-24f;
      const float v = static_cast<float>(h & 0xffffu) * 0x1p-16f;
      raw = __nv_bfloat16_raw(__float2bfloat16(2.0f * sqrtf(-2.0f * logf(u)) * cospif(2.0f * v)));
    }
    in[i] = __nv_bfloat16(raw);
  }
}

/// Counts bytes of got[0, bytes) that differ from want, and where want is given none, that
/// differ from `guard`; the first such byte's index in *first.
__global__ void count_differing_kernel(const unsigned char* got, const unsigned char* want,
                                       unsigned char guard, std::size_t bytes,
                                       unsigned long long* count, unsigned long long* first) {
  for (std::size_t i = global_thread(); i < bytes; i += grid_threads()) {
    const unsigned char expected = want != nullptr ? want[i] : guard;
    if (got[i] != expected) {
      atomicAdd(count, 1ull);
      atomicMin(first, static_cast<unsigned long long>(i));
    }
  }
}

/// Counts the bf16 elements of got[0, n) that differ from want's bits while both are NaN.
__global__ void count_nan_only_kernel(const std::uint16_t* got, const std::uint16_t* want,
                                      std::size_t n, unsigned long long* count) {
  for (std::size_t i = global_thread(); i < n; i += grid_threads()) {
    const bool both_nan = (got[i] & 0x7fffu) > 0x7f80u && (want[i] & 0x7fffu) > 0x7f80u;
    if (got[i] != want[i] && both_nan) atomicAdd(count, 1ull);
  }
}
}  // namespace cuact_test

namespace {
using namespace cuact_test;
using bf16 = __nv_bfloat16;
using fp8 = __nv_fp8_e4m3;
using cuact::detail::table_path;

constexpr std::size_t at_n = cuact::detail::tabulated_min_elements;
constexpr std::size_t sizes[] = {at_n, at_n + 37};
constexpr std::size_t max_n = at_n + 37;
constexpr std::size_t slack = 64;  // elements before and after each array: guard bytes
constexpr unsigned char guard_byte = 0xA5;
/// Calls per functor: the measurement's timed calls, one to read their timings, and more.
constexpr int calls = cuact::detail::table_choice::timed_calls + 4;

/// The bytes of got that differ from want (or, where want is null, from guard_byte).
std::size_t differing_bytes(const void* got, const void* want, std::size_t bytes,
                            std::size_t& first) {
  device_memory counters(2 * sizeof(unsigned long long));
  auto* c = counters.get<unsigned long long>();
  const unsigned long long init[2] = {0, ~0ull};
  CUACT_CUDA_REQUIRE(cudaMemcpy(c, init, sizeof init, cudaMemcpyHostToDevice));
  if (bytes != 0) {
    count_differing_kernel<<<2048, 256>>>(static_cast<const unsigned char*>(got),
                                          static_cast<const unsigned char*>(want), guard_byte,
                                          bytes, c, c + 1);
    CUACT_CUDA_REQUIRE(cudaGetLastError());
  }
  unsigned long long result[2] = {};
  CUACT_CUDA_REQUIRE(cudaMemcpy(result, c, sizeof result, cudaMemcpyDeviceToHost));
  first = static_cast<std::size_t>(result[1]);
  return static_cast<std::size_t>(result[0]);
}

/// Of the bf16 elements of got[0, n) that differ from want, those where both are NaN (another
/// payload or sign): the diagnosis of a failed bit-for-bit check.
std::size_t nan_only_differences(const void* got, const void* want, std::size_t n) {
  device_memory counter(sizeof(unsigned long long));
  CUACT_CUDA_REQUIRE(cudaMemset(counter.get(), 0, sizeof(unsigned long long)));
  count_nan_only_kernel<<<2048, 256>>>(static_cast<const std::uint16_t*>(got),
                                       static_cast<const std::uint16_t*>(want), n,
                                       counter.get<unsigned long long>());
  CUACT_CUDA_REQUIRE(cudaGetLastError());
  unsigned long long count = 0;
  CUACT_CUDA_REQUIRE(cudaMemcpy(&count, counter.get(), sizeof count, cudaMemcpyDeviceToHost));
  return static_cast<std::size_t>(count);
}

/// The params type cuact::forward builds for act on bf16 (its measurement's key).
template <class A>
using forward_key = decltype(cuact::detail::make_params<8>(
    cuact::forward_op<A, bf16>{{}, A{}}, cuact::outputs(static_cast<bf16*>(nullptr)),
    std::size_t(0), cuact::inputs(static_cast<const bf16*>(nullptr))));
template <class A>
using quantize_key = cuact::detail::quantize_choice_key<cuact::auto_width, A, fp8>;

int current_device() {
  int device = 0;
  CUACT_CUDA_REQUIRE(cudaGetDevice(&device));
  return device;
}

/// act's direct bf16 forward over in[0, n): cuact::forward in chunks below the threshold.
template <class A>
void direct_forward(const bf16* in, bf16* out, std::size_t n) {
  const std::size_t chunk = at_n / 2;
  for (std::size_t first = 0; first < n; first += chunk) {
    const std::size_t count = n - first < chunk ? n - first : chunk;
    REQUIRE(cuact::forward(A{}, in + first, out + first, count) == cudaSuccess);
  }
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
}

/// Buffers of one check: the input with guards, the output with guards, the reference.
struct buffers {
  device_memory input{(max_n + 2 * slack) * sizeof(bf16)};
  device_memory output{(max_n + 2 * slack) * sizeof(bf16)};
  device_memory reference{max_n * sizeof(bf16)};
};

/// A call's placement, its input written and its output poisoned (out of place) or its input
/// over the in-place array; guard bytes around both arrays. Returns {in, out}.
template <class Out>
std::pair<bf16*, Out*> place(buffers& b, const array_placement& p, std::size_t n,
                             const Out* reference, unsigned char poison_byte) {
  CUACT_CUDA_REQUIRE(cudaMemset(b.input.get(), guard_byte, b.input.bytes()));
  CUACT_CUDA_REQUIRE(cudaMemset(b.output.get(), guard_byte, b.output.bytes()));
  bf16* const in = b.input.get<bf16>() + slack + p.in_offset;
  choice_input_kernel<<<4096, 256>>>(in, n);
  CUACT_CUDA_REQUIRE(cudaGetLastError());
  Out* out =
      reinterpret_cast<Out*>(b.output.get<unsigned char>() + slack * sizeof(bf16)) + p.out_offset;
  if (p.in_place) {
    out = reinterpret_cast<Out*>(in);
  } else if constexpr (std::is_same_v<Out, bf16>) {
    poison(reference, out, n);
  } else {
    CUACT_CUDA_REQUIRE(cudaMemset(out, poison_byte, n * sizeof(Out)));
  }
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  return {in, out};
}

/// The guard bytes of `buffer` around `array` (`bytes` bytes in it) that are not guard_byte.
std::size_t touched_guards(const device_memory& buffer, const void* array, std::size_t bytes) {
  const auto* base = buffer.get<unsigned char>();
  const auto* a = static_cast<const unsigned char*>(array);
  std::size_t first = 0;
  const std::size_t before = static_cast<std::size_t>(a - base);
  return differing_bytes(base, nullptr, before, first) +
         differing_bytes(a + bytes, nullptr, buffer.bytes() - before - bytes, first);
}

/// act's forward through cuact::forward, `calls` times, each against the direct reference.
template <class A>
void check_forward_choice(const char* name, table_path expected) {
  CAPTURE(name);
  const int device = current_device();
  using key = forward_key<A>;
  REQUIRE_FALSE(cuact::detail::table_path_decided<key>(device));
  buffers b;
  // the reference: the direct path over the same inputs (a prefix serves the smaller size)
  bf16* const ref_in = b.input.get<bf16>();
  choice_input_kernel<<<4096, 256>>>(ref_in, max_n);
  CUACT_CUDA_REQUIRE(cudaGetLastError());
  direct_forward<A>(ref_in, b.reference.get<bf16>(), max_n);
  for (int c = 0; c < calls; ++c) {
    const std::size_t n = sizes[c % 2];
    INFO("call " << c << ": n = " << n << ", " << standard_placements[c % 4].what);
    const auto [in, out] =
        place<bf16>(b, standard_placements[c % 4], n, b.reference.get<bf16>(), 0);
    REQUIRE(cuact::forward(A{}, in, out, n) == cudaSuccess);
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
    std::size_t first = 0;
    const std::size_t differ = differing_bytes(out, b.reference.get(), n * sizeof(bf16), first);
    const std::size_t nan_only = differ == 0 ? 0 : nan_only_differences(out, b.reference.get(), n);
    CAPTURE(first, nan_only);
    CHECK(differ == 0);
    const bool in_place = standard_placements[c % 4].in_place;
    CHECK(touched_guards(in_place ? b.input : b.output, out, n * sizeof(bf16)) == 0);
    if (!in_place) CHECK(touched_guards(b.input, in, n * sizeof(bf16)) == 0);
  }
  REQUIRE(cuact::detail::table_path_decided<key>(device));
  const table_path decided = cuact::detail::untimed_table_path<key>(device);
  WARN(name << ": the forward decided " << (decided == table_path::table ? "table" : "direct"));
  CHECK(decided == expected);
  CHECK(cudaGetLastError() == cudaSuccess);  // nothing left behind
}

/// act's bf16 -> e4m3 quantize through cuact::forward_quantize against the direct quantize.
template <class A>
void check_quantize_choice(const char* name, bool expect_table) {
  CAPTURE(name);
  const int device = current_device();
  using key = quantize_key<A>;
  REQUIRE_FALSE(cuact::detail::table_path_decided<key>(device));
  buffers b;
  device_memory reference(max_n * sizeof(fp8)), amax(2 * sizeof(float));
  float* const amax_got = amax.get<float>();
  bf16* const ref_in = b.input.get<bf16>();
  for (int c = 0; c < calls; ++c) {
    const std::size_t n = sizes[c % 2];
    // not in place: an fp8 output over a bf16 input is an overlap, rejected
    const array_placement& p = standard_placements[c % 3];
    INFO("call " << c << ": n = " << n << ", " << p.what);
    choice_input_kernel<<<4096, 256>>>(ref_in, n);
    CUACT_CUDA_REQUIRE(cudaGetLastError());
    REQUIRE(cuact::detail::run_quantize<cuact::auto_width>(
                cuact::detail::amax_op<A, fp8>{{}, A{}, 1.0f, nullptr}, reference.get<fp8>(), n,
                static_cast<const bf16*>(ref_in), amax_got + 1, nullptr, true, nullptr,
                cuact::detail::declared_cost<A>) == cudaSuccess);
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
    // alternating poisons: an element left unwritten differs from one of them
    const auto [in, out] = place<fp8>(b, p, n, reference.get<fp8>(), c % 2 == 0 ? 0x7f : 0x5a);
    REQUIRE(cuact::forward_quantize(A{}, in, out, n, 1.0f, amax_got) == cudaSuccess);
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
    std::size_t first = 0;
    const std::size_t differ = differing_bytes(out, reference.get(), n * sizeof(fp8), first);
    CAPTURE(first);
    CHECK(differ == 0);
    std::size_t amax_first = 0;
    CHECK(differing_bytes(amax_got, amax_got + 1, sizeof(float), amax_first) == 0);
    CHECK(touched_guards(b.output, out, n * sizeof(fp8)) == 0);
    CHECK(touched_guards(b.input, in, n * sizeof(bf16)) == 0);
  }
  REQUIRE(cuact::detail::table_path_decided<key>(device));
  const table_path decided = cuact::detail::untimed_table_path<key>(device);
  WARN(name << ": the quantize decided " << (decided == table_path::table ? "table" : "direct"));
  if (expect_table) CHECK(decided == table_path::table);
  CHECK(cudaGetLastError() == cudaSuccess);
}

}  // namespace

TEST_CASE("measured table choice: direct math for a light functor, the table for a long one",
          "[gpu][table]") {
  if (quick_mode()) CUACT_SKIP("quick mode: 2^27-element calls");
  check_forward_choice<choice::light>("leaky relu", table_path::direct);
  check_forward_choice<choice::long_math>("tanh(log1p(exp(x)))", table_path::table);
}

TEST_CASE("measured table choice: the bf16 -> fp8 quantize", "[gpu][table]") {
  if (quick_mode()) CUACT_SKIP("quick mode: 2^27-element calls");
  check_quantize_choice<choice::light>("leaky relu", false);
  check_quantize_choice<choice::long_math>("tanh(log1p(exp(x)))", true);
}

TEST_CASE("measured table choice: no call is timed under a scoped_policy or a capture",
          "[gpu][table]") {
  if (quick_mode()) CUACT_SKIP("quick mode: 2^27-element calls");
  const int device = current_device();
  buffers b;
  bf16* const in = b.input.get<bf16>();
  bf16* const out = b.output.get<bf16>();
  choice_input_kernel<<<4096, 256>>>(in, at_n);
  CUACT_CUDA_REQUIRE(cudaGetLastError());
  std::size_t first = 0;
  {
    using A = choice::long_overridden;
    direct_forward<A>(in, b.reference.get<bf16>(), at_n);
    const cuact::scoped_policy forced{cuact::policy{0, 256, 1, 1, true}};
    for (int c = 0; c < calls; ++c) {
      poison(b.reference.get<bf16>(), out, at_n);
      REQUIRE(cuact::forward(A{}, static_cast<const bf16*>(in), out, at_n) == cudaSuccess);
      CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
      CHECK(differing_bytes(out, b.reference.get(), at_n * sizeof(bf16), first) == 0);
    }
    CHECK_FALSE(cuact::detail::table_path_decided<forward_key<A>>(device));
  }
  {
    using A = choice::light_captured;
    direct_forward<A>(in, b.reference.get<bf16>(), at_n);
    cudaStream_t stream = nullptr;
    CUACT_CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaGraph_t graph = nullptr;
    CUACT_CUDA_REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    for (int c = 0; c < calls; ++c) {
      REQUIRE(cuact::forward(A{}, static_cast<const bf16*>(in), out, at_n, stream) == cudaSuccess);
    }
    CUACT_CUDA_REQUIRE(cudaStreamEndCapture(stream, &graph));
    CHECK_FALSE(cuact::detail::table_path_decided<forward_key<A>>(device));
    cudaGraphExec_t exec = nullptr;
    CUACT_CUDA_REQUIRE(cudaGraphInstantiate(&exec, graph, 0));
    poison(b.reference.get<bf16>(), out, at_n);
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
    CUACT_CUDA_REQUIRE(cudaGraphLaunch(exec, stream));
    CUACT_CUDA_REQUIRE(cudaStreamSynchronize(stream));
    CHECK(differing_bytes(out, b.reference.get(), at_n * sizeof(bf16), first) == 0);
    CHECK_FALSE(cuact::detail::table_path_decided<forward_key<A>>(device));
    CUACT_CUDA_REQUIRE(cudaGraphExecDestroy(exec));
    CUACT_CUDA_REQUIRE(cudaGraphDestroy(graph));
    CUACT_CUDA_REQUIRE(cudaStreamDestroy(stream));
  }
  CHECK(cudaGetLastError() == cudaSuccess);
}
