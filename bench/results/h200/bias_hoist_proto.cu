// Session 23's prototype (not in the library; the source of bias_hoist_proto.txt, built on the CPU
// machine: nvcc -O3 -std=c++17 -arch=sm_90 -I include bench/results/h200/bias_hoist_proto.cu).
// Question: is the H200's fp32 bias + gelu forward gap (0.965 x memcpy against gelu alone ~0.99)
// the per-pass bias work (divmod + bias load per vector), or gelu's own math?
// P_reload: each pass computes its column (fast_divmod) and loads the bias vector (as flat_bias_op).
// P_hoisted: the grid stride is a whole number of rows (4 passes over 4096 rows: 1024 rows), so a
// thread's column is the same in every pass: bias loaded once before the loop.
#include <cuact/cuact.cuh>
#include <algorithm>
#include <cstdio>
#include <vector>
#include <functional>
#include <cstring>
#include <random>

using cuact::detail::fast_divmod;
__device__ __forceinline__ float g(float v) {
  return cuact::detail::invoke_forward<cuact::rounded_to<float>>(cuact::detail::preferred{},
                                                                 cuact::gelu{}, v);
}
__device__ __forceinline__ float4 act4(float4 a, float4 b) {
  return make_float4(g(a.x + b.x), g(a.y + b.y), g(a.z + b.z), g(a.w + b.w));
}
__global__ void __launch_bounds__(128)
    p_reload(const float4* __restrict__ x, const float4* __restrict__ bias, float4* __restrict__ y,
             unsigned nvec, fast_divmod colvec) {
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned v = blockIdx.x * blockDim.x + threadIdx.x; v < nvec; v += stride) {
    const float4 a = x[v];
    const float4 b = bias[colvec.remainder(v)];
    y[v] = act4(a, b);
  }
}
__global__ void __launch_bounds__(128)
    p_hoisted(const float4* __restrict__ x, const float4* __restrict__ bias, float4* __restrict__ y,
              unsigned nvec, fast_divmod colvec) {
  const unsigned stride = gridDim.x * blockDim.x;  // a multiple of colvec (checked on the host)
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const float4 b = bias[colvec.remainder(t)];
  for (unsigned v = t; v < nvec; v += stride) y[v] = act4(x[v], b);
}
// the column kept, the bias reloaded every step (asm volatile: not hoisted by the compiler)
__device__ __forceinline__ float4 load_volatile(const float4* p) {
  float4 r;
  asm volatile("ld.global.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w)
               : "l"(p));
  return r;
}
__global__ void __launch_bounds__(128)
    p_column_kept(const float4* __restrict__ x, const float4* __restrict__ bias,
                  float4* __restrict__ y, unsigned nvec, fast_divmod colvec) {
  const unsigned stride = gridDim.x * blockDim.x;
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const float4* b = bias + colvec.remainder(t);
  for (unsigned v = t; v < nvec; v += stride) {
    const float4 a = x[v];
    y[v] = act4(a, load_volatile(b));
  }
}
// the bias vector kept in shared memory, read back every step (volatile: an LDS each step)
__global__ void __launch_bounds__(128)
    p_shared_kept(const float4* __restrict__ x, const float4* __restrict__ bias,
                  float4* __restrict__ y, unsigned nvec, fast_divmod colvec) {
  __shared__ float4 kept[128];
  const unsigned stride = gridDim.x * blockDim.x;
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  kept[threadIdx.x] = bias[colvec.remainder(t)];
  volatile float4* mine = &kept[threadIdx.x];
  for (unsigned v = t; v < nvec; v += stride) {
    const float4 a = x[v];
    const float4 b = make_float4(mine->x, mine->y, mine->z, mine->w);
    y[v] = act4(a, b);
  }
}
__global__ void __launch_bounds__(128)
    p_alone(const float4* __restrict__ x, float4* __restrict__ y, unsigned nvec) {
  const unsigned stride = gridDim.x * blockDim.x;
  const float4 z = make_float4(0, 0, 0, 0);
  for (unsigned v = blockIdx.x * blockDim.x + threadIdx.x; v < nvec; v += stride)
    y[v] = act4(x[v], z);
}

__global__ void __launch_bounds__(128)
    p_alone64(const float4* __restrict__ x, float4* __restrict__ y, std::size_t nvec) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const float4 z = make_float4(0, 0, 0, 0);
  for (std::size_t v = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; v < nvec; v += stride)
    y[v] = act4(x[v], z);
}
// cuact's public per-thread body (what a ModelNew runs), one_vector gelu, 4 passes
template <class Params>
__global__ void __launch_bounds__(128) p_engine(const Params params) {
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  cuact::elementwise_thread(params, thread, threads);
}

