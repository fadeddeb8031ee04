#!/usr/bin/env bash
# Packaging test: builds and runs tests/downstream against cuact in every way a user consumes a
# header-only CUDA library:
#   1-2. find_package(cuact CONFIG) on the installed (and relocated) prefix, and the version check
#        of cuactConfigVersion.cmake (0.1 and 0.1...<1 accepted, 1.0 refused), and that the package's
#        version is the headers' (include/cuact/version.cuh);
#   3.   add_subdirectory of the source tree;
#   4.   FetchContent from a local source tree (FETCHCONTENT_SOURCE_DIR_CUACT) and from a file://
#        tarball of it (git archive of HEAD on a clean checkout, else the working tree's files);
#   5.   no CMake: nvcc -I include, the README's one-line compile.
#
#   tests/downstream.sh SRC_DIR WORK_DIR
#
# Environment: CUDA_ARCHS (default 90), JOBS (build parallelism, default 1), GENERATOR (default
# Ninja when ninja is on PATH), NVCC (default: CUDACXX, nvcc on PATH, /usr/local/cuda/bin/nvcc). Exits non-zero at the first failing step; each step's full log
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
       "$work/add-subdirectory" "$work/version-check" "$work/fetch-source-dir" "$work/fetch-tarball" \
       "$work/cuact.tar.gz" "$work/nvcc-include" "$work/logs"
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

# expect_failure TEXT COMMAND...: COMMAND must fail, and its output must contain TEXT (compared
# with runs of blanks and newlines as one space: CMake wraps its messages).
expect_failure() {
  local text=$1 output
  shift
  if output=$("$@" 2>&1); then
    echo "$output"
    echo "expected a failure, but it succeeded: $*"
    return 1
  fi
  echo "$output"
  tr -s ' \n' '  ' <<< "$output" | grep -qF -e "$text" ||
    { echo "the failure does not say: $text"; return 1; }
}

# A source tarball of cuact, as a release would ship it: git archive of HEAD when the checkout has
# no uncommitted changes (this also proves that every file the build needs is committed), else
# the working tree's tracked and unignored files (a local run before committing).
make_tarball() {
  local tarball=$1
  if git -C "$src" rev-parse --is-inside-work-tree > /dev/null 2>&1 &&
     [[ -z $(git -C "$src" status --porcelain --untracked-files=no) ]]; then
    echo "git archive of HEAD ($(git -C "$src" rev-parse --short HEAD))"
    git -C "$src" archive --format=tar.gz --prefix=cuact/ -o "$tarball" HEAD
  elif git -C "$src" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    echo "uncommitted changes: tarball of the working tree's files"
    (cd "$src" && git ls-files --cached --others --exclude-standard -z |
       while IFS= read -r -d '' f; do [[ -f $f ]] && printf '%s\0' "$f"; done |
       tar --null -T - --transform 's,^,cuact/,' -czf "$tarball")
  else
    echo "not a git checkout: tarball of $src without build*/"
    tar -C "$src/.." --exclude='build*' --transform "s,^$(basename "$src"),cuact," \
        -czf "$tarball" "$(basename "$src")"
  fi
  # (grep without -q reads the whole listing: -q would stop tar with SIGPIPE under pipefail)
  tar -tzf "$tarball" | grep -x 'cuact/include/cuact/cuact.cuh' > /dev/null || {
    echo "cuact/include/cuact/cuact.cuh is not in $tarball"; return 1; }
}

nvcc=${NVCC:-${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}}
gencode=()
IFS=';' read -r -a arch_list <<< "$archs"
for arch in "${arch_list[@]}"; do
  gencode+=(-gencode "arch=compute_${arch},code=sm_${arch}")
done

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

# 2b. cuactConfigVersion.cmake: SameMajorVersion, as the top-level CMakeLists.txt documents.
vc=$work/version-check
step version-0.1-accepted cmake -S "$src/tests/downstream/version_check" -B "$vc/0.1" \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCUACT_REQUEST=0.1
step version-range-accepted cmake -S "$src/tests/downstream/version_check" -B "$vc/range" \
  -DCMAKE_PREFIX_PATH="$work/prefix" "-DCUACT_REQUEST=0.1...<1"
step version-1.0-refused expect_failure 'compatible with requested version "1.0"' \
  cmake -S "$src/tests/downstream/version_check" -B "$vc/1.0" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCUACT_REQUEST=1.0

# 4. FetchContent, from the source tree (FETCHCONTENT_SOURCE_DIR_<NAME>: no download, the way a
# user tries a local checkout) and from a file:// tarball (the URL download and extraction path).
fs=$work/fetch-source-dir
step fetch-source-dir-configure cmake -S "$src/tests/downstream" -B "$fs" "${generator[@]}" \
  -DCMAKE_CUDA_ARCHITECTURES="$archs" -DCUACT_FETCH=ON \
  -DCUACT_FETCH_URL="file://$work/does-not-exist.tar.gz" -DFETCHCONTENT_SOURCE_DIR_CUACT="$src" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
step fetch-source-dir-include-dir check_include_dir "$fs" "$src/include" "$work/prefix"
step fetch-source-dir-build cmake --build "$fs" --parallel "$jobs"
step fetch-source-dir-run "$fs/cuact_downstream"

ft=$work/fetch-tarball
step make-tarball make_tarball "$work/cuact.tar.gz"
sed 's/^/    /' "$work/logs/make-tarball.log" | head -n 1
step fetch-tarball-configure cmake -S "$src/tests/downstream" -B "$ft" "${generator[@]}" \
  -DCMAKE_CUDA_ARCHITECTURES="$archs" -DCUACT_FETCH=ON -DCUACT_FETCH_URL="file://$work/cuact.tar.gz" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
step fetch-tarball-include-dir check_include_dir "$ft" "$ft/_deps/cuact-src/include" "$src/include"
step fetch-tarball-build cmake --build "$ft" --parallel "$jobs"
step fetch-tarball-run "$ft/cuact_downstream"

# 5. No CMake: the README's one-line compile (C++17 and the include directory are all it takes).
ni=$work/nvcc-include
mkdir -p "$ni"
step nvcc-include-build "$nvcc" -std=c++17 "${gencode[@]}" -I "$src/include" \
  "$src/tests/downstream/main.cu" "$src/tests/downstream/second.cu" -o "$ni/cuact_downstream"
step nvcc-include-run "$ni/cuact_downstream"

echo "[downstream] all steps passed ($((SECONDS - total_start)) s)"
