// Bad arguments through every public entry: forward, forward in place, backward,
// backward_from_output, relu_forward_mask, relu_backward_mask and cuact::transform (two outputs of
// two element types). After every rejected call: the expected error, nothing written anywhere (all
// device buffers compared byte for byte with a snapshot, and the pageable host array passed in),
// no error left in the runtime (cudaGetLastError), and a following valid call of the same entry
// succeeds with the right output. Every rejection leaves its reason in cuact::last_error_detail()
// (the texts that need a device are checked here, the others in cpu_errors.cu), and the valid
// call empties it.
//
// The rules: an output may be exactly one of the inputs (same pointer, same byte size: in place);
// for backward and backward_from_output only dy may be dx, never x or y; any other overlap of an
// output or of the mask with any array is cudaErrorInvalidValue, as are null and misaligned
// pointers, pageable host memory and byte sizes overflowing size_t; memory of another device is
// cudaErrorInvalidDevice; n == 0 succeeds without looking at the pointers.
//
// Not tested: an invalid (e.g. destroyed) stream. Passing one is undefined behaviour in the CUDA
// runtime, and cuact forwards the stream to cudaLaunchKernelEx unchecked.
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "catch.hpp"
#include "device.hpp"

namespace cuact_test {
// Ops launched as kernels live in a named namespace: a type with internal linkage would give the
// kernel internal linkage, which its hidden visibility attribute warns about.

/// cuact::transform's op here: two inputs (fp32), two outputs (bf16 relu(x), fp32 x * dy).
struct relu_and_product {
  template <class C>
  __host__ __device__ cuda::std::tuple<C, C> operator()(C x, C dy) const {
    return {x > C(0) || x != x ? x : C(0), x * dy};
  }
};
}  // namespace cuact_test

namespace {
using namespace cuact_test;
using bf16 = __nv_bfloat16;

constexpr std::size_t n = 1000;              // elements of each array in the calls
constexpr std::size_t region_bytes = 16384;  // each array's region: room for shifted pointers
constexpr std::size_t words = cuact::relu_mask_words(n);

enum class entry {
  forward,
  forward_in_place,
  backward,
  backward_from_output,
  relu_forward_mask,
  relu_backward_mask,
  transform,
};

const char* entry_name(entry e) {
  switch (e) {
    case entry::forward:
      return "forward";
    case entry::forward_in_place:
      return "forward in place";
    case entry::backward:
      return "backward";
    case entry::backward_from_output:
      return "backward_from_output";
    case entry::relu_forward_mask:
      return "relu_forward_mask";
    case entry::relu_backward_mask:
      return "relu_backward_mask";
    default:
      return "transform";
  }
}

/// One allocation with five regions: x and dy (input values), out, mask and out2 (a byte pattern
/// no result here has), each `region_bytes` long and 256-byte aligned.
struct fixture {
  device_memory memory{5 * region_bytes};
  float* x = reinterpret_cast<float*>(memory.get());
  float* dy = reinterpret_cast<float*>(memory.get() + region_bytes);
  float* out = reinterpret_cast<float*>(memory.get() + 2 * region_bytes);
  std::uint32_t* mask = reinterpret_cast<std::uint32_t*>(memory.get() + 3 * region_bytes);
  float* out2 = reinterpret_cast<float*>(memory.get() + 4 * region_bytes);
  bf16* out_bf16 = reinterpret_cast<bf16*>(out);
  std::vector<unsigned char> initial;  // the whole allocation as reset() writes it

  fixture() {
    initial.assign(5 * region_bytes, 0x7F);
    for (std::size_t i = 0; i < region_bytes / sizeof(float); ++i) {
      const float xi = hash_value<float>(7, i), dyi = hash_value<float>(8, i);
      std::memcpy(initial.data() + i * sizeof(float), &xi, sizeof xi);
      std::memcpy(initial.data() + region_bytes + i * sizeof(float), &dyi, sizeof dyi);
    }
    reset();
  }
  void reset() {
    CUACT_CUDA_REQUIRE(
        cudaMemcpy(memory.get(), initial.data(), initial.size(), cudaMemcpyHostToDevice));
  }
  std::vector<unsigned char> contents() const {
    std::vector<unsigned char> now(initial.size());
    CUACT_CUDA_REQUIRE(cudaMemcpy(now.data(), memory.get(), now.size(), cudaMemcpyDeviceToHost));
    return now;
  }
  template <class T>
  static T read(const std::vector<unsigned char>& bytes, std::size_t region, std::size_t i) {
    T v;
    std::memcpy(&v, bytes.data() + region * region_bytes + i * sizeof(T), sizeof v);
    return v;
  }

