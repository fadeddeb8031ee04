#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdlib>
#include <ctime>
#include <cuact/detail/launch.cuh>
#include <cub/version.cuh>
#include <limits>
#include <type_traits>

#include "busy_start.cuh"
#include "common.cuh"

namespace bench {

// ---------------------------------------------------------------------------------------------
// Errors

void fail(const char* what, cudaError_t status, const char* file, int line) {
  std::fflush(stdout);
  std::fprintf(stderr, "cuact_bench: %s failed at %s:%d: %s (%s)\n", what, file, line,
               cudaGetErrorString(status), cudaGetErrorName(status));
  std::exit(1);
}

void fail(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "cuact_bench: %s\n", message.c_str());
  std::exit(1);
}

// ---------------------------------------------------------------------------------------------
// Element types

const char* name(dtype t) {
  switch (t) {
    case dtype::f32:
      return "fp32";
    case dtype::f16:
      return "fp16";
    case dtype::bf16:
      return "bf16";
    case dtype::f64:
      return "fp64";
  }
  return "?";
}

std::size_t size_of(dtype t) {
  switch (t) {
    case dtype::f32:
      return 4;
    case dtype::f16:
      return 2;
    case dtype::bf16:
      return 2;
    case dtype::f64:
      return 8;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The device

device_info query_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    fail(format("no usable CUDA device (%s)", cudaGetErrorString(status)));
  }
  device_info info;
  BENCH_CHECK(cudaSetDevice(info.device));
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, info.device));
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sms = prop.multiProcessorCount;
  info.total_memory = prop.totalGlobalMem;
  int value = 0;
  BENCH_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrL2CacheSize, info.device));
  info.l2_bytes = static_cast<std::size_t>(value);
  BENCH_CHECK(cudaDeviceGetAttribute(&info.clock_khz, cudaDevAttrClockRate, info.device));
  BENCH_CHECK(
      cudaDeviceGetAttribute(&info.memory_clock_khz, cudaDevAttrMemoryClockRate, info.device));
  BENCH_CHECK(cudaDeviceGetAttribute(&info.bus_bits, cudaDevAttrGlobalMemoryBusWidth, info.device));
  BENCH_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrEccEnabled, info.device));
  info.ecc = value != 0;
  BENCH_CHECK(cudaDriverGetVersion(&info.driver_version));
  BENCH_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  BENCH_CHECK(cudaFree(nullptr));  // create the context now, outside any timing
  return info;
}

void print_device(const device_info& info, const char* mode, std::FILE* out) {
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  // Double data rate: bytes/s = 2 * memory clock * bus width / 8.
  const double peak_gbps = 2.0 * info.memory_clock_khz * 1e3 * info.bus_bits / 8 / 1e9;
  std::fprintf(out, "# cuact_bench %s, %s\n", mode, date);
  std::fprintf(out, "# device %d: %s, sm_%d%d, %d SMs, L2 %.1f MB, %.1f GB, ECC %s\n", info.device,
               info.name.c_str(), info.cc_major, info.cc_minor, info.sms, info.l2_bytes / 1e6,
               info.total_memory / 1e9, info.ecc ? "on" : "off");
  std::fprintf(out,
               "# clocks: SM %.0f MHz, memory %.0f MHz x %d bit (peak %.0f GB/s from these; "
               "memcpy is the measured ceiling)\n",
               info.clock_khz / 1e3, info.memory_clock_khz / 1e3, info.bus_bits, peak_gbps);
  cuact::detail::device_facts facts{};
  if (cuact::detail::get_device_facts(info.device, facts) == cudaSuccess) {
    std::fprintf(out,
                 "# cuact launch model: %d SMs, %d threads/SM, modelled bandwidth %.0f GB/s "
                 "(cuact::detail::get_device_facts)\n",
                 facts.sm_count, facts.max_threads_per_sm, facts.bytes_per_second / 1e9);
  }
  std::fprintf(out, "# CUDA driver %d, runtime %d, CUB %d.%d.%d\n", info.driver_version,
               info.runtime_version, CUB_VERSION / 100000, CUB_VERSION / 100 % 1000,
               CUB_VERSION % 100);
  std::fflush(out);
}

// ---------------------------------------------------------------------------------------------
// RAII handles

