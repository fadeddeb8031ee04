/// \file
/// The corpus: activations written the way users write them for cuact::forward, with no cost
/// hint and no tuning trait: plain math functions, float and double members, clamps by fmin/fmax
/// or by ternaries. Some take the compute type as a template parameter, some take a float; some
/// mix a double member into float math, as user code does. Each group is instantiated by one
/// translation unit per dtype (corpus_<group>.cu), so the build runs in parallel.
#pragma once

#include <cmath>

// A named namespace: kernels instantiated with these types need external linkage (cuact's
// kernels have hidden visibility; nvcc warns about internal-linkage arguments).
namespace corpus {

// ---- light, with members ---------------------------------------------------------------------

struct leaky_relu {
  float slope = 0.01f;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(0) ? x : x * slope;
  }
};

struct leaky_relu_double_slope {
  double slope = 0.01;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > 0 ? x : C(x * slope);
  }
};

struct scaled_relu {
  float scale = 1.5f;
  __host__ __device__ float operator()(float x) const { return x > 0.0f ? x * scale : 0.0f; }
};

struct prelu_fixed {
  float a = 0.25f;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return fmax(x, C(0)) + C(a) * fmin(x, C(0));
  }
};

struct affine {
  float a = 2.0f, b = 0.5f;
  __host__ __device__ float operator()(float x) const { return a * x + b; }
};

struct shifted_relu {
  float t = 0.1f;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > t ? x - t : C(0);
  }
};

struct soft_shrink {
  float lambda = 0.5f;
  __host__ __device__ float operator()(float x) const {
    return x > lambda ? x - lambda : (x < -lambda ? x + lambda : 0.0f);
  }
};

struct hard_shrink {
  float lambda = 0.5f;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return fabs(x) > lambda ? x : C(0);
  }
};

struct threshold {
  float th = 0.1f, value = -1.0f;
  __host__ __device__ float operator()(float x) const { return x > th ? x : value; }
};

struct squared_relu {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(0) ? x * x : C(0);
  }
};

struct softsign {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x / (C(1) + fabs(x));
  }
};

// ---- clamps ----------------------------------------------------------------------------------

struct relu_fmax {
  __host__ __device__ float operator()(float x) const { return fmaxf(x, 0.0f); }
};

struct relu6_fmin_fmax {
  __host__ __device__ float operator()(float x) const { return fminf(fmaxf(x, 0.0f), 6.0f); }
};

struct relu6_ternary {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x < C(0) ? C(0) : (x > C(6) ? C(6) : x);
  }
};

struct hardtanh_fmin_fmax {
  float lo = -1.0f, hi = 1.0f;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return fmin(fmax(x, C(lo)), C(hi));
  }
};

struct hardtanh_ternary {
  float lo = -1.0f, hi = 1.0f;
  __host__ __device__ float operator()(float x) const { return x < lo ? lo : (x > hi ? hi : x); }
};

struct clamp_double_bounds {
  double lo = -2.5, hi = 2.5;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return C(fmin(fmax(double(x), lo), hi));
  }
};

// ---- heavy: exp / log / tanh / erf -----------------------------------------------------------

struct sigmoid {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return C(1) / (C(1) + exp(-x));
  }
};

struct swish {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x / (C(1) + exp(-x));
  }
};

struct swish_beta {
  float beta = 1.5f;
  __host__ __device__ float operator()(float x) const { return x / (1.0f + expf(-beta * x)); }
};

struct mish {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x * tanh(log1p(exp(x)));
  }
};

struct softplus {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(20) ? x : log1p(exp(x));
  }
};

struct softplus_beta {
  float beta = 2.0f, limit = 20.0f;
  __host__ __device__ float operator()(float x) const {
    return beta * x > limit ? x : log1pf(expf(beta * x)) / beta;
  }
};

struct gelu_erf {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return C(0.5) * x * (C(1) + erf(x * C(0.70710678118654752)));
  }
};

struct gelu_tanh {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    const C k = C(0.79788456080286536);
    return C(0.5) * x * (C(1) + tanh(k * (x + C(0.044715) * x * x * x)));
  }
};

struct quick_gelu {
  __host__ __device__ float operator()(float x) const { return x / (1.0f + expf(-1.702f * x)); }
};

struct tanh_act {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return tanh(x);
  }
};

