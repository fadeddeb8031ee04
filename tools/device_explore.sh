#!/usr/bin/env bash
# One exploration call on a device machine (used while tuning the launch model; logs under
# /tmp/explore, packed into $OUT/explore.tgz):
#   - cuact_bench --shapes over the ops in $SHAPE_OPS
#   - bench/count_instructions.sh over --user and the $FAMILY_REGEX rows of --family
# The Python package is tools/gpu_validate.sh's step (`bash tools/gpu_validate.sh python`, in the
# same call if wanted).
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
