"""torch.ops.cuact's gate families (include/cuact/torch_fused.cuh: CUACT_TORCH_GATE_OPS): gpt-oss's
clamped SwiGLU gated_swiglu_clamped, its packed form (both halves' orders and the interleaved
pairs of cuact_torch.functional), the backwards (in place too) against float64 PyTorch autograd of
gpt-oss's formula; layouts and fakes; opcheck; gradcheck in float64; torch.compile fullgraph;
errors. Skipped (with the reason) without torch or a CUDA device.

Tolerances: forward, relative 32 eps in float32 (sigmoid within 4 ulp, alpha * x rounded once
before the exponential: its error grows with |alpha x| <= alpha * limit, then three products) and
4 eps in float16/bfloat16 (bf16: the sigmoid at bf16 accuracy, then one rounding), 1e-12 in
float64, plus the dtype's smallest
normal times the other factors; gradients, 16 eps of the dtype (4 in 16-bit) times the upstream
scale |dy * (clamp(b) + 1)| or |dy|, 1e-12 in float64.
"""
from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import cuact_torch  # noqa: E402
import cuact_torch.functional as CF  # noqa: E402

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
ops = torch.ops.cuact
NAME = "gated_swiglu_clamped"
PARAMS = [(1.702, 7.0), (1.0, 2.5)]

if not hasattr(ops, NAME):
    pytest.skip(f"this build has no cuact.{NAME}", allow_module_level=True)


def op(suffix=""):
    return getattr(ops, NAME + suffix)


def reference(a, b, alpha=1.702, limit=7.0):
    """gpt-oss's formula (transformers' GptOssExperts)."""
    gate = a.clamp(min=None, max=limit)
    up = b.clamp(min=-limit, max=limit)
    return (up + 1) * (gate * torch.sigmoid(gate * alpha))


