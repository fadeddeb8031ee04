"""Per-trial times of KernelBench's timing loop, to find where its ModelNew slot loses time.

    python3 python/bench/kernelbench_slot.py /path/to/KernelBench [--op relu|clone] [--trials 30]

KernelBench's eval measured the reference itself 2-8% slower in ModelNew's place than in its own
measurement (bench/RESULTS.md, "KernelBench"), and cuact's ModelNew kernels tie torch's outside
the harness. KernelBench reports the mean of its trials. This script calls KernelBench's own
`time_execution_with_cuda_event` on torch's op over KernelBench's ReLU shape (4096 x 393216
float32) in the states the harness runs it in, and prints every trial:
  fresh   the first measurement in the process;
  again   right after it;
  after   after an imitation of the eval's correctness trials (fresh inputs made on the CPU and
          moved, both models run, torch.allclose on the outputs);
It also times, on the host, allocating one output's bytes after torch.cuda.empty_cache() (the
timing loop empties the cache after its warm-up, and its trial 1 allocates while trial 0's output
is still held).
"""
import argparse
import os
import statistics
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kernelbench")
    parser.add_argument("--op", default="relu", choices=["relu", "clone"])
    parser.add_argument("--trials", type=int, default=30)
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(os.path.abspath(args.kernelbench), "src"))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from kernelbench_run import _stub_missing_modules  # LLM-client imports eval does not use
    _stub_missing_modules()

    import torch
    from kernelbench import timing as kb_timing

    shape = (4096, 393216)
    device = torch.device("cuda:0")
    op = torch.relu if args.op == "relu" else torch.clone
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, {args.op} over {shape} "
          f"float32, {args.trials} trials (KernelBench's time_execution_with_cuda_event)")

    def report(label, times):
        worst = max(range(len(times)), key=lambda i: times[i])
        rest = [t for i, t in enumerate(times) if i != worst]
        print(f"{label:8s} mean {statistics.mean(times):.4f}  median {statistics.median(times):.4f}"
              f"  max {times[worst]:.3f} (trial {worst + 1})  mean without it "
              f"{statistics.mean(rest):.4f}")
        print("         " + " ".join(f"{t:.3f}" for t in times), flush=True)

    def measure(label, x):
        torch.cuda.synchronize()
        with torch.no_grad():
            times = kb_timing.time_execution_with_cuda_event(
                op, [x], num_trials=args.trials, verbose=False, device=device)
        report(label, times)

    def allocation_ms():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        start = time.perf_counter()
        y = torch.empty(shape, device=device)
        torch.cuda.synchronize()
        elapsed = (time.perf_counter() - start) * 1e3
        del y
        return elapsed

    def correctness_trials():
        for trial in range(5):
            torch.manual_seed(trial)
            x = torch.rand(shape).to(device)
            ref, new = op(x), op(x)
            assert torch.allclose(ref, new, atol=1e-2, rtol=1e-2)
            del x, ref, new

    x = torch.rand(shape, device=device)
    print(f"allocate {x.numel() * 4 / 1e9:.2f} GB after empty_cache: "
          + ", ".join(f"{allocation_ms():.2f}" for _ in range(3)) + " ms (host)")
    measure("fresh", x)
    measure("again", x)
    del x
    correctness_trials()
    x = torch.rand(shape).to(device)
    measure("after", x)
    print(f"allocate after them: {allocation_ms():.2f} ms (host)")
    measure("again", x)
    return 0


if __name__ == "__main__":
    sys.exit(main())
