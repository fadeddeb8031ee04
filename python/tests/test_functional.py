"""cuact_torch.functional and cuact_torch.nn against torch.nn.functional and torch.nn: signatures,
values, in place, glu along any dim, fallbacks, errors, packaging (version, headers). Skipped
(with the reason) without torch or a CUDA device."""
import inspect

from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import cuact_torch  # noqa: E402
import cuact_torch.functional as CF  # noqa: E402
import cuact_torch.nn as CN  # noqa: E402

ops = torch.ops.cuact

# (name, torch function, keyword parameters to try)
CASES = [
    ("relu", F.relu, [{}]), ("relu6", F.relu6, [{}]),
    ("leaky_relu", F.leaky_relu, [{}, {"negative_slope": 0.2}]),
    ("elu", F.elu, [{}, {"alpha": 0.5}]), ("selu", F.selu, [{}]), ("celu", F.celu, [{}, {"alpha": 2.0}]),
    ("gelu", F.gelu, [{}, {"approximate": "tanh"}]), ("silu", F.silu, [{}]), ("mish", F.mish, [{}]),
    ("hardswish", F.hardswish, [{}]), ("hardsigmoid", F.hardsigmoid, [{}]),
    ("hardtanh", F.hardtanh, [{}, {"min_val": -2.0, "max_val": 0.5}]),
    ("softplus", F.softplus, [{}, {"beta": 2.0, "threshold": 5.0}]),
    ("threshold", F.threshold, [{"threshold": 0.5, "value": -2.0}]),
    ("sigmoid", torch.sigmoid, [{}]), ("tanh", torch.tanh, [{}]), ("logsigmoid", F.logsigmoid, [{}]),
    ("softsign", F.softsign, [{}]), ("tanhshrink", F.tanhshrink, [{}]),
    ("softshrink", F.softshrink, [{}, {"lambd": 1.5}]), ("hardshrink", F.hardshrink, [{}, {"lambd": 1.5}]),
    ("glu", F.glu, [{}, {"dim": 0}, {"dim": 1}, {"dim": -2}]),
]
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
# torch.testing's defaults; 16-bit results may differ from torch's by one rounding of the float32
# value, near zero too (test_ops bounds them in ulps)
TOL = {torch.float32: (1.3e-6, 1e-5), torch.float64: (1e-7, 1e-7), torch.float16: (1e-3, 1e-3),
       torch.bfloat16: (1.6e-2, 1.6e-2)}


def _x(dtype, shape=(6, 8, 10), seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(shape, generator=g, device="cuda", dtype=torch.float64) * 3).to(dtype)


def _unwrap(fn):
    """Parameters of torch's function: its signature, or (for C builtins) the documented one."""
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_signature_matches_torch(name):
    ours = inspect.signature(getattr(CF, name)).parameters
    theirs = _unwrap(getattr(F, name))
    if theirs is None:
        pytest.skip(f"F.{name} is a builtin without a Python signature")
    assert [(p.name, p.default) for p in ours.values()] == \
        [(p.name, p.default) for p in theirs.values()], name


def test_builtin_signatures():
    # F.gelu and F.softplus are C builtins: their documented signatures
    assert str(inspect.signature(CF.gelu)) == "(input, approximate='none')"
    assert str(inspect.signature(CF.softplus)) == "(input, beta=1.0, threshold=20.0)"
    assert str(inspect.signature(CF.glu)) == "(input, dim=-1)"
    assert str(inspect.signature(CF.leaky_relu)) == "(input, negative_slope=0.01, inplace=False)"


@pytest.mark.parametrize("name, fn, kwargs_list", CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_values_match_torch(name, fn, kwargs_list, dtype):
    x = _x(dtype)
    for kwargs in kwargs_list:
        expected = fn(x, **kwargs)
        actual = getattr(CF, name)(x, **kwargs)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, (name, kwargs)
        rtol, atol = TOL[dtype]
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, msg=lambda m: f"{name} {kwargs}: {m}")


@pytest.mark.parametrize("name", ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "silu", "mish",
                                  "hardswish", "hardsigmoid", "hardtanh", "threshold"])
def test_inplace(name):
    x = _x(torch.float32)
    args = {"threshold": (0.5, -2.0)}.get(name, ())
    expected = getattr(F, name)(x.clone(), *args)
    y = x.clone()
    version = y._version
    out = getattr(CF, name)(y, *args, inplace=True)
    assert out is y and y._version > version
    torch.testing.assert_close(y, expected)


