// Session 36 probe: fp32 plain user functors without a hint (the model's estimate) against is_heavy, after a fill
// kernel (PyTorch's timer) and after a direct forward onto the same output; steady calls 3-12 of 12.
// Built against include/ of c910e80 (the library of 0761f89) with
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results -I tests -I bench bench/results/h200/fp32_user_probe_s36.cu
// results in fp32_user_probe_s36.txt.
#include "common/plain_functors.hpp"
#include "proto_common.cuh"

template <class F>
struct hinted : F {
  static constexpr bool is_heavy = true;
};

int main() {
  using T = float;
  const state_probe_arrays<T> arrays;
  const std::size_t n = arrays.n;
  T *const x = arrays.x, *const y = arrays.y;
  const auto fill = [&] { arrays.flush_l2(); };
  const auto memcpy_ = [&] { arrays.copy(); };
  const auto direct = [&] { CK(cuact::forward(cuact::relu{}, x, y, n)); };
  using namespace cuact_test::plain;
  std::vector<float> copy, r[8][2];
  for (int round = 0; round < 3; ++round) {
    copy.push_back(steady_ms(memcpy_, memcpy_));
    int k = 0;
    const auto both = [&](auto f) {
      const auto call = [&] { CK(cuact::forward(f, x, y, n)); };
      r[k][0].push_back(steady_ms(fill, call));
      r[k][1].push_back(steady_ms(direct, call));
      ++k;
    };
    both(sigmoid{}), both(hinted<sigmoid>{}), both(silu{}), both(hinted<silu>{});
    both(elu{}), both(hinted<elu>{}), both(softplus{}), both(hinted<softplus>{});
  }
  const char* names[] = {"sigmoid", "sigmoid heavy", "silu",     "silu heavy",
                         "elu",     "elu heavy",     "softplus", "softplus heavy"};
  const float c = med(copy);
  std::printf(
      "fp32 plain user functors, n = 4096 x 393216, legacy stream; memcpy %.1f us; medians of 3 rounds "
      "(us, x memcpy): after a fill kernel | after a direct forward onto y\n",
      1000 * c);
  for (int k = 0; k < 8; ++k)
    std::printf("  %-15s %8.1f %.3f | %8.1f %.3f\n", names[k], 1000 * med(r[k][0]),
                c / med(r[k][0]), 1000 * med(r[k][1]), c / med(r[k][1]));
  return 0;
}
