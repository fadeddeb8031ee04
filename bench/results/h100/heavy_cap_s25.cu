// Session 25 experiment: the H100's heavy backwards (one pass, one vector, three arrays) launch as
// 1024-thread blocks at full residency (16 blocks of 128 threads' worth), 1.016-1.017 x memcpy in
// bf16, where CUB's bulk-copy kernel runs 1.029 and session 19 measured sigmoid bf16 at
// 1.023-1.025 with the residency capped (backward_residency.txt) but silu fp32 losing at 10 blocks.
// Here: the library's own kernel instantiation (with_launched_params' choice), one vector per
// thread, one pass, 128-thread blocks with the residency capped at R blocks by dynamic shared
// memory it does not use (launch.cuh: shared_bytes_for_resident_blocks), R = 10, 12, 14, 16,
// against cuact::backward as launched and cub::DeviceTransform with the same functor.
// Output: bench/results/h100/heavy_cap_s25.txt, `a.out 9`. Built on the CPU machine (helpers: ../proto_common.cuh):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include bench/results/h100/heavy_cap_s25.cu
#include <cuact/cuact.cuh>
#include "../proto_common.cuh"
#include <cub/device/device_transform.cuh>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

template <class T, class Act>
void run(const char* tname, const char* aname, Act act, void* xv, void* dyv, void* dxv, void* cv,
         std::size_t n, int reps) {
  T* x = static_cast<T*>(xv);
  T* dy = static_cast<T*>(dyv);
  T* dx = static_cast<T*>(dxv);
  T* copy_dst = static_cast<T*>(cv);
  constexpr int W = 16 / sizeof(T);
  using op_t = cuact::gradient_op<Act, T>;
  const op_t op{{}, act};
  const auto params =
      cd::make_params<W>(op, cuact::outputs(dx), n, cuact::inputs((const T*)x, (const T*)dy));
  cd::device_facts facts{};
  CK(cd::get_device_facts(0, facts));
  std::vector<V> vs;
  vs.push_back({"memcpy",
                [=] { cudaMemcpyAsync(copy_dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice); },
                {}});
  vs.push_back({"cuact", [=] { CK(cuact::backward(act, (const T*)x, (const T*)dy, dx, n)); }, {}});
  vs.push_back(
      {"cub",
       [=] {
         CK(cub::DeviceTransform::Transform(::cuda::std::make_tuple((const T*)x, (const T*)dy), dx,
                                            std::int64_t(n), cub_op<op_t, T>{op}));
       },
       {}});
  int regs = 0, own_blocks = 0;
  CK(cd::with_launched_params(params, 0, cd::declared_cost<Act>, [&](const auto& launched) {
    using P = std::decay_t<decltype(launched)>;
    const auto kernel = cd::elementwise_kernel<P>;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kernel));
    regs = fa.numRegs;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&own_blocks, kernel, 128, 0));
    for (unsigned r : {10u, 12u, 14u, 16u}) {
      const std::size_t smem =
          r >= unsigned(own_blocks) ? 0 : cd::shared_bytes_for_resident_blocks(facts, r);
      int got = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, kernel, 128, smem));
      P p = launched;
      p.vectors_per_thread = 1;
      const unsigned blocks = unsigned((p.vectors + 127) / 128);
      vs.push_back({"cap " + std::to_string(r) + " (" + std::to_string(got) + " blk/SM)",
                    [=] { kernel<<<blocks, 128, smem>>>(p); },
                    {}});
    }
    return cudaSuccess;
  }));
  std::vector<T> ref(1 << 22), got(1 << 22);
  vs[1].f();
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(ref.data(), dx + n - ref.size(), ref.size() * sizeof(T), cudaMemcpyDeviceToHost));
  for (std::size_t i = 2; i < vs.size(); ++i) {
    CK(cudaMemset(dx, 0xff, n * sizeof(T)));
    vs[i].f();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), dx + n - got.size(), got.size() * sizeof(T), cudaMemcpyDeviceToHost));
    if (std::memcmp(got.data(), ref.data(), got.size() * sizeof(T)) != 0)
      std::printf("  %s: DIFFERS from cuact\n", vs[i].name.c_str());
  }
  time_round_robin(vs, reps);
  const double copy_bps = 2.0 * n * sizeof(T) / med(vs[0].ms);
  std::printf("%-10s %s backward (%d regs, %d blk/SM):", aname, tname, regs, own_blocks);
  for (std::size_t i = 1; i < vs.size(); ++i) {
    std::printf("  %s %.3f", vs[i].name.c_str(), 3.0 * n * sizeof(T) / med(vs[i].ms) / copy_bps);
  }
  std::printf("\n");
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 9;
  const std::size_t n = std::size_t(4096) * 393216;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, n = 4096 x 393216, %d round-robin rounds, medians, x memcpy\n", prop.name, reps);
  void *x, *dy, *dx, *c;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&dy, n * 4));
  CK(cudaMalloc(&dx, n * 4));
  CK(cudaMalloc(&c, n * 4));
  auto both = [&](const char* name, auto act) {
    fill_normal<<<4096, 256>>>(static_cast<float*>(x), n, 1);
    fill_normal<<<4096, 256>>>(static_cast<float*>(dy), n, 2);
    run<float>("fp32", name, act, x, dy, dx, c, n, reps);
    fill_normal<<<4096, 256>>>(static_cast<__nv_bfloat16*>(x), n, 1);
    fill_normal<<<4096, 256>>>(static_cast<__nv_bfloat16*>(dy), n, 2);
    run<__nv_bfloat16>("bf16", name, act, x, dy, dx, c, n, reps);
  };
  both("sigmoid", cuact::sigmoid{});
  both("silu", cuact::silu{});
  both("gelu", cuact::gelu{});
  both("gelu_tanh", cuact::gelu_tanh{});
  both("tanh", cuact::tanh{});
  both("elu", cuact::elu{});
  both("selu", cuact::selu{});
  both("mish", cuact::mish{});
  both("softplus", cuact::softplus{});
  both("logsigmoid", cuact::logsigmoid{});
}
