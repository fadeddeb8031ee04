// A stand-in for the part of torch's C++ API that the ModelNew files in examples/kernelbench use,
// so that CI (which has no torch) compiles their CUDA sources against cuact's current headers:
// declarations only, nothing here is defined or run. A ModelNew that uses more of torch fails
// to compile here; add the declaration as torch spells it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include <cuda_runtime.h>

namespace c10 {
enum class ScalarType { Float, Double, Half, BFloat16 };
}  // namespace c10

namespace at {
using c10::ScalarType;
constexpr ScalarType kFloat = ScalarType::Float;

class Tensor {
 public:
  bool is_cuda() const;
  ScalarType scalar_type() const;
  Tensor contiguous() const;
  std::int64_t numel() const;
  template <class T>
  T* data_ptr() const;
};

Tensor empty_like(const Tensor& self);
}  // namespace at

namespace torch {
using at::empty_like;
using at::Tensor;
using c10::ScalarType;
constexpr ScalarType kFloat32 = ScalarType::Float;
}  // namespace torch

// torch's TORCH_CHECK(condition, message parts...) throws c10::Error; here std::runtime_error.
#define TORCH_CHECK(condition, ...) \
  ((condition) ? static_cast<void>(0) : throw std::runtime_error("TORCH_CHECK failed"))
