// Seeded random cases on the device: activation (any row of the op table) x pass (forward for every
// row; backward and backward_from_output for relu and selu, as gpu_backward covers every row's
// already: fewer kernels to compile) x dtype x vector width (every width for relu and selu) x n
// (mostly small, up to 10^7) x each pointer's offset x in/out of place x launch (the public entry,
// or elementwise_kernel launched directly with a random grid, block and vectors per thread) x
// stream (legacy default, blocking, non-blocking); and ReLU mask round trips likewise. Every
// element, the guards around every array and the inputs are checked as in gpu_forward.
//
// CUACT_FUZZ_SEED (default: from the clock) and CUACT_FUZZ_CASES (default 12000; 300 with
// CUACT_TEST_QUICK=1, which also caps n at 20000) steer it; the seed is printed first, so
//     CUACT_FUZZ_SEED=<seed> ./gpu_fuzz
// replays a failure.
#include <array>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <random>
#include <vector>

#include "catch.hpp"
#include "gpu_cases.hpp"

using namespace cuact_test;

namespace {

/// What each row of the table has: the passes the fuzz runs, and whether it is a deep row (every
/// width, every pass).
struct row_facts {
  std::array<bool, 3> passes;
  bool deep;
};
std::vector<row_facts> table_facts() {
  std::vector<row_facts> facts;
  for_each_activation([&](const auto& row) {
    using A = typename std::decay_t<decltype(row)>::activation_type;
    facts.push_back({{true, deep_row_v<A> && pass_applies_v<pass::backward, A>,
                      deep_row_v<A> && pass_applies_v<pass::backward_from_output, A>},
                     deep_row_v<A>});
  });
  return facts;
}

struct fuzz_case {
  int dtype;  // float, double, half, bfloat16
  int row;    // in the op table; -1: a ReLU mask round trip
  pass p;
  gpu_case c;
};

constexpr int widths_for(int dtype) {
  return dtype == 1 ? 3 : dtype == 0 ? 4 : 5;
}  // 1, 2, (4, (8)), auto

fuzz_case generate(std::mt19937_64& rng, const std::vector<row_facts>& facts, bool quick) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto pick = [&](std::size_t count) {
    return std::uniform_int_distribution<std::size_t>(0, count - 1)(rng);
  };
  const auto log_uniform = [&](double lo, double hi) {
    return static_cast<std::size_t>(
        std::exp(std::log(lo) + unit(rng) * (std::log(hi) - std::log(lo))));
  };
  fuzz_case f;
  f.dtype = static_cast<int>(pick(4));
  f.row = pick(12) == 0 ? -1 : static_cast<int>(pick(facts.size()));
  std::vector<pass> passes;
  if (f.row >= 0) {
    for (int k = 0; k < 3; ++k) {
      if (facts[f.row].passes[k]) passes.push_back(static_cast<pass>(k));
    }
  }
  f.p = f.row >= 0 ? passes[pick(passes.size())] : pass::forward;
  const double u = unit(rng);
  std::size_t n = u < 0.5     ? pick(65)
                  : u < 0.8   ? 65 + pick(4032)
                  : u < 0.95  ? log_uniform(4096, 1.5e5)
                  : u < 0.995 ? log_uniform(1.5e5, 2e6)
                              : log_uniform(2e6, 1e7);
  if (quick) n = std::min<std::size_t>(n, 20000);
  gpu_case& c = f.c;
  c.n = f.row < 0 ? std::min<std::size_t>(n, 2000000) : n;
  static const int widths[] = {1, 2, 4, 8};
  const bool every_width = f.row < 0 || facts[f.row].deep;
  const std::size_t w = every_width ? pick(widths_for(f.dtype)) : 99;
  c.width = w < static_cast<std::size_t>(widths_for(f.dtype) - 1) ? widths[w] : cuact::auto_width;
  // each pointer's offset: all equal half of the time (the vector path), else independent
  const std::size_t base = pick(16);
  const bool same = unit(rng) < 0.5;
  for (std::size_t& o : c.in_offset) o = same ? base : pick(16);
  for (std::size_t& o : c.out_offset) o = same ? base : pick(16);
  if (unit(rng) < 0.3) {
    c.in_place = pass_inputs(f.p) - 1;
    c.in_place_overload = f.p == pass::forward && unit(rng) < 0.5;
  }
  c.launch.direct = unit(rng) < 0.5;
  c.launch.grid_choice = static_cast<unsigned>(rng());
  c.launch.block_choice = static_cast<unsigned>(rng());
  c.launch.vectors_per_thread = 1 + static_cast<unsigned>(pick(8));
  c.launch.stream = static_cast<int>(pick(3));
  c.seed = rng();
  return f;
}

