#!/usr/bin/env bash
# Runs every cuact_bench mode once, on one GPU: at most about 6 minutes (each mode
# has its own time limit, and all of them together a budget).
#
#   bash bench/run_all.sh OUT_DIR [BUILD_DIR]      (BUILD_DIR defaults to build-bench)
#
# Writes to OUT_DIR: <gpu>.csv (e.g. h200.csv: the headline, family, user and fused rows (the
# latter from cuact_bench_fused where BUILD_DIR has it), one per line,
# by bench/to_csv.py; copy it to bench/results/ and run tools/gen_performance.py), <mode>.txt
# (the mode's tables, stdout) for headline, family, user, shapes, small and sweep; sweep.csv;
# run.log (every mode's stderr, nvidia-smi, exit status and seconds per mode). The CSV's commit
# is BENCH_COMMIT, or `git rev-parse --short HEAD` where the tree is a clone ("-dirty" if it has
# changes). PLOT=1 also runs plot.py (sweep.png, sweep_ratio.png; needs matplotlib). Builds
# cuact_bench first if BUILD_DIR lacks it. Prints a short digest at the end, the headline last.
# Exits non-zero if any mode failed.
set -uo pipefail

out=${1:?usage: bash bench/run_all.sh OUT_DIR [BUILD_DIR]}
build=${2:-build-bench}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=$build/bench/cuact_bench
mkdir -p "$out"
: > "$out/run.log"
status=0
started=$SECONDS
budget=${BENCH_BUDGET:-360}  # seconds for all modes together (BENCH_BUDGET overrides)

summary=()
note() {
  echo "$*" >> "$out/run.log"
  summary+=("$*")
}

if [[ ! -x $bin ]]; then
  note "# building $bin"
  generator=()
  command -v ninja > /dev/null && generator=(-G Ninja)
  if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCMAKE_BUILD_TYPE=Release -DCUACT_BUILD_TESTS=OFF -DCUACT_BUILD_EXAMPLES=OFF \
      >> "$out/run.log" 2>&1 || { tail -30 "$out/run.log"; exit 1; }
  fi
  cmake --build "$build" --target cuact_bench -j "$(nproc)" >> "$out/run.log" 2>&1 ||
    { tail -30 "$out/run.log"; exit 1; }
  started=$SECONDS  # the budget is for the GPU work
fi

nvidia-smi >> "$out/run.log" 2>&1 || true

# run_mode NAME LIMIT_SECONDS ARGS...: stdout to NAME.txt, stderr appended to run.log.
# BENCH_MODES (default: every mode) names the modes to run, e.g. BENCH_MODES="family user";
# SHAPES_OPS (e.g. gelu:forward:fp32,gelu_tanh:forward:fp32) gives --shapes its --ops list.
run_mode() {
  local name=$1 limit=$2
  shift 2
  [[ " ${BENCH_MODES:-headline family user fused shapes small sweep} " == *" $name "* ]] || return 0
  local left=$((budget - (SECONDS - started)))
  ((limit > left)) && limit=$left
  if ((limit < 5)); then
    note "# $name: skipped, time budget spent"
    status=1
    return
  fi
  local start=$SECONDS
  echo "######## $name: cuact_bench $*" >> "$out/run.log"
  timeout --kill-after=10 "$limit" "${RUN_BIN:-$bin}" "$@" > "$out/$name.txt" 2> "$out/$name.err"
  local rc=$?
  cat "$out/$name.err" >> "$out/run.log"
  note "# $name: exit $rc after $((SECONDS - start)) s (limit $limit s)$( ((rc == 124)) && echo ', TIMED OUT')"
  if ((rc != 0)); then
    status=1
    tail -5 "$out/$name.err"
  fi
  rm -f "$out/$name.err"
}

# Most important first, so that a stuck later mode cannot cost the headline.
run_mode headline 60 --headline
run_mode family 120 --family
run_mode user 30 --user
# cuact_bench_fused's rows at a transformer MLP's shape (FUSED_FILTER: the rows; default the gates')
if [[ -x $build/bench/cuact_bench_fused ]]; then
  RUN_BIN=$build/bench/cuact_bench_fused run_mode fused 60 --rows 8192 --cols 14336 \
    --filter "${FUSED_FILTER:-swiglu clamped}"
fi
run_mode shapes 60 --shapes ${SHAPES_OPS:+--ops "$SHAPES_OPS"}
run_mode small 60 --small
run_mode sweep 180 --sweep --csv "$out/sweep.csv"

# One CSV per GPU from the one-size modes' tables: the file docs/performance.md is generated from.
commit=${BENCH_COMMIT:-}
if [[ -z $commit ]] && commit=$(git -C "$root" rev-parse --short HEAD 2> /dev/null); then
  [[ -n $(git -C "$root" status --porcelain --untracked-files=no 2> /dev/null) ]] && commit+=-dirty
fi
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2> /dev/null | head -1)
csv_inputs=()
for mode in headline family user fused; do
  [[ -s $out/$mode.txt ]] && csv_inputs+=("$mode=$out/$mode.txt")
done
if ((${#csv_inputs[@]})); then
  python3 "$root/bench/to_csv.py" "$out" --commit "${commit:-unknown}" --driver "$driver" \
    "${csv_inputs[@]}" >> "$out/run.log" 2>&1 || { note "# to_csv.py failed (see run.log)"; status=1; }
  note "# csv: $(ls "$out"/*.csv 2> /dev/null | grep -v sweep.csv | tr '\n' ' ')"
fi

if [[ ${PLOT:-0} == 1 && -s $out/sweep.csv ]]; then
  python3 "$root/bench/plot.py" "$out/sweep.csv" "$out/sweep.png" >> "$out/run.log" 2>&1 ||
    note "# plot failed (see run.log)"
fi

# Digest, least important first: the caller may see only the end of the output.
echo
echo "######## small (GPU us per call from graphs; host us per call) ########"
grep -v '^#' "$out/small.txt" 2> /dev/null | grep -v '^$'
echo
echo "######## sweep summary (full table in sweep.txt) ########"
grep -A40 '^# summary' "$out/sweep.txt" 2> /dev/null
echo
echo "######## shapes: best shape per op vs the model's (shapes.txt) ########"
grep -A10 '^# best shape' "$out/shapes.txt" 2> /dev/null
echo
echo "######## user functors (user.txt) ########"
grep -E '^(op|user_)' "$out/user.txt" 2> /dev/null
grep -E '^# (user|every|.*FAILED)' "$out/user.txt" 2> /dev/null
echo
echo "######## family minimums (family.txt) ########"
grep -E '^# (fp32|bf16|fp16|family|every|.*FAILED|built)' "$out/family.txt" 2> /dev/null
echo
echo "######## headline (headline.txt) ########"
grep -v '^$' "$out/headline.txt" 2> /dev/null | grep -Ev '^# (CUDA|clocks|blocks|GB/s)'
echo
printf '%s\n' "${summary[@]}"
echo "# total $((SECONDS - started)) s; files in $out"
exit $status
