/// \file
/// The lock of cuact's host-side caches (dispatch.cuh: the table buffers). Their critical
/// sections are a few comparisons and, a handful of times in a process, one cudaMalloc, so a spin
/// lock on std::atomic_flag serves; std::mutex would bring <mutex> (with <system_error>,
/// <string> and <chrono>) into every translation unit that includes cuact. Host-only.
#pragma once

#include <atomic>

namespace cuact {
namespace detail {

class host_mutex {
 public:
  void lock() noexcept {
    while (flag_.test_and_set(std::memory_order_acquire)) {
    }
  }
  void unlock() noexcept { flag_.clear(std::memory_order_release); }

 private:
  std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

/// Holds a host_mutex for its lifetime (std::lock_guard's role).
class host_lock_guard {
 public:
  explicit host_lock_guard(host_mutex& mutex) noexcept : mutex_(mutex) { mutex_.lock(); }
  ~host_lock_guard() { mutex_.unlock(); }
  host_lock_guard(const host_lock_guard&) = delete;
  host_lock_guard& operator=(const host_lock_guard&) = delete;

 private:
  host_mutex& mutex_;
};

}  // namespace detail
}  // namespace cuact
