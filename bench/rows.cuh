/// \file
/// One size, many entries: what --headline, --family and --user share. Each row times cuact's
/// entry, cub::DeviceTransform with the same functor, and a cudaMemcpyAsync device-to-device of
/// the same total bytes (read + written), all in this run, at a size far beyond L2, and reports
/// the launch shape cuact's model chose for the call.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "common.cuh"
#include "ops.cuh"

namespace bench {

/// The seeds' shape: 4096 x 393216 elements (fp64: half as many, the same bytes).
inline constexpr std::size_t seeds_n = std::size_t{4096} * 393216;
inline std::size_t seeds_n_for(dtype t) { return t == dtype::f64 ? seeds_n / 2 : seeds_n; }

enum class placement { out_of_place, in_place };

struct row_result {
  const entry* source = nullptr;
  placement place = placement::out_of_place;
  std::size_t n = 0;
  double bytes = 0;
  double cuact_ms = 0, cub_ms = 0;  ///< median per call; cub_ms = 0: no CUB contestant
  double cuact_gbps = 0, cub_gbps = 0, memcpy_gbps = 0;
  double spread_percent = 0;  ///< cuact's (max - min) / median over the repetitions
  shape_report shape;
  bool checked = false;
  bool check_ok = true;
  double difference = 0;  ///< max |cuact - other| / max(1, |other|)
  double vs_memcpy() const { return memcpy_gbps > 0 ? cuact_gbps / memcpy_gbps : 0; }
  double vs_cub() const { return cub_gbps > 0 ? cuact_gbps / cub_gbps : 0; }
};

class row_runner {
 public:
  /// Device memory for four arrays of `max_array_bytes` and a mask for `max_n` elements.
  row_runner(std::size_t max_array_bytes, std::size_t max_n, int reps);

  /// Times one entry at n: CUB (if any) first, then cuact; checks cuact's output against the
  /// entry's reference or CUB's (out of place only); then times cudaMemcpyAsync of the row's
  /// bytes, the row's ceiling; prints the row when a table is set.
  row_result run(const entry& e, std::size_t n, placement place);

  /// GB/s of cudaMemcpyAsync D2D moving `total_bytes` (read + written), timed once per size in
  /// this runner and remembered (the headers' ceiling; rows time their own, see run).
  double memcpy_gbps(double total_bytes);
  /// The same, timed now.
  double time_memcpy(double total_bytes);

  void print_header() const;
  void print_rule() const;
  int reps() const { return timing_.reps; }
  int failed_checks() const { return failed_checks_; }
  cudaStream_t stream() const { return stream_.get(); }
  /// Array i (0..3) of the arena; memcpy_gbps and time_memcpy overwrite them.
  void* array(int i) const;

 private:
  void print(const row_result& r) const;

  std::size_t array_stride_;
  std::size_t mask_offset_;
  table table_;
  timing_options timing_;
  stream_handle stream_;
  device_buffer arena_;
  std::map<std::size_t, double> memcpy_gbps_;
  int failed_checks_ = 0;
};

/// Tolerance of cuact vs the same functor run by CUB (or another cuact route): bit-equal but for
/// the compiler's contractions, so one rounding of the dtype.
double check_tolerance(dtype t);

/// "  min x memcpy 0.991 (selu backward bf16), min x CUB ..." summary lines of a set of rows.
void print_minimums(const std::vector<row_result>& rows, const char* what);

/// The end of a mode that ran `rows` through `runner`: their minimums (print_minimums), then the
/// checks' verdict; returns the mode's exit status (2 when a check failed, else 0).
int finish_mode(const row_runner& runner, const std::vector<row_result>& rows, const char* what);

}  // namespace bench
