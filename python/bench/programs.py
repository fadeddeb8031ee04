"""cuact inside the programs PyTorch users run: median step time and peak memory, one table.

    python3 python/bench/programs.py [--quick] [--reps 20] [--only overhead,chain,mlp,llama]
                                     [--budget-s 230] [--json out.json]

Programs (bf16 unless said):
  chain      act(t * 1.5 + 0.5) + r on 8192^2 (--quick: 4096^2), fp32 and bf16, forward
  mlp        down(silu(gate(x)) * up(x)), 8192 tokens (--quick: 4096), 2048 -> 5632 -> 2048, fwd+bwd;
             and proj(gelu(fc(x))), fc with its bias, 2048 -> 8192 -> 2048: cuact's variants call
             cuact_torch.functional.gelu after the same nn.Linear (the bias in cuBLAS's epilogue),
             as a user writes it; "bias_gelu (bias out of GEMM)" is fc without its bias, then
             torch.ops.cuact.bias_gelu(fc(x), bias) (docs/fused.md says when that pays)
  llama      transformers' LlamaForCausalLM from a LlamaConfig (8 layers, hidden 2048, intermediate
             5632, random weights, nothing downloaded), batch 8 x 1024, forward + backward + AdamW;
             each LlamaMLP's forward patched to cuact's gated_silu (or the Triton SwiGLU); each
             variant runs in a process of its own, so none counts what an earlier one left
             allocated in its peak
  overhead   host time per call on 1 K elements, fp32 and bf16, relu / gelu / silu / selu:
             eager forward (no grad), the forward with grad (no backward) and
             op(x).sum().backward(), each for the op (torch.ops.cuact.NAME.default) and for
             cuact_torch.functional.NAME; autograd.grad(op(x).sum(), x), op(x).backward(g) with a
             dense g, and the backward op with the expanded and the dense g

Variants: torch eager; torch.compile (the chain and block whole, each LlamaMLP .compile()d);
cuact eager; cuact under torch.compile (cuact_torch.compile_mode "auto"; "kernel" shown too);
cuact eager with the gated backward in place (memory.gated(..., inplace_backward=True)); and a
small Triton SwiGLU written here (forward; backward in place over its inputs, as Liger-Kernel's
does; no code of Liger's).

Timing: CUDA events around each step, median of --reps steps after warm-up steps; peak memory
from torch.cuda.max_memory_allocated() after reset_peak_memory_stats() over the timed steps. A
chain step takes a fraction of a millisecond, so its samples each time 10 steps back to back
and divide: the host's launch work (dynamo's guards, the compiled wrapper) then overlaps the
GPU's, and the rows compare kernels, not launch paths. Compiled artifacts go to a fresh inductor
cache directory (unless TORCHINDUCTOR_CACHE_DIR is set), so every variant compiles in the run. The
overhead rows are host wall time per call (perf_counter over many calls, synchronized at the
ends), cuact's against torch's own op. Every variant is attempted on its own (a failure is
printed and the others run); past --budget-s seconds the remaining variants are skipped, so a
run ends in a known time. Prints the table, then the same tables as markdown for
docs/performance.md.
"""
import argparse
import atexit
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# before torch: every compile of this run builds its artifacts afresh (none from an earlier tree)
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="cuact-programs-inductor-")
    atexit.register(shutil.rmtree, os.environ["TORCHINDUCTOR_CACHE_DIR"], ignore_errors=True)

import torch
import torch.nn.functional as F

import importlib.util  # noqa: E402
if importlib.util.find_spec("cuact_torch") is None:  # not installed: use the checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cuact_torch  # noqa: E402
import cuact_torch.functional as CF  # noqa: E402
from cuact_torch import memory as cuact_memory  # noqa: E402

ops = torch.ops.cuact
GiB = float(1 << 30)


# ---- a small Triton SwiGLU (silu(a) * b), backward in place over a and b ----

