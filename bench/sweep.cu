// --sweep: GB/s against n for every dtype, forward and backward, with memcpy, CUB and cuact
// timed in the same run for each row. Small sizes rotate among buffer sets whose total footprint
// is 4x the L2, so they measure device memory rather than L2.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common.cuh"
#include "modes.cuh"
#include "ops.cuh"

namespace bench {
namespace {

constexpr std::size_t alignment = 256;
std::size_t pad(std::size_t bytes) { return (bytes + alignment - 1) / alignment * alignment; }

struct sweep_row {
  op operation;
  bool in_place;
  dtype type;
  std::size_t n;
  bool seeds;  ///< the seeds' shape (fp64: half of it)
};

/// Where a row's buffer sets live in the arena. Set k starts at k * set_stride and holds
/// `arrays` arrays array_stride apart (forward in place: 1, out of place: 2, backward: x, dy, dx);
/// the memcpy contestant copies copy_bytes from the set's start to pad(copy_bytes) past it.
struct layout {
  int arrays = 0;
  std::size_t array_stride = 0;
  std::size_t copy_bytes = 0;
  std::size_t set_stride = 0;
  std::size_t sets = 0;      ///< 0: does not fit
  std::size_t touched = 0;   ///< distinct bytes one cuact call touches
  bool l2_resident = false;  ///< the rotation could not reach the target footprint
};

layout plan(const sweep_row& row, std::size_t target_bytes, std::size_t arena_bytes) {
  layout l;
  const std::size_t bytes = row.n * size_of(row.type);
  l.arrays = is_forward(row.operation) ? (row.in_place ? 1 : 2) : 3;
  l.array_stride = pad(bytes);
  l.copy_bytes = static_cast<std::size_t>(bytes_moved(row.operation, row.type, row.n) / 2);
  l.set_stride = pad(std::max(l.arrays * l.array_stride, 2 * pad(l.copy_bytes)));
  l.touched = l.arrays * bytes;
  const std::size_t wanted = std::max<std::size_t>(1, (target_bytes + l.touched - 1) / l.touched);
  l.sets = std::min(wanted, arena_bytes / l.set_stride);
  l.l2_resident = l.sets * l.touched < target_bytes;
  return l;
}

std::vector<sweep_row> plan_rows() {
  std::vector<std::size_t> sizes;
  for (int p = 10; p <= 24; p += 2) sizes.push_back(std::size_t{1} << p);
  for (int p = 26; p <= 30; ++p) sizes.push_back(std::size_t{1} << p);
  sizes.push_back(seeds_n);
  std::vector<sweep_row> rows;
  for (const std::size_t n : sizes) {
    for (const dtype t : {dtype::f32, dtype::f16, dtype::bf16, dtype::f64}) {
      const bool seeds = n == seeds_n;
      // fp64 at the seeds' shape would need 12.9 GB per array: half the elements, same bytes.
      const std::size_t count = seeds && t == dtype::f64 ? n / 2 : n;
      for (const op o : {op::relu, op::selu}) {
        rows.push_back({o, false, t, count, seeds});
        rows.push_back({o, true, t, count, seeds});
      }
      rows.push_back({op::relu_backward, false, t, count, seeds});
      rows.push_back({op::selu_backward, false, t, count, seeds});
    }
  }
  return rows;
}

struct result {
  double us = 0;
  double gbps = 0;
  int batch = 0;
  bool relaxed_capture = false;
};

class sweep {
 public:
  sweep(const device_info& device, const options& opts)
      : rows_(plan_rows()),
        target_bytes_(4 * device.l2_bytes),
        table_(stdout, {{"op", 13, true},
                        {"dtype", 5, true},
                        {"place", 5, true},
                        {"n", 10},
                        {"memcpy", 7},
                        {"cub", 7},
                        {"cuact", 7},
                        {"cub/mc", 6},
                        {"cuact/mc", 8},
                        {"cuact/cub", 9},
                        {"cuact us", 10},
                        {"batch", 5},
                        {"sets", 6},
                        {"note", 4, true}}) {
    timing_.warmup_calls = 2;
    timing_.reps = opts.reps > 0 ? opts.reps : 11;
    timing_.min_batch_ms = 1.0;
    timing_.fresh_graph_per_rep = true;
    if (!opts.csv.empty()) {
      csv_ = std::fopen(opts.csv.c_str(), "w");
      if (csv_ == nullptr) fail("cannot open " + opts.csv + " for writing");
      std::fprintf(csv_,
                   "op,dtype,place,n,contestant,time_us,gbps,ratio_memcpy,ratio_cub,l2_resident\n");
    }
    // One arena for every row: the largest row's sets, or what the device has.
    std::size_t need = 0;
    for (const sweep_row& row : rows_) {
      const layout l = plan(row, target_bytes_, SIZE_MAX);
      need = std::max(need, l.sets * l.set_stride);
    }
    arena_ = device_buffer(std::min(need, usable_device_memory()));

    print_device(device, "--sweep", stdout);
    std::printf(
        "# %zu rows; GB/s = (bytes read + written) / time, per contestant in the same "
        "run; memcpy copies the row's bytes / 2\n",
        rows_.size());
    std::printf(
        "# median of %d batches after %d warm-up calls; batches of >= %.0f ms (CUDA "
        "graphs of 'batch' calls when one call is under 20 us, else direct launches)\n",
        timing_.reps, timing_.warmup_calls, timing_.min_batch_ms);
    std::printf(
        "# buffer sets rotate per call, footprint >= %.0f MB (4x L2); arena %.1f GB; "
        "in-place rows refill the data before each contestant\n\n",
        target_bytes_ / 1e6, arena_.bytes() / 1e9);
    table_.header();
  }

