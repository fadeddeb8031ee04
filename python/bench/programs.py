"""cuact inside the programs PyTorch users run: median step time and peak memory, one table.

    python3 python/bench/programs.py [--quick] [--reps 20] [--only chain,mlp,llama,overhead]
                                     [--json out.json]

Programs (bf16 unless said):
  chain      act(t * 1.5 + 0.5) + r on 8192^2 (--quick: 4096^2), fp32 and bf16, forward
  mlp        down(silu(gate(x)) * up(x)), 8192 tokens (--quick: 4096), 2048 -> 5632 -> 2048, fwd+bwd;
             and down(gelu(fc(x) + bias)), 2048 -> 8192 -> 2048
  llama      transformers' LlamaForCausalLM from a LlamaConfig (8 layers, hidden 2048, intermediate
             5632, random weights, nothing downloaded), batch 8 x 1024, forward + backward + AdamW;
             each LlamaMLP's forward patched to cuact's gated_silu (or the Triton SwiGLU)
  overhead   host time per call on 1 K and 1 M elements, fp32 and bf16: eager forward (no grad),
             op(x).sum().backward() (autograd), op(x).backward(g) with a dense g, the backward op

Variants: torch eager; torch.compile (the chain and block whole, each LlamaMLP .compile()d);
cuact eager; cuact under torch.compile (cuact_torch.compile_mode "auto"; "kernel" shown too);
cuact eager with the gated backward in place (memory.gated(..., inplace_backward=True)); and a
small Triton SwiGLU written here (forward; backward in place over its inputs, as Liger-Kernel's
does; no code of Liger's).

Timing: CUDA events around each step, median of --reps steps after warm-up steps; peak memory
from torch.cuda.max_memory_allocated() after reset_peak_memory_stats() over the timed steps. The
overhead rows are host wall time per call (perf_counter over many calls, synchronized at the
ends). Prints the table, then the same table as markdown for docs/performance.md.
"""
import argparse
import gc
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import importlib.util  # noqa: E402
if importlib.util.find_spec("cuact_torch") is None:  # not installed: use the checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cuact_torch  # noqa: E402
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


def measure(step, reps, warmup):
    """(median ms of step() by CUDA events, peak GiB over the timed steps)."""
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
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
    def __init__(self):
        self.rows = []  # dict(program, variant, value, unit, peak_gib)

    def add(self, program, variant, value, unit="ms", peak=None):
        self.rows.append(dict(program=program, variant=variant, value=value, unit=unit, peak_gib=peak))
        mem = "" if peak is None else f"  peak {peak:.2f} GiB"
        print(f"  {program:<44} {variant:<34} {value:9.3f} {unit}{mem}", flush=True)

    def markdown(self):
        programs = []
        for r in self.rows:
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

        with torch.no_grad():
            variants = [("torch eager", torch_chain), ("torch.compile", compiled(torch_chain)),
                        ("cuact eager", cuact_chain)]
            for label, fn in variants:
                table.add(name, label, *measure(lambda: fn(t, r), args.reps, args.warmup))
            for mode in ("auto", "kernel"):
                fn = compiled(cuact_chain, mode)
                label = "cuact compile" if mode == "auto" else "cuact compile (kernel mode)"
                table.add(name, label, *measure(lambda: fn(t, r), args.reps, args.warmup))
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
    def __init__(self, hidden, inter, fused):
        super().__init__()
        self.fc = torch.nn.Linear(hidden, inter, bias=not fused)
        self.bias = torch.nn.Parameter(torch.zeros(inter)) if fused else None
        self.proj = torch.nn.Linear(inter, hidden)
        self.fused = fused

    def forward(self, x):
        h = ops.bias_gelu(self.fc(x), self.bias) if self.fused else F.gelu(self.fc(x))
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
    for label, gate, mode in variants:
        torch.manual_seed(0)
        model = GatedMLP(2048, 5632, gate).to("cuda", dtype)
        if mode is not None:
            model = compiled(model, mode)
        table.add(name, label, *measure(_train_step(model, x), args.reps, args.warmup))
        del model
        _free()
    name = f"MLP bias+gelu {tokens}x2048->8192 fwd+bwd"
    for label, fused, mode in [("torch eager", False, None), ("torch.compile", False, "auto"),
                               ("cuact eager", True, None), ("cuact compile", True, "auto"),
                               ("cuact compile (kernel mode)", True, "kernel")]:
        torch.manual_seed(0)
        model = BiasGeluMLP(2048, 8192, fused).to("cuda", dtype)
        if mode is not None:
            model = compiled(model, mode)
        table.add(name, label, *measure(_train_step(model, x), args.reps, args.warmup))
        del model
        _free()
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
    for label, gate, mode in variants:
        modeling_llama.LlamaMLP.forward = original if gate is None else patched(gate)
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

            table.add(name, label, *measure(step, args.llama_reps, args.warmup))
        finally:
            modeling_llama.LlamaMLP.forward = original
        del model, optimizer
        _free()
    cuact_torch.compile_mode("auto")


