/// \file
/// What every benchmark mode shares: error checks, element types, device facts, random inputs,
/// RAII handles, the one timing helper, and fixed-width tables.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace bench {

// ---------------------------------------------------------------------------------------------
// Errors: every CUDA call is checked; a failure prints the call and exits non-zero.

[[noreturn]] void fail(const char* what, cudaError_t status, const char* file, int line);
[[noreturn]] void fail(const std::string& message);

#define BENCH_CHECK(call)                                      \
  do {                                                         \
    const cudaError_t bench_status_ = (call);                  \
    if (bench_status_ != cudaSuccess) {                        \
      ::bench::fail(#call, bench_status_, __FILE__, __LINE__); \
    }                                                          \
  } while (0)

/// After a <<<...>>> launch: the launch's own error.
#define BENCH_CHECK_LAUNCH() BENCH_CHECK(cudaGetLastError())

// ---------------------------------------------------------------------------------------------
// Element types, chosen at run time and mapped to C++ types in ops_*.cu.

enum class dtype { f32, f16, bf16, f64 };
const char* name(dtype t);
std::size_t size_of(dtype t);

// ---------------------------------------------------------------------------------------------
// The device.

struct device_info {
  int device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  std::size_t l2_bytes = 0;
  std::size_t total_memory = 0;
  int clock_khz = 0, memory_clock_khz = 0, bus_bits = 0;
  int driver_version = 0, runtime_version = 0;
  bool ecc = false;
};

/// Queries device 0 (after CUDA_VISIBLE_DEVICES), makes it current, and exits with a message if
/// there is none.
device_info query_device();
/// Device, clocks, L2, versions and the date, as '#' comment lines.
void print_device(const device_info& info, const char* mode, std::FILE* out);

// ---------------------------------------------------------------------------------------------
// RAII handles (move-only).

class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes);
  ~device_buffer();
  device_buffer(device_buffer&& other) noexcept;
  device_buffer& operator=(device_buffer&& other) noexcept;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  void* get() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(pointer_);
  }

 private:
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
};

class stream_handle {
 public:
  stream_handle();  // a non-blocking stream: never the legacy default stream
  ~stream_handle();
  stream_handle(const stream_handle&) = delete;
  stream_handle& operator=(const stream_handle&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

/// Free device memory, less a margin for the runtime and CUB.
std::size_t usable_device_memory();

// ---------------------------------------------------------------------------------------------
// Inputs: standard normal values (half of them negative, none zero), from a hash of
// (seed, index) through Box-Muller, generated on the device.

void fill_random(void* data, std::size_t count, dtype t, std::uint64_t seed, cudaStream_t stream);
/// A seed never used before in this process.
std::uint64_t fresh_seed();
/// Largest |a[i] - b[i]| / max(1, |b[i]|) over n elements of type t, as double; NaN anywhere
/// (one side or both) counts as infinity, so an unwritten (NaN-poisoned) output cannot pass;
/// equal infinities count as equal.
double max_difference(const void* a, const void* b, std::size_t n, dtype t, cudaStream_t stream);
/// Sets every byte of `count` elements so that each element is a NaN (0xFF bytes).
void poison(void* data, std::size_t count, dtype t, cudaStream_t stream);

// ---------------------------------------------------------------------------------------------
// Timing. One helper serves every mode.
//
// `enqueue(i)` enqueues call number i (0, 1, 2, ... over the whole measurement) on the stream
// and returns its status; a mode that rotates buffers uses i to pick the buffer set.

using enqueue_fn = std::function<cudaError_t(std::int64_t call)>;

struct timing_options {
  /// Calls before the warm-up, each waited for: enough that a measured choice
  /// (detail/table_measure.cuh: a bf16 forward's table or direct math) is decided, so the timed
  /// calls run the decided path (cuact::detail::table_choice_settling_calls).
  int settle_calls = 0;
  int warmup_calls = 2;  ///< untimed calls first: module load, CUB's first-call queries
  int reps = 15;         ///< timed batches; the median is reported
  int batch = 1;         ///< calls per timed batch
  bool graph = false;    ///< capture each batch into a CUDA graph and time the graph's launch
  /// Capture a new graph (the next `batch` calls) for every rep rather than replaying one, so
  /// that buffer rotation continues across reps instead of repeating the same few sets.
  /// Only when `rotation_sets` (how many buffer sets enqueue cycles through) exceeds the batch:
  /// otherwise one graph already visits every set.
  bool fresh_graph_per_rep = false;
  std::int64_t rotation_sets = 1;
  /// > 0: choose `batch` so that a batch takes at least this long (a graph when batch > 1);
  /// overrides batch and graph.
  double min_batch_ms = 0;
  int max_batch = 4096;
  /// Keep the GPU busy while each timed batch is enqueued (busy_start.cuh), so the time is the
  /// GPU's only; off for --small, whose cold table times from an idle GPU.
  bool busy_start = true;
};

struct timing {
  double ms_per_call = 0;  ///< median over reps of (batch time / batch)
  double min_ms_per_call = 0;
  double max_ms_per_call = 0;
  int batch = 1;
  int reps = 0;
  bool graph = false;
  bool relaxed_capture = false;  ///< capture needed cudaStreamCaptureModeRelaxed (see measure)
};

/// Warm-up, optional calibration of the batch, then `reps` batches each between two events; see
/// timing_options. Graphs are captured in cudaStreamCaptureModeGlobal; if that capture fails
/// (an API call not allowed while capturing), the failure is reported once on stderr and the
/// capture is retried in cudaStreamCaptureModeRelaxed.
timing measure(cudaStream_t stream, const enqueue_fn& enqueue, const timing_options& options);

/// Host time per call, in microseconds: median over `reps` of (steady_clock around `calls`
/// enqueues without synchronizing) / calls; the stream is synchronized after each rep, untimed.
double measure_host_us(cudaStream_t stream, const enqueue_fn& enqueue, int calls, int reps);

/// Median of values (the mean of the two middle ones for an even count).
double median(std::vector<double> values);

/// GB/s counting bytes read plus written (1 GB = 1e9 bytes).
inline double gbps(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

// ---------------------------------------------------------------------------------------------
// Fixed-width tables.

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

struct column {
  const char* title;
  int width;
  bool left = false;  ///< left-aligned (text); numbers are right-aligned
};

class table {
 public:
  table(std::FILE* out, std::vector<column> columns) : out_(out), columns_(std::move(columns)) {}
  void header() const;  ///< titles, then a rule
  void rule() const;
  void row(const std::vector<std::string>& cells) const;

 private:
  std::FILE* out_;
  std::vector<column> columns_;
};

// ---------------------------------------------------------------------------------------------
// Child processes: modes that give every size a fresh process (so that CUB's per-instantiation
// cached configuration comes from a first call at that size) re-run this executable.

/// Runs this executable (/proc/self/exe) with `arguments` (each passed as one word); returns the
/// lines of its stdout that start with '@' (without the '@'), in order; its stderr goes to ours.
/// `status` gets the child's exit status (-1 if it did not exit normally).
std::vector<std::string> run_child(const std::vector<std::string>& arguments, int& status);

/// The non-empty parts of `text` between occurrences of `separator`.
std::vector<std::string> split_at(const std::string& text, char separator);
/// Splits a line at single spaces (split_at(line, ' ')).
std::vector<std::string> split_words(const std::string& line);

/// "1.00", or "-" when the reference is missing (<= 0).
std::string ratio_text(double value, double reference);
/// "2^20" for powers of two, else the number.
std::string size_text(std::size_t n);

}  // namespace bench