  /// A valid call of `e` on fresh data succeeds and gives what the op gives on the host; the
  /// fixture is reset afterwards.
  void expect_valid_call(entry e) {
    reset();
    cudaError_t status = cudaSuccess;
    switch (e) {
      case entry::forward:
        status = cuact::forward(cuact::relu{}, x, out, n);
        break;
      case entry::forward_in_place:
        CUACT_CUDA_REQUIRE(cudaMemcpy(out, x, n * sizeof(float), cudaMemcpyDeviceToDevice));
        status = cuact::forward(cuact::relu{}, out, n);
        break;
      case entry::backward:
        status = cuact::backward(cuact::relu{}, x, dy, out, n);
        break;
      case entry::backward_from_output:
        status = cuact::backward_from_output(cuact::relu{}, x, dy, out, n);
        break;
      case entry::relu_forward_mask:
        status = cuact::relu_forward_mask(x, out, mask, n);
        break;
      case entry::relu_backward_mask:
        CUACT_CUDA_REQUIRE(cuact::relu_forward_mask(x, out, mask, n));  // a mask to read
        status = cuact::relu_backward_mask(mask, dy, out, n);
        break;
      case entry::transform:
        status = cuact::transform(relu_and_product{}, cuact::outputs(out_bf16, out2), n,
                                  cuact::inputs(x, dy));
        break;
    }
    INFO("valid call of " << entry_name(e) << " after a rejected one");
    REQUIRE(status == cudaSuccess);
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
    const std::vector<unsigned char> now = contents();
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const float xi = read<float>(initial, 0, i), dyi = read<float>(initial, 1, i);
      if (e == entry::transform) {
        const auto r = evaluate<bf16, float>(relu_and_product{}, i, xi, dyi);
        if (!same_result(read<bf16>(now, 2, i), cuda::std::get<0>(r))) ++bad;
        if (!same_result(read<float>(now, 4, i), cuda::std::get<1>(r))) ++bad;
        continue;
      }
      const bool gradient = e == entry::backward || e == entry::backward_from_output ||
                            e == entry::relu_backward_mask;
      const float expected =
          gradient
              ? cuda::std::get<0>(
                    evaluate<float>(cuact::gradient_op<cuact::relu, float>{}, i, xi, dyi))
              : cuda::std::get<0>(evaluate<float>(cuact::forward_op<cuact::relu, float>{}, i, xi));
      if (!same_result(read<float>(now, 2, i), expected)) ++bad;
    }
    CHECK(bad == 0);
    if (e == entry::relu_forward_mask || e == entry::relu_backward_mask) {
      std::uint32_t expected[words] = {};
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t b = cuact::relu_mask_bit<float>(i, n);
        if (read<float>(initial, 0, i) > 0) expected[b / 32] |= std::uint32_t(1) << (b % 32);
      }
      std::size_t bad_words = 0;
      for (std::size_t w = 0; w < words; ++w) {
        if (read<std::uint32_t>(now, 3, w) != expected[w]) ++bad_words;
      }
      CHECK(bad_words == 0);
    }
    reset();
  }
};

/// cuact::last_error_detail() right after expect_rejected's rejected call.
std::string rejection_detail;

/// `call` returns `expected`, leaves every byte of the fixture (and `host_array`, a pageable host
/// array passed to the call, when given) unchanged and no error behind; then a valid call works.
template <class Call, class H = float>
void expect_rejected(fixture& f, entry e, cudaError_t expected, const char* what, Call&& call,
                     const std::vector<H>* host_array = nullptr) {
  INFO(entry_name(e) << ": " << what);
  f.reset();
  const std::vector<H> host_before = host_array ? *host_array : std::vector<H>();
  const cudaError_t status = call();
  const cudaError_t last = cudaGetLastError();
  rejection_detail = cuact::last_error_detail();
  INFO("returned " << cudaGetErrorName(status) << ", expected " << cudaGetErrorName(expected)
                   << ", detail \"" << rejection_detail << "\"");
  CHECK(status == expected);
  CHECK_FALSE(rejection_detail.empty());
  CHECK(last == cudaSuccess);
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  const bool unchanged = f.contents() == f.initial;
  CHECK(unchanged);
  if (host_array)
    CHECK(std::memcmp(host_array->data(), host_before.data(), host_before.size() * sizeof(H)) == 0);
  f.expect_valid_call(e);
  CHECK(std::string(cuact::last_error_detail()).empty());
}

template <class T>
T* shift_bytes(const void* p, std::ptrdiff_t bytes) {
  return reinterpret_cast<T*>(const_cast<char*>(static_cast<const char*>(p)) + bytes);
}

}  // namespace

