#!/usr/bin/env bash
# Everything that needs a GPU, in one script for the device machines (H100/H200): logs under
# /tmp/gpu-logs, packed into $OUT/gpu-logs.tgz (the device tool returns few files), summaries on
# stdout.
#
#   bash tools/gpu_validate.sh cpp       configure + build tests, examples, bench (sm_90); ctest
#                                        (every test: GPU ones run here); bench/run_all.sh;
#                                        cuact_bench_fused
#   bash tools/gpu_validate.sh python    pip install ./python (or a carried wheel in python/.tools
#                                        /wheel), pytest, timing (torch eager / compile / cuact),
#                                        KernelBench's harness on the five ModelNew files
#   bash tools/gpu_validate.sh python-time   as python without pytest
set -uo pipefail
cd "$(dirname "$0")/.."
logs=/tmp/gpu-logs
mkdir -p "$logs"
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
status=0
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,memory.total --format=csv | tee "$logs/gpu.txt"

pack() { tar czf "$OUT/gpu-logs.tgz" -C /tmp gpu-logs; }
trap pack EXIT

cpp() {
  cmake -S . -B build -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
    -DCUACT_BUILD_TESTS=ON -DCUACT_REQUIRE_TESTS=ON -DCUACT_BUILD_EXAMPLES=ON \
    -DCUACT_BUILD_BENCH=ON > "$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; return 1; }
  grep -i "catch2" "$logs/configure.log" | head -3
  local t=$SECONDS
  # -k 0: a target that fails to build leaves the others to run (ctest reports it Not Run)
  cmake --build build -j "$(nproc)" -- -k 0 > "$logs/build.log" 2>&1 ||
    { status=1; grep -E "error|FAILED" "$logs/build.log" | head -40; }
  echo "build: $((SECONDS - t)) s"
  t=$SECONDS
  ctest --test-dir build --output-on-failure -j 3 --timeout 400 ${CTEST_ARGS:-} > "$logs/ctest.log" 2>&1 || status=1
  echo "ctest: $((SECONDS - t)) s"
  grep -E "tests passed|tests failed|Failed|\*\*\*|Skipped|Not Run|Timeout" "$logs/ctest.log" | tail -25
  bash bench/run_all.sh "$logs/bench" build 2>&1 | tail -12 || status=1
  grep -E "^# (headline|family|user|sweep|small|shapes|relu_backward_mask)" "$logs"/bench/*.txt | cut -c1-200
  build/bench/cuact_bench_fused > "$logs/fused.txt" 2>&1 || status=1
  cat "$logs/fused.txt"
}

python_steps() {
  export PATH="$PWD/python/.tools/bin:$PATH" CUACT_TORCH_FAMILY=1 MAX_JOBS=$(nproc)
  export TORCH_CUDA_ARCH_LIST=9.0 TORCH_EXTENSIONS_DIR=/tmp/cuact_torch_extensions
  local t=$SECONDS
  if ls python/.tools/wheel/*.whl > /dev/null 2>&1; then
    python3 -m pip install --no-deps --no-index python/.tools/wheel/*.whl > "$logs/pip.log" 2>&1
  else
    python3 -m pip wheel --no-build-isolation --no-deps -w "$logs/wheel" ./python > "$logs/pip.log" 2>&1 &&
      python3 -m pip install --no-deps --no-index "$logs"/wheel/*.whl >> "$logs/pip.log" 2>&1 &&
      cp "$logs"/wheel/*.whl "$OUT/"
  fi || { tail -30 "$logs/pip.log"; status=1; return 1; }
  echo "pip: $((SECONDS - t)) s"
  if [[ ${1:-} != time-only ]]; then
    t=$SECONDS
    (cd /tmp && python3 -m pytest -q -rs "$OLDPWD/python/tests") > "$logs/pytest.log" 2>&1 || status=1
    echo "pytest: $((SECONDS - t)) s"
    tail -25 "$logs/pytest.log"
  fi
  t=$SECONDS
  python3 python/bench/timing.py --reps 10 \
    --ops "${TIMING_OPS:-relu,selu,silu,softsign,gelu_tanh,gelu,sigmoid,tanh,mish,elu}" \
    --json "$logs/timing.json" > "$logs/timing.txt" 2>&1 || status=1
  echo "timing: $((SECONDS - t)) s"
  cat "$logs/timing.txt"
  t=$SECONDS
  python3 python/bench/kernelbench_run.py python/.tools/KernelBench --json "$logs/kernelbench.json" \
    > "$logs/kernelbench.txt" 2>&1 || status=1
  echo "kernelbench: $((SECONDS - t)) s"
  tail -30 "$logs/kernelbench.txt"
}

case ${1:-cpp} in
  cpp) cpp || status=1 ;;
  python) python_steps || status=1 ;;
  python-time) python_steps time-only || status=1 ;;
  *) echo "usage: $0 cpp|python|python-time"; exit 2 ;;
esac
exit $status