def inputs(shape, dtype, seed, limit=7.0, specials=True):
    """randn * 6 in `dtype` with its first elements NaN, +-inf, +-0, +-limit, values straddling the
    clamp, tiny and large values."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(shape, generator=g, device="cuda", dtype=torch.float64) * 6
    if specials:
        s = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, limit, -limit,
                          limit * 1.01, -limit * 1.01, limit * 0.99, -limit * 0.99, 1e-30, -1e-30,
                          -1.0, 40.0, -40.0], dtype=torch.float64, device="cuda")
        k = min(s.numel(), x.numel())  # sizes below the specials' count take their first k
        x.view(-1)[:k] = s[:k]
    return x.to(dtype)


def eps(dtype):
    return torch.finfo(dtype).eps


def assert_within(got, want, bound, what):
    """got == want (NaN with NaN, same infinity) or |got - want| <= bound, elementwise."""
    g, w = got.double(), want.double()
    same = (g == w) | (torch.isnan(g) & torch.isnan(w))
    within = ((g - w).abs() <= bound) & torch.isfinite(g) & torch.isfinite(w)
    bad = (~(same | within)).nonzero()
    assert bad.numel() == 0, (f"{what}: {bad.shape[0]} elements off, first at {tuple(bad[0].tolist())}: "
                              f"got {g[tuple(bad[0])].item()!r}, want {w[tuple(bad[0])].item()!r}")


def forward_bound(want, scale, dtype):
    rel = {torch.float32: 32 * eps(dtype), torch.float64: 1e-12}.get(dtype, 4 * eps(dtype))
    return rel * want.abs() + torch.finfo(dtype).tiny * (1 + scale.double().abs())


def gradient_bound(scale, dtype):
    rel = {torch.float32: 16 * eps(dtype), torch.float64: 1e-12}.get(dtype, 4 * eps(dtype))
    return rel * scale.double().abs().nan_to_num(0.0, 0.0, 0.0) + torch.finfo(dtype).tiny


def reference_grads(a, b, dy, alpha, limit):
    ad, bd = a.double().requires_grad_(), b.double().requires_grad_()
    return torch.autograd.grad(reference(ad, bd, alpha, limit), (ad, bd), dy.double())


@pytest.mark.parametrize("params", PARAMS, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_forward(dtype, params):
    alpha, limit = params
    a, b = inputs((257, 40), dtype, 1, limit), inputs((257, 40), dtype, 2, limit)
    want = reference(a.double(), b.double(), alpha, limit)
    scale = (b.double().clamp(-limit, limit) + 1) * 8
    bound = forward_bound(want, scale, dtype)
    assert_within(op()(a, b, alpha, limit), want, bound, NAME)
    assert_within(op()(a, b, alpha=alpha, limit=limit), want, bound, NAME + " (keywords)")
    assert_within(op("_packed")(torch.cat([a, b], -1), alpha, limit), want, bound, NAME + "_packed")
    assert_within(op("_packed")(torch.cat([b, a], -1), alpha, limit, activate_first=False), want, bound,
                  NAME + "_packed(activate_first=False)")
    interleaved = torch.stack([a, b], dim=-1).reshape(257, 80)  # gpt-oss's gate_up: a = [..., ::2]
    assert_within(CF.swiglu_clamped_packed(interleaved, alpha, limit, interleaved=True), want, bound,
                  "swiglu_clamped_packed(interleaved=True)")
    assert_within(CF.swiglu_clamped(a, b, alpha, limit), want, bound, "functional.swiglu_clamped")
    if params == PARAMS[0]:
        assert_within(op()(a, b), want, bound, NAME + " (defaults)")


@pytest.mark.parametrize("params", PARAMS, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_backward(dtype, params):
    alpha, limit = params
    shape = (129, 48)
    a, b = inputs(shape, dtype, 5, limit), inputs(shape, dtype, 6, limit)
    dy = inputs(shape, dtype, 7, limit, specials=False) / 6
    da_want, db_want = reference_grads(a, b, dy, alpha, limit)
    up = b.double().clamp(-limit, limit) + 1
    da_bound = gradient_bound(dy.double() * up * 2, dtype)
    db_bound = gradient_bound(dy.double() * limit, dtype)
    da, db = op("_backward")(dy, a, b, alpha, limit)
    assert_within(da, da_want, da_bound, "da")
    assert_within(db, db_want, db_bound, "db")
    # the clamps' selections: exactly 0 outside the range and for NaN inputs
    assert torch.all(da[(a > limit) | torch.isnan(a)] == 0)
    assert torch.all(db[(b.abs() > limit) | torch.isnan(b)] == 0)
    for first in (True, False):
        ab = torch.cat([a, b] if first else [b, a], dim=-1)
        dab = op("_packed_backward")(dy, ab, alpha, limit, activate_first=first)
        da_p, db_p = (dab[:, :48], dab[:, 48:]) if first else (dab[:, 48:], dab[:, :48])
        assert_within(da_p, da, da_bound, "packed da")
        assert_within(db_p, db, db_bound, "packed db")
    # in place: da over a, db over b
    a_in, b_in = a.clone(), b.clone()
    assert op("_backward_")(dy, a_in, b_in, alpha, limit) is None
    assert_within(a_in, da, da_bound, "in-place da")
    assert_within(b_in, db, db_bound, "in-place db")
    # autograd runs the backward op
    a_g, b_g = a.clone().requires_grad_(), b.clone().requires_grad_()
    ga, gb = torch.autograd.grad(op()(a_g, b_g, alpha, limit), (a_g, b_g), dy)
    assert torch.equal(ga.nan_to_num(), da.nan_to_num()) and torch.equal(gb.nan_to_num(), db.nan_to_num())
    ab_g = torch.cat([a, b], -1).requires_grad_()
    (gab,) = torch.autograd.grad(op("_packed")(ab_g, alpha, limit), (ab_g,), dy)
    assert torch.equal(gab.nan_to_num(), op("_packed_backward")(dy, ab_g.detach(), alpha, limit).nan_to_num())


def test_memory_inplace_backward():
    """cuact_torch.memory.gated with a gate family: da over a, db over b, the op's gradients."""
    a = torch.randn(64, 40, device="cuda", dtype=torch.float32) * 4
    b = torch.randn(64, 40, device="cuda", dtype=torch.float32) * 4
    dy = torch.randn(64, 40, device="cuda")
    want = op("_backward")(dy, a, b, 1.0, 2.5)
    a_in, b_in = (a * 1.0).requires_grad_(), (b * 1.0).requires_grad_()
    h_a, h_b = a_in * 1.0, b_in * 1.0  # intermediates, dead after the backward
    out = cuact_torch.memory.gated(h_a, h_b, "swiglu_clamped", inplace_backward=True, params=(1.0, 2.5))
    torch.testing.assert_close(out, reference(a, b, 1.0, 2.5), rtol=1e-5, atol=1e-6)
    ga, gb = torch.autograd.grad(out, (a_in, b_in), dy)
    assert torch.equal(ga, want[0]) and torch.equal(gb, want[1])


