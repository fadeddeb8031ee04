#!/usr/bin/env bash
# Instructions issued per element by cuact's kernels, against the launch model's budget: Nsight
# Compute's smsp__inst_executed.sum (warp instructions) x 32 lanes / elements, for the first
# launch of each kernel instantiation that one cuact_bench mode runs. Needs ncu on a GPU machine
# whose runtime lets it read the counters (the device notes say which).
#
#   bash bench/count_instructions.sh BUILD_DIR OUT_DIR [cuact_bench arguments...] [-- KERNEL_REGEX]
#
# e.g. bash bench/count_instructions.sh build /tmp/ipe --user
#      bash bench/count_instructions.sh build /tmp/ipe --family -- 'gelu|silu|softplus'
# The budget (issue 10): elements/s at the copy ceiling over SMs x SM clock x 128 lanes; a kernel
# above it cannot reach the ceiling whatever its launch shape.
set -uo pipefail
build=${1:?build directory}
out=${2:?output directory}
shift 2
args=()
regex=
while (($#)); do
  if [[ $1 == -- ]]; then
    regex=$2
    break
  fi
  args+=("$1")
  shift
done
mkdir -p "$out"
filter="regex:elementwise_kernel${regex:+.*(${regex})}"
timeout "${NCU_TIMEOUT:-300}" ncu --clock-control none --kernel-name-base demangled \
  --kernel-name "$filter" --metrics smsp__inst_executed.sum,dram__bytes.sum,gpu__time_duration.sum \
  --csv --page raw --print-units base "$build/bench/cuact_bench" "${args[@]}" --reps 1 > "$out/ncu.csv" 2> "$out/ncu.log"
echo "ncu exit $? ($(wc -l < "$out/ncu.csv") csv lines)"
python3 - "$out/ncu.csv" <<'PY'
import csv, io, os, re, sys
# elements per launch: the bench's n (4096 x 393216); ELEMENTS overrides (fp64 rows use half)
n = float(os.environ.get("ELEMENTS", 4096 * 393216))
text = open(sys.argv[1]).read()
start = text.find('"ID"')
if start < 0:
    print("no ncu rows"); sys.exit(0)
rows = list(csv.DictReader(io.StringIO(text[start:])))
seen = set()
print(f"{'kernel (functor, types)':90} {'inst/elem':>9} {'DRAM GB':>8} {'us':>8}")
for r in rows:
    name = r.get("Kernel Name", "")
    if name in seen or not r.get("smsp__inst_executed.sum", "").replace(",", "").replace(".", "").isdigit():
        continue
    seen.add(name)
    inst = float(r["smsp__inst_executed.sum"].replace(",", ""))
    dram = float(r["dram__bytes.sum"].replace(",", "")) if r.get("dram__bytes.sum") else 0
    us = float(r["gpu__time_duration.sum"].replace(",", "")) / 1000 if r.get("gpu__time_duration.sum") else 0
    short = re.sub(r"cuact::|bench::|user_functors::|detail::", "", name)
    short = re.sub(r"\s+", " ", short)[:90]
    print(f"{short:90} {inst * 32 / n:9.1f} {dram / 1e9:8.2f} {us:8.0f}")
PY
