/// \file
/// cuact::last_error_detail: why this thread's last call was rejected, without printing.
#pragma once

#include "detail/config.cuh"  // first: it rejects a host-only compiler

#ifndef __CUDACC_RTC__
#include "detail/validate.cuh"

namespace cuact {

/// Why the calling thread's last rejected call was rejected, in one sentence, or "" when its last
/// call passed validation. Every entry (forward, backward, transform, relu masks, fused.cuh's)
/// sets it when it returns an error before launching anything, and empties it when it accepts
/// its arguments (n == 0 included). A rejected call launches nothing, writes nothing, and leaves
/// no error in the CUDA runtime's last-error state; it returns cudaErrorInvalidValue,
/// cudaErrorInvalidDevice, or the failing runtime call's error.
///
/// Arrays are named by their place in the call: "output k" and "input k" count the entry's
/// output and input arrays from 0 in parameter order (forward: out is output 0, in is input 0;
/// backward: dx is output 0, x input 0, dy input 1). Texts include:
///
///     output 0 overlaps input 0 without being equal
///     input 0: n > 0 with a null pointer
///     input 0 is pageable host memory (or no memory CUDA knows): pass device, managed or ...
///     output 0 is on device 1, the current device is 0
///     output 0 is not aligned to its element type (4 bytes)
///
/// The pointer stays valid until this thread's next cuact call; thread-local, so concurrent
/// callers do not see each other's texts. A launch's own failure (after validation) is the
/// returned cudaError_t only.
inline const char* last_error_detail() noexcept { return detail::error_detail_text(); }

}  // namespace cuact
#endif  // __CUDACC_RTC__
