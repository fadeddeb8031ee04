// The CPU grid simulation: cuact::elementwise_thread, the per-thread body the GPU runs, run for
// every thread of a simulated grid over guarded host arrays with a recording access. One case
// checks, for every grid it is given: the head / vectors / tail split the alignment allows, every
// access inside its array and aligned to its size, every input byte read once and every output byte
// written once (in place: read, then written, by the same thread), no byte touched by two threads,
// the guard bytes around every array untouched, unchanged inputs, and every output equal to the
// reference evaluation of the same op at that element (ops.hpp's evaluate).
//
// Any number of inputs and outputs, each with its own element type.
#pragma once

#include <cuda/std/tuple>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <cuact/cuact.cuh>

#include "access_log.hpp"
#include "catch.hpp"
#include "ops.hpp"
#include "support.hpp"

namespace cuact_test {

/// Where one case's arrays sit and what runs over them.
struct sim_layout {
  std::size_t n = 0;
  std::size_t in_offset[4] = {};   ///< per input: elements past a 256-byte boundary
  std::size_t out_offset[4] = {};  ///< per output
  int in_place = -1;               ///< output 0 is this input (same type), or -1
  unsigned vectors_per_thread = 1;
  std::uint64_t seed = 0;
  bool bulk_tiles =
      false;  ///< run as bulk_tile_kernel (simulate_bulk_tiles), not elementwise_kernel
};

inline std::string describe_layout(const sim_layout& l, int inputs, int outputs) {
  std::string s = "n=" + std::to_string(l.n) + " in_offsets=(";
  for (int k = 0; k < inputs; ++k) s += (k ? "," : "") + std::to_string(l.in_offset[k]);
  s += ") out_offsets=(";
  for (int m = 0; m < outputs; ++m) s += (m ? "," : "") + std::to_string(l.out_offset[m]);
  return s + ") in_place=" + std::to_string(l.in_place) +
         " vectors_per_thread=" + std::to_string(l.vectors_per_thread) +
         " seed=" + std::to_string(l.seed) + (l.bulk_tiles ? " bulk_tiles" : "");
}

/// What a case found: problems (empty when it passed) and the number of wrong elements.
struct sim_result {
  std::string problems;
  std::size_t bad = 0;
};

/// f(std::integral_constant<std::size_t, K>{}) for each K.
template <class F, std::size_t... K>
void for_each_index(F&& f, std::index_sequence<K...>) {
  (f(std::integral_constant<std::size_t, K>{}), ...);
}

/// bulk_tile_kernel's index logic over a simulated grid: each block takes its tile
/// (detail::bulk_tile_of_block), the tile's bytes of every input (detail::bulk_tile_source) copied
/// into a poisoned staging buffer where the GPU's bulk copy would put them, each 16-byte unit read
/// through the log under the thread that computes it (the copy moves whole, 16-byte-aligned units
/// of a contiguous range), then every lane's detail::compute_staged_vector from that buffer, then
/// detail::scalar_steps for every thread. Returns what the tiles themselves got wrong (a grid that
/// does not cover the tiles, detail::bulk_grid_covers, leaves vectors unwritten: the caller's
/// checks find them).
template <class Params>
std::string simulate_bulk_tiles(access_log& log, const Params& p, grid_shape grid) {
  namespace cd = cuact::detail;
  constexpr std::size_t unit = cd::bulk_copy_vector_bytes;
  const auto tile_vectors = static_cast<unsigned>(grid.threads);
  std::vector<unsigned char> staging(cd::bulk_tile_staging_bytes<Params>(tile_vectors));
  std::string problems;
  std::size_t covered = 0;
  for (std::size_t block = 0; block < grid.blocks; ++block) {
    const cd::bulk_tile tile = cd::bulk_tile_of_block(p, tile_vectors, block);
    if (tile.vectors == 0) continue;
    if (tile.vectors > tile_vectors || tile.first_vector + tile.vectors > p.vectors) {
      problems += "tile of block " + std::to_string(block) + " outside the vectors; ";
      continue;
    }
    covered += tile.vectors;
    unsigned char* const stage = staging.data();
    std::fill(staging.begin(), staging.end(), static_cast<unsigned char>(0xA5));
    const auto copy_input = [&](auto input) {
      constexpr std::size_t k = decltype(input)::value;
      const auto* source =
          static_cast<const cd::vector_of<std::uint32_t, 4>*>(cd::bulk_tile_source<k>(p, tile));
      for (unsigned lane = 0; lane < tile.vectors; ++lane) {
        log.set_thread(static_cast<std::int64_t>(block * grid.threads + lane));
        const auto value = recording_access{&log}.load(source + lane);
        std::memcpy(stage + (k * tile_vectors + lane) * unit, &value, unit);
      }
    };
    for_each_index(copy_input, std::make_index_sequence<Params::num_inputs>{});
    for (unsigned lane = 0; lane < tile.vectors; ++lane) {
      log.set_thread(static_cast<std::int64_t>(block * grid.threads + lane));
      cd::compute_staged_vector(p, tile, tile_vectors, lane, stage, recording_access{&log});
    }
  }
  if (covered != p.vectors && cd::bulk_grid_covers(p, grid.blocks, tile_vectors)) {
    problems += "the tiles of a covering grid do not cover the vectors; ";
  }
  simulate_grid(log, grid, [&](std::size_t t, std::size_t num_threads) {
    cd::scalar_steps(p, t, num_threads, recording_access{&log});
  });
  return problems;
}

/// Runs sign_mask_forward_kernel's threads on the host, in its order: on a grid of
/// staged_mask_threads-thread blocks (fp32, fp64) each block's staged steps, every thread's
/// staged_mask_vector and then (the barrier) every thread's staged_mask_byte, the shared nibbles
/// poisoned before each step; then sign_mask_forward_thread over the grid from the first byte
/// past those steps.
template <class T, class Activation>
void simulate_sign_mask_kernel(access_log& log, grid_shape grid,
                               const cuact::detail::sign_mask_params<T, Activation>& params) {
  namespace cd = cuact::detail;
  std::size_t first_byte = 0;
  if constexpr (cd::mask_is_staged<T>) {
    const std::size_t steps =
        grid.threads == cd::staged_mask_threads ? cd::staged_mask_steps(params) : 0;
    std::uint8_t nibbles[cd::staged_mask_threads];
    for (std::size_t block = 0; block < grid.blocks; ++block) {
      for (std::size_t step = block; step < steps; step += grid.blocks) {
        std::memset(nibbles, 0xA5, sizeof nibbles);
        for (unsigned t = 0; t < cd::staged_mask_threads; ++t) {
          log.set_thread(static_cast<std::int64_t>(block * grid.threads + t));
          cd::staged_mask_vector(params, step, t, nibbles, recording_access{&log});
        }
        for (unsigned t = 0; t < cd::staged_mask_threads; ++t) {
          log.set_thread(static_cast<std::int64_t>(block * grid.threads + t));
          cd::staged_mask_byte(params, step, t, nibbles, recording_access{&log});
        }
      }
    }
    first_byte = steps * cd::staged_mask_bytes_per_step<T>;
  }
  simulate_grid(log, grid, [&](std::size_t t, std::size_t num_threads) {
    cd::sign_mask_forward_thread(params, first_byte + t, num_threads, recording_access{&log});
  });
}

template <int V, class Op, class Outputs, class Inputs>
class elementwise_sim;

/// One case of `Op` with vector width V over outputs Out... and inputs In...
template <int V, class Op, class... Out, class... In>
class elementwise_sim<V, Op, cuact::detail::type_list<Out...>, cuact::detail::type_list<In...>> {
  static constexpr std::size_t num_in = sizeof...(In), num_out = sizeof...(Out);
  using in_seq = std::index_sequence_for<In...>;
  using out_seq = std::index_sequence_for<Out...>;
  template <std::size_t K>
  using in_t = std::tuple_element_t<K, std::tuple<In...>>;
  template <std::size_t M>
  using out_t = std::tuple_element_t<M, std::tuple<Out...>>;

