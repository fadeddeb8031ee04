"""torch.ops.cuact: values against PyTorch, layouts, opcheck, gradcheck, torch.compile, version
counter, errors, two GPUs. Skipped (with the reason) without torch or a CUDA device."""
from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import cuact_torch  # noqa: E402
from cuact_torch.reference import EXACT_FLOAT64, KINKS, REFERENCE  # noqa: E402

FAMILIES = [name for name in cuact_torch.FAMILIES if name in REFERENCE]
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
CASES = [(name, params) for name in FAMILIES for params in REFERENCE[name][1]]
ops = torch.ops.cuact


def op(name, suffix=""):
    return getattr(ops, name + suffix)


def reference(name, x, params):
    return REFERENCE[name][0](x, *params)


def has(name, suffix):
    return hasattr(ops, name + suffix)


def from_output_valid(name, params):
    return not ((name in ("elu", "celu") and params[0] < 0) or (name == "leaky_relu" and params[0] < 0))


def special_input(shape, dtype, scale=3.0, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = (torch.randn(shape, generator=g, device="cuda", dtype=torch.float64) * scale)
    flat = x.view(-1)
    specials = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-30, -1e-30,
                             30.0, -30.0, 100.0, -100.0, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0, 6.0],
                            dtype=torch.float64, device="cuda")
    flat[: specials.numel()] = specials
    return x.to(dtype)


def ulp(v, dtype):
    """Spacing of `dtype` at |v| (float64 tensor in, float64 out)."""
    mant, min_exp = {torch.float16: (10, -14), torch.bfloat16: (7, -126),
                     torch.float32: (23, -126), torch.float64: (52, -1022)}[dtype]
    _, e = torch.frexp(v.abs())
    e = torch.clamp(e - 1, min=min_exp)
    return torch.ldexp(torch.ones_like(v), e - mant)


def close(actual, expected, x, dtype):
    """Element mask: equal (NaN with NaN, same inf), or within the dtype's tolerance."""
    a, e = actual.double(), expected.double()
    same = (a == e) | (torch.isnan(a) & torch.isnan(e))
    if dtype in (torch.float16, torch.bfloat16):
        within = (a - e).abs() <= ulp(e, dtype)
    else:
        eps = torch.finfo(dtype).eps
        # 1e-6 relative in fp32 (4 ulp in fp64), plus 2 ulp of x where the function cancels
        # (x - tanh x near 0: PyTorch's own result carries that error too)
        rel = 1e-6 if dtype == torch.float32 else 4 * eps
        within = (a - e).abs() <= rel * e.abs() + 2 * eps * x.double().abs()
    return same | (within & torch.isfinite(a) & torch.isfinite(e))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name,params", CASES)
def test_forward_matches_torch(name, params, dtype):
    x = special_input((517, 33), dtype)
    y = op(name)(x, *params)
    torch_same_dtype = reference(name, x, params)
    exact = EXACT_FLOAT64.get(name, REFERENCE[name][0])  # see EXACT_FLOAT64
    rounded_reference = exact(x.double(), *params).to(dtype)
    ok = close(y, torch_same_dtype, x, dtype) | close(y, rounded_reference, x, dtype)
    bad = (~ok).nonzero()
    assert bad.numel() == 0, (
        f"{name}{params} {dtype}: {bad.shape[0]} elements differ, first at x={x[tuple(bad[0])].item()!r}: "
        f"cuact {y[tuple(bad[0])].item()!r}, torch {torch_same_dtype[tuple(bad[0])].item()!r}")
    # zero signs agree with PyTorch, except 16-bit tanhshrink: PyTorch's x - tanh(x) in float
    # gives +0 where tanhf(x) == x (x - x), cuact's series x^3/3 - ... the sign of x (seen on H100
    # and H200 for tiny negative x: cuact -0, PyTorch +0); the values are zero either way
    zeros = (torch_same_dtype == 0) & (y == 0)
    if name == "tanhshrink" and dtype in (torch.float16, torch.bfloat16):
        zeros &= x == 0  # tanhshrink(+-0) = +0 still checked
    assert torch.equal(torch.signbit(y[zeros]), torch.signbit(torch_same_dtype[zeros])), f"{name}: sign of zero"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name,params", CASES)
