// CPU fuzz of the per-thread bodies the GPU runs (elementwise_thread, relu_mask_forward_thread),
// over host memory with a recording Access (common/access_log.hpp): seeded random op x dtype x
// vector width x n x each pointer's misalignment x in/out of place x grid shape. Each case checks
// every access inside its array and aligned to its vector size, every output byte written once,
// every input byte read once (and, in place, read before it is written), no byte touched by two
// threads, the guards around every array untouched, and every value against the reference.
//
// CUACT_FUZZ_SEED (default: from the clock) and CUACT_FUZZ_CASES (default 2000) steer it; the seed
// is printed first, so `CUACT_FUZZ_SEED=<seed> ./cpu_fuzz` replays a failure.
#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>

#include "access_log.hpp"
#include "gpu_support.hpp"

namespace {
using namespace cuact_test;

/// A host array at `offset` elements past a 256-byte boundary with 256 guard bytes on both sides,
/// all filled with the sentinel.
template <class T>
class guarded_host_array {
 public:
  guarded_host_array(std::size_t n, std::size_t offset)
      : n_(n),
        offset_bytes_(guard + offset * sizeof(T)),
        bytes_((offset_bytes_ + n * sizeof(T) + guard + 255) / 256 * 256),
        storage_(static_cast<unsigned char*>(std::aligned_alloc(256, bytes_)), &std::free) {
    std::memset(storage_.get(), sentinel, bytes_);
  }
  T* data() const { return reinterpret_cast<T*>(storage_.get() + offset_bytes_); }
  bool guards_intact() const {
    const unsigned char* p = storage_.get();
    for (std::size_t b = 0; b < offset_bytes_; ++b) {
      if (p[b] != sentinel) return false;
    }
    for (std::size_t b = offset_bytes_ + n_ * sizeof(T); b < bytes_; ++b) {
      if (p[b] != sentinel) return false;
    }
    return true;
  }

