// Tabulated bf16 forwards (detail/kernels/table.cuh) against the direct path, bit for bit, on the
// device: n = 2^27 + 37 elements (from detail::tabulated_min_elements on, cuact::forward may look a
// bf16 forward without a cost hint up from a table of the functor's own results, where measured
// faster: gpu_table_choice checks that choice) holding every one
// of the 65536 bf16 bit patterns at least 2048 times (x[i] = bits(i * 40503 mod 2^16): an odd
// multiplier visits every pattern in each run of 65536), so every entry of the table, every input
// outside its window (NaN, infinities, zeros, large and tiny magnitudes) and every lane of a
// vector are covered. The direct result comes from cuact::forward over chunks below the threshold
// (the path every other GPU test checks against float64 references). Out of place co-aligned,
// with a scalar head, not co-aligned (scalars only), and in place; poisoned outputs, guard bytes
// after each array, inputs unchanged. Only functors without a cost hint are tabulated: plainly written user
// functors, and built-in activations' forwards with their rounded_to<bf16> math (selu, gelu, mish,
// silu, softplus{2, 10}, elu{0.5}) behind a functor that hides their hints; and selu itself
// (declared heavy: computed directly, checked all the same). The tabulated kernels run directly
// (detail::run_tabulated) at every size, so that the measured choice cannot send a check down
// direct math; small sizes give grids of a few blocks whose last threads have no element but
// still take part in the table's copy and barrier; in quick mode (CUACT_TEST_QUICK, under the
// sanitizers: tests/sanitize.sh) only those.
#include <cstdio>
#include <string>
#include <vector>

#include "catch.hpp"
#include "device.hpp"
#include "plain_functors.hpp"

namespace cuact_test {
// Functors launched as kernels live in a named namespace (hidden visibility, as gpu_transform).

/// A built-in activation's bf16 forward without its cost hint (so cuact::forward tabulates it).
template <class A>
struct without_hint {
  cuact::forward_op<A, __nv_bfloat16> forward;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return forward(x);
  }
};
template <class A>
without_hint<A> hint_hidden(A act) {
  return {{{}, act}};
}

__global__ void every_pattern_kernel(__nv_bfloat16* out, std::size_t n) {
  for (std::size_t i = global_thread(); i < n; i += grid_threads()) {
    reinterpret_cast<std::uint16_t*>(out)[i] = static_cast<std::uint16_t>(i * 40503u);
  }
}
}  // namespace cuact_test

