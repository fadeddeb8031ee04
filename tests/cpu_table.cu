// Tabulated bf16 forwards (detail/kernels/table.cuh) on the host: the table's window and its
// index map for every one of the 65536 bf16 bit patterns; the looked-up op (on held words, as the
// engine calls it, and on scalars) against the direct op for every pattern (built-in,
// parameterized and plain user activations); and the grid simulation
// of the per-thread body with the looked-up op, over the shape the tabulated launch takes (512-
// thread blocks, two vectors per thread, one pass) and the usual odd grids, with offsets, in place
// and sizes straddling vector edges.
#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "grid_simulation.hpp"
#include "model_devices.hpp"
#include "plain_functors.hpp"

using namespace cuact_test;
using bf16 = __nv_bfloat16;
using cuact::detail::bf16_table_window;
using cuact::detail::type_list;

namespace {

bf16 bf16_from_bits(unsigned b) {
  __nv_bfloat16_raw raw;
  raw.x = static_cast<unsigned short>(b);
  return bf16(raw);
}

/// The host's table of op (what fill_bf16_table_kernel writes on the device).
template <class Op>
std::vector<std::uint16_t> host_table(const Op& op) {
  std::vector<std::uint16_t> entries(bf16_table_window::entries_of<std::uint16_t>);
  for (unsigned s = 0; s < bf16_table_window::entries_of<std::uint16_t>; ++s) {
    entries[s] = cuact::detail::bf16_table_entry(op, s);
  }
  return entries;
}

/// Looked up and direct agree on every bf16 input, in each lane of a held vector (the words the
/// engine passes to apply_held) and as a scalar; returns the number that differ.
template <class Op>
std::size_t differing_inputs(const Op& op, std::string& first) {
  constexpr int width = 8;
  const std::vector<std::uint16_t> entries = host_table(op);
  const cuact::detail::bf16_table_op<Op> looked_up{op, entries.data()};
  std::size_t differ = 0;
  for (unsigned b = 0; b < 65536; b += width) {
    cuact::detail::vector_of<std::uint32_t, width / 2> words;
    for (int w = 0; w < width / 2; ++w) {
      // a lane from the other end of the patterns beside each, so every pair of halves mixes
      words.elements[w] = (b + 2 * w) | ((65535u - b - 2 * w) << 16);
    }
    const auto results = looked_up.template apply_held<width>(words);
    for (int lane = 0; lane < width; ++lane) {
      const unsigned x_bits = (words.elements[lane / 2] >> (16 * (lane % 2))) & 0xffffu;
      const unsigned got_bits = (results.elements[lane / 2] >> (16 * (lane % 2))) & 0xffffu;
      const float x = cuact::detail::to_compute(bf16_from_bits(x_bits));
      const bf16 want = cuact::detail::from_compute<bf16>(op(x));
      const bf16 got = bf16_from_bits(got_bits);
      const bf16 scalar = cuact::detail::from_compute<bf16>(looked_up(x));
      if ((!same_result(got, want) || !same_result(scalar, want)) && differ++ == 0) {
        first = "x bits " + std::to_string(x_bits) + ": got " + describe(got) + ", scalar " +
                describe(scalar) + ", direct " + describe(want);
      }
    }
  }
  return differ;
}

}  // namespace

// Functors as users write them, short enough that the direct path once sat inside the lookup's
// (corpus: leaky ReLU with a float slope, clamps by fmin/fmax, a double member).
namespace cuact_test {
namespace short_functors {
struct leaky_relu {
  float slope = 0.01f;
  __host__ __device__ float operator()(float x) const { return x > 0.0f ? x : x * slope; }
};
struct relu6_fmin_fmax {
  __host__ __device__ float operator()(float x) const { return fminf(fmaxf(x, 0.0f), 6.0f); }
};
struct threshold {
  float th = 0.1f, value = -1.0f;
  __host__ __device__ float operator()(float x) const { return x > th ? x : value; }
};
struct leaky_relu_double_slope {
  double slope = 0.01;
  __host__ __device__ float operator()(float x) const { return x > 0 ? x : float(x * slope); }
};
}  // namespace short_functors
}  // namespace cuact_test

