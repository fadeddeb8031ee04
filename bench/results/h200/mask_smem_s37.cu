// Session 37 prototype: relu_forward_mask's fp32 forward with one 16-byte vector per thread and
// the mask bytes gathered in shared memory, so that each warp that stores stores whole 32-byte
// sectors. Session 35 (mask_store_s35.cu) found the library's two vectors per thread cost about
// 0.7% (its body without the mask ran at 0.992-0.994 x memcpy, relu's forward at 1.000) and a
// one-vector mapping whose warps each stored 16 mask bytes (half a sector) lost 3% (0.969).
// Here a block of B threads takes B consecutive vectors (B / 64 mask tiles of 32 bytes: the
// library's layout, byte j of a tile holding vector j's signs in bits 0-3 and vector j + 32's in
// bits 4-7), loads and stores its y vector as relu's forward does, writes its nibble to shared
// memory, and after one barrier:
// - smem_bytes<B>: threads 0 .. B/2 - 1 each store one mask byte (each warp a whole tile);
// - smem_words<B>: threads 0 .. B/8 - 1 each store one 4-byte word (the block's B/2 bytes by one
//   warp's first lanes).
// 'library' is cuact::relu_forward_mask, 'relu' cuact::forward(relu) (no mask) as a control.
// Each variant's y and mask are compared byte for byte with the library's. Round-robin (each
// timed call the third of three), GB/s (bytes read + written) over memcpy's in the same round.
// Built on the CPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results bench/results/h200/mask_smem_s37.cu
#include "proto_common.cuh"

enum class store { bytes, words };

template <int B, store S>
__global__ void __launch_bounds__(B)
    smem_kernel(const float* in, float* out, std::uint32_t* mask, std::size_t vectors) {
  __shared__ std::uint8_t nibbles[B];
  auto* const bytes_out = reinterpret_cast<std::uint8_t*>(mask);
  const std::size_t stride = std::size_t(gridDim.x) * B;
  // every block runs the same number of steps (vectors a multiple of B): the barrier is uniform
  for (std::size_t base = std::size_t(blockIdx.x) * B; base < vectors; base += stride) {
    const std::size_t i = base + threadIdx.x;
    const float4 v = reinterpret_cast<const float4*>(in)[i];
    const auto relu = [](float x) { return x > 0 ? x : (x == x ? 0.0f : x); };
    reinterpret_cast<float4*>(out)[i] = float4{relu(v.x), relu(v.y), relu(v.z), relu(v.w)};
    nibbles[threadIdx.x] =
        static_cast<std::uint8_t>(unsigned(v.x > 0) | unsigned(v.y > 0) << 1 |
                                  unsigned(v.z > 0) << 2 | unsigned(v.w > 0) << 3);
    __syncthreads();
    const auto byte_at = [&](unsigned k) {  // mask byte k of this block's B / 2
      const unsigned tile = k / 32, j = k % 32;
      return unsigned(nibbles[tile * 64 + j]) | unsigned(nibbles[tile * 64 + 32 + j]) << 4;
    };
    if constexpr (S == store::bytes) {
      if (threadIdx.x < B / 2) {
        bytes_out[base / 2 + threadIdx.x] = static_cast<std::uint8_t>(byte_at(threadIdx.x));
      }
    } else {
      if (threadIdx.x < B / 8) {
        const unsigned k = threadIdx.x * 4;
        mask[base / 8 + threadIdx.x] =
            byte_at(k) | byte_at(k + 1) << 8 | byte_at(k + 2) << 16 | byte_at(k + 3) << 24;
      }
    }
    __syncthreads();  // nibbles are rewritten by the next step
  }
}

int main() {
  const std::size_t n = std::size_t(4096) * 393216;  // a multiple of 1024: whole blocks only
  const std::size_t bytes = n / 8, vectors = n / 4;
  float *x, *y, *copy_src, *copy_dst;
  std::uint32_t* mask;
  const std::size_t moved = n * 8 + bytes;  // read x, write y and the mask
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, n * 4 + 64));
  CK(cudaMalloc(&mask, bytes));
  CK(cudaMalloc(&copy_src, moved / 2 + 64));
  CK(cudaMalloc(&copy_dst, moved / 2 + 64));
  fill_normal<<<4096, 256>>>(x, n, 37);
  fill_normal<<<4096, 256>>>(copy_src, moved / 8, 38);
  CK(cudaDeviceSynchronize());
  std::vector<V> vs;
  vs.push_back({"memcpy",
                [=] { cudaMemcpyAsync(copy_dst, copy_src, moved / 2, cudaMemcpyDeviceToDevice); },
                {}});
  vs.push_back({"library", [=] { CK(cuact::relu_forward_mask(x, y, mask, n)); }, {}});
  const auto blocks = [=](int b) { return static_cast<unsigned>(vectors / b); };
  vs.push_back({"bytes128",
                [=] { smem_kernel<128, store::bytes><<<blocks(128), 128>>>(x, y, mask, vectors); },
                {}});
  vs.push_back({"words128",
                [=] { smem_kernel<128, store::words><<<blocks(128), 128>>>(x, y, mask, vectors); },
                {}});
  vs.push_back({"bytes256",
                [=] { smem_kernel<256, store::bytes><<<blocks(256), 256>>>(x, y, mask, vectors); },
                {}});
  vs.push_back({"words256",
                [=] { smem_kernel<256, store::words><<<blocks(256), 256>>>(x, y, mask, vectors); },
                {}});
  vs.push_back({"words512",
                [=] { smem_kernel<512, store::words><<<blocks(512), 512>>>(x, y, mask, vectors); },
                {}});
  const std::size_t relu_index = vs.size();
  vs.push_back({"relu", [=] { CK(cuact::forward(cuact::relu{}, x, y, n)); }, {}});

  std::vector<V> mask_check(vs.begin() + 1, vs.begin() + relu_index);
  check_contestants(mask_check, 0, 1, mask, bytes, bytes, "mask");
  std::vector<V> y_check(vs.begin() + 1, vs.end());
  check_contestants(y_check, 0, 1, y, n * 4, 1 << 26, "y (last 64 MiB)");

  const int reps = 15;
  time_round_robin(vs, reps);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, fp32 n = 4096 x 393216, %d round-robin rounds, medians (min..max)\n", prop.name,
              reps);
  const double copy_gbs = double(moved) / med(vs[0].ms) / 1e6;
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const double b = i >= relu_index ? double(n) * 8 : double(moved);
    const auto [lo, hi] = std::minmax_element(vs[i].ms.begin(), vs[i].ms.end());
    const double gbs = b / med(vs[i].ms) / 1e6;
    std::printf("%-9s %.4f ms  %7.1f GB/s  x memcpy %.3f  (%.3f..%.3f)\n", vs[i].name.c_str(),
                med(vs[i].ms), gbs, gbs / copy_gbs, b / *hi / 1e6 / copy_gbs,
                b / *lo / 1e6 / copy_gbs);
  }
  return 0;
}
