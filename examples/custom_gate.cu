// A gate of your own, out = gate(a, b), fused forward and backward: a struct with operator()(a, b)
// and its two partial derivatives (include/cuact/gate.cuh), here sigmoid(a) * (b + shift), run on
// separate arrays and on the packed [rows, 2 * cols] layout; and gpt-oss's built-in clamped
// SwiGLU. Checks every result against a float64 host reference and exits 77 without a GPU.
#include <cuact/cuact.cuh>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

// Stops the example at the first failed CUDA or cuact call, with the runtime's error text.
static void check(cudaError_t status) {
  if (status != cudaSuccess) {
    std::printf("error: %s (%s)\n", cudaGetErrorString(status), cuact::last_error_detail());
    std::exit(1);
  }
}

// example-begin custom_gate
/// sigmoid(a) * (b + shift): a gate whose b side is transformed too.
struct shifted_sigmoid_gate {
  static constexpr cuact::cost cost = cuact::cost::heavy;  // an exponential: the cost hint
  double shift = 1.0;
  template <class C>
  __host__ __device__ C operator()(C a, C b) const {
    return C(1) / (C(1) + exp(-a)) * (b + C(shift));
  }
  template <class C>  // d gate / d a: s (1 - s) = e / (1 + e)^2, e = exp(-|a|) (no 1 - s to cancel)
  __host__ __device__ C partial_a(C a, C b) const {
    const C e = exp(-fabs(a)), q = C(1) / (C(1) + e);
    return e * q * q * (b + C(shift));
  }
  template <class C>  // d gate / d b
  __host__ __device__ C partial_b(C a, C) const {
    return C(1) / (C(1) + exp(-a));
  }
};
// example-end custom_gate

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("custom_gate: no CUDA device here, skipped\n");
    return 77;  // CTest reports exit code 77 as skipped
  }
  const std::size_t rows = 48, cols = 1001, n = rows * cols;
  std::vector<float> ab(2 * n), dy(n);
  for (std::size_t i = 0; i < ab.size(); ++i)
    ab[i] = std::sin(0.37f * static_cast<float>(i)) * 9.0f;  // beyond gpt-oss's clamp at +-7
  for (std::size_t i = 0; i < n; ++i) dy[i] = std::cos(0.11f * static_cast<float>(i));
  float *d_ab = nullptr, *d_dy = nullptr, *d_out = nullptr, *d_da = nullptr, *d_db = nullptr,
        *d_dab = nullptr, *d_clamped = nullptr;
  check(cudaMalloc(&d_ab, 2 * n * sizeof(float)));
  check(cudaMalloc(&d_dab, 2 * n * sizeof(float)));
  check(cudaMalloc(&d_dy, n * sizeof(float)));
  check(cudaMalloc(&d_out, n * sizeof(float)));
  check(cudaMalloc(&d_da, n * sizeof(float)));
  check(cudaMalloc(&d_db, n * sizeof(float)));
  check(cudaMalloc(&d_clamped, n * sizeof(float)));
  check(cudaMemcpy(d_ab, ab.data(), 2 * n * sizeof(float), cudaMemcpyHostToDevice));
  check(cudaMemcpy(d_dy, dy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const float* d_a = d_ab;      // the first n elements as a
  const float* d_b = d_ab + n;  // the next n as b

  // example-begin gate_entries
  const shifted_sigmoid_gate gate{0.5};
  // out = gate(a, b), and (da, db) = (dy * d gate / d a, dy * d gate / d b), one pass each
  check(cuact::gate_forward(gate, d_a, d_b, d_out, n));
  check(cuact::gate_backward(gate, d_a, d_b, d_dy, d_da, d_db, n));
  // the packed layout [rows, 2 * cols]: a the first half of each row, b the second
  check(cuact::gate_backward_packed(gate, d_ab, d_dy, d_dab, rows, cols));
  // gpt-oss's clamped SwiGLU: silu_alpha(min(a, 7)) * (clamp(b, -7, 7) + 1), alpha = 1.702
  check(cuact::gate_forward(cuact::clamped_swiglu{1.702, 7.0}, d_a, d_b, d_clamped, n));
  // example-end gate_entries

  std::vector<float> out(n), da(n), db(n), dab(2 * n), clamped(n);
  check(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(da.data(), d_da, n * sizeof(float), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(db.data(), d_db, n * sizeof(float), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(dab.data(), d_dab, 2 * n * sizeof(float), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(clamped.data(), d_clamped, n * sizeof(float), cudaMemcpyDeviceToHost));
  // float64 references; a relative error of 1e-5 is a few float roundings of each factor
  const auto off = [](double got, double want) {
    return std::fabs(got - want) / (std::fabs(want) + 1e-6);
  };
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double a = ab[i], b = ab[n + i], g = dy[i];
    const double s = 1 / (1 + std::exp(-a));
    worst = std::fmax(worst, off(out[i], s * (b + 0.5)));
    worst = std::fmax(worst, off(da[i], g * s * (1 - s) * (b + 0.5)));
    worst = std::fmax(worst, off(db[i], g * s));
    const double x = std::fmin(a, 7.0), up = std::fmax(-7.0, std::fmin(b, 7.0)) + 1;
    worst = std::fmax(worst, off(clamped[i], x / (1 + std::exp(-1.702 * x)) * up));
  }
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      const double a = ab[r * 2 * cols + c], b = ab[r * 2 * cols + cols + c], g = dy[r * cols + c];
      const double s = 1 / (1 + std::exp(-a));
      worst = std::fmax(worst, off(dab[r * 2 * cols + c], g * s * (1 - s) * (b + 0.5)));
      worst = std::fmax(worst, off(dab[r * 2 * cols + cols + c], g * s));
    }
  }
  for (float* p : {d_ab, d_dab, d_dy, d_out, d_da, d_db, d_clamped}) cudaFree(p);
  std::printf("custom_gate: %zu elements, worst relative error %.2e\n", n, worst);
  return worst < 1e-5 ? 0 : 1;
}
