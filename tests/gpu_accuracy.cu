// The activation family against its references on the device (op_table.hpp, accuracy.hpp): for
// every row and dtype, cuact::forward, cuact::backward (dy = 1 and a random dy) and
// cuact::backward_from_output over every 16-bit bit pattern, and for float and double over random
// values in the row's domain plus special values and kink neighbours, judged as cpu_accuracy
// judges the host. This is where the hardware approximations of the 16-bit paths (ex2/lg2/rcp/
// tanh.approx) meet the 1-ulp contract; it prints the worst ulp per row, dtype and pass.
#include "catch.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <vector>

#include <cuact/cuact.cuh>

#include "accuracy.hpp"

using namespace cuact_test;

namespace {

#define ACCURACY_CUDA_REQUIRE(call)                     \
  do {                                                  \
    const cudaError_t status_ = (call);                 \
    INFO(#call << " -> " << cudaGetErrorName(status_)); \
    REQUIRE(status_ == cudaSuccess);                    \
  } while (0)

/// A device copy of a host vector, freed on scope exit.
template <class T>
class device_array {
 public:
  explicit device_array(std::size_t n) : n_(n) {
    ACCURACY_CUDA_REQUIRE(cudaMalloc(&ptr_, n * sizeof(T)));
  }
  explicit device_array(const std::vector<T>& host) : device_array(host.size()) {
    ACCURACY_CUDA_REQUIRE(cudaMemcpy(ptr_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  ~device_array() { cudaFree(ptr_); }
  T* get() const { return ptr_; }
  std::vector<T> to_host() const {
    std::vector<T> host(n_);
    ACCURACY_CUDA_REQUIRE(cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t n_;
};

}  // namespace

TEMPLATE_TEST_CASE("activation family within tolerance of its references (device)",
                   "[gpu][accuracy]", CUACT_TEST_DTYPES) {
  using T = TestType;
  const std::uint64_t seed = Catch::getSeed() + 1100;
  for_each_activation([&](const auto& row) {
    using A = typename std::decay_t<decltype(row)>::activation_type;
    const auto xs = accuracy_inputs<T>(row, 100000, seed);
    const auto dys = accuracy_dys<T>(xs.size(), seed + 1);
    const std::size_t n = xs.size();
    const device_array<T> x(xs), dy(dys), one(std::vector<T>(n, static_cast<T>(1.0f))), y(n), dx(n);
    row_results<T> got;
    ACCURACY_CUDA_REQUIRE(cuact::forward(row.act, x.get(), y.get(), n));
    ACCURACY_CUDA_REQUIRE(cudaDeviceSynchronize());
    got.y = y.to_host();
    if constexpr (cuact::has_derivative_v<A>) {
      ACCURACY_CUDA_REQUIRE(cuact::backward(row.act, x.get(), one.get(), dx.get(), n));
      got.dx_one = dx.to_host();
      ACCURACY_CUDA_REQUIRE(cuact::backward(row.act, x.get(), dy.get(), dx.get(), n));
      got.dx = dx.to_host();
    }
    if constexpr (cuact::has_derivative_from_output_v<A>) {
      ACCURACY_CUDA_REQUIRE(cuact::backward_from_output(row.act, y.get(), one.get(), dx.get(), n));
      got.dx_from_y_one = dx.to_host();
      ACCURACY_CUDA_REQUIRE(cuact::backward_from_output(row.act, y.get(), dy.get(), dx.get(), n));
      got.dx_from_y = dx.to_host();
    }
    const auto tallies = judge_row(row, xs, dys, got);
    print_tallies<T>("gpu", row.name, tallies);
    for (const auto& p : tallies) {
      INFO(type_name<T>() << " " << row.name << " " << p.what << ": "
                          << (p.first_failures.empty() ? "" : p.first_failures.front()));
      CHECK(p.failures == 0);
    }
  });
}
