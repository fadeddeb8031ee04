/// \file
/// A minimal tuple for the kernels' arrays, per-thread values and the fused ops' results:
/// construction from its elements, get, apply, tuple_cat and structured bindings, nothing else.
/// <cuda/std/tuple> brings the whole of libcu++'s type_traits and utility along and is the
/// largest single part of what including cuact costs to compile. A user's multi-output op may
/// still return a cuda::std::tuple: the kernel reads results with an unqualified get, which
/// finds either.
#pragma once

#include <cuda/std/cstddef>

#include <cuda/std/__type_traits/enable_if.h>
#include <cuda/std/__utility/integer_sequence.h>

namespace cuact {
namespace detail {

/// Value-initialized by default, as cuda::std::tuple's elements are.
template <cuda::std::size_t I, class T>
struct tuple_leaf {
  T value{};
};

template <class Indices, class... T>
struct tuple_base;
template <cuda::std::size_t... I, class... T>
struct tuple_base<cuda::std::index_sequence<I...>, T...> : tuple_leaf<I, T>... {};

template <class... T>
struct tuple : tuple_base<cuda::std::index_sequence_for<T...>, T...> {
  using base = tuple_base<cuda::std::index_sequence_for<T...>, T...>;
  tuple() = default;
  template <int N = sizeof...(T), cuda::std::enable_if_t<(N > 0), int> = 0>
  __host__ __device__ constexpr tuple(const T&... values) : base{{values}...} {}
};

template <cuda::std::size_t I, class T>
__host__ __device__ constexpr T& get_leaf(tuple_leaf<I, T>& leaf) {
  return leaf.value;
}
template <cuda::std::size_t I, class T>
__host__ __device__ constexpr const T& get_leaf(const tuple_leaf<I, T>& leaf) {
  return leaf.value;
}
template <cuda::std::size_t I, class... T>
__host__ __device__ constexpr auto& get(tuple<T...>& t) {
  return get_leaf<I>(t);
}
template <cuda::std::size_t I, class... T>
__host__ __device__ constexpr const auto& get(const tuple<T...>& t) {
  return get_leaf<I>(t);
}

#pragma nv_exec_check_disable
template <class F, class... T, cuda::std::size_t... I>
__host__ __device__ constexpr decltype(auto) apply_indexed(F&& f, const tuple<T...>& t,
                                                           cuda::std::index_sequence<I...>) {
  return f(get<I>(t)...);
}
/// f(elements of t...).
#pragma nv_exec_check_disable
template <class F, class... T>
__host__ __device__ constexpr decltype(auto) apply(F&& f, const tuple<T...>& t) {
  return apply_indexed(f, t, cuda::std::index_sequence_for<T...>{});
}

template <class... A, class... B, cuda::std::size_t... I, cuda::std::size_t... J>
__host__ __device__ constexpr tuple<A..., B...> tuple_cat_indexed(const tuple<A...>& a,
                                                                  const tuple<B...>& b,
                                                                  cuda::std::index_sequence<I...>,
                                                                  cuda::std::index_sequence<J...>) {
  return tuple<A..., B...>{get<I>(a)..., get<J>(b)...};
}
/// The elements of a, then those of b.
template <class... A, class... B>
__host__ __device__ constexpr tuple<A..., B...> tuple_cat(const tuple<A...>& a,
                                                          const tuple<B...>& b) {
  return tuple_cat_indexed(a, b, cuda::std::index_sequence_for<A...>{},
                           cuda::std::index_sequence_for<B...>{});
}

}  // namespace detail
}  // namespace cuact

// Structured bindings (`auto [da, db] = op(a, b, dy)`) look for std::tuple_size and
// std::tuple_element; <utility> declares both and costs little. NVRTC has no host library.
#if !defined(__CUDACC_RTC__)
#include <utility>

namespace std {
template <class... T>
struct tuple_size<::cuact::detail::tuple<T...>> : integral_constant<size_t, sizeof...(T)> {};
template <size_t I, class... T>
struct tuple_element<I, ::cuact::detail::tuple<T...>> {
  using type = remove_reference_t<decltype(::cuact::detail::get<I>(
      declval<::cuact::detail::tuple<T...>&>()))>;
};
}  // namespace std
#endif
