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
  const mask_probe p(37);
  const std::size_t vectors = p.n / 4;
  float* const x = p.x;
  float* const y = p.y;
  std::uint32_t* const mask = p.mask;
  std::vector<V> vs = p.first_contestants();
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
  const std::size_t n = p.n;
  vs.push_back({"relu", [=] { CK(cuact::forward(cuact::relu{}, x, y, n)); }, {}});
  p.run(vs, relu_index);
  return 0;
}
