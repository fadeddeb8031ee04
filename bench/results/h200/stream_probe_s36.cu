// Session 36 probe: the tabulated bf16 forward of a plain silu (library HEAD) on each kind of stream,
// in two orders, and after a call on another stream; the built-in silu as a control.
// Built against include/ of a06925c, and again with launch_kernel_grid's `&& !is_legacy_default_stream(stream)`
// taken out (the launch attribute on every stream, b5d01c7's rule); results in table_state_s36.txt.
#include "common/plain_functors.hpp"
#include "proto_common.cuh"

int main() {
  using T = __nv_bfloat16;
  const std::size_t n = std::size_t(4096) * 393216;
  T *x, *y, *dst;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&y, n * sizeof(T)));
  CK(cudaMalloc(&dst, n * sizeof(T)));
  fill_normal<<<4096, 256>>>(x, n, 36);
  CK(cudaDeviceSynchronize());
  cudaStream_t nb, bl;
  CK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
  CK(cudaStreamCreate(&bl));
  struct Row {
    const char* name;
    cudaStream_t s;
    int kind;             // 0 memcpy, 1 table, 2 builtin
    cudaStream_t before;  // one table call there (then a device sync) before the timed call; 0 none
    std::vector<float> ms[2];
  };
  const cudaStream_t none = reinterpret_cast<cudaStream_t>(0x7);
  std::vector<Row> rows = {
      {"memcpy legacy", nullptr, 0, none},
      {"table null", nullptr, 1, none},
      {"table cudaStreamLegacy", cudaStreamLegacy, 1, none},
      {"table nonblocking", nb, 1, none},
      {"table blocking", bl, 1, none},
      {"table per-thread", cudaStreamPerThread, 1, none},
      {"table null after nb", nullptr, 1, nb},
      {"table nb after null", nb, 1, nullptr},
      {"builtin null", nullptr, 2, none},
      {"builtin nonblocking", nb, 2, none},
  };
  const auto call = [&](int kind, cudaStream_t s) {
    if (kind == 0) CK(cudaMemcpyAsync(dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice, s));
    if (kind == 1) CK(cuact::forward(cuact_test::plain::silu{}, x, y, n, s));
    if (kind == 2) CK(cuact::forward(cuact::silu{}, x, y, n, s));
  };
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int order = 0; order < 2; ++order) {
    for (int round = 0; round < 10; ++round) {
      for (std::size_t k = 0; k < rows.size(); ++k) {
        Row& r = rows[order == 0 ? k : rows.size() - 1 - k];
        call(r.kind, r.s);
        call(r.kind, r.s);
        if (r.before != none) {
          call(1, r.before);
          CK(cudaDeviceSynchronize());
        }
        CK(cudaEventRecord(e0, r.s));
        call(r.kind, r.s);
        CK(cudaEventRecord(e1, r.s));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        r.ms[order].push_back(ms);
      }
    }
  }
  std::printf(
      "bf16 plain silu (tabulated) and built-in silu, n = 4096 x 393216, 10 rounds; medians (ms): "
      "listed order | reversed order\n");
  for (auto& r : rows) std::printf("%-24s %.4f | %.4f\n", r.name, med(r.ms[0]), med(r.ms[1]));
  return 0;
}
