"""Users' own activations through cuact_torch.activation (NVRTC) against torch's jiterator.

    python3 python/bench/custom_timing.py [--shape 4096 393216] [--reps 20] [--dtypes float32,bfloat16]
        [--skip compile|kernel] [--functors relu,selu]

Prints three tables in one run:
- compile: seconds from `cuact_torch.activation(...)` to the first result in a new process, with an
  empty cache (cold: NVRTC compiles the forward for one dtype), the first backward after it (NVRTC
  compiles the backward), and with the cache the cold process filled (warm: a ready op, no
  compile); `import torch` and `import cuact_torch` are timed apart. A process's first backward
  pays torch's own one-time imports (torch.autograd's _make_grads imports sympy: seconds), so the
  child runs torch.selu's first backward before cuact's and prints both. jiterator's
  `_create_jit_fn` and first call with its own empty kernel cache beside it.
- kernel: median of --reps single calls between CUDA events, L2 flushed before each (_timer.py), of
  the JIT op (declaring the built-in's cost hint: relu light, selu heavy) against the activation of
  that name built into cuact's extension (relu and selu, the lean build's), and jiterator's kernel
  for the same expression; `copy` is y.copy_(x). Each functor has two JIT rows: the user's
  expression, and the built-in's own math at its dtype's accuracy (`cuact::forward_at(cuact::NAME{},
  x, accuracy)`, includes=cuact/activations.cuh), which is the same functor, so that row's
  JIT / built-in is what the JIT path itself costs. The relu row `quantize` is
  quantize_NAME (fp8 e4m3 with amax) of the JIT op against the built-in quantize_relu.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# name: (cuact expression in x of compute type C, its derivative, jiterator's code string, the
# cost hint the built-in activation of that name declares, which the JIT op declares too)
FUNCTORS = {
    "relu": ("x > C(0) ? x : C(0)", "x > C(0) ? C(1) : C(0)",
             "template <typename T> T user_relu(T x) { return x > T(0) ? x : T(0); }", False),
    "selu": ("x > C(0) ? C(1.0507009873554805) * x : C(1.7580993408473766) * expm1(x)",
             "x > C(0) ? C(1.0507009873554805) : C(1.7580993408473766) * exp(x)",
             "template <typename T> T user_selu(T x) { return x > T(0) ? T(1.0507009873554805) * x"
             " : T(1.7580993408473766) * (exp(x) - T(1)); }", True),
}

CHILD = r"""
import json, sys, time
cfg = json.loads(sys.argv[1])
t0 = time.perf_counter()
import torch
torch.cuda.init()
x = torch.randn(1 << 20, device="cuda", dtype=getattr(torch, cfg["dtype"]))
torch.cuda.synchronize()
t1 = time.perf_counter()
result = {"import_torch": t1 - t0}
if cfg["kind"] == "jiterator":
    fn = torch.cuda.jiterator._create_jit_fn(cfg["code"])
    y = fn(x)
    torch.cuda.synchronize()
    result["first_call"] = time.perf_counter() - t1
else:
    import importlib.util
    if importlib.util.find_spec("cuact_torch") is None:  # not installed: the checkout
        sys.path.insert(0, cfg["python_dir"])
    import cuact_torch
    t2 = time.perf_counter()
    result["import_cuact_torch"] = t2 - t1
    op = cuact_torch.activation("user_" + cfg["name"], cfg["forward"], derivative=cfg["derivative"],
                                namespace="cuact_timing", dtype=x.dtype, heavy=cfg["heavy"])
    y = op(x)
    torch.cuda.synchronize()
    t3 = time.perf_counter()
    result["first_call"] = t3 - t2
    xt = x.detach().requires_grad_()
    torch.selu(xt).backward(torch.ones_like(x))
    torch.cuda.synchronize()
    t3b = time.perf_counter()
    result["torch_first_backward"] = t3b - t3
    t3 = t3b
    xr = x.detach().requires_grad_()
    op(xr).backward(torch.ones_like(x))
    torch.cuda.synchronize()
    result["first_backward"] = time.perf_counter() - t3
