#!/usr/bin/env bash
# Runs every cuact_bench mode once, on one GPU, in well under 5 minutes.
#
#   bash bench/run_all.sh OUT_DIR [BUILD_DIR]      (BUILD_DIR defaults to build-bench)
#
# Writes to OUT_DIR: <mode>.txt (the table, stdout) and <mode>.log (stderr, progress) for
# headline, blocks, small and sweep; sweep.csv, sweep.png and sweep_ratio.png; nvidia-smi.txt;
# summary.txt (exit status and seconds per step). Builds cuact_bench first if BUILD_DIR lacks it.
# Prints a compact digest at the end, the headline table last. Exits non-zero if any step failed.
set -uo pipefail

out=${1:?usage: bash bench/run_all.sh OUT_DIR [BUILD_DIR]}
build=${2:-build-bench}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$build/bench/cuact_bench
mkdir -p "$out"
: > "$out/summary.txt"
status=0
started=$SECONDS
budget=270  # seconds for all modes together; each mode also has its own limit

note() { echo "$*" | tee -a "$out/summary.txt"; }

if [[ ! -x $bin ]]; then
  note "# building $bin"
  generator=()
  command -v ninja > /dev/null && generator=(-G Ninja)
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCMAKE_BUILD_TYPE=Release > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
  fi
  cmake --build "$build" --target cuact_bench -j "$(nproc)" >> "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
fi

nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true

# run_mode NAME LIMIT_SECONDS ARGS...: stdout to NAME.txt, stderr to NAME.log.
run_mode() {
  local name=$1 limit=$2
  shift 2
  local left=$((budget - (SECONDS - started)))
  ((limit > left)) && limit=$left
  if ((limit < 5)); then
    note "# $name: skipped, time budget spent"
    status=1
    return
  fi
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$bin" "$@" > "$out/$name.txt" 2> "$out/$name.log"
  local rc=$?
  note "# $name: exit $rc after $((SECONDS - start)) s (limit $limit s)$( ((rc == 124)) && echo ', TIMED OUT')"
  if ((rc != 0)); then
    status=1
    tail -5 "$out/$name.log"
  fi
}

# Most important first, so that a stuck later step cannot cost the headline.
run_mode headline 45 --headline
run_mode blocks 40 --blocks
run_mode small 40 --small
run_mode sweep 170 --sweep --csv "$out/sweep.csv"

if [[ -s $out/sweep.csv ]]; then
  python3 "$root/bench/plot.py" "$out/sweep.csv" "$out/sweep.png" > "$out/plot.log" 2>&1 ||
    note "# plot failed: $(tail -1 "$out/plot.log")"
fi

# Digest, least important first: the caller may see only the end of the output.
echo
echo "######## small (GPU us per call from graphs; host us per call) ########"
grep -v '^#' "$out/small.txt" 2> /dev/null
grep '^#   ' "$out/small.txt" 2> /dev/null | grep -i 'cudaPointer'
echo
echo "######## sweep: rows at the seeds' n (full table in sweep.txt, plot in sweep.png) ########"
grep -E '^(op|---)' "$out/sweep.txt" 2> /dev/null | head -2
grep -E 'seeds' "$out/sweep.txt" 2> /dev/null | grep -v '^#'
grep -E 'L2-resident|relaxed' "$out/sweep.txt" 2> /dev/null | grep -v '^#' | head -3
grep -E '^# sweep done' "$out/sweep.txt" 2> /dev/null
echo
echo "######## blocks (x memcpy, GB/s) ########"
grep -v '^# ' "$out/blocks.txt" 2> /dev/null | grep -v '^$'
echo
echo "######## headline ########"
cat "$out/headline.txt" 2> /dev/null
echo
cat "$out/summary.txt"
echo "# total $((SECONDS - started)) s; files in $out"
exit $status
