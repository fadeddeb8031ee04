"""Session 36 probe: the user bf16 silu (tabulated) through cuact_torch on torch's default stream
and on a side stream; the kernel durations from the profiler on each."""
import json, os, sys, tempfile
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "python", "bench"))
import cuact_torch
from _timer import timer

print("default stream handle", torch.cuda.current_stream().cuda_stream,
      "per-thread env", os.environ.get("CUDA_API_PER_THREAD_DEFAULT_STREAM"))
expr = "x / (C(1) + exp(-x))"
table = cuact_torch.activation("user_silu", expr, namespace="cuact_probe")
direct = cuact_torch.activation("user_silu_hinted", expr, namespace="cuact_probe", heavy=True)
time_ms = timer(10)
side = torch.cuda.Stream()
print("side stream handle", side.cuda_stream)
x = torch.randn(4096, 393216, device="cuda", dtype=torch.bfloat16)
y = torch.empty_like(x)
compiled = torch.compile(lambda t: t / (1 + torch.exp(-t)))
cases = {"no hint": lambda: table(x), "heavy=True": lambda: direct(x),
         "compile": lambda: compiled(x), "copy": lambda: y.copy_(x),
         "builtin silu": lambda: torch.ops.cuact.silu(x)}

def profile(fn):
    fn()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        events = json.load(open(f.name))["traceEvents"]
    rows = {}
    for e in events:
        if e.get("cat") == "kernel":
            a = e.get("args", {})
            key = (e["name"][:60], str(a.get("grid")), str(a.get("block")), a.get("stream"))
            rows.setdefault(key, []).append(e["dur"])
    return [f"{len(d)} x {sorted(d)[len(d)//2]/1000:.4f} ms grid {g} block {b} stream {s} {n}"
            for (n, g, b, s), d in rows.items()]

for round_ in range(2):
    for name, fn in cases.items():
        t_default = time_ms(fn)
        with torch.cuda.stream(side):
            t_side = time_ms(fn)
        torch.cuda.synchronize()
        print(f"round {round_} {name:12s} default {t_default:.4f} ms  side {t_side:.4f} ms")
for name in ("no hint", "heavy=True", "copy"):
    for row in profile(cases[name]):
        print(f"  default {name:12s} {row}")
    with torch.cuda.stream(side):
        rows = profile(cases[name])
    torch.cuda.synchronize()
    for row in rows:
        print(f"  side    {name:12s} {row}")
