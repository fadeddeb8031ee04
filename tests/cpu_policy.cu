// What the dispatch layer instantiates and encodes, checked without a GPU: a one_vector_op launch
// that takes bulk tiles runs its op's bulk-tile kernel (one kernel per op, not two), and the L2
// policy that kernels/l2_hint.cuh spells as a constant is cuda::access_property::persisting's.
// The activation concept's hint and cuact::tuning_traits; cuact::select_policy's properties over
// the model devices, and its decisions against those of the launch model it replaced.
#include <cuda/annotated_ptr>

#include <cstdint>
#include <cstdio>
#include <thread>
#include <type_traits>

#include <cuact/activations.cuh>
#include <cuact/elementwise.cuh>
#include <cuact/forward.cuh>
#include <cuact/fused.cuh>

#include "catch.hpp"
#include "common/model_devices.hpp"

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

namespace {
/// Model devices: H100- and H200-like, an H100 without shared-memory facts, A100-like, tiny.
constexpr cuact::detail::device_facts policy_devices[] = {model_h100,
                                                          model_h200,
                                                          model_h100_no_shared,
                                                          {108, 2048, 2.0e12, 1.41e9, 167936, 1024},
                                                          {4, 1024, 1e11, 1e9, 65536, 1024}};
constexpr cuact::detail::cost_hint policy_hints[] = {
    cuact::detail::cost_hint::estimate, cuact::detail::cost_hint::light,
    cuact::detail::cost_hint::heavy, cuact::detail::cost_hint::compute_bound};
/// {bytes per element, arrays}: 16-bit, float and double forwards and backwards, casts.
constexpr std::size_t policy_data[][2] = {{4, 2},  {8, 2}, {16, 2}, {6, 3}, {12, 3},
                                          {24, 3}, {6, 2}, {10, 3}, {5, 2}};
/// {resident blocks per SM, registers, binary version}.
constexpr cuact::detail::kernel_facts policy_kernels[] = {
    {16, 24, 90}, {12, 39, 90}, {8, 60, 90}, {4, 128, 90}, {16, 30, 80}};
constexpr std::size_t policy_sizes[] = {
    1, 1000, 100000, 1u << 20, 1u << 24, std::size_t(1) << 28, std::size_t(1) << 31};

/// Runs f(device index, device, hint, data, kernel, n, max vectors, passes, min vectors) over
/// the grid of inputs above.
template <class F>
void for_each_policy_input(F&& f) {
  int d = 0;
  for (const auto& device : policy_devices) {
    for (const auto hint : policy_hints)
      for (const auto& data : policy_data)
        for (const auto& kernel : policy_kernels)
          for (const std::size_t n : policy_sizes)
            for (const unsigned max_vectors : {1u, 2u, 4u})
              for (const unsigned passes : {2u, 4u})
                for (const unsigned min_vectors : {1u, 4u})
                  f(d, device, hint, data, kernel, n, max_vectors, passes, min_vectors);
    ++d;
  }
}
}  // namespace