 private:
  static constexpr std::size_t guard = 256;
  static constexpr unsigned char sentinel = 0xA5;
  std::size_t n_, offset_bytes_, bytes_;
  std::unique_ptr<unsigned char, void (*)(void*)> storage_;
};

struct grid_shape {
  std::size_t blocks, threads;
};

/// A random grid for `work` items: threads per block from a list; one block, a few, exactly
/// enough, more than enough, or a random count; never more than 4 * work + 300 threads in all.
grid_shape random_grid(std::mt19937_64& rng, std::size_t work) {
  static const std::size_t per_block[] = {1, 2, 3, 32, 33, 64, 128, 256};
  const std::size_t threads = per_block[rng() % 8];
  const std::size_t enough = std::max<std::size_t>(1, (work + threads - 1) / threads);
  std::size_t blocks;
  switch (rng() % 5) {
    case 0:
      blocks = 1;
      break;
    case 1:
      blocks = 1 + rng() % 8;
      break;
    case 2:
      blocks = enough;
      break;
    case 3:
      blocks = 2 * enough + 1;
      break;
    default:
      blocks = 1 + rng() % enough;
      break;
  }
  blocks = std::min(blocks, std::max<std::size_t>(1, (4 * work + 300) / threads));
  return {blocks, threads};
}

struct fuzz_context {
  std::mt19937_64& rng;
  tally& total;
  std::string case_text;  // the current case, for failure messages
};

void report(fuzz_context& ctx, std::size_t n, const std::string& problems, std::size_t bad) {
  ++ctx.total.cases;
  ctx.total.elements += n;
  ctx.total.bad_elements += bad;
  if (problems.empty()) return;
  ++ctx.total.failed_cases;
  const std::string& what = ctx.case_text;
  CAPTURE(what);
  FAIL_CHECK(problems);
}

template <class T, int V, int Inputs, class Op>
void run_elementwise(fuzz_context& ctx, op_id op, const Op& functor, std::size_t n,
                     const std::size_t (&offset)[3], int in_place) {
  constexpr int inputs = Inputs;
  std::mt19937_64& rng = ctx.rng;
  const std::vector<T> a = random_values<T>(n, rng), b = random_values<T>(n, rng);
  std::vector<guarded_host_array<T>> arrays;
  for (int k = 0; k < inputs; ++k) arrays.emplace_back(n, offset[k]);
  if (in_place < 0) arrays.emplace_back(n, offset[2]);
  T* const in0 = arrays[0].data();
  T* const in1 = inputs > 1 ? arrays[1].data() : nullptr;
  T* const out = in_place >= 0 ? arrays[in_place].data() : arrays.back().data();
  std::copy(a.begin(), a.end(), in0);
  if (in1) std::copy(b.begin(), b.end(), in1);
  std::vector<double> reference(n);
  for (std::size_t i = 0; i < n; ++i) {
    reference[i] = op_reference<T>(op, to_double(a[i]), to_double(b[i]));
    if (in_place < 0) out[i] = poison_for(round_to<T>(reference[i]));
  }
  const grid_shape grid = random_grid(rng, n / V + 2 * V);
  ctx.case_text += " grid=" + std::to_string(grid.blocks) + "x" + std::to_string(grid.threads);

  access_log log;
  std::vector<std::size_t> region;
  for (int k = 0; k < inputs; ++k) region.push_back(log.add_region(arrays[k].data(), n * sizeof(T)));
  const std::size_t out_region = in_place >= 0 ? region[in_place] : log.add_region(out, n * sizeof(T));
  std::string problems;
  const auto run = [&](const auto& params) {
    if (params.head + params.vectors * V + params.tail != n) problems += "head + vectors + tail != n; ";
    simulate_grid(log, grid.blocks, grid.threads, [&](std::size_t t, std::size_t threads) {
      cuact::elementwise_thread(params, t, threads, recording_access{&log});
    });
  };
  if constexpr (inputs == 1) {
    run(cuact::make_elementwise_params<V>(functor, out, n, static_cast<const T*>(in0)));
  } else {
    run(cuact::make_elementwise_params<V>(functor, out, n, static_cast<const T*>(in0),
                                          static_cast<const T*>(in1)));
  }
  for (const std::string& e : log.errors()) problems += e + "; ";
  for (int k = 0; k < inputs; ++k) {
    if (!log.each_byte(region[k], 1, k == in_place ? 1 : 0))
      problems += "input " + std::to_string(k) + " not read exactly once; ";
  }
  if (in_place < 0 && !log.each_byte(out_region, 0, 1)) problems += "output not written exactly once; ";
  for (std::size_t k = 0; k < arrays.size(); ++k) {
    if (!arrays[k].guards_intact()) problems += "bytes around array " + std::to_string(k) + " changed; ";
  }
  for (int k = 0; k < inputs; ++k) {
    const std::vector<T>& original = k == 0 ? a : b;
    if (k != in_place && std::memcmp(arrays[k].data(), original.data(), n * sizeof(T)) != 0) {
      problems += "input " + std::to_string(k) + " modified; ";
    }
  }
  const int max_ulp = op_max_ulp<T>(op);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (matches_strictly(out[i], reference[i], max_ulp, op_slack<T>(op, to_double(b[i])))) continue;
    if (bad++ < 4) {
      problems += "element " + std::to_string(i) + ": a=" + describe(a[i]) +
                  (inputs > 1 ? " b=" + describe(b[i]) : "") + " got " + describe(out[i]) + " reference " +
                  std::to_string(reference[i]) + "; ";
    }
  }
  report(ctx, n, problems, bad);
}

