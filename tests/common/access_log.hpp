// A recording memory access for cuact's per-thread bodies (cuact::elementwise_thread,
// detail::sign_mask_forward_thread): the CPU tests run the very index logic the GPU runs over host
// arrays, and this checks every access the body makes. Plus host arrays with guard bytes around
// them, and the loop that runs every thread of a simulated grid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace cuact_test {

/// Registered arrays and, per byte, which simulated thread touched it and how often it was read
/// and written.
class access_log {
 public:
  /// Registers [begin, begin + bytes); returns its index.
  std::size_t add_region(const void* begin, std::size_t bytes) {
    regions_.push_back({static_cast<const char*>(begin), bytes, std::vector<std::uint8_t>(bytes),
                        std::vector<std::uint8_t>(bytes), std::vector<std::int64_t>(bytes, -1)});
    return regions_.size() - 1;
  }
  void set_thread(std::int64_t thread) { thread_ = thread; }

  void record(const void* p, std::size_t size, std::size_t align, bool is_store) {
    const char* c = static_cast<const char*>(p);
    if (reinterpret_cast<std::uintptr_t>(p) % align != 0) fail("misaligned access", c, size);
    for (region& r : regions_) {
      if (c >= r.begin && c + size <= r.begin + r.bytes) {
        for (std::size_t b = static_cast<std::size_t>(c - r.begin), e = b + size; b < e; ++b) {
          if (r.thread[b] != -1 && r.thread[b] != thread_)
            fail("byte touched by two threads", c, size);
          r.thread[b] = thread_;
          if (is_store) {
            ++r.writes[b];
          } else {
            if (r.writes[b] != 0) fail("read after write", c, size);
            ++r.reads[b];
          }
        }
        return;
      }
    }
    fail("access outside every array", c, size);
  }

  /// Every byte of region `index` read exactly `reads` times and written exactly `writes` times.
  bool each_byte(std::size_t index, int reads, int writes) const {
    const region& r = regions_[index];
    for (std::size_t b = 0; b < r.bytes; ++b) {
      if (r.reads[b] != reads || r.writes[b] != writes) return false;
    }
    return true;
  }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  struct region {
    const char* begin;
    std::size_t bytes;
    std::vector<std::uint8_t> reads, writes;
    std::vector<std::int64_t> thread;
  };
  void fail(const char* what, const char* p, std::size_t size) {
    if (errors_.size() < 8) {
      errors_.push_back(std::string(what) + " (" + std::to_string(size) + " bytes at " +
                        std::to_string(reinterpret_cast<std::uintptr_t>(p)) + ")");
    }
  }
  std::vector<region> regions_;
  std::vector<std::string> errors_;
  std::int64_t thread_ = 0;
};

/// The Access policy cuact's per-thread bodies take: records, then performs, each access.
struct recording_access {
  access_log* log;
  template <class Vector>
  Vector load(const Vector* from) const {
    log->record(from, sizeof(Vector), alignof(Vector), false);
    return *from;
  }
  template <class Vector>
  void store(Vector* to, const Vector& value) const {
    log->record(to, sizeof(Vector), alignof(Vector), true);
    *to = value;
  }
};

struct grid_shape {
  std::size_t blocks, threads;
};

/// Runs body(thread, num_threads) for every thread of a simulated grid, in thread order.
template <class Body>
void simulate_grid(access_log& log, grid_shape grid, Body&& body) {
  const std::size_t num_threads = grid.blocks * grid.threads;
  for (std::size_t t = 0; t < num_threads; ++t) {
    log.set_thread(static_cast<std::int64_t>(t));
    body(t, num_threads);
  }
}

/// Host bytes whose data starts `offset` bytes past a 256-byte boundary, with at least 256 guard
/// bytes on either side; everything starts as the sentinel.
class guarded_host_bytes {
 public:
  static constexpr std::size_t guard = 256;
  static constexpr unsigned char sentinel = 0xA5;
  guarded_host_bytes(std::size_t bytes, std::size_t offset)
      : bytes_(bytes),
        offset_(guard + offset),
        total_((offset_ + bytes + guard + 255) / 256 * 256),
        storage_(static_cast<unsigned char*>(std::aligned_alloc(256, total_)), &std::free) {
    std::memset(storage_.get(), sentinel, total_);
  }
  void* data() const { return storage_.get() + offset_; }
  bool guards_intact() const {
    const unsigned char* p = storage_.get();
    for (std::size_t b = 0; b < offset_; ++b) {
      if (p[b] != sentinel) return false;
    }
    for (std::size_t b = offset_ + bytes_; b < total_; ++b) {
      if (p[b] != sentinel) return false;
    }
    return true;
  }

 private:
  std::size_t bytes_, offset_, total_;
  std::unique_ptr<unsigned char, void (*)(void*)> storage_;
};

}  // namespace cuact_test
