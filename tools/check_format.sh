#!/usr/bin/env bash
# Checks that C++/CUDA sources match .clang-format (CI runs this; python/ is not checked).
#
#   tools/check_format.sh            list the files clang-format would change, exit 1 if any
#   tools/check_format.sh --diff     the same, with the changes as a diff
#   tools/check_format.sh --fix      rewrite those files in place (clang-format -i)
#
# Files: git's tracked and untracked-but-not-ignored *.cu *.cuh *.hpp *.cpp *.h under include/,
# tests/, examples/ and bench/. Formatter: $CLANG_FORMAT, else clang-format-14 (Debian bookworm's,
# what CI uses; other versions may format a few constructs differently), else clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=check
case ${1:-} in
  "") ;;
  --diff) mode=diff ;;
  --fix) mode=fix ;;
  *) sed -n '2,9p' "$0" >&2; exit 2 ;;
esac

formatter=${CLANG_FORMAT:-}
if [[ -z $formatter ]]; then
  for candidate in clang-format-14 clang-format; do
    if command -v "$candidate" > /dev/null; then
      formatter=$candidate
      break
    fi
  done
fi
if [[ -z $formatter ]]; then
  echo "check_format: clang-format not found (Debian/Ubuntu: sudo apt-get install clang-format)" >&2
  exit 1
fi

mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
  'include/*' 'tests/*' 'examples/*' 'bench/*' |
  grep -E '\.(cu|cuh|hpp|cpp|h)$' | sort -u | while read -r f; do [[ -f $f ]] && echo "$f"; done)

if [[ $mode == fix ]]; then
  "$formatter" -i --style=file "${files[@]}"
  echo "check_format: formatted ${#files[@]} files with $("$formatter" --version)"
  exit 0
fi

bad=()
for f in "${files[@]}"; do
  if ! "$formatter" --dry-run --Werror --style=file "$f" > /dev/null 2>&1; then
    bad+=("$f")
    if [[ $mode == diff ]]; then
      "$formatter" --style=file "$f" | diff -u --label "a/$f" --label "b/$f" "$f" - || true
    fi
  fi
done
version=$("$formatter" --version)
if [[ ${#bad[@]} -gt 0 ]]; then
  printf 'check_format: %s\n' "${bad[@]/#/needs formatting: }"
  echo "check_format: ${#bad[@]} of ${#files[@]} files differ from .clang-format ($version);" \
       "see tools/check_format.sh --diff, fix with tools/check_format.sh --fix"
  exit 1
fi
echo "check_format: ${#files[@]} files match .clang-format ($version)"