TEST_CASE("n == 0 succeeds whatever the pointers", "[gpu][errors]") {
  fixture f;
  float* const null = nullptr;
  bf16* const null_bf16 = nullptr;
  std::uint32_t* const null_mask = nullptr;
  float* const odd = shift_bytes<float>(f.x, 1);
  std::uint32_t* const odd_mask = shift_bytes<std::uint32_t>(f.mask, 2);
  const std::vector<std::pair<const char*, cudaError_t>> calls = {
      {"forward null", cuact::forward(cuact::relu{}, null, null, 0)},
      {"forward in place null", cuact::forward(cuact::relu{}, null, 0)},
      {"backward null", cuact::backward(cuact::selu{}, null, null, null, 0)},
      {"backward_from_output null",
       cuact::backward_from_output(cuact::selu{}, null, null, null, 0)},
      {"relu_forward_mask null", cuact::relu_forward_mask(null, null, null_mask, 0)},
      {"relu_backward_mask null", cuact::relu_backward_mask(null_mask, null, null, 0)},
      {"transform null", cuact::transform(relu_and_product{}, cuact::outputs(null_bf16, null), 0,
                                          cuact::inputs(static_cast<const float*>(null),
                                                        static_cast<const float*>(null)))},
      {"forward misaligned", cuact::forward(cuact::relu{}, odd, odd, 0)},
      {"backward overlapping", cuact::backward(cuact::relu{}, f.x, f.x, f.x, 0)},
      {"transform overlapping outputs",
       cuact::transform(
           relu_and_product{}, cuact::outputs(f.out_bf16, f.out), 0,
           cuact::inputs(static_cast<const float*>(f.x), static_cast<const float*>(f.dy)))},
      {"relu_forward_mask misaligned mask", cuact::relu_forward_mask(f.x, f.out, odd_mask, 0)},
      {"relu_backward_mask misaligned mask", cuact::relu_backward_mask(odd_mask, f.dy, f.out, 0)},
  };
  for (const auto& [what, status] : calls) {
    INFO(what << " returned " << cudaGetErrorName(status));
    CHECK(status == cudaSuccess);
  }
  CHECK(cudaGetLastError() == cudaSuccess);
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  const bool unchanged = f.contents() == f.initial;  // nothing launched, nothing written
  CHECK(unchanged);
}

namespace {
/// cuact::transform(relu_and_product) with the given arrays.
cudaError_t transform_call(bf16* out, float* out2, const float* x, const float* dy,
                           std::size_t count = n) {
  return cuact::transform(relu_and_product{}, cuact::outputs(out, out2), count,
                          cuact::inputs(x, dy));
}
}  // namespace

TEST_CASE("null pointers with n > 0", "[gpu][errors]") {
  fixture f;
  float* const null = nullptr;
  bf16* const null_bf16 = nullptr;
  std::uint32_t* const null_mask = nullptr;
  const cudaError_t invalid = cudaErrorInvalidValue;
  expect_rejected(f, entry::forward, invalid, "null in",
                  [&] { return cuact::forward(cuact::relu{}, null, f.out, n); });
  expect_rejected(f, entry::forward, invalid, "null out",
                  [&] { return cuact::forward(cuact::relu{}, f.x, null, n); });
  expect_rejected(f, entry::forward_in_place, invalid, "null data",
                  [&] { return cuact::forward(cuact::relu{}, null, n); });
  expect_rejected(f, entry::backward, invalid, "null x",
                  [&] { return cuact::backward(cuact::relu{}, null, f.dy, f.out, n); });
  expect_rejected(f, entry::backward, invalid, "null dy",
                  [&] { return cuact::backward(cuact::relu{}, f.x, null, f.out, n); });
  expect_rejected(f, entry::backward, invalid, "null dx",
                  [&] { return cuact::backward(cuact::relu{}, f.x, f.dy, null, n); });
  expect_rejected(f, entry::backward_from_output, invalid, "null y",
                  [&] { return cuact::backward_from_output(cuact::selu{}, null, f.dy, f.out, n); });
  expect_rejected(f, entry::backward_from_output, invalid, "null dy",
                  [&] { return cuact::backward_from_output(cuact::selu{}, f.x, null, f.out, n); });
  expect_rejected(f, entry::backward_from_output, invalid, "null dx",
                  [&] { return cuact::backward_from_output(cuact::selu{}, f.x, f.dy, null, n); });
  expect_rejected(f, entry::relu_forward_mask, invalid, "null in",
                  [&] { return cuact::relu_forward_mask(null, f.out, f.mask, n); });
  expect_rejected(f, entry::relu_forward_mask, invalid, "null out",
                  [&] { return cuact::relu_forward_mask(f.x, null, f.mask, n); });
  expect_rejected(f, entry::relu_forward_mask, invalid, "null mask",
                  [&] { return cuact::relu_forward_mask(f.x, f.out, null_mask, n); });
  expect_rejected(f, entry::relu_backward_mask, invalid, "null mask",
                  [&] { return cuact::relu_backward_mask(null_mask, f.dy, f.out, n); });
  expect_rejected(f, entry::relu_backward_mask, invalid, "null dy",
                  [&] { return cuact::relu_backward_mask(f.mask, null, f.out, n); });
  expect_rejected(f, entry::relu_backward_mask, invalid, "null dx",
                  [&] { return cuact::relu_backward_mask(f.mask, f.dy, null, n); });
  expect_rejected(f, entry::transform, invalid, "null output 0",
                  [&] { return transform_call(null_bf16, f.out2, f.x, f.dy); });
  expect_rejected(f, entry::transform, invalid, "null output 1",
                  [&] { return transform_call(f.out_bf16, null, f.x, f.dy); });
  expect_rejected(f, entry::transform, invalid, "null input 0",
                  [&] { return transform_call(f.out_bf16, f.out2, null, f.dy); });
  expect_rejected(f, entry::transform, invalid, "null input 1",
                  [&] { return transform_call(f.out_bf16, f.out2, f.x, null); });
}

