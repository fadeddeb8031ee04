#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "rows.cuh"

namespace bench {
namespace {

constexpr std::size_t alignment = 256;
std::size_t pad(std::size_t bytes) { return (bytes + alignment - 1) / alignment * alignment; }

void check_status(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) {
    fail(format("%s returned %s (%s)", what.c_str(), cudaGetErrorName(status),
                cudaGetErrorString(status)));
  }
}

}  // namespace

double check_tolerance(dtype t) {
  switch (t) {
    case dtype::f64:
      return 1e-12;
    case dtype::f32:
      return 1e-5;
    case dtype::f16:
      return 2.0 / 1024;  // two ulps of 1.0 (relative error)
    case dtype::bf16:
      return 2.0 / 128;
  }
  return 0;
}

row_runner::row_runner(std::size_t max_array_bytes, std::size_t max_n, int reps)
    : array_stride_(pad(max_array_bytes)),
      mask_offset_(4 * pad(max_array_bytes)),
      table_(stdout, {{"op", 40, true},
                      {"dtype", 5, true},
                      {"place", 5, true},
                      {"GB/s", 7},
                      {"x memcpy", 8},
                      {"copy GB/s", 9},
                      {"CUB GB/s", 8},
                      {"x CUB", 6},
                      {"ms", 7},
                      {"spread%", 7},
                      {"blocks", 8},
                      {"thr", 4},
                      {"vpt", 3},
                      {"pass", 4},
                      {"heavy", 5},
                      {"regs", 4},
                      {"blk/SM", 6},
                      {"check", 8, true}}) {
  timing_.warmup_calls = 2;
  timing_.reps = reps;
  const std::size_t mask_bytes = pad((max_n + 31) / 32 * 4);
  const std::size_t need = mask_offset_ + mask_bytes;
  if (need > usable_device_memory()) {
    fail(format("needs %.1f GB of device memory; %.1f GB usable", need / 1e9,
                usable_device_memory() / 1e9));
  }
  arena_ = device_buffer(need);
}

void* row_runner::array(int i) const {
  return arena_.as<char>() + static_cast<std::size_t>(i) * array_stride_;
}

double row_runner::memcpy_gbps(double total_bytes) {
  const std::size_t copy_bytes = static_cast<std::size_t>(total_bytes / 2);
  const auto known = memcpy_gbps_.find(copy_bytes);
  if (known != memcpy_gbps_.end()) return known->second;
  const double rate = time_memcpy(total_bytes);
  memcpy_gbps_[copy_bytes] = rate;
  return rate;
}

double row_runner::time_memcpy(double total_bytes) {
  const std::size_t copy_bytes = static_cast<std::size_t>(total_bytes / 2);
  if (2 * pad(copy_bytes) > arena_.bytes()) fail("memcpy contestant larger than the arena");
  const cudaStream_t s = stream_.get();
  char* from = arena_.as<char>();
  char* to = from + pad(copy_bytes);
  fill_random(from, copy_bytes / 4, dtype::f32, fresh_seed(), s);
  const timing t = measure(
      s, [&](std::int64_t) { return memcpy_call(to, from, copy_bytes, s); }, timing_);
  return gbps(2.0 * static_cast<double>(copy_bytes), t.ms_per_call);
}

row_result row_runner::run(const entry& e, std::size_t n, placement place) {
  const cudaStream_t s = stream_.get();
  const dtype t = e.type;
  if (n * size_of(t) > array_stride_) fail("row larger than the runner's arrays");
  const bool in_place = place == placement::in_place;
  if (in_place && !e.is_forward()) fail("only forward rows run in place");
  void* const x = array(0);
  void* const second = array(1);
  void* const cub_out = array(2);
  void* const cuact_out = array(3);
  void* const mask = arena_.as<char>() + mask_offset_;

  const auto args_for = [&](void* out) {
    call_args a;
    a.in0 = in_place ? out : x;
    a.in1 = e.element_inputs == 2 ? second : nullptr;
    a.aux = e.uses_aux ? second : nullptr;
    a.mask = e.reads_mask || e.writes_mask ? mask : nullptr;
    a.out = out;
    a.n = n;
    return a;
  };

  const std::uint64_t x_seed = fresh_seed();
  fill_random(x, n, t, x_seed, s);
  fill_random(second, n, t, fresh_seed(), s);
  if (e.prepare) check_status(e.prepare(args_for(cub_out), s), e.label() + " prepare");

  row_result r;
  r.source = &e;
  r.place = place;
  r.n = n;
  r.bytes = e.bytes_moved(n);

  const auto time_contestant = [&](const launch_fn& launch, void* out) {
    if (in_place) {
      fill_random(out, n, t, x_seed, s);  // the same x as out of place
    } else {
      poison(out, n, t, s);
    }
    const call_args a = args_for(out);
    return measure(
        s, [&](std::int64_t) { return launch(a, s); }, timing_);
  };

  if (e.cub) {
    const timing cub = time_contestant(e.cub, cub_out);
    r.cub_ms = cub.ms_per_call;
    r.cub_gbps = gbps(r.bytes, cub.ms_per_call);
  }
  const timing ours = time_contestant(e.cuact, cuact_out);
  r.cuact_ms = ours.ms_per_call;
  r.cuact_gbps = gbps(r.bytes, ours.ms_per_call);
  r.spread_percent = 100.0 * (ours.max_ms_per_call - ours.min_ms_per_call) / ours.ms_per_call;

  // In place, the contestants' data drifted apart call by call (selu), so only out of place is
  // checked: cuact against the entry's reference route, else against CUB's result.
  if (!in_place && (e.reference || e.cub)) {
    if (e.reference) {
      poison(cub_out, n, t, s);
      check_status(e.reference(args_for(cub_out), s), e.label() + " reference");
    }
    r.checked = true;
    r.difference = max_difference(cuact_out, cub_out, n, t, s);
    r.check_ok = r.difference <= check_tolerance(t);
    if (!r.check_ok) ++failed_checks_;
  }
  if (e.shape) r.shape = e.shape(args_for(cuact_out));
  BENCH_CHECK(cudaStreamSynchronize(s));
  // The ceiling for this row's bytes, timed right after its contestants (it overwrites their
  // arrays, so not between them): should a GPU's copy rate drift over a run, one rate taken at
  // its start would move every later row's ratio (a GPU's copy rate varies between machines and
  // runs).
  r.memcpy_gbps = time_memcpy(r.bytes);
  print(r);
  return r;
}

