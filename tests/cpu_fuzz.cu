// CPU fuzz of the per-thread bodies the GPU runs (elementwise_thread, sign_mask_forward_thread) over
// guarded host memory with a recording access (common/grid_simulation.hpp): seeded random
// activation (any row of the op table) x pass (every pass for relu and selu, the forward for the
// others) x dtype x vector width (every width for relu and selu) x vectors per thread x n x each pointer's offset x in/out of place x grid shape, plus
// mixed-type ops (fp32 -> bf16, fp32 -> fp8, three inputs and two outputs of five types) and the
// ReLU mask forward. Each case checks what the grid simulation checks: every access inside its
// array and aligned, every input byte read once and every output byte written once, no byte
// touched by two threads, guards intact, inputs unchanged, every output equal to the reference.
//
// CUACT_FUZZ_SEED (default: from the clock) and CUACT_FUZZ_CASES (default 2000) steer it; the seed
// is printed first, so `CUACT_FUZZ_SEED=<seed> ./cpu_fuzz` replays a failure.
#include <array>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <random>
#include <vector>

#include "catch.hpp"
#include "grid_simulation.hpp"

using namespace cuact_test;
using cuact::detail::type_list;

namespace {

/// A random grid for `work` items: threads per block from a list; one block, a few, exactly
/// enough, more than enough, or a random count; never more than 4 * work + 300 threads in all.
grid_shape random_grid(std::mt19937_64& rng, std::size_t work) {
  static const std::size_t per_block[] = {1, 2, 3, 32, 33, 64, 128, 256};
  const std::size_t threads = per_block[rng() % 8];
  const std::size_t enough = std::max<std::size_t>(1, (work + threads - 1) / threads);
  std::size_t blocks;
  switch (rng() % 5) {
    case 0:
      blocks = 1;
      break;
    case 1:
      blocks = 1 + rng() % 8;
      break;
    case 2:
      blocks = enough;
      break;
    case 3:
      blocks = 2 * enough + 1;
      break;
    default:
      blocks = 1 + rng() % enough;
      break;
  }
  return {std::min(blocks, std::max<std::size_t>(1, (4 * work + 300) / threads)), threads};
}

/// A random layout for `inputs` inputs and `outputs` outputs; in place over input `in_place_input`
/// (when allowed: output 0 and that input share a type) 30% of the time.
sim_layout random_layout(std::mt19937_64& rng, int inputs, int in_place_input) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  sim_layout l;
  const double u = unit(rng);
  l.n = u < 0.5 ? rng() % 65
        : u < 0.85
            ? 65 + rng() % 4936
            : static_cast<std::size_t>(std::exp(std::log(5000.0) + unit(rng) * std::log(20.0)));
  const std::size_t base = rng() % 16;
  const bool same = unit(rng) < 0.5;
  for (std::size_t& o : l.in_offset) o = same ? base : rng() % 16;
  for (std::size_t& o : l.out_offset) o = same ? base : rng() % 16;
  if (in_place_input >= 0 && in_place_input < inputs && unit(rng) < 0.3)
    l.in_place = in_place_input;
  l.vectors_per_thread = 1 + static_cast<unsigned>(rng() % 8);  // capped by the kernel
  l.seed = rng();
  return l;
}

/// One case of `op` at width W over the given types, under one random grid.
template <int W, class... Out, class... In, class Op>
void fuzz_one(const Op& op, type_list<Out...> outs, type_list<In...> ins, int in_place_input,
              const std::string& name, std::mt19937_64& rng, tally& total) {
  constexpr int V = resolved_width(W, cuact::detail::max_size_of<Out..., In...>());
  const sim_layout l = random_layout(rng, static_cast<int>(sizeof...(In)), in_place_input);
  elementwise_sim<V, Op, type_list<Out...>, type_list<In...>> sim(op, l);
  const auto p = sim.params();
  const std::size_t k = static_cast<std::size_t>(p.effective_vectors_per_thread());
  const grid_shape grid = random_grid(rng, std::max((p.vectors + k - 1) / k, p.head + p.tail));
  const std::string what =
      name + " W=" + std::to_string(W) + " " +
      describe_layout(l, static_cast<int>(sizeof...(In)), static_cast<int>(sizeof...(Out))) +
      " grid=" + std::to_string(grid.blocks) + "x" + std::to_string(grid.threads);
  report_case(sim.run({grid}), what, total, l.n);
  (void)outs;
  (void)ins;
}

