/// \file
/// The launch policy, public: cuact::policy (one launch as a plain value: algorithm, grid, block,
/// vectors per thread, passes, residency cap), cuact::select_policy (the pure launch model that
/// chooses it; its constants are detail/tuning_table.cuh's), and cuact::scoped_policy, which
/// overrides the policy of every call the calling thread makes while it lives, with a fixed
/// policy or a selector of the caller's (docs/tuning.md).
#pragma once

#include "detail/config.cuh"  // first: it rejects a host-only compiler

#include "detail/launch.cuh"
#include "detail/policy.cuh"
