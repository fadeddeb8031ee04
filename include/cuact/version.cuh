/// \file
/// cuact's version: the one source. CMakeLists.txt and the Python package read the three
/// `#define` lines below, so keep each as `#define CUACT_VERSION_X <number>`.
///
/// Plain macros with no includes: any C or C++ compiler may include this header, and a build
/// script may parse it.
#pragma once

/// Incremented for changes that break source compatibility.
#define CUACT_VERSION_MAJOR 0
/// Incremented for additions that keep source compatibility.
#define CUACT_VERSION_MINOR 2
/// Incremented for fixes.
#define CUACT_VERSION_PATCH 0

/// MAJOR * 10000 + MINOR * 100 + PATCH (0.2.0 is 200), for `#if CUACT_VERSION >= ...`.
#define CUACT_VERSION \
  (CUACT_VERSION_MAJOR * 10000 + CUACT_VERSION_MINOR * 100 + CUACT_VERSION_PATCH)
