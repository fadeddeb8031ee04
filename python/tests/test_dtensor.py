"""DTensor sharding rules of torch.ops.cuact (cuact_torch.dtensor) on a one-rank mesh on one GPU:
results and gradients equal the plain tensors', placements as the rules say, and the refusals
(packed under Shard(last), quantize of a sharded x). Skipped (with the reason) without torch, a
CUDA device or torch.distributed's DTensor."""
import os
import tempfile

from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
dist = pytest.importorskip("torch.distributed", reason="torch.distributed is not available")
if not dist.is_available():
    pytest.skip("torch.distributed is not available", allow_module_level=True)
try:
    from torch.distributed.tensor import Partial, Replicate, Shard, distribute_tensor, init_device_mesh
except ImportError as e:
    pytest.skip(f"no DTensor in this torch: {e}", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import cuact_torch  # noqa: E402
import cuact_torch.functional as CF  # noqa: E402

ops = torch.ops.cuact
_MESH = []


def mesh():
    """A one-rank mesh on cuda:0 (nccl; a FileStore so no port is needed)."""
    if not _MESH:
        if not dist.is_initialized():
            store = dist.FileStore(os.path.join(tempfile.mkdtemp(), "store"), 1)
            dist.init_process_group("nccl", store=store, rank=0, world_size=1)
        torch.cuda.set_device(0)
        _MESH.append(init_device_mesh("cuda", (1,)))
    return _MESH[0]


def placements_of(d):
    return tuple(d.placements)


def test_rules_registered():
    names = {str(op) for op in cuact_torch.dtensor.REGISTERED}
    assert "cuact.silu.default" in names and "cuact.gated_silu.default" in names, sorted(names)[:10]


@pytest.mark.parametrize("placement", [Replicate(), Shard(0), Shard(1)])
@pytest.mark.parametrize("name", ["silu", "gelu", "relu", "softplus"])
def test_unary(name, placement):
    x = torch.randn(8, 6, device="cuda", dtype=torch.float64, requires_grad=True)
    d = distribute_tensor(x.detach(), mesh(), [placement]).requires_grad_()
    y = getattr(CF, name)(d)
    assert placements_of(y) == (placement,)
    torch.testing.assert_close(y.full_tensor(), getattr(F, name)(x))
    y.full_tensor().sum().backward()
    getattr(F, name)(x).sum().backward()
    torch.testing.assert_close(d.grad.full_tensor(), x.grad)
    z = d.detach().clone()
    ops.silu_(z)
    torch.testing.assert_close(z.full_tensor(), F.silu(x.detach()))


@pytest.mark.parametrize("placement", [Replicate(), Shard(0), Shard(1)])
def test_gated(placement):
    a = torch.randn(8, 6, device="cuda", dtype=torch.float64, requires_grad=True)
    b = torch.randn(8, 6, device="cuda", dtype=torch.float64, requires_grad=True)
    da = distribute_tensor(a.detach(), mesh(), [placement]).requires_grad_()
    db = distribute_tensor(b.detach(), mesh(), [placement]).requires_grad_()
    out = ops.gated_silu(da, db)
    assert placements_of(out) == (placement,)
    torch.testing.assert_close(out.full_tensor(), F.silu(a) * b)
    out.full_tensor().square().sum().backward()
    (F.silu(a) * b).square().sum().backward()
    torch.testing.assert_close(da.grad.full_tensor(), a.grad)
    torch.testing.assert_close(db.grad.full_tensor(), b.grad)


def test_packed():
    ab = torch.randn(8, 12, device="cuda", dtype=torch.float64)
    for placement in (Replicate(), Shard(0)):
        d = distribute_tensor(ab, mesh(), [placement])
        out = ops.gated_silu_packed(d)
        assert placements_of(out) == (placement,)
        torch.testing.assert_close(out.full_tensor(), F.silu(ab[:, :6]) * ab[:, 6:])
    with pytest.raises(RuntimeError, match="packed"):
        ops.gated_silu_packed(distribute_tensor(ab, mesh(), [Shard(1)]))


@pytest.mark.parametrize("placement", [Replicate(), Shard(0), Shard(1)])
def test_gate_family(placement):
    """gated_swiglu_clamped: a and b sharded alike, forward and backward."""
    if not hasattr(ops, "gated_swiglu_clamped"):
        pytest.skip("this build has no cuact.gated_swiglu_clamped")

    def reference(p, q):
        x = p.clamp(max=2.0)
        return x * torch.sigmoid(1.5 * x) * (q.clamp(-2.0, 2.0) + 1)
    a = torch.randn(8, 6, device="cuda", dtype=torch.float64, requires_grad=True)
    b = torch.randn(8, 6, device="cuda", dtype=torch.float64, requires_grad=True)
    da = distribute_tensor(a.detach(), mesh(), [placement]).requires_grad_()
    db = distribute_tensor(b.detach(), mesh(), [placement]).requires_grad_()
    out = ops.gated_swiglu_clamped(da, db, 1.5, 2.0)
    assert placements_of(out) == (placement,)
    torch.testing.assert_close(out.full_tensor(), reference(a, b))
    out.full_tensor().square().sum().backward()
    reference(a, b).square().sum().backward()
    torch.testing.assert_close(da.grad.full_tensor(), a.grad)
    torch.testing.assert_close(db.grad.full_tensor(), b.grad)
    ab = torch.randn(8, 12, device="cuda", dtype=torch.float64)
    d = distribute_tensor(ab, mesh(), [Shard(0)])
    assert placements_of(ops.gated_swiglu_clamped_packed(d)) == (Shard(0),)
    with pytest.raises(RuntimeError, match="packed"):
        ops.gated_swiglu_clamped_packed(distribute_tensor(ab, mesh(), [Shard(1)]))


def test_bias():
    x = torch.randn(8, 6, device="cuda", dtype=torch.float64, requires_grad=True)
    bias = torch.randn(6, device="cuda", dtype=torch.float64, requires_grad=True)
    for xp, bp in ((Replicate(), Replicate()), (Shard(0), Replicate()), (Shard(1), Shard(0))):
        dx = distribute_tensor(x.detach(), mesh(), [xp]).requires_grad_()
        dbias = distribute_tensor(bias.detach(), mesh(), [bp]).requires_grad_()
        out = ops.bias_gelu(dx, dbias)
        assert placements_of(out) == (xp,)
        expected = F.gelu(x + bias)
        torch.testing.assert_close(out.full_tensor(), expected)
        out.full_tensor().sum().backward()
        x.grad = bias.grad = None
        expected.sum().backward()
        torch.testing.assert_close(dx.grad.full_tensor(), x.grad)
        torch.testing.assert_close(dbias.grad.full_tensor(), bias.grad)


def test_cast_and_quantize():
    x = torch.randn(8, 6, device="cuda")
    d = distribute_tensor(x, mesh(), [Shard(0)])
    y = ops.cast_silu(d, dtype=torch.bfloat16)
    assert y.dtype == torch.bfloat16 and placements_of(y) == (Shard(0),)
    torch.testing.assert_close(y.full_tensor(), ops.cast_silu(x, dtype=torch.bfloat16))
    scale = distribute_tensor(torch.ones((), device="cuda"), mesh(), [Replicate()])
    with pytest.raises(RuntimeError, match="amax"):
        ops.quantize_silu(d, scale=scale)
    q, amax = ops.quantize_silu(distribute_tensor(x, mesh(), [Replicate()]), scale=scale)
    q_ref, amax_ref = ops.quantize_silu(x, scale=torch.ones((), device="cuda"))
    assert torch.equal(q.full_tensor().view(torch.uint8), q_ref.view(torch.uint8))
    torch.testing.assert_close(amax.full_tensor(), amax_ref)
