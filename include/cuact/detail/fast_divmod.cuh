/// \file
/// Division by a divisor fixed at launch, for dividends below 2^31: a high multiply and a shift
/// (Granlund and Montgomery, 1994; CUTLASS's FastDivmod). Used where a flat element index is
/// taken back to its column (fused.cuh: the bias forward), where a 64-bit `%` would cost tens of
/// instructions per vector and a 64-bit multiply-high remainder (Lemire's fastmod) about six; the
/// compute-bound bias forwards are faster with this one.
#pragma once

#include <cuda/std/cstddef>
#include <cuda/std/cstdint>

#include "config.cuh"

namespace cuact {
namespace detail {

/// Dividends must be below this (and divisors in [2, fast_divmod_limit)).
inline constexpr cuda::std::size_t fast_divmod_limit = cuda::std::size_t(1) << 31;

/// a / d and a % d for a < 2^31 and a divisor d in [2, 2^31): q = umulhi(a, m) >> (L - 1) with
/// L = ceil(log2 d) and m = ceil(2^(31 + L) / d). Exact: m d = 2^(31 + L) + e with 0 <= e < d, so
/// a m / 2^(31 + L) = a / d + a e / (d 2^(31 + L)), and the second term is below 2^-L <= 1 / d,
/// less than what a / d lacks of the next integer. m < 2^32 because d > 2^(L - 1).
struct fast_divmod {
  cuda::std::uint32_t divisor;
  cuda::std::uint32_t multiplier;
  cuda::std::uint32_t shift;

  /// The divmod by d, 2 <= d < 2^31 (not checked: callers test divides_by).
  static fast_divmod of(cuda::std::uint32_t d) {
    cuda::std::uint32_t log2_ceil = 0;
    while ((cuda::std::uint64_t(1) << log2_ceil) < d) ++log2_ceil;
    const cuda::std::uint64_t m = ((cuda::std::uint64_t(1) << (31 + log2_ceil)) + d - 1) / d;
    return {d, static_cast<cuda::std::uint32_t>(m), log2_ceil - 1};
  }
  /// Whether of(d) exists (d in [2, fast_divmod_limit)); it serves dividends below the limit.
  static constexpr bool divides_by(cuda::std::size_t d) { return d >= 2 && d < fast_divmod_limit; }
  /// a / divisor, a < 2^31.
  CUACT_HOST_DEVICE cuda::std::uint32_t quotient(cuda::std::uint32_t a) const {
#if defined(__CUDA_ARCH__)
    return __umulhi(a, multiplier) >> shift;
#else
    return static_cast<cuda::std::uint32_t>((cuda::std::uint64_t(a) * multiplier) >> 32) >> shift;
#endif
  }
  /// a % divisor, a < 2^31.
  CUACT_HOST_DEVICE cuda::std::uint32_t remainder(cuda::std::uint32_t a) const {
    return a - quotient(a) * divisor;
  }
};

}  // namespace detail
}  // namespace cuact