def test_inplace_out_backward_agree(name, params, dtype):
    x = special_input((300, 7), dtype, seed=1)
    y = op(name)(x, *params)
    z = x.clone()
    op(name, "_")(z, *params)
    assert torch.equal(z.isnan(), y.isnan()) and torch.equal(z[~z.isnan()], y[~y.isnan()])
    out = torch.empty_like(x)
    op(name).out(x, *params, out=out)
    assert torch.equal(out.isnan(), y.isnan()) and torch.equal(out[~out.isnan()], y[~y.isnan()])
    if has(name, "_backward"):
        xr = x.float().clamp(-50, 50).nan_to_num(0.0).requires_grad_()
        dy = torch.randn_like(xr)
        ref = torch.autograd.grad(reference(name, xr, params), xr, dy)[0]
        got = op(name, "_backward")(dy.to(dtype), xr.detach().to(dtype), *params).float()
        tol = 1e-5 if dtype == torch.float32 else 2e-2
        torch.testing.assert_close(got, ref, atol=tol, rtol=tol)
        if has(name, "_backward_from_output") and from_output_valid(name, params):
            got = op(name, "_backward_from_output")(dy.to(dtype), reference(name, xr.detach(), params).to(dtype), *params).float()
            torch.testing.assert_close(got, ref, atol=tol, rtol=tol)


def layouts():
    base = torch.randn(6, 10, device="cuda")
    return {
        "contiguous": base,
        "transposed": base.t(),  # dense, not contiguous: output keeps the strides
        "sliced": base[:, ::2],  # not dense: output contiguous
        "expanded": torch.randn(6, 1, device="cuda").expand(6, 4),
        "offset": base.view(-1)[3:33].view(5, 6),
        "zero_size": torch.randn(0, 5, device="cuda"),
        "scalar": torch.tensor(-1.5, device="cuda"),
    }


@pytest.mark.parametrize("layout", list(layouts()))
@pytest.mark.parametrize("name", FAMILIES)
def test_layouts(name, layout):
    x = layouts()[layout]
    params = REFERENCE[name][1][0]
    y = op(name)(x, *params)
    expected = reference(name, x, params)
    torch.testing.assert_close(y, expected, equal_nan=True)
    if layout in ("contiguous", "transposed", "offset", "zero_size", "scalar"):
        assert y.stride() == x.stride(), (y.stride(), x.stride())
    else:
        assert y.is_contiguous()
    # the fake agrees with the real kernel on sizes and strides
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode() as mode:
        fake = op(name)(mode.from_tensor(x), *params)
    assert fake.shape == y.shape and fake.stride() == y.stride(), (fake.stride(), y.stride())
    if layout != "expanded":  # in place needs distinct elements
        z = layouts()[layout]  # a fresh tensor of the same layout
        z.copy_(x)
        op(name, "_")(z, *params)
        torch.testing.assert_close(z, expected, equal_nan=True)


def opcheck_samples(name, params):
    def x(*shape, grad=False):
        t = torch.randn(*shape, device="cuda", dtype=torch.float64 if grad else torch.float32)
        return t.requires_grad_(grad)
    samples = []  # (suffix, args, kwargs, has_requires_grad)
    for xs, grad in [(x(4, 8), False), (x(4, 8, grad=True), True), (x(8, 4).t(), False),
                     (x(4, 8)[:, ::2], False), (x(0, 3), False), (x(0, 3, grad=True), True)]:
        samples.append(("", (xs, *params), {}, grad))
    for xs in [x(4, 8), x(8, 4).t(), x(4, 8)[:, ::2], x(0, 3)]:
        samples.append(("_", (xs, *params), {}, False))
        samples.append((".out", (xs, *params), {"out": torch.empty_like(xs)}, False))
    if has(name, "_backward"):
        for shape in [(4, 8), (0, 3)]:
            samples.append(("_backward", (x(*shape), x(*shape), *params), {}, False))
        # the expanded gradient of a sum (one element, strides 0), with x dense and transposed
        for xs in [x(4, 8), x(8, 4).t()]:
            samples.append(("_backward", (x(1).view(()).expand(4, 8), xs, *params), {}, False))
    if has(name, "_backward_from_output") and from_output_valid(name, params):
        y = op(name)(x(4, 8), *params)
        samples.append(("_backward_from_output", (x(4, 8), y, *params), {}, False))
    return samples


@pytest.mark.parametrize("name,params", CASES)
def test_opcheck(name, params):
    for suffix, args, kwargs, grad in opcheck_samples(name, params):
        overload = op(name).out if suffix == ".out" else op(name, suffix).default
        utils = ["test_schema", "test_faketensor", "test_aot_dispatch_dynamic"]
        if grad:
            utils.append("test_autograd_registration")
        torch.library.opcheck(overload, args, kwargs, test_utils=utils)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name,params", CASES)
