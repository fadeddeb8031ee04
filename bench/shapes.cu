// --shapes: exploration data for the launch policy (include/cuact/detail/policy.cuh). cuact's own
// entry under a forced policy (cuact::scoped_policy: threads per block x vectors per thread x
// grid-stride passes, elementwise kernel) at the seeds' n, out of place, each against memcpy of
// the same bytes; and the policy cuact::select_policy chose, timed through the same entry.
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <cuact/policy.cuh>

#include "common.cuh"
#include "modes.cuh"
#include "ops.cuh"
#include "rows.cuh"

namespace bench {
namespace {

constexpr unsigned block_sizes[] = {128, 256, 512, 1024};
constexpr unsigned vectors_list[] = {1, 2, 4};
constexpr int passes_list[] = {1, 2, 4};

struct target {
  std::string activation;
  op_kind kind;
  dtype type;
};
const target default_targets[] = {{"relu", op_kind::forward, dtype::f32},
                                  {"relu", op_kind::forward, dtype::bf16},
                                  {"selu", op_kind::forward, dtype::f32},
                                  {"selu", op_kind::forward, dtype::bf16},
                                  {"selu", op_kind::backward, dtype::bf16}};

/// --ops "activation:kind:dtype,...": the targets named (an unknown name is reported, not timed).
std::vector<target> parse_targets(const std::string& list) {
  std::vector<target> out;
  std::size_t start = 0;
  while (start < list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    start = end + 1;
    const std::size_t a = item.find(':'), b = item.find(':', a + 1);
    target t{item.substr(0, a), op_kind::forward, dtype::f32};
    const std::string kind = a == std::string::npos ? "forward" : item.substr(a + 1, b - a - 1);
    const std::string type = b == std::string::npos ? "fp32" : item.substr(b + 1);
    bool known_kind = false, known_type = false;
    for (op_kind k : {op_kind::forward, op_kind::backward, op_kind::backward_from_output,
                      op_kind::relu_forward_mask, op_kind::relu_backward_mask}) {
      if (kind == name(k)) t.kind = k, known_kind = true;
    }
    for (dtype d : {dtype::f32, dtype::bf16, dtype::f16, dtype::f64}) {
      if (type == name(d)) t.type = d, known_type = true;
    }
    if (!known_kind || !known_type) {
      std::printf("# --ops: cannot read '%s' (activation:kind:dtype)\n", item.c_str());
      continue;
    }
    out.push_back(t);
  }
  return out;
}

struct best_shape {
  std::string what;
  double ratio = 0;
};

}  // namespace

int run_shapes(const device_info& device, const options& opts) {
  const std::size_t n = seeds_n;
  const int reps = opts.reps > 0 ? opts.reps : 9;
  row_runner runner(n * 4, n, reps);  // its arrays and its memcpy contestant
  const cudaStream_t stream = runner.stream();
  // The memcpy contestant overwrites the arrays: each target times it before filling them.
  void* const in = runner.array(0);
  void* const dy = runner.array(1);
  void* const out = runner.array(2);
  timing_options options;
  options.warmup_calls = 2;
  options.reps = reps;

  print_device(device, "--shapes", stdout);
  std::printf(
      "# n = %zu, out of place; cells: GB/s / memcpy GB/s of the same total bytes (GB/s in "
      "parentheses); median of %d calls after 2 warm-up calls, GPU time (busy_start.cuh)\n",
      n, reps);
  std::printf(
      "# each cell: cuact's entry under cuact::scoped_policy{policy{0, block, vectors, passes}}: "
      "grid = ceil(work items / (threads per block x passes)); work items = "
      "ceil(vectors / vectors per thread); vectors per thread above the kernel's "
      "max_vectors_per_thread are left out\n");

  std::vector<std::pair<std::string, std::string>> summary;
  const std::vector<target> targets =
      opts.ops.empty() ? std::vector<target>(std::begin(default_targets), std::end(default_targets))
                       : parse_targets(opts.ops);
  for (const target& tg : targets) {
    const entry* e = find_entry(table_entries(), tg.activation, tg.kind, tg.type);
    if (e == nullptr) e = find_entry(user_entries(), tg.activation, tg.kind, tg.type);
    if (e == nullptr || !e->direct || !e->shape) {
      std::printf("\n%s %s %s: not built\n", tg.activation.c_str(), name(tg.kind), name(tg.type));
      continue;
    }
    const double bytes = e->bytes_moved(n);
    const double copy = runner.memcpy_gbps(bytes);
    fill_random(in, n, tg.type, fresh_seed(), stream);
    fill_random(dy, n, tg.type, fresh_seed(), stream);
    call_args args;
    args.in0 = in;
    args.in1 = e->element_inputs == 2 ? dy : nullptr;
    args.out = out;
    args.n = n;

    const shape_report model = e->shape(args);
    const timing shipped = measure(
        stream, [&](std::int64_t) { return e->cuact(args, stream); }, options);
    const double shipped_ratio = gbps(bytes, shipped.ms_per_call) / copy;
    std::printf(
        "\n%s %s: memcpy %.0f GB/s; model: %u blocks x %u threads, %u vectors/thread (max %u), "
        "%u pass(es), "
        "heavy %s, %d registers, %d blocks/SM resident -> %.3f x memcpy\n",
        e->label().c_str(), name(e->type), copy, model.blocks, model.threads_per_block,
        model.vectors_per_thread, model.max_vectors_per_thread, model.passes,
        model.tabulated    ? "table"
        : model.bulk_tiles ? (model.heavy ? "yes, bulk tiles" : "no, bulk tiles")
        : model.heavy      ? "yes"
                           : "no",
        model.registers, model.resident_blocks_per_sm, shipped_ratio);

    std::vector<std::string> titles{"vpt x passes"};
    for (const unsigned block : block_sizes) titles.push_back(format("block %u", block));
    std::vector<column> columns{{titles[0].c_str(), 12, true}};
    for (std::size_t k = 1; k < titles.size(); ++k) columns.push_back({titles[k].c_str(), 14});
    const table grid_table(stdout, columns);
    grid_table.header();
    best_shape best;
    for (const unsigned vectors : vectors_list) {
      if (vectors > model.max_vectors_per_thread) continue;
      for (const int passes : passes_list) {
        std::vector<std::string> cells{format("%u x %d", vectors, passes)};
        for (const unsigned block : block_sizes) {
          const cuact::scoped_policy forced{
              cuact::policy{0, block, vectors, static_cast<unsigned>(passes), model.heavy, 0,
                            cuact::algorithm::elementwise}};
          const timing t = measure(
              stream, [&](std::int64_t) { return e->cuact(args, stream); }, options);
          const double rate = gbps(bytes, t.ms_per_call);
          cells.push_back(format("%.3f (%4.0f)", rate / copy, rate));
          if (rate / copy > best.ratio) {
            best.ratio = rate / copy;
            best.what = format("%u threads, %u vectors/thread, %d pass%s", block, vectors, passes,
                               passes == 1 ? "" : "es");
          }
        }
        grid_table.row(cells);
      }
    }
    summary.emplace_back(
        e->label() + " " + name(e->type),
        format("best %.3f (%s); model %.3f (%u threads, %u vectors/thread, %u pass(es)) = %.3f "
               "of best",
               best.ratio, best.what.c_str(), shipped_ratio, model.threads_per_block,
               model.vectors_per_thread, model.passes,
               best.ratio > 0 ? shipped_ratio / best.ratio : 0.0));
  }
  std::printf("\n# best shape per op (x memcpy):\n");
  for (const auto& [what, line] : summary) std::printf("# %-22s %s\n", what.c_str(), line.c_str());
  return 0;
}

}  // namespace bench
