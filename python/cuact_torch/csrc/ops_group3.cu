// Group 3 of the cuact operator library's table (ops.h), in a translation unit of its own.
#define CUACT_TORCH_GROUP_3(...) __VA_ARGS__
#include "ops.h"

TORCH_LIBRARY_FRAGMENT(cuact, m) { CUACT_TORCH_ALL_OPS(CUACT_TORCH_DEFINE_IN_GROUP) }
