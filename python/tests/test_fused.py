"""torch.ops.cuact's fused ops (include/cuact/torch_fused.cuh): gated_NAME, gated_NAME_packed,
bias_NAME, cast_NAME, quantize_NAME and the backwards, against float64 PyTorch; layouts and the
fakes; opcheck; gradcheck; torch.compile; errors. Skipped (with the reason) without torch or a CUDA device.

Tolerances (the C++ tests, tests/gpu_fused.cu and tests/gpu_accuracy.cu, check the kernels'
contracts element by element against long double; these check the operators' wiring with bounds a
wrong operand, half or dtype cannot meet): forward, relative 8 eps in float32 and 2 eps in
float16/bfloat16 (the activation within an ulp of the dtype, the product or the result rounded
once), plus the dtype's smallest normal times the other factor (16-bit results below the normal
range); gradients, 4 eps of the dtype (8 in float32) times the upstream scale |dy * b| or |dy|;
dbias, against the float64 sum of the dx the op returned, rows * eps(float32) * sum |dx| plus an
ulp of the dtype. cast: the bound of the coarser of x's compute type and the result's dtype.
quantize: an fp8 ulp of the saturated float64 result (the activation at fp8 accuracy, rounded
once); amax within 1e-2 relative of the float64 max |act(x)|. float64: 1e-12 relative, forward and gradients: the float64 references' own
error, amplified by the GELUs' condition at large |x|, reaches 1e-13 (erfc at x / sqrt 2 has
condition x^2: 150 ulp at x = -30; the tanh form's exp(-2u), u ~ 0.036 x^3, more).
"""
from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import cuact_torch  # noqa: E402
from cuact_torch.reference import EXACT_FLOAT64, REFERENCE  # noqa: E402

FUSED = cuact_torch.FUSED
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
ops = torch.ops.cuact


def op(qualified):
    return getattr(ops, qualified)


def act(name, x):
    """The activation in PyTorch; in float64, its exact form where PyTorch's cancels (GELU)."""
    if x.dtype == torch.float64 and name in EXACT_FLOAT64:
        return EXACT_FLOAT64[name](x)
    return REFERENCE[name][0](x)