TEST_CASE("overlapping arrays", "[gpu][errors]") {
  fixture f;
  const cudaError_t invalid = cudaErrorInvalidValue;
  float* const x = f.x;
  float* const dy = f.dy;
  float* const out = f.out;
  std::uint32_t* const mask = f.mask;
  // forward: out == in is in place; any other overlap is an error
  expect_rejected(f, entry::forward, invalid, "out = in + 1",
                  [&] { return cuact::forward(cuact::relu{}, x, x + 1, n); });
  expect_rejected(f, entry::forward, invalid, "in = out + 1",
                  [&] { return cuact::forward(cuact::relu{}, x + 1, x, n); });
  expect_rejected(f, entry::forward, invalid, "out = in + n - 1",
                  [&] { return cuact::forward(cuact::relu{}, x, x + n - 1, n); });
  // backward: dx may equal dy, never x (or y)
  for (int from_output = 0; from_output < 2; ++from_output) {
    const entry e = from_output ? entry::backward_from_output : entry::backward;
    const auto call = [from_output](const float* a, const float* b, float* c) {
      return from_output ? cuact::backward_from_output(cuact::selu{}, a, b, c, n)
                         : cuact::backward(cuact::selu{}, a, b, c, n);
    };
    expect_rejected(f, e, invalid, "dx == x", [&] { return call(x, dy, x); });
    expect_rejected(f, e, invalid, "dx = x + 1", [&] { return call(x, dy, x + 1); });
    expect_rejected(f, e, invalid, "x = dx + 1", [&] { return call(out + 1, dy, out); });
    expect_rejected(f, e, invalid, "dx = dy + 1", [&] { return call(x, dy, dy + 1); });
    expect_rejected(f, e, invalid, "dy = dx + 1", [&] { return call(x, out + 1, out); });
    expect_rejected(f, e, invalid, "dx = dy - (n - 1)", [&] { return call(x, dy + n - 1, dy); });
  }
  // relu_forward_mask: out may equal in; the mask overlaps neither
  expect_rejected(f, entry::relu_forward_mask, invalid, "out = in + 1",
                  [&] { return cuact::relu_forward_mask(x, x + 1, mask, n); });
  expect_rejected(f, entry::relu_forward_mask, invalid, "mask inside in", [&] {
    return cuact::relu_forward_mask(x, out, reinterpret_cast<std::uint32_t*>(x + 10), n);
  });
  expect_rejected(f, entry::relu_forward_mask, invalid, "mask == in", [&] {
    return cuact::relu_forward_mask(x, out, reinterpret_cast<std::uint32_t*>(x), n);
  });
  expect_rejected(f, entry::relu_forward_mask, invalid, "mask inside out", [&] {
    return cuact::relu_forward_mask(x, out, reinterpret_cast<std::uint32_t*>(out + n - 1), n);
  });
  expect_rejected(f, entry::relu_forward_mask, invalid, "mask ends inside in", [&] {
    return cuact::relu_forward_mask(x + words, out, reinterpret_cast<std::uint32_t*>(x + 1), n);
  });
  expect_rejected(f, entry::relu_forward_mask, invalid, "mask inside in, in place", [&] {
    return cuact::relu_forward_mask(out, out, reinterpret_cast<std::uint32_t*>(out + 5), n);
  });
  // relu_backward_mask: dx may equal dy; the mask overlaps neither
  expect_rejected(f, entry::relu_backward_mask, invalid, "dx = dy + 1",
                  [&] { return cuact::relu_backward_mask(mask, dy, dy + 1, n); });
  expect_rejected(f, entry::relu_backward_mask, invalid, "mask inside dx", [&] {
    return cuact::relu_backward_mask(reinterpret_cast<const std::uint32_t*>(out + 3), dy, out, n);
  });
  expect_rejected(f, entry::relu_backward_mask, invalid, "mask inside dy", [&] {
    return cuact::relu_backward_mask(reinterpret_cast<const std::uint32_t*>(dy + 3), dy, out, n);
  });
  // transform: an input may be exactly an output (same pointer and byte size); nothing else overlaps
  bf16* const out_bf16 = f.out_bf16;
  float* const out2 = f.out2;
  expect_rejected(f, entry::transform, invalid, "output 1 inside output 0", [&] {
    return transform_call(out_bf16, reinterpret_cast<float*>(out_bf16 + 500), x, dy);
  });
  expect_rejected(f, entry::transform, invalid, "output 1 == output 0 (same bytes)",
                  [&] { return transform_call(reinterpret_cast<bf16*>(out2), out2, x, dy); });
  expect_rejected(f, entry::transform, invalid, "input 0 at output 0's address, another byte size",
                  [&] { return transform_call(reinterpret_cast<bf16*>(x), out2, x, dy); });
  expect_rejected(f, entry::transform, invalid, "input 1 = output 1 + 1",
                  [&] { return transform_call(out_bf16, out2, x, out2 + 1); });
  expect_rejected(f, entry::transform, invalid, "output 1 = input 0 + 3",
                  [&] { return transform_call(out_bf16, x + 3, x, dy); });
  expect_rejected(f, entry::transform, invalid, "output 0 ends inside input 1",
                  [&] { return transform_call(reinterpret_cast<bf16*>(dy) - n + 2, out2, x, dy); });
}

