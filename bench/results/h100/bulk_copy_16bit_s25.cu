// Session 25 prototype: where CUB's 16-bit kernels gain 0.4-1% over cuact's on the H100
// (family.txt: bf16/fp16 forwards cuact 3026-3028 GB/s, CUB 3038-3054; backwards 3080-3082 against
// 3085-3112). CUB 3.0.1 on sm_90: 256-thread blocks, one tile per block brought into shared memory
// by cp.async.bulk (an mbarrier), then each thread computes items j * 256 + tid and stores them one
// element at a time (2-byte stores for bf16). Contestants: cuact, CUB, plain tiles (16-byte loads
// of V vectors per thread, then compute and 16-byte stores), bulk-copy tiles with 16-byte stores
// from shared memory, and bulk-copy tiles with CUB's element stores.
// Output: bench/results/h100/bulk_copy_16bit_s25.txt, `a.out 9`. Built on the CPU machine (helpers: ../proto_common.cuh):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include bench/results/h100/bulk_copy_16bit_s25.cu
#include <cuact/cuact.cuh>
#include "../proto_common.cuh"
#include <cub/device/device_transform.cuh>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using bf16 = __nv_bfloat16;

// 8 bf16 lanes in a uint4 -> op -> uint4
template <class Op, class... W>
__device__ __forceinline__ uint4 apply8(const Op& op, const W&... words) {
  uint4 r;
  bf16* out = reinterpret_cast<bf16*>(&r);
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    out[j] =
        cd::from_compute<bf16>(op(cd::to_compute(reinterpret_cast<const bf16*>(&words)[j])...));
  }
  return r;
}

// plain tiles: Threads x V vectors per block, loads first
template <int Threads, int V, class Op, class... In>
__global__ void __launch_bounds__(Threads) plain_tile(Op op, bf16* out, const In*... in) {
  const std::size_t base = std::size_t(blockIdx.x) * Threads * V;  // in vectors of 8
  uint4 w[sizeof...(In)][V];
  const bf16* ins[] = {in...};
#pragma unroll
  for (int k = 0; k < int(sizeof...(In)); ++k)
#pragma unroll
    for (int j = 0; j < V; ++j)
      w[k][j] = reinterpret_cast<const uint4*>(ins[k])[base + j * Threads + threadIdx.x];
#pragma unroll
  for (int j = 0; j < V; ++j) {
    uint4 r;
    if constexpr (sizeof...(In) == 1)
      r = apply8(op, w[0][j]);
    else
      r = apply8(op, w[0][j], w[1][j]);
    reinterpret_cast<uint4*>(out)[base + j * Threads + threadIdx.x] = r;
  }
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// bulk-copy tiles: Threads x V vectors of 8 per input per block; ScalarStores: CUB's element stores
template <int Threads, int V, bool ScalarStores, class Op, class... In>
__global__ void __launch_bounds__(Threads) bulk_tile(Op op, bf16* out, const In*... in) {
  constexpr int n_in = sizeof...(In);
  constexpr unsigned tile_bytes = Threads * V * 16;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) std::uint64_t bar;
  const std::size_t base_elem = std::size_t(blockIdx.x) * Threads * V * 8;
  const bf16* ins[] = {in...};
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&bar)),
                 "r"(tile_bytes * n_in)
                 : "memory");
#pragma unroll
    for (int k = 0; k < n_in; ++k) {
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
              "r"(smem_addr(smem + k * tile_bytes)),
          "l"(ins[k] + base_elem), "r"(tile_bytes), "r"(smem_addr(&bar))
          : "memory");
    }
  }
  __syncthreads();  // the barrier initialized before anyone waits on it
  asm volatile(
      "{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra "
      "WAIT_%=;\n}" ::"r"(smem_addr(&bar))
      : "memory");
  if constexpr (!ScalarStores) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const int v = j * Threads + threadIdx.x;
      uint4 r;
      const uint4 a = reinterpret_cast<const uint4*>(smem)[v];
      if constexpr (n_in == 1) {
        r = apply8(op, a);
      } else {
        const uint4 b = reinterpret_cast<const uint4*>(smem + tile_bytes)[v];
        r = apply8(op, a, b);
      }
      reinterpret_cast<uint4*>(out + base_elem)[v] = r;
    }
  } else {
#pragma unroll
    for (int j = 0; j < V * 8; ++j) {
      const int e = j * Threads + threadIdx.x;
      const bf16 a = reinterpret_cast<const bf16*>(smem)[e];
      float r;
      if constexpr (n_in == 1) {
        r = op(cd::to_compute(a));
      } else {
        const bf16 b = reinterpret_cast<const bf16*>(smem + tile_bytes)[e];
        r = op(cd::to_compute(a), cd::to_compute(b));
      }
      out[base_elem + e] = cd::from_compute<bf16>(r);
    }
  }
}

