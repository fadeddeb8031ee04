// Arrays past 2^31 elements and 2^32 bytes: n = 2^31 + 7 for bf16 relu and selu (4.3 GB per
// array) and fp32 relu in place (8.6 GB), with misaligned pointers so byte offsets pass 2^32 (and
// 2^33) on the vector path, and a bf16 case on the scalar path (2^31 + 7 threads, more than
// INT_MAX). Inputs are filled on the device from a hash of the index (gpu_support.hpp's
// hash_bits), so the host computes the expected value of any element without copying the input;
// checked exactly: the first and last 64Ki elements, 2^20 random ones and a strided sample, the
// elements around each array (unchanged), and the input of out-of-place runs (unchanged).
//
// Needs about 9 GB of free device memory; with less it prints SKIPPED and exits 77.
#include <cstdlib>
#include <vector>

#include "gpu_support.hpp"

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

/// The bytes of [base, base + offset) and [base + offset + n, base + offset + n + slack) still
/// hold the 0xA5 the buffer was filled with.
template <class T>
bool guards_intact(const T* base, std::size_t offset, std::size_t n) {
  std::vector<unsigned char> before(offset * sizeof(T)), after((slack - offset) * sizeof(T));
  if (!before.empty())
    CUACT_CUDA_REQUIRE(cudaMemcpy(before.data(), base, before.size(), cudaMemcpyDeviceToHost));
  CUACT_CUDA_REQUIRE(cudaMemcpy(after.data(), base + offset + n, after.size(), cudaMemcpyDeviceToHost));
  const auto sentinel = [](unsigned char b) { return b == 0xA5; };
  return std::all_of(before.begin(), before.end(), sentinel) &&
         std::all_of(after.begin(), after.end(), sentinel);
}

/// One run: fills in[0, n) from the hash, poisons out, runs act, checks the sample.
/// out == nullptr means in place over in.
template <class T, class Act>
void run_large(const char* what, Act act, double (*reference)(double), int max_ulp, T* in_base,
               std::size_t in_offset, T* out_base, std::size_t out_offset, std::uint64_t seed) {
  const std::size_t n = large_n;
  const std::string type = type_name<T>();
  INFO(what << " " << type << " n=" << n << " in_offset=" << in_offset << " out_offset=" << out_offset
            << (out_base ? "" : " in place"));
  const std::size_t bytes = (n + slack) * sizeof(T);
  CUACT_CUDA_REQUIRE(cudaMemset(in_base, 0xA5, bytes));
  if (out_base) CUACT_CUDA_REQUIRE(cudaMemset(out_base, 0xA5, bytes));
  T* const in = in_base + in_offset;
  T* const out = out_base ? out_base + out_offset : in;
  fill_hash(in, n, seed);
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  const cudaError_t status = out_base ? cuact::forward(act, in, out, n) : cuact::forward(act, in, n);
  REQUIRE(status == cudaSuccess);
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  CUACT_CUDA_REQUIRE(cudaGetLastError());

  CHECK(guards_intact(in_base, in_offset, n));
  if (out_base) CHECK(guards_intact(out_base, out_offset, n));
  const std::vector<std::size_t> index = sample_indices(n, seed + 1);
  const std::vector<T> got = gather(out, index);
  const std::vector<T> input = out_base ? gather(static_cast<const T*>(in), index) : std::vector<T>();
  std::size_t bad = 0, changed = 0;
  std::string first;
  for (std::size_t k = 0; k < index.size(); ++k) {
    const T x = hash_value<T>(seed, index[k]);
    if (!input.empty() && bits_of(input[k]) != bits_of(x)) ++changed;
    if (!matches_strictly(got[k], reference(to_double(x)), max_ulp) && bad++ == 0) {
      first = "element " + std::to_string(index[k]) + ": x=" + describe(x) + " got " + describe(got[k]);
    }
  }
  CAPTURE(index.size(), first);
  CHECK(bad == 0);
  CHECK(changed == 0);
}

}  // namespace

TEST_CASE("large arrays: 2^31 + 7 elements, byte offsets past 2^32", "[gpu][large]") {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUACT_CUDA_REQUIRE(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t need = (large_n + slack) * sizeof(float) + (std::size_t(512) << 20);
  if (free_bytes < need) {
    std::printf("SKIPPED: gpu_large needs %zu bytes of free device memory, %zu free\n", need, free_bytes);
    std::exit(77);
  }
  using bf16 = __nv_bfloat16;
  {
    device_memory a((large_n + slack) * sizeof(bf16)), b((large_n + slack) * sizeof(bf16));
    // co-aligned, 6 bytes past a 16-byte boundary: scalar head, vectors, scalar tail
    run_large("relu", cuact::relu{}, relu_ref, 0, a.get<bf16>(), 3, b.get<bf16>(), 3, 1);
    // aligned: all vectors
    run_large("selu", cuact::selu{}, precise::selu, selu_max_ulp<bf16>(), a.get<bf16>(), 0, b.get<bf16>(), 0,
              2);
    // in and out at different offsets: the scalar path, one thread per element
    run_large("selu", cuact::selu{}, precise::selu, selu_max_ulp<bf16>(), a.get<bf16>(), 3, b.get<bf16>(), 1,
              3);
  }
  {
    device_memory c((large_n + slack) * sizeof(float));
    run_large("relu", cuact::relu{}, relu_ref, 0, c.get<float>(), 3, static_cast<float*>(nullptr), 0, 4);
  }
}
