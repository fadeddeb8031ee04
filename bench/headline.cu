// --headline: the seeds' shape (4096 x 393216 elements), every operation cuact offers, against
// the copy ceiling (cudaMemcpyAsync) and cub::DeviceTransform with the same functor.
#include <cstdint>
#include <cstdio>
#include <cuact/backward.cuh>
#include <map>
#include <string>
#include <tuple>

#include "common.cuh"
#include "modes.cuh"
#include "ops.cuh"

namespace bench {
namespace {

struct row_key {
  op operation;
  dtype type;
  bool in_place;
  impl implementation;
  bool operator<(const row_key& o) const {
    return std::tie(operation, type, in_place, implementation) <
           std::tie(o.operation, o.type, o.in_place, o.implementation);
  }
};

class headline {
 public:
  headline(const device_info& device, const options& opts)
      : n_(seeds_n),
        table_(stdout, {{"op", 25, true},
                        {"dtype", 5, true},
                        {"place", 5, true},
                        {"impl", 6, true},
                        {"GB/s", 8},
                        {"ms", 8},
                        {"x memcpy", 8},
                        {"x cub", 6},
                        {"spread %", 8}}) {
    timing_.reps = opts.reps > 0 ? opts.reps : 15;
    timing_.warmup_calls = 2;
    const std::size_t array_bytes = n_ * sizeof(float);
    const std::size_t need = 4 * array_bytes + cuact::relu_mask_words(n_) * 4;
    if (need > usable_device_memory()) {
      fail(format("--headline needs %.1f GB of device memory; %.1f GB usable", need / 1e9,
                  usable_device_memory() / 1e9));
    }
    for (device_buffer& b : arrays_) b = device_buffer(array_bytes);
    mask_ = device_buffer(cuact::relu_mask_words(n_) * 4);
    print_device(device, "--headline", stdout);
    std::printf(
        "# n = 4096 x 393216 = %zu elements; median of %d timed runs after %d warm-up "
        "calls, CUDA events around each call\n",
        n_, timing_.reps, timing_.warmup_calls);
    std::printf(
        "# GB/s = (bytes read + bytes written) / time; x memcpy = GB/s over the same "
        "dtype's memcpy row; x cub = time(cub) / time(cuact) for the same op\n");
    std::printf(
        "# in-place rows re-run on one buffer: relu is idempotent; selu drifts (x > 0 "
        "grows 5%% per call), values stay finite over these few calls\n\n");
    table_.header();
  }

  int run() {
    for (const dtype t : {dtype::f32, dtype::bf16}) {
      memcpy_row(t);
      for (const op act : {op::relu, op::selu}) activation_rows(t, act);
      if (t == dtype::f32) mask_rows();
      table_.rule();
    }
    summary();
    return failed_checks_ == 0 ? 0 : 2;
  }

 private:
  void* array(int i) const { return arrays_[i].get(); }

  void fill(int i, dtype t) { fill_random(array(i), n_, t, fresh_seed(), stream_.get()); }
  void poison_array(int i, dtype t) { poison(array(i), n_, t, stream_.get()); }

  /// Times one row, prints it and remembers its time.
  void row(op o, dtype t, bool in_place, impl i, const call_args& args) {
    const launch_fn launch = find_launcher(i, o, t);
    if (launch == nullptr) fail(format("no launcher for %s %s %s", name(i), name(o), name(t)));
    const cudaStream_t stream = stream_.get();
    const timing result = measure(
        stream, [&](std::int64_t) { return launch(args, stream); }, timing_);
    print(o, t, in_place, i, bytes_moved(o, t, n_), result);
  }

  void memcpy_row(dtype t) {
    fill(0, t);
    const std::size_t bytes = n_ * size_of(t);
    const cudaStream_t stream = stream_.get();
    const timing result = measure(
        stream, [&](std::int64_t) { return memcpy_call(array(1), array(0), bytes, stream); },
        timing_);
    print(op::relu, t, false, impl::memcpy, 2.0 * bytes, result);
  }

