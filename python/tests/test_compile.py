"""torch.compile with cuact's ops: the decompositions keep inductor's fusion ("auto"/"fuse"), the
opaque kernel stays where asked ("kernel", per-op overrides, the defaults), values match eager.
Skipped (with the reason) without torch or a CUDA device."""
from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import cuact_torch  # noqa: E402
from cuact_torch import _compile  # noqa: E402
from cuact_torch.reference import REFERENCE  # noqa: E402

ops = torch.ops.cuact
FAMILIES = [n for n in cuact_torch.FAMILIES if n in REFERENCE]
FUSED = [n for n in cuact_torch.FUSED if n in _compile._GRAD]
TOL = {torch.float32: dict(rtol=2e-5, atol=2e-5), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}


def _no_caches():
    """Compiled artifacts are cached by the graph before decomposition: a test that changes the
    mode must not reuse another mode's."""
    import torch._inductor.config as inductor_config
    for config in (getattr(torch, "compiler", None) and getattr(torch.compiler, "config", None),
                   inductor_config):
        if config is not None and hasattr(config, "force_disable_caches"):
            config.force_disable_caches = True


def compiled(fn, *args, mode="auto", overrides=None):
    """(result, generated code) of torch.compile(fn)(*args) under `mode`."""
    from torch._inductor.utils import run_and_get_code
    _no_caches()
    cuact_torch.compile_mode(mode)
    for name, m in (overrides or {}).items():
        cuact_torch.compile_mode(m, ops=[name])
    try:
        result, code = run_and_get_code(torch.compile(fn, fullgraph=True), *args)
    finally:
        for name in (overrides or {}):
            cuact_torch.compile_mode(None, ops=[name])
        cuact_torch.compile_mode("auto")
    return result, "\n".join(code)


def kernels(code):
    return code.count("@triton.jit")


def calls_cuact(code, op):
    return ("torch.ops.cuact.%s.default" % op) in code or ("cuact.%s.default" % op) in code


def x_of(shape=(64, 257), dtype=torch.float32, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(shape, generator=g, device="cuda") * 3).to(dtype)


def test_modes_and_validation():
    assert cuact_torch.compile_mode() == "auto"
    with pytest.raises(ValueError):
        cuact_torch.compile_mode("fast")
    with pytest.raises(ValueError):
        cuact_torch.compile_mode("kernel", ops=["no_such_op"])
    table = cuact_torch.decomposed_ops()
    assert table, "no decompositions registered"
    for name in FUSED:
        assert table["gated_" + name] == "fuse"
        if "gated_%s_backward" % name in table:
            assert table["gated_%s_backward" % name] == "kernel"
    assert not any(n.startswith("quantize_") for n in table)


@pytest.mark.parametrize("name", [n for n in ("silu", "gelu", "relu", "selu") if n in FAMILIES])
def test_pointwise_chain_fuses_into_one_kernel(name):
    x = x_of((1024, 1024))
    fn = lambda t: getattr(ops, name)(t * 1.5 + 0.5) * 2.0  # noqa: E731
    y, code = compiled(fn, x)
    assert not calls_cuact(code, name), "the op stayed opaque"
    assert kernels(code) == 1, code
    torch.testing.assert_close(y, fn(x), **TOL[torch.float32])


@pytest.mark.parametrize("name", [n for n in ("silu", "relu") if n in FAMILIES])
def test_kernel_mode_keeps_the_cuact_op(name):
    x = x_of((1024, 1024))
    fn = lambda t: getattr(ops, name)(t * 1.5 + 0.5) * 2.0  # noqa: E731
    y, code = compiled(fn, x, mode="kernel")
    assert calls_cuact(code, name)
    torch.testing.assert_close(y, fn(x), **TOL[torch.float32])


def test_per_op_override():
    if not {"silu", "relu"} <= set(FAMILIES):
        pytest.skip("needs silu and relu")
    x = x_of((512, 512))
    fn = lambda t: ops.relu(ops.silu(t) + 1.0)  # noqa: E731
    _, code = compiled(fn, x, overrides={"silu": "kernel"})
    assert calls_cuact(code, "silu") and not calls_cuact(code, "relu")
    _, code = compiled(fn, x, mode="kernel", overrides={"relu": "fuse"})
    assert calls_cuact(code, "silu") and not calls_cuact(code, "relu")


def test_eager_ignores_the_mode():
    name = FAMILIES[0]
    x = x_of()
    before = getattr(ops, name)(x)
    cuact_torch.compile_mode("fuse")
    try:
        assert torch.equal(getattr(ops, name)(x), before)
    finally:
        cuact_torch.compile_mode("auto")


