"""The ModelNew files' kernels with one and with two vectors per thread, against torch, in one run.

    CUACT_INCLUDE=$PWD/include python3 python/bench/modelnew_variants.py [--only Swish,MinGPT]
                                                                        [--rounds 5] [--reps 10]

Each file of examples/kernelbench is built as it is and as its other variant: a file on
`cuact::one_vector<Op>` also with Op at two vectors per thread, the ReLU file (the op's own body at
the default one vector) also on `cuact::one_vector`. Both variants, torch eager and torch.compile
of the problem's formula are timed round-robin (--rounds rounds, each the median of --reps calls
with the L2 flushed, _timer.py) on a fresh standard normal input of the problem's shape; each
variant's largest difference from eager is printed. Written to choose each file's vector count
from the kernel's own time, outside KernelBench's harness, whose slot effect (kernelbench_slot.py)
moves its means by more than the choice does.
"""
import argparse
import importlib.util
import multiprocessing
import os
import re
import statistics
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples", "kernelbench")
sys.path.insert(0, HERE)
from _timer import timer  # noqa: E402

# name: (ModelNew file, input shape, torch's formula)
PROBLEMS = {
    "ReLU": ("19_ReLU_cuact.py", (4096, 393216), torch.relu),
    "SELU": ("27_SELU__cuact.py", (4096, 393216), torch.selu),
    "Swish": ("25_Swish_cuact.py", (4096, 393216), lambda x: x * torch.sigmoid(x)),
    "Softsign": ("30_Softsign_cuact.py", (4096, 393216), lambda x: x / (1 + torch.abs(x))),
    "MinGPT": ("88_MinGPTNewGelu_cuact.py", (8192, 8192),
               lambda x: 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))),
}

ONE_VECTOR = re.compile(r"cuact::one_vector<([\w:]+)>\{\}")
OWN_OP = re.compile(r"make_elementwise_params<4>\(([\w:]+)\{\},")
TWO_VECTORS_ARG = "cuact::inputs(in), /*vectors_per_thread=*/2);"


def variants(source):
    """{label: source} for the file as it is and its other vector count. One_vector caps a
    thread at one vector whatever vectors_per_thread says, so the one_vector variant keeps it."""
    if ONE_VECTOR.search(source):
        other = ONE_VECTOR.sub(r"\1{}", source).replace("cuact::inputs(in));", TWO_VECTORS_ARG)
        assert TWO_VECTORS_ARG in other, "the two-vector variant needs cuact::inputs(in)); to extend"
        return {"file (one_vector)": source, "variant: two vectors": other}
    other, count = OWN_OP.subn(r"make_elementwise_params<4>(cuact::one_vector<\1>{},", source)
    assert count == 1, "the one_vector variant needs make_elementwise_params<4>(Op{}, ...)"
    return {"file": source, "variant: one_vector": other}


def write(source, tag, directory):
    """The variant as a module file whose extension has its own name."""
    source = re.sub(r'name="(\w+)"', r'name="\1_' + tag + '"', source)
    path = os.path.join(directory, f"modelnew_{tag}.py")
    with open(path, "w") as f:
        f.write(source)
    return path


def import_file(path):
    """Imports the module (its load_inline builds or finds the extension); returns it."""
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(path):
    import_file(path)
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default=",".join(PROBLEMS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    os.environ.setdefault("CUACT_INCLUDE", os.path.abspath(os.path.join(HERE, "..", "..", "include")))
    time_ms = timer(args.reps)
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}; each cell the median over "
          f"{args.rounds} round-robin rounds of the median of {args.reps} calls, ms")
    directory = tempfile.mkdtemp()
    names = args.only.split(",")
    files = {}  # name: {label: path}
    for name in names:
        with open(os.path.join(EXAMPLES, PROBLEMS[name][0])) as f:
            source = f.read()
        files[name] = {label: write(text, f"{name.lower()}{i}", directory)
                       for i, (label, text) in enumerate(variants(source).items())}
    # every extension built at once, in spawned processes (one translation unit each)
    paths = [path for by_label in files.values() for path in by_label.values()]
    with ProcessPoolExecutor(len(paths), mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(build, paths))
    for name in names:
        _, shape, formula = PROBLEMS[name]
        torch.manual_seed(0)
        x = torch.randn(shape, device="cuda")
        expected = formula(x)
        contestants = {"torch eager": formula, "torch.compile": torch.compile(formula)}
        for label, path in files[name].items():
            model = import_file(path).ModelNew().cuda()
            error = (model(x) - expected).abs().max().item()
            print(f"{name} {label}: max |ModelNew - eager| = {error:.3g}")
            contestants[label + ("" if error <= 1e-5 else " MISMATCH")] = model
        times = {label: [] for label in contestants}
        for _ in range(args.rounds):
            for label, fn in contestants.items():
                times[label].append(time_ms(fn, x))
        eager = statistics.median(times["torch eager"])
        compiled = statistics.median(times["torch.compile"])
        print(f"\n{name} {tuple(shape)} float32")
        for label, t in times.items():
            m = statistics.median(t)
            print(f"  {label:26s} {m:8.4f} ms (rounds {min(t):.4f}-{max(t):.4f})  "
                  f"x eager {eager / m:6.3f}  x compile {compiled / m:6.3f}")
        del x, expected, contestants
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
