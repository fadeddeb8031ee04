// --sweep: GB/s against n for the core rows (relu, selu): forward fp32 / bf16 / fp16 / fp64 and
// backward fp32 / bf16, with memcpy, CUB and cuact timed in the same process for each row.
//
// Every size runs in a fresh child process (this executable with --sweep-one N): CCCL's
// cub::DeviceTransform caches its tile configuration per instantiation on its first call
// (dispatch_transform.cuh, `static auto cached_config`), so in one process every size after the
// first would run with the first size's tiles. In the child, CUB's first call of each
// instantiation is a warm-up call at the row's own n.
//
// Small sizes rotate among buffer sets whose total footprint is 4x the L2, so they measure device
// memory rather than L2.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "common.cuh"
#include "modes.cuh"
#include "ops.cuh"

namespace bench {
namespace {

constexpr std::size_t alignment = 256;
std::size_t pad(std::size_t bytes) { return (bytes + alignment - 1) / alignment * alignment; }

std::vector<std::size_t> sweep_sizes() {
  std::vector<std::size_t> sizes;
  for (int p = 10; p <= 24; p += 2) sizes.push_back(std::size_t{1} << p);
  for (int p = 25; p <= 30; ++p) sizes.push_back(std::size_t{1} << p);
  return sizes;
}

/// The entries the sweep times at n: core forward rows in every dtype (fp64 up to 2^29), core
/// backward rows in fp32 and bf16.
bool in_sweep(const entry& e, std::size_t n) {
  if (!e.core) return false;
  if (e.type == dtype::f64 && n > (std::size_t{1} << 29)) return false;
  if (e.kind == op_kind::forward) return true;
  return e.kind == op_kind::backward && (e.type == dtype::f32 || e.type == dtype::bf16);
}

/// Where a row's buffer sets live in the arena. Set k starts at k * set_stride and holds the
/// entry's inputs then its output, array_stride apart; the memcpy contestant copies copy_bytes
/// from the set's start to pad(copy_bytes) past it.
struct layout {
  int arrays = 0;
  std::size_t array_stride = 0;
  std::size_t copy_bytes = 0;
  std::size_t set_stride = 0;
  std::size_t sets = 0;      ///< 0: does not fit
  std::size_t touched = 0;   ///< distinct bytes one cuact call touches
  bool l2_resident = false;  ///< the rotation could not reach the target footprint
};

layout plan(const entry& e, std::size_t n, std::size_t target_bytes, std::size_t arena_bytes) {
  layout l;
  const std::size_t bytes = n * size_of(e.type);
  l.arrays = e.element_inputs + 1;
  l.array_stride = pad(bytes);
  l.copy_bytes = static_cast<std::size_t>(e.bytes_moved(n) / 2);
  l.set_stride = pad(std::max(l.arrays * l.array_stride, 2 * pad(l.copy_bytes)));
  l.touched = l.arrays * bytes;
  const std::size_t wanted = std::max<std::size_t>(1, (target_bytes + l.touched - 1) / l.touched);
  l.sets = std::min(wanted, arena_bytes / l.set_stride);
  l.l2_resident = l.sets * l.touched < target_bytes;
  return l;
}

/// The sweep's name for an entry, also its CSV `op` column (plot.py): "relu", "relu_backward".
std::string sweep_op(const std::string& activation, const std::string& kind) {
  return kind == name(op_kind::forward) ? activation : activation + "_" + kind;
}

struct contestant_result {
  double us = 0;
  double gbps = 0;
  int batch = 0;
  bool relaxed_capture = false;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// The child: every sweep row at one n, one '@sweep' line each on stdout.

int run_sweep_one(const device_info& device, const options& opts, std::size_t n) {
  const std::size_t target_bytes = 4 * device.l2_bytes;
  std::vector<const entry*> rows;
  std::size_t need = 0;
  for (const entry& e : table_entries()) {
    if (!in_sweep(e, n)) continue;
    if (e.prepare) fail("sweep rows cannot have a prepare step");
    rows.push_back(&e);
    const layout l = plan(e, n, target_bytes, SIZE_MAX);
    need = std::max(need, l.sets * l.set_stride);
  }
  device_buffer arena(std::min(need, usable_device_memory()));
  stream_handle stream_owner;
  const cudaStream_t stream = stream_owner.get();

  timing_options options;
  options.warmup_calls = 2;
  options.reps = opts.reps > 0 ? opts.reps : 11;
  options.min_batch_ms = 1.0;
  options.fresh_graph_per_rep = true;

  for (const entry* e : rows) {
    const layout l = plan(*e, n, target_bytes, arena.bytes());
    if (l.sets == 0) {
      std::fprintf(stderr, "sweep n=%s %s %s: skipped, needs %.1f GB\n", size_text(n).c_str(),
                   e->label().c_str(), name(e->type), l.set_stride / 1e9);
      continue;
    }
    const auto set = [&](std::int64_t call) {
      return arena.as<char>() +
             static_cast<std::size_t>(call % static_cast<std::int64_t>(l.sets)) * l.set_stride;
    };
    options.rotation_sets = static_cast<std::int64_t>(l.sets);
    const auto time_it = [&](const enqueue_fn& enqueue) {
      // Fresh inputs for every contestant.
      fill_random(arena.get(), l.sets * l.set_stride / size_of(e->type), e->type, fresh_seed(),
                  stream);
      const timing t = measure(stream, enqueue, options);
      contestant_result r;
      r.us = t.ms_per_call * 1e3;
      r.gbps = gbps(e->bytes_moved(n), t.ms_per_call);
      r.batch = t.batch;
      r.relaxed_capture = t.relaxed_capture;
      return r;
    };
    const auto launch_with = [&](const launch_fn& launch) -> enqueue_fn {
      return [&, launch](std::int64_t call) {
        char* base = set(call);
        call_args args;
        args.n = n;
        args.in0 = base;
        if (e->element_inputs == 2) args.in1 = base + l.array_stride;
        args.out = base + static_cast<std::size_t>(e->element_inputs) * l.array_stride;
        return launch(args, stream);
      };
    };
    const contestant_result copy = time_it([&](std::int64_t call) {
      char* base = set(call);
      return memcpy_call(base + pad(l.copy_bytes), base, l.copy_bytes, stream);
    });
    const contestant_result cub = time_it(launch_with(e->cub));
    const contestant_result ours = time_it(launch_with(e->cuact));
    const bool relaxed = copy.relaxed_capture || cub.relaxed_capture || ours.relaxed_capture;
    std::printf("@sweep %s %s %s %zu %.4f %.2f %.4f %.2f %.4f %.2f %d %zu %d %d\n",
                e->activation.c_str(), name(e->kind), name(e->type), n, copy.us, copy.gbps, cub.us,
                cub.gbps, ours.us, ours.gbps, ours.batch, l.sets, l.l2_resident ? 1 : 0,
                relaxed ? 1 : 0);
    std::fflush(stdout);
    std::fprintf(stderr, "  n=%-5s %-22s %s  memcpy %6.0f  cub %6.0f  cuact %6.0f GB/s\n",
                 size_text(n).c_str(), e->label().c_str(), name(e->type), copy.gbps, cub.gbps,
                 ours.gbps);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The parent: one child per size, one table, the CSV, the summary.

int run_sweep(const device_info& device, const options& opts) {
  std::FILE* csv = nullptr;
  if (!opts.csv.empty()) {
    csv = std::fopen(opts.csv.c_str(), "w");
    if (csv == nullptr) fail("cannot open " + opts.csv + " for writing");
    std::fprintf(csv,
                 "op,dtype,place,n,contestant,time_us,gbps,ratio_memcpy,ratio_cub,l2_resident\n");
  }
  print_device(device, "--sweep", stdout);
  std::printf(
      "# core rows (relu, selu): forward fp32/bf16/fp16/fp64 (fp64 to 2^29), backward fp32/bf16; "
      "out of place; GB/s = (bytes read + written) / time\n");
  std::printf(
      "# each size runs in a fresh child process (cuact_bench --sweep-one N), so each CUB "
      "instantiation's first call (which fixes its tile configuration) is at that size\n");
  std::printf(
      "# median of %d batches after 2 warm-up calls, each enqueued while the GPU is kept busy (GPU "
      "time); batches of >= 1 ms (CUDA graphs of 'batch' "
      "calls when one call is under 20 us, else direct launches); buffer sets rotate per call, "
      "footprint >= %.0f MB (4x L2); memcpy copies the row's bytes / 2\n\n",
      opts.reps > 0 ? opts.reps : 11, 4 * device.l2_bytes / 1e6);
  const table out(stdout, {{"op", 22, true},
                           {"dtype", 5, true},
                           {"n", 5},
                           {"memcpy", 7},
                           {"cub", 7},
                           {"cuact", 7},
                           {"cub/mc", 6},
                           {"cuact/mc", 8},
                           {"cuact/cub", 9},
                           {"cuact us", 10},
                           {"batch", 5},
                           {"sets", 6},
                           {"note", 4, true}});
  out.header();

  struct minimum {
    double memcpy_ratio = 1e9, cub_ratio = 1e9;
    std::size_t memcpy_n = 0, cub_n = 0;
  };
  std::vector<std::string> order;  // (op dtype) keys in first-seen order
  std::map<std::string, minimum> minimums;
  int failures = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const std::size_t n : sweep_sizes()) {
    std::vector<std::string> arguments{"--sweep-one", std::to_string(n)};
    if (opts.reps > 0) arguments.insert(arguments.end(), {"--reps", std::to_string(opts.reps)});
    int status = 0;
    const std::vector<std::string> lines = run_child(arguments, status);
    if (status != 0) {
      ++failures;
      std::printf("# n = %s: child exited with status %d\n", size_text(n).c_str(), status);
    }
    for (const std::string& line : lines) {
      const std::vector<std::string> w = split_words(line);
      if (w.size() != 15 || w[0] != "sweep") continue;
      const std::string op = sweep_op(w[1], w[2]);
      const std::string& type = w[3];
      const std::size_t row_n = std::strtoull(w[4].c_str(), nullptr, 10);
      const double mc_us = std::atof(w[5].c_str()), mc = std::atof(w[6].c_str());
      const double cub_us = std::atof(w[7].c_str()), cub = std::atof(w[8].c_str());
      const double ca_us = std::atof(w[9].c_str()), ca = std::atof(w[10].c_str());
      const bool l2 = w[13] == "1", relaxed = w[14] == "1";
      std::string note;
      if (l2) note += "L2-resident ";
      if (relaxed) note += "relaxed-capture";
      out.row({op, type, size_text(row_n), format("%.0f", mc), format("%.0f", cub),
               format("%.0f", ca), ratio_text(cub, mc), ratio_text(ca, mc), ratio_text(ca, cub),
               format("%.2f", ca_us), w[11], w[12], note});
      const std::string key = op + " " + type;
      if (minimums.find(key) == minimums.end()) order.push_back(key);
      minimum& m = minimums[key];
      if (row_n >= (std::size_t{1} << 26) && row_n <= (std::size_t{1} << 30)) {
        if (ca / mc < m.memcpy_ratio) {
          m.memcpy_ratio = ca / mc;
          m.memcpy_n = row_n;
        }
        if (ca / cub < m.cub_ratio) {
          m.cub_ratio = ca / cub;
          m.cub_n = row_n;
        }
      }
      if (csv != nullptr) {
        const std::pair<const char*, std::pair<double, double>> contestants[] = {
            {"memcpy", {mc_us, mc}}, {"cub", {cub_us, cub}}, {"cuact", {ca_us, ca}}};
        for (const auto& [label, r] : contestants) {
          std::fprintf(csv, "%s,%s,out,%zu,%s,%.4f,%.2f,%.4f,%.4f,%d\n", op.c_str(), type.c_str(),
                       row_n, label, r.first, r.second, r.second / mc, r.second / cub, l2 ? 1 : 0);
        }
        std::fflush(csv);
      }
    }
  }
  if (csv != nullptr) std::fclose(csv);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf("\n# summary: minimum over n = 2^26 .. 2^30 (target cuact/memcpy >= 0.98)\n");
  int missed = 0;
  for (const std::string& key : order) {
    const minimum& m = minimums[key];
    if (m.memcpy_n == 0) continue;
    const bool met = m.memcpy_ratio >= 0.98;
    if (!met) ++missed;
    std::printf("# %-22s min cuact/memcpy %.3f (n = %s) %-6s  min cuact/cub %.3f (n = %s)\n",
                key.c_str(), m.memcpy_ratio, size_text(m.memcpy_n).c_str(), met ? "met" : "MISSED",
                m.cub_ratio, size_text(m.cub_n).c_str());
  }
  std::printf("# %d of %zu op/dtype pairs below 0.98; sweep done in %.0f s\n", missed, order.size(),
              elapsed);
  return failures == 0 ? 0 : 1;
}

}  // namespace bench