def _triton_swiglu():
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    @triton.jit
    def forward_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        a = tl.load(a_ptr + offsets, mask=mask).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask).to(tl.float32)
        out = a * tl.sigmoid(a) * b
        tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def backward_kernel(grad_ptr, a_ptr, b_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        g = tl.load(grad_ptr + offsets, mask=mask).to(tl.float32)
        a = tl.load(a_ptr + offsets, mask=mask).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask).to(tl.float32)
        sig = tl.sigmoid(a)
        act = a * sig
        da = g * b * (sig + act * (1.0 - sig))
        db = g * act
        tl.store(a_ptr + offsets, da.to(a_ptr.dtype.element_ty), mask=mask)  # da over a
        tl.store(b_ptr + offsets, db.to(b_ptr.dtype.element_ty), mask=mask)  # db over b

    block = 1024

    class SwiGLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a, b = a.contiguous(), b.contiguous()
            out = torch.empty_like(a)
            n = a.numel()
            forward_kernel[(triton.cdiv(n, block),)](a, b, out, n, BLOCK=block, num_warps=4)
            ctx.save_for_backward(a, b)
            return out

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            grad = grad.contiguous()
            n = a.numel()
            backward_kernel[(triton.cdiv(n, block),)](grad, a, b, n, BLOCK=block, num_warps=4)
            return a, b

    return SwiGLU.apply


TRITON_SWIGLU = _triton_swiglu()


# ---- timing ----

def _free():
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def measure(step, reps, warmup, steps_per_sample=1):
    """(median ms of step() by CUDA events, peak GiB over the timed steps); each sample times
    steps_per_sample steps back to back and divides."""
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps_per_sample):
            step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / steps_per_sample)
    return statistics.median(times), torch.cuda.max_memory_allocated() / GiB