template <class T, int V>
void run_mask(fuzz_context& ctx, std::size_t n, const std::size_t (&offset)[4], std::size_t mask_word_offset,
              bool forward_in_place, bool backward_in_place) {
  std::mt19937_64& rng = ctx.rng;
  const std::vector<T> x = random_values<T>(n, rng), dy = random_values<T>(n, rng);
  const std::size_t words = cuact::relu_mask_words(n);
  guarded_host_array<T> x_array(n, offset[0]), out_array(n, offset[1]), dy_array(n, offset[2]),
      dx_array(n, offset[3]);
  // the mask: 4-byte words at mask_word_offset words past a 256-byte boundary
  guarded_host_array<std::uint32_t> mask_array(words, mask_word_offset);
  T* const in = x_array.data();
  T* const out = forward_in_place ? in : out_array.data();
  T* const g = dy_array.data();
  T* const dx = backward_in_place ? g : dx_array.data();
  std::uint32_t* const mask = mask_array.data();
  std::copy(x.begin(), x.end(), in);
  std::copy(dy.begin(), dy.end(), g);
  for (std::size_t i = 0; i < n; ++i) {
    if (!forward_in_place) out[i] = poison_for(round_to<T>(relu_ref(to_double(x[i]))));
    if (!backward_in_place) dx[i] = poison_for(round_to<T>(relu_grad_ref(to_double(x[i]), to_double(dy[i]))));
  }
  for (std::size_t w = 0; w < words; ++w) mask[w] = 0xA5A5A5A5u;
  std::string problems;

  const grid_shape forward_grid = random_grid(rng, words);
  access_log forward_log;
  const std::size_t x_region = forward_log.add_region(in, n * sizeof(T));
  const std::size_t out_region = forward_in_place ? x_region : forward_log.add_region(out, n * sizeof(T));
  const std::size_t mask_region = forward_log.add_region(mask, words * sizeof(std::uint32_t));
  const auto forward_params = cuact::detail::make_relu_mask_params(static_cast<const T*>(in), out, mask, n);
  simulate_grid(
      forward_log, forward_grid.blocks, forward_grid.threads, [&](std::size_t t, std::size_t threads) {
        cuact::detail::relu_mask_forward_thread(forward_params, t, threads, recording_access{&forward_log});
      });
  for (const std::string& e : forward_log.errors()) problems += "forward: " + e + "; ";
  if (!forward_log.each_byte(x_region, 1, forward_in_place ? 1 : 0))
    problems += "forward: x not read exactly once; ";
  if (!forward_in_place && !forward_log.each_byte(out_region, 0, 1))
    problems += "forward: out not written exactly once; ";
  if (!forward_log.each_byte(mask_region, 0, 1)) problems += "forward: mask not written exactly once; ";

  const grid_shape backward_grid = random_grid(rng, n / V + 2 * V);
  access_log backward_log;
  const std::size_t dy_region = backward_log.add_region(g, n * sizeof(T));
  const std::size_t dx_region = backward_in_place ? dy_region : backward_log.add_region(dx, n * sizeof(T));
  const auto backward_params = cuact::make_elementwise_params<V>(cuact::detail::relu_mask_gradient{mask}, dx,
                                                                 n, static_cast<const T*>(g));
  simulate_grid(backward_log, backward_grid.blocks, backward_grid.threads,
                [&](std::size_t t, std::size_t threads) {
                  cuact::elementwise_thread(backward_params, t, threads, recording_access{&backward_log});
                });
  for (const std::string& e : backward_log.errors()) problems += "backward: " + e + "; ";
  if (!backward_log.each_byte(dy_region, 1, backward_in_place ? 1 : 0))
    problems += "backward: dy not read exactly once; ";
  if (!backward_in_place && !backward_log.each_byte(dx_region, 0, 1))
    problems += "backward: dx not written exactly once; ";

  if (!x_array.guards_intact() || !out_array.guards_intact() || !dy_array.guards_intact() ||
      !dx_array.guards_intact() || !mask_array.guards_intact()) {
    problems += "bytes around an array changed; ";
  }
  std::size_t bad = 0;
  for (std::size_t w = 0; w < words; ++w) {
    std::uint32_t expected = 0;
    for (std::size_t b = 0; b < 32 && w * 32 + b < n; ++b) {
      if (to_double(x[w * 32 + b]) > 0) expected |= std::uint32_t(1) << b;
    }
    if (mask[w] != expected && bad++ < 4) problems += "mask word " + std::to_string(w) + " wrong; ";
  }
  for (std::size_t i = 0; i < n; ++i) {
    const double xi = to_double(x[i]), dyi = to_double(dy[i]);
    if (!matches_strictly(out[i], relu_ref(xi), 0) && bad++ < 4)
      problems += "out " + std::to_string(i) + " wrong; ";
    if (!matches_strictly(dx[i], relu_grad_ref(xi, dyi), 0) && bad++ < 4) {
      problems += "dx " + std::to_string(i) + ": x=" + describe(x[i]) + " dy=" + describe(dy[i]) + " got " +
                  describe(dx[i]) + "; ";
    }
  }
  char grids[96];
  std::snprintf(grids, sizeof grids, " grids=%zux%zu,%zux%zu", forward_grid.blocks, forward_grid.threads,
                backward_grid.blocks, backward_grid.threads);
  ctx.case_text += grids;
  report(ctx, n, problems, bad);
}

