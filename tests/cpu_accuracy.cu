// The activation family against its references on the host (op_table.hpp, accuracy.hpp): every
// 16-bit input, and for float and double random values over each row's domain plus special values
// and kink neighbours; forward, backward (dy = 1 and random dy) and backward from the output, each
// judged under the row's tolerance, NaN, +-inf and the sign of zero included. The host runs the
// policies' own code with the host fallbacks of the hardware approximations (ex2/lg2/rcp/tanh
// .approx become libm): the device math is gpu_accuracy's subject. Also: centered finite
// differences of every derivative, in double, away from kinks.
#include "catch.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <cuact/activations.cuh>

#include "accuracy.hpp"

using namespace cuact_test;

// Parameters are aggregate-initialized in PyTorch's order, from double literals without narrowing.
static_assert(cuact::elu{0.5}.alpha == 0.5);
static_assert(cuact::softplus{2.0, 10.0}.beta == 2.0 &&
              cuact::softplus{2.0, 10.0}.threshold == 10.0);
static_assert(cuact::softplus{}.beta == 1.0 && cuact::softplus{}.threshold == 20.0);
static_assert(cuact::hardtanh{}.min_val == -1.0 && cuact::hardtanh{}.max_val == 1.0);
static_assert(cuact::leaky_relu{}.negative_slope == 0.01 && cuact::celu{}.alpha == 1.0);
static_assert(cuact::softshrink{}.lambd == 0.5 && cuact::hardshrink{}.lambd == 0.5);
static_assert(cuact::threshold{0.5, 2.0}.threshold == 0.5 &&
              cuact::threshold{0.5, 2.0}.value == 2.0);

namespace {

template <class Op, class A>
Op make_op(const A& act) {
  Op op{};  // the adaptors are aggregates: set the member
  op.act = act;
  return op;
}

/// What the engine does to one element: load -> to_compute -> op -> from_compute -> store.
template <class T, class Op, class... Args>
T through(const Op& op, Args... args) {
  return cuact::detail::from_compute<T>(op(cuact::detail::to_compute(args)...));
}

}  // namespace

TEMPLATE_TEST_CASE("activation family within tolerance of its references (host)", "[cpu][accuracy]",
                   CUACT_TEST_DTYPES) {
  using T = TestType;
  const std::uint64_t seed = Catch::getSeed() + 1100;
  for_each_activation([&](const auto& row) {
    using A = typename std::decay_t<decltype(row)>::activation_type;
    const auto xs = accuracy_inputs<T>(row, 100000, seed);
    const auto dys = accuracy_dys<T>(xs.size(), seed + 1);
    const T one = static_cast<T>(1.0f);
    row_results<T> got;
    got.y.resize(xs.size());
    const auto forward = make_op<cuact::forward_op<A, T>>(row.act);
    for (std::size_t i = 0; i < xs.size(); ++i) got.y[i] = through<T>(forward, xs[i]);
    if constexpr (cuact::has_derivative_v<A>) {
      const auto backward = make_op<cuact::gradient_op<A, T>>(row.act);
      got.dx_one.resize(xs.size());
      got.dx.resize(xs.size());
      for (std::size_t i = 0; i < xs.size(); ++i) {
        got.dx_one[i] = through<T>(backward, xs[i], one);
        got.dx[i] = through<T>(backward, xs[i], dys[i]);
      }
    }
    if constexpr (cuact::has_derivative_from_output_v<A>) {
      const auto backward = make_op<cuact::gradient_from_output_op<A, T>>(row.act);
      got.dx_from_y_one.resize(xs.size());
      got.dx_from_y.resize(xs.size());
      for (std::size_t i = 0; i < xs.size(); ++i) {
        got.dx_from_y_one[i] = through<T>(backward, got.y[i], one);
        got.dx_from_y[i] = through<T>(backward, got.y[i], dys[i]);
      }
    }
    const auto tallies = judge_row(row, xs, dys, got);
    print_tallies<T>("cpu", row.name, tallies);
    for (const auto& p : tallies) {
      INFO(type_name<T>() << " " << row.name << " " << p.what << ": "
                          << (p.first_failures.empty() ? "" : p.first_failures.front()));
      CHECK(p.failures == 0);
    }
  });
}