def test_inplace_aliases():
    x = _x(torch.float32)
    for name, args in [("relu_", ()), ("elu_", ()), ("leaky_relu_", (0.1,)), ("hardtanh_", ()),
                       ("threshold_", (0.5, -2.0)), ("celu_", ()), ("selu_", ())]:
        y = x.clone()
        assert getattr(CF, name)(y, *args) is y
        torch.testing.assert_close(y, getattr(F, name)(x.clone(), *args), msg=name)


def test_autograd():
    x = _x(torch.float64, (4, 6)).requires_grad_()
    for name in ("silu", "gelu", "mish", "softplus"):
        assert torch.autograd.gradcheck(getattr(CF, name), (x,)), name
    assert torch.autograd.gradcheck(lambda t: CF.glu(t, 0), (x,))
    assert torch.autograd.gradcheck(lambda t: CF.gelu(t, approximate="tanh"), (x,))


def _cuact_op(name, kwargs):
    """(op name, the call cuact_torch.functional should make) for a CASES row."""
    if name == "gelu" and kwargs.get("approximate") == "tanh":
        return "gelu_tanh", lambda t: ops.gelu_tanh(t)
    if name == "gelu":
        return "gelu", lambda t: ops.gelu(t)
    if name == "glu":
        return "gated_sigmoid_packed", lambda t: ops.gated_sigmoid_packed(t, activate_first=False)
    return name, lambda t: getattr(ops, name)(t, *kwargs.values())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_fast_path_runs_the_op(dtype):
    # the node autograd records tells whose forward ran: cuact's op's own, not torch's, for a CUDA
    # tensor of a cuact dtype (functional and in place); torch's for a CPU tensor
    x = _x(dtype, (4, 8)).requires_grad_()
    checked = 0
    for name, fn, kwargs_list in CASES:
        for kwargs in kwargs_list:
            if name == "glu" and kwargs.get("dim", -1) not in (-1, 1):
                continue  # other dims reach the op through a view (test_glu_any_dim_and_layout)
            op_name, call = _cuact_op(name, kwargs)
            if not hasattr(ops, op_name + "_backward"):
                continue  # a build without this op (or its derivative)
            want = call(x).grad_fn.name()
            assert getattr(CF, name)(x, **kwargs).grad_fn.name() == want, (name, kwargs)
            assert fn(x, **kwargs).grad_fn.name() != want, (name, kwargs)
            checked += 1
    if hasattr(ops, "silu_backward"):
        cpu = torch.randn(5, requires_grad=True)
        assert CF.silu(cpu).grad_fn.name() == F.silu(cpu).grad_fn.name()
    for name, args in [("relu", ()), ("silu", ()), ("leaky_relu", (0.2,)), ("hardtanh", (-2.0, 0.5))]:
        if not hasattr(ops, name + "_backward"):
            continue
        ours, theirs = x * 1.0, x * 1.0  # not leaves
        getattr(ops, name + "_")(theirs, *args)
        assert getattr(CF, name)(ours, *args, inplace=True) is ours
        assert ours.grad_fn.name() == theirs.grad_fn.name(), name
        torch.testing.assert_close(ours, theirs)
        checked += 1
    assert checked > 0


