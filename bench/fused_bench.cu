// cuact_bench_fused: the fused operations of include/cuact/fused.cuh at the seeds' scale
// (4096 x 393216 output elements; the packed GLU input is 4096 x 786432), fp32 and bf16, against
// cudaMemcpyAsync device-to-device of the same byte count in the same run, and against the same
// work done unfused with cuact's own kernels (the passes eager PyTorch makes).
//
//   cuact_bench_fused [--rows R] [--cols C] [--reps N] [--filter TEXT] [--quick]
//
// --filter runs only the rows whose label contains TEXT ("swiglu clamped": the gate's rows).
// bench/to_csv.py reads the output as its mode "fused" (fused=FILE).
//
// Bytes are what each operation reads plus what it writes (bias and dbias included, the bias
// backward's partial sums too). Inputs are random normal (never zero; one row adds 1% zeros, and
// says so), made on the device. Each row is the median of --reps timed runs (CUDA events, the GPU
// kept busy while each run is enqueued: GPU time), after two warm-up runs.
#include <cuact/cuact.cuh>

#include "busy_start.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

// A named namespace: ops defined in an anonymous one and launched as kernel template arguments
// conflict with the kernels' hidden visibility (nvcc #1407-D).
namespace cuact_bench_fused {

#define BENCH_CHECK(call)                                                \
  do {                                                                   \
    const cudaError_t status_ = (call);                                  \
    if (status_ != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(status_));                         \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

__device__ std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Standard normal values (Box-Muller on a counter hash), zeros replaced by 2^-10.
template <class T>
__global__ void fill_normal(T* out, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = mix(seed ^ mix(i));
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) * 0x1p-24f;
    const float u2 = static_cast<float>(h & 0xffffff) * 0x1p-24f;
    float v = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    if (v == 0.0f) v = 0x1p-10f;
    out[i] = cuact::detail::from_compute<T>(v);
    if (cuact::detail::to_compute(out[i]) == 0.0f)
      out[i] = cuact::detail::from_compute<T>(0x1p-10f);
  }
}

template <class T>
void fill(T* p, std::size_t n, std::uint64_t seed) {
  fill_normal<<<4096, 256>>>(p, n, seed);
  BENCH_CHECK(cudaGetLastError());
}

/// Every `every`-th element from the 8th on set to +0 or -0 (alternately): inputs with exact
/// zeros, which the tabulated bf16 paths look up from entries of their own.
template <class T>
__global__ void sprinkle_zeros(T* p, std::size_t n, std::size_t every) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    if (i % every == 7) p[i] = cuact::detail::from_compute<T>((i / every) % 2 ? -0.0f : 0.0f);
  }
}

/// out = a * b (the unfused GLU's second pass).
struct multiply {
  static constexpr cuact::cost cost = cuact::cost::light;
  template <class C>
  __host__ __device__ C operator()(C a, C b) const {
    return a * b;
  }
};
/// out = x + bias[column] (the unfused bias add), through the element index of a rows-free op.
template <class T>
struct add_bias {
  static constexpr cuact::cost cost = cuact::cost::light;
  static constexpr bool takes_element_index = true;
  const T* bias;
  std::size_t cols;
  template <class C>
  __device__ C operator()(std::size_t i, C x) const {
    return x + cuact::detail::to_compute(bias[i % cols]);
  }
};

struct options {
  std::size_t rows = 4096, cols = 393216;
  int reps = 10;
  std::string filter;  ///< run only the rows whose label contains it (empty: every row)
};