  void activation_rows(dtype t, op act) {
    const bool relu = act == op::relu;
    const op backward = relu ? op::relu_backward : op::selu_backward;
    const op from_output = relu ? op::relu_backward_from_output : op::selu_backward_from_output;
    // Arrays: 0 = x, 1 = CUB's output, 2 = cuact's output, 3 = in-place data, then dy.
    fill(0, t);
    poison_array(1, t);
    poison_array(2, t);
    row(act, t, false, impl::cub, {array(0), nullptr, array(1), nullptr, n_});
    row(act, t, false, impl::cuact, {array(0), nullptr, array(2), nullptr, n_});
    check(format("%s %s out of place: cuact vs cub", name(act), name(t)), 1, 2, t, same_math(t));

    for (const impl i : {impl::cub, impl::cuact}) {
      fill(3, t);
      row(act, t, true, i, {array(3), nullptr, array(3), nullptr, n_});
    }

    fill(3, t);  // dy
    poison_array(1, t);
    poison_array(2, t);
    row(backward, t, false, impl::cub, {array(0), array(3), array(1), nullptr, n_});
    row(backward, t, false, impl::cuact, {array(0), array(3), array(2), nullptr, n_});
    check(format("%s %s: cuact vs cub", name(backward), name(t)), 1, 2, t, same_math(t));

    if (find_launcher(impl::cuact, from_output, t) != nullptr) {
      // y = act(x) into array 1; x is no longer needed, so dx goes to array 0.
      const call_args forward{array(0), nullptr, array(1), nullptr, n_};
      BENCH_CHECK(find_launcher(impl::cuact, act, t)(forward, stream_.get()));
      poison_array(0, t);
      row(from_output, t, false, impl::cuact, {array(1), array(3), array(0), nullptr, n_});
      // From y the derivative is computed from a rounded y: equal for relu, close for selu.
      check(format("%s %s: from y vs from x", name(from_output), name(t)), 0, 2, t,
            relu ? 0.0 : (t == dtype::f32 ? 1e-4 : 0.25));
    }
  }

  void mask_rows() {
    const dtype t = dtype::f32;
    fill(0, t);  // x; array 3 still holds dy
    poison_array(2, t);
    row(op::relu_forward_mask, t, false, impl::cuact,
        {array(0), nullptr, array(1), mask_.get(), n_});
    row(op::relu_backward_mask, t, false, impl::cuact,
        {mask_.get(), array(3), array(2), nullptr, n_});
    const call_args reference{array(0), array(3), array(1), nullptr, n_};
    BENCH_CHECK(find_launcher(impl::cuact, op::relu_backward, t)(reference, stream_.get()));
    check("relu_backward_mask fp32 vs relu_backward", 1, 2, t, 0.0);
  }

  void print(op o, dtype t, bool in_place, impl i, double bytes, const timing& result) {
    const double ms = result.ms_per_call;
    const double rate = gbps(bytes, ms);
    times_[{o, t, in_place, i}] = ms;
    if (i == impl::memcpy) memcpy_gbps_[t] = rate;
    std::string versus_cub = "-";
    if (i == impl::cuact) {
      // from-output backward against CUB's backward from x: the same bytes and result.
      const op cub_op = o == op::relu_backward_from_output   ? op::relu_backward
                        : o == op::selu_backward_from_output ? op::selu_backward
                                                             : o;
      const auto cub = times_.find({cub_op, t, in_place, impl::cub});
      if (cub != times_.end()) versus_cub = format("%.3f", cub->second / ms);
    }
    const double spread = 100.0 * (result.max_ms_per_call - result.min_ms_per_call) / ms;
    table_.row({i == impl::memcpy ? "cudaMemcpyAsync D2D" : name(o), name(t),
                i == impl::memcpy ? "-" : (in_place ? "in" : "out"), name(i), format("%.1f", rate),
                format("%.3f", ms), ratio_text(rate, memcpy_gbps_[t]), versus_cub,
                format("%.1f", spread)});
  }

  /// Tolerance between two kernels computing the same formula: they should agree bit for bit,
  /// but allow one rounding step (|values| < 16) in case the compiler contracts differently.
  static double same_math(dtype t) { return t == dtype::f32 ? 1e-5 : 0.07; }

  /// Compares arrays a and b (n elements of t); a difference above `tolerance` fails the run.
  void check(const std::string& what, int a, int b, dtype t, double tolerance) {
    const double difference = max_abs_difference(array(a), array(b), n_, t, stream_.get());
    const bool ok = difference <= tolerance;
    if (!ok) ++failed_checks_;
    checks_ += format("# check %-45s max |diff| = %-10.3g (tolerance %g) %s\n", what.c_str(),
                      difference, tolerance, ok ? "ok" : "MISMATCH");
  }

  void summary() {
    const double mask = times_[{op::relu_backward_mask, dtype::f32, false, impl::cuact}];
    const double plain = times_[{op::relu_backward, dtype::f32, false, impl::cuact}];
    std::printf(
        "\n# relu_backward_mask vs relu_backward, fp32 cuact: time ratio %.3f (%.2fx "
        "faster; bytes ratio %.3f)\n",
        mask / plain, plain / mask,
        bytes_moved(op::relu_backward_mask, dtype::f32, n_) /
            bytes_moved(op::relu_backward, dtype::f32, n_));
    std::printf("%s", checks_.c_str());
    if (failed_checks_ > 0) std::printf("# %d CHECK(S) FAILED\n", failed_checks_);
  }

  std::size_t n_;
  table table_;
  timing_options timing_;
  stream_handle stream_;
  device_buffer arrays_[4];
  device_buffer mask_;
  std::map<row_key, double> times_;
  std::map<dtype, double> memcpy_gbps_;
  std::string checks_;
  int failed_checks_ = 0;
};

}  // namespace

int run_headline(const device_info& device, const options& opts) {
  headline bench(device, opts);
  return bench.run();
}

}  // namespace bench
