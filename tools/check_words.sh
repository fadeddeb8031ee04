#!/usr/bin/env bash
# Fails when sources or docs name how the work was organized rather than what the code does:
# work-log words and lettered run labels (CI runs this): a reader of the code can act on a rule
# and its reason, not on a reference to how it was found.
#
#   tools/check_words.sh        list every hit as path:line:text, exit 1 if any
#
# Searched: include/ python/ docs/ README.md examples/ tests/ bench/, git's tracked and
# untracked-but-not-ignored files (so build trees and caches are not; without git, every file
# but Python caches), text files only (grep -I).
set -uo pipefail
cd "$(dirname "$0")/.."

dirs=(include python docs README.md examples tests bench)
if git rev-parse --git-dir > /dev/null 2>&1; then
  list() { git ls-files --cached --others --exclude-standard -- "${dirs[@]}"; }
else  # a copy without git: everything but caches
  list() { find "${dirs[@]}" -type f -not -path '*/__pycache__/*' -not -path '*/.pytest_cache/*'; }
fi
mapfile -t files < <(list | while read -r f; do [[ -f $f ]] && echo "$f"; done)
((${#files[@]})) || { echo "check_words: no files found"; exit 1; }

hits=$( {
  grep -nIwiE 'sessions?|loans?' -- "${files[@]}"
  grep -nIE '\bcalls? [A-Z]\b' -- "${files[@]}"
} | sort -u)
if [[ -n $hits ]]; then
  echo "$hits"
  echo "check_words: $(wc -l <<< "$hits") lines carry work-log words or lettered run labels (above)"
  exit 1
fi
echo "check_words: ${#files[@]} files clean"