  ~sweep() {
    if (csv_ != nullptr) std::fclose(csv_);
  }

  int run() {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      const sweep_row& row = rows_[r];
      const layout l = plan(row, target_bytes_, arena_.bytes());
      if (l.sets == 0) {
        std::fprintf(stderr, "[%zu/%zu] %s %s n=%zu: skipped, needs %.1f GB\n", r + 1, rows_.size(),
                     name(row.operation), name(row.type), row.n, l.set_stride / 1e9);
        continue;
      }
      const result mc = time_contestant(row, l, impl::memcpy);
      const result cub = time_contestant(row, l, impl::cub);
      const result ca = time_contestant(row, l, impl::cuact);
      report(row, l, mc, cub, ca);
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(
          stderr,
          "[%zu/%zu] %-13s %s %-3s n=%-10s memcpy %6.0f  cub %6.0f  cuact %6.0f GB/s  (%.0f s)\n",
          r + 1, rows_.size(), name(row.operation), name(row.type), row.in_place ? "in" : "out",
          size_text(row.n).c_str(), mc.gbps, cub.gbps, ca.gbps, elapsed);
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("\n# sweep done in %.0f s\n", elapsed);
    return 0;
  }

 private:
  char* set(const layout& l, std::int64_t call) const {
    return arena_.as<char>() +
           static_cast<std::size_t>(call % static_cast<std::int64_t>(l.sets)) * l.set_stride;
  }

  result time_contestant(const sweep_row& row, const layout& l, impl contestant) {
    const cudaStream_t stream = stream_.get();
    // Fresh inputs for every contestant (in place, the previous one changed them).
    fill_random(arena_.get(), l.sets * l.set_stride / size_of(row.type), row.type, fresh_seed(),
                stream);
    enqueue_fn enqueue;
    if (contestant == impl::memcpy) {
      enqueue = [&](std::int64_t call) {
        char* base = set(l, call);
        return memcpy_call(base + pad(l.copy_bytes), base, l.copy_bytes, stream);
      };
    } else {
      const launch_fn launch = find_launcher(contestant, row.operation, row.type);
      if (launch == nullptr)
        fail(format("no launcher for %s %s", name(row.operation), name(row.type)));
      enqueue = [&, launch](std::int64_t call) {
        char* base = set(l, call);
        call_args args;
        args.n = row.n;
        args.in0 = base;
        if (is_forward(row.operation)) {
          args.out = row.in_place ? base : base + l.array_stride;
        } else {
          args.in1 = base + l.array_stride;
          args.out = base + 2 * l.array_stride;
        }
        return launch(args, stream);
      };
    }
    timing_options options = timing_;
    options.rotation_sets = static_cast<std::int64_t>(l.sets);
    const timing t = measure(stream, enqueue, options);
    result r;
    r.us = t.ms_per_call * 1e3;
    r.gbps = gbps(bytes_moved(row.operation, row.type, row.n), t.ms_per_call);
    r.batch = t.batch;
    r.relaxed_capture = t.relaxed_capture;
    return r;
  }

  void report(const sweep_row& row, const layout& l, const result& mc, const result& cub,
              const result& ca) {
    std::string note;
    if (row.seeds) note += row.type == dtype::f64 ? "seeds/2 " : "seeds ";
    if (l.l2_resident) note += "L2-resident ";
    if (mc.relaxed_capture || cub.relaxed_capture || ca.relaxed_capture) note += "relaxed-capture ";
    table_.row({name(row.operation), name(row.type),
                is_forward(row.operation) ? (row.in_place ? "in" : "out") : "-", size_text(row.n),
                format("%.0f", mc.gbps), format("%.0f", cub.gbps), format("%.0f", ca.gbps),
                ratio_text(cub.gbps, mc.gbps), ratio_text(ca.gbps, mc.gbps),
                ratio_text(ca.gbps, cub.gbps), format("%.2f", ca.us), format("%d", ca.batch),
                format("%zu", l.sets), note});
    if (csv_ == nullptr) return;
    const std::pair<const char*, const result*> contestants[] = {
        {"memcpy", &mc}, {"cub", &cub}, {"cuact", &ca}};
    for (const auto& [label, r] : contestants) {
      std::fprintf(csv_, "%s,%s,%s,%zu,%s,%.4f,%.2f,%.4f,%.4f,%d\n", name(row.operation),
                   name(row.type), row.in_place ? "in" : "out", row.n, label, r->us, r->gbps,
                   r->gbps / mc.gbps, r->gbps / cub.gbps, l.l2_resident ? 1 : 0);
    }
    std::fflush(csv_);
  }

  std::vector<sweep_row> rows_;
  std::size_t target_bytes_;
  table table_;
  timing_options timing_;
  stream_handle stream_;
  device_buffer arena_;
  std::FILE* csv_ = nullptr;
};

}  // namespace

int run_sweep(const device_info& device, const options& opts) {
  sweep bench(device, opts);
  return bench.run();
}

}  // namespace bench
