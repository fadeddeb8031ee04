/// \file
/// The run-time half of the measured choice between a functor's bf16 table and direct math
/// (table_choice.cuh decides): per (operation, params, device), the first eligible calls record a
/// pair of events around the path they run on the caller's stream, and later calls poll them
/// (cudaEventQuery: never a synchronization) until every timing is in. Host-only.
///
/// Rules: a stream being captured is never timed (an event record would join the graph); nor is a
/// call made while an error of the caller's is pending (the runtime's error state stays as the
/// caller left it). An event call that fails decides the table, the path before measurement, and
/// its error is cleared (a sticky one, a fault of an earlier kernel, stays whatever is cleared, and
/// the call's own launch returns it); nothing is printed. The polls and records run in relaxed
/// capture mode, so that a capture another thread makes in global mode is not invalidated by them.
#pragma once

#include <atomic>
#include <cstddef>

#include "config.cuh"
#include "host_lock.cuh"
#include "launch.cuh"
#include "table_choice.cuh"

namespace cuact {
namespace detail {

/// One (operation, params, device)'s measurement. Its events are created on its first timed call
/// and kept for the process, as the table buffers are (dispatch.cuh: get_table_buffer).
struct table_measurement {
  host_mutex lock;
  /// 0 while undecided, else 1 + the decision (a table_path): decided calls read only this. Zero
  /// when undecided, so that the measurements of every key are zero-initialized (no data in the
  /// object file).
  std::atomic<int> decision{0};
  table_choice choice;
  cudaEvent_t events[table_choice::timed_calls][2] = {};  ///< {start, end} of each timed call
  std::size_t elements[table_choice::timed_calls] = {};
  bool events_made = false;
};

/// The measurement of Key (an eligible call's params type, or the quantize's: it names the
/// operation) on `device`; nullptr beyond max_cached_devices (such calls take the table).
template <class Key>
table_measurement* table_measurement_of(int device) {
  static table_measurement measurements[max_cached_devices];
  return device >= 0 && device < max_cached_devices ? &measurements[device] : nullptr;
}

/// Relaxed stream-capture mode for the calling thread while it lives (restored after).
class relaxed_capture_mode {
 public:
  relaxed_capture_mode() : set_(cudaThreadExchangeStreamCaptureMode(&mode_) == cudaSuccess) {}
  ~relaxed_capture_mode() {
    if (set_) cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  relaxed_capture_mode(const relaxed_capture_mode&) = delete;
  relaxed_capture_mode& operator=(const relaxed_capture_mode&) = delete;
  bool set() const { return set_; }

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
  bool set_;
};

/// What one eligible call runs: `path`, timed as timed call `timed` of `measurement` (-1: not
/// timed) on `stream`.
struct table_step {
  table_path path = table_path::table;
  int timed = -1;
  table_measurement* measurement = nullptr;
  cudaStream_t stream = nullptr;
};

/// Clears an error that cuact's own event calls left (none of the caller's was pending: the
/// callers check), cudaErrorNotReady from a poll included.
inline void clear_own_event_error() {
  if (cudaPeekAtLastError() != cudaSuccess) cudaGetLastError();
}

/// Publishes m's decision, where made, to calls that read only the atomic (m's lock held).
inline void publish_table_decision(table_measurement& m) {
  if (m.choice.decided()) {
    m.decision.store(1 + static_cast<int>(m.choice.path()), std::memory_order_release);
  }
}

/// The step of an eligible call over n elements on `stream`, for measurement `m` (nullptr: the
/// table). Decided: the decision. Undecided: polls the timed calls that ran (decides once all are
/// in), then times the next call where one is left (its start recorded here), else the table.
inline table_step begin_table_step(table_measurement* m, cudaStream_t stream, std::size_t n) {
  if (m == nullptr) return {};
  if (const int decided = m->decision.load(std::memory_order_acquire); decided != 0) {
    return {static_cast<table_path>(decided - 1)};
  }
  if (cudaPeekAtLastError() != cudaSuccess) return {};  // the caller's error stays pending
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
    cudaGetLastError();  // no measurement on a stream that cannot say
    return {};
  }
  if (capture != cudaStreamCaptureStatusNone) return {};
  const relaxed_capture_mode relaxed;
  const host_lock_guard guard(m->lock);
  if (m->choice.decided()) return {m->choice.path()};
  bool ok = relaxed.set();
  if (ok && !m->events_made) {
    m->events_made = true;
    for (auto& pair : m->events) {
      for (cudaEvent_t& event : pair) ok = ok && cudaEventCreate(&event) == cudaSuccess;
    }
  }
  for (int k = 0; ok && k < table_choice::timed_calls; ++k) {
    if (!m->choice.pending(k)) continue;
    const cudaError_t done = cudaEventQuery(m->events[k][1]);
    float elapsed_ms = 0;
    if (done == cudaSuccess &&
        cudaEventElapsedTime(&elapsed_ms, m->events[k][0], m->events[k][1]) == cudaSuccess) {
      m->choice.completed(k, elapsed_ms, m->elements[k]);
    } else if (done != cudaErrorNotReady) {
      ok = false;
    }
  }
  table_step step{m->choice.path(), -1, m, stream};
  if (!ok) {
    m->choice.failed();
  } else if (const int k = m->choice.claim(); k >= 0) {
    m->elements[k] = n;
    if (cudaEventRecord(m->events[k][0], stream) == cudaSuccess) {
      step.path = table_choice::path_of(k);
      step.timed = k;
    } else {
      m->choice.failed();
      step.path = m->choice.path();
    }
  }
  publish_table_decision(*m);
  clear_own_event_error();
  return step;
}

/// After the path of `step` ran (`ran`, with `status`): records the timed call's end where it ran
/// as timed and succeeded. A timed call whose path returned an error (the caller's arguments, or
/// a fault) leaves its timing to a later call; one whose table could not run (no buffer: `ran`
/// differs), or whose end cannot be recorded, decides the table.
inline void end_table_step(const table_step& step, cudaError_t status, table_path ran) {
  if (step.timed < 0) return;
  table_measurement& m = *step.measurement;
  const relaxed_capture_mode relaxed;
  const host_lock_guard guard(m.lock);
  if (status != cudaSuccess) {
    m.choice.abandoned(step.timed);  // the error is the caller's, returned as it is
  } else if (ran == step.path && relaxed.set() &&
             cudaEventRecord(m.events[step.timed][1], step.stream) == cudaSuccess) {
    m.choice.ran(step.timed);
  } else {
    m.choice.failed();
    clear_own_event_error();
  }
  publish_table_decision(m);
}

/// An eligible call (policy.cuh: tabulates) of the operation Key names over n elements on
/// `device`: `table()` (the tabulated path; cudaErrorNotSupported, nothing launched, where it has
/// no buffer) or `direct()`, as the measurement says, timed while it measures; table() that
/// cannot run runs direct(). Under a scoped_policy the table, as before measurement: such calls
/// are never timed (their direct launch takes the forced shape, not the one to be judged), and
/// the policy never reaches the table's launch (launch.cuh: scoped_policy).
template <class Key, class Table, class Direct>
cudaError_t run_table_or_direct(int device, cudaStream_t stream, std::size_t n, const Table& table,
                                const Direct& direct) {
  const table_step step = policy_overridden()
                              ? table_step{}
                              : begin_table_step(table_measurement_of<Key>(device), stream, n);
  table_path ran = step.path;
  cudaError_t status = cudaErrorNotSupported;
  if (step.path == table_path::table) status = table();
  if (status == cudaErrorNotSupported) {
    ran = table_path::direct;
    status = direct();
  }
  end_table_step(step, status, ran);
  return status;
}

/// The path an eligible call of Key on `device` takes now where it is not timed: the decision,
/// or the table while undecided (the benchmark's report, the tests).
template <class Key>
table_path untimed_table_path(int device) {
  const table_measurement* m = table_measurement_of<Key>(device);
  const int decided = m == nullptr ? 0 : m->decision.load(std::memory_order_acquire);
  return decided != 0 ? static_cast<table_path>(decided - 1) : table_path::table;
}

/// Whether the measurement of Key on `device` has decided.
template <class Key>
bool table_path_decided(int device) {
  const table_measurement* m = table_measurement_of<Key>(device);
  return m != nullptr && m->decision.load(std::memory_order_acquire) != 0;
}

}  // namespace detail
}  // namespace cuact