 public:
  elementwise_sim(const Op& op, const sim_layout& layout) : op_(op), l_(layout) {
    const std::size_t in_size[] = {sizeof(In)...};
    const std::size_t out_size[] = {sizeof(Out)...};
    for (std::size_t k = 0; k < num_in; ++k) {
      in_.push_back(
          std::make_unique<guarded_host_bytes>(l_.n * in_size[k], l_.in_offset[k] * in_size[k]));
    }
    for (std::size_t m = 0; m < num_out; ++m) {
      out_.push_back(
          std::make_unique<guarded_host_bytes>(l_.n * out_size[m], l_.out_offset[m] * out_size[m]));
    }
    if (l_.in_place >= 0 && in_size[l_.in_place] != out_size[0]) {
      result_.problems += "bad layout: in place over an input of another size; ";
    }
    inputs_ = input_pointers(in_seq{});
    outputs_ = output_pointers(out_seq{});
    fill_inputs(in_seq{});
    expected_resize(out_seq{});
    for (std::size_t i = 0; i < l_.n; ++i) store_expected(i, evaluate_at(i, in_seq{}), out_seq{});
  }

  /// The launch arguments the case's grids run with.
  auto params() const {
    return cuact::make_elementwise_params<V>(
        op_, cuda::std::apply([](Out*... p) { return cuact::outputs(p...); }, outputs_), l_.n,
        cuda::std::apply([](const In*... p) { return cuact::inputs(p...); }, inputs_),
        l_.vectors_per_thread);
  }

