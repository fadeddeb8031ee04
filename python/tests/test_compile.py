"""torch.compile with cuact's ops: the decompositions keep inductor's fusion ("auto"/"fuse"), the
opaque kernel stays where asked ("kernel", per-op overrides, the defaults), values match eager.
Skipped (with the reason) without torch or a CUDA device."""
import contextlib
import re

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


def kernel_sources(code):
    """The Triton kernels of inductor's output code, each as its source from `def` on, with the
    kernel's name replaced and blank and comment lines dropped: what two programs' kernels
    compute, whatever their names (which come from the graph's node names)."""
    sources = []
    for body in re.findall(r"@triton\.jit\s*\n(def .*?)'''", code, flags=re.S):
        name = re.match(r"def (\w+)", body).group(1)
        lines = [line.rstrip().replace(name, "KERNEL") for line in body.splitlines()]
        sources.append("\n".join(x for x in lines if x.strip() and not x.lstrip().startswith("#")))
    return sources


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
            assert table["gated_%s_backward" % name] == "fuse"
            assert table["bias_%s_backward" % name] == "kernel"
    assert not any(n.startswith("quantize_") for n in table)


@pytest.mark.parametrize("name", [n for n in ("silu", "gelu", "relu", "selu") if n in FAMILIES])
def test_pointwise_chain_fuses_into_one_kernel(name):
    x = x_of((1024, 1024))
    fn = lambda t: getattr(ops, name)(t * 1.5 + 0.5) * 2.0  # noqa: E731
    y, code = compiled(fn, x)
    assert not calls_cuact(code, name), "the op stayed opaque"
    assert kernels(code) == 1, code
    torch.testing.assert_close(y, fn(x), **TOL[torch.float32])


# (cuact op, torch's function of the same meaning, the op's parameters): under "fuse" the cuact
# op is the aten op torch's function calls, so inductor must build the kernel it builds for torch's.
SAME_AS_TORCH = [
    ("silu", lambda t: torch.nn.functional.silu(t), ()),
    ("gelu", lambda t: torch.nn.functional.gelu(t), ()),
    ("gelu_tanh", lambda t: torch.nn.functional.gelu(t, approximate="tanh"), ()),
    ("relu", lambda t: torch.relu(t), ()),
    ("elu", lambda t: torch.nn.functional.elu(t, 0.5), (0.5,)),
    ("hardtanh", lambda t: torch.nn.functional.hardtanh(t, -2.0, 0.5), (-2.0, 0.5)),
    ("softplus", lambda t: torch.nn.functional.softplus(t, 2.0, 5.0), (2.0, 5.0)),
]
SAME_AS_TORCH = [c for c in SAME_AS_TORCH if c[0] in FAMILIES]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name,torch_fn,params", SAME_AS_TORCH, ids=[c[0] for c in SAME_AS_TORCH])
def test_fuse_mode_builds_torchs_own_kernel(name, torch_fn, params, dtype):
    # the chain of python/bench/programs.py: scale/shift, the activation, a residual add
    t, r = x_of((1024, 1024), dtype), x_of((1024, 1024), dtype, seed=1)
    op = getattr(ops, name)
    y, code = compiled(lambda a, b: op(a * 1.5 + 0.5, *params) + b, t, r, mode="fuse")
    y_torch, code_torch = compiled(lambda a, b: torch_fn(a * 1.5 + 0.5) + b, t, r, mode="fuse")
    assert not calls_cuact(code, name)
    assert kernels(code) == kernels(code_torch) == 1, code
    assert kernel_sources(code) == kernel_sources(code_torch), (code, code_torch)
    assert torch.equal(y, y_torch)  # one kernel, one formula: the same bits


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


