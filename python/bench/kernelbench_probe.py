"""A ModelNew's kernel against torch's own, in one process, outside KernelBench's harness.

    CUACT_INCLUDE=$PWD/include python3 python/bench/kernelbench_probe.py

For KernelBench's ReLU (4096 x 393216 float32, torch.rand): torch.relu, the ModelNew of
examples/kernelbench/19_ReLU_cuact.py, the same __global__ built here with one and with two vectors
per thread, cuact::forward (the library's launch model) and x.clone(), each timed as the median and
mean of 20 calls with CUDA events, first warm (no flush), then with KernelBench's own L2 flush (a
256 MB fill before every call). Written to tell a slower kernel from a harness effect: KernelBench's
eval measured the ModelNew 3-5% slower than torch.relu while the kernels tie here.
"""
import importlib
import os
import statistics
import sys

import torch
from torch.utils.cpp_extension import load_inline

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INCLUDE = os.environ.get("CUACT_INCLUDE", os.path.join(REPO, "include"))

SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuact/cuact.cuh>

template <class Params>
__global__ void __launch_bounds__(128) activation_kernel(const Params params) {
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  cuact::elementwise_thread(params, thread, threads);
}

// relu over x: the ModelNew's kernel with `vectors_per_thread` vectors per thread, or (library)
// cuact::forward with its own launch shape.
torch::Tensor run(torch::Tensor x, int64_t vectors_per_thread, bool library) {
  torch::Tensor y = torch::empty_like(x);
  const std::size_t n = x.numel();
  auto stream = at::cuda::getCurrentCUDAStream();
  if (library) {
    TORCH_CHECK(cuact::forward(cuact::relu{}, x.data_ptr<float>(), y.data_ptr<float>(), n,
                               stream) == cudaSuccess);
    return y;
  }
  const auto params = cuact::make_elementwise_params<4>(
      cuact::relu{}, cuact::outputs(y.data_ptr<float>()), n,
      cuact::inputs<float>(x.data_ptr<float>()), static_cast<unsigned>(vectors_per_thread));
  const std::size_t grid = (params.work_items() + 127) / 128;
  activation_kernel<<<static_cast<unsigned>(grid), 128, 0, stream>>>(params);
  return y;
}
"""


def main():
    module = load_inline(name="cuact_kernelbench_probe",
                         cpp_sources="torch::Tensor run(torch::Tensor x, int64_t vectors_per_thread, bool library);",
                         cuda_sources=SOURCE, functions=["run"], extra_include_paths=[INCLUDE],
                         extra_cuda_cflags=["-O3"], verbose=False)
    os.environ.setdefault("CUACT_INCLUDE", INCLUDE)
    sys.path.insert(0, os.path.join(REPO, "examples", "kernelbench"))
    model_new = importlib.import_module("19_ReLU_cuact").ModelNew().cuda()
    x = torch.rand(4096, 393216, device="cuda")
    flush = torch.empty((32, 1024, 1024), dtype=torch.int64, device="cuda")  # KernelBench's size

    def timed(fn, flushed, reps=20):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            if flushed:
                flush.fill_(42)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times), statistics.mean(times)

    cases = [("torch.relu", lambda: torch.relu(x)), ("ModelNew", lambda: model_new(x)),
             ("kernel, 1 vector/thread", lambda: module.run(x, 1, False)),
             ("kernel, 2 vectors/thread", lambda: module.run(x, 2, False)),
             ("cuact::forward", lambda: module.run(x, 1, True)), ("x.clone()", lambda: x.clone())]
    print(torch.cuda.get_device_name(0))
    for flushed in (False, True):
        for name, fn in cases:
            median, mean = timed(fn, flushed)
            print(f"{'flush' if flushed else 'warm '} {name:26s} median {median:.4f} ms mean {mean:.4f} ms")


if __name__ == "__main__":
    main()
