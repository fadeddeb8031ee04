"""cuact_torch.activation: a user activation from C++ expressions, compiled by NVRTC
(python/cuact_torch/_nvrtc.py) and registered with torch.library: forward, in place, out,
backward, autograd, fakes and torch.compile, the fused ops, the disk cache and bad sources.
Skipped without torch or a CUDA device."""
import json
import os
import subprocess
import sys
import warnings

from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import cuact_torch  # noqa: E402
from cuact_torch import _nvrtc, custom  # noqa: E402

SWISH_FORWARD = "x / (C(1) + exp(-C(beta) * x))"
SWISH_DERIVATIVE = ("C s = C(1) / (C(1) + exp(-C(beta) * x)); "
                    "return s + C(beta) * x * s * (C(1) - s);")

with warnings.catch_warnings():
    warnings.simplefilter("error")  # the NVRTC path: no load_inline fallback warning
    SWISH = cuact_torch.activation("swish_test", forward=SWISH_FORWARD,
                                   derivative=SWISH_DERIVATIVE, params={"beta": 1.0},
                                   namespace="cuact_test", fused=True)
    NO_GRAD = cuact_torch.activation("softsign_test", "x / (C(1) + fabs(x))",
                                     namespace="cuact_test")
    FROM_OUTPUT = cuact_torch.activation("sigmoid_test", "C(1) / (C(1) + exp(-x))",
                                         derivative_from_output="y * (C(1) - y)",
                                         namespace="cuact_test")
    SELECT = cuact_torch.activation("relu_test", "x > C(0) ? x : C(0)",
                                    gradient="x > C(0) ? dy : C(0)", namespace="cuact_test")
ops = torch.ops.cuact_test
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def swish_ref(x, beta=1.0):
    return x * torch.sigmoid(beta * x)


def tolerance(dtype):
    return {"atol": 2e-2, "rtol": 2e-2} if dtype in (torch.float16, torch.bfloat16) else \
        {"atol": 1e-6, "rtol": 1e-5}


def test_compiled_through_nvrtc():
    family = custom._families[("cuact_test", "swish_test")]
    assert ("forward", torch.float32, None, torch.cuda.current_device()) in family.modules
    assert _nvrtc.nvrtc_version()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_forward_inplace_out_backward(dtype):
    x = torch.randn(1000, 3, device="cuda", dtype=dtype) * 4
    for beta in (1.0, 1.7):
        torch.testing.assert_close(ops.swish_test(x, beta), swish_ref(x.double(), beta).to(dtype),
                                   **tolerance(dtype))
    torch.testing.assert_close(ops.softsign_test(x), (x.double() / (1 + x.double().abs())).to(dtype),
                               atol=2e-2, rtol=2e-2)
    z = x.clone()
    assert ops.swish_test_(z) is z
    torch.testing.assert_close(z, ops.swish_test(x))
    out = torch.empty_like(x)
    ops.swish_test.out(x, 1.3, out=out)
    torch.testing.assert_close(out, ops.swish_test(x, 1.3))
    dy = torch.randn_like(x)
    xd = x.double().requires_grad_()
    (want,) = torch.autograd.grad(swish_ref(xd, 1.3), xd, dy.double())
    torch.testing.assert_close(ops.swish_test_backward(dy, x, 1.3), want.to(dtype), **tolerance(dtype))


@pytest.mark.parametrize("n", [0, 1, 7, 4096 + 3])
def test_sizes_offsets_and_strides(n):
    base = torch.randn(n + 5, device="cuda")
    for offset in (0, 1, 3):  # vectors after a scalar head, and a tail
        x = base[offset:offset + n]
        torch.testing.assert_close(ops.swish_test(x), swish_ref(x))
    t = torch.randn(6, 10, device="cuda").t()  # dense, not contiguous: its strides are kept
    y = ops.swish_test(t)
    assert y.stride() == t.stride()
    torch.testing.assert_close(y, swish_ref(t))
    s = torch.randn(8, 10, device="cuda")[:, ::2]  # not dense: computed on a copy
    torch.testing.assert_close(ops.swish_test(s), swish_ref(s))
    torch.testing.assert_close(ops.swish_test_(s.clone()), swish_ref(s))


def test_gradcheck_and_inplace_gradient():
    x = torch.randn(30, device="cuda", dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: ops.swish_test(t, 1.3), (x,))
    assert torch.autograd.gradcheck(ops.sigmoid_test, (x,))  # from the output
    xs = (torch.rand(30, device="cuda", dtype=torch.float64) + 0.1) * \
        torch.where(torch.rand(30, device="cuda") > 0.5, 1.0, -1.0).double()
    assert torch.autograd.gradcheck(ops.relu_test, (xs.requires_grad_(),))  # gradient=

    def in_place(t):
        u = t * 1.0
        ops.swish_test_(u, 1.3)
        return u
    assert torch.autograd.gradcheck(in_place, (x,))
    v = torch.randn(4, device="cuda")
    version = v._version
    ops.swish_test_(v)
    assert v._version > version
    with pytest.raises(RuntimeError, match="no derivative"):
        ops.softsign_test(x)