/// A random pass of row number `pick` of the table on T.
template <class T>
void fuzz_table_case(std::size_t pick, std::mt19937_64& rng, tally& total) {
  std::size_t index = 0;
  for_each_activation([&](const auto& row) {
    if (index++ != pick) return;
    using A = typename std::decay_t<decltype(row)>::activation_type;
    const unsigned which = static_cast<unsigned>(rng() % 3);
    const auto run = [&](auto p) {
      constexpr pass P = decltype(p)::value;
      using ins = std::conditional_t<pass_inputs(P) == 1, type_list<T>, type_list<T, T>>;
      const std::string name = type_name<T>() + " " + row.name + " " + pass_name(P);
      const int in_place = pass_inputs(P) - 1;
      if constexpr (deep_row_v<A>) {
        const int choice = static_cast<int>(rng() % (sizeof(T) == 8 ? 3 : sizeof(T) == 4 ? 4 : 5));
        int i = 0;
        for_each_width<T>([&](auto w) {
          if (i++ == choice) {
            fuzz_one<decltype(w)::value>(pass_op<P, T>(row.act), type_list<T>{}, ins{}, in_place,
                                         name, rng, total);
          }
        });
      } else {
        fuzz_one<cuact::auto_width>(pass_op<P, T>(row.act), type_list<T>{}, ins{}, in_place, name,
                                    rng, total);
      }
    };
    bool done = false;
    for_each_pass([&](auto p) {
      // backward passes of relu and selu only: cpu_grid_table covers every row's (fewer instantiations)
      if constexpr (pass_applies_v<decltype(p)::value, A> &&
                    (decltype(p)::value == pass::forward || deep_row_v<A>)) {
        if (static_cast<unsigned>(decltype(p)::value) == which) {
          run(p);
          done = true;
        }
      }
    });
    if (!done) run(pass_constant<pass::forward>{});  // the row has no such pass
  });
}

/// Three inputs of three types, two outputs of two more.
struct three_in_two_out {
  template <class A, class B, class C>
  __host__ __device__ cuda::std::tuple<A, A> operator()(A a, B b, C c) const {
    return {a + A(b) * A(c), a - A(b)};
  }
};

void fuzz_mixed_case(std::mt19937_64& rng, tally& total) {
  using bf16 = __nv_bfloat16;
  switch (rng() % 6) {
    case 0:
      return fuzz_one<cuact::auto_width>(cuact::forward_op<cuact::selu, bf16>{}, type_list<bf16>{},
                                         type_list<float>{}, -1, "selu fp32 -> bf16", rng, total);
    case 1:
      return fuzz_one<2>(cuact::forward_op<cuact::selu, bf16>{}, type_list<bf16>{},
                         type_list<float>{}, -1, "selu fp32 -> bf16", rng, total);
    case 2:
      return fuzz_one<cuact::auto_width>(cuact::forward_op<cuact::relu, __nv_fp8_e4m3>{},
                                         type_list<__nv_fp8_e4m3>{}, type_list<float>{}, -1,
                                         "relu fp32 -> fp8 e4m3", rng, total);
    case 3:
      return fuzz_one<8>(cuact::forward_op<cuact::selu, __nv_fp8_e5m2>{},
                         type_list<__nv_fp8_e5m2>{}, type_list<__half>{}, -1,
                         "selu fp16 -> fp8 e5m2", rng, total);
    case 4:
      return fuzz_one<cuact::auto_width>(three_in_two_out{}, type_list<float, bf16>{},
                                         type_list<float, __half, bf16>{}, 0, "3 -> 2 mixed", rng,
                                         total);
    default:
      return fuzz_one<1>(three_in_two_out{}, type_list<double, __half>{},
                         type_list<double, float, bf16>{}, 0, "3 -> 2 fp64", rng, total);
  }
}