TEST_CASE("adjacent arrays are not overlapping, exact aliasing is in place", "[gpu][errors]") {
  fixture f;
  // in [x, x + n), out [x + n, x + 2n): they touch but share no byte
  REQUIRE(cuact::forward(cuact::relu{}, f.x, f.x + n, n) == cudaSuccess);
  REQUIRE(cuact::forward(cuact::relu{}, f.x + n, f.x, n) ==
          cudaSuccess);  // reads what the first wrote
  REQUIRE(cuact::backward(cuact::relu{}, f.dy, f.dy + n, f.dy + 2 * n, n) == cudaSuccess);
  REQUIRE(cuact::backward(cuact::relu{}, f.dy + 2 * n, f.out, f.dy + n, n) == cudaSuccess);
  // the mask right after out, and right before in
  auto* const after_out = reinterpret_cast<std::uint32_t*>(f.out + n);
  REQUIRE(cuact::relu_forward_mask(f.x, f.out, after_out, n) == cudaSuccess);
  auto* const before_in = reinterpret_cast<std::uint32_t*>(f.out + n - words);
  REQUIRE(cuact::relu_forward_mask(f.out + n, f.dy, before_in, n) == cudaSuccess);
  REQUIRE(cuact::relu_backward_mask(after_out, f.dy, f.out, n) ==
          cudaSuccess);  // dx ends at the mask
  REQUIRE(cuact::relu_backward_mask(before_in, f.out + n, f.dy, n) ==
          cudaSuccess);  // dy starts after it
  // transform: output 0 (bf16) right after output 1, input 0 exactly output 1 (in place), inputs overlapping
  REQUIRE(transform_call(reinterpret_cast<bf16*>(f.out2 + n), f.out2, f.x, f.dy) == cudaSuccess);
  REQUIRE(transform_call(f.out_bf16, f.out2, f.out2, f.dy) == cudaSuccess);
  REQUIRE(transform_call(f.out_bf16, f.out2, f.x, f.x + 1) == cudaSuccess);
  CHECK(cudaGetLastError() == cudaSuccess);
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  // the exact-alias forms work and are right (expect_valid_call checks the values)
  f.expect_valid_call(entry::forward_in_place);
  CHECK(cuact::relu_forward_mask(f.out, f.out, f.mask, n) == cudaSuccess);
  CHECK(cuact::backward(cuact::relu{}, f.x, f.out, f.out, n) == cudaSuccess);
  CHECK(cuact::relu_backward_mask(f.mask, f.out, f.out, n) == cudaSuccess);
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  f.expect_valid_call(entry::backward);
  f.expect_valid_call(entry::transform);
}

