// Session 43 prototype: zeros in the tabulated bf16 -> fp8 e4m3 quantize. Variants of
// bf16_table_quantize_op (kernels/table.cuh):
//   lib    the library's (zeros outside the window: the vector goes lane by lane, fn computed)
//   zval   zeros tested in the window test (a select per lane), their values from two op members
//          (fn(+0), fn(-0)): a select on the looked-up value
//   zslot  c103e3f's: zeros' entries in the table (32784 bytes), a select on the slot
//   zlane  the library's test, but the lane-by-lane path reads the zeros' values (no fn)
//   vgen   (session 43's library test and slots) a warp with a lane outside looks every lane up and
//          fixes the outside ones (zeros from the table's two extra entries, others computed)
//   vdir   a warp with a lane outside computes its vectors directly
//   agen   vgen's general path always
// on data without zeros, with 1%, 10% and 50% zeros; memcpy of the same bytes; each checked
// against the direct path (bytes and amax).
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
__global__ void with_zeros(const __nv_bfloat16* in, __nv_bfloat16* out, size_t n, size_t every) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = i % every == 7 || (every == 2 && i % 2 == 0)
                 ? __float2bfloat16((i / every) % 3 == 0 ? -0.0f : 0.0f)
                 : in[i];
}

__global__ void count_diff(const unsigned char* a, const unsigned char* b, size_t n,
                           unsigned long long* count) {
  unsigned long long c = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    c += a[i] != b[i];
  if (c) atomicAdd(count, c);
}

__global__ void to_float(const __nv_bfloat16* in, float* out, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = __bfloat162float(in[i]);
}

