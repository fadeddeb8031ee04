// Bulk tiles (detail/kernels/bulk_tile.cuh) on the device: bulk_tile_kernel launched directly over
// relu and silu forwards in bf16 and fp16, selu in fp32, relu in fp64 and the bf16 relu backward
// (two inputs: two copies per tile), on covering grids (the kernel takes one tile per block): a
// block per tile (the launch model's), tiles of 37 and 32 vectors, and a grid far larger than the
// tiles; sizes with and without scalars run both of its instantiations (bulk_tile_kernel_for).
// Sizes straddle tile edges; out of place co-aligned, with a scalar head, not co-aligned (scalars
// only), and in place. Every element against the reference
// kernel (one thread per element, scalar loads), outputs poisoned first, the guard bytes after each
// array and the inputs unchanged. The public entry runs the same arrays at 2^24 + 5 elements and
// says whether the launch model took bulk tiles there (on an H100 it does for the light forwards of
// 16-bit, float and double data; the GPU suite's large cases run through it too). Needs sm_90 (bulk
// copies). First, from this translation unit (no CUB: nothing else raises the alignment of dynamic
// shared memory), that the staging buffer sits on bulk_tile_staging_alignment.
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "device.hpp"

namespace {
using namespace cuact_test;

constexpr std::size_t slack = 64;  // elements after each array: guard bytes
constexpr unsigned char guard_byte = 0xA5;

template <class T>
std::vector<T> to_host(const T* data, std::size_t n) {
  std::vector<T> host(n);
  if (n != 0) CUACT_CUDA_REQUIRE(cudaMemcpy(host.data(), data, n * sizeof(T), cudaMemcpyDefault));
  return host;
}

/// Whether the bytes after `end` (the guard) are untouched.
bool guard_intact(const void* end, std::size_t bytes) {
  std::vector<unsigned char> after(bytes);
  CUACT_CUDA_REQUIRE(cudaMemcpy(after.data(), end, bytes, cudaMemcpyDeviceToHost));
  for (unsigned char b : after) {
    if (b != guard_byte) return false;
  }
  return true;
}

/// Elements of `got` that differ from `want` (NaN equal to NaN); the first one in `first`.
template <class T>
std::size_t differing(const std::vector<T>& got, const std::vector<T>& want, std::string& first) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!same_result(got[i], want[i]) && wrong++ == 0) {
      first = "element " + std::to_string(i) + ": " + describe(got[i]) + ", expected " +
              describe(want[i]);
    }
  }
  return wrong;
}

