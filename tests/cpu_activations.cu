// The activation policies against float64 references, on the host: every 16-bit value
// exhaustively, fp32 on a dense sweep plus random and special values, fp64 on random and special
// values; derivatives against the references and against central finite differences; the test
// suite's own rounding against CUDA's conversions.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>

#include <cuact/cuact.cuh>

#include "test_support.hpp"

using namespace cuact_test;
using cuact::detail::compute_t;
using cuact::detail::from_compute;
using cuact::detail::to_compute;

namespace {

/// What the engine does to one element: load -> to_compute -> op -> from_compute.
template <class T, class Op, class... Args>
T through_engine(const Op& op, Args... args) {
  return from_compute<T>(op(to_compute(args)...));
}

/// Every 16-bit pattern, or n random values plus the specials for wider types.
template <class T>
std::vector<T> inputs_for(std::mt19937_64& rng) {
  std::vector<T> values;
  if constexpr (sizeof(T) == 2) {
    for (std::uint32_t b = 0; b < 65536; ++b) values.push_back(from_bits<T>(static_cast<std::uint16_t>(b)));
  } else {
    values = random_values<T>(200000, rng);
    for (double s : special_values<T>()) values.push_back(round_to<T>(s));
    if constexpr (std::is_same_v<T, float>) {
      // dense over the range where selu's expm1 and exp do their work
      for (float x = -110.0f; x < 1.0f; x += 1.0f / 4096) values.push_back(x);
      for (float x = -1e-3f; x < 1e-3f; x += 1e-7f) values.push_back(x);
    }
  }
  return values;
}

template <class T, class Op, class Reference>
void check_unary(const Op& op, const Reference& reference, int max_ulp, std::mt19937_64& rng) {
  std::size_t failures = 0;
  for (T x : inputs_for<T>(rng)) {
    const T actual = through_engine<T>(op, x);
    if (!matches(actual, reference(to_double(x)), max_ulp) && failures++ < 5) {
      CAPTURE(type_name<T>(), to_double(x), to_double(actual), reference(to_double(x)));
      CHECK(false);
    }
  }
  CHECK(failures == 0);
}

}  // namespace

TEMPLATE_TEST_CASE("relu forward is exact, keeps NaN, maps -0 to +0", "[cpu][activation]", float, double,
                   __half, __nv_bfloat16) {
  std::mt19937_64 rng(Catch::rngSeed() + 11);
  check_unary<TestType>(cuact::relu{}, relu_ref, 0, rng);
  CHECK(bits_of(through_engine<TestType>(cuact::relu{}, round_to<TestType>(-0.0))) == bits_of(round_to<TestType>(0.0)));
  CHECK(is_nan(through_engine<TestType>(cuact::relu{}, round_to<TestType>(std::nan("")))));
}

TEMPLATE_TEST_CASE("selu forward within tolerance, keeps NaN and -0", "[cpu][activation]", float, double,
                   __half, __nv_bfloat16) {
  std::mt19937_64 rng(Catch::rngSeed() + 12);
  check_unary<TestType>(cuact::selu{}, selu_ref, selu_max_ulp<TestType>(), rng);
  CHECK(bits_of(through_engine<TestType>(cuact::selu{}, round_to<TestType>(-0.0))) == bits_of(round_to<TestType>(-0.0)));
  CHECK(matches(through_engine<TestType>(cuact::selu{}, round_to<TestType>(-INFINITY)),
                -1.7580993408473768599, selu_max_ulp<TestType>()));
}