TEST_CASE("misaligned pointers", "[gpu][errors]") {
  fixture f;
  const cudaError_t invalid = cudaErrorInvalidValue;
  const float* const x1 = shift_bytes<float>(f.x, 1);
  float* const out1 = shift_bytes<float>(f.out, 1);
  float* const out2 = shift_bytes<float>(f.out, 2);
  expect_rejected(f, entry::forward, invalid, "in at byte 1",
                  [&] { return cuact::forward(cuact::relu{}, x1, f.out, n); });
  expect_rejected(f, entry::forward, invalid, "out at byte 2",
                  [&] { return cuact::forward(cuact::relu{}, f.x, out2, n); });
  expect_rejected(f, entry::forward_in_place, invalid, "data at byte 1",
                  [&] { return cuact::forward(cuact::relu{}, out1, n); });
  expect_rejected(f, entry::backward, invalid, "x at byte 1",
                  [&] { return cuact::backward(cuact::relu{}, x1, f.dy, f.out, n); });
  expect_rejected(f, entry::backward, invalid, "dy at byte 3", [&] {
    return cuact::backward(cuact::relu{}, f.x, shift_bytes<float>(f.dy, 3), f.out, n);
  });
  expect_rejected(f, entry::backward, invalid, "dx at byte 1",
                  [&] { return cuact::backward(cuact::relu{}, f.x, f.dy, out1, n); });
  expect_rejected(f, entry::backward_from_output, invalid, "y at byte 1",
                  [&] { return cuact::backward_from_output(cuact::relu{}, x1, f.dy, f.out, n); });
  expect_rejected(f, entry::backward_from_output, invalid, "dx at byte 2",
                  [&] { return cuact::backward_from_output(cuact::relu{}, f.x, f.dy, out2, n); });
  expect_rejected(f, entry::relu_forward_mask, invalid, "in at byte 1",
                  [&] { return cuact::relu_forward_mask(x1, f.out, f.mask, n); });
  expect_rejected(f, entry::relu_forward_mask, invalid, "out at byte 1",
                  [&] { return cuact::relu_forward_mask(f.x, out1, f.mask, n); });
  for (int byte = 1; byte < 4; ++byte) {
    std::uint32_t* const mask = shift_bytes<std::uint32_t>(f.mask, byte);
    expect_rejected(f, entry::relu_forward_mask, invalid, "mask not 4-byte aligned",
                    [&] { return cuact::relu_forward_mask(f.x, f.out, mask, n); });
    expect_rejected(f, entry::relu_backward_mask, invalid, "mask not 4-byte aligned",
                    [&] { return cuact::relu_backward_mask(mask, f.dy, f.out, n); });
  }
  expect_rejected(f, entry::relu_backward_mask, invalid, "dy at byte 1",
                  [&] { return cuact::relu_backward_mask(f.mask, x1, f.out, n); });
  expect_rejected(f, entry::relu_backward_mask, invalid, "dx at byte 2",
                  [&] { return cuact::relu_backward_mask(f.mask, f.dy, out2, n); });
  expect_rejected(f, entry::transform, invalid, "bf16 output at byte 1",
                  [&] { return transform_call(shift_bytes<bf16>(f.out, 1), f.out2, f.x, f.dy); });
  expect_rejected(f, entry::transform, invalid, "fp32 output at byte 2", [&] {
    return transform_call(f.out_bf16, shift_bytes<float>(f.out2, 2), f.x, f.dy);
  });
  expect_rejected(f, entry::transform, invalid, "fp32 input at byte 1",
                  [&] { return transform_call(f.out_bf16, f.out2, x1, f.dy); });
  // other element types: __half at an odd byte, double at 4 bytes (aligned for float, not double)
  expect_rejected(f, entry::forward, invalid, "__half out at byte 1", [&] {
    return cuact::forward(cuact::relu{}, reinterpret_cast<const __half*>(f.x),
                          shift_bytes<__half>(f.out, 1), n);
  });
  expect_rejected(f, entry::forward, invalid, "double in at byte 4", [&] {
    return cuact::forward(cuact::selu{}, shift_bytes<double>(f.x, 4),
                          reinterpret_cast<double*>(f.out), n / 2);
  });
  expect_rejected(f, entry::backward, invalid, "double dx at byte 4", [&] {
    return cuact::backward(cuact::selu{}, reinterpret_cast<const double*>(f.x),
                           reinterpret_cast<const double*>(f.dy), shift_bytes<double>(f.out, 4),
                           n / 2);
  });
  expect_rejected(f, entry::relu_backward_mask, invalid, "__nv_bfloat16 dy at byte 1", [&] {
    return cuact::relu_backward_mask(f.mask, shift_bytes<bf16>(f.dy, 1), f.out_bf16, n);
  });
}

