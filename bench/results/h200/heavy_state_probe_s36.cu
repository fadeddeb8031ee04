// Session 36 probe: do fp32 forwards with long math (built-in and plain user elu and softplus, built-in gelu,
// gelu_tanh, logsigmoid, celu) run at a speed that depends on the work before them? Steady calls 3-12 of 12
// after two calls of: a fill kernel (PyTorch's timer), a light forward onto y, a memcpy x -> dst.
// Built against include/ of 311ed5e (the library of 0761f89) with
//   nvcc -O3 -std=c++17 -arch=sm_90 -I include -I bench/results -I tests -I bench bench/results/h200/heavy_state_probe_s36.cu
// results in heavy_state_probe_s36.txt.
#include "common/plain_functors.hpp"
#include "proto_common.cuh"

int main() {
  using T = float;
  const state_probe_arrays<T> arrays;
  const std::size_t n = arrays.n;
  T *const x = arrays.x, *const y = arrays.y;
  const auto fill = [&] { arrays.flush_l2(); };
  const auto memcpy_ = [&] { arrays.copy(); };
  const auto direct = [&] { CK(cuact::forward(cuact::relu{}, x, y, n)); };
  const char* names[] = {"user elu", "elu",       "user softplus", "softplus",
                         "gelu",     "gelu_tanh", "logsigmoid",    "celu"};
  std::vector<float> copy, r[8][3];
  for (int round = 0; round < 3; ++round) {
    copy.push_back(steady_ms(memcpy_, memcpy_));
    int k = 0;
    const auto all = [&](auto f) {
      const auto call = [&] { CK(cuact::forward(f, x, y, n)); };
      r[k][0].push_back(steady_ms(fill, call));
      r[k][1].push_back(steady_ms(direct, call));
      r[k][2].push_back(steady_ms(memcpy_, call));
      ++k;
    };
    all(cuact_test::plain::elu{}), all(cuact::elu{}), all(cuact_test::plain::softplus{}),
        all(cuact::softplus{});
    all(cuact::gelu{}), all(cuact::gelu_tanh{}), all(cuact::logsigmoid{}), all(cuact::celu{});
  }
  const float c = med(copy);
  std::printf(
      "fp32 forwards, n = 4096 x 393216, legacy stream; memcpy %.1f us; medians of 3 rounds (x memcpy): "
      "after a fill kernel | a relu forward onto y | a memcpy x -> dst\n",
      1000 * c);
  for (int k = 0; k < 8; ++k)
    std::printf("  %-14s %.3f | %.3f | %.3f\n", names[k], c / med(r[k][0]), c / med(r[k][1]),
                c / med(r[k][2]));
  return 0;
}
