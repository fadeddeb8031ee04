"""The timer of the PyTorch timing scripts (timing.py, custom_timing.py, fused_timing.py): CUDA
events around one call, L2 flushed before every run, the GPU kept busy while the host queues the
call, three warm-up calls, the median. Its own module so that fused_timing.py, which does not load
cuact_torch's operator library, shares it without importing timing.py."""
import statistics

import torch


def timer(reps):
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(max(2 * getattr(props, "L2_cache_size", 50 << 20), 64 << 20),
                        dtype=torch.uint8, device="cuda")
    busy_cycles = 200_000  # about 100 us at 2 GHz: longer than the host's dispatch of one call

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
