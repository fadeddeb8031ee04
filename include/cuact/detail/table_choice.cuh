/// \file
/// Whether a functor's bf16 forward (or bf16 -> fp8 quantize) is looked up from its table
/// (kernels/table.cuh) or computed: measured, not modelled. Nothing static tells a light functor
/// without a cost hint from a long one (registers do not), and the table costs the same whatever
/// the functor, so it pays only against functors whose direct math falls short of the copy
/// ceiling. The first eligible calls of each (operation, params, device) time both paths, in turn,
/// on the caller's stream (table_measure.cuh records the events), and table_choice decides from
/// their time per element. Pure: the CPU tests run it.
#pragma once

#include <cuda/std/cstddef>

#include "tuning_table.cuh"

namespace cuact {
namespace detail {

/// The two paths of an eligible call (policy.cuh: tabulates).
enum class table_path : unsigned char {
  table,   ///< the fill kernel, then the lookups (kernels/table.cuh)
  direct,  ///< the functor computed per element
};

/// One timed call: its elapsed time on the stream and the elements it computed.
struct table_timing {
  double elapsed_ms;
  cuda::std::size_t elements;
};

/// Milliseconds per element of `t`; an empty or unusable timing counts as infinitely slow.
inline double ms_per_element(const table_timing& t) {
  return t.elements > 0 && t.elapsed_ms >= 0 ? t.elapsed_ms / static_cast<double>(t.elements)
                                             : 1e300;
}

/// The decision from `count` timings of each path: the table where its fastest time per element,
/// made longer by table_choice_margin, is still under direct math's fastest; direct math
/// otherwise (a tie included). Per element, since the timed calls' sizes differ; the fastest,
/// since a call is only ever slowed (a first call's module loading, other streams' work).
inline table_path decide_table_path(const table_timing* direct, const table_timing* table,
                                    int count) {
  double direct_best = 1e300, table_best = 1e300;
  for (int i = 0; i < count; ++i) {
    const double d = ms_per_element(direct[i]), t = ms_per_element(table[i]);
    if (d < direct_best) direct_best = d;
    if (t < table_best) table_best = t;
  }
  return table_best < 1e300 && table_best * (1 + table_choice_margin) < direct_best
             ? table_path::table
             : table_path::direct;
}

/// The measurement of one (operation, params, device): which path each call runs, which calls
/// are timed, and the decision once every timed call has completed. Undecided, calls that are not
/// timed take the table (the path before any measurement). A failure of the timing (table_measure:
/// an event call failed, a timed call's table had no buffer) decides the table, that default; a
/// timed call whose path returned an error (the caller's arguments) leaves its timing to a later
/// call.
class table_choice {
 public:
  static constexpr int timed_calls = 2 * table_choice_samples;

  /// The path timed call `k` runs: direct math first (its one-time costs then land on a call
  /// that a second one outweighs), then the two in turn.
  static constexpr table_path path_of(int k) {
    return k % 2 == 0 ? table_path::direct : table_path::table;
  }

  bool decided() const { return decided_; }
  /// The decision, or while undecided the path of a call that is not timed: the table.
  table_path path() const { return decided_ ? decision_ : table_path::table; }

  /// Claims the first timed call not yet claimed: its index, or -1 where none is left or the
  /// choice is made.
  int claim() {
    if (decided_) return -1;
    for (int k = 0; k < timed_calls; ++k) {
      if (state_[k] == sample::free) {
        state_[k] = sample::claimed;
        return k;
      }
    }
    return -1;
  }
  /// Claimed timed call `k` did not run as timed: a later call claims it again.
  void abandoned(int k) {
    if (in_state(k, sample::claimed)) state_[k] = sample::free;
  }
  /// Claimed timed call `k` ran as timed: its end is recorded, its timing may be read.
  void ran(int k) {
    if (in_state(k, sample::claimed)) state_[k] = sample::ran;
  }
  /// Whether timed call `k` has run and its timing is not in yet.
  bool pending(int k) const { return !decided_ && in_state(k, sample::ran); }

  /// Timed call `k` took `elapsed_ms` over `elements` elements; with the last timing in, decides.
  void completed(int k, double elapsed_ms, cuda::std::size_t elements) {
    if (!pending(k)) return;
    state_[k] = sample::done;
    timings_[k] = {elapsed_ms, elements};
    for (int i = 0; i < timed_calls; ++i) {
      if (state_[i] != sample::done) return;
    }
    table_timing direct[table_choice_samples], table[table_choice_samples];
    for (int s = 0; s < table_choice_samples; ++s) {
      direct[s] = timings_[2 * s];
      table[s] = timings_[2 * s + 1];
    }
    decide(decide_table_path(direct, table, table_choice_samples));
  }

  /// The timing failed: the table, as before any measurement, for every later call.
  void failed() { decide(table_path::table); }

 private:
  enum class sample : unsigned char { free, claimed, ran, done };
  bool in_state(int k, sample s) const { return k >= 0 && k < timed_calls && state_[k] == s; }
  void decide(table_path path) {
    decided_ = true;
    decision_ = path;
  }
  sample state_[timed_calls] = {};
  table_timing timings_[timed_calls] = {};
  bool decided_ = false;
  table_path decision_ = table_path::table;
};

/// Calls of one operation after which its choice is made where each call is waited for before
/// the next: every timed call, then one that reads their timings (the benchmarks settle with it).
inline constexpr int table_choice_settling_calls = table_choice::timed_calls + 1;

}  // namespace detail
}  // namespace cuact