@contextlib.contextmanager
def _caches_on():
    """torch.compile's local caches on (compiled() turns them off), restored after."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    saved = []
    for config, name, value in ((getattr(torch.compiler, "config", None), "force_disable_caches", False),
                                (inductor_config, "force_disable_caches", False),
                                (inductor_config, "fx_graph_cache", True),
                                (functorch_config, "enable_autograd_cache", True)):
        if config is not None and hasattr(config, name):
            saved.append((config, name, getattr(config, name)))
            setattr(config, name, value)
    try:
        yield
    finally:
        for config, name, value in reversed(saved):
            setattr(config, name, value)


def _has_cache_tag():
    return hasattr(getattr(torch.compiler, "config", None), "cache_key_tag")


def test_a_mode_change_misses_the_compile_caches(tmp_path, monkeypatch):
    """The caches key on the graph dynamo captured, where a cuact op is one node in every mode:
    cuact's tag in the key must make a "kernel" compile miss the artifact a "fuse" compile of the
    same function saved, and a second "fuse" compile find it."""
    if "silu" not in FAMILIES:
        pytest.skip("needs silu")
    if not _has_cache_tag():
        pytest.skip("this torch has no torch.compiler.config.cache_key_tag")
    from torch._dynamo.utils import counters
    from torch._inductor.utils import run_and_get_code
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))  # an empty cache
    x = x_of((256, 256))
    fn = lambda t: ops.silu(t * 1.5 + 0.5) * 2.0  # noqa: E731

    def compile_in(mode):
        cuact_torch.compile_mode(mode)
        counters.clear()
        _, code = run_and_get_code(torch.compile(fn, fullgraph=True), x)
        looked = {k: v for group in ("aot_autograd", "inductor") for k, v in counters[group].items()}
        return "\n".join(code), looked

    with _caches_on():
        try:
            code, looked = compile_in("fuse")
            assert "|cuact:" in torch.compiler.config.cache_key_tag
            if not (looked.get("autograd_cache_miss") or looked.get("fxgraph_cache_miss")):
                pytest.skip(f"the compile caches did not look this graph up: {looked}")
            assert not calls_cuact(code, "silu")
            code, looked = compile_in("kernel")
            assert calls_cuact(code, "silu"), f"kernel mode loaded the fuse mode's artifact: {looked}"
            assert not looked.get("autograd_cache_hit"), looked
            _, looked = compile_in("fuse")
            assert looked.get("autograd_cache_hit") or looked.get("fxgraph_cache_hit"), looked
        finally:
            cuact_torch.compile_mode("auto")


def test_the_cache_tag_keeps_the_users_tag():
    if not _has_cache_tag():
        pytest.skip("this torch has no torch.compiler.config.cache_key_tag")
    config = torch.compiler.config
    before = config.cache_key_tag
    try:
        config.cache_key_tag = "mine"
        cuact_torch.compile_mode("kernel")
        assert config.cache_key_tag == "mine" + _compile.cache_tag()
        kernel_tag = config.cache_key_tag
        cuact_torch.compile_mode("auto")
        assert config.cache_key_tag.startswith("mine|cuact:") and config.cache_key_tag != kernel_tag
        name = FAMILIES[0]
        cuact_torch.compile_mode("kernel", ops=[name])
        assert config.cache_key_tag.endswith(f":auto:{name}=kernel")
    finally:
        cuact_torch.compile_mode(None, ops=[FAMILIES[0]])
        cuact_torch.compile_mode("auto")
        config.cache_key_tag = before


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


def _gated_fwd_bwd_code(op, a, b):
    """Inductor's code for op(a, b) and its backward, compiled whole."""
    from torch._inductor.utils import run_and_get_code
    _no_caches()

    def fwd_bwd(p, q):
        y = torch.compile(op)(p, q)
        y.backward(torch.ones_like(y))
        return y

    _, code = run_and_get_code(fwd_bwd, a, b)
    return "\n".join(code)


def test_gated_backward_decomposes_by_default_and_kernel_keeps_it():
    name = FUSED[0] if FUSED else pytest.skip("no fused ops")
    a = x_of((256, 512)).requires_grad_()
    b = x_of((256, 512), seed=1).requires_grad_()
    op = getattr(ops, "gated_" + name)
    code = _gated_fwd_bwd_code(op, a, b)
    assert not calls_cuact(code, "gated_" + name)
    assert not calls_cuact(code, "gated_%s_backward" % name)
    cuact_torch.compile_mode("kernel", ops=["gated_%s_backward" % name])
    try:
        code = _gated_fwd_bwd_code(op, a, b)
    finally:
        cuact_torch.compile_mode(None, ops=["gated_%s_backward" % name])
    assert not calls_cuact(code, "gated_" + name)
    assert calls_cuact(code, "gated_%s_backward" % name)


def _compiled_mlp_peak(gate):
    """Peak memory above the start of a compiled gated MLP step's forward and backward, bf16."""
    torch.manual_seed(0)
    layers = [torch.nn.Linear(1024, 2816, bias=False), torch.nn.Linear(1024, 2816, bias=False),
              torch.nn.Linear(2816, 1024, bias=False)]
    g, u, d = (m.to("cuda", torch.bfloat16) for m in layers)
    step = torch.compile(lambda t: d(gate(g(t), u(t))))
    x = torch.randn(2048, 1024, device="cuda", dtype=torch.bfloat16)
    for _ in range(2):
        y = step(x)
        y.backward(torch.ones_like(y))
        for m in (g, u, d):
            m.weight.grad = None
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    y = step(x)
    y.backward(torch.ones_like(y))
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


def test_compiled_gated_mlp_peak_memory_is_inductors():
    # the default (decomposed backward) saves and frees what inductor does for torch's formula;
    # "kernel" allocates da and db afresh while a and b are alive: most of a gradient's bytes more
    if "silu" not in FUSED:
        pytest.skip("no gated_silu")
    _no_caches()
    torch._dynamo.reset()
    inductor = _compiled_mlp_peak(lambda p, q: torch.nn.functional.silu(p) * q)
    torch._dynamo.reset()
    cuact = _compiled_mlp_peak(ops.gated_silu)
    cuact_torch.compile_mode("kernel", ops=["gated_silu_backward"])
    try:
        kernel = _compiled_mlp_peak(ops.gated_silu)
    finally:
        cuact_torch.compile_mode(None, ops=["gated_silu_backward"])
    gradient_bytes = 2048 * 2816 * 2
    assert cuact <= inductor, (cuact, inductor)
    assert kernel >= inductor + gradient_bytes // 2, (kernel, inductor)


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
