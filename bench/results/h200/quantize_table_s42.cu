// Session 42 prototype: bf16 -> fp8 e4m3 quantize (+ amax, device scale) through a float table of
// the activation (kernels/table.cuh: bf16_float_table) against the direct path, launch shapes of the
// tabulated kernel, and forward_cast bf16 -> e4m3 in 8- vs 16-element vectors. Memcpy of the same
// bytes (3 per element). Round-robin rounds, median of 7 per variant per round. Also checks that
// the tabulated path writes the direct path's bytes and amax.
#include <cuact/cuact.cuh>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstring>
#include <vector>
#include <algorithm>
#include <functional>
#include <string>
#include "../../tests/common/plain_functors.hpp"

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

__global__ void to_half(const __nv_bfloat16* in, __half* out, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = __float2half(__bfloat162float(in[i]));
}

__global__ void with_zeros(const __nv_bfloat16* in, __nv_bfloat16* out, size_t n, size_t every) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = i % every == 7 ? __float2bfloat16(0.0f) : in[i];
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
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return t[t.size() / 2];
}

namespace cd = cuact::detail;
using bf16 = __nv_bfloat16;
using fp8 = __nv_fp8_e4m3;

// the direct path (the library before this session)
template <class Act>
void direct(Act act, const bf16* in, fp8* out, size_t n, const float* scale, float* amax) {
  CK((cd::run_quantize<cuact::auto_width, cd::forward_cost<Act> == cd::cost_hint::compute_bound>(
      cd::amax_op<Act, fp8>{{}, act, 1.0f, nullptr}, out, n, in, amax, scale, true, nullptr,
      cd::declared_cost<Act>)));
}

// the tabulated path with a given shape (threads, vectors per thread, passes), vector width W
// the table op with up to K vectors in flight per thread (the engine's cap is 1 for 32-byte vectors)
template <class Op, int K>
struct k_vectors : Op {
  static constexpr int max_vectors_per_thread = K;
};

template <int W, class Act, int K = 1>
void tabulated(Act act, const bf16* in, fp8* out, size_t n, const float* scale, float* amax,
               unsigned threads, unsigned vpt, unsigned passes) {
  using base_op = cd::bf16_table_quantize_op<cuact::forward_op<Act, fp8>, fp8>;
  using table_op = std::conditional_t<K == 1, base_op, k_vectors<base_op, K>>;
  table_op op{};
  op.fn = {{}, act};
  int device = 0;
  CK(cudaGetDevice(&device));
  float* entries = nullptr;
  CK(cd::get_table_buffer(op.fn, device, nullptr, entries));
  auto ep = cd::make_params<W>(op, cd::output_arrays<fp8>{{out}}, n, cd::input_arrays<bf16>{{in}});
  cd::launch_shape shape =
      cd::fixed_launch_shape(ep.vectors, ep.head + ep.tail, threads, vpt, passes == 0 ? 1 : passes);
  if (passes == 0) {  // persistent: every block resident at once, one table copy each
    static int per_sm[2][3] = {};
    int& blocks_per_sm = per_sm[W == 16][threads / 256];
    if (blocks_per_sm == 0)
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &blocks_per_sm, cd::tabulated_quantize_kernel<decltype(ep)>, threads,
          cd::bf16_table_window::bytes_of<float>));
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    shape.blocks = static_cast<unsigned>(sms * blocks_per_sm);
    static bool shown[2][3] = {};
    if (!shown[W == 16][threads / 256]) {
      shown[W == 16][threads / 256] = true;
      std::printf("persistent W%d %u threads: %d blocks per SM, %u blocks\n", W, threads,
                  blocks_per_sm, shape.blocks);
    }
  }
  ep.vectors_per_thread = shape.vectors_per_thread;
  CK(cudaMemsetAsync(amax, 0, 4));
  CK(cd::launch_tabulated_quantize(cd::quantize_params<decltype(ep)>{ep, amax, scale}, entries,
                                   shape, nullptr));
}

// forward_cast bf16 -> fp8 in W-element vectors, the library's launch model
template <int W, class Act>
void cast(Act act, const bf16* in, fp8* out, size_t n) {
  auto ep = cd::make_params<W>(cuact::forward_op<Act, fp8>{{}, act}, cd::output_arrays<fp8>{{out}},
                               n, cd::input_arrays<bf16>{{in}});
  int device = 0;
  CK(cudaGetDevice(&device));
  cd::launch_shape shape{};
  CK(cd::model_shape(cd::elementwise_kernel<decltype(ep)>, device, cd::declared_cost<Act>, ep, 1,
                     shape));
  ep.vectors_per_thread = shape.vectors_per_thread;
  CK(cd::launch_kernel(cd::elementwise_kernel<decltype(ep)>, ep, shape, nullptr));
}

