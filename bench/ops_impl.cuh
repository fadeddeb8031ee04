/// \file
/// The launchers behind find_launcher, as templates over the element type. Included only by the
/// ops_<type>.cu files, each of which instantiates one type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cuact/cuact.cuh>
#include <cub/device/device_transform.cuh>
#include <cuda/std/tuple>
#include <type_traits>

#include "ops.cuh"

namespace bench {
namespace ops_detail {

/// CUB forward functor: the very cuact activation, between the conversions cuact makes.
template <class Activation>
struct cub_forward {
  Activation act;
  template <class T>
  __host__ __device__ T operator()(T x) const {
    return cuact::detail::from_compute<T>(act(cuact::detail::to_compute(x)));
  }
};

/// CUB backward functor: (x, dy) -> dx with cuact's own gradient op (relu as `x > 0 ? dy : 0`,
/// selu as `dy * selu'(x)`), so both contestants compute the same function.
template <class Activation>
struct cub_backward {
  Activation act;
  template <class T>
  __host__ __device__ T operator()(T x, T dy) const {
    return cuact::detail::from_compute<T>(cuact::detail::gradient_from_input<Activation>{act}(
        cuact::detail::to_compute(x), cuact::detail::to_compute(dy)));
  }
};

// CUB's offset type follows the type of num_items: std::int64_t, so every n works (n <= 2^31 - 1
// would also allow int32 offsets; cuact always indexes with size_t).
using cub_items_t = std::int64_t;

template <class T, class Activation>
cudaError_t cub_forward_call(const call_args& a, cudaStream_t stream) {
  return cub::DeviceTransform::Transform(::cuda::std::make_tuple(static_cast<const T*>(a.in0)),
                                         static_cast<T*>(a.out), static_cast<cub_items_t>(a.n),
                                         cub_forward<Activation>{}, stream);
}

template <class T, class Activation>
cudaError_t cub_backward_call(const call_args& a, cudaStream_t stream) {
  return cub::DeviceTransform::Transform(
      ::cuda::std::make_tuple(static_cast<const T*>(a.in0), static_cast<const T*>(a.in1)),
      static_cast<T*>(a.out), static_cast<cub_items_t>(a.n), cub_backward<Activation>{}, stream);
}

template <class T, class Activation>
cudaError_t cuact_forward_call(const call_args& a, cudaStream_t stream) {
  return cuact::forward(Activation{}, static_cast<const T*>(a.in0), static_cast<T*>(a.out), a.n,
                        stream);
}

template <class T, class Activation>
cudaError_t cuact_backward_call(const call_args& a, cudaStream_t stream) {
  return cuact::backward(Activation{}, static_cast<const T*>(a.in0), static_cast<const T*>(a.in1),
                         static_cast<T*>(a.out), a.n, stream);
}

template <class T, class Activation>
cudaError_t cuact_backward_from_output_call(const call_args& a, cudaStream_t stream) {
  return cuact::backward_from_output(Activation{}, static_cast<const T*>(a.in0),
                                     static_cast<const T*>(a.in1), static_cast<T*>(a.out), a.n,
                                     stream);
}

template <class T>
cudaError_t cuact_relu_forward_mask_call(const call_args& a, cudaStream_t stream) {
  return cuact::relu_forward_mask(static_cast<const T*>(a.in0), static_cast<T*>(a.out),
                                  static_cast<std::uint32_t*>(a.out2), a.n, stream);
}

template <class T>
cudaError_t cuact_relu_backward_mask_call(const call_args& a, cudaStream_t stream) {
  return cuact::relu_backward_mask(static_cast<const std::uint32_t*>(a.in0),
                                   static_cast<const T*>(a.in1), static_cast<T*>(a.out), a.n,
                                   stream);
}

/// Which combinations a type builds (each costs compile time): forward and backward from x for
/// every type; the from-output and mask variants where the headline mode uses them.
template <class T>
inline constexpr bool has_from_output_v =
    std::is_same_v<T, float> || std::is_same_v<T, __nv_bfloat16>;
template <class T>
inline constexpr bool has_mask_v = std::is_same_v<T, float>;

template <class T>
launch_fn find_launcher(impl i, op o) {
  if (i == impl::cub) {
    switch (o) {
      case op::relu:
        return &cub_forward_call<T, cuact::relu>;
      case op::selu:
        return &cub_forward_call<T, cuact::selu>;
      case op::relu_backward:
        return &cub_backward_call<T, cuact::relu>;
      case op::selu_backward:
        return &cub_backward_call<T, cuact::selu>;
      default:
        return nullptr;
    }
  }
  if (i == impl::cuact) {
    switch (o) {
      case op::relu:
        return &cuact_forward_call<T, cuact::relu>;
      case op::selu:
        return &cuact_forward_call<T, cuact::selu>;
      case op::relu_backward:
        return &cuact_backward_call<T, cuact::relu>;
      case op::selu_backward:
        return &cuact_backward_call<T, cuact::selu>;
      case op::relu_backward_from_output:
        if constexpr (has_from_output_v<T>) return &cuact_backward_from_output_call<T, cuact::relu>;
        return nullptr;
      case op::selu_backward_from_output:
        if constexpr (has_from_output_v<T>) return &cuact_backward_from_output_call<T, cuact::selu>;
        return nullptr;
      case op::relu_forward_mask:
        if constexpr (has_mask_v<T>) return &cuact_relu_forward_mask_call<T>;
        return nullptr;
      case op::relu_backward_mask:
        if constexpr (has_mask_v<T>) return &cuact_relu_backward_mask_call<T>;
        return nullptr;
    }
  }
  return nullptr;
}

}  // namespace ops_detail
}  // namespace bench