TEST_CASE("table: the tables hold |x| in [2^-20, 2^12) and +-0, each input once", "[cpu][table]") {
  std::vector<int> seen(bf16_table_window::entries_of<std::uint16_t>, 0);
  std::size_t inside = 0, wrong = 0;
  for (unsigned b = 0; b < 65536; ++b) {
    const unsigned exponent = (b >> 7) & 0xffu;
    const bool expected_inside = (exponent >= 107 && exponent < 139) || (b & 0x7fffu) == 0;
    const bool is_inside = bf16_table_window::key_with_zeros(b) < bf16_table_window::per_sign;
    if (is_inside != expected_inside) ++wrong;
    // the window alone (the quantize's float table): offset and slot
    const bool in_window = bf16_table_window::offset(b) < bf16_table_window::per_sign;
    if (in_window != (expected_inside && (b & 0x7fffu) != 0)) ++wrong;
    if (in_window && bf16_table_window::slot(b) != bf16_table_window::slot_with_zeros(b)) ++wrong;
    if (is_inside) {
      const unsigned s = bf16_table_window::slot_with_zeros(b);
      ++inside;
      if (s >= bf16_table_window::entries_of<std::uint16_t> || bf16_table_window::bits_of(s) != b) {
        ++wrong;
      } else {
        ++seen[s];
      }
    }
  }
  CHECK(wrong == 0);
  CHECK(inside == bf16_table_window::window_entries + 2);
  // every entry but the padding holds one input
  std::size_t not_once = 0;
  for (unsigned s = 0; s < bf16_table_window::window_entries + 2; ++s) not_once += seen[s] != 1;
  CHECK(not_once == 0);
  // 2^-20, the largest magnitude below 2^12 and both zeros are inside; 2^12, inf, NaN and the
  // largest magnitude below 2^-20 are not
  const auto inside_window = [](unsigned b) {
    return bf16_table_window::key_with_zeros(b) < bf16_table_window::per_sign;
  };
  CHECK(inside_window(0x3580u));  // 2^-20
  CHECK(inside_window(0xc57fu));  // -4080
  CHECK(inside_window(0x0000u));  // +0
  CHECK(inside_window(0x8000u));  // -0
  CHECK(bf16_table_window::slot_with_zeros(0x0000u) == bf16_table_window::zero_slot);
  CHECK(bf16_table_window::slot_with_zeros(0x8000u) == bf16_table_window::zero_slot + 1);
  CHECK(bf16_table_window::entries_of<float> == bf16_table_window::window_entries + 4);
  CHECK(!inside_window(0x4580u));  // 4096
  CHECK(!inside_window(0x7f80u));  // inf
  CHECK(!inside_window(0xffc0u));  // -NaN
  CHECK(!inside_window(0x0001u));  // the smallest subnormal
  CHECK(!inside_window(0x357fu));  // just below 2^-20
  // the OR of keys has an entry for every lane exactly when each lane does
  CHECK((bf16_table_window::key_with_zeros(0x3580u) | bf16_table_window::key_with_zeros(0x8000u)) <
        bf16_table_window::per_sign);
  CHECK((bf16_table_window::key_with_zeros(0x3580u) | bf16_table_window::key_with_zeros(0x0001u)) >=
        bf16_table_window::per_sign);
}

TEST_CASE("table: the two-lane window test and slots agree with the per-lane ones",
          "[cpu][table]") {
  // every bf16 pattern as the low and as the high lane of a word, beside partners inside and
  // outside the window (zeros, 2^-20, the largest inside, 4096, inf, NaN, a subnormal, itself)
  const unsigned partners[] = {0x0000u, 0x8000u, 0x3580u, 0xc57fu, 0x4580u,
                               0x7f80u, 0xffc0u, 0x0001u, 0x357fu};
  std::size_t wrong = 0, inside = 0;
  for (unsigned b = 0; b < 65536; ++b) {
    const bool in_window = bf16_table_window::offset(b) < bf16_table_window::per_sign;
    inside += in_window;
    for (const unsigned partner : partners) {
      for (const bool high : {false, true}) {
        const std::uint32_t word = high ? partner | (b << 16) : b | (partner << 16);
        const std::uint32_t biased = bf16_table_window::biased_pair(word);
        const std::uint32_t misses = bf16_table_window::pair_misses(biased);
        const std::uint32_t lane_misses =
            misses & (high ? bf16_table_window::high_miss_bits : bf16_table_window::low_miss_bits);
        const std::uint32_t partner_misses =
            misses & (high ? bf16_table_window::low_miss_bits : bf16_table_window::high_miss_bits);
        if ((lane_misses == 0) != in_window) ++wrong;
        const bool partner_in = bf16_table_window::offset(partner) < bf16_table_window::per_sign;
        if ((partner_misses == 0) != partner_in) ++wrong;
        // slots: slot()'s inside the window, and in the table for any bits (so a lookup before
        // the test reads the table)
        const unsigned s = high ? bf16_table_window::high_slot(word, biased)
                                : bf16_table_window::low_slot(word, biased);
        if (s >= bf16_table_window::window_entries) ++wrong;
        if (in_window && s != bf16_table_window::slot(b)) ++wrong;
      }
    }
  }
  CHECK(wrong == 0);
  CHECK(inside == bf16_table_window::window_entries);
}