device_buffer::device_buffer(std::size_t bytes) : bytes_(bytes) {
  const cudaError_t status = cudaMalloc(&pointer_, bytes);
  if (status != cudaSuccess) {
    std::size_t free_bytes = 0, total = 0;
    cudaGetLastError();
    cudaMemGetInfo(&free_bytes, &total);
    fail(format("cudaMalloc(%.2f GB) failed: %s (%.2f GB free of %.2f GB)", bytes / 1e9,
                cudaGetErrorString(status), free_bytes / 1e9, total / 1e9));
  }
}

device_buffer::~device_buffer() {
  if (pointer_ != nullptr) cudaFree(pointer_);  // a failure here has nothing left to spoil
}

device_buffer::device_buffer(device_buffer&& other) noexcept
    : pointer_(other.pointer_), bytes_(other.bytes_) {
  other.pointer_ = nullptr;
  other.bytes_ = 0;
}

device_buffer& device_buffer::operator=(device_buffer&& other) noexcept {
  if (this != &other) {
    if (pointer_ != nullptr) cudaFree(pointer_);
    pointer_ = other.pointer_;
    bytes_ = other.bytes_;
    other.pointer_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

stream_handle::stream_handle() {
  BENCH_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}
stream_handle::~stream_handle() { cudaStreamDestroy(stream_); }

std::size_t usable_device_memory() {
  std::size_t free_bytes = 0, total = 0;
  BENCH_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const std::size_t margin = std::size_t{1} << 30;
  return free_bytes > margin ? free_bytes - margin : 0;
}

// ---------------------------------------------------------------------------------------------
// Inputs

namespace {

__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
__device__ T from_double(double v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <class T>
__device__ double to_double(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __bfloat162float(v);
  } else {
    return static_cast<double>(v);
  }
}

constexpr unsigned utility_threads = 256;

/// Blocks for a grid-stride utility kernel over `count` elements.
unsigned utility_blocks(std::size_t count) {
  const std::size_t blocks = (count + utility_threads - 1) / utility_threads;
  return static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>(blocks, 1), 1u << 16));
}

// Standard normal values by Box-Muller from two 32-bit halves of one hash: u1 in (0, 1], so the
// logarithm is finite; a value that rounds to exactly zero has probability ~1e-38 (fp32 / bf16).
template <class T>
__global__ void fill_random_kernel(T* data, std::size_t count, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const std::uint64_t h = splitmix64(seed ^ splitmix64(i));
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) * 0x1.0p-24f;      // (0, 1]
    const float u2 = static_cast<float>((h >> 8) & 0xFFFFFFu) * 0x1.0p-24f;  // [0, 1)
    const float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    data[i] = from_double<T>(z != 0.0f ? z : 0x1.0p-10f);
  }
}

// Max |a - b| / max(1, |b|) as a double; NaN counts as +inf. Atomic max on the bit pattern works
// because the values are non-negative doubles, whose bit patterns order like the numbers.
template <class T>
__global__ void max_difference_kernel(const T* a, const T* b, std::size_t n,
                                      unsigned long long* result) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  double local = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const double x = to_double(a[i]);
    const double y = to_double(b[i]);
    double d = x == y ? 0.0 : fabs(x - y) / fmax(1.0, fabs(y));  // inf == inf is no difference
    if (d != d) d = INFINITY;
    local = d > local ? d : local;
  }
  atomicMax(result, static_cast<unsigned long long>(__double_as_longlong(local)));
}

template <class F>
void with_type(dtype t, F&& f) {
  switch (t) {
    case dtype::f32:
      f(float{});
      break;
    case dtype::f16:
      f(__half{});
      break;
    case dtype::bf16:
      f(__nv_bfloat16{});
      break;
    case dtype::f64:
      f(double{});
      break;
  }
}

}  // namespace

void fill_random(void* data, std::size_t count, dtype t, std::uint64_t seed, cudaStream_t stream) {
  if (count == 0) return;
  with_type(t, [&](auto type) {
    using T = decltype(type);
    fill_random_kernel<<<utility_blocks(count), utility_threads, 0, stream>>>(static_cast<T*>(data),
                                                                              count, seed);
    BENCH_CHECK_LAUNCH();
  });
}

std::uint64_t fresh_seed() {
  static std::uint64_t next = 0x5EED;
  return splitmix64(next++);
}