  /// Runs every grid; returns what failed.
  sim_result run(const std::vector<grid_shape>& grids) {
    const auto p = params();
    check_split(p);
    for (const grid_shape& grid : grids) {
      if (!result_.problems.empty()) break;
      run_grid(p, grid);
    }
    return result_;
  }

 private:
  template <std::size_t... K>
  cuda::std::tuple<const In*...> input_pointers(std::index_sequence<K...>) const {
    return cuda::std::tuple<const In*...>(static_cast<const In*>(in_[K]->data())...);
  }
  template <std::size_t... M>
  cuda::std::tuple<Out*...> output_pointers(std::index_sequence<M...>) const {
    return cuda::std::tuple<Out*...>(static_cast<Out*>(
        M == 0 && l_.in_place >= 0 ? in_[static_cast<std::size_t>(l_.in_place)]->data()
                                   : out_[M]->data())...);
  }
  template <std::size_t... K>
  void fill_inputs(std::index_sequence<K...>) {
    (fill_input<K>(), ...);
  }
  template <std::size_t K>
  void fill_input() {
    auto* p = static_cast<in_t<K>*>(in_[K]->data());
    for (std::size_t i = 0; i < l_.n; ++i) p[i] = hash_value<in_t<K>>(l_.seed + K, i);
  }
  template <std::size_t... K>
  cuda::std::tuple<Out...> evaluate_at(std::size_t i, std::index_sequence<K...>) const {
    return evaluate<Out...>(op_, i, hash_value<In>(l_.seed + K, i)...);
  }
  template <std::size_t... M>
  void expected_resize(std::index_sequence<M...>) {
    (std::get<M>(expected_).resize(l_.n), ...);
  }
  template <std::size_t... M>
  void store_expected(std::size_t i, const cuda::std::tuple<Out...>& r, std::index_sequence<M...>) {
    ((std::get<M>(expected_)[i] = cuda::std::get<M>(r)), ...);
  }

