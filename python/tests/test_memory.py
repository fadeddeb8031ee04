"""Autograd that saves less: memory.relu(x, save_mask=True) (1 bit saved per element) and
memory.gated(..., inplace_backward=True) (da over a, db over b; test_inplace_backward.py has the
gated ops' own in-place backward). Skipped (with the reason) without torch or a CUDA device."""
from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import cuact_torch  # noqa: E402
from cuact_torch import memory  # noqa: E402

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def rand(shape, dtype=torch.float32, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(shape, generator=g, device="cuda") * 2).to(dtype)


def saved_bytes(fn, x):
    """Bytes autograd saves for fn(x) (saved-tensor hooks)."""
    total = [0]

    def pack(t):
        total[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = fn(x)
    return y, total[0]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1,), (31,), (33, 65), (4096, 257), (0, 4)])
def test_relu_mask_matches_torch(shape, dtype):
    x = rand(shape, dtype)
    if x.numel() >= 3:  # the kink and a signed zero
        x.view(-1)[:3] = torch.tensor([0.0, -0.0, 1.0], dtype=dtype, device="cuda")
    x = x.requires_grad_()
    g = rand(shape, dtype, seed=1)
    y = memory.relu(x, save_mask=True)
    (dx,) = torch.autograd.grad(y, x, g)
    x2 = x.detach().clone().requires_grad_()
    y2 = torch.relu(x2)
    (dx2,) = torch.autograd.grad(y2, x2, g)
    assert torch.equal(y, y2)
    assert torch.equal(dx, dx2)


def test_relu_mask_layouts():
    x = rand((256, 96)).t().requires_grad_()  # not contiguous
    g = rand((256, 96), seed=1)[:, :].t().contiguous()
    y = memory.relu(x, save_mask=True)
    (dx,) = torch.autograd.grad(y, x, g)
    assert torch.equal(y, torch.relu(x.detach()))
    assert torch.equal(dx, torch.where(x.detach() > 0, g, torch.zeros_like(g)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_relu_mask_saves_one_bit(dtype):
    n = 1 << 20
    x = rand((n,), dtype).requires_grad_()
    _, masked = saved_bytes(lambda t: memory.relu(t, save_mask=True), x)
    _, plain = saved_bytes(torch.relu, x)
    assert masked == n // 8
    assert plain == n * x.element_size()


def test_relu_mask_no_grad_and_compile():
    x = rand((64, 64))
    assert torch.equal(memory.relu(x, save_mask=True), torch.relu(x))
    xr = x.clone().requires_grad_()
    fn = torch.compile(lambda t: memory.relu(t, save_mask=True) * 2.0)
    y = fn(xr)
    y.sum().backward()
    assert torch.equal(y, torch.relu(x) * 2.0)
    assert torch.equal(xr.grad, (x > 0).to(x.dtype) * 2.0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", [n for n in ("silu", "gelu", "relu") if n in cuact_torch.FUSED])
def test_gated_inplace_backward(name, dtype):
    a0, b0 = rand((128, 512), dtype).requires_grad_(), rand((128, 512), dtype, 1).requires_grad_()
    g = rand((128, 512), dtype, 2)
    out = memory.gated(a0 * 1, b0 * 1, name, inplace_backward=True)  # a, b: dead intermediates
    out.backward(g)
    a1, b1 = a0.detach().clone().requires_grad_(), b0.detach().clone().requires_grad_()
    ref = getattr(torch.ops.cuact, "gated_" + name)(a1, b1)
    ref.backward(g)
    assert torch.equal(out, ref)
    assert torch.equal(a0.grad, a1.grad)
    assert torch.equal(b0.grad, b1.grad)


def test_gated_inplace_backward_allocates_less():
    name = "silu" if "silu" in cuact_torch.FUSED else cuact_torch.FUSED[0]
    shape, dtype = (4096, 4096), torch.bfloat16
    peaks = {}
    for inplace in (False, True):
        w = rand((shape[1], shape[1]), dtype, 3).requires_grad_()
        x = rand(shape, dtype, 4)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        a, b = x @ w, x @ w.t()
        out = memory.gated(a, b, name, inplace_backward=inplace)
        del a, b
        with memory.inplace_backward_mode("auto" if inplace else "never"):
            out.backward(torch.ones_like(out))
        torch.cuda.synchronize()
        peaks[inplace] = torch.cuda.max_memory_allocated() - base
        del out, w, x
    assert peaks[True] < peaks[False], peaks
