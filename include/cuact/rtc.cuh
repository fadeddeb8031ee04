/// \file
/// The entry for run-time compilation (NVRTC, CuPy RawModule): the activation concept and the
/// per-thread body, `cuact::forward_op` ... `cuact::elementwise_thread`, and nothing host-side.
/// Include it first, before any CCCL header, so the setting below takes effect:
///
///     #include <cuact/rtc.cuh>
///     #include <cuact/fused.cuh>   // optional: gated_op, bias_op and their gradients
///
/// With nvcc it is activation.cuh plus elementwise.cuh.
#pragma once

// CCCL's type-list metaprograms unroll 16 deep outside nvcc; NVRTC's preprocessor spends most of
// a compile on that expansion. nvcc's depth, 10, yields the same types, only by a longer
// recursion on long lists, which cuact's kernels do not have.
#if defined(__CUDACC_RTC__) && !defined(_CCCL_META_UNROLL_LIMIT)
#define _CCCL_META_UNROLL_LIMIT 10
#endif

#include "detail/config.cuh"  // first cuact header: it rejects a host-only compiler

#include "activation.cuh"
#include "elementwise.cuh"
