// The test helpers themselves (common/support.hpp): the hash covers every class of value, the
// matcher and poison values do what the engine tests rely on, and the suite's correctly rounded
// conversion agrees with CUDA's round-to-nearest conversions.
#include <cmath>
#include <limits>
#include <random>

#include <cuact/detail/numeric.cuh>

#include "catch.hpp"
#include "support.hpp"

using namespace cuact_test;

TEMPLATE_TEST_CASE("support: hash values cover every class of value", "[cpu][support]",
                   CUACT_TEST_DTYPES) {
  using T = TestType;
  std::size_t nan = 0, inf = 0, zero = 0, denormal = 0, big = 0, negative = 0, ordinary = 0;
  for (std::uint64_t i = 0; i < (1u << 16); ++i) {
    const T v = hash_value<T>(42, i);
    REQUIRE(bits_of(v) == hash_bits<T>(42, i));
    const double d = to_double(v);
    REQUIRE(is_nan(v) == std::isnan(d));
    if (std::signbit(d)) ++negative;
    if (std::isnan(d)) {
      ++nan;
    } else if (std::isinf(d)) {
      ++inf;
    } else if (d == 0) {
      ++zero;
    } else if (std::fabs(d) < std::ldexp(1.0, 1 - format_of<T>::bias)) {
      ++denormal;
    } else if (std::fabs(d) >= 64) {
      ++big;
    } else {
      ++ordinary;
    }
  }
  CHECK(nan > 0);
  CHECK(inf > 0);
  CHECK(zero > 0);
  CHECK(denormal > 0);
  CHECK(big > 0);
  CHECK(negative > 30000);
  CHECK(ordinary > 60000);
  CHECK(hash_bits<T>(1, 5) != hash_bits<T>(2, 5));
}

TEMPLATE_TEST_CASE("support: the matcher and poison values", "[cpu][support]", CUACT_TEST_DTYPES,
                   __nv_fp8_e4m3, __nv_fp8_e5m2) {
  using T = TestType;
  for (std::uint64_t i = 0; i < 4096; ++i) {
    const T v = from_bits<T>(
        static_cast<bits_t<T>>(hash_bits<std::conditional_t<sizeof(T) == 1, __half, T>>(7, i)));
    CHECK(same_result(v, v));
    CHECK_FALSE(same_result(poison_for(v), v));
    CHECK(is_nan(poison_for(v)) != is_nan(v));
  }
  const T positive_zero = from_bits<T>(0);
  const T negative_zero = from_bits<T>(static_cast<bits_t<T>>(bits_t<T>(1) << (8 * sizeof(T) - 1)));
  CHECK_FALSE(same_result(positive_zero, negative_zero));  // the sign of zero counts
  const T nan_a = poison_for(positive_zero);
  T nan_b =
      from_bits<T>(static_cast<bits_t<T>>(bits_of(nan_a) ^ 0x1));  // another payload (or -NaN)
  if (!is_nan(nan_b))
    nan_b = from_bits<T>(
        static_cast<bits_t<T>>(bits_of(nan_a) | (bits_t<T>(1) << (8 * sizeof(T) - 1))));
  CHECK(is_nan(nan_b));
  CHECK(same_result(nan_a, nan_b));  // NaN payloads may differ
}

TEST_CASE("support: fp8 NaN by the bits", "[cpu][support]") {
  CHECK(is_nan(from_bits<__nv_fp8_e4m3>(0x7F)));
  CHECK(is_nan(from_bits<__nv_fp8_e4m3>(0xFF)));
  CHECK_FALSE(is_nan(from_bits<__nv_fp8_e4m3>(0x7E)));  // 448, the largest e4m3
  CHECK(to_double(from_bits<__nv_fp8_e4m3>(0x7E)) == 448.0);
  CHECK(is_nan(from_bits<__nv_fp8_e5m2>(0x7D)));
  CHECK_FALSE(is_nan(from_bits<__nv_fp8_e5m2>(0x7C)));  // inf
  CHECK(to_double(from_bits<__nv_fp8_e5m2>(0x7B)) == 57344.0);
}

TEMPLATE_TEST_CASE("support: round_to agrees with CUDA's round-to-nearest conversions",
                   "[cpu][support]", __half, __nv_bfloat16) {
  std::mt19937_64 rng(15);
  std::uniform_int_distribution<std::uint32_t> any_bits;
  for (int i = 0; i < 1000000; ++i) {
    const float f = from_bits<float>(any_bits(rng));
    const TestType mine = round_to<TestType>(f);
    const TestType cuda = cuact::detail::from_compute<TestType>(f);
    if (std::isnan(f)) {
      REQUIRE(is_nan(mine));
    } else {
      CAPTURE(f);
      REQUIRE(bits_of(mine) == bits_of(cuda));
    }
  }
  CHECK(ulp_distance(round_to<TestType>(1.0), round_to<TestType>(-0.0)) ==
        static_cast<std::int64_t>(bits_of(round_to<TestType>(1.0))));
}
