// The CPU grid simulation: cuact's per-thread body (elementwise_thread) run for every thread of
// simulated grids over host arrays, for every width x op x in/out-of-place x misalignment x n.
// Each case checks, for each grid: every access inside its array and aligned to its width, every
// output element written exactly once, every input element read exactly once by the thread that
// writes the element, and every value against the float64 reference.
#pragma once

#include <catch2/catch.hpp>

#include <array>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include <cuact/cuact.cuh>

#include "access_log.hpp"
#include "test_support.hpp"

namespace cuact_test {

/// Host memory aligned to 256 bytes, so element offsets 0..15 give every misalignment.
template <class T>
struct host_array {
  explicit host_array(std::size_t count)
      : storage(static_cast<T*>(std::aligned_alloc(256, ((count * sizeof(T) + 255) / 256 + 1) * 256)),
                &std::free) {}
  std::unique_ptr<T, void (*)(void*)> storage;
  T* get() const { return storage.get(); }
};

struct grid_shape {
  std::size_t blocks, threads;
};

/// One case: N inputs at element offsets `offsets`, the output at `out_offset`, or in place over
/// input `in_place` (-1: out of place). `reference` maps N doubles to the expected double.
template <class T, int Width, std::size_t N, class Op, class Reference>
void check_grid_case(const Op& op, const Reference& reference, int max_ulp, std::size_t n,
                     const std::array<std::size_t, N>& offsets, std::size_t out_offset, int in_place,
                     const std::vector<grid_shape>& grids, std::mt19937_64& rng) {
  CAPTURE(type_name<T>(), Width, N, n, out_offset, in_place);
  std::vector<std::vector<T>> values(N);
  for (auto& v : values) v = random_values<T>(n, rng);
  std::vector<double> expected(n), slack(n, 0.0);
  std::vector<T> poison(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::array<double, N> args;
    for (std::size_t k = 0; k < N; ++k) args[k] = to_double(values[k][i]);
    expected[i] = std::apply(reference, args);
    if constexpr (N == 2) slack[i] = underflow_slack<cuact::detail::compute_t<T>>(args[1]);
    poison[i] = poison_for(round_to<T>(expected[i]));
  }
  std::vector<host_array<T>> inputs;
  for (std::size_t k = 0; k < N; ++k) inputs.emplace_back(n + 16);
  host_array<T> separate_output(n + 16);

  std::array<T*, N> in_ptrs;
  for (std::size_t k = 0; k < N; ++k) in_ptrs[k] = inputs[k].get() + offsets[k];
  T* const out = in_place >= 0 ? in_ptrs[in_place] : separate_output.get() + out_offset;

  const auto params = std::apply(
      [&](auto*... in) { return cuact::make_elementwise_params<Width>(op, out, n, static_cast<const T*>(in)...); },
      in_ptrs);
  // The split is what the alignment allows: vectors whenever every pointer is co-aligned.
  const auto misalignment = [](const T* p) { return reinterpret_cast<std::uintptr_t>(p) % (sizeof(T) * Width); };
  bool co_aligned = true;
  for (T* p : in_ptrs) co_aligned = co_aligned && misalignment(p) == misalignment(out);
  REQUIRE(params.head + params.vectors * Width + params.tail == n);
  if (co_aligned) {
    REQUIRE(params.head < static_cast<std::size_t>(Width));
    REQUIRE(params.tail < static_cast<std::size_t>(Width));
    REQUIRE((params.vectors == 0 || misalignment(out + params.head) == 0));
  } else {
    REQUIRE(params.vectors == 0);
  }

  for (const grid_shape& grid : grids) {
    CAPTURE(grid.blocks, grid.threads);
    for (std::size_t k = 0; k < N; ++k) std::copy(values[k].begin(), values[k].end(), in_ptrs[k]);
    if (in_place < 0) std::copy(poison.begin(), poison.end(), out);
    access_log log;
    std::vector<std::size_t> input_regions;
    for (std::size_t k = 0; k < N; ++k) input_regions.push_back(log.add_region(in_ptrs[k], n * sizeof(T)));
    const std::size_t out_region = in_place >= 0 ? input_regions[in_place] : log.add_region(out, n * sizeof(T));
    simulate_grid(log, grid.blocks, grid.threads, [&](std::size_t t, std::size_t num_threads) {
      cuact::elementwise_thread(params, t, num_threads, recording_access{&log});
    });
    INFO((log.errors().empty() ? std::string() : log.errors().front()));
    REQUIRE(log.errors().empty());
    for (std::size_t k = 0; k < N; ++k) {
      REQUIRE(log.each_byte(input_regions[k], 1, static_cast<int>(k) == in_place ? 1 : 0));
    }
    if (in_place < 0) REQUIRE(log.each_byte(out_region, 0, 1));
    std::size_t mismatches = 0, first_bad = n;
    for (std::size_t i = 0; i < n; ++i) {
      if (!matches(out[i], expected[i], max_ulp, slack[i])) {
        if (mismatches++ == 0) first_bad = i;
      }
    }
    if (mismatches != 0) {
      std::array<double, N> args;
      for (std::size_t k = 0; k < N; ++k) args[k] = to_double(values[k][first_bad]);
      CAPTURE(first_bad, args[0], expected[first_bad], to_double(out[first_bad]));
      REQUIRE(mismatches == 0);
    }
  }
}

/// Sizes that straddle vector edges for width W.
inline std::vector<std::size_t> edge_sizes(int width) {
  const std::size_t w = static_cast<std::size_t>(width);
  return {0, 1, 2, w - 1, w, w + 1, 2 * w + 1, 31, 32, 33, 1000, 4099};
}

/// The grids every case runs under: one warp, one block, odd small grids, the launcher's own
/// one-pass grid, and a grid far larger than the work.
template <class T, class Op, int NumInputs>
std::vector<grid_shape> grids_for(std::size_t work_items, bool all) {
  const auto [grid, block] = cuact::detail::launch_dims<T, Op, NumInputs>(work_items);
  const std::size_t launcher = grid.x;
  std::vector<grid_shape> grids{{1, 32}, {launcher, block.x}};
  if (all) {
    grids.push_back({3, 64});
    grids.push_back({1, 1});
    grids.push_back({4 * launcher + 7, 128});
  }
  return grids;
}

/// An op's reference and tolerance for the matrix.
template <std::size_t N, class Op, class Reference>
struct op_case {
  const char* name;
  Op op;
  Reference reference;
  int max_ulp;
};
template <std::size_t N, class Op, class Reference>
op_case<N, Op, Reference> make_op_case(const char* name, Op op, Reference reference, int max_ulp) {
  return {name, op, reference, max_ulp};
}

/// The whole matrix for one op, one type and one width.
template <class T, int Width, std::size_t N, class Op, class Reference>
void run_grid_matrix(const op_case<N, Op, Reference>& c, std::mt19937_64& rng) {
  CAPTURE(c.name);
  for (std::size_t n : edge_sizes(Width)) {
    for (std::size_t offset = 0; offset < 16; ++offset) {
      const bool all_grids = offset == 0 || offset == 3;
      std::array<std::size_t, N> same;
      same.fill(offset);
      const std::size_t work = n;  // an upper bound on work_items; grids_for only needs a size
      for (int in_place = -1; in_place < static_cast<int>(N); ++in_place) {
        check_grid_case<T, Width, N>(c.op, c.reference, c.max_ulp, n, same, offset, in_place,
                                     grids_for<T, Op, static_cast<int>(N)>(work, all_grids), rng);
      }
      // pointers with different misalignments: the scalar path
      std::array<std::size_t, N> shifted;
      for (std::size_t k = 0; k < N; ++k) shifted[k] = (offset + 1 + k) % 16;
      check_grid_case<T, Width, N>(c.op, c.reference, c.max_ulp, n, shifted, offset, -1,
                                   grids_for<T, Op, static_cast<int>(N)>(work, false), rng);
    }
  }
}

/// Every width that fits 16 bytes for T.
template <class T, std::size_t N, class Op, class Reference>
void run_grid_matrix_all_widths(const op_case<N, Op, Reference>& c, std::mt19937_64& rng) {
  run_grid_matrix<T, 1>(c, rng);
  run_grid_matrix<T, 2>(c, rng);
  if constexpr (sizeof(T) * 4 <= 16) run_grid_matrix<T, 4>(c, rng);
  if constexpr (sizeof(T) * 8 <= 16) run_grid_matrix<T, 8>(c, rng);
}

/// The forward and backward ops of relu and selu, with their float64 references.
template <class T>
void run_all_ops(std::mt19937_64& rng) {
  const int selu_ulp = selu_max_ulp<T>();
  run_grid_matrix_all_widths<T>(make_op_case<1>("relu", cuact::relu{}, relu_ref, 0), rng);
  run_grid_matrix_all_widths<T>(make_op_case<1>("selu", cuact::selu{}, selu_ref, selu_ulp), rng);
  run_grid_matrix_all_widths<T>(
      make_op_case<2>("relu backward", cuact::detail::gradient_from_input<cuact::relu>{}, relu_grad_ref, 0), rng);
  run_grid_matrix_all_widths<T>(
      make_op_case<2>("selu backward", cuact::detail::gradient_from_input<cuact::selu>{},
                      selu_grad_ref<cuact::detail::compute_t<T>>, selu_ulp), rng);
  run_grid_matrix_all_widths<T>(make_op_case<2>("selu backward from output",
                                                cuact::detail::gradient_from_output<cuact::selu>{},
                                                selu_grad_from_output_ref, selu_ulp),
                                rng);
}

}  // namespace cuact_test