def test_native_call_is_the_op():
    # the extension's eager path (functional.py: _fast_path) calls the op itself: the same results
    # to the bit, autograd node, version bump and errors as torch.ops; a subclass and a torch
    # function mode go through the OpOverload, whose __torch_function__ handling they see
    import functools
    if cuact_torch.LOADED_FROM != "installed" or not hasattr(ops, "leaky_relu"):
        pytest.skip("the native call path comes with the built extension of the whole family")
    assert isinstance(CF._silu, functools.partial) and isinstance(CF._leaky_relu_, functools.partial)
    x = _x(torch.float32, (257, 3))
    x[0, :3] = torch.tensor([float("nan"), float("inf"), -0.0])
    for name, args in [("silu", ()), ("leaky_relu", (0.2,)), ("hardtanh", (-2.0, 0.5)),
                       ("softplus", (2.0, 5.0))]:
        want = getattr(ops, name).default(x, *args)
        torch.testing.assert_close(getattr(CF, name)(x, *args), want, rtol=0, atol=0,
                                   equal_nan=True)
        if name == "softplus":
            continue  # F.softplus has no in-place form
        ours, theirs = x.clone(), x.clone()
        version = ours._version
        assert getattr(CF, name)(ours, *args, inplace=True) is ours
        getattr(ops, name + "_")(theirs, *args)
        assert ours._version > version, name
        torch.testing.assert_close(ours, theirs, rtol=0, atol=0, equal_nan=True)
    leaf = x.detach().requires_grad_()
    CF.silu(leaf).sum().backward()
    ref = x.detach().requires_grad_()
    ops.silu(ref).sum().backward()
    torch.testing.assert_close(leaf.grad, ref.grad, rtol=0, atol=0, equal_nan=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        CF.silu(leaf, inplace=True)
    with pytest.raises(ValueError) as ours:
        CF.hardtanh(x, 1.0, -1.0)  # min_val > max_val: torch's own error
    with pytest.raises(ValueError) as theirs:
        F.hardtanh(x, 1.0, -1.0)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError) as ours:
        CF._softshrink(x, -1.0)  # the op's own refusal, through the fast path
    with pytest.raises(RuntimeError) as theirs:
        ops.softshrink.default(x, -1.0)
    assert str(ours.value) == str(theirs.value)

    seen = []

    class Logged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    y = CF.silu(x.as_subclass(Logged))
    assert ops.silu.default in seen and isinstance(y, Logged)

    class Mode(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(("mode", func))
            return func(*args, **(kwargs or {}))

    seen.clear()
    with Mode():
        CF.leaky_relu(x, 0.2)
    assert ("mode", ops.leaky_relu.default) in seen


def test_compile_traces_the_functions():
    # the fast paths are plain Python dynamo traces whole: functional, in place, parameters, glu
    torch._dynamo.reset()

    def f(t):
        u = CF.gelu(t * 2.0, approximate="tanh") + CF.leaky_relu(t, 0.2) + CF.hardtanh(t, -2.0, 0.5)
        v = t * 1.0
        CF.relu(v, inplace=True)
        return u + v + CF.silu(t) + CF.glu(t, 0).sum() + CF.glu(t).mean()

    x = _x(torch.float32, (8, 16))
    torch.testing.assert_close(torch.compile(f, fullgraph=True)(x), f(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_glu_any_dim_and_layout(dim):
    x = _x(torch.float32, (4, 6, 8))
    torch.testing.assert_close(CF.glu(x, dim), F.glu(x, dim))
    t = x.transpose(0, 2)  # not contiguous
    torch.testing.assert_close(CF.glu(t, dim), F.glu(t, dim))
    assert CF.glu(x, dim).is_contiguous()


def test_glu_errors_are_torchs():
    x = _x(torch.float32, (3, 4))
    for args, exc in [((x, 0), RuntimeError), ((x, 2), IndexError), ((torch.tensor(1.0, device="cuda"), -1), RuntimeError)]:
        with pytest.raises(exc):
            F.glu(*args)
        with pytest.raises(exc):
            CF.glu(*args)
    assert CF.glu(torch.empty(0, 4, device="cuda"), 1).shape == (0, 2)


def test_gated_packed_any_dim():
    x = _x(torch.float32, (6, 4, 10))
    for dim in (0, 1, 2):
        a, b = x.chunk(2, dim)
        torch.testing.assert_close(CF.gated_packed("silu", x, dim=dim), F.silu(a) * b)
        torch.testing.assert_close(CF.gated_packed("sigmoid", x, dim=dim, activate_first=False),
                                   a * torch.sigmoid(b))
    with pytest.raises(RuntimeError, match="even"):
        CF.gated_packed("silu", _x(torch.float32, (3, 4)), dim=0)


def test_errors_are_torchs():
    x = _x(torch.float32)
    for call in (lambda f: f.gelu(x, approximate="foo"), lambda f: f.hardtanh(x, 1.0, -1.0),
                 lambda f: f.softshrink(x, -1.0)):
        with pytest.raises(Exception) as theirs:
            call(F)
        with pytest.raises(type(theirs.value)):
            call(CF)


def test_fallbacks():
    # CPU, integer and complex tensors go to torch: the same results and the same errors
    cpu = torch.randn(5)
    torch.testing.assert_close(CF.silu(cpu), F.silu(cpu))
    ints = torch.arange(-3, 3, device="cuda")
    assert torch.equal(CF.relu(ints), F.relu(ints))
    with pytest.raises(Exception):
        CF.silu(ints)
    assert CF.softmax is F.softmax  # the rest of torch.nn.functional
    # a sparse CUDA tensor of a cuact dtype is not strided: torch's function, with torch's result
    sparse = _x(torch.float32, (4, 5)).relu().to_sparse()
    assert sparse.is_cuda and sparse.dtype == torch.float32 and sparse.layout is not torch.strided
    ours, theirs = CF.relu(sparse), F.relu(sparse)
    assert ours.layout == theirs.layout
    torch.testing.assert_close(ours.to_dense(), theirs.to_dense())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_results_are_fresh_tensors_of_the_layout_rule(dtype):
    # each result has its own memory on x's device, x's strides where x is flat-dense (a
    # transpose), else contiguous (a strided slice); the backward's as the forward's
    for x in (_x(dtype, (6, 10)), _x(dtype, (6, 10)).t(), _x(dtype, (6, 20))[:, ::2]):
        poison = torch.full_like(x, float("nan"))  # freed: the allocator hands its block to y
        del poison
        y = CF.silu(x)
        flat = x.is_contiguous() or x.t().is_contiguous()
        assert y.device == x.device and y.dtype == x.dtype and y.data_ptr() != x.data_ptr()
        assert y.stride() == (x.stride() if flat else x.contiguous().stride())
        torch.testing.assert_close(y, F.silu(x), **dict(zip(("rtol", "atol"), TOL[dtype])))
        if hasattr(ops, "silu_backward"):
            g = torch.ones_like(x)
            dx = ops.silu_backward(g, x)
            assert dx.device == x.device and dx.dtype == x.dtype
            torch.testing.assert_close(dx, torch.ops.aten.silu_backward(g, x),
                                       **dict(zip(("rtol", "atol"), TOL[dtype])))


def test_empty_unsupported_dtype_refused():
    # the op refuses an empty int64 tensor as it refuses a non-empty one
    for shape in ((0,), (3,)):
        with pytest.raises(RuntimeError, match="unsupported dtype"):
            ops.silu(torch.zeros(shape, dtype=torch.int64, device="cuda"))
        with pytest.raises(RuntimeError, match="unsupported dtype"):
            ops.gated_silu(torch.zeros(shape, dtype=torch.int32, device="cuda"),
                           torch.zeros(shape, dtype=torch.int32, device="cuda"))


MODULES = [("ReLU", {}), ("ReLU6", {}), ("LeakyReLU", {"negative_slope": 0.2}), ("ELU", {"alpha": 0.5}),
           ("SELU", {}), ("CELU", {"alpha": 2.0}), ("GELU", {"approximate": "tanh"}), ("GELU", {}),
           ("SiLU", {}), ("Mish", {}), ("Hardswish", {}), ("Hardsigmoid", {}),
           ("Hardtanh", {"min_val": -2.0, "max_val": 2.0}), ("Softplus", {"beta": 2.0}),
           ("Threshold", {"threshold": 0.1, "value": 20.0}), ("Sigmoid", {}), ("Tanh", {}),
           ("LogSigmoid", {}), ("Softsign", {}), ("Tanhshrink", {}), ("Softshrink", {}),
           ("Hardshrink", {}), ("GLU", {"dim": 1})]


@pytest.mark.parametrize("name, kwargs", MODULES)
def test_modules(name, kwargs):
    ours, theirs = getattr(CN, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    assert isinstance(ours, type(theirs)) and repr(ours) == repr(theirs)
    x = _x(torch.float32)
    torch.testing.assert_close(ours(x), theirs(x))
    if "inplace" in inspect.signature(getattr(torch.nn, name)).parameters:
        m = getattr(CN, name)(**kwargs, inplace=True)
        y = x.clone()
        assert m(y) is y
        torch.testing.assert_close(y, theirs(x))


def test_version_and_headers():
    import re
    text = open(f"{cuact_torch.include_dir()}/cuact/version.cuh").read()
    parts = [re.search(r"#define\s+CUACT_VERSION_%s\s+(\d+)" % k, text).group(1) for k in ("MAJOR", "MINOR", "PATCH")]
    assert cuact_torch.__version__ == ".".join(parts)
    assert all(n in cuact_torch.FAMILIES for n in ("silu", "gelu", "softplus", "threshold")), \
        "the default build has the whole family"