double max_difference(const void* a, const void* b, std::size_t n, dtype t, cudaStream_t stream) {
  device_buffer result(sizeof(unsigned long long));
  BENCH_CHECK(cudaMemsetAsync(result.get(), 0, sizeof(unsigned long long), stream));
  with_type(t, [&](auto type) {
    using T = decltype(type);
    max_difference_kernel<<<utility_blocks(n), utility_threads, 0, stream>>>(
        static_cast<const T*>(a), static_cast<const T*>(b), n, result.as<unsigned long long>());
    BENCH_CHECK_LAUNCH();
  });
  double value = 0;
  BENCH_CHECK(cudaMemcpyAsync(&value, result.get(), sizeof value, cudaMemcpyDeviceToHost, stream));
  BENCH_CHECK(cudaStreamSynchronize(stream));
  return value;
}

void poison(void* data, std::size_t count, dtype t, cudaStream_t stream) {
  BENCH_CHECK(cudaMemsetAsync(data, 0xFF, count * size_of(t), stream));
}

// ---------------------------------------------------------------------------------------------
// Timing

namespace {

class event_pair {
 public:
  event_pair() {
    BENCH_CHECK(cudaEventCreate(&start_));
    BENCH_CHECK(cudaEventCreate(&stop_));
  }
  ~event_pair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  event_pair(const event_pair&) = delete;
  event_pair& operator=(const event_pair&) = delete;