__global__ void to_half(const __nv_bfloat16* in, __half* out, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = __float2half(__bfloat162float(in[i]));
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
using W = cd::bf16_table_window;
using bf16 = __nv_bfloat16;
using fp8 = __nv_fp8_e4m3;

enum mode { zval = 0, zslot = 1, zlane = 2, vote_gen = 3, vote_dir = 4, always_gen = 5 };

CUACT_HOST_DEVICE bool warp_any(bool p) {
#if defined(__CUDA_ARCH__)
  return __any_sync(__activemask(), p);
#else
  return p;
#endif
}

template <class Fn, class Out, int Mode>
struct zop {
  static constexpr bool takes_held_vector = true;
  Fn fn;
  const float* entries;
  float scale;
  float* amax;
  float zero_pos, zero_neg;

  CUACT_HOST_DEVICE float operator()(float x) const {
    return scaled(lookup(cuda::std::bit_cast<std::uint32_t>(x) >> 16));
  }
  template <int Width>
  CUACT_HOST_DEVICE cd::vector_of<Out, Width> apply_held(
      const cd::vector_of<std::uint32_t, Width / 2>& words) const {
    if constexpr (Mode >= vote_gen)
      return apply_voted<Width>(words);
    else
      return apply_old<Width>(words);
  }
  CUACT_HOST_DEVICE float outside(unsigned b) const {
    return (b & 0x7fffu) == 0 ? entry(W::zero_slot + (b >> 15))
                              : fn(cuda::std::bit_cast<float>(b << 16));
  }
  template <int Width>
  CUACT_HOST_DEVICE cd::vector_of<Out, Width> apply_voted(
      const cd::vector_of<std::uint32_t, Width / 2>& words) const {
    std::uint32_t biased[Width / 2];
    std::uint32_t misses = 0;
    CUACT_UNROLL
    for (int w = 0; w < Width / 2; ++w) {
      biased[w] = W::biased_pair(words.elements[w]);
      misses |= W::pair_misses(biased[w]);
    }
    float values[Width];
    const bool miss = (misses & (W::low_miss_bits | W::high_miss_bits)) != 0;
    if (Mode != always_gen && !warp_any(miss)) {
      CUACT_UNROLL
      for (int w = 0; w < Width / 2; ++w) {
        const std::uint32_t word = words.elements[w];
        values[2 * w] = scaled(entry(W::low_slot(word, biased[w])));
        values[2 * w + 1] = scaled(entry(W::high_slot(word, biased[w])));
      }
    } else if constexpr (Mode == vote_dir) {
      CUACT_UNROLL
      for (int w = 0; w < Width / 2; ++w) {
        const std::uint32_t word = words.elements[w];
        values[2 * w] = scaled(fn(cuda::std::bit_cast<float>(word << 16)));
        values[2 * w + 1] = scaled(fn(cuda::std::bit_cast<float>(word & 0xffff0000u)));
      }
    } else {
      CUACT_UNROLL
      for (int w = 0; w < Width / 2; ++w) {
        const std::uint32_t word = words.elements[w];
        const std::uint32_t m = W::pair_misses(biased[w]);
        float lo = entry(W::low_slot(word, biased[w]));
        if ((m & 0xf000u) != 0) lo = outside(word & 0xffffu);
        float hi = entry(W::high_slot(word, biased[w]));
        if ((m & 0xf0000000u) != 0) hi = outside(word >> 16);
        values[2 * w] = scaled(lo);
        values[2 * w + 1] = scaled(hi);
      }
    }
    return cd::convert_vector<Out>(values);
  }
  template <int Width>
  CUACT_HOST_DEVICE cd::vector_of<Out, Width> apply_old(
      const cd::vector_of<std::uint32_t, Width / 2>& words) const {
    unsigned outside = 0;
    CUACT_UNROLL
    for (int w = 0; w < Width / 2; ++w) {
      outside |= test_key(words.elements[w] & 0xffffu) | test_key(words.elements[w] >> 16);
    }
    float values[Width];
    if (outside < W::per_sign) {
      CUACT_UNROLL
      for (int w = 0; w < Width / 2; ++w) {
        const std::uint32_t word = words.elements[w];
        values[2 * w] = scaled(fast(word & 0xffffu));
        values[2 * w + 1] = scaled(fast(word >> 16));
      }
    } else {
      CUACT_UNROLL
      for (int w = 0; w < Width / 2; ++w) {
        const std::uint32_t word = words.elements[w];
        values[2 * w] = scaled(lookup(word & 0xffffu));
        values[2 * w + 1] = scaled(lookup(word >> 16));
      }
    }
    return cd::convert_vector<Out>(values);
  }

  CUACT_HOST_DEVICE static unsigned test_key(unsigned b) {
    if constexpr (Mode == zlane)
      return W::offset(b);
    else
      return (b & 0x7fffu) == 0 ? 0u : W::offset(b);
  }
  CUACT_HOST_DEVICE float zero_value(unsigned b) const {
    return (b & 0x8000u) ? zero_neg : zero_pos;
  }
  // the value of bits b that pass test_key
  CUACT_HOST_DEVICE float fast(unsigned b) const {
    if constexpr (Mode == zval) {
      const float e = entry(W::slot(b) & (W::window_entries - 1));
      return (b & 0x7fffu) == 0 ? zero_value(b) : e;
    } else if constexpr (Mode == zslot) {
      return entry((b & 0x7fffu) == 0 ? W::zero_slot + (b >> 15) : W::slot(b));
    } else {
      return entry(W::slot(b));
    }
  }
#pragma nv_exec_check_disable
  CUACT_HOST_DEVICE float lookup(std::uint32_t b) const {
    if (W::offset(b) < W::per_sign) return entry(W::slot(b));
    if ((b & 0x7fffu) == 0) return Mode == zslot ? entry(W::zero_slot + (b >> 15)) : zero_value(b);
    return fn(cuda::std::bit_cast<float>(b << 16));
  }
  CUACT_HOST_DEVICE float scaled(float y) const { return cd::scale_folding_amax(y, scale, amax); }
  CUACT_HOST_DEVICE float entry(unsigned s) const { return cd::table_entry(entries, s); }
};

constexpr std::size_t zslot_bytes = W::bytes_of<float> + 16;

struct zslot_access : cd::global_memory_access {
  const float* entries;
  __device__ __forceinline__ void ready() const {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    constexpr unsigned words = zslot_bytes / 16;
    const uint4* from = reinterpret_cast<const uint4*>(entries);
    uint4* to = cd::shared_table_words();
    for (unsigned w = threadIdx.x; w < words; w += blockDim.x) {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                       static_cast<unsigned>(__cvta_generic_to_shared(to + w))),
                   "l"(__cvta_generic_to_global(from + w))
                   : "memory");
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
    asm volatile("barrier.sync 0;" ::: "memory");
  }
};

