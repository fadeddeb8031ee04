#!/usr/bin/env bash
# Build, test and time cuact_torch on a GPU machine; logs under $OUT (default ./gpu_logs).
#
#   bash python/run_gpu.sh [build] [test] [jit] [time] [kernelbench]     (default: all, in order)
#
# Optional carried tools: python/.tools/bin (e.g. a ninja binary, put first on PATH: torch's JIT
# builds and load_inline need ninja) and python/.tools/KernelBench (a KernelBench checkout, for
# the `time` and `kernelbench` steps). CUACT_TORCH_FAMILY=1 builds the whole family.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu_logs}
mkdir -p "$OUT"
[ -d python/.tools/bin ] && export PATH="$PWD/python/.tools/bin:$PATH"
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-/tmp/cuact_torch_extensions}
export CUACT_INCLUDE=$PWD/include
KB=${KERNELBENCH:-$PWD/python/.tools/KernelBench}
steps=${*:-build test jit time}
status=0

run() {  # run NAME COMMAND...: log to $OUT/NAME.log, print the tail and the status
  local name=$1; shift
  echo "== $name: $*"
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  tail -n 40 "$OUT/$name.log"
  echo "== $name: exit $rc"
  [ $rc -ne 0 ] && status=1
  return 0
}

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())"
  python3 -c "import pytest; print('pytest', pytest.__version__)" 2>&1 | tail -1
  ninja --version 2>&1 | sed 's/^/ninja /' | tail -1
} | tee "$OUT/environment.txt"

for step in $steps; do
  case $step in
    build) run pip_install python3 -m pip install --no-build-isolation -v ./python ;;
    test)
      if python3 -c "import pytest" 2>/dev/null; then
        run tests python3 -m pytest -v -rs python/tests
      else
        run tests python3 python/tests/run_all.py
      fi ;;
    jit) run jit_load env CUACT_TORCH_JIT=1 python3 -c "import cuact_torch, torch; print(cuact_torch.LOADED_FROM, cuact_torch.FAMILIES); x = torch.randn(5, device='cuda'); print(torch.ops.cuact.selu(x) - torch.selu(x))" ;;
    time)
      if [ -d "$KB" ]; then
        run timing python3 python/bench/timing.py --json "$OUT/timing.json" --kernelbench "$KB"
      else
        run timing python3 python/bench/timing.py --json "$OUT/timing.json"
      fi ;;
    kernelbench) run kernelbench python3 python/bench/kernelbench_run.py "$KB" --json "$OUT/kernelbench.json" ;;
    *) echo "unknown step $step"; status=1 ;;
  esac
done
exit $status