template <class T, int W>
void run_case_with_width(fuzz_context& ctx, int kind) {
  constexpr int V = resolved_width<T>(W);
  std::mt19937_64& rng = ctx.rng;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double u = unit(rng);
  const std::size_t n =
      u < 0.5    ? rng() % 65
      : u < 0.85 ? 65 + rng() % 4936
                 : static_cast<std::size_t>(std::exp(std::log(5000.0) + unit(rng) * std::log(20.0)));
  const std::size_t base = rng() % 16;
  const bool same = unit(rng) < 0.5;
  const auto offset = [&] { return same ? base : static_cast<std::size_t>(rng() % 16); };
  char text[160];
  if (kind == static_cast<int>(op_id::count)) {
    const std::size_t offsets[4] = {offset(), offset(), offset(), offset()};
    const std::size_t mask_word_offset = rng() % 4;
    const bool forward_in_place = unit(rng) < 0.3, backward_in_place = unit(rng) < 0.3;
    std::snprintf(
        text, sizeof text,
        "%s mask round trip width=%d n=%zu offsets(x,out,dy,dx)=(%zu,%zu,%zu,%zu) mask_word_offset=%zu "
        "in_place=(%d,%d)",
        type_name<T>().c_str(), W, n, offsets[0], offsets[1], offsets[2], offsets[3], mask_word_offset,
        forward_in_place, backward_in_place);
    ctx.case_text = text;
    run_mask<T, V>(ctx, n, offsets, mask_word_offset, forward_in_place, backward_in_place);
    return;
  }
  const op_id op = static_cast<op_id>(kind);
  const std::size_t offsets[3] = {offset(), offset(), offset()};
  const int in_place = unit(rng) < 0.3 ? op_inputs(op) - 1 : -1;
  std::snprintf(text, sizeof text, "%s %s width=%d n=%zu offsets(in0,in1,out)=(%zu,%zu,%zu) in_place=%d",
                type_name<T>().c_str(), op_name(op), W, n, offsets[0], offsets[1], offsets[2], in_place);
  ctx.case_text = text;
  switch (op) {
    case op_id::relu:
      return run_elementwise<T, V, 1>(ctx, op, cuact::relu{}, n, offsets, in_place);
    case op_id::selu:
      return run_elementwise<T, V, 1>(ctx, op, cuact::selu{}, n, offsets, in_place);
    case op_id::leaky:
      return run_elementwise<T, V, 1>(ctx, op, leaky_relu{}, n, offsets, in_place);
    case op_id::relu_grad:
      return run_elementwise<T, V, 2>(ctx, op, cuact::detail::gradient_from_input<cuact::relu>{}, n, offsets,
                                      in_place);
    case op_id::selu_grad:
      return run_elementwise<T, V, 2>(ctx, op, cuact::detail::gradient_from_input<cuact::selu>{}, n, offsets,
                                      in_place);
    case op_id::relu_grad_out:
      return run_elementwise<T, V, 2>(ctx, op, cuact::detail::gradient_from_output<cuact::relu>{}, n, offsets,
                                      in_place);
    case op_id::selu_grad_out:
      return run_elementwise<T, V, 2>(ctx, op, cuact::detail::gradient_from_output<cuact::selu>{}, n, offsets,
                                      in_place);
    default:
      return;
  }
}

template <class T>
void run_case(fuzz_context& ctx) {
  const int kind = static_cast<int>(ctx.rng() % (static_cast<int>(op_id::count) + 1));
  switch (ctx.rng() % (sizeof(T) == 2 ? 5 : sizeof(T) == 4 ? 4 : 3)) {
    case 0:
      return run_case_with_width<T, cuact::auto_width>(ctx, kind);
    case 1:
      return run_case_with_width<T, 1>(ctx, kind);
    case 2:
      return run_case_with_width<T, 2>(ctx, kind);
    case 3:
      if constexpr (sizeof(T) * 4 <= 16) return run_case_with_width<T, 4>(ctx, kind);
      return;
    default:
      if constexpr (sizeof(T) * 8 <= 16) return run_case_with_width<T, 8>(ctx, kind);
      return;
  }
}

}  // namespace

TEST_CASE("cpu fuzz: per-thread bodies over random cases with a recording access", "[cpu][fuzz]") {
  const std::uint64_t clock_seed =
      static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  const std::uint64_t seed = env_u64("CUACT_FUZZ_SEED", mix64(clock_seed));
  const std::size_t cases = env_u64("CUACT_FUZZ_CASES", 2000);
  std::printf("cpu_fuzz: CUACT_FUZZ_SEED=%" PRIu64 " CUACT_FUZZ_CASES=%zu\n", seed, cases);
  std::fflush(stdout);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  tally total;
  fuzz_context ctx{rng, total, {}};
  for (std::size_t i = 0; i < cases; ++i) {
    switch (rng() % 4) {
      case 0:
        run_case<float>(ctx);
        break;
      case 1:
        run_case<double>(ctx);
        break;
      case 2:
        run_case<__half>(ctx);
        break;
      default:
        run_case<__nv_bfloat16>(ctx);
        break;
    }
  }
  std::printf("cpu_fuzz: seed %" PRIu64 ": cases run %zu, elements %zu, mismatches %zu (in %zu cases)\n",
              seed, total.cases, total.elements, total.bad_elements, total.failed_cases);
  CHECK(total.cases == cases);
  CHECK(total.failed_cases == 0);
}