def _params(name):
    return REFERENCE[name][1][0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", FAMILIES)
def test_unary_forward_backward_match_eager(name, dtype):
    params = _params(name)
    x = x_of((33, 129), dtype).requires_grad_()
    g = x_of((33, 129), dtype, seed=1)
    fn = lambda t: getattr(ops, name)(t, *params)  # noqa: E731
    y, code = compiled(fn, x, mode="fuse")
    assert not calls_cuact(code, name)
    (dx,) = torch.autograd.grad(y, x, g)
    x2 = x.detach().clone().requires_grad_()
    y_ref = fn(x2)
    (dx_ref,) = torch.autograd.grad(y_ref, x2, g)
    torch.testing.assert_close(y, y_ref, **TOL[dtype])
    torch.testing.assert_close(dx, dx_ref, **TOL[dtype])


# "auto" for every fused activation; "fuse" (the backwards decomposed too) on two, for compile time.
FUSED_CASES = [(n, d, "auto") for n in FUSED for d in (torch.float32, torch.bfloat16)]
FUSED_CASES += [(n, torch.bfloat16, "fuse") for n in FUSED if n in ("silu", "gelu_tanh")]


@pytest.mark.parametrize("name,dtype,mode", FUSED_CASES)
def test_fused_ops_match_eager(name, dtype, mode):
    a, b = x_of((16, 96), dtype).requires_grad_(), x_of((16, 96), dtype, seed=2).requires_grad_()
    ab = torch.cat([a.detach(), b.detach()], -1).requires_grad_()
    bias = x_of((96,), dtype, seed=3).requires_grad_()
    g = x_of((16, 96), dtype, seed=4)
    cases = [
        ("gated_" + name, lambda p, q: getattr(ops, "gated_" + name)(p, q), (a, b)),
        ("gated_%s_packed" % name, lambda p: getattr(ops, "gated_%s_packed" % name)(p), (ab,)),
        ("gated_%s_packed" % name, lambda p: getattr(ops, "gated_%s_packed" % name)(p, activate_first=False), (ab,)),
        ("bias_" + name, lambda p, q: getattr(ops, "bias_" + name)(p, q), (a, bias)),
        ("cast_" + name, lambda p: getattr(ops, "cast_" + name)(p, dtype=torch.float32), (a,)),
    ]
    for op_name, fn, inputs in cases:
        y, code = compiled(fn, *inputs, mode=mode)
        assert not calls_cuact(code, op_name), op_name
        grads = torch.autograd.grad(y, inputs, g.to(y.dtype))
        copies = [t.detach().clone().requires_grad_() for t in inputs]
        y_ref = fn(*copies)
        grads_ref = torch.autograd.grad(y_ref, copies, g.to(y.dtype))
        torch.testing.assert_close(y, y_ref, **TOL[dtype])
        for d, d_ref in zip(grads, grads_ref):
            torch.testing.assert_close(d, d_ref, **TOL[dtype])


def test_gated_backward_stays_the_kernel_by_default():
    name = FUSED[0] if FUSED else pytest.skip("no fused ops")
    a = x_of((256, 512)).requires_grad_()
    b = x_of((256, 512), seed=1).requires_grad_()
    op = getattr(ops, "gated_" + name)

    def step(p, q):
        return op(p, q)

    from torch._inductor.utils import run_and_get_code
    _no_caches()

    def fwd_bwd(p, q):
        y = torch.compile(step)(p, q)
        y.backward(torch.ones_like(y))
        return y

    _, code = run_and_get_code(fwd_bwd, a, b)
    code = "\n".join(code)
    assert not calls_cuact(code, "gated_" + name)
    assert calls_cuact(code, "gated_%s_backward" % name)


def test_quantize_is_never_decomposed():
    name = "gelu" if "gelu" in cuact_torch.FUSED else cuact_torch.FUSED[0]
    x = x_of((128, 256))
    scale = torch.ones((), device="cuda")
    fn = lambda t: getattr(ops, "quantize_" + name)(t * 2.0, scale=scale)  # noqa: E731
    (q, amax), code = compiled(fn, x, mode="fuse")
    assert calls_cuact(code, "quantize_" + name)
    q_ref, amax_ref = fn(x)
    assert torch.equal(q.view(torch.uint8), q_ref.view(torch.uint8))
    assert torch.equal(amax, amax_ref)