void row_runner::print_header() const { table_.header(); }
void row_runner::print_rule() const { table_.rule(); }

void row_runner::print(const row_result& r) const {
  const entry& e = *r.source;
  const shape_report& sh = r.shape;
  const bool forward = e.is_forward();
  std::string check = "-";
  if (r.checked) check = r.check_ok ? "ok" : format("BAD %.2g", r.difference);
  table_.row({e.label(), name(e.type),
              forward ? (r.place == placement::in_place ? "in" : "out") : "-",
              format("%.1f", r.cuact_gbps), ratio_text(r.cuact_gbps, r.memcpy_gbps),
              format("%.1f", r.memcpy_gbps), r.cub_gbps > 0 ? format("%.1f", r.cub_gbps) : "-",
              ratio_text(r.cuact_gbps, r.cub_gbps), format("%.3f", r.cuact_ms),
              format("%.1f", r.spread_percent), sh.available ? format("%u", sh.blocks) : "-",
              sh.available ? format("%u", sh.threads_per_block) : "-",
              sh.available ? format("%u", sh.vectors_per_thread) : "-",
              sh.available ? format("%u", sh.passes) : "-",
              sh.available ? (sh.tabulated    ? "table"
                              : sh.bulk_tiles ? (sh.heavy ? "yes/B" : "no/B")
                              : sh.heavy      ? "yes"
                                              : "no")
                           : "-",
              sh.available ? format("%d", sh.registers) : "-",
              sh.available ? format("%d", sh.resident_blocks_per_sm) : "-", check});
}

void print_minimums(const std::vector<row_result>& rows, const char* what) {
  const row_result* worst_memcpy = nullptr;
  const row_result* worst_cub = nullptr;
  int below_098 = 0, below_cub = 0, with_cub = 0;
  for (const row_result& r : rows) {
    if (worst_memcpy == nullptr || r.vs_memcpy() < worst_memcpy->vs_memcpy()) worst_memcpy = &r;
    if (r.vs_memcpy() < 0.98) ++below_098;
    if (r.cub_gbps > 0) {
      ++with_cub;
      if (worst_cub == nullptr || r.vs_cub() < worst_cub->vs_cub()) worst_cub = &r;
      if (r.vs_cub() < 1.0) ++below_cub;
    }
  }
  if (worst_memcpy == nullptr) return;
  const auto where = [](const row_result& r) {
    return r.source->label() + " " + name(r.source->type) +
           (r.place == placement::in_place ? " in place" : "");
  };
  std::printf("# %s: %zu rows; min x memcpy %.3f (%s); %d rows below 0.98\n", what, rows.size(),
              worst_memcpy->vs_memcpy(), where(*worst_memcpy).c_str(), below_098);
  if (worst_cub != nullptr) {
    std::printf("# %s: min x CUB %.3f (%s); %d of %d rows below 1.00\n", what, worst_cub->vs_cub(),
                where(*worst_cub).c_str(), below_cub, with_cub);
  }
}

int finish_mode(const row_runner& runner, const std::vector<row_result>& rows, const char* what) {
  print_minimums(rows, what);
  if (runner.failed_checks() > 0) {
    std::printf("# %d CHECK(S) FAILED\n", runner.failed_checks());
    return 2;
  }
  std::printf("# every check passed\n");
  return 0;
}

}  // namespace bench