def host_us(fn, calls):
    """Host wall time per call (us), median of five batches of `calls` calls."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    batches = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        batches.append((time.perf_counter() - start) * 1e6 / calls)
    return statistics.median(batches)


class Table:
    def __init__(self, budget_s=None):
        self.rows = []  # dict(program, variant, value, unit, peak_gib)
        self.skipped = []  # (program, variant, why)
        self.start = time.perf_counter()
        self.budget_s = budget_s

    def over_budget(self):
        return self.budget_s is not None and time.perf_counter() - self.start > self.budget_s

    def attempt(self, program, variant, run, unit="ms"):
        """table.add(program, variant, *run()) unless over budget; a failure is printed."""
        if self.over_budget():
            self.skipped.append((program, variant, "over --budget-s"))
            print(f"  {program:<44} {variant:<42} skipped (over --budget-s)", flush=True)
            return
        try:
            value = run()
        except Exception as error:  # the other variants still run
            why = f"{type(error).__name__}: {str(error)[:200]}"
            self.skipped.append((program, variant, why))
            print(f"  {program:<44} {variant:<42} failed: {why}", flush=True)
            return
        if isinstance(value, tuple):  # (median ms, peak GiB) from measure()
            self.add(program, variant, value[0], unit, value[1])
        else:
            self.add(program, variant, value, unit)

    def add(self, program, variant, value, unit="ms", peak=None):
        self.rows.append(dict(program=program, variant=variant, value=value, unit=unit, peak_gib=peak))
        mem = "" if peak is None else f"  peak {peak:.2f} GiB"
        print(f"  {program:<44} {variant:<42} {value:9.3f} {unit}{mem}", flush=True)

    def markdown(self):
        programs = []
        for r in self.rows:
            if r["unit"] != "ms":
                continue  # the per-call rows have their own table (overhead_markdown)
            if r["program"] not in programs:
                programs.append(r["program"])
        lines = ["| program | variant | time | peak memory | vs torch eager | vs torch.compile |",
                 "|---|---|---|---|---|---|"]
        for p in programs:
            rows = [r for r in self.rows if r["program"] == p]
            base = {r["variant"]: r["value"] for r in rows}
            for r in rows:
                peak = "" if r["peak_gib"] is None else f"{r['peak_gib']:.2f} GiB"
                eager = base.get("torch eager")
                comp = base.get("torch.compile")
                vs_e = f"{eager / r['value']:.3f}x" if eager and r["variant"] != "torch eager" else ""
                vs_c = (f"{comp / r['value']:.3f}x" if comp and r["variant"] not in
                        ("torch eager", "torch.compile") else "")
                lines.append(f"| {p} | {r['variant']} | {r['value']:.3f} {r['unit']} | {peak} | "
                             f"{vs_e} | {vs_c} |")
        lines += [f"| {p} | {v} | {why} | | | |" for p, v, why in self.skipped]
        return "\n".join(lines)

    def overhead_markdown(self):
        """The per-call rows: torch's and cuact's host us per call, their ratio (the fwd+bwd
        target: cuact / torch <= 1.1) and difference (the eager target: cuact - torch <= 1 us)."""
        rows = [r for r in self.rows if r["unit"] == "us"]
        if not rows:
            return ""
        lines = ["| per call (1 K elements) | torch us | cuact us | cuact / torch | cuact - torch |",
                 "|---|---|---|---|---|"]
        programs = []
        for r in rows:
            if r["program"] not in programs:
                programs.append(r["program"])
        for p in programs:
            got = {r["variant"]: r["value"] for r in rows if r["program"] == p}
            base = got.get("torch")
            for variant, value in got.items():
                if variant == "torch" or base is None:
                    continue
                label = p if variant == "cuact" else f"{p} ({variant})"
                lines.append(f"| {label} | {base:.2f} | {value:.2f} | {value / base:.3f} | "
                             f"{value - base:+.2f} |")
        return "\n".join(lines)


def compiled(fn, mode="auto", **kwargs):
    cuact_torch.compile_mode(mode)  # resets dynamo
    return torch.compile(fn, **kwargs)


# ---- 1. pointwise chain ----

def run_chain(table, args):
    n = 4096 if args.quick else 8192
    for dtype in (torch.float32, torch.bfloat16):
        t = torch.randn(n, n, device="cuda", dtype=dtype)
        r = torch.randn(n, n, device="cuda", dtype=dtype)
        name = f"chain silu(t*1.5+0.5)+r {n}^2 {str(dtype)[6:]}"

        def torch_chain(t, r):
            return F.silu(t * 1.5 + 0.5) + r

        def cuact_chain(t, r):
            return ops.silu(t * 1.5 + 0.5) + r

        variants = [("torch eager", torch_chain, None), ("torch.compile", torch_chain, "auto"),
                    ("cuact eager", cuact_chain, None), ("cuact compile", cuact_chain, "auto"),
                    ("cuact compile (kernel mode)", cuact_chain, "kernel")]
        for label, fn, mode in variants:
            def run(fn=fn, mode=mode):
                step = fn if mode is None else compiled(fn, mode)
                with torch.no_grad():
                    return measure(lambda: step(t, r), args.reps, args.warmup, steps_per_sample=10)
            table.attempt(name, label, run)
        cuact_torch.compile_mode("auto")
        del t, r
        _free()


# ---- 2. MLP blocks ----

class GatedMLP(torch.nn.Module):
    def __init__(self, hidden, inter, gate):
        super().__init__()
        self.gate_proj = torch.nn.Linear(hidden, inter, bias=False)
        self.up_proj = torch.nn.Linear(hidden, inter, bias=False)
        self.down_proj = torch.nn.Linear(inter, hidden, bias=False)
        self.gate = gate

    def forward(self, x):
        return self.down_proj(self.gate(self.gate_proj(x), self.up_proj(x)))


class BiasGeluMLP(torch.nn.Module):
    """proj(gelu(fc(x))). act "torch": F.gelu; "cuact": cuact_torch.functional.gelu after the same
    fc (its bias added in cuBLAS's epilogue); "bias kernel": fc without bias, then
    torch.ops.cuact.bias_gelu(fc(x), bias), the bias added in cuact's pass."""

    def __init__(self, hidden, inter, act):
        super().__init__()
        self.bias_kernel = act == "bias kernel"
        self.fc = torch.nn.Linear(hidden, inter, bias=not self.bias_kernel)
        self.bias = torch.nn.Parameter(torch.zeros(inter)) if self.bias_kernel else None
        self.proj = torch.nn.Linear(inter, hidden)
        self.gelu = CF.gelu if act == "cuact" else F.gelu

    def forward(self, x):
        h = ops.bias_gelu(self.fc(x), self.bias) if self.bias_kernel else self.gelu(self.fc(x))
        return self.proj(h)


def torch_swiglu(a, b):
    return F.silu(a) * b


def cuact_swiglu(a, b):
    return ops.gated_silu(a, b)


def cuact_swiglu_inplace(a, b):
    return cuact_memory.gated(a, b, "silu", inplace_backward=True)


def _train_step(model, x):
    def step():
        out = model(x)
        out.backward(torch.ones_like(out))
        for p in model.parameters():
            p.grad = None
    return step


def run_mlp(table, args):
    tokens = 4096 if args.quick else 8192
    dtype = torch.bfloat16
    x = torch.randn(tokens, 2048, device="cuda", dtype=dtype)
    name = f"MLP silu-gated {tokens}x2048->5632 fwd+bwd"
    variants = [("torch eager", torch_swiglu, None), ("torch.compile", torch_swiglu, "auto"),
                ("cuact eager", cuact_swiglu, None), ("cuact compile", cuact_swiglu, "auto"),
                ("cuact compile (kernel mode)", cuact_swiglu, "kernel"),
                ("cuact eager, in-place backward", cuact_swiglu_inplace, None)]
    if TRITON_SWIGLU is not None:
        variants.append(("Triton SwiGLU (own)", TRITON_SWIGLU, None))

    def block(make, mode):
        def run():
            torch.manual_seed(0)
            model = make().to("cuda", dtype)
            if mode is not None:
                model = compiled(model, mode)
            try:
                return measure(_train_step(model, x), args.reps, args.warmup)
            finally:
                del model
                _free()
        return run

    for label, gate, mode in variants:
        table.attempt(name, label, block(lambda gate=gate: GatedMLP(2048, 5632, gate), mode))
    name = f"MLP bias+gelu {tokens}x2048->8192 fwd+bwd"
    for label, act, mode in [("torch eager", "torch", None), ("torch.compile", "torch", "auto"),
                             ("cuact eager", "cuact", None), ("cuact compile", "cuact", "auto"),
                             ("cuact compile (kernel mode)", "cuact", "kernel"),
                             ("cuact eager, bias_gelu (bias out of GEMM)", "bias kernel",
                              None)]:
        table.attempt(name, label, block(lambda act=act: BiasGeluMLP(2048, 8192, act), mode))
    cuact_torch.compile_mode("auto")
    del x
    _free()


# ---- 3. HuggingFace Llama training step ----

def run_llama(table, args):
    try:
        from transformers import LlamaConfig, LlamaForCausalLM
        from transformers.models.llama import modeling_llama
    except ImportError as error:
        print(f"  llama: skipped ({error})")
        return
    config = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=8,
                         num_attention_heads=16, num_key_value_heads=16, vocab_size=32000,
                         max_position_embeddings=2048)
    batch, seq = 8, 1024
    ids = torch.randint(0, config.vocab_size, (batch, seq), device="cuda")
    original = modeling_llama.LlamaMLP.forward

    def patched(gate):
        def forward(self, x):
            return self.down_proj(gate(self.gate_proj(x), self.up_proj(x)))
        return forward

    variants = [("torch eager", None, None), ("torch.compile", None, "auto"),
                ("cuact eager", cuact_swiglu, None), ("cuact compile", cuact_swiglu, "auto"),
                ("cuact eager, in-place backward", cuact_swiglu_inplace, None)]
    if TRITON_SWIGLU is not None:
        variants.append(("Triton SwiGLU (own)", TRITON_SWIGLU, None))
    name = "Llama 8x(2048/5632) bf16 8x1024 fwd+bwd+AdamW"

    def run(gate, mode):
        modeling_llama.LlamaMLP.forward = original if gate is None else patched(gate)
        model = optimizer = None
        try:
            torch.manual_seed(0)
            with torch.device("cuda"):  # random init on the GPU: seconds, not a minute
                model = LlamaForCausalLM(config).to(torch.bfloat16)
            model.train()
            if mode is not None:
                cuact_torch.compile_mode(mode)
                for layer in model.model.layers:
                    layer.mlp.compile()
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)

            def step():
                loss = model(input_ids=ids, labels=ids).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)

            return measure(step, args.llama_reps, args.warmup)
        finally:
            modeling_llama.LlamaMLP.forward = original
            del model, optimizer
            _free()

    if args.llama_variant:  # the child process of one variant (below)
        gate, mode = {label: (gate, mode) for label, gate, mode in variants}[args.llama_variant]
        print("LLAMA_RESULT " + json.dumps(run(gate, mode)), flush=True)
        return

    def in_child(label):
        # Each variant in a process of its own: what one variant leaves allocated (compiled
        # graphs, their pools, the allocator's caches) would count in the next one's peak.
        command = [sys.executable, os.path.abspath(__file__), "--only", "llama",
                   "--llama-variant", label, "--reps", str(args.reps)]
        out = subprocess.run(command, capture_output=True, text=True)
        for line in out.stdout.splitlines():
            if line.startswith("LLAMA_RESULT "):
                return tuple(json.loads(line[len("LLAMA_RESULT "):]))
        raise RuntimeError(f"child exited {out.returncode}: {(out.stderr or out.stdout)[-300:]}")

    for label, _, _ in variants:
        table.attempt(name, label, lambda label=label: in_child(label))


