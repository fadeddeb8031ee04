"""cuact's fused ops (SwiGLU, bias + GELU, GELU + fp8 quantize) against torch eager (unfused) and
torch.compile.

    python3 python/bench/fused_timing.py [--shape 4096 393216] [--reps 10]
                                         [--ops swiglu_fwd,bias_gelu_fwd] [--dtypes float32,bfloat16]
                                         [--check-shape 64 4096] [--no-check] [--json out.json]

One process, one GPU. cuact runs as its users call it: the operators of cuact_torch
(torch.ops.cuact's fused ops, include/cuact/torch_fused.cuh, which call include/cuact/fused.cuh),
the installed package, else this checkout's, JIT-built. --shape is ROWS COLS of the output:
SwiGLU's a, b (or the packed input, [ROWS, 2 * COLS]) and bias + GELU's x are that size, bias is
[COLS].

The ops (cuact call / eager, unfused / torch.compile):
  swiglu_fwd         gated_silu(a, b)                   F.silu(a) * b
  swiglu_fwd_packed  gated_silu_packed(ab)              F.silu(ab[:, :c]) * ab[:, c:]
  swiglu_bwd         gated_silu_backward(dy, a, b)      autograd.grad of F.silu(a) * b (graph built
                                                        before timing: only the backward is timed)
  swiglu_bwd_packed  gated_silu_packed_backward(dy, ab) autograd.grad of the packed forward (chunk)
  bias_gelu_fwd      bias_gelu(x, bias)                 F.gelu(x + bias)
  bias_gelu_bwd      bias_gelu_backward(dy, x, bias)    autograd.grad of F.gelu(x + bias): dx, dbias
  gelu_quantize      quantize_gelu(x, scale=scale)      (F.gelu(x) * scale).clamp(+-448) to
                                                        float8_e4m3fn, and F.gelu(x).abs().amax()
torch.compile (default mode, fullgraph=True, dynamic=False) compiles the forward expression for a
forward op; for a backward op, the explicit backward formula that eager autograd runs
(aten.silu_backward / aten.gelu_backward and the products / column sum), checked against
autograd first.

Correctness first: cuact (and each backward formula) against eager autograd at --check-shape,
torch.testing.assert_close (float32 rtol = atol = 1e-5, bfloat16 2e-2; the fp8 result within an
e4m3 ulp, its amax 1e-2), ok / FAILED per op and dtype; a failure is reported and the run goes on.
In bfloat16 the bias ops' cuact results are checked against float32 math instead (cuact::bias_forward's contract: x + bias is not rounded to
the dtype before gelu, as eager's is; its dbias sums the stored dx in float32): eager's rounded sum
moves gelu' by up to an ulp of bfloat16 per element, and over 64 rows a column of dbias drifts
past the tolerance for some inputs (a float64 emulation: up to twice it over 20 seeds).

Timing by the scripts' shared timer (_timer.py): each number is the median over --reps runs of one
call, CUDA events, L2 flushed before every run (a write of twice the L2 size) and the GPU kept
busy while the host queues the call, three warm-up calls first (torch.compile compiles in those).
Bytes are what one fused call reads plus writes (as bench/fused_bench.cu
counts them: the bias, dbias and bias_backward's partial sums included); the `copy` row is
y.copy_(x) of one [ROWS, COLS] tensor, and `x copy` is cuact's GB/s over the copy's. Ratios
eager/cuact and compile/cuact are speed ratios: > 1 means cuact is faster.

Targets, printed met / MISSED after the table: eager >= 1.8x slower than cuact for SwiGLU forward
(separate and packed) and bias + GELU forward; torch.compile no faster than cuact
(compile/cuact >= 1.0) for every forward op; the same two for the backward ops (informational).

Memory: at 4096 x 393216 one float32 tensor is 6.4 GB; each op's tensors (and eager's graph) are
freed before the next. The packed backward's eager autograd peaks near 10 such tensors (64 GB in
float32); an op that runs out of memory is reported and skipped. Exit status 1 when a check failed
or an op could not run.
"""
import argparse
import gc
import importlib.util
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _timer import timer  # noqa: E402


