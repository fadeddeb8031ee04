// Session 36 probe: does the kernel run before the tabulated bf16 forward (plain silu) set its speed through
// the SM's shared-memory carveout? Each timed table call follows two calls of `pre`; the table kernel's
// preferred carveout unset (-1), 100 (max shared) or 60 (fits 8 blocks of 17 KiB).
// Built against include/ of a06925c with table_probes_s36.diff applied (detail::proto_carveout); results in
// table_state_s36.txt.
#include "common/plain_functors.hpp"
#include "proto_common.cuh"

int main() {
  using T = __nv_bfloat16;
  const state_probe_arrays<T> arrays;
  const std::size_t n = arrays.n;
  T *const x = arrays.x, *const y = arrays.y, *const dst = arrays.dst;
  const char* pre_names[] = {"memcpy", "builtin silu", "table", "flush fill"};
  const int carveouts[] = {-1, 100, 60};
  struct Row {
    int carveout, pre;
    std::vector<float> ms[2];
  };
  std::vector<Row> rows;
  for (int c : carveouts)
    for (int p = 0; p < 4; ++p) rows.push_back({c, p});
  const auto table = [&] { CK(cuact::forward(cuact_test::plain::silu{}, x, y, n)); };
  const auto pre = [&](int p) {
    if (p == 0) CK(cudaMemcpyAsync(dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice));
    if (p == 1) CK(cuact::forward(cuact::silu{}, x, y, n));
    if (p == 2) table();
    if (p == 3) arrays.flush_l2();
  };
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int order = 0; order < 2; ++order)
    for (int round = 0; round < 10; ++round)
      for (std::size_t k = 0; k < rows.size(); ++k) {
        Row& r = rows[order == 0 ? k : rows.size() - 1 - k];
        cd::proto_carveout = r.carveout;
        pre(r.pre);
        pre(r.pre);
        CK(cudaEventRecord(e0));
        table();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        r.ms[order].push_back(ms);
      }
  std::printf(
      "bf16 plain silu (tabulated), n = 4096 x 393216, legacy stream, after two calls of `pre`; "
      "10 rounds, medians (ms): listed order | reversed\n");
  for (auto& r : rows)
    std::printf("carveout %4d  pre %-13s %.4f | %.4f\n", r.carveout, pre_names[r.pre], med(r.ms[0]),
                med(r.ms[1]));
  return 0;
}
