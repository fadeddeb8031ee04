// Session 36 probe: which work before the tabulated bf16 forward (plain silu, x -> y) sets its fast or slow
// state: the same kernel on other buffers, a memcpy onto the table's own output, a light built-in op; and
// whether the states exist at smaller sizes. Twelve table calls in a row after two calls of `pre`.
// Built against include/ of e8288fc; results in table_state_s36.txt, section 9.
#include "common/plain_functors.hpp"
#include "proto_common.cuh"

int main() {
  using T = __nv_bfloat16;
  const state_probe_arrays<T> arrays(/*second_pair=*/true);
  const std::size_t full = arrays.n;
  T *const x = arrays.x, *const y = arrays.y, *const x2 = arrays.x2, *const y2 = arrays.y2,
           *const dst = arrays.dst;
  const char* names[] = {"builtin silu x->y",   "builtin silu x2->y2", "memcpy x->y",
                         "memcpy x->dst",       "flush fill",          "builtin relu x->y",
                         "table softplus x->y", "table silu x2->y2"};
  const int n_pre = 8, calls = 12;
  for (std::size_t n : {full, std::size_t(1) << 29, std::size_t(1) << 28}) {
    const auto run = [&](int p) {
      if (p == 0) CK(cuact::forward(cuact::silu{}, x, y, n));
      if (p == 1) CK(cuact::forward(cuact::silu{}, x2, y2, n));
      if (p == 2) CK(cudaMemcpyAsync(y, x, n * sizeof(T), cudaMemcpyDeviceToDevice));
      if (p == 3) CK(cudaMemcpyAsync(dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice));
      if (p == 4) arrays.flush_l2();
      if (p == 5) CK(cuact::forward(cuact::relu{}, x, y, n));
      if (p == 6) CK(cuact::forward(cuact_test::plain::softplus{}, x, y, n));
      if (p == 7) CK(cuact::forward(cuact_test::plain::silu{}, x2, y2, n));
      if (p == 8) CK(cuact::forward(cuact_test::plain::silu{}, x, y, n));
    };
    std::vector<float> ms[n_pre][calls];
    for (int round = 0; round < 4; ++round)
      for (int p = 0; p < n_pre; ++p) {
        const std::vector<float> t = time_in_a_row([&] { run(p); }, [&] { run(8); }, calls);
        for (int c = 0; c < calls; ++c) ms[p][c].push_back(t[c]);
      }
    std::printf(
        "n = %zu (bf16), table silu x->y, 12 calls after two of `pre`, medians of 4 rounds (us): first, "
        "second, calls 3-12 (min-max of their medians)\n",
        n);
    for (int p = 0; p < n_pre; ++p) {
      float lo = 1e9f, hi = 0;
      for (int c = 2; c < calls; ++c)
        lo = std::min(lo, med(ms[p][c])), hi = std::max(hi, med(ms[p][c]));
      std::printf("  after %-20s %8.1f %8.1f   %8.1f-%8.1f\n", names[p], 1000 * med(ms[p][0]),
                  1000 * med(ms[p][1]), 1000 * lo, 1000 * hi);
    }
  }
  return 0;
}
