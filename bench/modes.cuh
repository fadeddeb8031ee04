/// \file
/// The benchmark's modes; main.cu parses the command line and runs one.
#pragma once

#include <cstddef>
#include <string>

#include "common.cuh"

namespace bench {

struct options {
  int reps = 0;     ///< timed batches per measurement; 0: the mode's default
  std::string csv;  ///< --sweep: also write this CSV file
};

/// The seeds' shape: 4096 x 393216 elements.
inline constexpr std::size_t seeds_n = std::size_t{4096} * 393216;

int run_headline(const device_info& device, const options& opts);
int run_sweep(const device_info& device, const options& opts);
int run_small(const device_info& device, const options& opts);
int run_blocks(const device_info& device, const options& opts);

}  // namespace bench