TEST_CASE("select_policy: the decisions of the launch model it replaced, every input alike",
          "[cpu][policy]") {
  // FNV-1a over the text below, as the launch model before select_policy printed it for the same
  // inputs (its policy, bulk tiles with and without the gain, the heavy one-vector rule under
  // each math length, the tabulated shape), with the light little-work block since: any changed
  // decision changes the hash, so a change of one is made on purpose.
  std::uint64_t hash = 0xcbf29ce484222325ull;
  char line[512];
  std::size_t lines = 0;
  auto add = [&](int length) {
    for (int i = 0; i < length; ++i) {
      hash ^= static_cast<unsigned char>(line[i]);
      hash *= 0x100000001b3ull;
    }
  };
  for_each_policy_input([&](int d, const auto& device, auto hint, const auto& data,
                            const auto& kernel, std::size_t n, unsigned max_vectors,
                            unsigned passes, unsigned min_vectors) {
    using namespace cuact::detail;
    const std::size_t vectors = n / 4, scalars = n % 4;
    const cuact::policy p = cuact::select_policy(
        device, kernel, {hint, passes},
        {vectors, scalars, 16, data[0], unsigned(data[1]), max_vectors, min_vectors});
    add(std::snprintf(
        line, sizeof line, "d%d h%d b%zu a%zu k%d,%d n%zu m%u p%u v%u -> %u %u %u %u %d %zu", d,
        int(hint), data[0], data[1], kernel.resident_blocks_per_sm, kernel.registers_per_thread, n,
        max_vectors, passes, min_vectors, p.blocks, p.threads_per_block, p.vectors_per_thread,
        p.passes, int(p.heavy), std::size_t(p.dynamic_shared_bytes)));
    for (const bool gains : {false, true}) {
      add(std::snprintf(line, sizeof line, " bt%d",
                        int(takes_bulk_tiles(device, kernel, hint, gains, p, vectors, data[0],
                                             unsigned(data[1])))));
    }
    for (const bool long_16bit : {false, true})
      for (const bool short_float : {false, true})
        add(std::snprintf(line, sizeof line, " 1v%d",
                          int(heavy_runs_one_vector(device, hint, data[0], unsigned(data[1]),
                                                    long_16bit, short_float))));
    const cuact::policy t = tabulated_launch_shape(device, vectors, scalars, max_vectors);
    add(std::snprintf(line, sizeof line, " tab %u %u %u %u tabulates%d\n", t.blocks,
                      t.threads_per_block, t.vectors_per_thread, t.passes,
                      int(tabulates(hint, n))));
    ++lines;
  });
  CHECK(lines == 75600);
  CHECK(hash == 0x6ece7bc2841dc8e1ull);
}

TEST_CASE("select_policy: properties over the model devices", "[cpu][policy]") {
  using cuact::detail::cost_hint;
  for_each_policy_input([&](int, const auto& device, auto hint, const auto& data,
                            const auto& kernel, std::size_t n, unsigned max_vectors,
                            unsigned passes, unsigned min_vectors) {
    const std::size_t vectors = n / 4, scalars = n % 4;
    const cuact::problem work{vectors,           scalars,     16,         data[0],
                              unsigned(data[1]), max_vectors, min_vectors};
    const cuact::policy p = cuact::select_policy(device, kernel, {hint, passes}, work);
    CAPTURE(int(hint), data[0], data[1], kernel.resident_blocks_per_sm, n, max_vectors, passes,
            min_vectors);
    // the grid covers the work (but for a grid capped at gridDim.x's limit, which grid-strides)
    const std::size_t covered = std::size_t(p.blocks) * p.threads_per_block;
    if (p.blocks < unsigned(INT_MAX)) {
      REQUIRE(covered * p.vectors_per_thread * p.passes >= vectors);
      REQUIRE(covered >= scalars);
    }
    REQUIRE(p.vectors_per_thread >= 1);
    REQUIRE(p.vectors_per_thread <= max_vectors);
    REQUIRE(p.passes >= 1);
    REQUIRE(p.algorithm == cuact::algorithm::elementwise);
    // the cost it took the op to be: light is light, anything else heavy
    REQUIRE(p.heavy == (hint != cost_hint::light));
    // more passes than two only for a compute-bound forward, and at most its own
    if (p.passes > 2) {
      REQUIRE(hint == cost_hint::compute_bound);
      REQUIRE(p.passes <= passes);
    }
    // little work: one vector in one pass, so every SM gets work
    const double wave = double(kernel.resident_blocks_per_sm) * 128 * device.sm_count;
    if (double(vectors) < 4 * wave) {
      REQUIRE(p.vectors_per_thread == 1);
      REQUIRE(p.passes == 1);
      // in blocks of 256 threads for a declared-light op, the model's 128 for any other
      REQUIRE(p.threads_per_block == (hint == cost_hint::light ? 256u : 128u));
    }
    // a residency cap only with one vector in one pass, over three arrays
    if (p.dynamic_shared_bytes != 0) {
      REQUIRE(data[1] == 3);
      REQUIRE(p.vectors_per_thread == 1);
      REQUIRE(p.passes == 1);
    }
  });
  // a compute-bound fp32 forward makes its own passes where the fp32 budget is tight (H200-like)
  // and one where it is roomy (H100-like)
  const cuact::detail::kernel_facts full_sm{16, 32, 90};
  const cuact::problem fp32_forward{std::size_t(1) << 28, 0, 16, 8, 2, 1};
  CHECK(cuact::select_policy(model_h200, full_sm, {cost_hint::compute_bound, 4}, fp32_forward)
            .passes == 4);
  CHECK(cuact::select_policy(model_h100, full_sm, {cost_hint::compute_bound, 4}, fp32_forward)
            .passes == 1);
  // the tabulated and bulk-tile shapes say which kernel runs them
  CHECK(cuact::detail::tabulated_launch_shape(model_h200, 1000, 0, 2).algorithm ==
        cuact::algorithm::table);
  CHECK(cuact::detail::bulk_tile_launch_shape({}, 1000, 0).algorithm ==
        cuact::algorithm::bulk_tiles);
}

