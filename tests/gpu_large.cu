// Arrays past 2^31 elements and 2^32 bytes: n = 2^31 + 7 for bf16 relu (4.3 GB per array) on the
// vector path with misaligned pointers (byte offsets past 2^32), bf16 selu with every pointer
// aligned, bf16 relu with in and out at different offsets (the scalar path: 2^31 + 7 work items,
// more than INT_MAX), and fp32 relu in place (8.6 GB, byte offsets past 2^33). Inputs are filled on
// the device from the hash (support.hpp), so any element's input and expected output are known
// without copying the array: checked are the first and last 64Ki elements, 2^20 random ones and a
// strided sample (output against the reference evaluated on the device, input unchanged), and
// the bytes around each array. And bias + relu over bf16 [rows, cols] past 2^31 elements: the flat
// pass in chunks of whole rows (run_large_bias).
//
// Needs about 9 GB of free device memory; with less it prints SKIPPED and exits 77.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "catch.hpp"
#include "device.hpp"

#ifndef CUACT_LARGE_N  // overridable for a build that rehearses this test at a small size
#define CUACT_LARGE_N ((std::size_t(1) << 31) + 7)
#endif

namespace {
using namespace cuact_test;

constexpr std::size_t large_n = CUACT_LARGE_N;
constexpr std::size_t slack = 64;  // elements allocated past n + offset: the guard after the array

/// Indices to check: head, tail, random and strided.
std::vector<std::size_t> sample_indices(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> index;
  const std::size_t edge = std::min<std::size_t>(n, 65536);
  for (std::size_t i = 0; i < edge; ++i) index.push_back(i);
  for (std::size_t i = n - edge; i < n; ++i) index.push_back(i);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> any(0, n - 1);
  for (int k = 0; k < (1 << 20); ++k) index.push_back(any(rng));
  for (std::size_t i = 0; i < n; i += n / 4096 + 1) index.push_back(i);
  return index;
}

/// The bytes of [base, base + offset) and [base + offset + n, base + n + slack) still hold 0xA5.
template <class T>
bool guards_intact(const T* base, std::size_t offset, std::size_t n) {
  std::vector<unsigned char> before(offset * sizeof(T)), after((slack - offset) * sizeof(T));
  if (!before.empty())
    CUACT_CUDA_REQUIRE(cudaMemcpy(before.data(), base, before.size(), cudaMemcpyDeviceToHost));
  CUACT_CUDA_REQUIRE(
      cudaMemcpy(after.data(), base + offset + n, after.size(), cudaMemcpyDeviceToHost));
  const auto sentinel = [](unsigned char b) { return b == 0xA5; };
  return std::all_of(before.begin(), before.end(), sentinel) &&
         std::all_of(after.begin(), after.end(), sentinel);
}

/// One run: fills in[0, n) from the hash, poisons out (0xA5 bytes), runs cuact::forward, checks
/// the sample. out_base == nullptr: in place over in.
template <class T, class A>
void run_large(const char* what, const A& act, T* in_base, std::size_t in_offset, T* out_base,
               std::size_t out_offset, std::uint64_t seed) {
  const std::size_t n = large_n;
  INFO(what << " " << type_name<T>() << " n=" << n << " in_offset=" << in_offset
            << " out_offset=" << out_offset << (out_base ? "" : " in place"));
  const std::size_t bytes = (n + slack) * sizeof(T);
  CUACT_CUDA_REQUIRE(cudaMemset(in_base, 0xA5, bytes));
  if (out_base) CUACT_CUDA_REQUIRE(cudaMemset(out_base, 0xA5, bytes));
  T* const in = in_base + in_offset;
  T* const out = out_base ? out_base + out_offset : in;
  fill_hash(in, n, seed);
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  const cudaError_t status =
      out_base ? cuact::forward(act, in, out, n) : cuact::forward(act, in, n);
  REQUIRE(status == cudaSuccess);
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  CUACT_CUDA_REQUIRE(cudaGetLastError());

  CHECK(guards_intact(in_base, in_offset, n));
  if (out_base) CHECK(guards_intact(out_base, out_offset, n));
  const std::vector<std::size_t> index = sample_indices(n, seed + 1);
  const std::size_t count = index.size();
  device_memory d_index(count * sizeof(std::size_t)), d_got(count * sizeof(T)),
      d_want(count * sizeof(T)), d_input(count * sizeof(T));
  CUACT_CUDA_REQUIRE(
      cudaMemcpy(d_index.get(), index.data(), count * sizeof(std::size_t), cudaMemcpyHostToDevice));
  sample_kernel<<<1024, 256>>>(pass_op<pass::forward, T>(act), seed, d_index.get<std::size_t>(),
                               count, static_cast<const T*>(out), static_cast<const T*>(in),
                               d_got.get<T>(), d_want.get<T>(), d_input.get<T>());
  CUACT_CUDA_REQUIRE(cudaGetLastError());
  std::vector<T> got(count), want(count), input(count);
  CUACT_CUDA_REQUIRE(
      cudaMemcpy(got.data(), d_got.get(), count * sizeof(T), cudaMemcpyDeviceToHost));
  CUACT_CUDA_REQUIRE(
      cudaMemcpy(want.data(), d_want.get(), count * sizeof(T), cudaMemcpyDeviceToHost));
  CUACT_CUDA_REQUIRE(
      cudaMemcpy(input.data(), d_input.get(), count * sizeof(T), cudaMemcpyDeviceToHost));
  std::size_t bad = 0, changed = 0;
  std::string first;
  for (std::size_t k = 0; k < count; ++k) {
    if (out_base && bits_of(input[k]) != hash_bits<T>(seed, index[k])) ++changed;
    if (!same_result(got[k], want[k]) && bad++ == 0) {
      first = "element " + std::to_string(index[k]) +
              ": x=" + describe(hash_value<T>(seed, index[k])) + " got " + describe(got[k]) +
              " expected " + describe(want[k]);
    }
  }
  CAPTURE(count, first);
  CHECK(bad == 0);
  CHECK(changed == 0);
}

/// bias + relu over bf16 [rows, cols] of more than 2^31 elements: the flat pass in two launches
/// (fused_dispatch.cuh: chunks of whole rows below 2^31 elements, the column by fast_divmod). x
/// from the hash, out poisoned; checked against the host evaluation of the same op in windows at
/// both ends, around the chunk edge and at random places, and the bytes around out.
void run_large_bias(__nv_bfloat16* x, __nv_bfloat16* out_base, std::uint64_t seed) {
  using bf16 = __nv_bfloat16;
  const std::size_t cols = 65544;  // a multiple of 8 (vectors stay in a row), not a power of 2
  const std::size_t rows = large_n / cols + 2, n = rows * cols;
  const std::size_t edge = cuact::detail::flat_bias_chunk_rows(cols) * cols;  // second launch
  INFO("bias relu bf16 " << rows << " x " << cols << ", chunk edge at " << edge);
  std::vector<bf16> bias(cols);
  for (std::size_t c = 0; c < cols; ++c) bias[c] = hash_value<bf16>(seed + 1, c);
  device_memory d_bias(cols * sizeof(bf16));
  CUACT_CUDA_REQUIRE(
      cudaMemcpy(d_bias.get(), bias.data(), cols * sizeof(bf16), cudaMemcpyHostToDevice));
  CUACT_CUDA_REQUIRE(cudaMemset(out_base, 0xA5, (n + slack) * sizeof(bf16)));
  fill_hash(x, n, seed);
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  REQUIRE(cuact::bias_forward(cuact::relu{}, static_cast<const bf16*>(x), d_bias.get<bf16>(),
                              out_base, rows, cols) == cudaSuccess);
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  CUACT_CUDA_REQUIRE(cudaGetLastError());
  CHECK(guards_intact(out_base, 0, n));
  struct window {
    std::size_t start, count;
  };
  std::vector<window> windows = {{0, 65536}, {n - 65536, 65536}};
  if (edge < n) windows.push_back({edge - 32768, 65536});  // (not in a small rehearsal build)
  std::mt19937_64 rng(seed + 2);
  for (int k = 0; k < 256; ++k) windows.push_back({rng() % (n - 4096), 4096});
  const cuact::bias_op<cuact::relu, bf16> op{{}, {}};
  std::size_t bad = 0, checked = 0;
  std::string first;
  for (const auto [start, count] : windows) {
    std::vector<bf16> got(count);
    CUACT_CUDA_REQUIRE(
        cudaMemcpy(got.data(), out_base + start, count * sizeof(bf16), cudaMemcpyDeviceToHost));
    for (std::size_t j = 0; j < count; ++j) {
      const std::size_t i = start + j;
      const bf16 want =
          cuact::detail::from_compute<bf16>(op(cuact::detail::to_compute(hash_value<bf16>(seed, i)),
                                               cuact::detail::to_compute(bias[i % cols])));
      ++checked;
      if (!same_result(got[j], want) && bad++ == 0) {
        first = "element " + std::to_string(i) + " got " + describe(got[j]) + " expected " +
                describe(want);
      }
    }
  }
  CAPTURE(checked, first);
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("large arrays: 2^31 + 7 elements, byte offsets past 2^32", "[gpu][large]") {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUACT_CUDA_REQUIRE(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t need = (large_n + slack) * sizeof(float) + (std::size_t(512) << 20);
  if (free_bytes < need) {
    std::printf("SKIPPED: gpu_large needs %zu bytes of free device memory, %zu free\n", need,
                free_bytes);
    std::exit(77);
  }
  using bf16 = __nv_bfloat16;
  {
    device_memory a((large_n + slack) * sizeof(bf16)), b((large_n + slack) * sizeof(bf16));
    // co-aligned, 6 bytes past a 16-byte boundary: scalar head, vectors, scalar tail
    run_large("relu", cuact::relu{}, a.get<bf16>(), 3, b.get<bf16>(), 3, 1);
    // aligned: all vectors, a compute-heavy op
    run_large("selu", cuact::selu{}, a.get<bf16>(), 0, b.get<bf16>(), 0, 2);
    // in and out at different offsets: the scalar path, one work item per element
    run_large("relu", cuact::relu{}, a.get<bf16>(), 3, b.get<bf16>(), 1, 3);
  }
  {
    // bias + relu past 2^31 elements (2 x 4.3 GB): rows x cols exceeds large_n by under 2 rows
    const std::size_t elements = large_n + slack + 2 * 65544;
    device_memory a(elements * sizeof(bf16)), b(elements * sizeof(bf16));
    run_large_bias(a.get<bf16>(), b.get<bf16>(), 5);
  }
  {
    device_memory c((large_n + slack) * sizeof(float));
    run_large("relu", cuact::relu{}, c.get<float>(), 3, static_cast<float*>(nullptr), 0, 4);
  }
}
