// Session 34 prototype: min/max instructions for the clamping light ops. softshrink's 16-bit forward
// gained 1% on the H200 when its chain of compares and selects became one compare and one select
// (h200/softshrink_select_s34.txt); relu6, hardtanh, hardsigmoid and hardswish clamp with compares
// and selects too (their bf16 forwards 0.993-0.999x torch.compile in h200/torch_timing_s34.txt).
// Variants, each the same bits as the landed form for every 16-bit input (checked here on the GPU):
// - relu6, hardtanh, hardsigmoid: `min.NaN.f32` / `max.NaN.f32` (sm_80+: NaN in, NaN out), which a
//   plain fminf / fmaxf would drop;
// - hardswish: fminf / fmaxf, the NaN coming back through x * t.
// Round-robin (each timed call the third of three), x memcpy; relu as the control.
// It ran on the library of 60d821c, whose relu6, hardsigmoid and hardswish were the selects; since
// 939a217 they are the min / max forms (detail::clamp_keeping_nan), so a rebuild races like against
// like. Built on the CPU machine (helpers: ../proto_common.cuh, whose banner, rows and 16-bit
// comparison it ran with inline):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results bench/results/h200/light16_minmax_s34.cu
#include <cstring>

#include "proto_common.cuh"

__device__ __forceinline__ float max_nan(float a, float b) {
  float d;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}
__device__ __forceinline__ float min_nan(float a, float b) {
  float d;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
}

struct relu6_mm {
  static constexpr bool is_heavy = false;
  __device__ float operator()(float x) const { return min_nan(max_nan(x, 0.0f), 6.0f); }
};
struct hardtanh_mm {
  static constexpr bool is_heavy = false;
  double min_val = -1.0, max_val = 1.0;
  __device__ float operator()(float x) const {
    return min_nan(max_nan(x, float(min_val)), float(max_val));
  }
};
struct hardsigmoid_mm {
  static constexpr bool is_heavy = false;
  __device__ float operator()(float x) const {
    return min_nan(max_nan(x + 3.0f, 0.0f), 6.0f) * float(1.0 / 6);
  }
};
struct hardswish_mm {
  static constexpr bool is_heavy = false;
  __device__ float operator()(float x) const {
    return x * (fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) * float(1.0 / 6));
  }
};

template <class T>
void run(const char* name, std::size_t n, int reps) {
  T *x, *out, *copy_dst;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&out, n * sizeof(T)));
  CK(cudaMalloc(&copy_dst, n * sizeof(T)));
  fill_normal<<<4096, 256>>>(x, n, 11);
  CK(cudaDeviceSynchronize());
  std::vector<V> vs;
  vs.push_back({"memcpy",
                [=] { cudaMemcpyAsync(copy_dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice); },
                {}});
  const auto add = [&](const char* label, auto act) {
    vs.push_back({label, [=] { CK(cuact::forward(act, x, out, n)); }, {}});
  };
  add("relu", cuact::relu{});
  add("relu6", cuact::relu6{});
  add("relu6_mm", relu6_mm{});
  add("hardtanh", cuact::hardtanh{});
  add("hardtanh_mm", hardtanh_mm{});
  add("hardsigmoid", cuact::hardsigmoid{});
  add("hardsigmoid_mm", hardsigmoid_mm{});
  add("hardswish", cuact::hardswish{});
  add("hardswish_mm", hardswish_mm{});
  time_round_robin(vs, reps);
  print_ratios(name, vs);
  CK(cudaFree(x));
  CK(cudaFree(out));
  CK(cudaFree(copy_dst));
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 21;
  const std::size_t n = std::size_t(4096) * 393216;
  print_round_robin_banner(reps);
  compare_every_16bit_input<__nv_bfloat16>("bf16 relu6", cuact::relu6{}, relu6_mm{});
  compare_every_16bit_input<__nv_bfloat16>("bf16 hardtanh", cuact::hardtanh{}, hardtanh_mm{});
  compare_every_16bit_input<__nv_bfloat16>("bf16 hardsigmoid", cuact::hardsigmoid{},
                                           hardsigmoid_mm{});
  compare_every_16bit_input<__nv_bfloat16>("bf16 hardswish", cuact::hardswish{}, hardswish_mm{});
  compare_every_16bit_input<__half>("fp16 relu6", cuact::relu6{}, relu6_mm{});
  compare_every_16bit_input<__half>("fp16 hardtanh", cuact::hardtanh{}, hardtanh_mm{});
  compare_every_16bit_input<__half>("fp16 hardsigmoid", cuact::hardsigmoid{}, hardsigmoid_mm{});
  compare_every_16bit_input<__half>("fp16 hardswish", cuact::hardswish{}, hardswish_mm{});
  run<float>("warmup", n, 3);
  for (int sweep = 1; sweep <= 2; ++sweep) {
    run<__nv_bfloat16>("bf16", n, reps);
    run<__half>("fp16", n, reps);
  }
}