TEST_CASE("small grids: overlapped launch of sm_90 code up to half a wave, one-vector code",
          "[cpu][policy]") {
  using cuact::detail::cost_hint;
  using cuact::detail::overlaps_previous_kernel;
  const cuact::detail::kernel_facts sm90{16, 32, 90}, sm80{16, 32, 80}, unqueried{16, 32, 0};
  const cuact::detail::kernel_facts half_sm90{8, 64, 90};  // 8 resident blocks: half the wave
  for (const auto& device : {model_h100, model_h200, model_h100_no_shared}) {
    const double wave = 16.0 * 128 * device.sm_count;
    bool overlapped_before = true;  // overlapping is monotone: from some size on, never again
    for (std::size_t n = 8; n <= (std::size_t(1) << 30); n *= 2) {
      CAPTURE(device.bytes_per_second, n);
      const cuact::problem work{n / 4, n % 4, 16, 8, 2, 2};
      for (const auto hint : {cost_hint::light, cost_hint::heavy}) {
        const cuact::policy p = cuact::select_policy(device, sm90, {hint}, work);
        const double threads = double(p.blocks) * p.threads_per_block;
        const bool overlaps = overlaps_previous_kernel(device, sm90, p);
        CHECK(overlaps == (threads <= 0.5 * wave));
        if (hint == cost_hint::light) {
          CHECK((overlapped_before || !overlaps));
          overlapped_before = overlaps;
        }
        // never for code older than sm_90, nor a kernel whose binary was not queried
        CHECK_FALSE(overlaps_previous_kernel(device, sm80, p));
        CHECK_FALSE(overlaps_previous_kernel(device, unqueried, p));
      }
      // the wave is the kernel's own: half the resident blocks, half the grid that overlaps
      const cuact::policy q = cuact::select_policy(device, half_sm90, {cost_hint::light}, work);
      CHECK(overlaps_previous_kernel(device, half_sm90, q) ==
            (double(q.blocks) * q.threads_per_block <= 0.25 * wave));
    }
    // the one-vector kernel runs little work of one vector per thread, nothing else
    const cuact::problem little{std::size_t(1) << 18, 0, 16, 8, 2, 2};
    const cuact::problem much{std::size_t(1) << 24, 0, 16, 8, 2, 2};
    const cuact::policy on_little = cuact::select_policy(device, sm90, {cost_hint::light}, little);
    const cuact::policy on_much = cuact::select_policy(device, sm90, {cost_hint::light}, much);
    CHECK(on_little.vectors_per_thread == 1);
    CHECK(cuact::detail::takes_one_vector_code(device, sm90, on_little, little.vectors));
    CHECK(on_much.vectors_per_thread == 1);
    CHECK_FALSE(cuact::detail::takes_one_vector_code(device, sm90, on_much, much.vectors));
    cuact::policy two = on_little;
    two.vectors_per_thread = 2;
    CHECK_FALSE(cuact::detail::takes_one_vector_code(device, sm90, two, little.vectors));
    // a small call overlaps, a large one does not
    const cuact::problem small{256, 0, 16, 8, 2, 2}, large{std::size_t(1) << 26, 0, 16, 8, 2, 2};
    CHECK(overlaps_previous_kernel(device, sm90,
                                   cuact::select_policy(device, sm90, {cost_hint::light}, small)));
    CHECK_FALSE(overlaps_previous_kernel(
        device, sm90, cuact::select_policy(device, sm90, {cost_hint::light}, large)));
  }
}