  /// head + vectors + tail = n; vectors only when every pointer has the same element offset from
  /// its V-element boundary, and then a head shorter than V that reaches it.
  template <class Params>
  void check_split(const Params& p) {
    std::vector<std::pair<std::uintptr_t, std::size_t>> pointers;  // address, element size
    cuda::std::apply(
        [&](auto*... q) {
          (pointers.push_back({reinterpret_cast<std::uintptr_t>(q), sizeof(*q)}), ...);
        },
        cuda::std::tuple_cat(outputs_, inputs_));
    bool co_aligned = true;
    for (const auto& [address, size] : pointers) {
      co_aligned = co_aligned && address / size % V == pointers[0].first / pointers[0].second % V;
    }
    std::string& problems = result_.problems;
    if (p.head + p.vectors * V + p.tail != l_.n) problems += "head + vectors * V + tail != n; ";
    if (co_aligned) {
      if (p.head >= static_cast<std::size_t>(V) && l_.n > p.head) problems += "head >= V; ";
      if (p.tail >= static_cast<std::size_t>(V)) problems += "tail >= V; ";
      for (const auto& [address, size] : pointers) {
        if (p.vectors != 0 && (address + p.head * size) % (size * V) != 0) {
          problems += "first vector misaligned; ";
        }
      }
    } else if (p.vectors != 0) {
      problems += "vectors over pointers that are not co-aligned; ";
    }
  }

  template <class Params>
  void run_grid(const Params& p, grid_shape grid) {
    fill_inputs(in_seq{});
    poison_outputs(out_seq{});
    access_log log;
    std::vector<std::size_t> in_region, out_region;
    for (std::size_t k = 0; k < num_in; ++k) {
      const std::size_t bytes = l_.n * sizes_in()[k];
      in_region.push_back(log.add_region(in_[k]->data(), bytes));
    }
    for (std::size_t m = 0; m < num_out; ++m) {
      const bool aliased = m == 0 && l_.in_place >= 0;
      out_region.push_back(aliased ? in_region[static_cast<std::size_t>(l_.in_place)]
                                   : log.add_region(out_[m]->data(), l_.n * sizes_out()[m]));
    }
    std::string& problems = result_.problems;
    if (!l_.bulk_tiles) {
      simulate_grid(log, grid, [&](std::size_t t, std::size_t num_threads) {
        cuact::elementwise_thread(p, t, num_threads, recording_access{&log});
      });
    } else if constexpr (cuact::detail::bulk_tiles_fit_v<Params>) {
      problems += simulate_bulk_tiles(log, p, grid);
    } else {
      problems += "bad layout: these params do not run as bulk tiles; ";
    }
    const std::string where =
        " (grid " + std::to_string(grid.blocks) + "x" + std::to_string(grid.threads) + ")";
    for (const std::string& e : log.errors()) problems += e + where + "; ";
    for (std::size_t k = 0; k < num_in; ++k) {
      const int writes = static_cast<int>(k) == l_.in_place ? 1 : 0;
      if (!log.each_byte(in_region[k], 1, writes)) {
        problems += "input " + std::to_string(k) + " not read exactly once" + where + "; ";
      }
      if (!in_[k]->guards_intact())
        problems += "bytes around input " + std::to_string(k) + " changed; ";
    }
    for (std::size_t m = 0; m < num_out; ++m) {
      if (m == 0 && l_.in_place >= 0) continue;
      if (!log.each_byte(out_region[m], 0, 1)) {
        problems += "output " + std::to_string(m) + " not written exactly once" + where + "; ";
      }
      if (!out_[m]->guards_intact())
        problems += "bytes around output " + std::to_string(m) + " changed; ";
    }
    check_inputs(in_seq{});
    check_outputs(out_seq{}, where);
  }

  static const std::size_t* sizes_in() {
    static const std::size_t s[] = {sizeof(In)...};
    return s;
  }
  static const std::size_t* sizes_out() {
    static const std::size_t s[] = {sizeof(Out)...};
    return s;
  }

