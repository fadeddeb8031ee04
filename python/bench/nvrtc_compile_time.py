"""NVRTC time of the sources cuact_torch.activation compiles, per group and dtype; no GPU needed.

    python3 python/bench/nvrtc_compile_time.py [--arch 90] [--reps 3] [--dtypes float32,bfloat16]
        [--groups forward,backward,fused,fused_backward,quantize] [--old]

Builds the sources with custom.py's own _Family (a swish with a derivative and a parameter, as
test_custom.py's) and times nvrtcCompileProgram + nvrtcGetCUBIN through _nvrtc.compile_cubin:
CPU seconds of this process (NVRTC is single-threaded) and wall seconds, the best of --reps, and
the cubin's size. --old also times each source with the prelude before cuact/rtc.cuh (its two
headers without rtc.cuh's CCCL setting). Without PyTorch (a build host) a stand-in module holding
the dtype names serves the source building, which needs nothing else of torch.
"""
import argparse
import importlib
import os
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = ("float32", "float64", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")


def import_custom():
    """cuact_torch.custom and _nvrtc without cuact_torch/__init__ (which loads the extension)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        stand_in = types.ModuleType("torch")
        for name in DTYPES:
            setattr(stand_in, name, name)
        stand_in.__file__ = os.path.join(HERE, "no-torch", "__init__.py")
        sys.modules["torch"] = stand_in
        sys.modules["cuact_torch._fakes"] = types.ModuleType("cuact_torch._fakes")
    package = types.ModuleType("cuact_torch")
    package.__path__ = [os.path.join(HERE, "..", "cuact_torch")]
    sys.modules.setdefault("cuact_torch", package)
    return importlib.import_module("cuact_torch.custom"), importlib.import_module(
        "cuact_torch._nvrtc")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="90")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--groups", default="forward,backward,fused,fused_backward,quantize")
    parser.add_argument("--old", action="store_true")
    args = parser.parse_args()
    custom, nvrtc = import_custom()
    torch = sys.modules["torch"]
    parts = {"forward": "x / (C(1) + exp(-C(beta) * x))",
             "derivative": "C s = C(1) / (C(1) + exp(-C(beta) * x)); "
                           "return s + C(beta) * x * s * (C(1) - s);",
             "gradient": None, "derivative_from_output": None}
    family = custom._Family("swish", "cuact_probe", parts, {"beta": 1.0}, None, True)
    include = [family.include, *nvrtc.include_dirs()]
    print(f"NVRTC {nvrtc.nvrtc_version()} ({nvrtc.nvrtc_file()}), sm_{args.arch}, best of "
          f"{args.reps}\n")
    print("| source | dtype | prelude | CPU (s) | wall (s) | cubin (KB) |")
    print("|---|---|---|---|---|---|")
    preludes = ["rtc.cuh"] + (["old"] if args.old else [])
    for group in args.groups.split(","):
        for dtype_name in args.dtypes.split(","):
            out = torch.float8_e4m3fn if group in ("quantize", "cast") else None
            for prelude in preludes:
                src = family.source(group, getattr(torch, dtype_name), out)
                if prelude == "old":
                    src = src.replace("#include <cuact/rtc.cuh>", "#include <cuact/activation.cuh>"
                                      "\n#include <cuact/elementwise.cuh>")
                cpu = wall = float("inf")
                for _ in range(args.reps):
                    c, w = time.process_time(), time.perf_counter()
                    cubin, _ = nvrtc.compile_cubin(src, "swish.cu", args.arch, include)
                    cpu = min(cpu, time.process_time() - c)
                    wall = min(wall, time.perf_counter() - w)
                print(f"| {group} | {dtype_name} | {prelude} | {cpu:.3f} | {wall:.3f} | "
                      f"{len(cubin) / 1024:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