namespace {
cuact::policy half_the_threads(const cuact::policy_request&, const cuact::policy& chosen,
                               const void* context) {
  cuact::policy p = chosen;
  p.threads_per_block /= *static_cast<const unsigned*>(context);
  p.blocks = 0;
  return p;
}
/// What choose_launch_shape (launch.cuh) launches for `request`: select_policy's policy, or the
/// calling thread's selector's, fitted to the kernel and the problem (selected_policy).
cuact::policy launched(const cuact::policy_request& request) {
  return cuact::detail::selected_policy(
      cuact::detail::current_policy_selector(), request,
      cuact::select_policy(request.device, request.kernel, request.op, request.work));
}
}  // namespace

TEST_CASE("scoped_policy: a forced policy or a selector reaches the launch, then is undone",
          "[cpu][policy]") {
  using cuact::detail::cost_hint;
  const cuact::policy_request request{
      model_h200, {16, 32, 90}, {cost_hint::light}, {std::size_t(1) << 24, 3, 16, 8, 2, 2}};
  const cuact::policy model = launched(request);
  REQUIRE_FALSE(cuact::detail::policy_overridden());
  {
    const cuact::scoped_policy forced{cuact::policy{0, 512, 2, 4, true}};
    CHECK(cuact::detail::policy_overridden());
    const cuact::policy p = launched(request);
    CHECK(p.threads_per_block == 512);
    CHECK(p.vectors_per_thread == 2);
    CHECK(p.passes == 4);
    // blocks 0: as many as cover the work once
    CHECK(p.blocks == ((std::size_t(1) << 24) + 2 * 4 - 1) / (2 * 4) / 512);
    {
      // nested: the inner override wins, and vectors beyond the kernel's cap are capped
      const cuact::scoped_policy inner{
          cuact::policy{9, 64, 8, 1, false, 1024, cuact::algorithm::bulk_tiles}};
      const cuact::policy q = launched(request);
      CHECK(q.blocks == 9);
      CHECK(q.threads_per_block == 64);
      CHECK(q.vectors_per_thread == 2);
      CHECK(q.dynamic_shared_bytes == 1024);
      CHECK(q.algorithm == cuact::algorithm::bulk_tiles);
    }
    CHECK(launched(request).threads_per_block == 512);  // the outer one again
  }
  CHECK_FALSE(cuact::detail::policy_overridden());
  CHECK(launched(request).threads_per_block == model.threads_per_block);
  {
    const unsigned halve = 2;
    const cuact::scoped_policy selected{cuact::policy_selector{half_the_threads, &halve}};
    const cuact::policy p = launched(request);
    CHECK(p.threads_per_block == model.threads_per_block / 2);
    CHECK(p.vectors_per_thread == model.vectors_per_thread);
    CHECK(std::size_t(p.blocks) * p.threads_per_block * p.vectors_per_thread * p.passes >=
          request.work.vectors);
  }
  // another host thread keeps select_policy's choices (the selector is per thread)
  const cuact::scoped_policy forced{cuact::policy{0, 512, 1, 1, true}};
  unsigned other = 0;
  std::thread([&] { other = launched(request).threads_per_block; }).join();
  CHECK(other == model.threads_per_block);
}

TEST_CASE("scoped_policy: a forced block is fitted to the kernel's largest, in whole warps",
          "[cpu][policy]") {
  using cuact::detail::cost_hint;
  cuact::policy_request request{
      model_h200, {16, 32, 90}, {cost_hint::light}, {std::size_t(1) << 20, 0, 16, 8, 2, 2}};
  const cuact::scoped_policy forced{cuact::policy{0, 1024, 1, 1, true}};
  CHECK(launched(request).threads_per_block == 1024);  // not queried (0): kept
  request.kernel.max_threads_per_block = 1024;
  CHECK(launched(request).threads_per_block == 1024);
  request.kernel.max_threads_per_block = 400;  // registers allow 400: 12 whole warps
  const cuact::policy p = launched(request);
  CHECK(p.threads_per_block == 384);
  CHECK(p.blocks == ((std::size_t(1) << 20) + 383) / 384);
  request.kernel.max_threads_per_block = 20;  // under a warp: the kernel's own limit
  CHECK(launched(request).threads_per_block == 20);
  // no selector: select_policy's choice, untouched
  const cuact::policy chosen =
      cuact::select_policy(request.device, request.kernel, request.op, request.work);
  const cuact::policy none = cuact::detail::selected_policy({}, request, chosen);
  CHECK(none.blocks == chosen.blocks);
  CHECK(none.threads_per_block == chosen.threads_per_block);
  CHECK(none.vectors_per_thread == chosen.vectors_per_thread);
  CHECK(none.passes == chosen.passes);
  CHECK(none.dynamic_shared_bytes == chosen.dynamic_shared_bytes);
}