TEST_CASE("n * sizeof(T) overflowing size_t", "[gpu][errors]") {
  fixture f;
  const cudaError_t invalid = cudaErrorInvalidValue;
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  for (const std::size_t huge : {max / sizeof(float) + 1, max / 2, max}) {
    INFO("n = " << huge);
    expect_rejected(f, entry::forward, invalid, "float",
                    [&] { return cuact::forward(cuact::relu{}, f.x, f.out, huge); });
    expect_rejected(f, entry::forward_in_place, invalid, "float",
                    [&] { return cuact::forward(cuact::relu{}, f.out, huge); });
    expect_rejected(f, entry::backward, invalid, "float",
                    [&] { return cuact::backward(cuact::relu{}, f.x, f.dy, f.out, huge); });
    expect_rejected(f, entry::backward_from_output, invalid, "float", [&] {
      return cuact::backward_from_output(cuact::selu{}, f.x, f.dy, f.out, huge);
    });
    expect_rejected(f, entry::relu_forward_mask, invalid, "float",
                    [&] { return cuact::relu_forward_mask(f.x, f.out, f.mask, huge); });
    expect_rejected(f, entry::relu_backward_mask, invalid, "float",
                    [&] { return cuact::relu_backward_mask(f.mask, f.dy, f.out, huge); });
    expect_rejected(f, entry::transform, invalid, "float and bf16",
                    [&] { return transform_call(f.out_bf16, f.out2, f.x, f.dy, huge); });
  }
  const auto* const hx = reinterpret_cast<const __half*>(f.x);
  auto* const hout = reinterpret_cast<__half*>(f.out);
  expect_rejected(f, entry::forward, invalid, "__half, n = SIZE_MAX / 2 + 1",
                  [&] { return cuact::forward(cuact::selu{}, hx, hout, max / 2 + 1); });
  expect_rejected(f, entry::relu_backward_mask, invalid, "__half, n = SIZE_MAX / 2 + 1",
                  [&] { return cuact::relu_backward_mask(f.mask, hx, hout, max / 2 + 1); });
  expect_rejected(f, entry::forward, invalid, "double, n = SIZE_MAX / 8 + 1", [&] {
    return cuact::forward(cuact::relu{}, reinterpret_cast<const double*>(f.x),
                          reinterpret_cast<double*>(f.out), max / 8 + 1);
  });
  // the bf16 output fits (2 bytes per element), the fp32 arrays do not
  expect_rejected(f, entry::transform, invalid, "n = SIZE_MAX / 4 + 1: bf16 fits, fp32 overflows",
                  [&] { return transform_call(f.out_bf16, f.out2, f.x, f.dy, max / 4 + 1); });
}