/// Whether row `op` runs under the options' filter.
bool selected(const options& o, const std::string& op) {
  return o.filter.empty() || op.find(o.filter) != std::string::npos;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Median milliseconds of `run` over reps, after two warm-ups, each enqueued while the GPU is kept
/// busy (the GPU's time only).
float time_ms(const std::function<void()>& run, int reps) {
  cudaEvent_t start, stop;
  BENCH_CHECK(cudaEventCreate(&start));
  BENCH_CHECK(cudaEventCreate(&stop));
  run();
  run();
  BENCH_CHECK(cudaDeviceSynchronize());
  std::vector<float> times;
  for (int r = 0; r < reps; ++r) {
    BENCH_CHECK(bench::busy_start(nullptr));  // GPU time only (busy_start.cuh)
    BENCH_CHECK(cudaEventRecord(start));
    run();
    BENCH_CHECK(cudaEventRecord(stop));
    BENCH_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  BENCH_CHECK(cudaEventDestroy(start));
  BENCH_CHECK(cudaEventDestroy(stop));
  return median(times);
}

/// Device buffers reused by every row: two of 2n elements and two of n, in bytes of the widest
/// type (float).
struct buffers {
  char* big[2];
  char* small[2];
  std::size_t big_bytes, small_bytes;
};

/// Median time of a device-to-device copy moving `bytes` (read + written) in chunks of at most
/// one buffer.
float memcpy_ms(const buffers& b, double bytes, int reps) {
  const std::size_t total = static_cast<std::size_t>(bytes / 2);
  return time_ms(
      [&] {
        for (std::size_t done = 0; done < total;) {
          const std::size_t chunk = std::min(total - done, b.big_bytes);
          BENCH_CHECK(cudaMemcpyAsync(b.big[1], b.big[0], chunk, cudaMemcpyDeviceToDevice));
          done += chunk;
        }
      },
      reps);
}

struct row_result {
  std::string op, dtype;
  double bytes;
  float ms, copy_ms;
};
std::vector<row_result> results;

void report(const std::string& op, const std::string& dtype, double bytes, float ms,
            float copy_ms) {
  results.push_back({op, dtype, bytes, ms, copy_ms});
  std::printf("%-34s %-12s %9.2f %9.3f %9.1f %9.1f %8.3f\n", op.c_str(), dtype.c_str(), bytes / 1e9,
              ms, bytes / ms / 1e6, bytes / copy_ms / 1e6, copy_ms / ms);
  std::fflush(stdout);
}

template <class T>
void run_type(const options& o, const buffers& b, const char* dtype) {
  const std::size_t rows = o.rows, cols = o.cols, n = rows * cols;
  const double s = sizeof(T);
  T* ab = reinterpret_cast<T*>(b.big[0]);    // 2n: packed input, or a and b
  T* dab = reinterpret_cast<T*>(b.big[1]);   // 2n: packed gradient, or da and db
  T* y = reinterpret_cast<T*>(b.small[0]);   // n
  T* dy = reinterpret_cast<T*>(b.small[1]);  // n
  T* a = ab;
  T* bb = ab + n;
  fill(ab, 2 * n, 1);
  fill(dy, n, 2);
  const int reps = o.reps;
  const auto row = [&](const std::string& op, double bytes, const std::function<void()>& run) {
    if (!selected(o, op)) return;
    const float ms = time_ms(run, reps);
    report(op, dtype, bytes, ms, memcpy_ms(b, bytes, reps));
  };
  const cuact::silu silu{};
  // ---- SwiGLU ----
  row("swiglu fwd (separate a, b)", 3 * n * s,
      [&] { BENCH_CHECK(cuact::gated_forward(silu, a, bb, y, n)); });
  row("swiglu fwd unfused (2 passes)", 5 * n * s, [&] {
    BENCH_CHECK(cuact::forward(silu, a, y, n));
    BENCH_CHECK(cuact::transform(multiply{}, cuact::outputs(y), n, cuact::inputs<T, T>(y, bb)));
  });
  row("swiglu bwd (separate a, b)", 5 * n * s,
      [&] { BENCH_CHECK(cuact::gated_backward(silu, a, bb, dy, dab, dab + n, n)); });
  row("swiglu fwd (packed)", 3 * n * s,
      [&] { BENCH_CHECK(cuact::gated_forward_packed(silu, ab, y, rows, cols)); });
  row("swiglu bwd (packed)", 5 * n * s,
      [&] { BENCH_CHECK(cuact::gated_backward_packed(silu, ab, dy, dab, rows, cols)); });
  // ---- gpt-oss's clamped SwiGLU (gate.cuh): b transformed too ----
  const cuact::clamped_swiglu clamped{};
  row("swiglu clamped fwd (separate a, b)", 3 * n * s,
      [&] { BENCH_CHECK(cuact::gate_forward(clamped, a, bb, y, n)); });
  row("swiglu clamped bwd (separate a, b)", 5 * n * s,
      [&] { BENCH_CHECK(cuact::gate_backward(clamped, a, bb, dy, dab, dab + n, n)); });
  row("swiglu clamped fwd (packed)", 3 * n * s,
      [&] { BENCH_CHECK(cuact::gate_forward_packed(clamped, ab, y, rows, cols)); });
  row("swiglu clamped bwd (packed)", 5 * n * s,
      [&] { BENCH_CHECK(cuact::gate_backward_packed(clamped, ab, dy, dab, rows, cols)); });
  // ---- bias + GELU ----
  T* x = ab;
  T* bias = dab + 2 * n - cols;  // the tail of the gradient buffer: no overlap with the others
  T* dbias = bias - cols;
  fill(bias, cols, 3);
  const double bias_bytes = cols * s;
  row("gelu fwd alone (cuact::forward)", 2 * n * s,
      [&] { BENCH_CHECK(cuact::forward(cuact::gelu{}, x, y, n)); });
  row("bias+gelu fwd", 2 * n * s + bias_bytes,
      [&] { BENCH_CHECK(cuact::bias_forward(cuact::gelu{}, x, bias, y, rows, cols)); });
  row("bias+relu fwd", 2 * n * s + bias_bytes,
      [&] { BENCH_CHECK(cuact::bias_forward(cuact::relu{}, x, bias, y, rows, cols)); });
  row("bias+silu fwd", 2 * n * s + bias_bytes,
      [&] { BENCH_CHECK(cuact::bias_forward(cuact::silu{}, x, bias, y, rows, cols)); });
  row("bias+gelu fwd unfused (2 passes)", 4 * n * s + bias_bytes, [&] {
    BENCH_CHECK(
        cuact::transform(add_bias<T>{bias, cols}, cuact::outputs(y), n, cuact::inputs<T>(x)));
    BENCH_CHECK(cuact::forward(cuact::gelu{}, y, y, n));
  });
  void* workspace = dab;  // partial sums: well inside the first half of the gradient buffer
  const std::size_t workspace_bytes = cuact::bias_backward_workspace_bytes<T>(rows, cols);
  const double partial_bytes = 2.0 * workspace_bytes;
  row("bias+gelu bwd (dx and dbias)", 3 * n * s + 2 * bias_bytes + partial_bytes, [&] {
    BENCH_CHECK(cuact::bias_backward(cuact::gelu{}, x, bias, dy, y, dbias, rows, cols, workspace,
                                     workspace_bytes));
  });
  row("bias+relu bwd (dx and dbias)", 3 * n * s + 2 * bias_bytes + partial_bytes, [&] {
    BENCH_CHECK(cuact::bias_backward(cuact::relu{}, x, bias, dy, y, dbias, rows, cols, workspace,
                                     workspace_bytes));
  });
  // ---- compose: x * sigmoid(1.702 x) ----
  const auto quick = cuact::compose(cuact::linear{1 / 1.702}, cuact::affine(silu, 1.702));
  row("x*sigmoid(1.702x) composed", 2 * n * s,
      [&] { BENCH_CHECK(cuact::forward(quick, x, y, n)); });
  row("x*sigmoid(1.702x) separate (3 passes)", 7 * n * s, [&] {
    BENCH_CHECK(cuact::forward(cuact::linear{1.702}, x, y, n));
    BENCH_CHECK(cuact::forward(cuact::sigmoid{}, y, y, n));
    BENCH_CHECK(cuact::transform(multiply{}, cuact::outputs(y), n, cuact::inputs<T, T>(y, x)));
  });
  row("x*sigmoid(1.702x) composed bwd", 3 * n * s,
      [&] { BENCH_CHECK(cuact::backward(quick, x, dy, y, n)); });
}

/// softplus as a user writes it: no hint, plain math (tabulated from 2^27 bf16 elements).
struct plain_softplus {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(20) ? x : log1p(exp(x));
  }
};

void run_casts(const options& o, const buffers& b) {
  const std::size_t n = o.rows * o.cols;
  float* x = reinterpret_cast<float*>(b.big[0]);
  fill(x, n, 4);
  auto* bf = reinterpret_cast<__nv_bfloat16*>(b.big[1]);
  auto* e4 = reinterpret_cast<__nv_fp8_e4m3*>(b.small[0]);
  float* amax = reinterpret_cast<float*>(b.small[1]);
  const float four = 4.0f;
  const auto row = [&](const std::string& op, const char* dtype, double bytes,
                       const std::function<void()>& run) {
    if (!selected(o, op)) return;
    const float ms = time_ms(run, o.reps);
    report(op, dtype, bytes, ms, memcpy_ms(b, bytes, o.reps));
  };
  row("silu cast", "fp32->bf16", 6.0 * n,
      [&] { BENCH_CHECK(cuact::forward_cast(cuact::silu{}, x, bf, n)); });
  row("gelu quantize + amax", "fp32->e4m3", 5.0 * n + 8,
      [&] { BENCH_CHECK(cuact::forward_quantize(cuact::gelu{}, x, e4, n, 4.0f, amax)); });
  row("gelu quantize unfused (2 passes)", "fp32->e4m3", 13.0 * n, [&] {
    float* t = reinterpret_cast<float*>(b.big[1]);
    BENCH_CHECK(cuact::forward(cuact::gelu{}, x, t, n));
    BENCH_CHECK(cuact::forward_quantize(cuact::linear{}, t, e4, n, 4.0f, amax));
  });
  // the scale in device memory (TransformerEngine's delayed scaling; the PyTorch op's form)
  const float* device_scale = amax + 1;
  BENCH_CHECK(cudaMemcpy(amax + 1, &four, sizeof(float), cudaMemcpyHostToDevice));
  row("gelu quantize, device scale", "fp32->e4m3", 5.0 * n + 12,
      [&] { BENCH_CHECK(cuact::forward_quantize(cuact::gelu{}, x, e4, n, device_scale, amax)); });
  row("relu quantize, device scale", "fp32->e4m3", 5.0 * n + 12,
      [&] { BENCH_CHECK(cuact::forward_quantize(cuact::relu{}, x, e4, n, device_scale, amax)); });
  // bf16 inputs behind the fp8 outputs in small[0] (4n bytes), not in big[1]: memcpy_ms writes
  // big[1] after each row, which would leave later rows reading fp32 bytes as bf16 pairs
  auto* x16 = reinterpret_cast<__nv_bfloat16*>(b.small[0] + 2 * n);
  fill(x16, n, 5);
  row("relu quantize, device scale", "bf16->e4m3", 3.0 * n + 12,
      [&] { BENCH_CHECK(cuact::forward_quantize(cuact::relu{}, x16, e4, n, device_scale, amax)); });
  row("silu quantize, device scale", "bf16->e4m3", 3.0 * n + 12,
      [&] { BENCH_CHECK(cuact::forward_quantize(cuact::silu{}, x16, e4, n, device_scale, amax)); });
  row("gelu quantize, device scale", "bf16->e4m3", 3.0 * n + 12,
      [&] { BENCH_CHECK(cuact::forward_quantize(cuact::gelu{}, x16, e4, n, device_scale, amax)); });
  // from tabulated_min_elements, unhinted functors are tabulated (plain softplus below); gelu
  // quantizes directly (launch.cuh: tabulates), and this row times the table beside it, so the
  // choice can be re-checked
  row("gelu quantize, tabulated (not taken)", "bf16->e4m3", 3.0 * n + 12, [&] {
    BENCH_CHECK(cuact::detail::quantize_tabulated<cuact::auto_width>(
        cuact::gelu{}, x16, e4, n, 1.0f, device_scale, amax, true, nullptr));
  });
  // the same input with 1% of it +-0 (behind the amax and the scale in small[1])
  auto* x16_zeros = reinterpret_cast<__nv_bfloat16*>(b.small[1] + 256);
  BENCH_CHECK(cudaMemcpy(x16_zeros, x16, 2 * n, cudaMemcpyDeviceToDevice));
  sprinkle_zeros<<<4096, 256>>>(x16_zeros, n, 100);
  BENCH_CHECK(cudaGetLastError());
  row("gelu quantize, 1% zeros", "bf16->e4m3", 3.0 * n + 12, [&] {
    BENCH_CHECK(cuact::forward_quantize(cuact::gelu{}, x16_zeros, e4, n, device_scale, amax));
  });
  row("gelu_tanh quantize, device scale", "bf16->e4m3", 3.0 * n + 12, [&] {
    BENCH_CHECK(cuact::forward_quantize(cuact::gelu_tanh{}, x16, e4, n, device_scale, amax));
  });
  row("plain softplus quantize, device scale", "bf16->e4m3", 3.0 * n + 12, [&] {
    BENCH_CHECK(cuact::forward_quantize(plain_softplus{}, x16, e4, n, device_scale, amax));
  });
  row("plain softplus quantize, 1% zeros", "bf16->e4m3", 3.0 * n + 12, [&] {
    BENCH_CHECK(cuact::forward_quantize(plain_softplus{}, x16_zeros, e4, n, device_scale, amax));
  });
  row("relu cast", "bf16->e4m3", 3.0 * n,
      [&] { BENCH_CHECK(cuact::forward_cast(cuact::relu{}, x16, e4, n)); });
  row("silu cast", "bf16->e4m3", 3.0 * n,
      [&] { BENCH_CHECK(cuact::forward_cast(cuact::silu{}, x16, e4, n)); });
  row("gelu cast", "bf16->e4m3", 3.0 * n,
      [&] { BENCH_CHECK(cuact::forward_cast(cuact::gelu{}, x16, e4, n)); });
}

}  // namespace cuact_bench_fused

