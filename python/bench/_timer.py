"""The timer of the PyTorch timing scripts (timing.py, custom_timing.py, fused_timing.py): CUDA
events around one call, L2 flushed before every run, the GPU kept busy while the host queues the
call, three warm-up calls, the median. Its own module so that the scripts share it without
importing one another."""
import statistics

import torch

# How long the GPU is kept busy (us) while the host queues the timed call: longer than the host's
# dispatch of one call, torch.compile's wrapper included. 100 us was not: on an H200 torch.compile's
# fp32 sigmoid, silu and gelu_tanh read 3.07-3.20 ms with it, 3.020-3.027 with 1000 us, and the
# profiler gives their kernels 3.018-3.023 ms; cuact's silu 3.013 against 2.996 (kernel 3.001);
# every other row of the probe moved by no more than 0.1% (bench/results/h200/timer_busy_s34.txt).
BUSY_US = 1000


def timer(reps, busy_us=BUSY_US):
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(max(2 * getattr(props, "L2_cache_size", 50 << 20), 64 << 20),
                        dtype=torch.uint8, device="cuda")
    busy_cycles = int(busy_us * 2000)  # at about 2 GHz (H100 and H200: 1.98)

    def time_ms(fn, *args):
        for _ in range(3):  # warm-up (and compilation)
            fn(*args)
        times = []
        for _ in range(reps):
            flush.fill_(1)
            torch.cuda._sleep(busy_cycles)  # the GPU busy while the host queues the call
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*args)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)
    return time_ms