// ---- the test support itself ------------------------------------------------------------------

TEST_CASE("gpu_support: the strict matcher", "[cpu][support]") {
  using cuact_test::matches_strictly;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  CHECK(matches_strictly(0.0f, 0.0, 0));
  CHECK_FALSE(matches_strictly(-0.0f, 0.0, 0));  // sign of zero, exact ops
  CHECK_FALSE(matches_strictly(0.0f, -0.0, 0));
  CHECK(matches_strictly(-0.0f, 0.0, 4));  // ulp tolerance: +-0 are 0 ulp apart
  CHECK(matches_strictly(std::nanf(""), nan, 0));
  CHECK_FALSE(matches_strictly(1.0f, nan, 4));
  CHECK_FALSE(matches_strictly(std::nanf(""), 1.0, 4));
  CHECK(matches_strictly(std::numeric_limits<float>::infinity(), inf, 4));
  CHECK_FALSE(matches_strictly(std::numeric_limits<float>::max(), inf, 4));
  CHECK_FALSE(matches_strictly(1e30f, inf, 4, inf));  // an infinite slack admits no finite value for inf
  CHECK(matches_strictly(std::nextafter(1.0f, 2.0f), 1.0, 1));
  CHECK_FALSE(matches_strictly(std::nextafter(1.0f, 2.0f), 1.0, 0));
  CHECK(matches_strictly(0.0f, 1e-44, 0, 2e-44));  // slack
  CHECK(matches_strictly(cuact_test::round_to<__half>(1.0 + 1.0 / 1024), 1.0, 1));
  CHECK_FALSE(matches_strictly(cuact_test::round_to<__half>(1.0 + 2.0 / 1024), 1.0, 1));
}

TEMPLATE_TEST_CASE("gpu_support: hash values cover every class and the precise references hold",
                   "[cpu][support]", float, double, __half, __nv_bfloat16) {
  using namespace cuact_test;
  std::size_t nan = 0, inf = 0, zero = 0, denormal = 0, big = 0, ordinary = 0;
  for (std::uint64_t i = 0; i < (1u << 16); ++i) {
    const TestType v = hash_value<TestType>(42, i);
    REQUIRE(bits_of(v) == hash_bits<TestType>(42, i));
    const double d = to_double(v);
    if (std::isnan(d))
      ++nan;
    else if (std::isinf(d))
      ++inf;
    else if (d == 0)
      ++zero;
    else if (std::fabs(d) < std::ldexp(1.0, 2 - (1 << (exponent_bits<TestType>() - 1))))
      ++denormal;
    else if (std::fabs(d) >= 64)
      ++big;
    else
      ++ordinary;
  }
  CHECK(nan > 0);
  CHECK(inf > 0);
  CHECK(zero > 0);
  CHECK(denormal > 0);
  CHECK(big > 0);
  CHECK(ordinary > 60000);
  CHECK(hash_bits<TestType>(1, 5) != hash_bits<TestType>(2, 5));

  // the long double references agree with test_support's float64 ones: to an ulp for float and
  // 16-bit types; for double within the float64 reference's own error (a few ulp)
  const int tolerance = sizeof(TestType) == 8 ? 4 : 1;
  std::mt19937_64 rng(3);
  const std::vector<TestType> xs = random_values<TestType>(4096, rng),
                              dys = random_values<TestType>(4096, rng);
  std::size_t disagree = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = to_double(xs[i]), dy = to_double(dys[i]);
    if (!matches_strictly(round_to<TestType>(precise::selu(x)), selu_ref(x), tolerance)) ++disagree;
    if (!matches_strictly(round_to<TestType>(precise::selu_grad<float>(x, dy)), selu_grad_ref<float>(x, dy),
                          tolerance, underflow_slack<float>(dy))) {
      ++disagree;
    }
  }
  CHECK(disagree == 0);
}

TEST_CASE("gpu_support: the from-output reference where y + scale * alpha cancels", "[cpu][support]") {
  using namespace cuact_test;
  // y = -scale_alpha_hi (the double forward for x < -38): y + scale * alpha = scale_alpha_lo exactly
  CHECK(precise::selu_grad_from_output(-precise::sa_hi, 1.0) == precise::sa_lo);
  CHECK(precise::selu_grad_from_output(-precise::sa_hi, -4.0) == -4 * precise::sa_lo);
  CHECK(precise::selu_grad_from_output(-1.0, 1.0) == static_cast<double>(precise::scale_alpha() - 1));
}
