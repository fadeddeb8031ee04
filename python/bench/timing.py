"""torch eager vs torch.compile vs cuact, per op, fp32 and bf16, at 4096 x 393216.

    python3 python/bench/timing.py [--shape 4096 393216] [--reps 20] [--ops relu,selu]
                                   [--kernelbench /path/to/KernelBench] [--json out.json]

Each number is the median over --reps runs of one call, timed with CUDA events, with L2 flushed
before every run (a write of twice the L2 size) and the GPU then kept busy for about 1 ms
(torch.cuda._sleep), so that the call is queued before its start event runs: the interval holds
the GPU's work, not the host's dispatch. On the device machines that dispatch took 10-130 us per
call, eager and cuact alike, varying from call to call and op to op, and more for torch.compile's
wrapper; with the GPU idle at the start event it landed inside the interval: rows whose kernels
took the same time (torch profiler) read up to 2.5% apart (bench/results/h100/
torch_dispatch_probe.txt), torch.compile's up to 6% (h200/timer_busy_s34.txt, with 100 us).
`copy` is y.copy_(x), the same bytes moved: the ceiling for a one-read-one-write op. Prints a markdown table; with
--kernelbench it then runs kernelbench_run.py, so one run prints both tables.
"""
import argparse
import json
import os
import subprocess
import sys

import torch

import importlib.util  # noqa: E402
if importlib.util.find_spec("cuact_torch") is None:  # not installed: use the checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cuact_torch  # noqa: E402
from cuact_torch.reference import REFERENCE  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timer import timer  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", type=int, nargs="+", default=[4096, 393216])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--ops", default=",".join(n for n in cuact_torch.FAMILIES if n in REFERENCE))
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--kernelbench", help="KernelBench checkout: also run kernelbench_run.py")
    parser.add_argument("--json")
    args = parser.parse_args()

    time_ms = timer(args.reps)
    rows = []
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, cuact_torch from "
          f"{cuact_torch.LOADED_FROM}, shape {tuple(args.shape)}, median of {args.reps} (ms, L2 flushed)\n")
    print("| op | dtype | eager | torch.compile | cuact | copy | cuact vs eager | cuact vs compile | copy / cuact |")
    print("|---|---|---|---|---|---|---|---|---|")
    for dtype_name in args.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        x = torch.randn(*args.shape, device="cuda", dtype=dtype)
        y = torch.empty_like(x)
        copy = time_ms(lambda: y.copy_(x))
        del y
        for name in args.ops.split(","):
            ref_fn, param_sets = REFERENCE[name]
            params = param_sets[0]
            cuact_op = getattr(torch.ops.cuact, name)
            torch._dynamo.reset()
            compiled = torch.compile(lambda t: ref_fn(t, *params))
            with torch.no_grad():
                t_eager = time_ms(lambda: ref_fn(x, *params))
                t_compile = time_ms(lambda: compiled(x))
                t_cuact = time_ms(lambda: cuact_op(x, *params))
            row = dict(op=name, dtype=dtype_name, eager_ms=t_eager, compile_ms=t_compile,
                       cuact_ms=t_cuact, copy_ms=copy, vs_eager=t_eager / t_cuact,
                       vs_compile=t_compile / t_cuact, copy_fraction=copy / t_cuact)
            rows.append(row)
            print(f"| {name} | {dtype_name} | {t_eager:.3f} | {t_compile:.3f} | {t_cuact:.3f} | {copy:.3f} | "
                  f"{row['vs_eager']:.3f}x | {row['vs_compile']:.3f}x | {row['copy_fraction']:.1%} |", flush=True)
            torch.cuda.empty_cache()
        del x
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "shape": args.shape, "rows": rows}, f, indent=1)
    status = 0
    if args.kernelbench:
        print(flush=True)
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernelbench_run.py")
        extra = ["--json", os.path.splitext(args.json)[0] + "_kernelbench.json"] if args.json else []
        status = subprocess.call([sys.executable, script, args.kernelbench] + extra)
    return status


if __name__ == "__main__":
    sys.exit(main())