print("RESULT " + json.dumps(result))
"""


def child(kind, name, dtype, env):
    forward, derivative, code, heavy = FUNCTORS[name]
    cfg = {"kind": kind, "name": name, "dtype": dtype, "forward": forward, "heavy": heavy,
           "derivative": derivative, "code": code, "python_dir": os.path.join(HERE, "..")}
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cfg)], env=env,
                         capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{kind} {name} {dtype} failed:\n{out.stdout}\n{out.stderr}")


def compile_table(dtypes, functors):
    print("| functor | dtype | path | import cuact_torch (s) | define + first call (s) | "
          "torch.selu's first backward (s) | then cuact's first backward (s) |")
    print("|---|---|---|---|---|---|---|")
    for dtype in dtypes:
        for name in functors:
            with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as kcache:
                env = dict(os.environ, CUACT_TORCH_CACHE=cache, PYTORCH_KERNEL_CACHE_PATH=kcache)
                cold = child("cuact", name, dtype, env)
                warm = child("cuact", name, dtype, env)
                jit = child("jiterator", name, dtype, env)
            print(f"| {name} | {dtype} | cuact NVRTC, cold cache | {cold['import_cuact_torch']:.3f} | "
                  f"{cold['first_call']:.3f} | {cold['torch_first_backward']:.3f} | "
                  f"{cold['first_backward']:.3f} |")
            print(f"| {name} | {dtype} | cuact NVRTC, warm cache | {warm['import_cuact_torch']:.3f} | "
                  f"{warm['first_call']:.4f} | {warm['torch_first_backward']:.3f} | "
                  f"{warm['first_backward']:.4f} |")
            print(f"| {name} | {dtype} | jiterator, cold cache | - | {jit['first_call']:.3f} | - | - |",
                  flush=True)


def kernel_table(shape, reps, dtypes, functors):
    import importlib.util

    import torch
    if importlib.util.find_spec("cuact_torch") is None:  # not installed: the checkout
        sys.path.insert(0, os.path.join(HERE, ".."))
    import cuact_torch
    sys.path.insert(0, HERE)
    from _timer import timer

    time_ms = timer(reps)
    print(f"\n{torch.cuda.get_device_name(0)}, torch {torch.__version__}, shape {tuple(shape)}, "
          f"median of {reps} (ms, L2 flushed)\n")
    print("| functor | dtype | cuact JIT (NVRTC) | cuact built-in | JIT / built-in | jiterator | "
          "copy | copy / JIT |")
    print("|---|---|---|---|---|---|---|---|")
    for dtype_name in dtypes:
        x = torch.randn(*shape, device="cuda", dtype=getattr(torch, dtype_name))
        y = torch.empty_like(x)
        copy = time_ms(lambda: y.copy_(x))
        del y
        for name in functors:
            forward, derivative, code, heavy = FUNCTORS[name]
            op = cuact_torch.activation("kernel_" + name, forward, derivative=derivative,
                                        namespace="cuact_timing", dtype=x.dtype,
                                        fused=name == "relu", heavy=heavy)
            same = cuact_torch.activation("same_" + name,
                                          f"cuact::forward_at(cuact::{name}{{}}, x, accuracy)",
                                          namespace="cuact_timing", dtype=x.dtype, heavy=heavy,
                                          includes="cuact/activations.cuh")
            built_in = getattr(torch.ops.cuact, name)
            jit = torch.cuda.jiterator._create_jit_fn(code)
            with torch.no_grad():
                got, want = op(x[:1 << 20]), built_in(x[:1 << 20])
                torch.testing.assert_close(got, want, rtol=2e-2 if x.element_size() == 2 else 1e-5,
                                           atol=1e-5)
                torch.testing.assert_close(same(x[:1 << 20]), want)
                t_built_in = time_ms(lambda: built_in(x))
                t_jit = time_ms(lambda: op(x))
                t_same = time_ms(lambda: same(x))
                t_jiterator = time_ms(lambda: jit(x))
            print(f"| {name} | {dtype_name} | {t_jit:.3f} | {t_built_in:.3f} | "
                  f"{t_jit / t_built_in:.3f} | {t_jiterator:.3f} | {copy:.3f} | {copy / t_jit:.1%} |",
                  flush=True)
            print(f"| {name}, cuact::{name}'s math | {dtype_name} | {t_same:.3f} | {t_built_in:.3f} | "
                  f"{t_same / t_built_in:.3f} | - | {copy:.3f} | {copy / t_same:.1%} |", flush=True)
            if name == "relu" and hasattr(torch.ops.cuact, "quantize_relu"):
                scale = torch.tensor([2.0], device="cuda")
                jit_q = torch.ops.cuact_timing.quantize_kernel_relu
                with torch.no_grad():
                    part = x[:1 << 20]
                    (qj, aj), (qb, ab) = jit_q(part, scale=scale), torch.ops.cuact.quantize_relu(
                        part, scale=scale)
                    torch.testing.assert_close(aj, ab)
                    torch.testing.assert_close(qj.float(), qb.float())
                    t_jit = time_ms(lambda: jit_q(x, scale=scale))
                    t_built_in = time_ms(lambda: torch.ops.cuact.quantize_relu(x, scale=scale))
                print(f"| relu quantize | {dtype_name} | {t_jit:.3f} | {t_built_in:.3f} | "
                      f"{t_jit / t_built_in:.3f} | - | - | - |", flush=True)
            torch.cuda.empty_cache()
        del x
        torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", type=int, nargs="+", default=[4096, 393216])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--skip", default="", help="compile and/or kernel")
    parser.add_argument("--functors", default=",".join(FUNCTORS), help="of " + ", ".join(FUNCTORS))
    args = parser.parse_args()
    dtypes, functors = args.dtypes.split(","), args.functors.split(",")
    started = time.perf_counter()
    if "compile" not in args.skip:
        compile_table(dtypes, functors)
    if "kernel" not in args.skip:
        kernel_table(args.shape, args.reps, dtypes, functors)
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
