// Session 38 prototype: the bf16 tanh forward, the H200's one --family row below CUB since session
// 33 at 0.998-1.000 (h200/family.txt: 4258.5 against CUB's 4259.1 GB/s, fp16 tanh 4283.1 in the
// same launch, 786432 blocks x 128 threads x 2 passes as a heavy 16-bit op). Its bf16 math is one
// tanh.approx.f32 (math.cuh: tanh_), so it may do better in a light op's launch. Contestants:
// memcpy, cuact (cuact::forward(tanh)), cub (cub::DeviceTransform, cuact's functor), light
// (cuact::forward of tanh wrapped to declare is_heavy = false: the light launch, one pass of one
// vector per thread), relu (cuact::forward(relu), light, a control). bf16 then fp16, 4096 x
// 393216, x standard normal; every contestant's output checked against cuact's byte for byte
// (relu excepted). Round-robin (each timed call the third of three), 15 rounds, twice.
// Built on the CPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results bench/results/h200/tanh_bf16_s38.cu
#include "proto_common.cuh"

struct light_tanh {
  static constexpr bool is_heavy = false;
  template <class C, class R = cuact::rounded_to<C>>
  __host__ __device__ C operator()(C x, R r = {}) const {
    return cuact::tanh{}(x, r);
  }
};

template <class T>
void probe(const char* type, unsigned seed) {
  const std::size_t n = std::size_t(4096) * 393216;
  T *x, *y, *dst;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&y, n * sizeof(T)));
  CK(cudaMalloc(&dst, n * sizeof(T)));
  fill_normal<<<4096, 256>>>(x, n, seed);
  CK(cudaDeviceSynchronize());
  std::vector<V> vs = forward_references<cuact::tanh>(x, y, dst, n);
  vs.push_back({"light", [=] { CK(cuact::forward(light_tanh{}, x, y, n)); }, {}});
  check_contestants(vs, 1, 2, y, n * sizeof(T), n * sizeof(T), type);
  vs.push_back({"relu", [=] { CK(cuact::forward(cuact::relu{}, x, y, n)); }, {}});
  for (int run = 0; run < 2; ++run) {
    for (auto& v : vs) v.ms.clear();
    time_round_robin(vs, 15);
    print_round_robin_banner(15);
    print_ratios(type, vs);
  }
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(dst));
}

int main() {
  probe<__nv_bfloat16>("bf16", 38);
  probe<__half>("fp16", 39);
  return 0;
}
