// Session 41 prototype: bf16 -> fp8 e4m3 quantize (+ amax) launch shapes on this GPU, against memcpy of
// the same bytes (3 per element) and against forward_cast (no amax). Round-robin, median of 7 per round.
#include <cuact/cuact.cuh>
#include <cuda_bf16.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <functional>
#include <string>

#define CK(x)                                              \
  do {                                                     \
    cudaError_t s_ = (x);                                  \
    if (s_ != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(s_)); \
      std::exit(1);                                        \
    }                                                      \
  } while (0)

__global__ void fill(__nv_bfloat16* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(i >> 13) * 40503u;
    float u = ((h >> 8) & 0xffff) / 65536.0f - 0.5f;
    p[i] = __float2bfloat16(u * 6.0f + 1e-3f);
  }
}

float time_ms(const std::function<void()>& f, int reps = 7) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  f();
  CK(cudaDeviceSynchronize());
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

namespace cd = cuact::detail;

// run_quantize with a given shape (threads, vectors per thread, passes); 0s: the library's own model
template <int W, class Act, class T, class U>
void quantize_shape(Act act, const T* in, U* out, size_t n, const float* scale, float* amax,
                    unsigned threads, unsigned vpt, unsigned passes,
                    cd::launch_shape* shown = nullptr) {
  auto op = cd::amax_op<Act, U>{{}, act, 1.0f, nullptr};
  auto ep = cd::make_params<W>(op, cd::output_arrays<U>{{out}}, n, cd::input_arrays<T>{{in}});
  using P = cd::quantize_params<decltype(ep)>;
  int device = 0;
  CK(cudaGetDevice(&device));
  cd::launch_shape shape{};
  CK(cd::model_shape(cd::quantize_kernel<decltype(ep)>, device, cd::declared_cost<Act>, ep, 1,
                     shape, 1));
  if (shape.blocks >= 4 * cd::quantize_min_blocks) {
    shape.blocks = (shape.blocks + 3) / 4;
    shape.passes *= 4;
  }
  if (threads) {
    shape.threads_per_block = threads;
    shape.vectors_per_thread = vpt;
    shape.passes = passes;
    const size_t vectors = (n + W - 1) / W;
    const size_t per_block = (size_t)threads * vpt * passes;
    shape.blocks = (unsigned)((vectors + per_block - 1) / per_block);
    shape.dynamic_shared_bytes = 0;
  }
  if (shown) *shown = shape;
  ep.vectors_per_thread = shape.vectors_per_thread;
  CK(cudaMemsetAsync(amax, 0, 4));
  CK(cd::launch_kernel(cd::quantize_kernel<decltype(ep)>, P{ep, amax, scale}, shape, nullptr));
}

int main() {
  const size_t n = size_t(4096) * 393216;
  __nv_bfloat16* x;
  __nv_fp8_e4m3* q;
  float* s;
  void* c1;
  void* c2;
  CK(cudaMalloc(&x, n * 2));
  CK(cudaMalloc(&q, n));
  CK(cudaMalloc(&s, 8));
  CK(cudaMalloc(&c1, n * 3 / 2 + 256));
  CK(cudaMalloc(&c2, n * 3 / 2 + 256));
  fill<<<4096, 256>>>(x, n);
  CK(cudaGetLastError());
  const float four = 4.0f;
  CK(cudaMemcpy(s, &four, 4, cudaMemcpyHostToDevice));
  float* amax = s + 1;
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %zu elements bf16 -> e4m3, 3 bytes each\n", prop.name, n);
  struct variant {
    std::string name;
    std::function<void()> run;
  };
  std::vector<variant> vs;
  vs.push_back({"memcpy 3n bytes",
                [&] { CK(cudaMemcpyAsync(c1, c2, n * 3 / 2, cudaMemcpyDeviceToDevice)); }});
  auto add = [&](const char* act_name, auto act) {
    using A = decltype(act);
    cd::launch_shape shown{};
    quantize_shape<8>(act, x, q, n, s, amax, 0, 0, 0, &shown);
    std::printf("%s library shape: %u blocks x %u threads, %u vectors/thread, %u passes\n",
                act_name, shown.blocks, shown.threads_per_block, shown.vectors_per_thread,
                shown.passes);
    vs.push_back({std::string(act_name) + " library",
                  [=] { CK(cuact::forward_quantize(act, x, q, n, s, amax)); }});
    vs.push_back({std::string(act_name) + " cast (no amax)",
                  [=] { CK(cuact::forward_cast(act, x, q, n)); }});
    vs.push_back({std::string(act_name) + " W16 library model",
                  [=] { quantize_shape<16>(act, x, q, n, s, amax, 0, 0, 0); }});
    for (unsigned threads : {128u, 256u, 512u})
      for (unsigned vpt : {1u, 2u})
        for (unsigned passes : {1u, 2u, 4u, 8u}) {
          char name[96];
          std::snprintf(name, sizeof name, "%s W8 %u thr %u vec %u pass", act_name, threads, vpt,
                        passes);
          vs.push_back(
              {name, [=] { quantize_shape<8>(act, x, q, n, s, amax, threads, vpt, passes); }});
        }
    (void)sizeof(A);
  };
  add("relu", cuact::relu{});
  add("silu", cuact::silu{});
  add("gelu", cuact::gelu{});
  std::vector<std::vector<float>> times(vs.size());
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < vs.size(); ++i) times[i].push_back(time_ms(vs[i].run));
  std::vector<float> copy = times[0];
  for (size_t i = 0; i < vs.size(); ++i) {
    std::printf("%-40s", vs[i].name.c_str());
    for (int r = 0; r < 3; ++r) std::printf("  %7.3f ms %5.3f", times[i][r], copy[r] / times[i][r]);
    std::printf("\n");
  }
  return 0;
}