namespace {
using namespace cuact_test;
using bf16 = __nv_bfloat16;

constexpr std::size_t table_n = cuact::detail::tabulated_min_elements + 37;
constexpr std::size_t slack = 64;  // elements after each array: guard bytes
constexpr unsigned char guard_byte = 0xA5;

/// Sizes of the direct runs of the tabulated kernels: a scalar, a partial vector, a vector and a
/// bit, every pattern once and a partial vector (2^16 + 37), and a grid whose last block is partly
/// idle.
constexpr std::size_t small_sizes[] = {1, 7, 9, (std::size_t(1) << 16) + 37, 3 * 128 * 8 + 5};

/// The tabulated forward of act over n elements: the kernels and table buffers cuact::forward's
/// table path launches (detail::run_tabulated), at any size (cuact::forward takes them from
/// tabulated_min_elements on, where measured faster than direct math). An op that cuact::forward
/// would not tabulate (a declared cost hint), or one without a table buffer left
/// (cudaErrorNotSupported), is computed by cuact::forward, as run_elementwise does.
template <class A>
cudaError_t forward_tabulated(const A& act, const bf16* in, bf16* out, std::size_t n,
                              cudaStream_t stream = nullptr) {
  using cuact::detail::forward_cost;
  using cuact::detail::tabulated_min_elements;
  if (!cuact::detail::tabulates(forward_cost<A>, tabulated_min_elements)) {
    return cuact::forward(act, in, out, n, stream);
  }
  int device = 0;
  if (const cudaError_t status = cudaGetDevice(&device); status != cudaSuccess) return status;
  constexpr int width = cuact::detail::resolve_width<cuact::auto_width, sizeof(bf16)>();
  const auto params = cuact::detail::make_params<width>(cuact::forward_op<A, bf16>{{}, act},
                                                        cuact::outputs(out), n, cuact::inputs(in));
  const cudaError_t status = cuact::detail::run_tabulated(params, device, stream);
  return status == cudaErrorNotSupported ? cuact::forward(act, in, out, n, stream) : status;
}

std::vector<std::uint16_t> host_bits(const bf16* data, std::size_t n) {
  std::vector<std::uint16_t> bits(n);
  CUACT_CUDA_REQUIRE(cudaMemcpy(bits.data(), data, n * sizeof(bf16), cudaMemcpyDeviceToHost));
  return bits;
}

bool is_nan_bits(std::uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }

/// One activation over the four placements, n elements.
template <class A>
void check_tabulated_at(const char* name, const A& act, std::size_t n) {
  const std::size_t chunk = cuact::detail::tabulated_min_elements / 2;  // direct below this
  device_memory input_memory((n + slack) * sizeof(bf16)), direct_memory(n * sizeof(bf16)),
      out_memory((n + slack) * sizeof(bf16));
  bf16* const input_base = input_memory.get<bf16>();
  bf16* const direct = direct_memory.get<bf16>();
  bf16* const out_base = out_memory.get<bf16>();

  for (const array_placement& p : standard_placements) {
    INFO(name << ": " << p.what << ", n = " << n);
    CUACT_CUDA_REQUIRE(cudaMemset(input_base, guard_byte, (n + slack) * sizeof(bf16)));
    CUACT_CUDA_REQUIRE(cudaMemset(out_base, guard_byte, (n + slack) * sizeof(bf16)));
    bf16* const in = input_base + p.in_offset;
    bf16* const out = p.in_place ? in : out_base + p.out_offset;
    every_pattern_kernel<<<4096, 256>>>(in, n);
    CUACT_CUDA_REQUIRE(cudaGetLastError());
    for (std::size_t first = 0; first < n; first += chunk) {
      const std::size_t count = n - first < chunk ? n - first : chunk;
      REQUIRE(cuact::forward(act, in + first, direct + first, count) == cudaSuccess);
    }
    if (!p.in_place) poison(direct, out, n);
    REQUIRE(forward_tabulated(act, in, out, n) == cudaSuccess);
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());

    const std::vector<std::uint16_t> want = host_bits(direct, n);
    const std::vector<std::uint16_t> got = host_bits(out, n);
    std::size_t wrong = 0;
    std::string first_wrong;
    for (std::size_t i = 0; i < n; ++i) {
      const bool same = got[i] == want[i] || (is_nan_bits(got[i]) && is_nan_bits(want[i]));
      if (!same && wrong++ == 0) {
        char text[128];
        std::snprintf(text, sizeof(text), "element %zu: x bits 0x%04x, got 0x%04x, direct 0x%04x",
                      i, static_cast<unsigned>(static_cast<std::uint16_t>(i * 40503u)),
                      static_cast<unsigned>(got[i]), static_cast<unsigned>(want[i]));
        first_wrong = text;
      }
    }
    CAPTURE(first_wrong);
    CHECK(wrong == 0);
    if (!p.in_place) {
      const std::vector<std::uint16_t> input = host_bits(in, n);
      std::size_t changed = 0;
      for (std::size_t i = 0; i < n; ++i) {
        changed += input[i] != static_cast<std::uint16_t>(i * 40503u);
      }
      CHECK(changed == 0);
    }
    // the guard elements after the written array
    std::vector<unsigned char> after(slack * sizeof(bf16) - p.out_offset * sizeof(bf16));
    CUACT_CUDA_REQUIRE(cudaMemcpy(after.data(), out + n, after.size(), cudaMemcpyDeviceToHost));
    std::size_t touched = 0;
    for (unsigned char b : after) touched += b != guard_byte;
    CHECK(touched == 0);
  }
}

/// One activation at table_n (unless in quick mode) and at each of small_sizes.
template <class A>
void check_tabulated(const char* name, const A& act) {
  if (!quick_mode()) check_tabulated_at(name, act, table_n);
  for (const std::size_t n : small_sizes) check_tabulated_at(name, act, n);
}

}  // namespace

