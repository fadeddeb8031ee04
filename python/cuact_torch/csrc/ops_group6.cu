// Group 6 of the cuact operator library's fused table (ops.h), in a translation unit of its own.
#define CUACT_TORCH_GROUP_6(...) __VA_ARGS__
#include "ops.h"

TORCH_LIBRARY_FRAGMENT(cuact, m) {
  CUACT_TORCH_FUSED_TABLE(CUACT_TORCH_FUSED_IN_GROUP)
  CUACT_TORCH_GATE_TABLE(CUACT_TORCH_GATE_IN_GROUP)
}