def test_backward_of_broadcast_gradient(name, params, dtype):
    """A gradient of one element broadcast over x (what sum() hands back) gives the result of the
    same gradient made dense (within the dtype's default tolerance), for any layout of x, and a
    contiguous dx."""
    if not has(name, "_backward"):
        pytest.skip(f"{name} has no derivative")
    base = special_input((6, 250), dtype, seed=3)
    xs = {"contiguous": base, "transposed": base.t(), "sliced": base[:, 1::2],
          "offset": base.view(-1)[1:1001].view(10, 100)}
    for value in (-1.37, 0.0, float("nan"), float("inf")):
        for layout, x in xs.items():
            one = torch.full((1,), value, device="cuda", dtype=dtype)
            grad = one.view(()).expand(x.shape)
            got = op(name, "_backward")(grad, x, *params)
            want = op(name, "_backward")(grad.contiguous(), x.contiguous(), *params)
            assert got.is_contiguous() and got.shape == x.shape, (layout, got.stride())
            torch.testing.assert_close(got, want, equal_nan=True, msg=f"{layout}, dy {value}")
    # through autograd: x.sum()'s gradient against PyTorch's own, in float64 at the same x
    xc = special_input((257,), dtype, seed=4).clamp(-20, 20).nan_to_num(0.0).requires_grad_()
    xr = xc.detach().double().requires_grad_()
    (ref,) = torch.autograd.grad(reference(name, xr, params).sum(), xr)
    op(name)(xc, *params).sum().backward()
    tol = {torch.float32: 1e-5, torch.float64: 1e-6}.get(dtype, 2e-2)
    torch.testing.assert_close(xc.grad.double(), ref, atol=tol, rtol=tol)


def away_from_kinks(name, params, x):
    kinks = KINKS.get(name, lambda *p: [])(*params)
    for k in kinks:
        near = (x - k).abs() < 1e-2
        x = torch.where(near, x + 3e-2, x)
    return x