template <class Params>
__global__ void __launch_bounds__(512, 3) zslot_kernel(const cd::quantize_params<Params> params) {
  cd::quantize_block(params, zslot_access{{}, params.elementwise.op.entries});
}

template <class Fn>
__global__ void zero_entries(Fn fn, float* e) {
  asm volatile("griddepcontrol.launch_dependents;");
  e[threadIdx.x] = fn(threadIdx.x % 2 ? -0.0f : 0.0f);
}

template <class Act>
void direct(Act act, const bf16* in, fp8* out, size_t n, const float* scale, float* amax) {
  CK((cd::run_quantize<cuact::auto_width, cd::forward_cost<Act> == cd::cost_hint::compute_bound>(
      cd::amax_op<Act, fp8>{{}, act, 1.0f, nullptr}, out, n, in, amax, scale, true, nullptr,
      cd::declared_cost<Act>)));
}

template <int Mode, class Act>
void variant_run(Act act, const bf16* in, fp8* out, size_t n, const float* scale, float* amax) {
  using fn_t = cuact::forward_op<Act, fp8>;
  using op_t = zop<fn_t, fp8, Mode>;
  op_t op{};
  op.fn = {{}, act};
  op.zero_pos = op.fn(0.0f);  // host-callable built-ins
  op.zero_neg = op.fn(-0.0f);
  static float* table = nullptr;
  if (!table) CK(cudaMalloc(&table, zslot_bytes));
  auto ep = cd::make_params<16>(op, cd::output_arrays<fp8>{{out}}, n, cd::input_arrays<bf16>{{in}});
  cd::launch_shape shape = cd::tabulated_quantize_launch_shape(ep.vectors, ep.head + ep.tail);
  ep.vectors_per_thread = shape.vectors_per_thread;
  CK(cudaMemsetAsync(amax, 0, 4));
  const cd::quantize_params<decltype(ep)> params{ep, amax, scale};
  if constexpr (Mode == zslot || Mode >= vote_gen) {
    auto p = params;
    p.elementwise.op.entries = table;
    CK(cd::fill_bf16_table(op.fn, table, nullptr));
    zero_entries<<<1, 4>>>(op.fn, table + W::window_entries);
    CK(cd::launch_kernel_grid(zslot_kernel<decltype(ep)>, p, dim3(shape.blocks),
                              shape.threads_per_block, nullptr, zslot_bytes, true));
  } else {
    CK(cd::launch_tabulated_quantize(params, table, shape, nullptr));
  }
}

template <class Act>
void library(Act act, const bf16* in, fp8* out, size_t n, const float* scale, float* amax) {
  CK(cuact::forward_quantize(act, in, out, n, scale, amax));
}

