#!/usr/bin/env bash
# One exploration call on a device machine (used while tuning the launch model and the Python
# build; logs under /tmp/explore, packed into $OUT/explore.tgz):
#   - cuact_torch's wheel builds in the background (then pytest, while time is left)
#   - cuact_bench --shapes over the ops in $SHAPE_OPS
#   - bench/count_instructions.sh over --user and the $FAMILY_REGEX rows of --family
set -uo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
deadline=${DEADLINE:-570}
logs=/tmp/explore
mkdir -p "$logs" "${OUT:=/tmp/explore-out}"
trap 'tar czf "$OUT/explore.tgz" -C /tmp explore' EXIT
left() { echo $((deadline - (SECONDS - start))); }
stamp() { echo "[$((SECONDS - start)) s] $*"; }
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee "$logs/gpu.txt"
export PATH="$PWD/python/.tools/bin:$PATH" CUACT_TORCH_FAMILY=1 MAX_JOBS=6
export TORCH_CUDA_ARCH_LIST=9.0 TORCH_EXTENSIONS_DIR=/tmp/cuact_torch_extensions
(python3 -m pip wheel --no-build-isolation --no-deps -w /tmp/wheel ./python > "$logs/pip.log" 2>&1) &
wheel_pid=$!
cmake -S . -B build -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
  -DCUACT_BUILD_TESTS=OFF -DCUACT_BUILD_EXAMPLES=OFF -DCUACT_BUILD_BENCH=ON > "$logs/configure.log" 2>&1
cmake --build build -j 10 --target cuact_bench > "$logs/build.log" 2>&1 || grep -E "error" "$logs/build.log" | head
stamp built
if [[ -n ${SHAPE_OPS:-} ]]; then
  timeout $(($(left) - 150)) build/bench/cuact_bench --shapes --ops "$SHAPE_OPS" --reps 5 > "$logs/shapes.txt" 2>&1
  grep -E "^# |model:" "$logs/shapes.txt" | cut -c1-200
  stamp shapes
fi
NCU_TIMEOUT=$(($(left) / 3)) bash bench/count_instructions.sh build "$logs/ipe-user" --user 2>&1 | tee "$logs/ipe-user.txt" | cut -c1-140
stamp ipe-user
if [[ -n ${FAMILY_REGEX:-} ]]; then
  NCU_TIMEOUT=$(($(left) - 90)) bash bench/count_instructions.sh build "$logs/ipe-family" --family -- "$FAMILY_REGEX" 2>&1 |
    tee "$logs/ipe-family.txt" | cut -c1-140
  stamp ipe-family
fi
wait "$wheel_pid"
stamp "wheel: $(ls /tmp/wheel 2>/dev/null)"
grep -E "error|aborted" "$logs/pip.log" | head -12
if ! ls /tmp/wheel/*.whl > /dev/null 2>&1; then
  # the failing nvcc command again, verbose: which stage stopped
  cmd=$(grep -A1 "FAILED:" "$logs/pip.log" | grep "nvcc" | head -1 | sed 's/^ *//')
  [[ -n $cmd ]] && (eval "$cmd -v" > "$logs/nvcc-v.log" 2>&1; echo "nvcc -v exit $?"; grep -vE "^#\$ _|^#\$ (PATH|LIBRARIES|INCLUDES|TOP|NVVMIR|CICC|NVCC)" "$logs/nvcc-v.log" | tail -12 | cut -c1-300)
fi
if ls /tmp/wheel/*.whl > /dev/null 2>&1; then
  python3 -m pip install --no-deps --no-index /tmp/wheel/*.whl >> "$logs/pip.log" 2>&1
  (cd /tmp && timeout $(($(left) - 5)) python3 -m pytest -q -rs -x "$OLDPWD/python/tests") > "$logs/pytest.log" 2>&1
  tail -15 "$logs/pytest.log"
fi
