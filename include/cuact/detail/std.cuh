/// \file
/// The pieces of the standard library cuact uses, each from its own libcu++ header. The public
/// umbrellas (<cuda/std/type_traits>, <cuda/std/utility>, <cuda/std/bit>) each pull in much more
/// than cuact uses and add seconds to every translation unit that includes cuact; the per-facility
/// headers come with the same toolkit and compile under nvcc, clang CUDA and NVRTC alike.
#pragma once

#include <cuda/std/cstddef>
#include <cuda/std/cstdint>

#include <cuda/std/__bit/bit_cast.h>
#include <cuda/std/__functional/invoke.h>
#include <cuda/std/__type_traits/conditional.h>
#include <cuda/std/__type_traits/enable_if.h>
#include <cuda/std/__type_traits/integral_constant.h>
#include <cuda/std/__type_traits/is_copy_constructible.h>
#include <cuda/std/__type_traits/is_same.h>
#include <cuda/std/__type_traits/remove_const.h>
#include <cuda/std/__type_traits/remove_cv.h>
#include <cuda/std/__type_traits/remove_pointer.h>
#include <cuda/std/__type_traits/remove_reference.h>
#include <cuda/std/__type_traits/void_t.h>
#include <cuda/std/__utility/declval.h>
#include <cuda/std/__utility/integer_sequence.h>
