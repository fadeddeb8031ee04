"""Session 35 probe: why a user's bf16 silu through cuact_torch.activation (custom_timing.py: 1.607-1.619
ms on an H200) runs slower than the same functor in cuact_bench --user (1.548 ms, h200/user.txt).
The torch profiler's kernel durations for the op without a hint (tabulated), with heavy=True
(direct), the built-in cuact_torch silu, torch.compile of the formula, and y.copy_(x), beside the
timer of the PyTorch scripts (python/bench/_timer.py). Run from the repository root:
    python3 bench/results/h200/custom_profile_s35.py
"""
import json
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.getcwd(), "python"))
sys.path.insert(0, os.path.join(os.getcwd(), "python", "bench"))
import cuact_torch  # noqa: E402
from _timer import timer  # noqa: E402

expr = "x / (C(1) + exp(-x))"
table = cuact_torch.activation("user_silu", expr, namespace="cuact_probe")
direct = cuact_torch.activation("user_silu_hinted", expr, namespace="cuact_probe", heavy=True)
time_ms = timer(10)
for dtype in (torch.bfloat16, torch.float32):
    x = torch.randn(4096, 393216, device="cuda", dtype=dtype)
    y = torch.empty_like(x)
    torch._dynamo.reset()
    compiled = torch.compile(lambda t: t / (1 + torch.exp(-t)))
    cases = {"no hint": lambda: table(x), "heavy=True": lambda: direct(x),
             "compile": lambda: compiled(x), "copy": lambda: y.copy_(x)}
    if hasattr(torch.ops, "cuact") and hasattr(torch.ops.cuact, "silu"):
        cases["builtin silu"] = lambda: torch.ops.cuact.silu(x)
    for name, fn in cases.items():
        print(f"{dtype} {name:12s} timer {time_ms(fn):.4f} ms")
    for name, fn in cases.items():
        fn()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            prof.export_chrome_trace(f.name)
            events = json.load(open(f.name))["traceEvents"]
        kernels = {}
        for e in events:
            if e.get("cat") == "kernel":
                a = e.get("args", {})
                key = (e["name"][:100], str(a.get("grid")), str(a.get("block")),
                       a.get("registers per thread"), a.get("shared memory"))
                kernels.setdefault(key, []).append(e["dur"])
        for (kname, grid, block, regs, smem), durs in kernels.items():
            durs.sort()
            print(f"  {name:12s} {len(durs)} x {durs[len(durs) // 2] / 1000:.4f} ms grid {grid} "
                  f"block {block} regs {regs} smem {smem}  {kname}")
    del x, y
    torch.cuda.empty_cache()