def inputs(shape, dtype, seed, specials=True, scale=3.0):
    """randn * scale in `dtype`, its first elements NaN, +-inf, +-0, tiny and large values."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(shape, generator=g, device="cuda", dtype=torch.float64) * scale
    if specials:
        s = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-30, -1e-30, 30.0,
                          -30.0, 0.5, -0.75], dtype=torch.float64, device="cuda")
        x.view(-1)[: s.numel()] = s
    return x.to(dtype)


def compute_dtype(dtype):
    return torch.float64 if dtype == torch.float64 else torch.float32


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


FLOAT64_REL = 1e-12  # see the file comment


def forward_bound(want, factor, dtype):
    rel = {torch.float16: 2 * eps(dtype), torch.bfloat16: 2 * eps(dtype), torch.float32: 8 * eps(dtype),
           torch.float64: FLOAT64_REL}[dtype]
    return rel * want.abs() + torch.finfo(dtype).tiny * (1 + factor.double().abs())


def gradient_bound(scale, dtype):
    rel = {torch.float32: 8 * eps(dtype), torch.float64: FLOAT64_REL}.get(dtype, 4 * eps(dtype))
    return rel * scale.double().abs() + torch.finfo(dtype).tiny


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", FUSED)
def test_gated_forward(name, dtype):
    a, b = inputs((257, 40), dtype, 1), inputs((257, 40), dtype, 2, specials=False)
    want = act(name, a.double()) * b.double()
    assert_within(op("gated_" + name)(a, b), want, forward_bound(want, b, dtype), f"gated_{name}")
    ab = torch.cat([a, b], dim=-1)  # [257, 80]: a first
    assert_within(op("gated_" + name + "_packed")(ab), want, forward_bound(want, b, dtype),
                  f"gated_{name}_packed")
    ba = torch.cat([b, a], dim=-1)  # torch.nn.GLU's order: the activated half second
    assert_within(op("gated_" + name + "_packed")(ba, activate_first=False), want,
                  forward_bound(want, b, dtype), f"gated_{name}_packed(activate_first=False)")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", FUSED)
def test_bias_forward(name, dtype):
    x, bias = inputs((3, 65, 24), dtype, 3), inputs((24,), dtype, 4, specials=False)
    # the sum in the compute type, not rounded to dtype first (torch_fused.cuh)
    c = compute_dtype(dtype)
    want = act(name, (x.to(c) + bias.to(c)).double())
    assert_within(op("bias_" + name)(x, bias), want, forward_bound(want, want, dtype), f"bias_{name}")


def gated_reference_grads(name, a, b, dy):
    ad, bd = a.double().requires_grad_(), b.double().requires_grad_()
    return torch.autograd.grad(act(name, ad) * bd, (ad, bd), dy.double())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", FUSED)
def test_gated_backward(name, dtype):
    if not hasattr(ops, f"gated_{name}_backward"):
        pytest.skip(f"{name} has no derivative")
    shape = (129, 48)
    a, b = inputs(shape, dtype, 5, specials=False), inputs(shape, dtype, 6, specials=False)
    dy = inputs(shape, dtype, 7, specials=False, scale=1.0)
    da_want, db_want = gated_reference_grads(name, a, b, dy)
    da, db = op("gated_" + name + "_backward")(dy, a, b)
    assert_within(da, da_want, gradient_bound(dy.double() * b.double(), dtype), "da")
    assert_within(db, db_want, gradient_bound(dy.double() * act(name, a.double()), dtype), "db")
    for first in (True, False):
        ab = torch.cat([a, b] if first else [b, a], dim=-1)
        dab = op("gated_" + name + "_packed_backward")(dy, ab, activate_first=first)
        da_p, db_p = (dab[:, :48], dab[:, 48:]) if first else (dab[:, 48:], dab[:, :48])
        # the same per-element math on the row walk: equal up to the compiler's contractions
        assert_within(da_p, da, gradient_bound(dy.double() * b.double(), dtype), "packed da")
        assert_within(db_p, db, gradient_bound(dy.double() * act(name, a.double()), dtype), "packed db")
    # autograd runs the backward op
    a_g, b_g = a.clone().requires_grad_(), b.clone().requires_grad_()
    ga, gb = torch.autograd.grad(op("gated_" + name)(a_g, b_g), (a_g, b_g), dy)
    assert torch.equal(ga, da) and torch.equal(gb, db)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", FUSED)
def test_bias_backward(name, dtype):
    if not hasattr(ops, f"bias_{name}_backward"):
        pytest.skip(f"{name} has no derivative")
    rows, cols = 300, 40
    x, bias = inputs((rows, cols), dtype, 8, specials=False), inputs((cols,), dtype, 9, specials=False)
    dy = inputs((rows, cols), dtype, 10, specials=False, scale=1.0)
    c = compute_dtype(dtype)
    s = (x.to(c) + bias.to(c)).double().requires_grad_()
    (dx_want,) = torch.autograd.grad(act(name, s), s, dy.double())
    dx, dbias = op("bias_" + name + "_backward")(dy, x, bias)
    assert dbias.dtype == dtype and dbias.shape == (cols,)
    assert_within(dx, dx_want, gradient_bound(dy, dtype), "dx")
    summed = dx.double().sum(0)  # dbias sums the stored dx, in float (double for float64)
    bound = rows * eps(c) * dx.double().abs().sum(0) + eps(dtype) * summed.abs() + torch.finfo(dtype).tiny
    assert_within(dbias, summed, bound, "dbias")
    x_g, b_g = x.clone().requires_grad_(), bias.clone().requires_grad_()
    gx, gb = torch.autograd.grad(op("bias_" + name)(x_g, b_g), (x_g, b_g), dy)
    assert torch.equal(gx, dx) and torch.equal(gb, dbias)
    # deterministic: the same inputs give bit-identical dbias
    assert torch.equal(op("bias_" + name + "_backward")(dy, x, bias)[1], dbias)


def cast_bound(want, dtype_in, dtype_out):
    """The activation computes in x's compute type and is rounded once to dtype_out
    (fused.cuh: forward_cast): the coarser of the two sets the bound."""
    coarser = max(compute_dtype(dtype_in), dtype_out, key=eps)
    return forward_bound(want, torch.zeros_like(want), coarser)


@pytest.mark.parametrize("dtype_out", DTYPES, ids=str)
@pytest.mark.parametrize("dtype_in", DTYPES, ids=str)
@pytest.mark.parametrize("name", FUSED)
def test_cast_forward(name, dtype_in, dtype_out):
    x = inputs((129, 33), dtype_in, 21)
    got = op("cast_" + name)(x, dtype=dtype_out)
    assert got.dtype == dtype_out and got.shape == x.shape
    want = act(name, x.double())
    assert_within(got, want, cast_bound(want, dtype_in, dtype_out), f"cast_{name} {dtype_in} -> {dtype_out}")


FP8_DTYPES = [torch.float8_e4m3fn, torch.float8_e5m2]


def quantize_reference(name, x, scale, dtype):
    """(saturate(act(x) * scale) in float64, max |act(x)| over the non-NaN values)."""
    y = act(name, x.double())
    largest = torch.finfo(dtype).max
    return (y * scale).clamp(-largest, largest), y[~torch.isnan(y)].abs().max()


@pytest.mark.parametrize("dtype_out", FP8_DTYPES, ids=str)
@pytest.mark.parametrize("dtype_in", DTYPES, ids=str)
@pytest.mark.parametrize("name", FUSED)
def test_quantize(name, dtype_in, dtype_out):
    x = inputs((257, 24), dtype_in, 22, scale=40.0)  # past e4m3's 448 once scaled: saturates
    for scale in (torch.tensor(4.0, device="cuda"), torch.tensor([0.375], device="cuda")):
        q, amax = op("quantize_" + name)(x, scale=scale, dtype=dtype_out)
        assert q.dtype == dtype_out and q.shape == x.shape
        assert amax.dtype == torch.float32 and amax.shape == ()
        want, want_amax = quantize_reference(name, x, scale.item(), dtype_out)
        fp8 = torch.finfo(dtype_out)
        # the activation at fp8 accuracy, rounded once: an fp8 ulp (subnormals: their spacing)
        assert_within(q, want, fp8.eps * want.abs() + fp8.tiny * fp8.eps, f"quantize_{name} {dtype_in} -> {dtype_out}")
        got_amax, exact_amax = amax.item(), want_amax.item()  # inf where act(inf) is
        assert got_amax == exact_amax or abs(got_amax - exact_amax) <= 1e-2 * exact_amax, (got_amax, exact_amax)
    q_default, _ = op("quantize_" + name)(x, scale=torch.tensor(4.0, device="cuda"))
    assert q_default.dtype == torch.float8_e4m3fn


@pytest.mark.parametrize("dtype_out", DTYPES, ids=str)
@pytest.mark.parametrize("name", FUSED)
def test_cast_backward(name, dtype_out):
    if not hasattr(ops, f"cast_{name}_backward"):
        pytest.skip(f"{name} has no derivative")
    for dtype_in in DTYPES:
        x = inputs((65, 40), dtype_in, 23, specials=False).requires_grad_()
        y = op("cast_" + name)(x, dtype=dtype_out)
        dy = inputs(y.shape, dtype_out, 24, specials=False, scale=1.0)
        (dx,) = torch.autograd.grad(y, x, dy)
        assert dx.dtype == dtype_in
        # the gradient of .to(dtype): dy taken to x's dtype, then the activation's backward
        upstream = dy.to(dtype_in)
        xd = x.detach().double().requires_grad_()
        (want,) = torch.autograd.grad(act(name, xd), xd, upstream.double())
        assert_within(dx, want, gradient_bound(upstream, dtype_in), f"cast_{name} backward {dtype_in} <- {dtype_out}")
        direct = op("cast_" + name + "_backward")(dy, x.detach())
        assert torch.equal(direct, dx)


def test_cast_quantize_layouts_and_errors():
    from torch._subclasses.fake_tensor import FakeTensorMode
    name = FUSED[0]
    cast, quantize = op("cast_" + name), op("quantize_" + name)
    scale = torch.ones(1, device="cuda")
    base = torch.randn(6, 10, device="cuda")
    for layout, x, kept in [("contiguous", base, True), ("transposed", base.t(), True),
                            ("sliced", base[:, ::2], False), ("empty", torch.randn(0, 3, device="cuda"), True)]:
        want_stride = x.stride() if kept else x.contiguous().stride()
        y = cast(x, dtype=torch.bfloat16)
        q, amax = quantize(x, scale=scale)
        assert y.stride() == want_stride and q.stride() == want_stride, layout
        torch.testing.assert_close(y.float(), act(name, x), atol=0, rtol=2 * eps(torch.bfloat16))
        if x.numel() == 0:
            assert amax.item() == 0.0
        with FakeTensorMode() as mode:
            fx = mode.from_tensor(x)
            fake_y = cast(fx, dtype=torch.bfloat16)
            fake_q, fake_amax = quantize(fx, scale=mode.from_tensor(scale), dtype=torch.float8_e5m2)
        assert fake_y.stride() == y.stride() and fake_y.dtype == torch.bfloat16, layout
        assert fake_q.stride() == q.stride() and fake_q.dtype == torch.float8_e5m2, layout
        assert fake_amax.shape == () and fake_amax.dtype == torch.float32
    # cast_backward: grad of another dtype is converted into x's layout, so dx keeps x's strides
    if hasattr(ops, f"cast_{name}_backward"):
        x = base.t()
        dx = op("cast_" + name + "_backward")(torch.randn(10, 6, device="cuda", dtype=torch.float16), x)
        assert dx.dtype == x.dtype and dx.stride() == x.stride()
    # quantize's results never require grad
    xg = torch.randn(4, 8, device="cuda", requires_grad=True)
    q, amax = quantize(xg, scale=scale)
    assert not q.requires_grad and not amax.requires_grad
    x = torch.randn(4, 6, device="cuda")
    with pytest.raises(RuntimeError, match="expected dtype float32, float64, float16 or bfloat16"):
        cast(x, dtype=torch.float8_e4m3fn)
    with pytest.raises(RuntimeError, match="expected dtype float32, float64, float16 or bfloat16"):
        cast(x, dtype=torch.int32)
    with pytest.raises(RuntimeError, match="unsupported dtype"):
        cast(x.int(), dtype=torch.float32)
    with pytest.raises(RuntimeError, match="expected a CUDA tensor"):
        cast(x.cpu(), dtype=torch.float16)
    with pytest.raises(RuntimeError, match="expected dtype float8_e4m3fn or float8_e5m2"):
        quantize(x, scale=scale, dtype=torch.float16)
    with pytest.raises(RuntimeError, match="float32 tensor of one element"):
        quantize(x, scale=torch.ones(2, device="cuda"))
    with pytest.raises(RuntimeError, match="float32 tensor of one element"):
        quantize(x, scale=torch.ones(1, device="cuda", dtype=torch.float64))
    with pytest.raises(RuntimeError, match="same device"):
        quantize(x, scale=torch.ones(1))
    with pytest.raises(RuntimeError, match="expected a CUDA tensor"):
        quantize(x.cpu(), scale=torch.ones(1))


def test_layouts_and_fakes():
    from torch._subclasses.fake_tensor import FakeTensorMode
    name = FUSED[0]
    base_a, base_b = torch.randn(6, 10, device="cuda"), torch.randn(6, 10, device="cuda")
    cases = {  # (a, b, result keeps a's strides)
        "contiguous": (base_a, base_b, True),
        "transposed": (base_a.t(), base_b.t(), True),  # dense, equal strides: kept
        "mixed": (base_a.t(), base_b.t().contiguous(), False),  # strides differ: contiguous
        "sliced": (base_a[:, ::2], base_b[:, ::2], False),  # not dense: contiguous
        "zero_size": (torch.randn(0, 4, device="cuda"), torch.randn(0, 4, device="cuda"), True),
    }
    for layout, (a, b, kept) in cases.items():
        y = op("gated_" + name)(a, b)
        torch.testing.assert_close(y, act(name, a) * b)
        assert y.stride() == (a.stride() if kept else a.contiguous().stride()), layout
        with FakeTensorMode() as mode:
            fake = op("gated_" + name)(mode.from_tensor(a), mode.from_tensor(b))
        assert fake.shape == y.shape and fake.stride() == y.stride(), (layout, fake.stride(), y.stride())
    # packed and bias: any layout in, contiguous out; leading dimensions kept
    ab = torch.randn(10, 3, 8, device="cuda").transpose(0, 1)  # [3, 10, 8], not contiguous
    y = op("gated_" + name + "_packed")(ab)
    assert y.shape == (3, 10, 4) and y.is_contiguous()
    torch.testing.assert_close(y, act(name, ab[..., :4]) * ab[..., 4:])
    x, bias = torch.randn(5, 2, 7, device="cuda").transpose(0, 2), torch.randn(5, device="cuda")
    y = op("bias_" + name)(x, bias)
    assert y.shape == x.shape and y.is_contiguous()
    torch.testing.assert_close(y, act(name, x + bias))
    with FakeTensorMode() as mode:
        assert op("gated_" + name + "_packed")(mode.from_tensor(ab)).shape == (3, 10, 4)
        assert op("bias_" + name)(mode.from_tensor(x), mode.from_tensor(bias)).stride() == y.stride()
    # empty: no rows, no columns
    for shape in [(0, 8), (4, 0)]:
        assert op("gated_" + name + "_packed")(torch.randn(shape, device="cuda")).shape == (shape[0], shape[1] // 2)
        xb = torch.randn(shape, device="cuda")
        assert op("bias_" + name)(xb, torch.randn(shape[1], device="cuda")).shape == shape
        if hasattr(ops, f"bias_{name}_backward"):
            dx, dbias = op("bias_" + name + "_backward")(xb, xb, torch.randn(shape[1], device="cuda"))
            assert dx.shape == shape and torch.equal(dbias, torch.zeros(shape[1], device="cuda"))


def opcheck_samples(name):
    def t(*shape, grad=False):
        return torch.randn(*shape, device="cuda", dtype=torch.float64 if grad else torch.float32).requires_grad_(grad)
    samples = []  # (op, args, kwargs, requires grad)
    for grad in (False, True):
        samples.append((f"gated_{name}", (t(4, 8, grad=grad), t(4, 8, grad=grad)), {}, grad))
        samples.append((f"gated_{name}_packed", (t(4, 16, grad=grad),), {}, grad))
        samples.append((f"gated_{name}_packed", (t(2, 3, 16, grad=grad),), {"activate_first": False}, grad))
        samples.append((f"bias_{name}", (t(4, 8, grad=grad), t(8, grad=grad)), {}, grad))
    samples.append((f"gated_{name}", (t(8, 4).t(), t(8, 4).t()), {}, False))
    samples.append((f"gated_{name}", (t(0, 3), t(0, 3)), {}, False))
    samples.append((f"bias_{name}", (t(0, 3), t(3)), {}, False))
    for grad in (False, True):
        samples.append((f"cast_{name}", (t(4, 8, grad=grad),), {"dtype": torch.float32}, grad))
    samples.append((f"cast_{name}", (t(8, 4).t(),), {"dtype": torch.bfloat16}, False))
    samples.append((f"quantize_{name}", (t(4, 8),), {"scale": torch.ones(1, device="cuda")}, False))
    samples.append((f"quantize_{name}", (t(8, 4).t(),),
                    {"scale": torch.tensor(2.0, device="cuda"), "dtype": torch.float8_e5m2}, False))
    if hasattr(ops, f"gated_{name}_backward"):
        samples.append((f"cast_{name}_backward", (t(4, 8).half(), t(4, 8)), {}, False))
        samples.append((f"gated_{name}_backward", (t(4, 8), t(4, 8), t(4, 8)), {}, False))
        samples.append((f"gated_{name}_packed_backward", (t(4, 8), t(4, 16)), {"activate_first": False}, False))
        samples.append((f"bias_{name}_backward", (t(4, 8), t(4, 8), t(8)), {}, False))
    return samples


@pytest.mark.parametrize("name", FUSED)
def test_opcheck(name):
    for qualified, args, kwargs, grad in opcheck_samples(name):
        utils = ["test_schema", "test_faketensor", "test_aot_dispatch_dynamic"]
        if grad:
            utils.append("test_autograd_registration")
        torch.library.opcheck(op(qualified).default, args, kwargs, test_utils=utils)


@pytest.mark.parametrize("name", FUSED)
def test_gradcheck_float64(name):
    if not hasattr(ops, f"gated_{name}_backward"):
        pytest.skip(f"{name} has no derivative")

    def away_from_zero(t):  # relu's kink
        return torch.where(t.abs() < 2e-2, t + 5e-2, t)
    g = torch.Generator(device="cuda").manual_seed(11)
    a, b, x = (away_from_zero(torch.randn(6, 10, device="cuda", dtype=torch.float64, generator=g) * 2)
               for _ in range(3))
    bias = torch.zeros(10, device="cuda", dtype=torch.float64)  # x + bias stays away from the kink
    for t in (a, b, x, bias):
        t.requires_grad_()
    assert torch.autograd.gradcheck(lambda p, q: op("gated_" + name)(p, q), (a, b))
    for first in (True, False):
        assert torch.autograd.gradcheck(
            lambda p, q: op("gated_" + name + "_packed")(torch.cat([p, q], -1), activate_first=first), (a, b))
    assert torch.autograd.gradcheck(lambda p, q: op("bias_" + name)(p, q), (x, bias))
    assert torch.autograd.gradcheck(lambda p: op("cast_" + name)(p, dtype=torch.float64), (x,))


@pytest.mark.parametrize("name", FUSED)
def test_compile_matches_eager(name):
    """A gated MLP and a bias + activation layer, fullgraph, forward and backward."""
    if not hasattr(ops, f"gated_{name}_backward"):
        pytest.skip(f"{name} has no derivative")
    torch._dynamo.reset()
    x = torch.randn(32, 16, device="cuda", requires_grad=True)
    w_in = torch.randn(16, 48, device="cuda", requires_grad=True)
    bias = torch.randn(24, device="cuda", requires_grad=True)

    def mlp(t):
        h = t @ w_in  # [32, 48] = a | b, 24 each
        return op("gated_" + name + "_packed")(h).sum(-1) + op("bias_" + name)(h[:, :24] * 1.0, bias).mean(-1)

    def separate(t):
        h = t @ w_in
        return op("gated_" + name)(h[:, :24], h[:, 24:])

    def cast(t):  # the activation's result in bf16, back to float32 for the loss
        return op("cast_" + name)(t @ w_in, dtype=torch.bfloat16).float()

    for fn in (mlp, separate, cast):
        eager = fn(x)
        compiled = torch.compile(fn, fullgraph=True)(x)
        # decomposed, the cast is inductor's formula, which may keep float32 where a bf16 result
        # is converted straight back (docs/pytorch.md): within one bf16 rounding of eager
        tol = {"rtol": 8e-3, "atol": 1e-3} if fn is cast else {}
        torch.testing.assert_close(compiled, eager, **tol)
        dy = torch.randn_like(eager)
        want = torch.autograd.grad(eager, (x, w_in, bias) if fn is mlp else (x, w_in), dy)
        got = torch.autograd.grad(compiled, (x, w_in, bias) if fn is mlp else (x, w_in), dy)
        for g, w in zip(got, want):
            # the cast's backward: inductor may skip rounding dy to bf16 as eager does, so each
            # gradient is within a bf16 rounding of eager's, relative to its largest element
            # the others' backwards decompose too (auto mode): inductor's float32 formula, within
            # a few float32 roundings of cuact's kernel
            gtol = ({"rtol": 8e-3, "atol": 8e-3 * float(w.abs().max())} if fn is cast
                    else {"rtol": 1e-4, "atol": 1e-4})
            torch.testing.assert_close(g, w, **gtol)
    # quantize: its fp8 result and amax, compiled and eager
    scale = torch.tensor(8.0, device="cuda")

    def quantized(t):
        q, amax = op("quantize_" + name)(t @ w_in, scale=scale)
        return q.float() / scale, amax

    with torch.no_grad():
        eager_q, eager_amax = quantized(x)
        compiled_q, compiled_amax = torch.compile(quantized, fullgraph=True)(x)
    assert torch.equal(compiled_q, eager_q) and torch.equal(compiled_amax, eager_amax)


def test_errors():
    name = FUSED[0]
    gated, packed, bias_op = op("gated_" + name), op("gated_" + name + "_packed"), op("bias_" + name)
    x = torch.randn(4, 6, device="cuda")
    with pytest.raises(RuntimeError, match="expected a CUDA tensor"):
        gated(torch.randn(3), torch.randn(3))
    with pytest.raises(RuntimeError, match="same device"):
        gated(x, x.cpu())
    with pytest.raises(RuntimeError, match="of size"):
        gated(x, torch.randn(4, 5, device="cuda"))
    with pytest.raises(RuntimeError, match="dtype"):
        gated(x, x.double())
    with pytest.raises(RuntimeError, match="unsupported dtype"):
        gated(x.int(), x.int())
    with pytest.raises(RuntimeError, match="last dimension of ab to be even"):
        packed(torch.randn(4, 7, device="cuda"))
    with pytest.raises(RuntimeError, match="at least one dimension"):
        packed(torch.tensor(1.0, device="cuda"))
    with pytest.raises(RuntimeError, match=r"bias of size \[6\]"):
        bias_op(x, torch.randn(4, device="cuda"))
    with pytest.raises(RuntimeError, match=r"bias of size \[6\]"):
        bias_op(x, torch.randn(1, 6, device="cuda"))
    with pytest.raises(RuntimeError, match="dtype"):
        bias_op(x, torch.randn(6, device="cuda", dtype=torch.float64))
    with pytest.raises(RuntimeError, match="same device"):
        bias_op(x, torch.randn(6))
    if hasattr(ops, f"gated_{name}_packed_backward"):
        with pytest.raises(RuntimeError, match="halved"):
            op("gated_" + name + "_packed_backward")(torch.randn(4, 6, device="cuda"), torch.randn(4, 6, device="cuda"))


def test_two_gpus():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")
    with torch.cuda.device(0):
        for name in FUSED:
            a, b = torch.randn(100, 8, device="cuda:1"), torch.randn(100, 8, device="cuda:1")
            y = op("gated_" + name)(a, b)
            assert y.device == a.device
            torch.testing.assert_close(y, act(name, a) * b)
            z = op("bias_" + name)(a, b[0])
            torch.testing.assert_close(z, act(name, a + b[0]))
        torch.cuda.synchronize(1)
