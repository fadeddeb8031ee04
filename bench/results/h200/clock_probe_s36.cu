// Session 36 probe: the SM clock just before and just after a timed call (one warp spinning 200k cycles
// against %globaltimer), for the tabulated bf16 forward (plain silu) and the built-in silu after two calls
// of `pre`: is the table's speed the clock's?
// Built against include/ of a06925c; results in table_state_s36.txt.
#include "common/plain_functors.hpp"
#include "proto_common.cuh"

__global__ void clock_rate(float* mhz) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  while (clock64() - c0 < 200000) {
  }
  const long long c1 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  if (threadIdx.x == 0) *mhz = float(c1 - c0) * 1000.0f / float(t1 - t0);
}

int main() {
  using T = __nv_bfloat16;
  const std::size_t n = std::size_t(4096) * 393216;
  T *x, *y, *dst;
  unsigned char* flush;
  float* mhz;
  const std::size_t flush_bytes = 128 << 20;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&y, n * sizeof(T)));
  CK(cudaMalloc(&dst, n * sizeof(T)));
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMallocManaged(&mhz, 2 * sizeof(float)));
  fill_normal<<<4096, 256>>>(x, n, 36);
  CK(cudaDeviceSynchronize());
  const char* names[] = {"memcpy", "builtin silu", "table", "flush fill"};
  struct Row {
    int timed, pre;
    std::vector<float> ms, before, after;
  };
  std::vector<Row> rows;
  for (int t : {2, 1})
    for (int p = 0; p < 4; ++p) rows.push_back({t, p});
  const auto run = [&](int p) {
    if (p == 0) CK(cudaMemcpyAsync(dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice));
    if (p == 1) CK(cuact::forward(cuact::silu{}, x, y, n));
    if (p == 2) CK(cuact::forward(cuact_test::plain::silu{}, x, y, n));
    if (p == 3) fill_ones_kernel<<<1056, 256>>>(flush, flush_bytes);
  };
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int order = 0; order < 2; ++order)
    for (int round = 0; round < 10; ++round)
      for (std::size_t k = 0; k < rows.size(); ++k) {
        Row& r = rows[order == 0 ? k : rows.size() - 1 - k];
        run(r.pre);
        run(r.pre);
        clock_rate<<<1, 32>>>(mhz);
        CK(cudaEventRecord(e0));
        run(r.timed);
        CK(cudaEventRecord(e1));
        clock_rate<<<1, 32>>>(mhz + 1);
        CK(cudaDeviceSynchronize());
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        r.ms.push_back(ms);
        r.before.push_back(mhz[0]);
        r.after.push_back(mhz[1]);
      }
  const auto lo = [](std::vector<float> v) { return *std::min_element(v.begin(), v.end()); };
  std::printf(
      "bf16, n = 4096 x 393216, legacy stream; 20 rounds (10 listed, 10 reversed): median ms, SM MHz "
      "before / after (median, min)\n");
  for (auto& r : rows)
    std::printf("%-13s after %-13s %.4f ms  %6.0f (%4.0f) / %6.0f (%4.0f) MHz\n", names[r.timed],
                names[r.pre], med(r.ms), med(r.before), lo(r.before), med(r.after), lo(r.after));
  return 0;
}
