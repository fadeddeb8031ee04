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

#if defined(__CUDACC_RTC__)
// CCCL's type-list metaprograms unroll 16 deep outside nvcc; NVRTC's preprocessor spends most of
// a compile on that expansion. nvcc's depth, 10, yields the same types, only by a longer
// recursion on long lists, which cuact's kernels do not have.
#ifndef _CCCL_META_UNROLL_LIMIT
#define _CCCL_META_UNROLL_LIMIT 10
#endif
// cuact has no fp6 or fp4 data: CCCL need not read cuda_fp6.h and cuda_fp4.h and give their
// types its traits, which every module would otherwise carry as device variables.
#ifndef CCCL_DISABLE_NVFP6_SUPPORT
#define CCCL_DISABLE_NVFP6_SUPPORT
#endif
#ifndef CCCL_DISABLE_NVFP4_SUPPORT
#define CCCL_DISABLE_NVFP4_SUPPORT
#endif
#endif

#include "detail/config.cuh"  // first cuact header: it rejects a host-only compiler

#include "activation.cuh"
#include "elementwise.cuh"