  /// Milliseconds that `work` (which enqueues on `stream`) takes on the device; with `busy`, the
  /// GPU's time only (busy_start.cuh), else from an idle GPU, the host's enqueue included.
  template <class Work>
  float time(cudaStream_t stream, bool busy, Work&& work) {
    if (busy) BENCH_CHECK(busy_start(stream));
    BENCH_CHECK(cudaEventRecord(start_, stream));
    work();
    BENCH_CHECK(cudaEventRecord(stop_, stream));
    BENCH_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

class graph_exec {
 public:
  graph_exec() = default;
  explicit graph_exec(cudaGraphExec_t exec) : exec_(exec) {}
  ~graph_exec() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  }
  graph_exec(graph_exec&& other) noexcept : exec_(other.exec_) { other.exec_ = nullptr; }
  graph_exec& operator=(graph_exec&& other) noexcept {
    std::swap(exec_, other.exec_);
    return *this;
  }
  graph_exec(const graph_exec&) = delete;
  graph_exec& operator=(const graph_exec&) = delete;
  cudaGraphExec_t get() const { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

void check_call(cudaError_t status, std::int64_t call) {
  if (status != cudaSuccess) {
    fail(format("benchmarked call %lld returned %s (%s)", static_cast<long long>(call),
                cudaGetErrorName(status), cudaGetErrorString(status)));
  }
}

/// Enqueues calls [call, call + count) directly on the stream; advances `call`.
void enqueue_direct(const enqueue_fn& enqueue, std::int64_t& call, int count) {
  for (int k = 0; k < count; ++k, ++call) check_call(enqueue(call), call);
}

/// Captures calls [call, call + count) into a graph, instantiates and uploads it; advances
/// `call`. Global capture mode first; on failure once more in relaxed mode.
graph_exec capture(cudaStream_t stream, const enqueue_fn& enqueue, std::int64_t& call, int count,
                   bool& relaxed) {
  static bool reported = false;
  for (const cudaStreamCaptureMode mode :
       {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeRelaxed}) {
    BENCH_CHECK(cudaStreamBeginCapture(stream, mode));
    std::int64_t next = call;
    cudaError_t status = cudaSuccess;
    for (int k = 0; k < count && status == cudaSuccess; ++k, ++next) status = enqueue(next);
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(stream, &graph);
    if (status == cudaSuccess && end == cudaSuccess) {
      cudaGraphExec_t exec = nullptr;
      BENCH_CHECK(cudaGraphInstantiate(&exec, graph, 0));
      BENCH_CHECK(cudaGraphDestroy(graph));
      BENCH_CHECK(cudaGraphUpload(exec, stream));  // upload now, not inside the first timed launch
      BENCH_CHECK(cudaStreamSynchronize(stream));
      call = next;
      relaxed = mode == cudaStreamCaptureModeRelaxed;
      return graph_exec(exec);
    }
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();
    if (mode == cudaStreamCaptureModeRelaxed) {
      fail(format("graph capture failed even in relaxed mode: call %s, end of capture %s",
                  cudaGetErrorName(status), cudaGetErrorName(end)));
    }
    if (!reported) {
      reported = true;
      std::fprintf(stderr,
                   "note: capture in cudaStreamCaptureModeGlobal failed (call: %s, end: %s); "
                   "capturing in relaxed mode instead\n",
                   cudaGetErrorName(status), cudaGetErrorName(end));
    }
  }
  fail("unreachable");
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t m = values.size() / 2;
  return values.size() % 2 == 1 ? values[m] : 0.5 * (values[m - 1] + values[m]);
}

/// Calls at least this long are timed as direct launches (see measure).
constexpr float direct_launch_min_ms = 0.02f;

/// With CUACT_BENCH_FLUSH_L2 set in the environment, L2 is overwritten (a memset of twice its size)
/// before every timed batch, as python/bench/_timer.py does: the call then starts with L2 full of
/// another kernel's dirty lines, as after a producer in a real model, rather than with its own
/// previous call's.
void flush_l2_if_asked(cudaStream_t stream) {
  static const bool asked = std::getenv("CUACT_BENCH_FLUSH_L2") != nullptr;
  if (!asked) return;
  static const device_buffer flush(
      std::max<std::size_t>(2 * query_device().l2_bytes, std::size_t(64) << 20));
  BENCH_CHECK(cudaMemsetAsync(flush.get(), 1, flush.bytes(), stream));
}

timing measure(cudaStream_t stream, const enqueue_fn& enqueue, const timing_options& options) {
  event_pair events;
  std::int64_t call = 0;
  timing result;
  result.batch = std::max(options.batch, 1);
  result.graph = options.graph;

  for (int settle = 0; settle < options.settle_calls; ++settle) {
    enqueue_direct(enqueue, call, 1);
    BENCH_CHECK(cudaStreamSynchronize(stream));
  }
  enqueue_direct(enqueue, call, options.warmup_calls);
  BENCH_CHECK(cudaStreamSynchronize(stream));

  if (options.min_batch_ms > 0) {
    // One direct call; if it is long enough alone, batches are single direct calls. Otherwise
    // the per-call time is taken from a short graph (back-to-back direct launches would measure
    // the host's enqueue rate instead), and the batch is sized from it.
    // The fastest of three single calls: one slow call (a first graph upload, a clock ramp) must
    // not send a 2 us kernel down the direct-launch path, where the host's enqueue rate would be
    // timed instead.
    float single =
        events.time(stream, options.busy_start, [&] { enqueue_direct(enqueue, call, 1); });
    for (int probe_call = 0; probe_call < 2; ++probe_call) {
      single = std::min(single, events.time(stream, options.busy_start,
                                            [&] { enqueue_direct(enqueue, call, 1); }));
    }
    if (single >= options.min_batch_ms) {
      result.batch = 1;
      result.graph = false;
    } else if (single >= direct_launch_min_ms) {
      // Long enough that back-to-back launches keep the GPU busy: direct calls, no graph. A
      // captured cudaMemcpyAsync becomes a graph memcpy node, slower than the same copy issued
      // directly, so graphs would skew the ceiling.
      result.batch = static_cast<int>(std::clamp(std::ceil(options.min_batch_ms / single), 1.0,
                                                 static_cast<double>(options.max_batch)));
      result.graph = false;
    } else {
      const int probe = static_cast<int>(
          std::clamp(options.min_batch_ms / 4 / std::max(single, 1e-4f), 1.0, 64.0));
      graph_exec probe_graph = capture(stream, enqueue, call, probe, result.relaxed_capture);
      BENCH_CHECK(cudaGraphLaunch(probe_graph.get(), stream));  // warm the graph path
      const float probe_ms = events.time(stream, options.busy_start, [&] {
        BENCH_CHECK(cudaGraphLaunch(probe_graph.get(), stream));
      });
      const double per_call = std::max(static_cast<double>(probe_ms) / probe, 1e-5);
      result.batch = static_cast<int>(std::clamp(std::ceil(options.min_batch_ms / per_call), 1.0,
                                                 static_cast<double>(options.max_batch)));
      result.graph = result.batch > 1;
    }
  }

  graph_exec fixed;
  const bool fresh =
      result.graph && options.fresh_graph_per_rep && options.rotation_sets > result.batch;
  if (result.graph && !fresh) {
    fixed = capture(stream, enqueue, call, result.batch, result.relaxed_capture);
    BENCH_CHECK(cudaGraphLaunch(fixed.get(), stream));  // one untimed replay
    BENCH_CHECK(cudaStreamSynchronize(stream));
  }

  std::vector<double> per_call;
  per_call.reserve(options.reps);
  for (int rep = 0; rep < std::max(options.reps, 1); ++rep) {
    graph_exec this_rep;
    if (fresh) this_rep = capture(stream, enqueue, call, result.batch, result.relaxed_capture);
    const cudaGraphExec_t exec = fresh ? this_rep.get() : fixed.get();
    flush_l2_if_asked(stream);
    const float ms = events.time(stream, options.busy_start, [&] {
      if (result.graph) {
        BENCH_CHECK(cudaGraphLaunch(exec, stream));
      } else {
        enqueue_direct(enqueue, call, result.batch);
      }
    });
    per_call.push_back(static_cast<double>(ms) / result.batch);
  }
  result.reps = static_cast<int>(per_call.size());
  result.ms_per_call = median(per_call);
  result.min_ms_per_call = *std::min_element(per_call.begin(), per_call.end());
  result.max_ms_per_call = *std::max_element(per_call.begin(), per_call.end());
  return result;
}

double measure_host_us(cudaStream_t stream, const enqueue_fn& enqueue, int calls, int reps) {
  std::int64_t call = 0;
  enqueue_direct(enqueue, call, 2);
  BENCH_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> per_call;
  for (int rep = 0; rep < reps; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    enqueue_direct(enqueue, call, calls);
    const auto stop = std::chrono::steady_clock::now();
    BENCH_CHECK(cudaStreamSynchronize(stream));
    per_call.push_back(std::chrono::duration<double, std::micro>(stop - start).count() / calls);
  }
  return median(per_call);
}

// ---------------------------------------------------------------------------------------------
// Tables

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int length = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string text(length > 0 ? static_cast<std::size_t>(length) : 0, '\0');
  if (length > 0) std::vsnprintf(text.data(), text.size() + 1, fmt, args);
  va_end(args);
  return text;
}

void table::header() const {
  std::vector<std::string> titles;
  for (const column& c : columns_) titles.emplace_back(c.title);
  row(titles);
  rule();
}

void table::rule() const {
  std::size_t width = 0;
  for (const column& c : columns_) width += static_cast<std::size_t>(c.width) + 1;
  std::fprintf(out_, "%s\n", std::string(width > 0 ? width - 1 : 0, '-').c_str());
}

void table::row(const std::vector<std::string>& cells) const {
  std::string line;
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    const column& c = columns_[i];
    const std::string& cell = i < cells.size() ? cells[i] : std::string();
    line += c.left ? format("%-*s", c.width, cell.c_str()) : format("%*s", c.width, cell.c_str());
    if (i + 1 < columns_.size()) line += ' ';
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

// ---------------------------------------------------------------------------------------------
// Child processes

namespace {

/// The word quoted for /bin/sh: inside single quotes, each ' written as '\''.
std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::vector<std::string> run_child(const std::vector<std::string>& arguments, int& status) {
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) fail("cannot read /proc/self/exe to re-run this executable");
  self[length] = '\0';
  std::string command = shell_quote(self);
  for (const std::string& a : arguments) command += " " + shell_quote(a);
  std::fflush(stdout);
  std::fflush(stderr);
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) fail("popen failed for: " + command);
  std::vector<std::string> lines;
  std::string line;
  char chunk[4096];
  while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) {
    line += chunk;
    if (line.empty() || line.back() != '\n') continue;
    line.pop_back();
    if (!line.empty() && line[0] == '@') lines.push_back(line.substr(1));
    line.clear();
  }
  const int raw = pclose(pipe);
  status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return lines;
}

std::vector<std::string> split_at(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find(separator, start);
    const std::size_t stop = end == std::string::npos ? text.size() : end;
    if (stop > start) parts.push_back(text.substr(start, stop - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

std::vector<std::string> split_words(const std::string& line) { return split_at(line, ' '); }

// ---------------------------------------------------------------------------------------------
// Tables (continued)

std::string ratio_text(double value, double reference) {
  return reference > 0 && value > 0 ? format("%.3f", value / reference) : "-";
}

std::string size_text(std::size_t n) {
  if (n != 0 && (n & (n - 1)) == 0) {
    int log2 = 0;
    while ((std::size_t{1} << log2) != n) ++log2;
    return format("2^%d", log2);
  }
  return format("%zu", n);
}

}  // namespace bench
