// The ReLU bit mask on the host: relu_mask_forward_thread (the forward kernel's per-thread body)
// under simulated grids with every access recorded, and the backward's operation through the
// elementwise body, for n straddling word edges and misaligned arrays.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include <cuact/cuact.cuh>

#include "access_log.hpp"
#include "grid_simulation.hpp"
#include "test_support.hpp"

using namespace cuact_test;

TEMPLATE_TEST_CASE("relu mask forward and backward under simulated grids", "[cpu][mask]", float, double,
                   __half, __nv_bfloat16) {
  using T = TestType;
  std::mt19937_64 rng(Catch::rngSeed() + 21);
  for (std::size_t n : {0, 1, 2, 31, 32, 33, 63, 64, 65, 95, 1000, 4099}) {
    for (std::size_t offset : {0, 1, 3, 8}) {
      for (bool in_place : {false, true}) {
        CAPTURE(type_name<T>(), n, offset, in_place);
        const std::vector<T> x = random_values<T>(n, rng);
        const std::vector<T> dy = random_values<T>(n, rng);
        host_array<T> in_storage(n + 16), out_storage(n + 16), dx_storage(n + 16);
        const std::size_t words = cuact::relu_mask_words(n);
        std::vector<std::uint32_t> mask(words + 1);
        T* in = in_storage.get() + offset;
        T* out = in_place ? in : out_storage.get() + offset;
        const auto launcher = cuact::detail::launch_dims<T, cuact::relu, 1>(cuact::detail::relu_mask_bytes(n));  // a thread per mask byte
        const std::vector<grid_shape> grids{{1, 32}, {2, 7}, {launcher.first.x, launcher.second.x}};
        for (const grid_shape grid : grids) {
          CAPTURE(grid.blocks, grid.threads);
          std::copy(x.begin(), x.end(), in);
          if (!in_place) std::fill(out, out + n, poison_for(round_to<T>(1.0)));
          std::fill(mask.begin(), mask.end(), 0xdeadbeefu);
          const auto params = cuact::detail::make_relu_mask_params<T>(in, out, mask.data(), n);
          CHECK(params.vectorized == (offset * sizeof(T) % 16 == 0));
          access_log log;
          const std::size_t in_region = log.add_region(in, n * sizeof(T));
          const std::size_t out_region = in_place ? in_region : log.add_region(out, n * sizeof(T));
          const std::size_t mask_region = log.add_region(mask.data(), words * sizeof(std::uint32_t));
          simulate_grid(log, grid.blocks, grid.threads, [&](std::size_t t, std::size_t num_threads) {
            cuact::detail::relu_mask_forward_thread(params, t, num_threads, recording_access{&log});
          });
          INFO((log.errors().empty() ? std::string() : log.errors().front()));
          REQUIRE(log.errors().empty());
          REQUIRE(log.each_byte(in_region, 1, in_place ? 1 : 0));
          if (!in_place) REQUIRE(log.each_byte(out_region, 0, 1));
          REQUIRE(log.each_byte(mask_region, 0, 1));
          REQUIRE(mask[words] == 0xdeadbeefu);  // the word past the end is untouched
          for (std::size_t i = 0; i < n; ++i) {
            const double xi = to_double(x[i]);
            REQUIRE(matches(out[i], relu_ref(xi), 0));
            REQUIRE(((mask[i / 32] >> (i % 32)) & 1u) == (xi > 0 ? 1u : 0u));
          }
          for (std::size_t i = n; i < words * 32; ++i) REQUIRE(((mask[i / 32] >> (i % 32)) & 1u) == 0u);

          // backward from the mask equals backward from x, bit for bit
          T* dx = dx_storage.get() + offset;
          std::copy(dy.begin(), dy.end(), dx);  // in place over dy
          const auto back = cuact::make_elementwise_params<16 / sizeof(T)>(
              cuact::detail::relu_mask_gradient{mask.data()}, dx, n, static_cast<const T*>(dx));
          access_log back_log;
          back_log.add_region(dx, n * sizeof(T));
          simulate_grid(back_log, grid.blocks, grid.threads, [&](std::size_t t, std::size_t num_threads) {
            cuact::elementwise_thread(back, t, num_threads, recording_access{&back_log});
          });
          REQUIRE(back_log.errors().empty());
          REQUIRE(back_log.each_byte(0, 1, 1));
          for (std::size_t i = 0; i < n; ++i) {
            const T from_x = cuact::detail::from_compute<T>(cuact::detail::gradient_from_input<cuact::relu>{}(
                cuact::detail::to_compute(x[i]), cuact::detail::to_compute(dy[i])));
            REQUIRE(bits_of(dx[i]) == bits_of(from_x));
          }
        }
      }
    }
  }
}
