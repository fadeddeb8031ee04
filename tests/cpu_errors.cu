// cuact::last_error_detail() for every rejection that needs no device: null pointers, byte sizes
// that overflow, misaligned pointers, overlaps, and the fused entries' own checks. These run
// before any CUDA runtime call, so they hold on a machine without a GPU; the device-dependent
// texts (pageable memory, another device) are in gpu_errors.cu. Each rejected call must leave
// its outputs untouched.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <cuact/cuact.cuh>

#include "catch.hpp"

namespace {

std::string detail() { return cuact::last_error_detail(); }

constexpr float untouched = 7.0f;

}  // namespace

TEST_CASE("last_error_detail: the public entries' rejections", "[cpu][errors]") {
  std::vector<float> host(1024, untouched);
  float* p = host.data();
  const float* q = host.data();
  const auto invalid = cudaErrorInvalidValue;
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2;

  SECTION("null pointers") {
    CHECK(cuact::forward(cuact::relu{}, static_cast<const float*>(nullptr), p, 8) == invalid);
    CHECK(detail() == "input 0: n > 0 with a null pointer");
    CHECK(cuact::forward(cuact::relu{}, q, static_cast<float*>(nullptr), 8) == invalid);
    CHECK(detail() == "output 0: n > 0 with a null pointer");
    CHECK(cuact::backward(cuact::selu{}, q, static_cast<const float*>(nullptr), p + 512, 8) ==
          invalid);
    CHECK(detail() == "input 1: n > 0 with a null pointer");
    CHECK(cuact::relu_forward_mask(q, p + 512, static_cast<std::uint32_t*>(nullptr), 64) ==
          invalid);
    CHECK(detail() == "output 1: n > 0 with a null pointer");
  }
  SECTION("byte sizes that overflow size_t") {
    CHECK(cuact::forward(cuact::relu{}, q, p + 512, huge) == invalid);
    CHECK(detail() ==
          "output 0: its size in bytes overflows size_t (or a workspace is smaller than needed)");
  }
  SECTION("misaligned pointers") {
    const auto* odd = reinterpret_cast<const float*>(reinterpret_cast<const char*>(q) + 2);
    CHECK(cuact::forward(cuact::relu{}, odd, p + 512, 8) == invalid);
    CHECK(detail() == "input 0 is not aligned to its element type (4 bytes)");
  }
  SECTION("overlaps") {
    CHECK(cuact::forward(cuact::relu{}, q, p + 4, 8) == invalid);  // shifted, not in place
    CHECK(detail() == "input 0 overlaps output 0 without being equal");
    CHECK(cuact::backward(cuact::selu{}, q, q + 512, p, 8) == invalid);  // dx == x
    CHECK(detail() == "input 0 overlaps output 0 without being equal");
    CHECK(cuact::transform(cuact::forward_op<cuact::relu, float>{}, cuact::outputs(p, p + 4), 8,
                           cuact::inputs(q + 512)) == invalid);
    CHECK(detail() == "output 1 overlaps output 0 without being equal");
    CHECK(cuact::relu_forward_mask(q, p + 512, reinterpret_cast<std::uint32_t*>(p), 64) ==
          invalid);  // the mask over the input
    CHECK(detail() == "output 1 overlaps input 0 without being equal");
  }
  SECTION("fused entries") {
    CHECK(cuact::forward_quantize(cuact::gelu{}, q, reinterpret_cast<__nv_fp8_e4m3*>(p + 512), 8,
                                  static_cast<const float*>(nullptr), p + 768) == invalid);
    CHECK(detail() == "forward_quantize: scale: n > 0 with a null pointer");
    CHECK(cuact::forward_quantize(cuact::gelu{}, q, reinterpret_cast<__nv_fp8_e4m3*>(p + 512), 8,
                                  1.0f, nullptr) == invalid);  // amax
    CHECK(detail() == "output 1: n > 0 with a null pointer");
    CHECK(cuact::gated_forward(cuact::silu{}, q, q + 8, p + 4, 8) == invalid);
    CHECK(detail() == "input 0 overlaps output 0 without being equal");
  }
  for (float v : host) REQUIRE(v == untouched);  // (gpu_errors.cu checks no error is left behind)
}

TEST_CASE("last_error_detail: emptied by an accepted call", "[cpu][errors]") {
  std::vector<float> host(16, untouched);
  CHECK(cuact::forward(cuact::relu{}, static_cast<const float*>(nullptr), host.data(), 8) ==
        cudaErrorInvalidValue);
  CHECK_FALSE(detail().empty());
  CHECK(cuact::forward(cuact::relu{}, static_cast<const float*>(nullptr), host.data(), 0) ==
        cudaSuccess);  // n == 0: nothing to do, nothing checked
  CHECK(detail().empty());
  CHECK(cuact::gated_forward_packed(cuact::silu{}, static_cast<const float*>(nullptr), host.data(),
                                    2, 4) == cudaErrorInvalidValue);
  CHECK(detail() == "input 0: n > 0 with a null pointer");
  CHECK(cuact::gated_forward_packed(cuact::silu{}, static_cast<const float*>(nullptr), host.data(),
                                    0, 4) == cudaSuccess);
  CHECK(detail().empty());
}

TEST_CASE("last_error_detail: one text per thread", "[cpu][errors]") {
  std::vector<float> host(16, untouched);
  CHECK(cuact::forward(cuact::relu{}, static_cast<const float*>(nullptr), host.data(), 8) ==
        cudaErrorInvalidValue);
  std::string other = "unset";
  std::thread([&] { other = cuact::last_error_detail(); }).join();
  CHECK(other.empty());
  CHECK(detail() == "input 0: n > 0 with a null pointer");
}