@pytest.mark.parametrize("name,params", CASES)
def test_gradcheck_float64(name, params):
    if not has(name, "_backward"):
        pytest.skip(f"{name} has no derivative")
    x = away_from_kinks(name, params, torch.randn(40, device="cuda", dtype=torch.float64) * 3)
    x.requires_grad_()
    assert torch.autograd.gradcheck(lambda t: op(name)(t, *params), (x,), eps=1e-6, atol=1e-6)

    def in_place(t):
        u = t * 1.0  # not a leaf
        op(name, "_")(u, *params)
        return u
    assert torch.autograd.gradcheck(in_place, (x,), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,params", [(n, REFERENCE[n][1][0]) for n in FAMILIES])
def test_compile_matches_eager(name, params):
    torch._dynamo.reset()
    x = torch.randn(64, 33, device="cuda", requires_grad=True)
    dy = torch.randn(64, 33, device="cuda")

    def f(t):
        return op(name)(t * 2.0, *params) + 1.0

    def g(t):
        u = t * 2.0
        op(name, "_")(u, *params)
        return u

    for fn, grads in [(f, has(name, "_backward")), (g, has(name, "_backward"))]:
        compiled = torch.compile(fn, fullgraph=True)
        eager_y = fn(x)
        compiled_y = compiled(x)
        torch.testing.assert_close(compiled_y, eager_y)
        if grads:
            eager_dx = torch.autograd.grad(eager_y, x, dy)[0]
            compiled_dx = torch.autograd.grad(compiled_y, x, dy)[0]
            torch.testing.assert_close(compiled_dx, eager_dx)
    with torch.no_grad():
        dyn = torch.compile(f, fullgraph=True, dynamic=True)
        for n in (5, 17):
            t = torch.randn(n, 9, device="cuda")
            torch.testing.assert_close(dyn(t), f(t))


@pytest.mark.parametrize("name", FAMILIES)
def test_inplace_bumps_version_and_autograd_sees_it(name):
    params = REFERENCE[name][1][0]
    a = torch.randn(100, device="cuda", requires_grad=True)
    b = a * 2.0
    before = b._version
    op(name, "_")(b, *params)
    assert b._version > before, "in-place op did not bump the version counter"
    # a tensor another op saved, then modified by the cuact in-place op: autograd's usual error
    c = torch.exp(a * 3.0)  # exp saves its output
    op(name, "_")(c, *params)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()
    # the functional op saves its input; modifying it afterwards is caught the same way
    if has(name, "_backward"):
        d = a * 4.0
        y = op(name)(d, *params)
        op(name, "_")(d, *params)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    out = torch.empty(100, device="cuda")
    v = out._version
    op(name).out(a.detach(), *params, out=out)
    assert out._version > v, "out= op did not bump the version counter of out"


def test_version_error_matches_torch_relu_():
    a = torch.randn(50, device="cuda", requires_grad=True)
    for inplace in (torch.relu_, torch.ops.cuact.relu_):
        b = a * 1.0
        y = torch.sigmoid(b)
        s = y * 1.0
        inplace(y)  # sigmoid saved y
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            s.sum().backward(retain_graph=True)


@pytest.mark.parametrize("name", FAMILIES)
def test_inplace_gradient_and_leaf_error(name):
    if not has(name, "_backward"):
        pytest.skip(f"{name} has no derivative")
    for params in REFERENCE[name][1]:
        a = away_from_kinks(name, params, torch.randn(64, device="cuda", dtype=torch.float64) * 2)
        a.requires_grad_()
        b = a * 1.0
        op(name, "_")(b, *params)
        (g,) = torch.autograd.grad(b.sum(), a)
        ar = a.detach().clone().requires_grad_()
        (gr,) = torch.autograd.grad(reference(name, ar, params).sum(), ar)
        torch.testing.assert_close(g, gr)
    leaf = torch.randn(4, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        op(name, "_")(leaf, *REFERENCE[name][1][0])
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        op(name).out(leaf, *REFERENCE[name][1][0], out=torch.empty_like(leaf))


def test_error_messages():
    with pytest.raises(RuntimeError, match="expected a CUDA tensor"):
        ops.relu(torch.randn(3))
    with pytest.raises(RuntimeError, match="expected a CUDA tensor"):
        ops.relu_(torch.randn(3))
    with pytest.raises(RuntimeError, match="unsupported dtype"):
        ops.selu(torch.ones(3, device="cuda", dtype=torch.int32))
    with pytest.raises(RuntimeError, match="expected all tensors on the same device"):
        ops.relu_backward(torch.randn(3), torch.randn(3, device="cuda"))
    with pytest.raises(RuntimeError, match="of size"):
        ops.relu_backward(torch.randn(4, device="cuda"), torch.randn(3, device="cuda"))
    with pytest.raises(RuntimeError, match="dtype"):
        ops.relu.out(torch.randn(3, device="cuda"), out=torch.empty(3, device="cuda", dtype=torch.float64))
    with pytest.raises(RuntimeError, match="more than one element"):
        ops.relu_(torch.randn(1, device="cuda").expand(4))


def test_parameters_pytorch_refuses():
    # PyTorch's forwards refuse softshrink's lambd < 0 and celu's alpha = 0; the ops raise as they
    # do (torch_ops::parameter_rule), leaving their tensors as they were
    if "softshrink" not in FAMILIES or "celu" not in FAMILIES:
        pytest.skip("needs the whole family (the default build; this one has CUACT_TORCH_FAMILY=0)")
    x = torch.randn(64, device="cuda")
    with pytest.raises(RuntimeError):
        torch.nn.functional.softshrink(x, -0.5)
    with pytest.raises(RuntimeError):
        torch.nn.functional.celu(x, 0.0)
    kept = x.clone()
    out = torch.full_like(x, 7.0)
    with pytest.raises(RuntimeError, match="lambd must be >= 0"):
        ops.softshrink(x, -0.5)
    with pytest.raises(RuntimeError, match="lambd must be >= 0"):
        ops.softshrink_(x, -0.5)
    with pytest.raises(RuntimeError, match="lambd must be >= 0"):
        ops.softshrink.out(x, -0.5, out=out)
    with pytest.raises(RuntimeError, match="alpha must not be 0"):
        ops.celu(x, 0.0)
    assert torch.equal(x, kept) and bool((out == 7.0).all())
    ops.softshrink(x, 0.0)  # the bounds themselves are accepted
    ops.celu(x, -1.0)


def test_two_gpus():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")
    with torch.cuda.device(0):
        for name in FAMILIES:
            params = REFERENCE[name][1][0]
            x = torch.randn(1000, 3, device="cuda:1")
            y = op(name)(x, *params)
            assert y.device == x.device
            torch.testing.assert_close(y, reference(name, x, params), equal_nan=True)
            z = x.clone()
            op(name, "_")(z, *params)
            torch.testing.assert_close(z, y, equal_nan=True)
            if has(name, "_backward"):
                xg = x.clone().requires_grad_()
                (g,) = torch.autograd.grad(op(name)(xg, *params).sum(), xg)
                assert g.device == x.device
                with pytest.raises(RuntimeError, match="same device"):
                    op(name, "_backward")(torch.ones(1000, 3, device="cuda:0"), x, *params)
        torch.cuda.synchronize(1)
