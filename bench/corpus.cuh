/// \file
/// --corpus (cuact_bench_corpus): the corpus functors (corpus_functors.cuh) through
/// cuact::forward against the same functor in the kernels users write by hand, in
/// cub::DeviceTransform, and against a cudaMemcpyAsync of the same bytes.
#pragma once

#include <string>
#include <vector>

#include "common.cuh"
#include "ops.cuh"

namespace bench {

struct corpus_row {
  std::string name;
  dtype type = dtype::f32;
  entry forward;          ///< cuact::forward, CUB with the same functor, cuact's launch shape
  launch_fn per_element;  ///< one element per thread, an `int` index, the grid covering n
  launch_fn grid_stride;  ///< 16-byte vectors in a grid-stride loop, a scalar tail
  int per_element_regs = 0, grid_stride_regs = 0;
};

/// One function per (group, dtype), defined by the generated corpus_<group>_<dtype>.cu.
#define CORPUS_DECLARE(group, tag) void add_corpus_##group##_##tag(std::vector<corpus_row>& out);
#define CORPUS_DECLARE_GROUP(group) \
  CORPUS_DECLARE(group, f32) CORPUS_DECLARE(group, bf16) CORPUS_DECLARE(group, f16)
CORPUS_DECLARE_GROUP(0)
CORPUS_DECLARE_GROUP(1)
CORPUS_DECLARE_GROUP(2)
CORPUS_DECLARE_GROUP(3)
#undef CORPUS_DECLARE_GROUP
#undef CORPUS_DECLARE

}  // namespace bench
