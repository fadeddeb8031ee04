// The device facts the launch-model tests reason with: an H100 SXM and an H200 as
// cuact::detail::get_device_facts reads them (SMs, threads per SM, modelled bandwidth, SM clock,
// shared memory per SM and the runtime's reservation per block).
#pragma once

#include <cuact/detail/launch.cuh>

inline constexpr cuact::detail::device_facts model_h100{132, 2048, 3.35e12, 1.98e9, 233472, 1024};
inline constexpr cuact::detail::device_facts model_h200{132, 2048, 4.8e12, 1.98e9, 233472, 1024};
/// An H100 whose shared memory per SM is not known (0): no launch caps its resident blocks.
inline constexpr cuact::detail::device_facts model_h100_no_shared{132, 2048, 3.35e12, 1.98e9};