TEST_CASE("table: looked up equals computed for every bf16 input", "[cpu][table]") {
  std::string first;
  CHECK(differing_inputs(cuact::forward_op<cuact::selu, bf16>{}, first) == 0);
  CHECK(differing_inputs(cuact::forward_op<cuact::gelu, bf16>{}, first) == 0);
  CHECK(differing_inputs(cuact::forward_op<cuact::mish, bf16>{}, first) == 0);
  CHECK(differing_inputs(cuact::forward_op<cuact::softplus, bf16>{{}, {2.0, 10.0}}, first) == 0);
  CHECK(differing_inputs(cuact::forward_op<plain::softplus, bf16>{}, first) == 0);
  CHECK(differing_inputs(cuact::forward_op<short_functors::leaky_relu, bf16>{}, first) == 0);
  CHECK(differing_inputs(cuact::forward_op<short_functors::leaky_relu, bf16>{{}, {-0.5f}}, first) ==
        0);
  CHECK(differing_inputs(cuact::forward_op<short_functors::relu6_fmin_fmax, bf16>{}, first) == 0);
  CHECK(differing_inputs(cuact::forward_op<short_functors::threshold, bf16>{}, first) == 0);
  CHECK(differing_inputs(cuact::forward_op<short_functors::leaky_relu_double_slope, bf16>{},
                         first) == 0);
  CAPTURE(first);
  CHECK(first.empty());
}

const cuact::detail::device_facts h100_facts = model_h100;
const cuact::detail::device_facts h200_facts = model_h200;

TEST_CASE("table: launch shape from the device's budget", "[cpu][table][launch]") {
  const std::size_t vectors = std::size_t(1) << 26;  // 2^29 bf16 elements
  const cuact::detail::launch_shape h100 =
      cuact::detail::tabulated_launch_shape(h100_facts, vectors, 0, 2);
  const cuact::detail::launch_shape h200 =
      cuact::detail::tabulated_launch_shape(h200_facts, vectors, 0, 2);
  // H100 (budget about 40 per bf16 element): 512-thread blocks, one pass of two vectors
  CHECK(h100.threads_per_block == 512);
  CHECK(h100.passes == 1);
  CHECK(h100.vectors_per_thread == 2);
  CHECK(std::size_t(h100.blocks) * 512 * 2 == vectors);
  // H200 (about 28): 256-thread blocks, four passes of two vectors
  CHECK(h200.threads_per_block == 256);
  CHECK(h200.passes == 4);
  CHECK(h200.vectors_per_thread == 2);
  CHECK(std::size_t(h200.blocks) * 256 * 2 * 4 == vectors);
  // tabulated_kernel is compiled for blocks of at most tabulated_kernel_max_threads
  CHECK(cuact::detail::tabulated_threads_per_block <= cuact::detail::tabulated_kernel_max_threads);
  CHECK(cuact::detail::tabulated_tight_threads_per_block <=
        cuact::detail::tabulated_kernel_max_threads);
  // a kernel capped at one vector per thread, and more scalars than vector threads
  CHECK(cuact::detail::tabulated_launch_shape(h200_facts, 7, 0, 1).vectors_per_thread == 1);
  CHECK(cuact::detail::tabulated_launch_shape(h200_facts, 7, 3000, 2).blocks == 12);
}

TEST_CASE("table: grid simulation of the looked-up op", "[cpu][table][grid]") {
  using base_op = cuact::forward_op<cuact::selu, bf16>;
  using op_t = cuact::detail::bf16_table_op<base_op>;
  constexpr int V = 8;
  const std::vector<std::uint16_t> entries = host_table(base_op{});
  const op_t op{base_op{}, entries.data()};
  using sim_t = elementwise_sim<V, op_t, type_list<bf16>, type_list<bf16>>;
  tally total;
  std::uint64_t seed = 9000;
  for (std::size_t n :
       {std::size_t(1), std::size_t(V + 1), std::size_t(1003), std::size_t(512 * 2 * V * 3 + 5)}) {
    for (int placement = 0; placement < 4; ++placement) {
      sim_layout l;
      l.n = n;
      l.vectors_per_thread = 2;
      l.seed = ++seed;
      l.in_offset[0] = placement == 1 ? 3 : 0;
      l.out_offset[0] = placement == 1 ? 3 : placement == 2 ? 5 : 0;
      if (placement == 3) l.in_place = 0;
      sim_t sim(op, l);
      const auto p = sim.params();
      std::vector<grid_shape> grids = grids_for(p, true);
      // the tabulated shapes the model chooses: one pass of 512-thread blocks (H100), four passes
      // of 256-thread blocks where the budget is tight (H200)
      for (const cuact::detail::device_facts& device : {h100_facts, h200_facts}) {
        const cuact::detail::launch_shape shape = cuact::detail::tabulated_launch_shape(
            device, p.vectors, p.head + p.tail, decltype(p)::max_vectors_per_thread);
        CHECK(shape.vectors_per_thread == 2);
        grids.push_back({shape.blocks, shape.threads_per_block});
      }
      report_case(sim.run(grids), "bf16 tabulated selu " + describe_layout(l, 1, 1), total, n);
    }
  }
  total.print("grid simulation of the tabulated forward");
  CHECK(total.failed_cases == 0);
}