def test_opcheck_and_compile():
    x = torch.randn(8, 5, device="cuda", dtype=torch.float64, requires_grad=True)
    torch.library.opcheck(ops.swish_test.default, (x, 0.7))
    torch.library.opcheck(ops.swish_test_.default, (x.detach().clone(), 0.7),
                          test_utils=["test_schema", "test_faketensor"])
    torch._dynamo.reset()
    f = torch.compile(lambda t: ops.swish_test(t * 2, 0.7) - t, fullgraph=True)
    y = f(x)
    torch.testing.assert_close(y, ops.swish_test(x * 2, 0.7) - x)
    (g,) = torch.autograd.grad(y.sum(), x)
    xr = x.detach().clone().requires_grad_()
    (gr,) = torch.autograd.grad((swish_ref(xr * 2, 0.7) - xr).sum(), xr)
    torch.testing.assert_close(g, gr)


def test_fused_ops_of_a_user_activation():
    g = torch.Generator(device="cuda").manual_seed(3)
    a, b = (torch.randn(64, 24, device="cuda", dtype=torch.float64, generator=g) * 3 for _ in range(2))
    bias = torch.randn(24, device="cuda", dtype=torch.float64, generator=g)
    torch.testing.assert_close(ops.gated_swish_test(a, b, 1.3), swish_ref(a, 1.3) * b)
    torch.testing.assert_close(ops.gated_swish_test_packed(torch.cat([a, b], -1), 1.3),
                               swish_ref(a, 1.3) * b)
    torch.testing.assert_close(
        ops.gated_swish_test_packed(torch.cat([b, a], -1), 1.3, activate_first=False),
        swish_ref(a, 1.3) * b)
    torch.testing.assert_close(ops.bias_swish_test(a, bias, 1.3), swish_ref(a + bias, 1.3))
    torch.testing.assert_close(ops.cast_swish_test(a, 1.3, dtype=torch.float32),
                               swish_ref(a, 1.3).float())
    xb = a.to(torch.bfloat16)
    torch.testing.assert_close(ops.cast_swish_test(xb, dtype=torch.float8_e4m3fn).float(),
                               swish_ref(xb.double()).to(torch.float8_e4m3fn).float(),
                               rtol=0.13, atol=2.0 ** -9)
    torch.testing.assert_close(ops.gated_swish_test(xb, xb), (swish_ref(xb.double()) * xb.double())
                               .to(torch.bfloat16), atol=5e-2, rtol=2e-2)
    a6, b6, bias6, ab6 = (t.detach().clone().requires_grad_()
                          for t in (a[:6], b[:6], bias, torch.cat([a[:6], b[:6]], -1)))
    assert torch.autograd.gradcheck(lambda p, q: ops.gated_swish_test(p, q, 1.3), (a6, b6))
    assert torch.autograd.gradcheck(lambda p, q: ops.bias_swish_test(p, q, 1.3), (a6, bias6))
    assert torch.autograd.gradcheck(lambda p: ops.gated_swish_test_packed(p, 1.3), (ab6,))
    assert torch.autograd.gradcheck(
        lambda p: ops.gated_swish_test_packed(p, 1.3, activate_first=False), (ab6,))
    torch.library.opcheck(ops.bias_swish_test.default, (a6, bias6, 0.7))
    torch._dynamo.reset()
    f = torch.compile(lambda p, q: ops.bias_swish_test(p * 2, q, 0.7), fullgraph=True)
    torch.testing.assert_close(f(a, bias), swish_ref(a * 2 + bias, 0.7))
    assert not hasattr(ops, "gated_softsign_test")  # fused ops only where asked for


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_quantize_of_a_user_activation(dtype):
    g = torch.Generator(device="cuda").manual_seed(5)
    x = (torch.randn(4096 + 7, device="cuda", generator=g) * 3).to(dtype)
    x[5], x[6], x[7] = float("nan"), -0.0, float("-inf")
    x = x[1:]  # misaligned: a scalar head before the vectors
    scale = torch.tensor([2.0], device="cuda")
    for target in (None, torch.float8_e5m2):
        q, amax = ops.quantize_swish_test(x, 1.3, scale=scale, dtype=target)
        assert q.dtype == (target or torch.float8_e4m3fn) and q.shape == x.shape
        assert amax.dtype == torch.float32 and amax.dim() == 0
        y = swish_ref(x.double(), 1.3)
        torch.testing.assert_close(amax.double(), y[~y.isnan()].abs().max(), rtol=1e-5, atol=0)
        want = (y * 2.0).float().to(q.dtype).float()
        torch.testing.assert_close(q.float(), want, rtol=0.26, atol=2.0 ** -9, equal_nan=True)
    q, amax = ops.quantize_swish_test(x[:0], scale=scale)
    assert q.numel() == 0 and float(amax) == 0.0
    q, amax = ops.quantize_swish_test(x.float().detach().clone().requires_grad_(), scale=scale)
    assert not q.requires_grad and not amax.requires_grad  # not differentiable, as the built-in
    with pytest.raises(RuntimeError, match="float8_e4m3fn or float8_e5m2"):
        ops.quantize_swish_test(x, scale=scale, dtype=torch.float16)
    with pytest.raises(RuntimeError, match="one element"):
        ops.quantize_swish_test(x, scale=torch.ones(2, device="cuda"))
    torch.library.opcheck(ops.quantize_swish_test.default, (x,), {"scale": scale},
                          test_utils=["test_schema", "test_faketensor"])