using runner = void (*)(const bf16*, fp8*, size_t, const float*, float*);

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  const std::string only = argc > 2 ? argv[2] : "";
  const size_t n = size_t(4096) * 393216;
  bf16* x;
  fp8* q;
  float* s;
  void* c1;
  void* c2;
  CK(cudaMalloc(&x, n * 2));
  CK(cudaMalloc(&q, n));
  fp8* qref;
  unsigned long long* diffs;
  CK(cudaMalloc(&qref, n));
  CK(cudaMalloc(&diffs, 8));
  CK(cudaMalloc(&s, 8));
  CK(cudaMalloc(&c1, n * 3 / 2 + 256));
  CK(cudaMalloc(&c2, n * 3 / 2 + 256));
  fill<<<4096, 256>>>(x, n);
  const float four = 4.0f;
  CK(cudaMemcpy(s, &four, 4, cudaMemcpyHostToDevice));
  float* amax = s + 1;
  bf16* data[4] = {x, nullptr, nullptr, nullptr};
  const char* data_name[4] = {"no zeros", "1% zeros", "10% zeros", "50% zeros"};
  const size_t every[4] = {0, 100, 10, 2};
  for (int d = 1; d < 4; ++d) {
    CK(cudaMalloc(&data[d], n * 2));
    with_zeros<<<4096, 256>>>(x, data[d], n, every[d]);
  }
  CK(cudaDeviceSynchronize());
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %zu elements bf16 -> e4m3 (device scale 4), 3 bytes each\n", prop.name, n);

  struct variant {
    std::string name;
    std::function<void()> run;
    size_t ref = 0;  // the memcpy row of the same bytes
  };
  std::vector<variant> vs;
  vs.push_back({"memcpy 3n bytes",
                [&] { CK(cudaMemcpyAsync(c1, c2, n * 3 / 2, cudaMemcpyDeviceToDevice)); }});
  auto add = [&](const std::string& act_name, auto act) {
    using A = decltype(act);
    // correctness: every variant against the direct path, on every data set
    for (int d = 0; d < 4 && only.empty() && std::getenv("RULES") == nullptr; ++d) {
      float am_ref = 0, am = 0;
      direct(act, data[d], qref, n, s, amax);
      CK(cudaMemcpy(&am_ref, amax, 4, cudaMemcpyDeviceToHost));
      const std::pair<const char*, std::function<void()>> checks[] = {
          {"lib", [&] { library(act, data[d], q, n, s, amax); }},
          {"vgen", [&] { variant_run<vote_gen>(act, data[d], q, n, s, amax); }},
          {"vdir", [&] { variant_run<vote_dir>(act, data[d], q, n, s, amax); }},
          {"agen", [&] { variant_run<always_gen>(act, data[d], q, n, s, amax); }}};
      for (auto& c : checks) {
        CK(cudaMemset(q, 0x5a, n));
        c.second();
        CK(cudaMemcpy(&am, amax, 4, cudaMemcpyDeviceToHost));
        CK(cudaMemset(diffs, 0, 8));
        count_diff<<<2048, 256>>>(reinterpret_cast<const unsigned char*>(q),
                                  reinterpret_cast<const unsigned char*>(qref), n, diffs);
        unsigned long long diff = 0;
        CK(cudaMemcpy(&diff, diffs, 8, cudaMemcpyDeviceToHost));
        std::printf("check %-10s %-6s %-9s: %llu bytes differ, amax %s\n", act_name.c_str(),
                    c.first, data_name[d], diff, am == am_ref ? "same" : "DIFFERENT");
      }
    }
    for (int d = 0; d < 4; ++d) {
      const bf16* in = data[d];
      const std::string tail = std::string(", ") + data_name[d];
      vs.push_back({act_name + " direct" + tail, [=] { direct(act, in, q, n, s, amax); }});
      vs.push_back({act_name + " lib" + tail, [=] { library(act, in, q, n, s, amax); }});

      vs.push_back(
          {act_name + " vgen" + tail, [=] { variant_run<vote_gen>(act, in, q, n, s, amax); }});
      vs.push_back(
          {act_name + " vdir" + tail, [=] { variant_run<vote_dir>(act, in, q, n, s, amax); }});
      vs.push_back(
          {act_name + " agen" + tail, [=] { variant_run<always_gen>(act, in, q, n, s, amax); }});
    }
    (void)sizeof(A);
  };
  add("gelu", cuact::gelu{});
  add("softplus*", cuact_test::plain::softplus{});
  vs.push_back({"relu cast", [=] { CK(cuact::forward_cast(cuact::relu{}, x, q, n)); }});
  vs.push_back({"silu cast", [=] { CK(cuact::forward_cast(cuact::silu{}, x, q, n)); }});
  vs.push_back({"gelu cast", [=] { CK(cuact::forward_cast(cuact::gelu{}, x, q, n)); }});
  vs.push_back(
      {"relu quantize", [=] { CK(cuact::forward_quantize(cuact::relu{}, x, q, n, s, amax)); }});
  vs.push_back(
      {"silu quantize", [=] { CK(cuact::forward_quantize(cuact::silu{}, x, q, n, s, amax)); }});
  // fp32 in: 5 bytes per element (4096 x 196608 elements, against memcpy of the same bytes)
  {
    static float* xf = nullptr;
    static void* big1 = nullptr;
    static void* big2 = nullptr;
    const size_t nf = n / 2;
    CK(cudaMalloc(&xf, nf * 4));
    CK(cudaMalloc(&big1, nf * 5 / 2 + 256));
    CK(cudaMalloc(&big2, nf * 5 / 2 + 256));
    to_float<<<4096, 256>>>(x, xf, nf);
    CK(cudaDeviceSynchronize());
    const size_t ref = vs.size();
    vs.push_back({"memcpy 5 bytes x n/2",
                  [=] { CK(cudaMemcpyAsync(big1, big2, nf * 5 / 2, cudaMemcpyDeviceToDevice)); }});
    vs.back().ref = ref;
    vs.push_back({"relu quantize fp32 in",
                  [=] { CK(cuact::forward_quantize(cuact::relu{}, xf, q, nf, s, amax)); }, ref});
    vs.push_back({"gelu quantize fp32 in",
                  [=] { CK(cuact::forward_quantize(cuact::gelu{}, xf, q, nf, s, amax)); }, ref});
    vs.push_back(
        {"silu cast fp32 in", [=] { CK(cuact::forward_cast(cuact::silu{}, xf, q, nf)); }, ref});
    // relu fp32 -> e4m3 quantize: the library's shape (as run_quantize takes it) and fixed shapes
    {
      using op_t = cd::amax_op<cuact::relu, fp8>;
      constexpr int width = cd::quantize_width<cuact::auto_width, fp8, float, false>();
      auto ep =
          cd::make_params<width>(op_t{{}, cuact::relu{}, 1.0f, nullptr},
                                 cd::output_arrays<fp8>{{q}}, nf, cd::input_arrays<float>{{xf}});
      cd::launch_shape lib{};
      CK(cd::model_shape(cd::quantize_kernel<decltype(ep)>, 0, cd::declared_cost<cuact::relu>, ep,
                         1, lib, 1));
      std::printf(
          "relu fp32 -> e4m3: width %d, model shape %u blocks x %u threads, %u vectors, %u passes%s\n",
          width, lib.blocks, lib.threads_per_block, lib.vectors_per_thread, lib.passes,
          lib.blocks >= 4 * cd::quantize_min_blocks ? " (then blocks / 4, passes x 4)" : "");
      for (unsigned threads : {128u, 256u, 512u})
        for (unsigned vpt : {1u, 2u})
          for (unsigned passes : {1u, 4u, 16u}) {
            char name[96];
            std::snprintf(name, sizeof name, "relu q fp32 %u thr %u vec %u pass", threads, vpt,
                          passes);
            vs.push_back(
                {name,
                 [=] {
                   auto e = ep;
                   const cd::launch_shape sh =
                       cd::fixed_launch_shape(e.vectors, e.head + e.tail, threads, vpt, passes);
                   e.vectors_per_thread = sh.vectors_per_thread;
                   CK(cudaMemsetAsync(amax, 0, 4));
                   CK(cd::launch_kernel(cd::quantize_kernel<decltype(e)>,
                                        cd::quantize_params<decltype(e)>{e, amax, s}, sh, nullptr));
                 },
                 ref});
          }
    }
  }
  // the direct quantize's launch rule: the library's (A) against blocks of at least 256 threads (B)
  if (std::getenv("RULES") != nullptr) {
    vs.clear();
    static __half* h = nullptr;
    static float* xf = nullptr;
    static void* big1 = nullptr;
    static void* big2 = nullptr;
    const size_t nf = n / 2;
    CK(cudaMalloc(&h, n * 2));
    CK(cudaMalloc(&xf, nf * 4));
    CK(cudaMalloc(&big1, nf * 5 / 2 + 256));
    CK(cudaMalloc(&big2, nf * 5 / 2 + 256));
    to_half<<<4096, 256>>>(x, h, n);
    to_float<<<4096, 256>>>(x, xf, nf);
    CK(cudaDeviceSynchronize());
    vs.push_back({"memcpy 3n bytes",
                  [&] { CK(cudaMemcpyAsync(c1, c2, n * 3 / 2, cudaMemcpyDeviceToDevice)); }});
    const size_t ref5 = vs.size();
    vs.push_back({"memcpy 5 bytes x n/2",
                  [=] { CK(cudaMemcpyAsync(big1, big2, nf * 5 / 2, cudaMemcpyDeviceToDevice)); },
                  ref5});
    auto rules = [&](const std::string& name, auto act, const auto* in, size_t count, size_t ref) {
      using Act = decltype(act);
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(in)>>;
      constexpr bool cb = cd::forward_cost<Act> == cd::cost_hint::compute_bound;
      constexpr int width = cd::quantize_width<cuact::auto_width, fp8, T, cb>();
      auto ep =
          cd::make_params<width>(cd::amax_op<Act, fp8>{{}, act, 1.0f, nullptr},
                                 cd::output_arrays<fp8>{{q}}, count, cd::input_arrays<T>{{in}});
      cd::launch_shape a{};
      CK(cd::model_shape(cd::quantize_kernel<decltype(ep)>, 0, cd::declared_cost<Act>, ep, 1, a,
                         1));
      cd::launch_shape b = a;
      if (b.threads_per_block < 256) {
        const unsigned f = 256 / b.threads_per_block;
        b.threads_per_block = 256;
        b.blocks = (b.blocks + f - 1) / f;
      }
      for (cd::launch_shape* sh : {&a, &b})
        if (sh->blocks >= 4 * cd::quantize_min_blocks) {
          sh->blocks = (sh->blocks + 3) / 4;
          sh->passes *= 4;
        }
      for (int which = 0; which < 2; ++which) {
        const char* tag = which == 0 ? "A" : "B";
        const cd::launch_shape sh = which == 0 ? a : b;
        char label[160];
        std::snprintf(label, sizeof label, "%s %s: W%d %ux%u v%u p%u", name.c_str(), tag, width,
                      sh.blocks, sh.threads_per_block, sh.vectors_per_thread, sh.passes);
        vs.push_back({label,
                      [=] {
                        auto e = ep;
                        e.vectors_per_thread = sh.vectors_per_thread;
                        CK(cudaMemsetAsync(amax, 0, 4));
                        CK(cd::launch_kernel(cd::quantize_kernel<decltype(e)>,
                                             cd::quantize_params<decltype(e)>{e, amax, s}, sh,
                                             nullptr));
                      },
                      ref});
      }
    };
    rules("relu bf16", cuact::relu{}, x, n, 0);
    rules("silu bf16", cuact::silu{}, x, n, 0);
    rules("gelu bf16", cuact::gelu{}, x, n, 0);
    rules("relu fp16", cuact::relu{}, h, n, 0);
    rules("silu fp16", cuact::silu{}, h, n, 0);
    rules("gelu fp16", cuact::gelu{}, h, n, 0);
    rules("relu fp32", cuact::relu{}, xf, nf, ref5);
    rules("leaky fp32", cuact::leaky_relu{}, xf, nf, ref5);
    rules("silu fp32", cuact::silu{}, xf, nf, ref5);
    rules("gelu fp32", cuact::gelu{}, xf, nf, ref5);
    rules("selu fp32", cuact::selu{}, xf, nf, ref5);
    rules("sigmoid fp32", cuact::sigmoid{}, xf, nf, ref5);
  }
  if (!only.empty()) {  // profiling: each variant whose name contains argv[2], twice
    for (auto& v : vs)
      if (v.name.find(only) != std::string::npos) {
        v.run();
        v.run();
      }
    CK(cudaDeviceSynchronize());
    return 0;
  }
  std::vector<std::vector<float>> times(vs.size());
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < vs.size(); ++i) times[i].push_back(time_ms(vs[i].run));
  for (size_t i = 0; i < vs.size(); ++i) {
    std::printf("%-34s", vs[i].name.c_str());
    for (int r = 0; r < rounds; ++r)
      std::printf("  %7.3f ms %5.3f", times[i][r], times[vs[i].ref][r] / times[i][r]);
    std::printf("\n");
  }
  return 0;
}