TEST_CASE("derivatives agree with centered finite differences (double)", "[cpu][accuracy]") {
  // h = 1e-5 max(1, |x|): truncation h^2 |f'''| / 6 and rounding 2^-53 |f| / h both stay far below
  // the 1e-6 (1 + |f'|) bound; inputs within 1e-3 max(1, |kink|) of a kink are skipped.
  std::uint64_t state = Catch::getSeed() + 1200;
  const auto unit = [&state] {
    state = mix64(state + 0x9e3779b97f4a7c15ull);
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  };
  for_each_activation([&](const auto& row) {
    using A = typename std::decay_t<decltype(row)>::activation_type;
    if constexpr (cuact::has_derivative_v<A>) {
      auto op = cuact::gradient_op<A, double>{};
      op.act = row.act;
      std::size_t failures = 0;
      for (int i = 0; i < 20000; ++i) {
        const double x = row.domain_low + (row.domain_high - row.domain_low) * unit();
        bool near_kink = false;
        for (int k = 0; k < row.kink.count; ++k) {
          near_kink |=
              std::fabs(x - row.kink.at[k]) < 1e-3 * std::max(1.0, std::fabs(row.kink.at[k]));
        }
        // softplus switches branches at x beta = threshold: its kink; below 1e-300 nothing to see
        if (near_kink) continue;
        const double h = 1e-5 * std::max(1.0, std::fabs(x));
        const double fd = static_cast<double>((row.forward(x + h) - row.forward(x - h)) / (2 * h));
        const double reference = static_cast<double>(row.derivative(x));
        const double policy = op(x, 1.0);
        const double bound = 1e-6 * (1 + std::fabs(fd));
        if ((std::fabs(fd - reference) > bound || std::fabs(fd - policy) > bound) &&
            failures++ < 3) {
          INFO(row.name << ": x = " << x << ", finite difference " << fd
                        << ", reference derivative " << reference << ", policy derivative "
                        << policy);
          CHECK(false);
        }
      }
      INFO(row.name);
      CHECK(failures == 0);
    }
  });
}

namespace {

/// softshrink's formula as written (the form it takes for a negative lambd).
template <class C>
C softshrink_formula(C x, C l) {
  return x > l ? x - l : x < -l ? x + l : (x != x ? x : C(0));
}

}  // namespace

TEMPLATE_TEST_CASE("softshrink's one-select form gives the formula's bits for every lambd (host)",
                   "[cpu][accuracy]", float, double) {
  // The row of the table above has lambd 1.25; its select form (lambd >= 0) against the formula,
  // and the formula itself for a negative or NaN lambd: bit for bit, the sign of zero included.
  using C = TestType;
  const double lambds[] = {0.5, 1.25, 0.0, -0.0, 1e-40, 3.0e38, INFINITY, -0.5, -INFINITY, NAN};
  std::vector<C> xs = {C(0),
                       -C(0),
                       C(NAN),
                       -C(NAN),
                       C(INFINITY),
                       -C(INFINITY),
                       C(1e-40),
                       C(-1e-40),
                       std::numeric_limits<C>::min(),
                       std::numeric_limits<C>::denorm_min(),
                       std::numeric_limits<C>::max(),
                       -std::numeric_limits<C>::max()};
  for (const double l : lambds) {
    for (const C s : {C(1), C(-1)}) {  // each lambd's neighbours
      const C lc = C(l);
      xs.push_back(s * lc);
      xs.push_back(std::nextafter(s * lc, C(INFINITY)));
      xs.push_back(std::nextafter(s * lc, -C(INFINITY)));
    }
  }
  if constexpr (std::is_same_v<C, float>) {  // every 16-bit value as the float it computes in
    for (std::uint32_t b = 0; b < 65536; ++b) {
      xs.push_back(cuact::detail::to_compute(from_bits<__nv_bfloat16>(std::uint16_t(b))));
      xs.push_back(cuact::detail::to_compute(from_bits<__half>(std::uint16_t(b))));
    }
  }
  std::uint64_t state = Catch::getSeed() + 1300;
  for (int i = 0; i < 100000; ++i) {
    state = mix64(state + 0x9e3779b97f4a7c15ull);
    xs.push_back(C(static_cast<double>(static_cast<std::int64_t>(state)) * 0x1p-61));  // +-4
  }
  for (const double l : lambds) {
    const cuact::softshrink act{l};
    std::size_t differ = 0;
    for (const C x : xs) {
      const C want = softshrink_formula(x, C(l));
      const C got = act(x);
      if (!(bits_of(got) == bits_of(want) || (want != want && got != got)) && differ++ < 3) {
        INFO("lambd " << l << ", x " << x << ": " << got << " against the formula's " << want);
        CHECK(false);
      }
    }
    INFO("lambd " << l);
    CHECK(differ == 0);
  }
}

// forward_at / derivative_at: the tag reaches the members that take one and is left out
// elsewhere, so the result is the member's own at that accuracy, to the bit.
TEST_CASE("accuracy: forward_at and derivative_at are the members at the tag's accuracy",
          "[cpu][accuracy]") {
  const cuact::rounded_to<__nv_bfloat16> bf16{};
  const cuact::rounded_to<float> fp32{};
  const float inputs[] = {-30.0f,
                          -3.5f,
                          -1e-3f,
                          -0.0f,
                          0.0f,
                          1e-40f,
                          0.75f,
                          12.0f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  const cuact::selu selu{};
  const cuact::relu relu{};
  for (const float x : inputs) {
    const auto same = [](float a, float b) {
      return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
    };
    CHECK(same(cuact::forward_at(selu, x, bf16), selu(x, bf16)));
    CHECK(same(cuact::forward_at(selu, x, fp32), selu(x, fp32)));
    CHECK(same(cuact::derivative_at(selu, x, bf16), selu.derivative(x, bf16)));
    CHECK(same(cuact::forward_at(relu, x, bf16), relu(x)));  // relu takes no tag
  }
}