def test_same_name_other_source_refused():
    assert cuact_torch.activation(  # identical source: the defined op
        "swish_test", forward=SWISH_FORWARD, derivative=SWISH_DERIVATIVE, params={"beta": 1.0},
        namespace="cuact_test", fused=True) is SWISH
    with pytest.raises(ValueError, match="already defined"):
        cuact_torch.activation("swish_test", "x", namespace="cuact_test")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_includes_let_an_expression_call_a_built_in(dtype):
    # cuact::gelu's own math through the JIT path: the same results as the built-in op, and its
    # derivative through autograd
    op = cuact_torch.activation("gelu_twice_test", "C(2) * cuact::gelu{}(x)",
                                derivative="C(2) * cuact::gelu{}.derivative(x)",
                                namespace="cuact_test", dtype=dtype, heavy=True,
                                includes=["cuact/activations.cuh"])  # bf16: the one-vector kernel
    x = torch.randn(4099, device="cuda", dtype=dtype) * 3
    x[:4] = torch.tensor([float("nan"), 30.0, -30.0, -0.0])  # infinities: torch.gelu(-inf) is NaN
    want = 2 * torch.nn.functional.gelu(x.double())
    torch.testing.assert_close(op(x), want.to(dtype), equal_nan=True, **tolerance(dtype))
    xr = x[4:].detach().clone().requires_grad_()
    op(xr).sum().backward()
    xd = x[4:].double().requires_grad_()
    (2 * torch.nn.functional.gelu(xd)).sum().backward()
    torch.testing.assert_close(xr.grad, xd.grad.to(dtype), **tolerance(dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
def test_accuracy_tag_gives_the_built_in_math(dtype):
    # cuact::forward_at(cuact::selu{}, x, accuracy) is the math torch.ops.cuact.selu runs for this dtype (for 16-bit
    # results the shorter 16-bit math): equal results to the bit, forward and backward
    op = cuact_torch.activation("selu_tagged_test", "cuact::forward_at(cuact::selu{}, x, accuracy)",
                                derivative="cuact::derivative_at(cuact::selu{}, x, accuracy)",
                                namespace="cuact_test", dtype=dtype, heavy=True,
                                includes=["cuact/activations.cuh"])
    x = torch.randn(3 * 4096 + 5, device="cuda", dtype=dtype) * 4
    x[:7] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e-40, -1e-40])
    for part in (x, x[1:]):  # a misaligned start too
        torch.testing.assert_close(op(part), torch.ops.cuact.selu(part), rtol=0, atol=0,
                                   equal_nan=True)
    dy = torch.randn_like(x)
    torch.testing.assert_close(torch.ops.cuact_test.selu_tagged_test_backward(dy, x),
                               torch.ops.cuact.selu_backward(dy, x), rtol=0, atol=0,
                               equal_nan=True)
    # without the tag, the 16-bit result comes from float-accurate math: within a rounding step
    untagged = cuact_torch.activation("selu_untagged_test", "cuact::selu{}(x)",
                                      namespace="cuact_test", dtype=dtype, heavy=True,
                                      includes=["cuact/activations.cuh"])
    torch.testing.assert_close(untagged(x), torch.ops.cuact.selu(x), equal_nan=True,
                               **tolerance(dtype))


def test_includes_are_checked():
    for bad in ["cuact/activations.cuh>\n#include <x", "../secret.h", "a b.h", "", 3]:
        with pytest.raises(ValueError, match="includes"):
            cuact_torch.activation("bad_include_test", "x", namespace="cuact_test",
                                   includes=[bad])
    with pytest.raises(cuact_torch.CompileError, match="no_such_header"):
        cuact_torch.activation("missing_include_test", "x", namespace="cuact_test",
                               includes="cuact/no_such_header.cuh")
    # the same name and expression with other includes is another source
    cuact_torch.activation("include_key_test", "x", namespace="cuact_test", dtype=None)
    with pytest.raises(ValueError, match="already defined"):
        cuact_torch.activation("include_key_test", "x", namespace="cuact_test", dtype=None,
                               includes="cuda/std/cmath")


