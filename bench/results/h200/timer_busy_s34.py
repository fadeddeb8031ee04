"""Session 34 probe 2: the timer's busy wait (100 us against 1000 us) and the profiler's kernel
times, for eager, torch.compile, cuact and copy, same process."""
import json, os, sys, statistics
import torch
sys.path.insert(0, "python/bench")
from _timer import timer
import cuact_torch
from cuact_torch.reference import REFERENCE
from torch.profiler import profile, ProfilerActivity

def kernel_ms(fn, reps=10):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn(); torch.cuda.synchronize()
    path = "/tmp/k.json"; prof.export_chrome_trace(path)
    d = [ev["dur"] for ev in json.load(open(path))["traceEvents"] if ev.get("cat") in ("kernel", "gpu_memcpy")]
    # one kernel per call here (checked: len == reps)
    return statistics.median(d) / 1000, len(d)

t100, t1000 = timer(10, 100), timer(10, 1000)
ops = os.environ.get("OPS", "relu,sigmoid,softsign,silu,gelu_tanh").split(",")
for dn in os.environ.get("DTYPES", "float32,bfloat16").split(","):
    dt = getattr(torch, dn)
    x = torch.randn(4096, 393216, device="cuda", dtype=dt)
    y = torch.empty_like(x)
    for name in ops:
        ref_fn, ps = REFERENCE[name]; params = ps[0]
        op = getattr(torch.ops.cuact, name)
        torch._dynamo.reset()
        comp = torch.compile(lambda t: ref_fn(t, *params))
        fns = {"copy": lambda: y.copy_(x), "eager": lambda: ref_fn(x, *params),
               "compile": lambda: comp(x), "cuact": lambda: op(x, *params)}
        with torch.no_grad():
            out = []
            for rnd in (1, 2):
                for k, f in fns.items():
                    a = t100(f); b = t1000(f); c, nk = kernel_ms(f)
                    out.append(f"{k}{rnd} {a:.4f}/{b:.4f}/{c:.4f}" + ("" if nk == 10 else f"(n{nk})"))
        print(f"{name} {dn} [busy100/busy1000/kernel ms]: " + " ".join(out), flush=True)
    del x, y; torch.cuda.empty_cache()