# ---- 4. per-call overhead ----

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _aten_backward(name):
    """torch's own backward op of `name`, (grad, x) -> dx, as its autograd calls it."""
    aten = torch.ops.aten
    return {"relu": lambda g, x: aten.threshold_backward(g, x, 0),
            "gelu": lambda g, x: aten.gelu_backward(g, x),
            "silu": lambda g, x: aten.silu_backward(g, x),
            "selu": lambda g, x: aten.elu_backward(g, _SELU_ALPHA, _SELU_SCALE, 1.0, False, x)}[name]


def run_overhead(table, args):
    calls = 200 if args.quick else 500
    pairs = [("relu", torch.relu), ("gelu", F.gelu), ("silu", F.silu), ("selu", F.selu)]
    n = 1 << 10
    for dtype in (torch.float32, torch.bfloat16):
        for name, torch_op in pairs:
            if not hasattr(ops, name):
                continue
            cuact_op = getattr(ops, name).default  # what cuact_torch.functional calls
            functional_op = getattr(cuact_torch.functional, name)
            x = torch.randn(n, device="cuda", dtype=dtype)
            xg = x.clone().requires_grad_()
            g = torch.randn_like(x)
            expanded = torch.ones((), device="cuda", dtype=dtype).expand(n)  # what sum() hands back
            torch_bwd, cuact_bwd = _aten_backward(name), getattr(ops, name + "_backward").default
            label = f"{name} {str(dtype)[6:]}"

            def pair(row, torch_fn, cuact_fn, **more):
                table.attempt(f"{label} {row}", "torch", lambda: host_us(torch_fn, calls), "us")
                table.attempt(f"{label} {row}", "cuact", lambda: host_us(cuact_fn, calls), "us")
                for variant, fn in more.items():
                    table.attempt(f"{label} {row}", variant, lambda fn=fn: host_us(fn, calls), "us")

            with torch.no_grad():
                pair("eager fwd", lambda: torch_op(x), lambda: cuact_op(x),
                     functional=lambda: functional_op(x))
            pair("fwd with grad (no bwd)", lambda: torch_op(xg), lambda: cuact_op(xg),
                 functional=lambda: functional_op(xg))
            pair("fwd+bwd op(x).sum().backward()", lambda: torch_op(xg).sum().backward(),
                 lambda: cuact_op(xg).sum().backward(),
                 functional=lambda: functional_op(xg).sum().backward())
            pair("fwd+bwd autograd.grad(op(x).sum(), x)",
                 lambda: torch.autograd.grad(torch_op(xg).sum(), xg),
                 lambda: torch.autograd.grad(cuact_op(xg).sum(), xg))
            pair("fwd+bwd op(x).backward(dense g)", lambda: torch_op(xg).backward(g),
                 lambda: cuact_op(xg).backward(g))
            pair("backward op, expanded g", lambda: torch_bwd(expanded, x),
                 lambda: cuact_bwd(expanded, x))
            pair("backward op, dense g", lambda: torch_bwd(g, x), lambda: cuact_bwd(g, x))
            del x, xg, g, expanded


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller chain and MLP, fewer reps")
    parser.add_argument("--reps", type=int)
    parser.add_argument("--only", default="overhead,chain,mlp,llama")
    parser.add_argument("--budget-s", type=float, default=230.0,
                        help="skip the variants left after this many seconds (0: no limit)")
    parser.add_argument("--json")
    parser.add_argument("--llama-variant", help=argparse.SUPPRESS)  # internal: one Llama variant
    args = parser.parse_args()
    args.reps = args.reps or (10 if args.quick else 20)
    args.llama_reps = 10
    args.warmup = 3
    only = args.only.split(",")
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, cuact_torch from "
          f"{cuact_torch.LOADED_FROM}, medians of {args.reps} steps ({args.llama_reps} for Llama) "
          f"after {args.warmup} warm-up ({'--quick' if args.quick else 'full'})", flush=True)
    table = Table(args.budget_s or None)
    # the per-call rows first: they are short, and --budget-s then cuts the compiled programs
    for key, fn in (("overhead", run_overhead), ("chain", run_chain), ("mlp", run_mlp),
                    ("llama", run_llama)):
        if key in only:
            start = time.perf_counter()
            try:
                fn(table, args)
            except Exception as error:  # the other programs still run
                print(f"  {key}: failed: {type(error).__name__}: {str(error)[:300]}", flush=True)
            print(f"  [{key}: {time.perf_counter() - start:.0f} s]", flush=True)
    print(f"  [total: {time.perf_counter() - table.start:.0f} s]")
    print()
    print(table.markdown())
    print()
    print(table.overhead_markdown())
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "quick": args.quick, "rows": table.rows, "skipped": table.skipped,
                       "seconds": time.perf_counter() - table.start}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