# ---- cuact's operators ----------------------------------------------------------------------

def load_ops(verbose=False):
    """torch.ops.cuact with its fused ops (include/cuact/torch_fused.cuh): the installed cuact_torch,
    else the package of this checkout, JIT-built (cached by content hash)."""
    if verbose:
        os.environ["CUACT_TORCH_VERBOSE"] = "1"
    if importlib.util.find_spec("cuact_torch") is None:
        sys.path.insert(0, os.path.join(HERE, ".."))
    import cuact_torch
    missing = [n for n in ("silu", "gelu") if n not in cuact_torch.FUSED]
    if missing:
        raise RuntimeError(f"cuact_torch ({cuact_torch.LOADED_FROM}) has no fused ops for {missing}")
    return cuact_torch


# ---- torch references --------------------------------------------------------------------------

def swiglu_ref(a, b):
    return F.silu(a) * b


def swiglu_packed_ref(ab):
    c = ab.shape[-1] // 2
    return F.silu(ab[:, :c]) * ab[:, c:]


def swiglu_bwd_formula(a, b, dy):
    """What eager autograd runs for F.silu(a) * b: MulBackward0 (dy * b, dy * silu(a)), then
    SiluBackward0 (aten.silu_backward)."""
    return torch.ops.aten.silu_backward(dy * b, a), dy * F.silu(a)


def swiglu_bwd_packed_formula(ab, dy):
    a, b = ab.chunk(2, dim=-1)
    return torch.cat([torch.ops.aten.silu_backward(dy * b, a), dy * F.silu(a)], dim=-1)


def bias_gelu_ref(x, bias):
    return F.gelu(x + bias)


def bias_gelu_bwd_formula(x, bias, dy):
    """GeluBackward0 (aten.gelu_backward at x + bias), then AddBackward0's sum over the rows."""
    dx = torch.ops.aten.gelu_backward(dy, x + bias)
    return dx, dx.sum(0)


def bias_gelu_float(x, bias):
    """bias_forward's semantics for 16-bit data: x + bias and gelu in float32, rounded once."""
    return F.gelu(x.float() + bias.float()).to(x.dtype)


def bias_gelu_bwd_float(x, bias, dy):
    """bias_backward's semantics for 16-bit data: gelu' at x + bias in float32, dx rounded to the
    dtype, dbias the float32 sum of the rounded dx."""
    dx = torch.ops.aten.gelu_backward(dy.float(), x.float() + bias.float()).to(x.dtype)
    return dx, dx.float().sum(0).to(x.dtype)


E4M3_MAX = 448.0  # torch.finfo(torch.float8_e4m3fn).max