TEST_CASE("scoped_policy: the ReLU mask forward and the bias gradient take a forced policy",
          "[cpu][policy]") {
  namespace cd = cuact::detail;
  const cd::kernel_facts kernel{16, 32, 90, 0, 1024};
  const std::size_t n = (std::size_t(1) << 22) + 5;
  // the sign-mask forward: select_policy over sign_mask_request is its model shape
  const auto request = cd::sign_mask_request<float, cuact::relu>(model_h200, kernel, n);
  CHECK(request.work.vectors == cd::sign_mask_items<float>(n));
  CHECK(request.work.max_vectors_per_thread == 1);
  const cuact::policy model = cd::sign_mask_launch_shape<float, cuact::relu>(model_h200, kernel, n);
  CHECK(model.threads_per_block == cd::staged_mask_threads);
  {
    const cuact::scoped_policy forced{cuact::policy{0, 256, 4, 2, false, 2048}};
    const cuact::policy p = launched(request);
    CHECK(p.threads_per_block == 256);
    CHECK(p.vectors_per_thread == 1);  // one item per thread: the kernel's cap
    CHECK(p.passes == 2);
    CHECK(p.dynamic_shared_bytes == 2048);
    CHECK(std::size_t(p.blocks) * 256 * 2 >= request.work.vectors);
  }
  // stage 1 of the bias gradient: the modelled grid without a policy, a forced block and grid x
  // under one (the row chunks, grid y, fix the summation order and stay)
  using op_t = cuact::forward_op<cuact::relu, float>;
  auto* data = reinterpret_cast<float*>(std::uintptr_t(256));
  const std::size_t rows = 64, cols = 4096 + 3;
  const auto params =
      cd::make_bias_gradient_params<4>(op_t{}, data, data, data, data, data, rows, cols);
  const cd::row_chunks chunks = cd::bias_gradient_chunks(rows, cols, 4);
  using held = cd::held_vector_t<float, 4>;
  const cuact::policy stage1 = cd::bias_gradient_shape<held>(model_h200, kernel, params, chunks);
  CHECK(stage1.threads_per_block == cd::bias_gradient_block_threads);
  CHECK(stage1.blocks == cd::bias_gradient_launch_grid(params, chunks).x);
  CHECK(stage1.dynamic_shared_bytes == 0);
  {
    const cuact::scoped_policy forced{cuact::policy{0, 64, 2, 3, true, 4096}};
    const cuact::policy p = cd::bias_gradient_shape<held>(model_h200, kernel, params, chunks);
    CHECK(p.threads_per_block == 64);
    CHECK(p.dynamic_shared_bytes == 4096);
    const std::size_t column_threads =
        params.vectors > params.head + params.tail ? params.vectors : params.head + params.tail;
    CHECK(std::size_t(p.blocks) * 64 * p.passes >= column_threads);
  }
}

TEST_CASE("tuning table: the compiled caps are its constants", "[cpu][policy]") {
  namespace cd = cuact::detail;
  using float4_params = decltype(cuact::make_elementwise_params<4>(
      cuact::forward_op<cuact::relu, float>{}, static_cast<float*>(nullptr), 0,
      static_cast<const float*>(nullptr)));
  STATIC_REQUIRE(float4_params::max_vectors_per_thread == cd::max_load_bytes_per_thread / 16);
  using walk_params = cd::rows_params<float4_params>;
  STATIC_REQUIRE(walk_params::max_rows_in_flight ==
                 static_cast<int>(cd::max_walk_load_bytes_per_thread / 16));
  using compute_bound_walk = cd::rows_params<float4_params, 0, cd::compute_bound_walk_load_bytes>;
  STATIC_REQUIRE(compute_bound_walk::max_rows_in_flight ==
                 static_cast<int>(cd::compute_bound_walk_load_bytes / 16));
}