TEST_CASE("tabulated bf16 forwards write the direct path's bits for every input", "[gpu][table]") {
  using cuact::detail::forward_cost;
  using cuact::detail::tabulates;
  static_assert(tabulates(forward_cost<plain::softplus>, table_n));
  static_assert(tabulates(forward_cost<without_hint<cuact::selu>>, table_n));
  static_assert(!tabulates(forward_cost<cuact::selu>, table_n));
  static_assert(!tabulates(forward_cost<plain::softplus>, table_n - 38));
  check_tabulated("selu", hint_hidden(cuact::selu{}));
  check_tabulated("gelu", hint_hidden(cuact::gelu{}));
  check_tabulated("mish", hint_hidden(cuact::mish{}));
  check_tabulated("silu", hint_hidden(cuact::silu{}));
  check_tabulated("softplus{2, 10}", hint_hidden(cuact::softplus{2.0, 10.0}));
  check_tabulated("elu{0.5}", hint_hidden(cuact::elu{0.5}));
  check_tabulated("user softplus", plain::softplus{});
  check_tabulated("user elu", plain::elu{});
  check_tabulated("selu (declared heavy: not tabulated)", cuact::selu{});
}

namespace {

/// Bits of act over `in` computed directly (chunks below the threshold) into `scratch`.
template <class A>
std::vector<std::uint16_t> direct_bits(const A& act, const bf16* in, bf16* scratch, std::size_t n) {
  const std::size_t chunk = cuact::detail::tabulated_min_elements / 2;
  for (std::size_t first = 0; first < n; first += chunk) {
    const std::size_t count = n - first < chunk ? n - first : chunk;
    REQUIRE(cuact::forward(act, in + first, scratch + first, count) == cudaSuccess);
  }
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  return host_bits(scratch, n);
}

std::size_t differing(const std::vector<std::uint16_t>& got,
                      const std::vector<std::uint16_t>& want) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    wrong += got[i] != want[i] && !(is_nan_bits(got[i]) && is_nan_bits(want[i]));
  }
  return wrong;
}

}  // namespace

TEST_CASE("tabulated forwards of several op values, concurrently on several streams",
          "[gpu][table]") {
  // The table buffers are kept per op type, device and op value (detail::get_table_buffer): three
  // streams at once, two of them with the same value (one buffer, filled by both), then more
  // values than the buffers kept (the rest computed directly); every output against the direct
  // path. Through forward_tabulated (run_tabulated directly: the buffers cuact::forward's table
  // path takes) at table_n, in quick mode at 2^16 + 37.
  const std::size_t n = quick_mode() ? small_sizes[3] : table_n;
  constexpr int values = cuact::detail::table_buffers_per_op_type + 2;
  device_memory input_memory(n * sizeof(bf16)), scratch_memory(n * sizeof(bf16)),
      out_memory(3 * n * sizeof(bf16));
  bf16* const in = input_memory.get<bf16>();
  bf16* const scratch = scratch_memory.get<bf16>();
  bf16* const out = out_memory.get<bf16>();
  every_pattern_kernel<<<4096, 256>>>(in, n);
  CUACT_CUDA_REQUIRE(cudaGetLastError());
  const auto elu_of = [](int v) { return hint_hidden(cuact::elu{0.25 + 0.125 * v}); };

  cudaStream_t streams[3];
  for (cudaStream_t& s : streams) {
    CUACT_CUDA_REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  const int value_of_stream[3] = {0, 1, 0};
  for (int round = 0; round < 4; ++round) {
    for (int s = 0; s < 3; ++s) {
      REQUIRE(forward_tabulated(elu_of(value_of_stream[s]), in, out + s * n, n, streams[s]) ==
              cudaSuccess);
    }
  }
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  for (int s = 0; s < 3; ++s) {
    INFO("stream " << s << ", elu value " << value_of_stream[s]);
    CHECK(differing(host_bits(out + s * n, n),
                    direct_bits(elu_of(value_of_stream[s]), in, scratch, n)) == 0);
  }
  for (int v = 0; v < values; ++v) {
    INFO("elu value " << v << " of " << values);
    const std::vector<std::uint16_t> want = direct_bits(elu_of(v), in, scratch, n);
    poison(scratch, out, n, streams[v % 3]);  // on the call's stream: the others do not wait
    REQUIRE(forward_tabulated(elu_of(v), in, out, n, streams[v % 3]) == cudaSuccess);
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
    CHECK(differing(host_bits(out, n), want) == 0);
  }
  for (cudaStream_t s : streams) CUACT_CUDA_REQUIRE(cudaStreamDestroy(s));
}
