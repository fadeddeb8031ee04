// Session 36 probe: 12 tabulated bf16 forwards (plain silu) in a row, each timed, after two calls of `pre`:
// how long the table's slow or fast state lasts.
// Built against include/ of a06925c; results in table_state_s36.txt.
#include "common/plain_functors.hpp"
#include "proto_common.cuh"

__global__ void spin(long long cycles) {
  const long long c0 = clock64();
  while (clock64() - c0 < cycles) {
  }
}

int main() {
  using T = __nv_bfloat16;
  const state_probe_arrays<T> arrays;
  const std::size_t n = arrays.n;
  T *const x = arrays.x, *const y = arrays.y, *const dst = arrays.dst;
  const char* names[] = {"memcpy", "builtin silu", "table", "flush fill", "spin 1 ms"};
  const int calls = 12;
  std::vector<float> ms[5][calls];
  const auto run = [&](int p) {
    if (p == 0) CK(cudaMemcpyAsync(dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice));
    if (p == 1) CK(cuact::forward(cuact::silu{}, x, y, n));
    if (p == 2) CK(cuact::forward(cuact_test::plain::silu{}, x, y, n));
    if (p == 3) arrays.flush_l2();
    if (p == 4) spin<<<1, 32>>>(1000000);
  };
  for (int round = 0; round < 6; ++round)
    for (int p = 0; p < 5; ++p) {
      const std::vector<float> t = time_in_a_row([&] { run(p); }, [&] { run(2); }, calls);
      for (int c = 0; c < calls; ++c) ms[p][c].push_back(t[c]);
    }
  std::printf(
      "bf16 plain silu (tabulated), n = 4096 x 393216, legacy stream: 12 calls in a row after two calls of "
      "`pre`, each timed; medians of 6 rounds (ms)\n");
  for (int p = 0; p < 5; ++p) {
    std::printf("after %-13s", names[p]);
    for (int c = 0; c < calls; ++c) std::printf(" %.4f", med(ms[p][c]));
    std::printf("\n");
  }
  return 0;
}
