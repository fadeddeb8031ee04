#!/usr/bin/env bash
# Runs compute-sanitizer's memcheck, racecheck, initcheck and synccheck over the GPU test
# executables in their quick mode, and writes each run's summary line to OUT_DIR/sanitize.log (full
# outputs next to it, one file per tool and test). Not run: gpu_large (2^31 + 7 elements, too big
# for the sanitizers) and gpu_accuracy (every 16-bit pattern through the kernels gpu_forward and
# gpu_backward already run here: the math, not new accesses).
#
#   tests/sanitize.sh BUILD_DIR OUT_DIR
#
# Exit status: 0 when every run reports no errors and its test passed; 1 otherwise; 77 when the
# tests had no device (every run skipped). Environment:
#   COMPUTE_SANITIZER        the sanitizer binary (default: from PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)
#   CUACT_FUZZ_CASES         gpu_fuzz cases under the sanitizers (default 150)
#   CUACT_SANITIZE_TOOLS     tools to run (default "memcheck racecheck initcheck synccheck")
#   CUACT_SANITIZE_TESTS     executables to run (default "gpu_forward gpu_backward gpu_transform
#                            gpu_threads gpu_errors gpu_fuzz gpu_fused gpu_table gpu_bulk")
#   CUACT_SANITIZE_TIMEOUT   seconds per run before it counts as failed (default 300)
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
build_dir=$1
out_dir=$2
mkdir -p "$out_dir"
log="$out_dir/sanitize.log"
: >"$log"

sanitizer=${COMPUTE_SANITIZER:-}
if [ -z "$sanitizer" ]; then
  for candidate in "$(command -v compute-sanitizer 2>/dev/null)" "${CUDA_HOME:-/nonexistent}/bin/compute-sanitizer" \
                   /usr/local/cuda/bin/compute-sanitizer; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      sanitizer=$candidate
      break
    fi
  done
fi
if [ -z "$sanitizer" ]; then
  echo "compute-sanitizer not found (set COMPUTE_SANITIZER)" | tee -a "$log" >&2
  exit 1
fi

# Quick mode: small sizes and matrices (sanitizers slow kernels and API calls 10-100x).
export CUACT_TEST_QUICK=1
export CUACT_FUZZ_CASES=${CUACT_FUZZ_CASES:-150}
tools=${CUACT_SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}
tests=${CUACT_SANITIZE_TESTS:-gpu_forward gpu_backward gpu_transform gpu_threads gpu_errors gpu_fuzz gpu_fused gpu_table gpu_bulk}
limit=${CUACT_SANITIZE_TIMEOUT:-300}

echo "# $("$sanitizer" --version 2>/dev/null | tail -n 1); CUACT_TEST_QUICK=1 CUACT_FUZZ_CASES=$CUACT_FUZZ_CASES" >>"$log"
failed=0
ran=0
skipped=0
for tool in $tools; do
  for test in $tests; do
    exe="$build_dir/tests/$test"
    if [ ! -x "$exe" ]; then
      echo "$tool $test: MISSING $exe" >>"$log"
      failed=1
      continue
    fi
    output="$out_dir/$tool.$test.txt"
    start=$(date +%s)
    # racecheck loses track of the launches gpu_threads' 16 host threads make at once ("Internal
    # Sanitizer Error: Detected a failure to track a kernel launch", counted as a hazard, and once
    # a hang, with compute-sanitizer 2025.3.1), so that run serializes them: the hazards it
    # looks for lie within a launch, which serializing does not change.
    blocking=${CUDA_LAUNCH_BLOCKING:-0}
    [ "$tool" = racecheck ] && [ "$test" = gpu_threads ] && blocking=1
    # --error-exitcode: a reported error fails the run even when the test itself passes.
    CUDA_LAUNCH_BLOCKING=$blocking timeout "$limit" "$sanitizer" --tool "$tool" --error-exitcode 86 \
      "$exe" >"$output" 2>&1
    status=$?
    seconds=$(( $(date +%s) - start ))
    # memcheck/initcheck/synccheck: "ERROR SUMMARY: 0 errors"; racecheck: "RACECHECK SUMMARY: ..."
    summary=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$output" | tail -n 1 | sed 's/^=* *//')
    [ -n "$summary" ] || summary="(no summary line)"
    verdict=ok
    if [ "$status" -eq 77 ] && grep -q "SKIPPED" "$output"; then
      verdict=skipped
      skipped=$((skipped + 1))
    elif [ "$status" -ne 0 ]; then
      verdict="FAILED (exit $status$([ "$status" -eq 124 ] && echo ", timed out after ${limit}s"))"
      failed=1
    elif [ "$summary" != "(no summary line)" ] && ! echo "$summary" | grep -Eq "ERROR SUMMARY: 0 errors|\(0 errors"; then
      verdict="FAILED (summary)"
      failed=1
    fi
    ran=$((ran + 1))
    echo "$tool $test: $summary [$verdict, ${seconds}s]" >>"$log"
  done
done

cat "$log"
if [ "$failed" -ne 0 ]; then
  exit 1
fi
if [ "$ran" -gt 0 ] && [ "$skipped" -eq "$ran" ]; then
  exit 77
fi
exit 0