int main() {
  const std::size_t rows = 4096, cols = 393216, n = rows * cols, nvec = n / 4, colvec = cols / 4;
  float *x, *y, *bias;
  cudaMalloc(&x, n * 4);
  cudaMalloc(&y, n * 4);
  cudaMalloc(&bias, cols * 4);
  {
    std::vector<float> h(cols);
    std::mt19937 r(1);
    std::normal_distribution<float> d;
    for (auto& v : h) v = d(r);
    cudaMemcpy(bias, h.data(), cols * 4, cudaMemcpyHostToDevice);
    std::vector<float> hx(1 << 24);
    for (auto& v : hx) v = d(r);
    for (std::size_t i = 0; i < n; i += hx.size())
      cudaMemcpy(x + i, hx.data(), std::min(hx.size(), n - i) * 4, cudaMemcpyHostToDevice);
  }
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  std::printf("%s, fp32 bias + gelu over %zu x %zu\n", p.name, rows, cols);
  const fast_divmod cd = fast_divmod::of(colvec);
  const unsigned grid4 =
      unsigned(nvec / 4 / 128);  // 4 passes: stride = 1024 rows (a multiple of colvec)
  if ((std::size_t(grid4) * 128) % colvec) {
    std::puts("stride not a multiple of cols");
    return 1;
  }
  cudaStream_t s = nullptr;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> ref(4096), got(4096);
  auto walk_any = [&](auto bytes) {
    constexpr unsigned b = decltype(bytes)::value;
    const std::size_t pitch_out[1] = {cols};
    const std::size_t pitch_in[2] = {cols, 0};
    return cuact::detail::launch_rows<4, cuact::detail::broadcast_input(1), b>(
        cuact::bias_op<cuact::gelu, float>{{}, cuact::gelu{}}, cuact::outputs(y), pitch_out, rows,
        cols, cuact::inputs((const float*)x, (const float*)bias), pitch_in, 0, s,
        cuact::detail::forward_cost<cuact::gelu>);
  };
  struct V {
    const char* name;
    std::function<void()> f;
    std::vector<float> ms;
    bool checks;
  };
  std::vector<V> vs = {
      {"memcpy", [&] { cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice, s); }, {}, false},
      {"cuact::forward gelu alone", [&] { cuact::forward(cuact::gelu{}, x, y, n, s); }, {}, false},
      {"proto gelu alone 4 passes",
       [&] { p_alone<<<grid4, 128, 0, s>>>((const float4*)x, (float4*)y, nvec); },
       {},
       false},
      {"proto gelu alone 4 passes 64-bit",
       [&] { p_alone64<<<grid4, 128, 0, s>>>((const float4*)x, (float4*)y, nvec); },
       {},
       false},
      {"elementwise_thread one_vector 4p",
       [&] {
         p_engine<<<grid4, 128, 0, s>>>(cuact::make_elementwise_params<4>(
             cuact::one_vector<cuact::gelu>{}, y, n, (const float*)x));
       },
       {},
       false},
      {"cuact::bias_forward (library)",
       [&] { cuact::bias_forward(cuact::gelu{}, x, bias, y, rows, cols, s); },
       {},
       true},
      {"library walk, 1 row in flight",
       [&] { walk_any(std::integral_constant<unsigned, 16>{}); },
       {},
       true},
      {"library walk, 2 rows (current)",
       [&] { walk_any(std::integral_constant<unsigned, 32>{}); },
       {},
       true},
      {"proto reload 4 passes",
       [&] {
         p_reload<<<grid4, 128, 0, s>>>((const float4*)x, (const float4*)bias, (float4*)y, nvec,
                                        cd);
       },
       {},
       true},
      {"proto hoisted 4 passes",
       [&] {
         p_hoisted<<<grid4, 128, 0, s>>>((const float4*)x, (const float4*)bias, (float4*)y, nvec,
                                         cd);
       },
       {},
       true},
      {"proto column kept 4 passes",
       [&] {
         p_column_kept<<<grid4, 128, 0, s>>>((const float4*)x, (const float4*)bias, (float4*)y,
                                             nvec, cd);
       },
       {},
       true},
      {"proto shared kept 4 passes",
       [&] {
         p_shared_kept<<<grid4, 128, 0, s>>>((const float4*)x, (const float4*)bias, (float4*)y,
                                             nvec, cd);
       },
       {},
       true},
      {"proto hoisted 8 passes",
       [&] {
         p_hoisted<<<grid4 / 2, 128, 0, s>>>((const float4*)x, (const float4*)bias, (float4*)y,
                                             nvec, cd);
       },
       {},
       true},
      {"proto reload 1 pass",
       [&] {
         p_reload<<<unsigned(nvec / 128), 128, 0, s>>>((const float4*)x, (const float4*)bias,
                                                       (float4*)y, nvec, cd);
       },
       {},
       true},
  };
  // results: every bias variant equal to the library's on the last row (bit for bit)
  for (auto& v : vs) {
    if (!v.checks) continue;
    cudaMemset(y, 0xff, n * 4);
    v.f();
    cudaDeviceSynchronize();
    cudaMemcpy(got.data(), y + n - 4096, 4096 * 4, cudaMemcpyDeviceToHost);
    if (std::strcmp(v.name, "cuact::bias_forward (library)") == 0)
      ref = got;
    else if (got != ref)
      std::printf("%s: DIFFERS from the library\n", v.name);
  }
  for (int round = 0; round < 15; ++round) {
    for (auto& v : vs) {
      v.f();
      v.f();
      cudaEventRecord(e0, s);
      v.f();
      cudaEventRecord(e1, s);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      v.ms.push_back(ms);
    }
  }
  auto med = [](std::vector<float> m) {
    std::sort(m.begin(), m.end());
    return m[m.size() / 2];
  };
  const float copy = med(vs[0].ms);
  for (auto& v : vs)
    std::printf("%-32s %.4f ms  x memcpy %.3f\n", v.name, med(v.ms), copy / med(v.ms));
  std::printf("errors: %s\n", cudaGetErrorString(cudaGetLastError()));
}
