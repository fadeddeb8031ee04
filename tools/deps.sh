#!/usr/bin/env bash
# tools/deps.sh WHAT...: checks that what cuact's commands need is installed; WHAT is any of
#   build   CMake >= 3.25, Ninja, a C++ compiler, the CUDA Toolkit (nvcc)
#   tests   Catch2 (v3, or v2.13), Python 3 (the README snippet test)
#   docs    Doxygen
#   format  clang-format (Debian's, version 14 in bookworm)
#   ci      git (tests/downstream.sh packs the source tree with git archive)
# Missing Debian/Ubuntu packages are installed with apt-get when this runs as root with apt-get
# available (a container, CI), unless CUACT_NO_INSTALL=1; otherwise it prints the exact
# `sudo apt-get install` line and exits 1. The CUDA Toolkit is not a Debian package cuact can
# use (Debian's nvidia-cuda-toolkit is 11.8): without nvcc it says where to get it and exits 1.
# Used by tools/run_examples.sh, tools/run_tests.sh and .ci/run.
set -euo pipefail

packages=()
problems=()
need() { packages+=("$1"); }
have() { command -v "$1" > /dev/null 2>&1; }

# A Catch2 CMake package where CMake looks by default (or under CMAKE_PREFIX_PATH).
have_catch2() {
  if have dpkg-query && [[ $(dpkg-query -W -f='${Status}' catch2 2> /dev/null) == *"ok installed"* ]]; then
    return 0
  fi
  local prefixes=(/usr /usr/local /opt/local) prefix dir
  IFS=: read -r -a extra <<< "${CMAKE_PREFIX_PATH:-}"
  for prefix in "${extra[@]}" "${prefixes[@]}"; do
    [[ -n $prefix ]] || continue
    for dir in "$prefix"/lib/cmake/Catch2 "$prefix"/lib/*/cmake/Catch2 "$prefix"/lib64/cmake/Catch2 \
               "$prefix"/share/cmake/Catch2 "$prefix"/share/Catch2 "$prefix"/cmake; do
      [[ -f $dir/Catch2Config.cmake || -f $dir/catch2-config.cmake ]] && return 0
    done
  done
  return 1
}

version_at_least() {  # version_at_least HAVE WANT
  [[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1) == "$2" ]]
}

for what in "$@"; do
  case $what in
    build)
      if ! have cmake; then
        need cmake
      else
        cmake_version=$(cmake --version | sed -n '1s/[^0-9]*\([0-9][0-9.]*\).*/\1/p')
        if ! version_at_least "$cmake_version" 3.25; then
          problems+=("CMake $cmake_version is older than 3.25 (workflow presets): install a newer one, e.g. \`pip install cmake\` or Kitware's APT repository (https://apt.kitware.com)")
        fi
      fi
      have ninja || need ninja-build
      have c++ || have g++ || need g++
      if ! have nvcc && [[ -z ${CUDACXX:-} ]] && ! compgen -G '/usr/local/cuda*/bin/nvcc' > /dev/null; then
        problems+=("no CUDA compiler (nvcc on PATH, in /usr/local/cuda/bin, or \$CUDACXX): install the CUDA Toolkit 12.x or 13.x from https://developer.nvidia.com/cuda-downloads")
      fi
      ;;
    tests)
      have_catch2 || need catch2
      have python3 || need python3
      # python/tests (collected and reported skipped without torch); run_all.py stands in
      # without pytest, so it is installed only for CI
      [[ " $* " == *" ci "* ]] && ! python3 -c "import pytest" 2> /dev/null && need python3-pytest
      ;;
    docs) have doxygen || need doxygen ;;
    format) have clang-format-14 || have clang-format || need clang-format ;;
    ci) have git || need git ;;
    *) echo "tools/deps.sh: unknown requirement '$what'" >&2; exit 2 ;;
  esac
done

if [[ ${#packages[@]} -gt 0 ]]; then
  if [[ $(id -u) -eq 0 ]] && have apt-get && [[ ${CUACT_NO_INSTALL:-0} != 1 ]]; then
    echo "cuact: installing missing packages: apt-get install -y --no-install-recommends ${packages[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y --no-install-recommends "${packages[@]}"; then
      apt-get update
      apt-get install -y --no-install-recommends "${packages[@]}"
    fi
  else
    problems+=("missing packages; install them with:
    sudo apt-get install -y ${packages[*]}")
  fi
fi
if [[ ${#problems[@]} -gt 0 ]]; then
  for problem in "${problems[@]}"; do
    echo "cuact: $problem" >&2
  done
  echo "cuact: then run this command again." >&2
  exit 1
fi
