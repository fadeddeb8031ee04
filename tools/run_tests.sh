#!/usr/bin/env bash
# README's second command: builds cuact's tests and runs them.
#
#   tools/run_tests.sh
#
# = tools/deps.sh build tests (installs or names what is missing), then
#   cmake --workflow --preset tests   (build/tests; CMakePresets.json)
# CPU tests (the kernels' per-thread body over simulated grids), GPU tests (label gpu; reported
# Skipped without a usable CUDA device), compile-fail tests and the KernelBench ModelNew files'
# sources compiled (tests/kernelbench/). Exits non-zero if any test fails.
# Environment: CUDAARCHS (default "80;90"), CMAKE_BUILD_PARALLEL_LEVEL and CTEST_PARALLEL_LEVEL
# (default: all cores), CUACT_WERROR=ON (warnings are errors; CI sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh build tests
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
export CTEST_PARALLEL_LEVEL=${CTEST_PARALLEL_LEVEL:-$(nproc)}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
cmake --workflow --preset tests 2>&1 | tee "$log"

skipped=$(grep -c '\*\*\*Skipped' "$log" || true)
echo
if [[ $skipped -gt 0 ]]; then
  echo "cuact: tests passed; $skipped GPU test(s) reported Skipped: no usable CUDA device here."
  echo "cuact: Run this command on a machine with a GPU to run them too."
else
  echo "cuact: tests passed, GPU tests included."
fi