def test_sizes_and_alignment():
    """Sizes straddling the vector widths, offset (misaligned) views, 16-bit and float32."""
    for dtype in (torch.bfloat16, torch.float32):
        for n in (1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 1023, 1025):
            for offset in (0, 1, 3):
                base_a = inputs((n + offset,), dtype, 20 + n)
                base_b = inputs((n + offset,), dtype, 40 + n)
                a, b = base_a[offset:], base_b[offset:]
                want = reference(a.double(), b.double())
                scale = (b.double().clamp(-7, 7) + 1) * 8
                assert_within(op()(a, b), want, forward_bound(want, scale, dtype), f"n={n} offset={offset}")
        for rows, cols in ((3, 1), (5, 7), (2, 8), (4, 9), (3, 33)):
            ab = inputs((rows, 2 * cols + 1), dtype, 60 + cols)[:, 1:]  # a misaligned row start
            want = reference(ab[:, :cols].double(), ab[:, cols:].double())
            scale = (ab[:, cols:].double().clamp(-7, 7) + 1) * 8
            assert_within(op("_packed")(ab), want, forward_bound(want, scale, dtype), f"packed {rows}x{cols}")


def test_layouts_and_fakes():
    from torch._subclasses.fake_tensor import FakeTensorMode
    base_a, base_b = torch.randn(6, 10, device="cuda"), torch.randn(6, 10, device="cuda")
    cases = {  # (a, b, result keeps a's strides)
        "contiguous": (base_a, base_b, True),
        "transposed": (base_a.t(), base_b.t(), True),
        "mixed": (base_a.t(), base_b.t().contiguous(), False),
        "sliced": (base_a[:, ::2], base_b[:, ::2], False),
        "zero_size": (torch.randn(0, 4, device="cuda"), torch.randn(0, 4, device="cuda"), True),
    }
    for layout, (a, b, kept) in cases.items():
        y = op()(a, b)
        torch.testing.assert_close(y, reference(a, b))
        assert y.stride() == (a.stride() if kept else a.contiguous().stride()), layout
        dy = torch.ones_like(a)  # made outside the fake mode, which refuses real tensors
        da, db = op("_backward")(dy, a, b)
        with FakeTensorMode() as mode:
            fa, fb, fdy = mode.from_tensor(a), mode.from_tensor(b), mode.from_tensor(dy)
            fake = op()(fa, fb)
            fda, fdb = op("_backward")(fdy, fa, fb)
        assert fake.shape == y.shape and fake.stride() == y.stride(), (layout, fake.stride(), y.stride())
        assert fda.stride() == da.stride() and fdb.stride() == db.stride(), layout
    ab = torch.randn(10, 3, 8, device="cuda").transpose(0, 1)  # [3, 10, 8], not contiguous
    y = op("_packed")(ab)
    assert y.shape == (3, 10, 4) and y.is_contiguous()
    torch.testing.assert_close(y, reference(ab[..., :4], ab[..., 4:]))
    with FakeTensorMode() as mode:
        assert op("_packed")(mode.from_tensor(ab)).shape == (3, 10, 4)
        assert op("_packed_backward")(mode.from_tensor(y), mode.from_tensor(ab)).shape == ab.shape
    for shape in [(0, 8), (4, 0)]:
        assert op("_packed")(torch.randn(shape, device="cuda")).shape == (shape[0], shape[1] // 2)


def opcheck_samples():
    def t(*shape, grad=False):
        return torch.randn(*shape, device="cuda", dtype=torch.float64 if grad else torch.float32).requires_grad_(grad)
    samples = []
    for grad in (False, True):
        samples.append(("", (t(4, 8, grad=grad), t(4, 8, grad=grad)), {}, grad))
        samples.append(("", (t(4, 8, grad=grad), t(4, 8, grad=grad), 1.5, 3.0), {}, grad))
        samples.append(("_packed", (t(4, 16, grad=grad),), {}, grad))
        samples.append(("_packed", (t(2, 3, 16, grad=grad),), {"activate_first": False, "limit": 2.0}, grad))
    samples.append(("", (t(8, 4).t(), t(8, 4).t()), {}, False))
    samples.append(("", (t(0, 3), t(0, 3)), {}, False))
    samples.append(("_backward", (t(4, 8), t(4, 8), t(4, 8)), {}, False))
    samples.append(("_packed_backward", (t(4, 8), t(4, 16)), {"activate_first": False}, False))
    return samples


def test_opcheck():
    for suffix, args, kwargs, grad in opcheck_samples():
        utils = ["test_schema", "test_faketensor", "test_aot_dispatch_dynamic"]
        if grad:
            utils.append("test_autograd_registration")
        torch.library.opcheck(op(suffix).default, args, kwargs, test_utils=utils)


def test_gradcheck_float64():
    def away_from_kinks(t):  # the clamps' bounds at +-2.5
        return torch.where((t.abs() - 2.5).abs() < 5e-2, t + 1e-1, t)
    g = torch.Generator(device="cuda").manual_seed(11)
    a, b = (away_from_kinks(torch.randn(6, 10, device="cuda", dtype=torch.float64, generator=g) * 2)
            for _ in range(2))
    a.requires_grad_()
    b.requires_grad_()
    assert torch.autograd.gradcheck(lambda p, q: op()(p, q, 1.0, 2.5), (a, b))
    for first in (True, False):
        assert torch.autograd.gradcheck(
            lambda p, q: op("_packed")(torch.cat([p, q], -1), 1.0, 2.5, activate_first=first), (a, b))


def test_compile_matches_eager():
    """A gpt-oss-style expert (interleaved gate_up) and separate a, b; fullgraph, forward and
    backward; in auto mode the forward and the backwards decompose."""
    modes = cuact_torch.decomposed_ops()
    assert modes.get(NAME) == "fuse" and modes.get(NAME + "_backward") == "fuse", modes
    assert modes.get(NAME + "_packed_backward") == "fuse", modes
    torch._dynamo.reset()
    x = torch.randn(32, 16, device="cuda", requires_grad=True)
    w_in = torch.randn(16, 48, device="cuda", requires_grad=True)

    def expert(t):
        return CF.swiglu_clamped_packed(t @ w_in, interleaved=True)

    def separate(t):
        h = t @ w_in
        return op()(h[:, :24], h[:, 24:], 1.702, 7.0)

    def packed(t):
        return op("_packed")(t @ w_in, limit=3.0)

    for fn in (expert, separate, packed):
        eager = fn(x)
        compiled = torch.compile(fn, fullgraph=True)(x)
        torch.testing.assert_close(compiled, eager, rtol=1e-5, atol=1e-5)
        dy = torch.randn_like(eager)
        want = torch.autograd.grad(eager, (x, w_in), dy)
        got = torch.autograd.grad(compiled, (x, w_in), dy)
        for gr, w in zip(got, want):
            torch.testing.assert_close(gr, w, rtol=1e-5, atol=1e-5)


def test_errors():
    a = torch.randn(4, 6, device="cuda")
    with pytest.raises(RuntimeError, match=NAME):
        op()(a, torch.randn(4, 5, device="cuda"))
    with pytest.raises(RuntimeError, match=NAME):
        op()(a, a.double())
    with pytest.raises(RuntimeError, match="even"):
        op("_packed")(torch.randn(4, 7, device="cuda"))
    with pytest.raises(RuntimeError, match="dense"):
        op("_backward_")(a[:, ::2].contiguous(), a[:, ::2], a[:, ::2].clone())
    with pytest.raises(RuntimeError):
        op()(a.cpu(), a.cpu())
    with pytest.raises(RuntimeError):
        op()(a.int(), a.int())
    with pytest.raises(RuntimeError, match="even"):
        CF.swiglu_clamped_packed(torch.randn(4, 7, device="cuda"), interleaved=True)
    # CPU tensors: functional falls back to torch's formula
    c = torch.randn(4, 6)
    torch.testing.assert_close(CF.swiglu_clamped(c, c), reference(c, c))
