// What the dispatch layer instantiates and encodes, checked without a GPU: a one_vector_op launch
// that takes bulk tiles runs its op's bulk-tile kernel (one kernel per op, not two), and the L2
// policy that kernels/l2_hint.cuh spells as a constant is cuda::access_property::persisting's.
#include <cuda/annotated_ptr>

#include <cstdint>
#include <type_traits>

#include <cuact/activations.cuh>
#include <cuact/elementwise.cuh>
#include <cuact/forward.cuh>
#include <cuact/fused.cuh>

#include "catch.hpp"

TEST_CASE("policy: the L2 hint's constant is cuda::access_property::persisting's policy",
          "[cpu][policy]") {
  constexpr auto persisting =
      static_cast<std::uint64_t>(cuda::access_property(cuda::access_property::persisting{}));
  STATIC_REQUIRE(cuact::detail::l2_persisting_policy == persisting);
}

TEST_CASE("policy: a one-vector launch in bulk tiles runs its op's bulk-tile kernel",
          "[cpu][policy]") {
  using cuact::detail::bulk_params_of;
  using cuact::detail::one_vector_op;
  using op_t = cuact::forward_op<cuact::relu, float>;
  auto* data = reinterpret_cast<float*>(std::uintptr_t(256));
  const auto params =
      cuact::make_elementwise_params<4>(op_t{}, data, 4096, static_cast<const float*>(data));
  const auto one_vector = cuact::detail::with_op(params, one_vector_op<op_t>{params.op});
  using params_t = std::remove_const_t<decltype(params)>;
  using stripped_t =
      std::remove_cv_t<std::remove_reference_t<decltype(bulk_params_of(one_vector))>>;
  STATIC_REQUIRE(std::is_same_v<stripped_t, params_t>);
  STATIC_REQUIRE(std::is_same_v<decltype(bulk_params_of(params)), const params_t&>);
  const auto stripped = bulk_params_of(one_vector);
  CHECK(stripped.vectors == params.vectors);
  CHECK(stripped.head == params.head);
  CHECK(stripped.tail == params.tail);
  CHECK(cuact::detail::bulk_tile_kernel_for(stripped) ==
        cuact::detail::bulk_tile_kernel<params_t, false>);
}

namespace {
struct hinted_heavy {
  static constexpr cuact::cost cost = cuact::cost::heavy;
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return x;
  }
};
struct hinted_compute_bound {
  static constexpr cuact::cost cost = cuact::cost::compute_bound;
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return x;
  }
};
struct unhinted {
  template <class C>
  CUACT_HOST_DEVICE C operator()(C x) const {
    return x;
  }
};
/// The specialisations in cuact/tuning.cuh restate their activation's hint: it must agree.
template <class A>
constexpr bool traits_agree_with_hint() {
  using cuact::detail::cost_hint;
  constexpr cost_hint hint = cuact::detail::hint_of<A>;
  return cuact::tuning_traits<A>::forward_cost == hint &&
         cuact::tuning_traits<A>::declared_cost == cuact::detail::outside_forward(hint);
}
}  // namespace

TEST_CASE("concept: a hint alone gives the defaults; the built-ins' traits agree with their hints",
          "[cpu][policy][concept]") {
  using cuact::detail::cost_hint;
  using cuact::detail::default_compute_bound_passes;
  using heavy = cuact::tuning_traits<hinted_heavy>;
  STATIC_REQUIRE(heavy::declared_cost == cost_hint::heavy);
  STATIC_REQUIRE(heavy::forward_cost == cost_hint::heavy);
  STATIC_REQUIRE(heavy::from_output_cost == cost_hint::heavy);
  STATIC_REQUIRE(!heavy::has_long_16bit_math && !heavy::has_short_float_math &&
                 !heavy::gains_from_bulk_tiles && !heavy::has_short_bf16_math);
  using bound = cuact::tuning_traits<hinted_compute_bound>;
  STATIC_REQUIRE(bound::forward_cost == cost_hint::compute_bound);
  STATIC_REQUIRE(bound::declared_cost == cost_hint::heavy);
  STATIC_REQUIRE(bound::compute_bound_passes == default_compute_bound_passes);
  using none = cuact::tuning_traits<unhinted>;
  STATIC_REQUIRE(none::declared_cost == cost_hint::estimate);
  STATIC_REQUIRE(none::forward_cost == cost_hint::estimate);
  STATIC_REQUIRE(cuact::detail::forward_cost<cuact::forward_op<unhinted, float>> ==
                 cost_hint::estimate);
  // the forward of a hinted user functor reaches the launch with its hint
  STATIC_REQUIRE(cuact::detail::forward_cost<cuact::forward_op<hinted_compute_bound, float>> ==
                 cost_hint::compute_bound);
  STATIC_REQUIRE(cuact::detail::declared_cost<cuact::gradient_op<hinted_compute_bound, float>> ==
                 cost_hint::heavy);
  STATIC_REQUIRE(traits_agree_with_hint<cuact::relu>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::selu>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::softsign>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::elu>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::celu>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::sigmoid>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::silu>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::logsigmoid>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::softplus>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::mish>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::tanh>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::tanhshrink>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::gelu>());
  STATIC_REQUIRE(traits_agree_with_hint<cuact::gelu_tanh>());
  // what the built-ins' specialisations add
  STATIC_REQUIRE(cuact::tuning_traits<cuact::gelu>::compute_bound_passes == 4);
  STATIC_REQUIRE(cuact::tuning_traits<cuact::sigmoid>::from_output_cost == cost_hint::light);
  STATIC_REQUIRE(cuact::tuning_traits<cuact::silu>::from_output_cost == cost_hint::heavy);
  STATIC_REQUIRE(cuact::tuning_traits<cuact::tanh>::has_short_bf16_math);
  STATIC_REQUIRE(cuact::tuning_traits<cuact::softplus>::has_long_16bit_math);
  STATIC_REQUIRE(!cuact::tuning_traits<cuact::gelu>::gains_from_bulk_tiles);
  STATIC_REQUIRE(cuact::tuning_traits<cuact::mish>::gains_from_bulk_tiles);
}
