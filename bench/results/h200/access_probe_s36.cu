// Session 36 probe: the tabulated bf16 forward's loads and stores (PROTO_LOAD 0 plain, 1 ld.global.cs, 2
// ld.global.L1::no_allocate; PROTO_STORE 0 plain, 1 st.global.cs; HEAD is 1/1) against the work before it.
// Twelve table calls (plain silu x -> y) after two calls of `pre`; memcpy x -> dst timed the same way.
// Built against include/ of e8288fc with table_probes_s36.diff's table.cuh part, once per -DPROTO_LOAD=L
// -DPROTO_STORE=S; and against the library with plain accesses (the macros then only label the output). Results in
// table_state_s36.txt, sections 10 and 12.
#include "common/plain_functors.hpp"
#include "proto_common.cuh"

int main() {
  using T = __nv_bfloat16;
  const state_probe_arrays<T> arrays(/*second_pair=*/true);
  const std::size_t n = arrays.n;
  T *const x = arrays.x, *const y = arrays.y, *const x2 = arrays.x2, *const y2 = arrays.y2,
           *const dst = arrays.dst;
  const char* names[] = {"builtin silu x->y", "builtin silu x2->y2", "memcpy x->dst", "flush fill",
                         "table silu x2->y2"};
  const int n_pre = 5, calls = 12;
  const auto run = [&](int p) {
    if (p == 0) CK(cuact::forward(cuact::silu{}, x, y, n));
    if (p == 1) CK(cuact::forward(cuact::silu{}, x2, y2, n));
    if (p == 2) CK(cudaMemcpyAsync(dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice));
    if (p == 3) arrays.flush_l2();
    if (p == 4) CK(cuact::forward(cuact_test::plain::silu{}, x2, y2, n));
    if (p == 5) CK(cuact::forward(cuact_test::plain::silu{}, x, y, n));
  };
  std::vector<float> ms[n_pre + 1][calls];
  for (int round = 0; round < 4; ++round)
    for (int p = 0; p <= n_pre; ++p) {
      const int timed = p == n_pre ? 2 : 5;  // the last row: memcpy after memcpy
      const std::vector<float> t =
          time_in_a_row([&] { run(p == n_pre ? 2 : p); }, [&] { run(timed); }, calls);
      for (int c = 0; c < calls; ++c) ms[p][c].push_back(t[c]);
    }
  std::vector<float> copy_all;
  for (int c = 2; c < calls; ++c) copy_all.push_back(med(ms[n_pre][c]));
  const float copy = med(copy_all);
  std::printf(
      "PROTO_LOAD %d PROTO_STORE %d: bf16 table silu x->y, n = 4096 x 393216, 12 calls after two of `pre`, "
      "medians of 4 rounds (us): first, second, calls 3-12 (min-max), x memcpy (%.1f us) of calls 3-12's median\n",
      PROTO_LOAD, PROTO_STORE, 1000 * copy);
  for (int p = 0; p < n_pre; ++p) {
    std::vector<float> rest;
    for (int c = 2; c < calls; ++c) rest.push_back(med(ms[p][c]));
    std::printf("  after %-20s %8.1f %8.1f   %8.1f-%8.1f  %.3f\n", names[p], 1000 * med(ms[p][0]),
                1000 * med(ms[p][1]), 1000 * *std::min_element(rest.begin(), rest.end()),
                1000 * *std::max_element(rest.begin(), rest.end()), copy / med(rest));
  }
  return 0;
}
