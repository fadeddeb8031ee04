// Session 36 probe: the tabulated bf16 forward with plain loads and stores (PROTO_LOAD 0, PROTO_STORE 0) or HEAD's
// streaming ones (1, 1) at several launch shapes, in the state a fill kernel leaves (PyTorch's timer) and the
// state a direct forward onto the same output leaves. Steady calls (3-12 of 12) after two of `pre`.
// Built against include/ of a06925c with all of table_probes_s36.diff, -DPROTO_LOAD=0 -DPROTO_STORE=0 and 1 1;
// results in table_state_s36.txt, section 11.
#include "common/plain_functors.hpp"
#include "proto_common.cuh"

struct Shape {
  const char* name;
  unsigned block, passes;
};

int main() {
  using T = __nv_bfloat16;
  const state_probe_arrays<T> arrays;
  const std::size_t n = arrays.n;
  T *const x = arrays.x, *const y = arrays.y;
  const Shape shapes[] = {{"256x4 (HEAD)", 256, 4}, {"256x2", 256, 2},  {"256x1", 256, 1},
                          {"128x4", 128, 4},        {"128x2", 128, 2},  {"512x1", 512, 1},
                          {"512x2", 512, 2},        {"1024x1", 1024, 1}};
  const auto memcpy_ = [&] { arrays.copy(); };
  const auto fill = [&] { arrays.flush_l2(); };
  const auto direct = [&] { CK(cuact::forward(cuact::silu{}, x, y, n)); };
  std::vector<float> copy, r[8][2];
  for (int round = 0; round < 3; ++round) {
    copy.push_back(steady_ms(memcpy_, memcpy_));
    for (int s = 0; s < 8; ++s) {
      cd::proto_tab_block = shapes[s].block;
      cd::proto_tab_passes = shapes[s].passes;
      const auto table = [&] { CK(cuact::forward(cuact_test::plain::silu{}, x, y, n)); };
      r[s][0].push_back(steady_ms(fill, table));
      r[s][1].push_back(steady_ms(direct, table));
    }
  }
  const float c = med(copy);
  std::printf(
      "PROTO_LOAD %d PROTO_STORE %d: bf16 table silu, n = 4096 x 393216; memcpy %.1f us; medians of 3 rounds of "
      "calls 3-12's medians (us, x memcpy): after a fill kernel | after a direct forward onto y\n",
      PROTO_LOAD, PROTO_STORE, 1000 * c);
  for (int s = 0; s < 8; ++s)
    std::printf("  %-14s %8.1f %.3f | %8.1f %.3f\n", shapes[s].name, 1000 * med(r[s][0]),
                c / med(r[s][0]), 1000 * med(r[s][1]), c / med(r[s][1]));
  return 0;
}