struct log_sigmoid {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x < C(0) ? x - log1p(exp(x)) : -log1p(exp(-x));
  }
};

struct tanhshrink {
  __host__ __device__ float operator()(float x) const { return x - tanhf(x); }
};

struct selu_double_members {
  double alpha = 1.6732632423543772, scale = 1.0507009873554805;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > 0 ? C(scale * x) : C(scale * alpha * (exp(double(x)) - 1.0));
  }
};

struct elu_alpha {
  float alpha = 1.0f;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(0) ? x : C(alpha) * (exp(x) - C(1));
  }
};

struct celu {
  float alpha = 1.0f;
  __host__ __device__ float operator()(float x) const {
    return fmaxf(0.0f, x) + fminf(0.0f, alpha * (expf(x / alpha) - 1.0f));
  }
};

struct gaussian {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return exp(-x * x);
  }
};

struct erf_act {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return erf(x);
  }
};

// ---- piecewise -------------------------------------------------------------------------------

struct hardswish {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x * fmin(fmax(x + C(3), C(0)), C(6)) / C(6);
  }
};

struct hardswish_ternary {
  __host__ __device__ float operator()(float x) const {
    return x <= -3.0f ? 0.0f : (x >= 3.0f ? x : x * (x + 3.0f) / 6.0f);
  }
};

struct hardsigmoid {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return fmin(fmax(x / C(6) + C(0.5), C(0)), C(1));
  }
};

struct elu_expm1 {
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(0) ? x : expm1(x);
  }
};

struct piecewise_linear {
  __host__ __device__ float operator()(float x) const {
    if (x < -2.0f) return -1.0f;
    if (x < 0.0f) return 0.5f * x;
    if (x < 2.0f) return x;
    return 2.0f + 0.1f * (x - 2.0f);
  }
};

}  // namespace corpus

/// The corpus in four groups: CORPUS_GROUP_n(X) applies X(name, type) to each member.
// clang-format off
#define CORPUS_GROUP_0(X) \
  X(leaky_relu, corpus::leaky_relu) \
  X(leaky_relu_double_slope, corpus::leaky_relu_double_slope) \
  X(scaled_relu, corpus::scaled_relu) \
  X(prelu_fixed, corpus::prelu_fixed) \
  X(affine, corpus::affine) \
  X(shifted_relu, corpus::shifted_relu) \
  X(soft_shrink, corpus::soft_shrink) \
  X(hard_shrink, corpus::hard_shrink) \
  X(threshold, corpus::threshold) \
  X(squared_relu, corpus::squared_relu)
#define CORPUS_GROUP_1(X) \
  X(softsign, corpus::softsign) \
  X(relu_fmax, corpus::relu_fmax) \
  X(relu6_fmin_fmax, corpus::relu6_fmin_fmax) \
  X(relu6_ternary, corpus::relu6_ternary) \
  X(hardtanh_fmin_fmax, corpus::hardtanh_fmin_fmax) \
  X(hardtanh_ternary, corpus::hardtanh_ternary) \
  X(clamp_double_bounds, corpus::clamp_double_bounds) \
  X(hardswish, corpus::hardswish) \
  X(hardswish_ternary, corpus::hardswish_ternary) \
  X(hardsigmoid, corpus::hardsigmoid)
#define CORPUS_GROUP_2(X) \
  X(sigmoid, corpus::sigmoid) \
  X(swish, corpus::swish) \
  X(swish_beta, corpus::swish_beta) \
  X(mish, corpus::mish) \
  X(softplus, corpus::softplus) \
  X(softplus_beta, corpus::softplus_beta) \
  X(gelu_erf, corpus::gelu_erf) \
  X(gelu_tanh, corpus::gelu_tanh) \
  X(quick_gelu, corpus::quick_gelu)
#define CORPUS_GROUP_3(X) \
  X(tanh_act, corpus::tanh_act) \
  X(log_sigmoid, corpus::log_sigmoid) \
  X(tanhshrink, corpus::tanhshrink) \
  X(selu_double_members, corpus::selu_double_members) \
  X(elu_alpha, corpus::elu_alpha) \
  X(celu, corpus::celu) \
  X(gaussian, corpus::gaussian) \
  X(erf_act, corpus::erf_act) \
  X(elu_expm1, corpus::elu_expm1) \
  X(piecewise_linear, corpus::piecewise_linear)
// clang-format on
