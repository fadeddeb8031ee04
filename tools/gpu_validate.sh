#!/usr/bin/env bash
# Everything that needs a GPU, in one call on a device machine (H100/H200): logs under
# /tmp/gpu-logs, packed into $OUT/gpu-logs.tgz (the device tool returns few files), summaries on
# stdout. Steps run in order while time is left before DEADLINE seconds (default 570):
#
#   bash tools/gpu_validate.sh [cpp] [python] [timing] [kernelbench]
#
#   cpp          configure + build tests, examples, bench (sm_90; cuact_torch's wheel builds in
#                the background meanwhile when `python` is asked for); ctest ($CTEST_ARGS, e.g.
#                -L gpu); bench/run_all.sh and cuact_bench_fused (BENCH=0 skips them; the bench
#                leaves BENCH_RESERVE seconds, default 60, for the later steps)
#   python       install the wheel; pytest python/tests ($PYTEST_ARGS, e.g. -k "not two_gpus")
#   timing       python/bench/timing.py: torch eager, torch.compile, cuact ($TIMING_OPS; default the ten
#                ops of bench/RESULTS.md's PyTorch table, about 35 s)
#   fused_timing python/bench/fused_timing.py: cuact's fused ops against torch eager and compile
#   kernelbench  python/bench/kernelbench_run.py on the five ModelNew files (KernelBench checkout
#                carried in python/.tools/KernelBench; $KERNELBENCH_ARGS, e.g. "--only Softsign,MinGPT":
#                the harness needs 150-250 s per problem, so one call fits about three)
set -uo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
deadline=${DEADLINE:-570}
logs=/tmp/gpu-logs
mkdir -p "$logs"
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
status=0
steps=" ${*:-cpp} "
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,memory.total --format=csv | tee "$logs/gpu.txt"
pack() { tar czf "$OUT/gpu-logs.tgz" -C /tmp gpu-logs; }
trap pack EXIT
left() { echo $((deadline - (SECONDS - start))); }
stamp() { echo "[$((SECONDS - start)) s] $*"; }