template <class Op, class... In>
void run(const char* title, Op op, std::function<void()> library, double arrays, bf16* out,
         bf16* copy_dst, std::size_t n, int reps, const In*... in) {
  std::vector<V> vs;
  const bf16* x0 = std::get<0>(std::tuple<const In*...>{in...});
  vs.push_back(
      {"memcpy", [=] { cudaMemcpyAsync(copy_dst, x0, n * 2, cudaMemcpyDeviceToDevice); }, {}});
  vs.push_back({"cuact", library, {}});
  vs.push_back({"cub",
                [=] {
                  CK(cub::DeviceTransform::Transform(::cuda::std::make_tuple(in...), out,
                                                     std::int64_t(n), cub_op<Op, bf16>{op}));
                },
                {}});
  auto plain = [&](auto t, auto v) {
    constexpr int T = decltype(t)::value, VV = decltype(v)::value;
    if (n % (T * VV * 8)) return;
    vs.push_back({"plain " + std::to_string(T) + "x" + std::to_string(VV),
                  [=] { plain_tile<T, VV><<<unsigned(n / (T * VV * 8)), T>>>(op, out, in...); },
                  {}});
  };
  auto bulk = [&](auto t, auto v, auto scalar) {
    constexpr int T = decltype(t)::value, VV = decltype(v)::value;
    constexpr bool S = decltype(scalar)::value;
    if (n % (T * VV * 8)) return;
    const int smem = T * VV * 16 * int(sizeof...(In));
    const auto kernel = bulk_tile<T, VV, S, Op, In...>;
    if (smem > 48 * 1024)
      CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int fit = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, T, smem));
    vs.push_back({std::string("bulk ") + (S ? "elem-store " : "vec-store ") + std::to_string(T) +
                      "x" + std::to_string(VV) + " (" + std::to_string(fit) + " blk/SM)",
                  [=] { kernel<<<unsigned(n / (T * VV * 8)), T, smem>>>(op, out, in...); },
                  {}});
  };
  using std::integral_constant;
  plain(integral_constant<int, 128>{}, integral_constant<int, 1>{});
  plain(integral_constant<int, 256>{}, integral_constant<int, 2>{});
  plain(integral_constant<int, 128>{}, integral_constant<int, 2>{});
  bulk(integral_constant<int, 256>{}, integral_constant<int, 1>{}, std::false_type{});
  bulk(integral_constant<int, 256>{}, integral_constant<int, 2>{}, std::false_type{});
  bulk(integral_constant<int, 256>{}, integral_constant<int, 4>{}, std::false_type{});
  bulk(integral_constant<int, 128>{}, integral_constant<int, 4>{}, std::false_type{});
  bulk(integral_constant<int, 256>{}, integral_constant<int, 2>{}, std::true_type{});
  bulk(integral_constant<int, 256>{}, integral_constant<int, 4>{}, std::true_type{});
  // checks: every contestant's output bit-identical to cuact's on the last 2^22 elements
  std::vector<std::uint16_t> ref(1 << 22), got(1 << 22);
  library();
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(ref.data(), out + n - ref.size(), ref.size() * 2, cudaMemcpyDeviceToHost));
  for (std::size_t i = 2; i < vs.size(); ++i) {
    CK(cudaMemset(out, 0xff, n * 2));
    vs[i].f();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), out + n - got.size(), got.size() * 2, cudaMemcpyDeviceToHost));
    if (got != ref) std::printf("  %s: DIFFERS from cuact\n", vs[i].name.c_str());
  }
  time_round_robin(vs, reps);
  const double copy = med(vs[0].ms);
  std::printf("%s (memcpy %.1f GB/s)\n", title, 2.0 * n * 2 / copy / 1e6);
  for (std::size_t i = 1; i < vs.size(); ++i) {
    auto m = vs[i].ms;
    std::sort(m.begin(), m.end());
    const double bytes = arrays * n * 2;
    std::printf("  %-34s %7.4f ms  %7.1f GB/s  x memcpy %.3f (%.3f..%.3f)\n", vs[i].name.c_str(),
                med(m), bytes / med(m) / 1e6, bytes / med(m) / (2.0 * n * 2 / copy),
                bytes / m.back() / (2.0 * n * 2 / copy), bytes / m.front() / (2.0 * n * 2 / copy));
  }
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 9;
  const std::size_t n = std::size_t(4096) * 393216;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, bf16, n = 4096 x 393216, %d round-robin rounds, medians (min..max)\n", prop.name,
              reps);
  bf16 *x, *dy, *out, *copy_dst;
  CK(cudaMalloc(&x, n * 2));
  CK(cudaMalloc(&dy, n * 2));
  CK(cudaMalloc(&out, n * 2));
  CK(cudaMalloc(&copy_dst, n * 2));
  fill_normal<<<4096, 256>>>(x, n, 1);
  fill_normal<<<4096, 256>>>(dy, n, 2);
  CK(cudaDeviceSynchronize());
  const cuact::forward_op<cuact::relu, bf16> relu_op{{}, cuact::relu{}};
  run(
      "relu forward", relu_op, [=] { CK(cuact::forward(cuact::relu{}, x, out, n)); }, 2, out,
      copy_dst, n, reps, (const bf16*)x);
  const cuact::forward_op<cuact::silu, bf16> silu_op{{}, cuact::silu{}};
  run(
      "silu forward", silu_op, [=] { CK(cuact::forward(cuact::silu{}, x, out, n)); }, 2, out,
      copy_dst, n, reps, (const bf16*)x);
  const cuact::gradient_op<cuact::sigmoid, bf16> sig_op{{}, cuact::sigmoid{}};
  run(
      "sigmoid backward", sig_op, [=] { CK(cuact::backward(cuact::sigmoid{}, x, dy, out, n)); }, 3,
      out, copy_dst, n, reps, (const bf16*)x, (const bf16*)dy);
  const cuact::gradient_op<cuact::relu, bf16> relub_op{{}, cuact::relu{}};
  run(
      "relu backward", relub_op, [=] { CK(cuact::backward(cuact::relu{}, x, dy, out, n)); }, 3, out,
      copy_dst, n, reps, (const bf16*)x, (const bf16*)dy);
}
