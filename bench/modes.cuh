/// \file
/// The benchmark's modes; main.cu parses the command line and runs one.
#pragma once

#include <cstddef>
#include <string>

#include "common.cuh"

namespace bench {

struct options {
  int reps = 0;     ///< timed repetitions per measurement; 0: the mode's default
  std::string csv;  ///< --sweep: also write this CSV file
  std::string ops;  ///< --shapes: "activation:kind:dtype,..." instead of the default targets
  /// --family: comma-separated substrings of "activation kind dtype" labels (e.g. "relu backward
  /// fp32,hardtanh backward"); only rows matching one of them run. Empty: every row.
  std::string only;
};

int run_headline(const device_info& device, const options& opts);
int run_family(const device_info& device, const options& opts);
int run_user(const device_info& device, const options& opts);
int run_shapes(const device_info& device, const options& opts);
/// --sweep runs every size in a child process (run_sweep_one), so CUB's first call of each
/// instantiation is at that size; --small likewise (run_small_one).
int run_sweep(const device_info& device, const options& opts);
int run_sweep_one(const device_info& device, const options& opts, std::size_t n);
int run_small(const device_info& device, const options& opts);
int run_small_one(const device_info& device, const options& opts, std::size_t n);

}  // namespace bench
