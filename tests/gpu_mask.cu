// The ReLU bit mask on the device: relu_forward_mask then relu_backward_mask for every dtype and
// width; out and dx equal the reference kernel's relu forward and relu backward from x bit for bit,
// the mask bits are exactly x > 0 with zero bits past n; n straddling mask-byte and word edges,
// misaligned and in-place arrays, misaligned mask words. The harness: common/gpu_cases.hpp.
#include "catch.hpp"
#include "gpu_cases.hpp"

using namespace cuact_test;

TEMPLATE_TEST_CASE("relu mask round trip on the device", "[gpu][backward][mask]",
                   CUACT_TEST_DTYPES) {
  using T = TestType;
  const bool quick = quick_mode();
  const std::vector<std::size_t> sizes =
      quick ? std::vector<std::size_t>{1, 33, 1000}
            : std::vector<std::size_t>{0,  1,  7,  8,  9,    31,   32,
                                       33, 63, 64, 65, 1000, 4099, (std::size_t(1) << 20) + 3};
  guarded_arena arena;
  test_streams streams;
  tally total;
  std::uint64_t seed = 501 + sizeof(T);
  for_each_width<T>([&](auto w) {
    constexpr int W = decltype(w)::value;
    const auto launch = [](mask_case& c, const T* x, T* out, std::uint32_t* mask, const T* dy,
                           T* dx, cudaStream_t s) {
      return launch_mask_case<T, W>(c, x, out, mask, dy, dx, s);
    };
    mask_batch<T> batch(arena, streams, total);
    for (std::size_t n : sizes) {
      for (std::size_t k = 0; k < 16; k += quick ? 7 : 1) {
        const std::size_t other = (k + 1 + k % 7) % 16;
        mask_case c;
        c.width = W;
        c.n = n;
        c.mask_word_offset = k % 4;
        c.x_offset = k;
        c.seed = seed += 2;
        c.out_offset =
            k;  // out co-aligned with x: the vectorized forward when k * sizeof(T) % 16 == 0
        c.dy_offset = k;
        c.dx_offset = other;
        batch.add(c, launch);
        c.seed = seed += 2;  // both in place
        c.forward_in_place = c.backward_in_place = true;
        c.out_offset = c.dx_offset = k;
        c.dy_offset = other;
        batch.add(c, launch);
        c.seed = seed += 2;  // out misaligned against x, dx co-aligned with dy, a direct launch
        c.forward_in_place = c.backward_in_place = false;
        c.out_offset = other;
        c.dy_offset = c.dx_offset = k;
        c.launch.direct = true;
        c.launch.grid_choice = static_cast<unsigned>(k);
        c.launch.block_choice = static_cast<unsigned>(k + n);
        c.launch.stream = static_cast<int>(k % 3);
        batch.add(c, launch);
      }
    }
    batch.flush(launch);
  });
  total.print("relu mask round trip " + type_name<T>());
  CHECK(total.failed_cases == 0);
  CHECK(total.cases > 0);
}

TEMPLATE_TEST_CASE("relu mask forward: the staged kernel fills every thread slot of an SM",
                   "[gpu][mask]", float, double) {
  // One 16-byte vector per thread keeps too few bytes in flight at less than full residency:
  // the kernel must fit 32 registers, whose count the per-byte tail sets (kernels/relu_mask.cuh).
  namespace cd = cuact::detail;
  const auto kernel =
      cd::sign_mask_forward_kernel<TestType, cuact::forward_op<cuact::relu, TestType>>;
  int device = 0, threads_per_sm = 0, blocks = 0;
  CUACT_CUDA_REQUIRE(cudaGetDevice(&device));
  CUACT_CUDA_REQUIRE(
      cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  CUACT_CUDA_REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, kernel, static_cast<int>(cd::staged_mask_threads), 0));
  cudaFuncAttributes attributes{};
  CUACT_CUDA_REQUIRE(cudaFuncGetAttributes(&attributes, kernel));
  CAPTURE(type_name<TestType>(), attributes.numRegs, blocks);
  CHECK(blocks * static_cast<int>(cd::staged_mask_threads) == threads_per_sm);
}