def gelu_quantize_ref(x, scale):
    """TransformerEngine's Float8Quantizer recipe after gelu: the fp8 result of gelu(x) * scale,
    saturated, and the amax of gelu(x)."""
    y = F.gelu(x)
    q = (y * scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return q, y.abs().amax().float()


def _forward_eager(ref):
    def setup(*inputs):
        return lambda: ref(*inputs)
    return setup


def _autograd_eager(forward, n_grad):
    """Builds the forward graph once (grad enabled) on detached leaves sharing the inputs' storage;
    returns a call of torch.autograd.grad(out, leaves, dy, retain_graph=True): the eager backward
    alone, as a training step runs it."""
    def setup(*inputs):
        dy = inputs[-1]
        with torch.enable_grad():
            leaves = tuple(t.detach().requires_grad_() for t in inputs[:n_grad])
            out = forward(*leaves)
        return lambda: torch.autograd.grad(out, leaves, dy, retain_graph=True)
    return setup


def _swiglu_packed_chunk(ab):
    a, b = ab.chunk(2, dim=-1)  # SplitBackward0 (one cat) rather than two SliceBackward0 (two
    return F.silu(a) * b        # zero-filled [rows, 2 * cols] gradients): the leaner eager


def _randn(dtype, *shape):
    return torch.randn(*shape, device="cuda", dtype=dtype)


class Op:
    def __init__(self, name, label, backward, make, cuact, ref, eager, nbytes, ref16=None, tol=None):
        self.name = name
        self.label = label
        self.backward = backward
        self.make = make      # (rows, cols, dtype) -> inputs
        self.cuact = cuact    # (*inputs) -> tensor or tensors: the torch.ops.cuact call
        self.ref = ref        # what torch.compile compiles (and the formula a backward checks)
        self.eager = eager    # (*inputs) -> a call of torch eager
        self.nbytes = nbytes  # (rows, cols, dtype) -> bytes read + written by one cuact call
        self.ref16 = ref16    # cuact's semantics in float32, its check's reference for 16-bit data
        self.tol = tol        # (output index, dtype) -> assert_close tolerances, where not the dtype's


def _size(dtype):
    return torch.empty((), dtype=dtype).element_size()


def _bias_bwd_bytes(rows, cols, dtype):
    s = _size(dtype)
    partial = torch.ops.cuact._bias_backward_workspace_bytes(rows, cols, dtype)
    return 3 * rows * cols * s + 2 * cols * s + 2 * partial


OPS = [
    Op("swiglu_fwd", "swiglu fwd (separate a, b)", False,
       lambda r, c, d: (_randn(d, r, c), _randn(d, r, c)),
       lambda a, b: torch.ops.cuact.gated_silu(a, b),
       swiglu_ref, _forward_eager(swiglu_ref),
       lambda r, c, d: 3 * r * c * _size(d)),
    Op("swiglu_fwd_packed", "swiglu fwd (packed)", False,
       lambda r, c, d: (_randn(d, r, 2 * c),),
       lambda ab: torch.ops.cuact.gated_silu_packed(ab),
       swiglu_packed_ref, _forward_eager(swiglu_packed_ref),
       lambda r, c, d: 3 * r * c * _size(d)),
    Op("swiglu_bwd", "swiglu bwd (separate a, b)", True,
       lambda r, c, d: (_randn(d, r, c), _randn(d, r, c), _randn(d, r, c)),
       lambda a, b, dy: torch.ops.cuact.gated_silu_backward(dy, a, b),
       swiglu_bwd_formula, _autograd_eager(swiglu_ref, 2),
       lambda r, c, d: 5 * r * c * _size(d)),
    Op("swiglu_bwd_packed", "swiglu bwd (packed)", True,
       lambda r, c, d: (_randn(d, r, 2 * c), _randn(d, r, c)),
       lambda ab, dy: torch.ops.cuact.gated_silu_packed_backward(dy, ab),
       swiglu_bwd_packed_formula, _autograd_eager(_swiglu_packed_chunk, 1),
       lambda r, c, d: 5 * r * c * _size(d)),
    Op("bias_gelu_fwd", "bias+gelu fwd", False,
       lambda r, c, d: (_randn(d, r, c), _randn(d, c)),
       lambda x, bias: torch.ops.cuact.bias_gelu(x, bias),
       bias_gelu_ref, _forward_eager(bias_gelu_ref),
       lambda r, c, d: 2 * r * c * _size(d) + c * _size(d), bias_gelu_float),
    Op("bias_gelu_bwd", "bias+gelu bwd (dx, dbias)", True,
       lambda r, c, d: (_randn(d, r, c), _randn(d, c), _randn(d, r, c)),
       lambda x, bias, dy: torch.ops.cuact.bias_gelu_backward(dy, x, bias),
       bias_gelu_bwd_formula, _autograd_eager(bias_gelu_ref, 2),
       _bias_bwd_bytes, bias_gelu_bwd_float),
    Op("gelu_quantize", "gelu -> fp8 e4m3 + amax", False,
       lambda r, c, d: (_randn(d, r, c), torch.tensor(16.0, device="cuda")),
       lambda x, scale: torch.ops.cuact.quantize_gelu(x, scale=scale),
       gelu_quantize_ref, _forward_eager(gelu_quantize_ref),
       lambda r, c, d: r * c * (_size(d) + 1) + 8,
       # gelu at fp8 accuracy, rounded once: an e4m3 ulp (1/8) from eager's rounding of float32
       # gelu; the amax within 1e-2 (the C++ test's bound)
       tol=lambda i, d: dict(rtol=0.125, atol=2.0 ** -9) if i == 0 else dict(rtol=1e-2, atol=0.0)),
]
OPS_BY_NAME = {op.name: op for op in OPS}

# The requirement's targets: eager >= 1.8x slower than cuact on these forward ops.
EAGER_TARGET = 1.8
EAGER_TARGET_OPS = {"swiglu_fwd", "swiglu_fwd_packed", "bias_gelu_fwd"}
EAGER_TARGET_OPS_BWD = {"swiglu_bwd", "swiglu_bwd_packed", "bias_gelu_bwd"}  # informational
# gelu_quantize has the compile target only (issue 13 sets no eager ratio for it)
COMPILE_TARGET = 1.0  # compile/cuact >= 1.0: torch.compile no faster than cuact


# ---- helpers -----------------------------------------------------------------------------------

def _as_tuple(result):
    return tuple(result) if isinstance(result, (list, tuple)) else (result,)


def _free():
    gc.collect()
    torch.cuda.empty_cache()


def _short_error(e):
    text = f"{type(e).__name__}: {e}".strip().splitlines()
    return text[0][:200] if text else type(e).__name__


# ---- correctness -------------------------------------------------------------------------------

def check_op(op, dtype, rows, cols):
    """cuact against eager autograd (and, for a backward, the compiled formula run eagerly):
    returns (ok, message)."""
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    torch.manual_seed(1)
    problems = []
    try:
        inputs = op.make(rows, cols, dtype)
        eager = _as_tuple(op.eager(*inputs)())
        cuact_want = eager
        if dtype != torch.float32 and op.ref16 is not None:
            cuact_want = _as_tuple(op.ref16(*inputs))
        candidates = [("cuact", _as_tuple(op.cuact(*inputs)), cuact_want)]
        if op.backward:
            candidates.append(("formula", _as_tuple(op.ref(*inputs)), eager))
        for who, got, want in candidates:
            if len(got) != len(want):
                problems.append(f"{who}: {len(got)} outputs, eager {len(want)}")
                continue
            for i, (g, w) in enumerate(zip(got, want)):
                try:
                    if g.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
                        g, w = g.float(), w.float()
                    torch.testing.assert_close(g, w, **(op.tol(i, dtype) if op.tol else tol))
                except AssertionError as e:
                    detail = " ".join(str(e).split())[:300]
                    problems.append(f"{who} output {i}: {detail}")
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - report and go on
        problems.append(_short_error(e))
    return (not problems), "; ".join(problems)


# ---- timing ------------------------------------------------------------------------------------

def time_op(op, dtype, rows, cols, time_ms):
    """(cuact ms, eager ms, compile ms, errors, peak GB); a variant that fails is None."""
    errors = []
    times = {}
    torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(0)
    try:
        inputs = op.make(rows, cols, dtype)
    except Exception as e:  # noqa: BLE001 - out of memory for the inputs alone
        inputs = None
        errors.append(f"inputs: {_short_error(e)}")
    _free()
    if inputs is None:
        return None, None, None, errors, torch.cuda.max_memory_allocated() / 1e9
    for variant in ("cuact", "eager", "compile"):
        compiled = None
        fn = None
        try:
            if variant == "cuact":
                def fn():
                    return op.cuact(*inputs)
            elif variant == "eager":
                fn = op.eager(*inputs)
            else:
                torch._dynamo.reset()
                compiled = torch.compile(op.ref, fullgraph=True, dynamic=False)

                def fn():
                    return compiled(*inputs)
            times[variant] = time_ms(fn)
        except Exception as e:  # noqa: BLE001 - out of memory, compile failure: report, go on
            times[variant] = None
            errors.append(f"{variant}: {_short_error(e)}")
        fn = compiled = None  # noqa: F841 - drops eager's graph, the compiled code
        torch._dynamo.reset()
        _free()
    peak = torch.cuda.max_memory_allocated() / 1e9
    inputs = None  # noqa: F841 - frees the inputs before the next op
    _free()
    return times["cuact"], times["eager"], times["compile"], errors, peak


def _ms(t):
    return "n/a" if t is None else f"{t:.3f}"


def _ratio(num, den):
    return None if num is None or den is None or den <= 0 else num / den


def _x(r):
    return "n/a" if r is None else f"{r:.2f}x"


# ---- main --------------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=2, default=[4096, 393216], metavar=("ROWS", "COLS"),
                        help="output elements, rows x cols (default 4096 393216)")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--ops", default=",".join(op.name for op in OPS),
                        help="comma-separated subset of " + ", ".join(op.name for op in OPS))
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--check-shape", type=int, nargs=2, default=[64, 4096],
                        metavar=("ROWS", "COLS"))
    parser.add_argument("--no-check", action="store_true", help="skip the correctness checks")
    parser.add_argument("--verbose-build", action="store_true")
    parser.add_argument("--json", help="write the rows, checks and targets here")
    args = parser.parse_args()

    names = [n.strip() for n in args.ops.split(",") if n.strip()]
    unknown = [n for n in names if n not in OPS_BY_NAME]
    if unknown:
        parser.error(f"unknown ops {unknown}; known: {list(OPS_BY_NAME)}")
    ops = [OPS_BY_NAME[n] for n in names]
    dtypes = [n.strip() for n in args.dtypes.split(",") if n.strip()]
    for n in dtypes:
        if n not in ("float32", "bfloat16"):
            parser.error(f"dtype {n}: float32 or bfloat16")
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2

    rows, cols = args.shape
    device = torch.cuda.get_device_name(0)
    print(f"{device}, torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"{torch.cuda.get_device_properties(0).total_memory / 2**30:.1f} GiB")
    started = time.perf_counter()
    cuact_torch = load_ops(verbose=args.verbose_build)
    print(f"cuact_torch ({cuact_torch.LOADED_FROM}) loaded in {time.perf_counter() - started:.1f} s, "
          f"headers from {cuact_torch.include_dir()}", flush=True)
    torch.set_grad_enabled(False)  # eager backward setups enable it for their forward graph

    status = 0
    checks = []
    if not args.no_check:
        crows, ccols = args.check_shape
        print(f"\ncorrectness: cuact vs torch eager at {crows} x {ccols} "
              "(float32 rtol=atol=1e-5, bfloat16 2e-2; backward ops: also the compiled formula)")
        for dtype_name in dtypes:
            for op in ops:
                ok, message = check_op(op, getattr(torch, dtype_name), crows, ccols)
                checks.append(dict(op=op.name, dtype=dtype_name, ok=ok, message=message))
                print(f"  {op.name:18s} {dtype_name:9s} {'ok' if ok else 'FAILED: ' + message}",
                      flush=True)
                if not ok:
                    status = 1
        _free()

    time_ms = timer(args.reps)
    print(f"\nshape {rows} x {cols} (output elements), median of {args.reps} (ms, L2 flushed); "
          "eager/cuact and compile/cuact: > 1 means cuact is faster; x copy: cuact GB/s over "
          "y.copy_(x)'s\n")
    print("| op | dtype | cuact ms | eager ms | compile ms | eager/cuact | compile/cuact "
          "| cuact GB/s | x copy |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows_out = []
    for dtype_name in dtypes:
        dtype = getattr(torch, dtype_name)
        s = _size(dtype)
        copy_bytes = 2 * rows * cols * s
        copy_ms = None
        try:
            x = _randn(dtype, rows, cols)
            y = torch.empty_like(x)
            copy_ms = time_ms(lambda: y.copy_(x))
        except Exception as e:  # noqa: BLE001
            print(f"copy {dtype_name}: {_short_error(e)}", file=sys.stderr)
        x = y = None
        _free()
        copy_gbs = None if copy_ms is None else copy_bytes / copy_ms / 1e6
        print(f"| copy (y.copy_(x)) | {dtype_name} | {_ms(copy_ms)} | | | | | "
              f"{'n/a' if copy_gbs is None else f'{copy_gbs:.0f}'} | 1.00x |", flush=True)
        for op in ops:
            t_cuact, t_eager, t_compile, errors, peak = time_op(op, dtype, rows, cols, time_ms)
            nbytes = op.nbytes(rows, cols, dtype)
            gbs = None if t_cuact is None else nbytes / t_cuact / 1e6
            row = dict(op=op.name, label=op.label, dtype=dtype_name, backward=op.backward,
                       bytes=nbytes, cuact_ms=t_cuact, eager_ms=t_eager, compile_ms=t_compile,
                       eager_vs_cuact=_ratio(t_eager, t_cuact),
                       compile_vs_cuact=_ratio(t_compile, t_cuact), cuact_gbs=gbs,
                       copy_ms=copy_ms, copy_gbs=copy_gbs, x_copy=_ratio(gbs, copy_gbs),
                       peak_gb=peak, errors=errors)
            rows_out.append(row)
            print(f"| {op.label} | {dtype_name} | {_ms(t_cuact)} | {_ms(t_eager)} | "
                  f"{_ms(t_compile)} | {_x(row['eager_vs_cuact'])} | "
                  f"{_x(row['compile_vs_cuact'])} | {'n/a' if gbs is None else f'{gbs:.0f}'} | "
                  f"{_x(row['x_copy'])} |", flush=True)
            for error in errors:
                print(f"  ({op.name} {dtype_name}) {error}", file=sys.stderr, flush=True)
            if errors:
                status = 1

    # ---- targets ----
    targets = []

    def target(kind, row, value, threshold, scope):
        met = value is not None and value >= threshold
        targets.append(dict(target=kind, scope=scope, op=row["op"], dtype=row["dtype"],
                            value=value, threshold=threshold, met=met))
        return met

    print()
    for row in rows_out:
        name = row["op"]
        if name in EAGER_TARGET_OPS or name in EAGER_TARGET_OPS_BWD:
            scope = "forward" if name in EAGER_TARGET_OPS else "backward (informational)"
            value = row["eager_vs_cuact"]
            met = target("eager >= 1.8x slower than cuact", row, value, EAGER_TARGET, scope)
            print(f"target [{scope}] eager >= {EAGER_TARGET}x slower than cuact: {row['label']} "
                  f"{row['dtype']}: {_x(value)} {'met' if met else 'MISSED'}")
    for row in rows_out:
        scope = "backward (informational)" if row["backward"] else "forward"
        value = row["compile_vs_cuact"]
        met = target("torch.compile <= 1.0x cuact's speed", row, value, COMPILE_TARGET, scope)
        print(f"target [{scope}] torch.compile <= 1.0x cuact's speed (compile/cuact >= 1.0): "
              f"{row['label']} {row['dtype']}: {_x(value)} {'met' if met else 'MISSED'}")
    required = [t for t in targets if t["scope"] == "forward"]
    print(f"\nforward targets: {sum(t['met'] for t in required)} of {len(required)} met; "
          f"backward (informational): {sum(t['met'] for t in targets if t['scope'] != 'forward')} "
          f"of {sum(t['scope'] != 'forward' for t in targets)}; "
          f"checks: {sum(c['ok'] for c in checks)} of {len(checks)} ok; "
          f"total {time.perf_counter() - started:.0f} s")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "torch": torch.__version__, "cuda": torch.version.cuda,
                       "shape": [rows, cols], "reps": args.reps, "checks": checks,
                       "rows": rows_out, "targets": targets}, f, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
