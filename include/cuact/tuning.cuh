/// \file
/// The built-in activations' tuning: cuact::tuning_traits specialised for those whose launch
/// differs from what their cost hint alone gives (detail/tuning_traits.cuh says what each member
/// steers). Each specialisation restates the activation's hint (tests/cpu_policy.cu checks that
/// they agree). A user's activation needs none of this: its hint, or nothing, gives the defaults.
#pragma once

#include "detail/tuning_traits.cuh"

namespace cuact {

struct selu;
struct softsign;
struct elu;
struct celu;
struct sigmoid;
struct silu;
struct softplus;
struct mish;
struct tanh;
struct tanhshrink;
struct gelu;
struct gelu_tanh;

namespace detail {
/// A heavy activation whose backward from the output is light (a compare and a select, y (1 - y),
/// 1 - y^2): that backward launches as a light op.
template <bool BulkTiles = false, bool ShortFloatMath = false, bool ShortBf16Math = false>
using heavy_light_from_output =
    tuning_values<cost_hint::heavy, cost_hint::heavy, cost_hint::light,
                  default_compute_bound_passes, false, ShortFloatMath, BulkTiles, ShortBf16Math>;
/// A heavy activation's traits, the backward from the output heavy too.
template <bool BulkTiles, bool ShortFloatMath, bool Long16bitMath = false>
using heavy_tuning =
    tuning_values<cost_hint::heavy, cost_hint::heavy, cost_hint::heavy,
                  default_compute_bound_passes, Long16bitMath, ShortFloatMath, BulkTiles>;
/// A compute-bound forward that makes four passes where its float budget is tight: two do not
/// reach the copy ceiling there.
using four_pass_compute_bound =
    tuning_values<cost_hint::heavy, cost_hint::compute_bound, cost_hint::heavy, 4>;
}  // namespace detail

// Bulk tiles: the heavy forwards measured faster so where the budget is roomy (not gelu,
// softplus, celu, logsigmoid, tanhshrink, which lose). Short float math: one vector per thread
// on float data where the budget is tight too, more threads beating more vectors. Long 16-bit
// math: two vectors per thread for 16-bit data where the budget is tight, one leaving too few
// loads in flight behind the math.

/// exp; light backward from the output; bulk tiles.
template <>
struct tuning_traits<selu> : detail::heavy_light_from_output<true> {};
/// A division; bulk tiles, short float math.
template <>
struct tuning_traits<softsign> : detail::heavy_tuning<true, true> {};
/// expm1; light backward from the output; bulk tiles.
template <>
struct tuning_traits<elu> : detail::heavy_light_from_output<true> {};
/// expm1; light backward from the output (an add and a division by alpha).
template <>
struct tuning_traits<celu> : detail::heavy_light_from_output<> {};
/// exp and a division; light backward from the output; bulk tiles, short float math.
template <>
struct tuning_traits<sigmoid> : detail::heavy_light_from_output<true, true> {};
/// exp and a division; bulk tiles, short float math.
template <>
struct tuning_traits<silu> : detail::heavy_tuning<true, true> {};
/// exp and log; long 16-bit math.
template <>
struct tuning_traits<softplus> : detail::heavy_tuning<false, false, true> {};
/// Bulk tiles.
template <>
struct tuning_traits<mish> : detail::heavy_tuning<true, false> {};
/// Light backward from the output; bulk tiles, short float math; its bf16 forward is one
/// `tanh.approx`, a light op's launch.
template <>
struct tuning_traits<tanh> : detail::heavy_light_from_output<true, true, true> {};
/// Short float math, long 16-bit math.
template <>
struct tuning_traits<tanhshrink> : detail::heavy_tuning<false, true, true> {};
/// erfc: compute-bound, four passes.
template <>
struct tuning_traits<gelu> : detail::four_pass_compute_bound {};
/// tanh form: compute-bound, four passes (closer to the copy ceiling than two).
template <>
struct tuning_traits<gelu_tanh> : detail::four_pass_compute_bound {};

}  // namespace cuact