/// Pass P of act over T, n elements, every placement and grid.
template <pass P, class T, class A>
void check_bulk(const char* name, const A& act, std::size_t n) {
  constexpr int inputs = pass_inputs(P);
  constexpr int width = static_cast<int>(16 / sizeof(T));
  const auto op = pass_op<P, T>(act);
  device_memory in_memory[2] = {device_memory((n + slack) * sizeof(T)),
                                device_memory((n + slack) * sizeof(T))};
  device_memory out_memory((n + slack) * sizeof(T)), want_memory(n * sizeof(T));
  T* const want = want_memory.get<T>();
  for (const array_placement& p : standard_placements) {
    T* in[2] = {in_memory[0].get<T>() + p.in_offset, in_memory[1].get<T>() + p.in_offset};
    T* const out = p.in_place ? in[inputs - 1] : out_memory.get<T>() + p.out_offset;
    const auto fill = [&] {
      for (int k = 0; k < 2; ++k) {
        CUACT_CUDA_REQUIRE(cudaMemset(in_memory[k].get<T>(), guard_byte, (n + slack) * sizeof(T)));
        fill_hash(in[k], n, 100 + k);
      }
      CUACT_CUDA_REQUIRE(cudaMemset(out_memory.get<T>(), guard_byte, (n + slack) * sizeof(T)));
    };
    fill();
    const auto params = [&] {
      if constexpr (inputs == 1) {
        return cuact::make_elementwise_params<width>(op, out, n, static_cast<const T*>(in[0]));
      } else {
        return cuact::make_elementwise_params<width>(op, out, n, static_cast<const T*>(in[0]),
                                                     static_cast<const T*>(in[1]));
      }
    }();
    using params_t = std::remove_const_t<decltype(params)>;
    static_assert(cuact::detail::bulk_tiles_fit_v<params_t>);
    if constexpr (inputs == 1) {
      compute_reference(op, n, cuda::std::tuple<T*>{want}, cuda::std::tuple<const T*>{in[0]});
    } else {
      compute_reference(op, n, cuda::std::tuple<T*>{want},
                        cuda::std::tuple<const T*, const T*>{in[0], in[1]});
    }
    const std::vector<T> expected = to_host(want, n);
    const auto kernel = cuact::detail::bulk_tile_kernel_for(params);
    const auto model = cuact::detail::bulk_tile_launch_shape({}, params.vectors, 0);
    const unsigned tile = model.threads_per_block;
    // covering grids (the kernel takes one tile per block); no vectors: one block for the scalars
    const auto covering = [&](unsigned threads) {
      const auto blocks = static_cast<unsigned>((params.vectors + threads - 1) / threads);
      return std::pair<unsigned, unsigned>{blocks > 0 ? blocks : 1, threads};
    };
    const std::pair<unsigned, unsigned> grids[] = {
        covering(tile), covering(37), covering(32), {2 * model.blocks + 1, tile}};
    for (const auto& [blocks, threads] : grids) {
      INFO(name << " " << pass_name(P) << " " << type_name<T>() << ": " << p.what << ", n = " << n
                << ", grid " << blocks << " x " << threads << ", " << params.vectors << " vectors");
      fill();
      if (!p.in_place) poison(want, out, n);
      kernel<<<blocks, threads, cuact::detail::bulk_tile_staging_bytes<params_t>(threads)>>>(
          params);
      CUACT_CUDA_REQUIRE(cudaGetLastError());
      CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
      std::string first;
      const std::size_t wrong = differing(to_host(out, n), expected, first);
      CAPTURE(first);
      CHECK(wrong == 0);
      CHECK(guard_intact(out + n, (slack - p.out_offset) * sizeof(T)));
      for (int k = 0; k < inputs; ++k) {
        if (p.in_place && k == inputs - 1) continue;
        const std::vector<T> input = to_host(in[k], n);
        std::size_t changed = 0;
        for (std::size_t i = 0; i < n; ++i) {
          changed += bits_of(input[i]) != hash_bits<T>(100 + k, i);
        }
        CHECK(changed == 0);
      }
    }
  }
}

/// check_bulk at sizes straddling tile edges (tiles of 256, 37 and 32 vectors of `width`).
template <pass P, class T, class A>
void check_bulk_sizes(const char* name, const A& act) {
  constexpr std::size_t v = 16 / sizeof(T);
  const std::size_t tile = v * cuact::detail::bulk_tile_threads_per_block;
  for (std::size_t n : {std::size_t(1), v - 1, v + 1, 37 * v + 3, tile - 1, tile + v, 3 * tile + 5,
                        (std::size_t(1) << 20) + 37}) {
    check_bulk<P, T>(name, act, n);
  }
}

/// The public entry over n elements against the reference; says whether bulk tiles ran.
template <class T, class A>
void check_entry(const char* name, const A& act, std::size_t n) {
  device_memory in_memory((n + 8) * sizeof(T)), out_memory((n + 8) * sizeof(T)),
      want_memory(n * sizeof(T));
  T* const in = in_memory.get<T>() + 3;  // a scalar head
  T* const out = out_memory.get<T>() + 3;
  T* const want = want_memory.get<T>();
  fill_hash(in, n, 7);
  const auto op = pass_op<pass::forward, T>(act);
  compute_reference(op, n, cuda::std::tuple<T*>{want}, cuda::std::tuple<const T*>{in});
  poison(want, out, n);
  REQUIRE(cuact::forward(act, in, out, n) == cudaSuccess);
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  // the instantiation and shape run_elementwise launches (detail::launch_elementwise)
  const auto params = cuact::make_elementwise_params<static_cast<int>(16 / sizeof(T))>(
      op, out, n, static_cast<const T*>(in));
  int device = 0;
  CUACT_CUDA_REQUIRE(cudaGetDevice(&device));
  bool bulk = false;
  const cudaError_t status = cuact::detail::with_launched_params(
      params, device, cuact::detail::forward_cost<A>, [&](const auto& launched) {
        auto planned = launched;
        cuact::detail::launch_plan plan{};
        const cudaError_t s =
            cuact::detail::plan_launch(planned, device, cuact::detail::forward_cost<A>, true, plan);
        bulk = plan.bulk_tiles;
        return s;
      });
  REQUIRE(status == cudaSuccess);
  std::printf("entry %s %s, n = %zu: %s\n", name, type_name<T>().c_str(), n,
              bulk ? "bulk tiles" : "elementwise_kernel");
  std::string first;
  const std::size_t wrong = differing(to_host(out, n), to_host(want, n), first);
  INFO(name << " " << type_name<T>() << " through cuact::forward, n = " << n);
  CAPTURE(first);
  CHECK(wrong == 0);
}