TEST_CASE("pageable host memory is rejected; pinned and managed memory work", "[gpu][errors]") {
  fixture f;
  const cudaError_t invalid = cudaErrorInvalidValue;
  const char* const pageable =
      " is pageable host memory (or no memory CUDA knows): pass device, managed or page-locked "
      "memory";
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = hash_value<float>(11, i);
  std::vector<std::uint32_t> host_mask(words, 0x12345678u);
  float* const h = host.data();
  const auto* hv = &host;
  expect_rejected(
      f, entry::forward, invalid, "host in",
      [&] { return cuact::forward(cuact::relu{}, h, f.out, n); }, hv);
  CHECK(rejection_detail == std::string("input 0") + pageable);
  expect_rejected(
      f, entry::forward, invalid, "host out",
      [&] { return cuact::forward(cuact::relu{}, f.x, h, n); }, hv);
  CHECK(rejection_detail == std::string("output 0") + pageable);
  expect_rejected(
      f, entry::forward_in_place, invalid, "host data",
      [&] { return cuact::forward(cuact::relu{}, h, n); }, hv);
  expect_rejected(
      f, entry::backward, invalid, "host x",
      [&] { return cuact::backward(cuact::relu{}, h, f.dy, f.out, n); }, hv);
  expect_rejected(
      f, entry::backward, invalid, "host dy",
      [&] { return cuact::backward(cuact::relu{}, f.x, h, f.out, n); }, hv);
  CHECK(rejection_detail == std::string("input 1") + pageable);
  expect_rejected(
      f, entry::backward, invalid, "host dx",
      [&] { return cuact::backward(cuact::relu{}, f.x, f.dy, h, n); }, hv);
  expect_rejected(
      f, entry::backward_from_output, invalid, "host y",
      [&] { return cuact::backward_from_output(cuact::selu{}, h, f.dy, f.out, n); }, hv);
  expect_rejected(
      f, entry::backward_from_output, invalid, "host dx",
      [&] { return cuact::backward_from_output(cuact::selu{}, f.x, f.dy, h, n); }, hv);
  expect_rejected(
      f, entry::relu_forward_mask, invalid, "host in",
      [&] { return cuact::relu_forward_mask(h, f.out, f.mask, n); }, hv);
  expect_rejected(
      f, entry::relu_forward_mask, invalid, "host out",
      [&] { return cuact::relu_forward_mask(f.x, h, f.mask, n); }, hv);
  expect_rejected(
      f, entry::relu_forward_mask, invalid, "host mask",
      [&] { return cuact::relu_forward_mask(f.x, f.out, host_mask.data(), n); }, &host_mask);
  CHECK(rejection_detail == std::string("output 1") + pageable);
  expect_rejected(f, entry::relu_backward_mask, invalid, "host mask",
                  [&] { return cuact::relu_backward_mask(host_mask.data(), f.dy, f.out, n); });
  expect_rejected(
      f, entry::relu_backward_mask, invalid, "host dy",
      [&] { return cuact::relu_backward_mask(f.mask, h, f.out, n); }, hv);
  expect_rejected(
      f, entry::relu_backward_mask, invalid, "host dx",
      [&] { return cuact::relu_backward_mask(f.mask, f.dy, h, n); }, hv);
  expect_rejected(
      f, entry::transform, invalid, "host output 1",
      [&] { return transform_call(f.out_bf16, h, f.x, f.dy); }, hv);
  expect_rejected(
      f, entry::transform, invalid, "host input 1",
      [&] { return transform_call(f.out_bf16, f.out2, f.x, h); }, hv);

  SECTION("page-locked host memory and managed memory are device-accessible") {
    float* pinned = nullptr;
    float* managed = nullptr;
    CUACT_CUDA_REQUIRE(cudaMallocHost(&pinned, 2 * n * sizeof(float)));
    CUACT_CUDA_REQUIRE(cudaMallocManaged(&managed, 2 * n * sizeof(float)));
    // through the runtime rather than host stores, so initcheck sees the memory initialized
    CUACT_CUDA_REQUIRE(cudaMemcpy(pinned, host.data(), n * sizeof(float), cudaMemcpyDefault));
    CUACT_CUDA_REQUIRE(cudaMemcpy(managed, host.data(), n * sizeof(float), cudaMemcpyDefault));
    CHECK(cuact::forward(cuact::relu{}, pinned, pinned + n, n) == cudaSuccess);
    CHECK(cuact::forward(cuact::relu{}, managed, managed + n, n) == cudaSuccess);
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const float expected =
          cuda::std::get<0>(evaluate<float>(cuact::forward_op<cuact::relu, float>{}, i, host[i]));
      if (!same_result(pinned[n + i], expected)) ++bad;
      if (!same_result(managed[n + i], expected)) ++bad;
    }
    CHECK(bad == 0);
    CUACT_CUDA_REQUIRE(cudaFreeHost(pinned));
    CUACT_CUDA_REQUIRE(cudaFree(managed));
  }
}

TEST_CASE("memory of another device is cudaErrorInvalidDevice", "[gpu][errors]") {
  int devices = 0;
  CUACT_CUDA_REQUIRE(cudaGetDeviceCount(&devices));
  if (devices < 2) CUACT_SKIP("one device: the other-device check needs two");
  fixture f;
  int current = 0;
  CUACT_CUDA_REQUIRE(cudaGetDevice(&current));
  const int other = current == 0 ? 1 : 0;
  float* elsewhere = nullptr;
  CUACT_CUDA_REQUIRE(cudaSetDevice(other));
  CUACT_CUDA_REQUIRE(cudaMalloc(&elsewhere, n * sizeof(float)));
  CUACT_CUDA_REQUIRE(cudaMemset(elsewhere, 0, n * sizeof(float)));
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  CUACT_CUDA_REQUIRE(cudaSetDevice(current));
  const cudaError_t wrong = cudaErrorInvalidDevice;
  expect_rejected(f, entry::forward, wrong, "out on another device",
                  [&] { return cuact::forward(cuact::relu{}, f.x, elsewhere, n); });
  const std::string devices_text = " is on device " + std::to_string(other) +
                                   ", the current device is " + std::to_string(current);
  CHECK(rejection_detail == "output 0" + devices_text);
  expect_rejected(f, entry::backward, wrong, "dy on another device",
                  [&] { return cuact::backward(cuact::relu{}, f.x, elsewhere, f.out, n); });
  CHECK(rejection_detail == "input 1" + devices_text);
  expect_rejected(f, entry::relu_backward_mask, wrong, "dy on another device",
                  [&] { return cuact::relu_backward_mask(f.mask, elsewhere, f.out, n); });
  expect_rejected(f, entry::transform, wrong, "output 1 on another device",
                  [&] { return transform_call(f.out_bf16, elsewhere, f.x, f.dy); });
  CUACT_CUDA_REQUIRE(cudaFree(elsewhere));
}