  template <std::size_t... M>
  void poison_outputs(std::index_sequence<M...>) {
    (poison_output<M>(), ...);
  }
  template <std::size_t M>
  void poison_output() {
    if (M == 0 && l_.in_place >= 0) return;
    auto* p = static_cast<out_t<M>*>(out_[M]->data());
    for (std::size_t i = 0; i < l_.n; ++i) p[i] = poison_for(std::get<M>(expected_)[i]);
  }
  template <std::size_t... K>
  void check_inputs(std::index_sequence<K...>) {
    (check_input<K>(), ...);
  }
  template <std::size_t K>
  void check_input() {
    if (static_cast<int>(K) == l_.in_place) return;
    const auto* p = static_cast<const in_t<K>*>(in_[K]->data());
    for (std::size_t i = 0; i < l_.n; ++i) {
      if (bits_of(p[i]) != hash_bits<in_t<K>>(l_.seed + K, i)) {
        result_.problems +=
            "input " + std::to_string(K) + " modified at " + std::to_string(i) + "; ";
        return;
      }
    }
  }
  template <std::size_t... M>
  void check_outputs(std::index_sequence<M...>, const std::string& where) {
    (check_output<M>(where), ...);
  }
  template <std::size_t M>
  void check_output(const std::string& where) {
    const auto* p = static_cast<const out_t<M>*>(outputs_pointer<M>());
    const auto& expected = std::get<M>(expected_);
    for (std::size_t i = 0; i < l_.n; ++i) {
      if (same_result(p[i], expected[i])) continue;
      if (result_.bad++ < 4) {
        result_.problems += "output " + std::to_string(M) + " element " + std::to_string(i) +
                            " is " + describe(p[i]) + ", expected " + describe(expected[i]) +
                            where + "; ";
      }
    }
  }
  template <std::size_t M>
  const void* outputs_pointer() const {
    return cuda::std::get<M>(outputs_);
  }

  Op op_;
  sim_layout l_;
  std::vector<std::unique_ptr<guarded_host_bytes>> in_, out_;
  cuda::std::tuple<const In*...> inputs_;
  cuda::std::tuple<Out*...> outputs_;
  std::tuple<std::vector<Out>...> expected_;
  sim_result result_;
};

/// Runs one case: op over outputs Out... and inputs In... with vector width V under every grid.
template <int V, class... Out, class... In, class Op>
sim_result simulate_elementwise(const Op& op, cuact::detail::type_list<Out...> outs,
                                cuact::detail::type_list<In...> ins, const sim_layout& layout,
                                const std::vector<grid_shape>& grids) {
  (void)outs;
  (void)ins;
  elementwise_sim<V, Op, cuact::detail::type_list<Out...>, cuact::detail::type_list<In...>> sim(
      op, layout);
  return sim.run(grids);
}

/// The grid cuact's launch model gives a launch of `p` with the params' vectors_per_thread in
/// `passes` grid-stride steps and blocks of `block` threads (detail::model_launch_shape), and
/// with `all` a few others every body must survive: the model's wide and moderated blocks
/// (wide_threads_per_block, moderated_threads_per_block), one thread, one warp, an odd grid, a
/// grid far larger than the work.
template <class Params>
std::vector<grid_shape> grids_for(const Params& p, bool all, std::size_t passes = 1,
                                  std::size_t block = cuact::detail::threads_per_block) {
  const std::size_t k = static_cast<std::size_t>(p.effective_vectors_per_thread()) * passes;
  const std::size_t vector_threads = (p.vectors + k - 1) / k;
  const std::size_t threads = std::max(vector_threads, p.head + p.tail);
  const grid_shape model{std::max<std::size_t>(1, cuact::detail::grid_blocks(threads, block)),
                         block};
  std::vector<grid_shape> grids{model};
  if (all) {
    const std::size_t wide = cuact::detail::wide_threads_per_block;
    grids.push_back({std::max<std::size_t>(1, cuact::detail::grid_blocks(threads, wide)), wide});
    const std::size_t moderated = cuact::detail::moderated_threads_per_block;
    grids.push_back(
        {std::max<std::size_t>(1, cuact::detail::grid_blocks(threads, moderated)), moderated});
    grids.push_back({1, 1});
    grids.push_back({1, 32});
    grids.push_back({3, 37});
    grids.push_back({2 * model.blocks + 1, block});
  }
  return grids;
}

/// Counts a case and reports it to Catch when it failed (the first 10 failures in full).
inline void report_case(const sim_result& r, const std::string& what, tally& total, std::size_t n) {
  ++total.cases;
  total.elements += n;
  if (r.problems.empty()) return;
  ++total.failed_cases;
  total.bad_elements += r.bad;
  if (total.failed_cases <= 10) {
    INFO(what);
    FAIL_CHECK(r.problems);
  }
}

}  // namespace cuact_test