template <class Act>
void check_same(const char* name, Act act, const bf16* in, fp8* out, size_t n, const float* scale,
                float* amax) {
  std::vector<unsigned char> a(n), b(n);
  float am_a = 0, am_b = 0;
  direct(act, in, out, n, scale, amax);
  CK(cudaMemcpy(a.data(), out, n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&am_a, amax, 4, cudaMemcpyDeviceToHost));
  CK(cudaMemset(out, 0x5a, n));
  CK(cuact::forward_quantize(act, in, out, n, scale, amax));
  CK(cudaMemcpy(b.data(), out, n, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&am_b, amax, 4, cudaMemcpyDeviceToHost));
  size_t diff = 0;
  for (size_t i = 0; i < n; ++i) diff += a[i] != b[i];
  std::printf("check %-10s library vs direct: %zu of %zu bytes differ, amax %.9g vs %.9g (%s)\n",
              name, diff, n, am_b, am_a, am_a == am_b ? "same" : "DIFFERENT");
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  const size_t n = size_t(4096) * 393216;
  bf16* x;
  fp8* q;
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
  std::printf("%s, %zu elements bf16 -> e4m3 (device scale 4), 3 bytes each\n", prop.name, n);
  check_same("gelu", cuact::gelu{}, x, q, n, s, amax);
  check_same("gelu_tanh", cuact::gelu_tanh{}, x, q, n, s, amax);
  check_same("silu", cuact::silu{}, x, q, n, s, amax);
  check_same("softplus*", cuact_test::plain::softplus{}, x, q, n, s, amax);
  struct variant {
    std::string name;
    std::function<void()> run;
  };
  std::vector<variant> vs;
  vs.push_back({"memcpy 3n bytes",
                [&] { CK(cudaMemcpyAsync(c1, c2, n * 3 / 2, cudaMemcpyDeviceToDevice)); }});
  auto add = [&](const char* act_name, auto act, bool sweep) {
    vs.push_back({std::string(act_name) + " direct", [=] { direct(act, x, q, n, s, amax); }});
    vs.push_back({std::string(act_name) + " library",
                  [=] { CK(cuact::forward_quantize(act, x, q, n, s, amax)); }});
    if (!sweep) return;
    for (unsigned threads : {256u, 512u})
      for (unsigned vpt : {1u, 2u})
        for (unsigned passes : {0u, 8u, 16u, 32u}) {
          char name[96];
          std::snprintf(name, sizeof name, "%s table W16 %u thr %u vec %u pass (0: persistent)",
                        act_name, threads, vpt, passes);
          vs.push_back({name, [=] { tabulated<16>(act, x, q, n, s, amax, threads, vpt, passes); }});
        }
    for (unsigned passes : {1u, 4u}) {
      char name[96];
      std::snprintf(name, sizeof name, "%s table W8 256 thr 2 vec %u pass", act_name, passes);
      vs.push_back({name, [=] { tabulated<8>(act, x, q, n, s, amax, 256, 2, passes); }});
    }
  };
  const bool sweep =
      !(argc > 2 && (std::string(argv[2]) == "nosweep" || std::string(argv[2]) == "twovec" ||
                     std::string(argv[2]) == "extra"));
  add("gelu", cuact::gelu{}, sweep);
  add("silu", cuact::silu{}, sweep);
  if (argc > 2 && std::string(argv[2]) == "extra") {
    // inputs with exact zeros (outside the table's window: their vectors go lane by lane), and
    // fp16 inputs (never tabulated), against the same memcpy
    static __half* h = nullptr;
    static __nv_bfloat16* z1 = nullptr;
    static __nv_bfloat16* z10 = nullptr;
    CK(cudaMalloc(&h, n * 2));
    CK(cudaMalloc(&z1, n * 2));
    CK(cudaMalloc(&z10, n * 2));
    to_half<<<4096, 256>>>(x, h, n);
    with_zeros<<<4096, 256>>>(x, z1, n, 100);
    with_zeros<<<4096, 256>>>(x, z10, n, 10);
    CK(cudaDeviceSynchronize());
    vs.push_back({"gelu library, 1% zeros",
                  [=] { CK(cuact::forward_quantize(cuact::gelu{}, z1, q, n, s, amax)); }});
    vs.push_back({"gelu direct, 1% zeros", [=] { direct(cuact::gelu{}, z1, q, n, s, amax); }});
    vs.push_back({"gelu library, 10% zeros",
                  [=] { CK(cuact::forward_quantize(cuact::gelu{}, z10, q, n, s, amax)); }});
    vs.push_back({"gelu direct, 10% zeros", [=] { direct(cuact::gelu{}, z10, q, n, s, amax); }});
    vs.push_back({"gelu fp16 in (direct)",
                  [=] { CK(cuact::forward_quantize(cuact::gelu{}, h, q, n, s, amax)); }});
    vs.push_back({"silu fp16 in (direct)",
                  [=] { CK(cuact::forward_quantize(cuact::silu{}, h, q, n, s, amax)); }});
    vs.push_back({"relu fp16 in (direct)",
                  [=] { CK(cuact::forward_quantize(cuact::relu{}, h, q, n, s, amax)); }});
  }
  if (argc > 2 && std::string(argv[2]) == "twovec") {
    for (unsigned threads : {256u, 512u})
      for (unsigned passes : {8u, 16u, 32u}) {
        char name[96];
        std::snprintf(name, sizeof name, "gelu table 2 vectors in flight, %u thr %u pass", threads,
                      passes);
        vs.push_back({name, [=] {
                        tabulated<16, cuact::gelu, 2>(cuact::gelu{}, x, q, n, s, amax, threads, 2,
                                                      passes);
                      }});
      }
  }
  add("gelu_tanh", cuact::gelu_tanh{}, false);
  add("sigmoid", cuact::sigmoid{}, false);
  add("softplus*", cuact_test::plain::softplus{}, false);
  add("relu", cuact::relu{}, false);
  for (int e : {27, 28}) {
    const size_t small = size_t(1) << e;
    const std::string tag = " 2^" + std::to_string(e);
    vs.push_back({"gelu direct" + tag, [=] { direct(cuact::gelu{}, x, q, small, s, amax); }});
    vs.push_back({"gelu library" + tag,
                  [=] { CK(cuact::forward_quantize(cuact::gelu{}, x, q, small, s, amax)); }});
    vs.push_back({"softplus* direct" + tag,
                  [=] { direct(cuact_test::plain::softplus{}, x, q, small, s, amax); }});
    vs.push_back(
        {"softplus* library" + tag, [=] {
           CK(cuact::forward_quantize(cuact_test::plain::softplus{}, x, q, small, s, amax));
         }});
    vs.push_back({"memcpy" + tag + " x 3 bytes", [&, small] {
                    CK(cudaMemcpyAsync(c1, c2, small * 3 / 2, cudaMemcpyDeviceToDevice));
                  }});
  }
  vs.push_back({"relu cast W8 (library)", [=] { cast<8>(cuact::relu{}, x, q, n); }});
  vs.push_back({"relu cast W16", [=] { cast<16>(cuact::relu{}, x, q, n); }});
  vs.push_back({"silu cast W8 (library)", [=] { cast<8>(cuact::silu{}, x, q, n); }});
  vs.push_back({"silu cast W16", [=] { cast<16>(cuact::silu{}, x, q, n); }});
  vs.push_back({"gelu cast W8 (library)", [=] { cast<8>(cuact::gelu{}, x, q, n); }});
  vs.push_back({"gelu cast W16", [=] { cast<16>(cuact::gelu{}, x, q, n); }});
  if (argc > 2 && std::string(argv[2]) != "nosweep" && std::string(argv[2]) != "twovec" &&
      std::string(argv[2]) !=
          "extra") {  // profiling: each variant whose name contains argv[2], twice
    for (auto& v : vs)
      if (v.name.find(argv[2]) != std::string::npos) {
        v.run();
        v.run();
      }
    CK(cudaDeviceSynchronize());
    return 0;
  }
  std::vector<std::vector<float>> times(vs.size());
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < vs.size(); ++i) times[i].push_back(time_ms(vs[i].run));
  std::vector<float> copy = times[0];
  for (size_t i = 0; i < vs.size(); ++i) {
    size_t reference = 0;  // the memcpy of the same size
    for (const char* tag : {"2^27", "2^28"})
      if (vs[i].name.find(tag) != std::string::npos)
        for (size_t j = 0; j < vs.size(); ++j)
          if (vs[j].name == std::string("memcpy ") + tag + " x 3 bytes") reference = j;
    std::printf("%-40s", vs[i].name.c_str());
    for (int r = 0; r < rounds; ++r)
      std::printf("  %7.3f ms %5.3f", times[i][r], times[reference][r] / times[i][r]);
    std::printf("\n");
  }
  return 0;
}