# ---- 4. per-call overhead ----

def run_overhead(table, args):
    calls = 200 if args.quick else 1000
    pairs = [("relu", torch.relu), ("gelu", F.gelu), ("silu", F.silu)]
    for n in (1 << 10, 1 << 20):
        for dtype in (torch.float32, torch.bfloat16):
            for name, torch_op in pairs:
                if not hasattr(ops, name):
                    continue
                cuact_op = getattr(ops, name)
                x = torch.randn(n, device="cuda", dtype=dtype)
                xg = x.clone().requires_grad_()
                label = f"per call {name} {n // 1024}K {str(dtype)[6:]}"
                with torch.no_grad():
                    table.add(label + " eager", "torch eager", host_us(lambda: torch_op(x), calls), "us")
                    table.add(label + " eager", "cuact eager", host_us(lambda: cuact_op(x), calls), "us")
                table.add(label + " fwd+bwd", "torch eager",
                          host_us(lambda: torch_op(xg).sum().backward(), calls), "us")
                table.add(label + " fwd+bwd", "cuact eager",
                          host_us(lambda: cuact_op(xg).sum().backward(), calls), "us")
                # where the time goes: a dense gradient (no expanded grad to copy), the backward
                # op alone
                g = torch.randn_like(x)
                table.add(label + " fwd+bwd, dense grad", "torch eager",
                          host_us(lambda: torch_op(xg).backward(g), calls), "us")
                table.add(label + " fwd+bwd, dense grad", "cuact eager",
                          host_us(lambda: cuact_op(xg).backward(g), calls), "us")
                aten_backward = {"relu": lambda: torch.ops.aten.threshold_backward(g, x, 0),
                                 "gelu": lambda: torch.ops.aten.gelu_backward(g, x),
                                 "silu": lambda: torch.ops.aten.silu_backward(g, x)}[name]
                table.add(label + " backward op", "torch eager", host_us(aten_backward, calls), "us")
                cuact_backward = getattr(ops, name + "_backward")
                table.add(label + " backward op", "cuact eager",
                          host_us(lambda: cuact_backward(g, x), calls), "us")
                del x, xg, g


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller chain and MLP, fewer reps")
    parser.add_argument("--reps", type=int)
    parser.add_argument("--only", default="chain,mlp,llama,overhead")
    parser.add_argument("--json")
    args = parser.parse_args()
    args.reps = args.reps or (10 if args.quick else 30)
    args.llama_reps = args.reps if args.quick else 20
    args.warmup = 3 if args.quick else 5
    only = args.only.split(",")
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, cuact_torch from "
          f"{cuact_torch.LOADED_FROM}, medians of {args.reps} steps after {args.warmup} warm-up "
          f"({'--quick' if args.quick else 'full'})", flush=True)
    table = Table()
    for key, fn in (("chain", run_chain), ("mlp", run_mlp), ("llama", run_llama),
                    ("overhead", run_overhead)):
        if key in only:
            start = time.perf_counter()
            try:
                fn(table, args)
            except Exception as error:  # the other programs still run
                print(f"  {key}: failed: {type(error).__name__}: {str(error)[:300]}", flush=True)
            print(f"  [{key}: {time.perf_counter() - start:.0f} s]", flush=True)
    print()
    print(table.markdown())
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "quick": args.quick, "rows": table.rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