TEMPLATE_TEST_CASE("gradients from input and from output against float64", "[cpu][activation]", float,
                   double, __half, __nv_bfloat16) {
  using T = TestType;
  using C = compute_t<T>;
  std::mt19937_64 rng(Catch::rngSeed() + 13);
  const auto xs = inputs_for<T>(rng);
  const auto dys = random_values<T>(xs.size(), rng);
  const int selu_ulp = selu_max_ulp<T>();
  std::size_t failures = 0;
  const auto check = [&](const char* what, T actual, double reference, int max_ulp, double x, double dy) {
    if (!matches(actual, reference, max_ulp, underflow_slack<C>(dy)) && failures++ < 5) {
      CAPTURE(what, type_name<T>(), x, dy, to_double(actual), reference);
      CHECK(false);
    }
  };
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = to_double(xs[i]), dy = to_double(dys[i]);
    check("relu", through_engine<T>(cuact::detail::gradient_from_input<cuact::relu>{}, xs[i], dys[i]),
          relu_grad_ref(x, dy), 0, x, dy);
    check("selu", through_engine<T>(cuact::detail::gradient_from_input<cuact::selu>{}, xs[i], dys[i]),
          selu_grad_ref<C>(x, dy), selu_ulp, x, dy);
    // from the output: y = act(x) in T, then the gradient from y; relu bit-identical to from-input
    const T relu_y = through_engine<T>(cuact::relu{}, xs[i]);
    check("relu from output", through_engine<T>(cuact::detail::gradient_from_output<cuact::relu>{}, relu_y, dys[i]),
          relu_grad_ref(x, dy), 0, x, dy);
    const T selu_y = through_engine<T>(cuact::selu{}, xs[i]);
    check("selu from output", through_engine<T>(cuact::detail::gradient_from_output<cuact::selu>{}, selu_y, dys[i]),
          selu_grad_from_output_ref(to_double(selu_y), dy), selu_ulp, x, dy);
  }
  CHECK(failures == 0);
}

TEST_CASE("selu derivative agrees with central finite differences in float64", "[cpu][activation]") {
  // Smooth regions only (|x| > 1e-3, away from the kink at 0); h = 1e-6 gives O(h^2) truncation,
  // and float64 roundoff of about 2e-16 * |selu(x)| / h = 4e-10 absolute, hence the 1e-9 terms.
  std::mt19937_64 rng(Catch::rngSeed() + 14);
  std::uniform_real_distribution<double> dist(-20.0, 8.0);
  const double h = 1e-6;
  for (int i = 0; i < 100000; ++i) {
    const double x = dist(rng);
    if (std::fabs(x) < 1e-3) continue;
    const double fd = (selu_ref(x + h) - selu_ref(x - h)) / (2 * h);
    const double derivative = cuact::selu{}.derivative(x);
    CAPTURE(x, fd, derivative);
    REQUIRE(std::fabs(derivative - fd) <= 1e-7 * std::fabs(fd) + 1e-9);
    // from the output gives the same derivative
    REQUIRE(std::fabs(cuact::selu{}.derivative_from_output(selu_ref(x)) - derivative) <= 1e-12 * std::fabs(derivative) + 1e-15);
    const float xf = static_cast<float>(x);
    const double fdf = (selu_ref(double(xf) + h) - selu_ref(double(xf) - h)) / (2 * h);
    REQUIRE(std::fabs(cuact::selu{}.derivative(xf) - fdf) <= 1e-5 * std::fabs(fdf) + 1e-9);
  }
  const double relu_fd = (relu_ref(2.0 + h) - relu_ref(2.0 - h)) / (2 * h);
  CHECK(cuact::relu{}.derivative(2.0) == Approx(relu_fd));
  CHECK(cuact::relu{}.derivative(-2.0) == 0.0);
  CHECK(cuact::relu{}.derivative(0.0) == 0.0);  // PyTorch: relu'(0) = 0
}

TEMPLATE_TEST_CASE("the suite's rounding agrees with CUDA's round-to-nearest conversions", "[cpu][support]",
                   __half, __nv_bfloat16) {
  std::mt19937_64 rng(Catch::rngSeed() + 15);
  std::uniform_int_distribution<std::uint32_t> any_bits;
  for (int i = 0; i < 1000000; ++i) {
    const float f = from_bits<float>(any_bits(rng));
    const TestType mine = round_to<TestType>(f);
    const TestType cuda = from_compute<TestType>(f);
    if (std::isnan(f)) {
      REQUIRE(is_nan(mine));
    } else {
      CAPTURE(f);
      REQUIRE(bits_of(mine) == bits_of(cuda));
    }
  }
}