/// Writes the shared-memory offset of bulk_tile_staging() modulo its alignment, from a kernel
/// that, like bulk_tile_kernel, holds static shared memory before the dynamic (an mbarrier's
/// 8 bytes) in a translation unit with no other dynamic shared array (no CUB).
__global__ void staging_misalignment_kernel(unsigned* out) {
  __shared__ std::uint64_t before;  // as bulk_tile_kernel's mbarrier
  before = threadIdx.x;
  const auto offset =
      static_cast<unsigned>(__cvta_generic_to_shared(cuact::detail::bulk_tile_staging()));
  *out = offset % cuact::detail::bulk_tile_staging_alignment + static_cast<unsigned>(before);
}

}  // namespace

TEST_CASE("bulk tiles: the staging buffer is aligned for the bulk copies", "[gpu][bulk]") {
  // Aligned to 16 only, the buffer takes bulk copies 3% slower (bulk_tile_staging_alignment).
  device_memory misalignment(sizeof(unsigned));
  CUACT_CUDA_REQUIRE(cudaMemset(misalignment.get(), 0xFF, sizeof(unsigned)));
  staging_misalignment_kernel<<<1, 1, 4096>>>(misalignment.get<unsigned>());
  CUACT_CUDA_REQUIRE(cudaGetLastError());
  CHECK(to_host(misalignment.get<unsigned>(), 1)[0] == 0u);
}

TEST_CASE("bulk tiles on the device: every grid, size and placement", "[gpu][bulk]") {
  cuact::detail::kernel_facts facts{};
  int device = 0;
  CUACT_CUDA_REQUIRE(cudaGetDevice(&device));
  using bf16 = __nv_bfloat16;
  // Only the params' type is needed: which binary the device runs for this kernel.
  using probe_params = decltype(cuact::make_elementwise_params<8>(
      cuact::forward_op<cuact::relu, bf16>{}, static_cast<bf16*>(nullptr), 0,
      static_cast<const bf16*>(nullptr)));
  CUACT_CUDA_REQUIRE(cuact::detail::get_kernel_facts(
      cuact::detail::bulk_tile_kernel<std::remove_const_t<probe_params>>, device, facts));
  if (facts.binary_version < 90) {
    WARN("bulk tiles need sm_90: this device runs sm_" << facts.binary_version << " code");
    return;
  }
  check_bulk_sizes<pass::forward, bf16>("relu", cuact::relu{});
  check_bulk_sizes<pass::forward, __half>("relu", cuact::relu{});
  check_bulk_sizes<pass::forward, bf16>("silu", cuact::silu{});
  check_bulk_sizes<pass::forward, __half>("silu", cuact::silu{});
  check_bulk_sizes<pass::forward, float>("selu", cuact::selu{});
  check_bulk_sizes<pass::forward, double>("relu", cuact::relu{});
  check_bulk_sizes<pass::backward, bf16>("relu", cuact::relu{});
  const std::size_t n = quick_mode() ? (std::size_t(1) << 20) + 5 : (std::size_t(1) << 24) + 5;
  check_entry<bf16>("relu", cuact::relu{}, n);
  check_entry<__half>("silu", cuact::silu{}, n);
  check_entry<bf16>("gelu", cuact::gelu{}, n);
  check_entry<double>("relu", cuact::relu{}, n);
}
