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
