// Session 36 probe: the tabulated bf16 forward's launch shape (threads per block x passes), plain silu and
// softplus (library HEAD but for the shape: .device/s36/inc_shape), round-robin in the listed order and reversed.
// Built against include/ of a06925c with table_probes_s36.diff applied (detail::proto_tab_*); results in
// table_state_s36.txt.
#include "common/plain_functors.hpp"
#include "proto_common.cuh"

struct Shape {
  const char* name;
  unsigned block, passes, resident;
};

int main() {
  using T = __nv_bfloat16;
  const std::size_t n = std::size_t(4096) * 393216;
  T *x, *y, *dst;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&y, n * sizeof(T)));
  CK(cudaMalloc(&dst, n * sizeof(T)));
  fill_normal<<<4096, 256>>>(x, n, 36);
  CK(cudaDeviceSynchronize());
  const Shape shapes[] = {{"256x4 (HEAD)", 256, 4, 0},
                          {"256x8", 256, 8, 0},
                          {"256x16", 256, 16, 0},
                          {"256 resident 8/SM", 256, 0, 8},
                          {"256 resident 4/SM", 256, 0, 4},
                          {"512x2", 512, 2, 0},
                          {"512x4", 512, 4, 0},
                          {"512x8", 512, 8, 0},
                          {"1024x1", 1024, 1, 0},
                          {"1024x2", 1024, 2, 0},
                          {"1024x4", 1024, 4, 0},
                          {"1024 resident 2/SM", 1024, 0, 2}};
  const int n_shapes = sizeof(shapes) / sizeof(shapes[0]);
  struct Row {
    std::string name;
    int fn;
    int shape;
    std::vector<float> ms[2];
  };
  std::vector<Row> rows;
  rows.push_back({"memcpy", 0, -1});
  rows.push_back({"builtin silu", 1, -1});
  for (int fn = 2; fn <= 3; ++fn)
    for (int s = 0; s < n_shapes; ++s)
      rows.push_back({std::string(fn == 2 ? "silu " : "softplus ") + shapes[s].name, fn, s});
  const auto call = [&](const Row& r) {
    if (r.shape >= 0) {
      cd::proto_tab_block = shapes[r.shape].block;
      cd::proto_tab_passes = shapes[r.shape].passes;
      cd::proto_tab_resident_blocks = shapes[r.shape].resident;
    }
    if (r.fn == 0) CK(cudaMemcpyAsync(dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice));
    if (r.fn == 1) CK(cuact::forward(cuact::silu{}, x, y, n));
    if (r.fn == 2) CK(cuact::forward(cuact_test::plain::silu{}, x, y, n));
    if (r.fn == 3) CK(cuact::forward(cuact_test::plain::softplus{}, x, y, n));
  };
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int order = 0; order < 2; ++order)
    for (int round = 0; round < 10; ++round)
      for (std::size_t k = 0; k < rows.size(); ++k) {
        Row& r = rows[order == 0 ? k : rows.size() - 1 - k];
        call(r);
        call(r);
        CK(cudaEventRecord(e0));
        call(r);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        r.ms[order].push_back(ms);
      }
  const double copy = (med(rows[0].ms[0]) + med(rows[0].ms[1])) / 2;
  std::printf(
      "bf16, n = 4096 x 393216, 10 rounds, legacy stream; medians (ms, x memcpy): listed order | reversed\n");
  for (auto& r : rows)
    std::printf("%-28s %.4f %.3f | %.4f %.3f\n", r.name.c_str(), med(r.ms[0]), copy / med(r.ms[0]),
                med(r.ms[1]), copy / med(r.ms[1]));
  return 0;
}
