#!/usr/bin/env bash
# What one cuact call costs to compile, against a raw grid-stride kernel compiled in the same run.
# Fails when forward(relu{}, float*...) through the headers it needs (activations.cuh +
# forward.cuh) takes more than MAX_MINIMAL x the raw kernel's TU, through cuact/cuact.cuh more
# than MAX_UMBRELLA x, or when its object is over MAX_OBJECT_KB.
#
# Figures are CPU seconds (user + sys of nvcc and its children), the median of RUNS rounds; each
# round compiles every TU once, in turn, so a change in the machine's load reaches all of them
# alike, and the ratio of medians is what is checked.
#
# usage: tools/check_compile_cost.sh [--include DIR] [--table]
#   --include DIR  the cuact headers to measure (default: include/ of this tree)
#   --table        also time an empty TU, cuact.cuh alone and a user functor's forward in fp32
#                  and in bf16, and print a markdown table of every TU (docs/performance.md)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
include="$root/include"
table=0
while [ $# -gt 0 ]; do
  case "$1" in
    --include) include="$2"; shift 2 ;;
    --table) table=1; shift ;;
    *) echo "usage: $0 [--include DIR] [--table]" >&2; exit 2 ;;
  esac
done

NVCC="${NVCC:-nvcc}"
ARCH="${CUACT_COMPILE_COST_ARCH:-sm_90}"
RUNS="${RUNS:-5}"
MAX_MINIMAL="${MAX_MINIMAL:-3.5}"
MAX_UMBRELLA="${MAX_UMBRELLA:-4.5}"
MAX_OBJECT_KB="${MAX_OBJECT_KB:-100}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat >"$work/empty.cu" <<'CU'
CU
cat >"$work/raw.cu" <<'CU'
#include <cstddef>
__global__ void relu_kernel(const float* in, float* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}
cudaError_t run(const float* in, float* out, std::size_t n, cudaStream_t stream) {
  relu_kernel<<<1024, 256, 0, stream>>>(in, out, n);
  return cudaGetLastError();
}
CU
cat >"$work/umbrella_only.cu" <<'CU'
#include <cuact/cuact.cuh>
CU
for variant in minimal umbrella; do
  if [ "$variant" = minimal ]; then
    headers='#include <cuact/activations.cuh>
#include <cuact/forward.cuh>'
  else
    headers='#include <cuact/cuact.cuh>'
  fi
  cat >"$work/forward_$variant.cu" <<CU
$headers
cudaError_t run(const float* in, float* out, std::size_t n, cudaStream_t stream) {
  return cuact::forward(cuact::relu{}, in, out, n, stream);
}
CU
done
# A user functor written plainly (a float member, no hint), one (op, dtype) per TU.
for dtype in float __nv_bfloat16; do
  cat >"$work/user_$dtype.cu" <<CU
#include <cuact/forward.cuh>
struct leaky {
  float slope = 0.01f;
  template <class C>
  __host__ __device__ C operator()(C x) const { return x > C(0) ? x : x * slope; }
};
cudaError_t run(const $dtype* in, $dtype* out, std::size_t n, cudaStream_t stream) {
  return cuact::forward(leaky{}, in, out, n, stream);
}
CU
done

# CPU seconds of one nvcc -c.
cpu_seconds() {
  local src="$1" t
  t=$( { TIMEFORMAT='%U %S'; time "$NVCC" -std=c++17 -O3 -arch="$ARCH" -I"$include" -c "$src" \
           -o "${src%.cu}.o" >/dev/null 2>"${src%.cu}.log"; } 2>&1 | awk '{print $1 + $2}')
  if [ ! -f "${src%.cu}.o" ]; then cat "${src%.cu}.log" >&2; echo "FAIL: $src does not compile" >&2; exit 1; fi
  echo "$t"
}
# Kernels in the object: the sections of its embedded cubin (no cuobjdump needed).
kernels() { strings -a "$1" | grep '^\.text\._Z' | sort -u | wc -l; }
kb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.0f", b / 1024 }'; }
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END {
  print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

names="raw forward_minimal forward_umbrella"
[ "$table" = 1 ] && names="empty raw umbrella_only forward_minimal forward_umbrella user_float user___nv_bfloat16"
declare -A times secs
for _ in $(seq "$RUNS"); do
  for name in $names; do
    times[$name]="${times[$name]:-} $(cpu_seconds "$work/$name.cu")"
  done
done
for name in $names; do secs[$name]=$(echo "${times[$name]}" | median); done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
if [ "$table" = 1 ]; then
  declare -A what=(
    [empty]="an empty TU"
    [raw]="a raw grid-stride relu kernel (the reference)"
    [umbrella_only]="\`#include <cuact/cuact.cuh>\`, no call"
    [forward_minimal]="\`forward(relu{}, float*...)\`, activations.cuh + forward.cuh"
    [forward_umbrella]="\`forward(relu{}, float*...)\`, cuact.cuh"
    [user_float]="a user functor's forward, float, forward.cuh"
    [user___nv_bfloat16]="a user functor's forward, bf16, forward.cuh")
  echo "| TU | CPU s | x raw | object KB | kernels |"
  echo "|---|---|---|---|---|"
  for name in $names; do
    o="$work/$name.o"
    printf '| %s | %.2f | %s | %s | %s |\n' "${what[$name]}" "${secs[$name]}" \
      "$(ratio "${secs[$name]}" "${secs[raw]}")" "$(kb "$o")" "$(kernels "$o")"
  done
fi

r_min=$(ratio "${secs[forward_minimal]}" "${secs[raw]}")
r_umb=$(ratio "${secs[forward_umbrella]}" "${secs[raw]}")
obj_kb=$(kb "$work/forward_umbrella.o")
echo "forward(relu, float): minimal headers ${r_min} x raw (max $MAX_MINIMAL), cuact.cuh ${r_umb} x raw (max $MAX_UMBRELLA), object ${obj_kb} KB (max $MAX_OBJECT_KB); medians of $RUNS, raw ${secs[raw]} s"
fail=0
awk -v r="$r_min" -v m="$MAX_MINIMAL" 'BEGIN { exit !(r > m) }' && { echo "FAIL: minimal-header ratio" >&2; fail=1; }
awk -v r="$r_umb" -v m="$MAX_UMBRELLA" 'BEGIN { exit !(r > m) }' && { echo "FAIL: umbrella ratio" >&2; fail=1; }
[ "$obj_kb" -gt "$MAX_OBJECT_KB" ] && { echo "FAIL: object size" >&2; fail=1; }
exit "$fail"