export PATH="$PWD/python/.tools/bin:$PATH" CUACT_TORCH_FAMILY=1 MAX_JOBS=10  # ops_group0-9: one job each
export TORCH_CUDA_ARCH_LIST=9.0 TORCH_EXTENSIONS_DIR=/tmp/cuact_torch_extensions
wheel_pid=
if [[ $steps == *" python "* ]] && ! ls /tmp/wheel/*.whl > /dev/null 2>&1; then
  (python3 -m pip wheel --no-build-isolation --no-deps -w /tmp/wheel ./python > "$logs/pip.log" 2>&1) &
  wheel_pid=$!
fi

if [[ $steps == *" cpp "* ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
    -DCUACT_BUILD_TESTS=ON -DCUACT_REQUIRE_TESTS=ON -DCUACT_BUILD_EXAMPLES=ON \
    -DCUACT_BUILD_BENCH=ON > "$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; status=1; }
  grep -i "catch2" "$logs/configure.log" | head -3
  # -k 0: a target that fails to build leaves the others to run (ctest reports it Not Run)
  cmake --build build -j "$(nproc)" -- -k 0 > "$logs/build.log" 2>&1 ||
    { status=1; grep -E "error|FAILED" "$logs/build.log" | head -40; }
  stamp "built"
  # the bench keeps 200 s; a DEADLINE that leaves ctest less than a minute says so (timeout
  # refuses a negative limit and runs nothing, and takes 0 as no limit at all)
  ctest_limit=$(($(left) - 200))
  if ((ctest_limit < 60)); then
    echo "ctest not run: $ctest_limit s left for it before DEADLINE (raise DEADLINE)" | tee "$logs/ctest.log"
    status=1
  else
    timeout $ctest_limit ctest --test-dir build --output-on-failure -j 4 --timeout 300 ${CTEST_ARGS:-} \
      > "$logs/ctest.log" 2>&1 || status=1
  fi
  stamp "ctest"
  grep -E "tests passed|tests failed|Failed|\*\*\*|Not Run|Timeout|Skipped" "$logs/ctest.log" | tail -25
  if [[ ${BENCH:-1} == 0 ]]; then stamp "bench skipped (BENCH=0)"; else
  BENCH_BUDGET=$(($(left) - ${BENCH_RESERVE:-60})) bash bench/run_all.sh "$logs/bench" build > "$logs/bench-digest.txt" 2>&1 || status=1
  grep -hE "^# (headline|family|user|sweep|small|shapes|relu_backward_mask)" "$logs"/bench/*.txt | cut -c1-160
  stamp "bench"
  timeout 60 build/bench/cuact_bench_fused --reps 5 > "$logs/fused.txt" 2>&1 || status=1
  cat "$logs/fused.txt"
  stamp "fused"
  fi
fi

if [[ $steps == *" python "* ]]; then
  [[ -n $wheel_pid ]] && wait "$wheel_pid"
  stamp "wheel"
  if ! ls /tmp/wheel/*.whl > /dev/null 2>&1; then
    # the failing nvcc command again, verbose and keeping its intermediate files: which stage
    # stopped ("Compilation aborted." alone names none)
    cmd=$(grep -A1 "FAILED:" "$logs/pip.log" | grep "nvcc" | head -1 | sed 's/^ *//')
    mkdir -p python/build/temp.linux-x86_64-cpython-312/cuact_torch/csrc /tmp/nvcc-keep
    [[ -n $cmd ]] && (eval "$cmd -v --keep --keep-dir /tmp/nvcc-keep" > "$logs/nvcc-v.log" 2>&1
      echo "nvcc -v exit $?"; grep -v "^#\$ [A-Z_]*=" "$logs/nvcc-v.log" | tail -8 | cut -c1-400)
  fi
  python3 -m pip install --no-deps --no-index /tmp/wheel/*.whl >> "$logs/pip.log" 2>&1 ||
    { status=1; grep -E "error" "$logs/pip.log" | head -30; tail -5 "$logs/pip.log"; }
  cp /tmp/wheel/*.whl "$OUT/" 2>/dev/null
  # PYTEST_ARGS is split as the shell splits words (quotes kept: -k "not two_gpus" is two words)
  eval "pytest_args=(${PYTEST_ARGS:-})"
  (cd /tmp && timeout $(($(left) - 20)) python3 -m pytest -q -rs --maxfail=10 "${pytest_args[@]}" "$OLDPWD/python/tests") > "$logs/pytest.log" 2>&1 || status=1
  stamp "pytest"
  tail -30 "$logs/pytest.log"
fi
if [[ $steps == *" timing "* ]] && (($(left) > 60)); then
  timeout $(($(left) - 10)) python3 python/bench/timing.py --reps 10 \
    --ops "${TIMING_OPS:-relu,selu,silu,softsign,gelu,gelu_tanh,softplus,mish,sigmoid,tanh}" --json "$logs/timing.json" > "$logs/timing.txt" 2>&1 || status=1
  stamp "timing"
  cat "$logs/timing.txt"
fi
if [[ $steps == *" fused_timing "* ]] && (($(left) > 60)); then
  timeout $(($(left) - 10)) python3 python/bench/fused_timing.py --reps 10 --json "$logs/fused_timing.json" \
    > "$logs/fused_timing.txt" 2>&1 || status=1
  stamp "fused_timing"
  grep -E "^\||^forward targets" "$logs/fused_timing.txt"
fi
if [[ $steps == *" kernelbench "* ]] && (($(left) > 60)); then
  timeout $(($(left) - 5)) python3 python/bench/kernelbench_run.py python/.tools/KernelBench --trials 30 ${KERNELBENCH_ARGS:-} \
    --json "$logs/kernelbench.json" > "$logs/kernelbench.txt" 2>&1 || status=1
  stamp "kernelbench"
  tail -30 "$logs/kernelbench.txt"
fi
exit $status