def test_bad_source_reports_the_expression_position(tmp_path, monkeypatch):
    monkeypatch.setenv("CUACT_TORCH_CACHE", str(tmp_path))
    with pytest.raises(_nvrtc.CompileError) as info:
        cuact_torch.activation("bad_test", "x + undefined_thing * C(2)", namespace="cuact_test")
    e = info.value
    assert (e.part, e.line, e.column) == ("forward", 1, 5)
    assert "undefined_thing" in str(e) and "forward, line 1, column 5" in str(e)
    assert "error" in e.log
    with pytest.raises(_nvrtc.CompileError) as info:
        cuact_torch.activation("bad_test", "x", derivative="C t = x;\nreturn t + exp(x, x);",
                               namespace="cuact_test", dtype=None)
        ops.bad_test_backward(torch.ones(4, device="cuda"), torch.ones(4, device="cuda"))
    assert (info.value.part, info.value.line, info.value.column) == ("derivative", 2, 12)
    assert not os.listdir(tmp_path)  # nothing cached for a source that failed
    # the first failure registered nothing: the name is free for a source that compiles
    fixed = cuact_torch.activation("bad_test_fixed", "x * C(2)", namespace="cuact_test")
    torch.testing.assert_close(fixed(torch.ones(3, device="cuda")), torch.full((3,), 2.0, device="cuda"))


def test_warm_cache_in_a_new_process(tmp_path):
    code = (
        "import time, torch; torch.cuda.init(); import cuact_torch\n"
        "t = time.perf_counter()\n"
        "op = cuact_torch.activation('warm_test', 'x * C(3)', namespace='cuact_test')\n"
        "y = op(torch.ones(4, device='cuda')); torch.cuda.synchronize()\n"
        "print('SECONDS', time.perf_counter() - t, float(y.sum()))\n")
    env = dict(os.environ, CUACT_TORCH_CACHE=str(tmp_path), CUACT_TORCH_VERBOSE="1")
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert "compiling" in runs[0].stderr and "compiling" not in runs[1].stderr
    assert [f for f in os.listdir(tmp_path) if f.endswith(".cubin")]
    seconds = float(runs[1].stdout.split("SECONDS")[1].split()[0])
    print(f"warm: {seconds * 1e3:.1f} ms")
    assert seconds < 0.5  # target 10 ms on an idle machine; loose against a busy test host


# Modules a ready op must not need: each takes seconds to import (symbolic_shapes brings sympy;
# torch._check imports it on its first call), and `import cuact_torch` leaves them alone.
FIRST_CALL_HEAVY = ("torch.fx.experimental.symbolic_shapes", "sympy", "torch._dynamo",
                    "torch._inductor", "torch._subclasses.fake_tensor",
                    "torch._functorch.aot_autograd", "torch.distributed.tensor")


def test_warm_first_call_imports_no_heavy_module(tmp_path):
    code = (
        "import json, sys, torch; torch.cuda.init(); import cuact_torch\n"
        "def new(before): return sorted(m for m in set(sys.modules) - before)\n"
        "x = torch.randn(64, device='cuda')\n"
        f"already = [m for m in {list(FIRST_CALL_HEAVY)!r} if m in sys.modules]\n"
        "before = set(sys.modules)\n"
        "op = cuact_torch.activation('heavy_test', 'x * C(3)', derivative='C(3)',"
        " namespace='cuact_test')\n"
        "y = op(x); torch.cuda.synchronize()\n"
        "first = new(before); before = set(sys.modules)\n"
        "xr = x.detach().requires_grad_(); op(xr).sum().backward(); torch.cuda.synchronize()\n"
        "print(json.dumps(dict(already=already, first=first, backward=new(before))))\n")
    env = dict(os.environ, CUACT_TORCH_CACHE=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    done = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=300) for _ in range(2)]  # cold, then warm
    for r in done:
        assert r.returncode == 0, r.stderr[-3000:]
    result = json.loads(done[1].stdout.strip().splitlines()[-1])

    def heavy(names):
        return [m for m in names if m in FIRST_CALL_HEAVY]
    print(f"loaded by torch and cuact_torch already: {result['already']}; a warm define + first "
          f"call imported {len(result['first'])} modules {heavy(result['first'])}, the first "
          f"backward {len(result['backward'])} {heavy(result['backward'])}")
    assert heavy(result["first"]) == [], result["first"]
