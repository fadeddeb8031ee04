#!/usr/bin/env bash
# README's first command: builds cuact's examples and runs them.
#
#   tools/run_examples.sh
#
# = tools/deps.sh build (installs or names what is missing), then
#   cmake --workflow --preset examples   (build/examples; CMakePresets.json)
# The examples: out_of_place, in_place, custom_activation (your own functor), training_step
# (forward in place, backward from the output). Each checks its results. On a machine without a
# usable CUDA device they are built and reported skipped, and this says so; it still exits 0.
# Environment: CUDAARCHS (default "80;90"), CMAKE_BUILD_PARALLEL_LEVEL (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh build
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
cmake --workflow --preset examples 2>&1 | tee "$log"

skipped=$(grep -c '\*\*\*Skipped' "$log" || true)
echo
if [[ $skipped -gt 0 ]]; then
  echo "cuact: the examples are built (build/examples/examples/example_*), but running them needs a"
  echo "cuact: CUDA GPU and this machine has none usable, so $skipped were reported Skipped."
  echo "cuact: Run this command on a machine with a GPU to see them run."
else
  echo "cuact: the examples ran on the GPU and checked their results: passed."
fi