int main(int argc, char** argv) {
  using namespace cuact_bench_fused;
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rows" && i + 1 < argc)
      o.rows = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--cols" && i + 1 < argc)
      o.cols = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--reps" && i + 1 < argc)
      o.reps = std::atoi(argv[++i]);
    else if (arg == "--filter" && i + 1 < argc)
      o.filter = argv[++i];
    else if (arg == "--quick")
      o.rows = 256;
    else {
      std::printf(
          "usage: cuact_bench_fused [--rows R] [--cols C] [--reps N] [--filter TEXT] [--quick]\n");
      return arg == "--help" ? 0 : 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("cuact_bench_fused: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  const std::size_t n = o.rows * o.cols;
  buffers b{};
  b.big_bytes = 2 * n * sizeof(float);
  b.small_bytes = n * sizeof(float);
  for (char*& p : b.big) BENCH_CHECK(cudaMalloc(&p, b.big_bytes));
  for (char*& p : b.small) BENCH_CHECK(cudaMalloc(&p, b.small_bytes));
  std::printf("cuact_bench_fused: %s, %zu x %zu output elements, median of %d\n", prop.name, o.rows,
              o.cols, o.reps);
  // the header bench/to_csv.py reads (its mode "fused"), as cuact_bench prints it
  int driver = 0, runtime = 0;
  BENCH_CHECK(cudaDriverGetVersion(&driver));
  BENCH_CHECK(cudaRuntimeGetVersion(&runtime));
  char date[16] = "";
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::printf("# cuact_bench --fused, %s\n# device 0: %s, %d SMs\n# CUDA driver %d, runtime %d\n",
              date, prop.name, prop.multiProcessorCount, driver, runtime);
  std::printf("# n = %zu x %zu = %zu elements\n", o.rows, o.cols, n);
  std::printf("%-34s %-12s %9s %9s %9s %9s %8s\n", "op", "dtype", "GB", "ms", "GB/s", "copy GB/s",
              "x copy");
  run_type<float>(o, b, "fp32");
  run_type<__nv_bfloat16>(o, b, "bf16");
  run_casts(o, b);
  for (char* p : b.big) cudaFree(p);
  for (char* p : b.small) cudaFree(p);
  return 0;
}
