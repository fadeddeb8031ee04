#!/usr/bin/env bash
# Packaging test: install cuact, then build and run tests/downstream against it twice, through
# find_package(cuact CONFIG) on the installed (and relocated) prefix and through add_subdirectory
# of the source tree.
#
#   tests/downstream.sh SRC_DIR WORK_DIR
#
# Environment: CUDA_ARCHS (default 90), JOBS (build parallelism, default 1), GENERATOR (default
# Ninja when ninja is on PATH). Exits non-zero at the first failing step; each step's full log
# is in WORK_DIR/logs/.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 SRC_DIR WORK_DIR" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
mkdir -p "$2"
work=$(cd "$2" && pwd)
archs=${CUDA_ARCHS:-90}
jobs=${JOBS:-1}
generator=()
if [[ -n ${GENERATOR:-} ]]; then
  generator=(-G "$GENERATOR")
elif command -v ninja > /dev/null; then
  generator=(-G Ninja)
fi

# Only what this script creates is removed.
rm -rf "$work/cuact-build" "$work/stage" "$work/prefix" "$work/find-package" \
       "$work/add-subdirectory" "$work/logs"
mkdir -p "$work/logs"
total_start=$SECONDS

# step NAME COMMAND...: runs COMMAND with its output in logs/NAME.log; one line per step.
step() {
  local name=$1
  shift
  local start=$SECONDS
  printf '[downstream] %-34s ' "$name"
  if "$@" > "$work/logs/$name.log" 2>&1; then
    printf 'ok (%d s)\n' $((SECONDS - start))
  else
    local status=$?
    printf 'FAILED (exit %d, %d s); last lines of %s:\n' "$status" $((SECONDS - start)) \
      "$work/logs/$name.log"
    tail -n 40 "$work/logs/$name.log" | sed 's/^/    /'
    exit 1
  fi
}

# The installed package must be complete and must not point back into the source or build tree.
# (Called under `if`, where set -e does not apply: every check returns explicitly.)
check_install() {
  local prefix=$1 config_dir header
  find "$prefix" -type f | sort
  for header in $(cd "$src/include" && find cuact -type f); do
    [[ -f $prefix/include/$header ]] || { echo "missing $prefix/include/$header"; return 1; }
  done
  config_dir=$(find "$prefix" -name cuactConfig.cmake -printf '%h\n' -quit)
  [[ -n $config_dir ]] || { echo "no cuactConfig.cmake under $prefix"; return 1; }
  for file in cuactConfig.cmake cuactConfigVersion.cmake cuactTargets.cmake; do
    [[ -f $config_dir/$file ]] || { echo "missing $config_dir/$file"; return 1; }
  done
  if grep -rnF -e "$src" -e "$work" "$config_dir"; then
    echo "absolute path of the source, build or stage tree in the installed CMake files"
    return 1
  fi
}

# The consumer must compile against the headers it was pointed at, not another copy.
check_include_dir() {
  local build=$1 expected=$2 unexpected=$3
  grep -qF -e "$expected" "$build/compile_commands.json" || {
    echo "compile commands lack $expected"; cat "$build/compile_commands.json"; return 1; }
  if grep -qF -e "$unexpected" "$build/compile_commands.json"; then
    echo "compile commands use $unexpected"; cat "$build/compile_commands.json"; return 1
  fi
}

echo "[downstream] cuact: $src; work: $work; CUDA architectures: $archs"

# 1. Install. An INTERFACE library installs without building anything.
step configure-cuact cmake -S "$src" -B "$work/cuact-build" "${generator[@]}" \
  -DCMAKE_CUDA_ARCHITECTURES="$archs" -DCMAKE_INSTALL_PREFIX="$work/stage" \
  -DCUACT_BUILD_TESTS=OFF -DCUACT_BUILD_EXAMPLES=OFF -DCUACT_BUILD_BENCH=OFF
step install-cuact cmake --install "$work/cuact-build"
# Consume from another place than the install prefix: the package must be relocatable.
step relocate-install mv "$work/stage" "$work/prefix"
step check-installed-files check_install "$work/prefix"

# 2. find_package(cuact CONFIG) against the relocated prefix.
fp=$work/find-package
step find-package-configure cmake -S "$src/tests/downstream" -B "$fp" "${generator[@]}" \
  -DCMAKE_CUDA_ARCHITECTURES="$archs" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
step find-package-include-dir check_include_dir "$fp" "$work/prefix/include" "$src/include"
step find-package-build cmake --build "$fp" --parallel "$jobs"
step find-package-run "$fp/cuact_downstream"
sed 's/^/    /' "$work/logs/find-package-run.log"

# 3. add_subdirectory of the source tree.
as=$work/add-subdirectory
step add-subdirectory-configure cmake -S "$src/tests/downstream" -B "$as" "${generator[@]}" \
  -DCMAKE_CUDA_ARCHITECTURES="$archs" -DCUACT_SOURCE_DIR="$src" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
step add-subdirectory-include-dir check_include_dir "$as" "$src/include" "$work/prefix"
step add-subdirectory-build cmake --build "$as" --parallel "$jobs"
step add-subdirectory-run "$as/cuact_downstream"
sed 's/^/    /' "$work/logs/add-subdirectory-run.log"

echo "[downstream] all steps passed ($((SECONDS - total_start)) s)"
