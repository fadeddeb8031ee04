// Session 38 diagnostic: is the 16-bit relu_forward_mask's 0.987-0.988 x memcpy (mask16_s38.txt,
// every launch and store variant alike) the cost of its traffic mix rather than of its kernel? Per
// 8 bf16 elements it reads 16 bytes and writes 17 (the mask byte), where memcpy reads and writes
// equal bytes. Four copy kernels with no arithmetic, one 16-byte vector per thread in 128-thread
// blocks, one pass (the library's shape), over 4096 x 393216 bf16 (6.4 GB in, 6.4 GB out):
// - r16w16: the vector copied (relu's traffic);
// - r16w17: copied, and one byte per vector (its first byte) stored to a third array, a warp's 32
//   bytes side by side (the mask forward's traffic);
// - r17w16: copied, one byte per vector loaded from a third array and added into the copy's first
//   byte (the same excess, read instead of written);
// - r17w17: both (reads and writes equal again, with byte-sized accesses).
// Each against cudaMemcpyAsync of the same total bytes (half read, half written), round-robin
// (each timed call the third of three), 15 rounds, twice. Built on the CPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results bench/results/h200/mask_ceiling_s38.cu
#include "proto_common.cuh"

template <bool ReadByte, bool WriteByte>
__global__ void __launch_bounds__(128)
    copy_kernel(const uint4* in, uint4* out, const std::uint8_t* extra_in,
                std::uint8_t* extra_out) {
  const std::size_t i = std::size_t(blockIdx.x) * 128 + threadIdx.x;
  uint4 v = in[i];
  if constexpr (ReadByte) v.x += extra_in[i];
  out[i] = v;
  if constexpr (WriteByte) extra_out[i] = static_cast<std::uint8_t>(v.x);
}

int main() {
  const std::size_t vectors = std::size_t(4096) * 393216 / 8, bytes = vectors * 16;
  uint4 *x, *y;
  std::uint8_t *bx, *by;
  char *src, *dst;
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  CK(cudaMalloc(&bx, vectors));
  CK(cudaMalloc(&by, vectors));
  CK(cudaMalloc(&src, bytes + vectors));
  CK(cudaMalloc(&dst, bytes + vectors));
  fill_normal<<<4096, 256>>>(reinterpret_cast<float*>(x), bytes / 4, 38);
  fill_normal<<<4096, 256>>>(reinterpret_cast<float*>(bx), vectors / 4, 39);
  fill_normal<<<4096, 256>>>(reinterpret_cast<float*>(src), (bytes + vectors) / 4, 40);
  CK(cudaDeviceSynchronize());
  const unsigned blocks = static_cast<unsigned>(vectors / 128);
  std::vector<V> vs;
  // memcpy of 2 x (bytes + vectors / 2): the mean of the four kernels' totals is 2 x bytes + vectors
  vs.push_back({"memcpy",
                [=] { cudaMemcpyAsync(dst, src, bytes + vectors / 2, cudaMemcpyDeviceToDevice); },
                {}});
  vs.push_back({"r16w16", [=] { copy_kernel<false, false><<<blocks, 128>>>(x, y, bx, by); }, {}});
  vs.push_back({"r16w17", [=] { copy_kernel<false, true><<<blocks, 128>>>(x, y, bx, by); }, {}});
  vs.push_back({"r17w16", [=] { copy_kernel<true, false><<<blocks, 128>>>(x, y, bx, by); }, {}});
  vs.push_back({"r17w17", [=] { copy_kernel<true, true><<<blocks, 128>>>(x, y, bx, by); }, {}});
  for (int run = 0; run < 2; ++run) {
    for (auto& v : vs) v.ms.clear();
    time_round_robin(vs, 15);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf(
        "%s, 4096 x 393216 bf16 (%zu 16-byte vectors), 15 round-robin rounds, medians (min..max)\n",
        prop.name, vectors);
    print_gbs_against_copy(vs, [=](std::size_t i) {
      return i == 0 ? 2 * bytes + vectors : 2 * bytes + vectors * ((i - 1) / 2 + (i - 1) % 2);
    });
  }
  return 0;
}