/// The sign-mask forward under a random grid: out = relu(in) and the mask, every access recorded.
template <class T>
void fuzz_mask_case(std::mt19937_64& rng, tally& total) {
  const sim_layout l = random_layout(rng, 1, -1);
  const bool in_place = rng() % 3 == 0;
  const std::size_t n = l.n, words = cuact::relu_mask_words(n);
  guarded_host_bytes in_array(n * sizeof(T), l.in_offset[0] * sizeof(T)),
      out_array(n * sizeof(T), l.out_offset[0] * sizeof(T)), mask_array(words * 4, (rng() % 4) * 4);
  T* const in = static_cast<T*>(in_array.data());
  T* const out = in_place ? in : static_cast<T*>(out_array.data());
  auto* const mask = static_cast<std::uint32_t*>(mask_array.data());
  for (std::size_t i = 0; i < n; ++i) in[i] = hash_value<T>(l.seed, i);
  const auto params = cuact::detail::make_sign_mask_params(cuact::forward_op<cuact::relu, T>{},
                                                           static_cast<const T*>(in), out, mask, n);
  grid_shape grid = random_grid(rng, cuact::detail::mask_bytes(n));
  // half the staged types' cases in the staged blocks (random_grid picks 128 threads in 1 of 8)
  if (cuact::detail::mask_is_staged<T> && rng() % 2 == 0) {
    grid.threads = cuact::detail::staged_mask_threads;
  }
  access_log log;
  const std::size_t in_region = log.add_region(in, n * sizeof(T));
  const std::size_t out_region = in_place ? in_region : log.add_region(out, n * sizeof(T));
  const std::size_t mask_region = log.add_region(mask, words * 4);
  simulate_sign_mask_kernel(log, grid, params);
  sim_result r;
  for (const std::string& e : log.errors()) r.problems += e + "; ";
  if (!log.each_byte(in_region, 1, in_place ? 1 : 0)) r.problems += "x not read exactly once; ";
  if (!in_place && !log.each_byte(out_region, 0, 1)) r.problems += "out not written exactly once; ";
  if (!log.each_byte(mask_region, 0, 1)) r.problems += "mask not written exactly once; ";
  if (!in_array.guards_intact() || !out_array.guards_intact() || !mask_array.guards_intact())
    r.problems += "guards changed; ";
  for (std::size_t i = 0; i < words * 32; ++i) {  // element i's bit; past n, bit i (must be 0)
    const std::size_t b = i < n ? cuact::relu_mask_bit<T>(i, n) : i;
    const bool bit = (mask[b / 32] >> (b % 32)) & 1u;
    const bool expected = i < n && to_double(hash_value<T>(l.seed, i)) > 0;
    if (bit != expected && r.bad++ < 4) r.problems += "mask bit " + std::to_string(i) + " wrong; ";
  }
  for (std::size_t i = 0; i < n; ++i) {
    const T want = cuda::std::get<0>(
        evaluate<T>(cuact::forward_op<cuact::relu, T>{}, i, hash_value<T>(l.seed, i)));
    if (!same_result(out[i], want) && r.bad++ < 4)
      r.problems += "out " + std::to_string(i) + " wrong; ";
  }
  report_case(r,
              type_name<T>() + " relu mask forward " + describe_layout(l, 1, 1) +
                  " in_place=" + std::to_string(in_place) + " grid=" + std::to_string(grid.blocks) +
                  "x" + std::to_string(grid.threads),
              total, n);
}

template <class T>
void fuzz_case_of(std::size_t rows, std::mt19937_64& rng, tally& total) {
  const std::size_t kind = rng() % (rows + 2);
  if (kind < rows) return fuzz_table_case<T>(kind, rng, total);
  if (kind == rows) return fuzz_mask_case<T>(rng, total);
  fuzz_mixed_case(rng, total);
}

}  // namespace

TEST_CASE("cpu fuzz: per-thread bodies over random cases with a recording access", "[cpu][fuzz]") {
  const std::uint64_t clock_seed =
      static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  const std::uint64_t seed = env_u64("CUACT_FUZZ_SEED", mix64(clock_seed));
  const std::size_t cases = env_u64("CUACT_FUZZ_CASES", 2000);
  std::printf("cpu_fuzz: CUACT_FUZZ_SEED=%" PRIu64 " CUACT_FUZZ_CASES=%zu\n", seed, cases);
  std::fflush(stdout);
  CAPTURE(seed);
  std::size_t rows = 0;
  for_each_activation([&](const auto&) { ++rows; });
  std::mt19937_64 rng(seed);
  tally total;
  for (std::size_t i = 0; i < cases; ++i) {
    switch (rng() % 4) {
      case 0:
        fuzz_case_of<float>(rows, rng, total);
        break;
      case 1:
        fuzz_case_of<double>(rows, rng, total);
        break;
      case 2:
        fuzz_case_of<__half>(rows, rng, total);
        break;
      default:
        fuzz_case_of<__nv_bfloat16>(rows, rng, total);
        break;
    }
  }
  std::printf("cpu_fuzz: seed %" PRIu64
              ": cases run %zu, elements %zu, mismatches %zu (in %zu cases)\n",
              seed, total.cases, total.elements, total.bad_elements, total.failed_cases);
  CHECK(total.cases == cases);
  CHECK(total.failed_cases == 0);
}