/// Runs this dtype's cases, op by op.
template <class T>
void run_dtype(int dtype, const std::vector<fuzz_case>& cases, guarded_arena& arena,
               const test_streams& streams, tally& total) {
  int index = 0;
  for_each_activation([&](const auto& row) {
    const int r = index++;
    using A = typename std::decay_t<decltype(row)>::activation_type;
    for_each_pass([&](auto p) {
      constexpr pass P = decltype(p)::value;
      if constexpr (pass_applies_v<P, A> && (P == pass::forward || deep_row_v<A>)) {
        const std::string name = type_name<T>() + " " + row.name + " " + pass_name(P);
        pass_batch<P, T, A> batch(pass_op<P, T>(row.act), name, arena, streams, total);
        const auto launch = any_width_launcher<P, T>(row.act);
        for (const fuzz_case& f : cases) {
          if (f.dtype == dtype && f.row == r && f.p == P) batch.add(f.c, launch);
        }
        batch.flush(launch);
      }
    });
  });
  mask_batch<T> masks(arena, streams, total);
  const auto launch = [](mask_case& c, const T* x, T* out, std::uint32_t* mask, const T* dy, T* dx,
                         cudaStream_t s) {
    cudaError_t status = cudaErrorNotSupported;
    for_each_width<T>([&](auto w) {
      if (decltype(w)::value == c.width)
        status = launch_mask_case<T, decltype(w)::value>(c, x, out, mask, dy, dx, s);
    });
    return status;
  };
  for (const fuzz_case& f : cases) {
    if (f.dtype != dtype || f.row >= 0) continue;
    mask_case m;
    m.n = f.c.n;
    m.x_offset = f.c.in_offset[0];
    m.out_offset = f.c.out_offset[0];
    m.dy_offset = f.c.in_offset[1];
    m.dx_offset = f.c.out_offset[1];
    m.mask_word_offset = f.c.in_offset[2] % 4;
    m.forward_in_place = f.c.seed % 3 == 0;
    m.backward_in_place = f.c.seed % 5 < 2;
    m.width = f.c.width;
    m.launch = f.c.launch;
    m.seed = f.c.seed;
    masks.add(m, launch);
  }
  masks.flush(launch);
}

}  // namespace

TEST_CASE("gpu fuzz: random table ops and mask round trips through the entries and direct launches",
          "[gpu][fuzz]") {
  const bool quick = quick_mode();
  const std::uint64_t clock_seed =
      static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  const std::uint64_t seed = env_u64("CUACT_FUZZ_SEED", mix64(clock_seed));
  const std::size_t count = env_u64("CUACT_FUZZ_CASES", quick ? 300 : 12000);
  std::printf("gpu_fuzz: CUACT_FUZZ_SEED=%" PRIu64 " CUACT_FUZZ_CASES=%zu%s\n", seed, count,
              quick ? " (quick)" : "");
  std::fflush(stdout);
  CAPTURE(seed);
  const std::vector<row_facts> facts = table_facts();
  std::mt19937_64 rng(seed);
  std::vector<fuzz_case> cases;
  for (std::size_t i = 0; i < count; ++i) cases.push_back(generate(rng, facts, quick));
  guarded_arena arena;
  test_streams streams;
  tally all;
  run_dtype<float>(0, cases, arena, streams, all);
  run_dtype<double>(1, cases, arena, streams, all);
  run_dtype<__half>(2, cases, arena, streams, all);
  run_dtype<__nv_bfloat16>(3, cases, arena, streams, all);
  std::printf("gpu_fuzz: seed %" PRIu64
              ": cases run %zu, elements %zu, mismatches %zu (in %zu cases)\n",
              seed, all.cases, all.elements, all.bad_elements, all.failed_cases);
  CHECK(all.cases == count);
  CHECK(all.failed_cases == 0);
}
