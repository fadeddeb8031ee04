"""cuact_torch on two GPUs: tensors on cuda:1 while cuda:0 is current (functional, gated, nn,
patch), and a two-rank DTensor mesh (one process per GPU, nccl over a FileStore).
Skipped (with the reason) on fewer than two GPUs."""
import os
import subprocess
import sys
import tempfile

from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if torch.cuda.device_count() < 2:
    pytest.skip(f"needs two CUDA devices, found {torch.cuda.device_count()}", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import cuact_torch  # noqa: E402
import cuact_torch.functional as CF  # noqa: E402
import cuact_torch.nn as CN  # noqa: E402


def test_second_device_while_first_is_current():
    torch.cuda.set_device(0)
    x = torch.randn(64, 32, device="cuda:1")
    for name in ("silu", "gelu", "relu", "mish"):
        y = getattr(CF, name)(x)
        assert y.device == x.device
        torch.testing.assert_close(y, getattr(F, name)(x))
    torch.testing.assert_close(CF.glu(x, 0), F.glu(x, 0))
    a, b = x.chunk(2, -1)
    torch.testing.assert_close(CF.gated("silu", a.contiguous(), b.contiguous()), F.silu(a) * b)
    y = x.clone()
    CF.silu(y, inplace=True)
    torch.testing.assert_close(y, F.silu(x))
    mlp = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.SiLU()).to("cuda:1")
    ref = CN.SiLU()(mlp[0](x))
    cuact_torch.patch(mlp)
    torch.testing.assert_close(mlp(x), ref)
    assert torch.cuda.current_device() == 0


WORKER = r"""
import os, sys, torch, torch.distributed as dist
import cuact_torch
from torch.distributed.tensor import Shard, Replicate, distribute_tensor, init_device_mesh
rank = int(sys.argv[1]); store = dist.FileStore(sys.argv[2], 2)
torch.cuda.set_device(rank)
dist.init_process_group("nccl", store=store, rank=rank, world_size=2)
mesh = init_device_mesh("cuda", (2,))
torch.manual_seed(0)
a = torch.randn(8, 6, device="cuda"); b = torch.randn(8, 6, device="cuda")
for p in (Shard(0), Shard(1), Replicate()):
    da, db = distribute_tensor(a, mesh, [p]), distribute_tensor(b, mesh, [p])
    out = torch.ops.cuact.gated_silu(da, db)
    assert tuple(out.placements) == (p,), out.placements
    torch.testing.assert_close(out.full_tensor(), torch.nn.functional.silu(a) * b)
    y = torch.ops.cuact.silu(da)
    torch.testing.assert_close(y.full_tensor(), torch.nn.functional.silu(a))
bias = torch.randn(6, device="cuda", requires_grad=True)
x = torch.randn(8, 6, device="cuda", requires_grad=True)
dx = distribute_tensor(x.detach(), mesh, [Shard(0)]).requires_grad_()
dbias = distribute_tensor(bias.detach(), mesh, [Replicate()]).requires_grad_()
out = torch.ops.cuact.bias_gelu(dx, dbias)
out.full_tensor().sum().backward()
torch.nn.functional.gelu(x + bias).sum().backward()
torch.testing.assert_close(dbias.grad.full_tensor(), bias.grad)
try:
    torch.ops.cuact.gated_silu_packed(distribute_tensor(torch.randn(8, 12, device="cuda"), mesh, [Shard(1)]))
    raise SystemExit("packed under Shard(1) was not refused")
except RuntimeError as e:
    assert "packed" in str(e), e
dist.destroy_process_group()
print("rank", rank, "ok")
"""


def test_two_rank_dtensor_mesh():
    store = os.path.join(tempfile.mkdtemp(), "store")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(r), store], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for r in (0, 1)]
    outs = [p.communicate(timeout=240)[0] for p in procs]
    for r, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"rank {r}:\n{out[-3000:]}"
