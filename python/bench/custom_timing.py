"""Users' own activations through cuact_torch.activation against torch eager and torch.compile.

    python3 python/bench/custom_timing.py [--shape 4096 393216] [--reps 20] [--ops softplus,elu]
                                          [--dtypes bfloat16,float32]

Each functor is compiled twice from the same C++ expression: without a cost hint (as a user writes
it; cuact looks a bf16 forward of such a functor up from a table of its own results from 2^27
elements) and with `heavy=True` (the hint keeps it on the direct path), so the table's effect is
measured in one run. torch's side is the same formula in torch ops (eager, and torch.compile's
generated kernel). Timing as timing.py: median of --reps single calls between CUDA events, L2
flushed before each; `copy` is y.copy_(x), the ceiling for one read and one write.
"""
import argparse
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import torch

import importlib.util  # noqa: E402
if importlib.util.find_spec("cuact_torch") is None:  # not installed: use the checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cuact_torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timer import timer  # noqa: E402

# name: (C++ expression in x of compute type C, the same in torch)
FUNCTORS = {
    "softplus": ("x > C(20) ? x : log1p(exp(x))",
                 lambda x: torch.where(x > 20, x, torch.log1p(torch.exp(x)))),
    "elu": ("x > C(0) ? x : expm1(x)", lambda x: torch.where(x > 0, x, torch.expm1(x))),
    "sigmoid": ("C(1) / (C(1) + exp(-x))", lambda x: 1 / (1 + torch.exp(-x))),
    "silu": ("x / (C(1) + exp(-x))", lambda x: x / (1 + torch.exp(-x))),
}


def build(name, heavy):
    """The op for one functor; in a worker process first, so the compiles run in parallel and the
    main process loads them from the on-disk cache."""
    suffix = "_hinted" if heavy else ""
    return cuact_torch.activation(f"user_{name}{suffix}", FUNCTORS[name][0],
                                  namespace="cuact_bench", heavy=heavy or None)


def build_in_worker(args):
    build(*args)
    return args


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", type=int, nargs="+", default=[4096, 393216])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--ops", default=",".join(FUNCTORS))
    parser.add_argument("--dtypes", default="bfloat16")
    args = parser.parse_args()
    names = args.ops.split(",")
    jobs = [(name, heavy) for name in names for heavy in (False, True)]
    # spawned, not forked: the parent has loaded torch's CUDA libraries
    with ProcessPoolExecutor(max_workers=len(jobs),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(build_in_worker, jobs))
    ops = {job: build(*job) for job in jobs}

    time_ms = timer(args.reps)
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, shape {tuple(args.shape)}, "
          f"median of {args.reps} (ms, L2 flushed); cuact = no hint (bf16: tabulated), "
          "cuact hinted = heavy=True (direct)\n")
    print("| functor | dtype | eager | torch.compile | cuact | cuact hinted | copy | "
          "copy / cuact | copy / hinted | cuact vs eager | cuact vs compile |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for dtype_name in args.dtypes.split(","):
        x = torch.randn(*args.shape, device="cuda", dtype=getattr(torch, dtype_name))
        y = torch.empty_like(x)
        copy = time_ms(lambda: y.copy_(x))
        del y
        for name in names:
            formula = FUNCTORS[name][1]
            torch._dynamo.reset()
            compiled = torch.compile(formula)
            with torch.no_grad():
                reference = formula(x.float()).to(x.dtype)
                got = ops[(name, False)](x)
                hinted = ops[(name, True)](x)
                # same functor, same rounding: the table writes the direct path's bits
                assert torch.equal(got.view(torch.int16) if x.dtype == torch.bfloat16 else got,
                                   hinted.view(torch.int16) if x.dtype == torch.bfloat16 else hinted)
                torch.testing.assert_close(got, reference, rtol=2e-2 if x.element_size() == 2
                                           else 1e-5, atol=1e-5)
                del got, hinted, reference
                t_eager = time_ms(lambda: formula(x))
                t_compile = time_ms(lambda: compiled(x))
                t_cuact = time_ms(lambda: ops[(name, False)](x))
                t_hinted = time_ms(lambda: ops[(name, True)](x))
            print(f"| {name} | {dtype_name} | {t_eager:.3f} | {t_compile:.3f} | {t_cuact:.3f} | "
                  f"{t_hinted:.3f} | {copy:.3f} | {copy / t_cuact:.1%} | {copy / t_hinted:.1%} | "
                  f"{t_eager / t_cuact:.2f}x | {t_compile / t_cuact:.3f}x |", flush=True)
            torch.cuda.empty_cache()
        del x
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
