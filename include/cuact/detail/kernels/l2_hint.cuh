/// \file
/// load_kept_in_l2: a load under an L2 evict_last policy, for the bias kernels (fused.cuh).
#pragma once

#include <cuda/std/cstdint>

#include "../std.cuh"
#include "../config.cuh"

namespace cuact {
namespace detail {

/// The L2 policy of cuda::access_property::persisting as a 64-bit cache-hint operand. Spelled as
/// its value because <cuda/annotated_ptr>, which computes it, is among the costliest headers to
/// compile; tests/cpu_policy.cu checks that the two agree.
inline constexpr cuda::std::uint64_t l2_persisting_policy = 0x14f0000000000000ull;

/// *from, with an L2 eviction priority of evict_last (`ld.global.L2::cache_hint` under the policy
/// of cuda::access_property::persisting, as inductor loads its broadcast operands), for a small
/// array that every row of a pass reads again: flat_bias_op's bias. Under plain loads the
/// streaming x and out evict the bias from L2, and it is read from DRAM again. Non-volatile asm
/// without a memory clobber: the
/// bias is read-only while a kernel runs, so the compiler may schedule the load as any other.
template <class Vector>
CUACT_HOST_DEVICE Vector load_kept_in_l2(const Vector* from) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr cuda::std::uint64_t policy = l2_persisting_policy;
  if constexpr (sizeof(Vector) == 16) {
    uint4 w;
    asm("ld.global.L2::cache_hint.v4.b32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
        : "l"(from), "l"(policy));
    return cuda::std::bit_cast<Vector>(w);
  } else if constexpr (sizeof(Vector) == 8) {
    uint2 w;
    asm("ld.global.L2::cache_hint.v2.b32 {%0, %1}, [%2], %3;"
        : "=r"(w.x), "=r"(w.y)
        : "l"(from), "l"(policy));
    return cuda::std::bit_cast<Vector>(w);
  } else if constexpr (sizeof(Vector) == 4) {
    cuda::std::uint32_t w;
    asm("ld.global.L2::cache_hint.b32 %0, [%1], %2;" : "=r"(w) : "l"(from), "l"(policy));
    return cuda::std::bit_cast<Vector>(w);
  }
#endif
  return *from;
}

}  // namespace detail
}  // namespace cuact
