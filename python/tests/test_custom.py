"""cuact_torch.activation: a user activation from C++ expressions, through CUACT_TORCH_OP_FAMILY
(include/cuact/torch.cuh), its fused ops through CUACT_TORCH_FUSED_OPS (torch_fused.cuh), and
load_inline. Skipped without torch or a CUDA device."""
from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import cuact_torch  # noqa: E402

SWISH = cuact_torch.activation(
    "swish_test",
    forward="x / (C(1) + exp(-C(beta) * x))",
    derivative="C s = C(1) / (C(1) + exp(-C(beta) * x)); return s + C(beta) * x * s * (C(1) - s);",
    params={"beta": 1.0},
    namespace="cuact_test",
    fused=True,  # gated_swish_test(_packed), bias_, cast_ and quantize_swish_test, and the backwards
)
NO_GRAD = cuact_torch.activation("softsign_test", "x / (C(1) + fabs(x))", namespace="cuact_test")
ops = torch.ops.cuact_test


def swish_ref(x, beta=1.0):
    return x * torch.sigmoid(beta * x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_forward_backward(dtype):
    x = torch.randn(1000, 3, device="cuda", dtype=dtype) * 4
    for beta in (1.0, 1.7):
        torch.testing.assert_close(ops.swish_test(x, beta), swish_ref(x.double(), beta).to(dtype),
                                   atol=1e-6 if dtype != torch.float16 and dtype != torch.bfloat16 else 2e-2,
                                   rtol=1e-5 if dtype != torch.float16 and dtype != torch.bfloat16 else 2e-2)
    torch.testing.assert_close(ops.softsign_test(x), (x.double() / (1 + x.double().abs())).to(dtype),
                               atol=2e-2, rtol=2e-2)
    z = x.clone()
    ops.swish_test_(z)
    torch.testing.assert_close(z, ops.swish_test(x))


def test_gradcheck_and_inplace_gradient():
    x = torch.randn(30, device="cuda", dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: ops.swish_test(t, 1.3), (x,))

    def in_place(t):  # no derivative_from_output: the op saves a copy of x
        u = t * 1.0
        ops.swish_test_(u, 1.3)
        return u
    assert torch.autograd.gradcheck(in_place, (x,))
    with pytest.raises(RuntimeError, match="no derivative"):
        ops.softsign_test(x)


def test_opcheck_and_compile():
    x = torch.randn(8, 5, device="cuda", dtype=torch.float64, requires_grad=True)
    torch.library.opcheck(ops.swish_test.default, (x, 0.7))
    torch.library.opcheck(ops.swish_test_.default, (x.detach().clone(), 0.7),
                          test_utils=["test_schema", "test_faketensor", "test_aot_dispatch_dynamic"])
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
    torch.testing.assert_close(ops.gated_swish_test_packed(torch.cat([a, b], -1), 1.3), swish_ref(a, 1.3) * b)
    torch.testing.assert_close(ops.gated_swish_test_packed(torch.cat([b, a], -1), 1.3, activate_first=False),
                               swish_ref(a, 1.3) * b)
    torch.testing.assert_close(ops.bias_swish_test(a, bias, 1.3), swish_ref(a + bias, 1.3))
    # the parameters sit before cast's and quantize's keyword-only arguments
    torch.testing.assert_close(ops.cast_swish_test(a, 1.3, dtype=torch.float32), swish_ref(a, 1.3).float())
    q, amax = ops.quantize_swish_test(a, 1.3, scale=torch.tensor(0.5, device="cuda"), dtype=torch.float8_e5m2)
    want = swish_ref(a, 1.3)
    torch.testing.assert_close(q.double(), (want * 0.5).to(torch.float8_e5m2).double(), rtol=0.25, atol=2.0 ** -16)
    torch.testing.assert_close(amax.double(), want.abs().max(), rtol=1e-2, atol=0)
    a6, b6, bias6, ab6 = (t.detach().clone().requires_grad_() for t in (a[:6], b[:6], bias, torch.cat([a[:6], b[:6]], -1)))
    assert torch.autograd.gradcheck(lambda p, q: ops.gated_swish_test(p, q, 1.3), (a6, b6))
    assert torch.autograd.gradcheck(lambda p, q: ops.bias_swish_test(p, q, 1.3), (a6, bias6))
    assert torch.autograd.gradcheck(lambda p: ops.gated_swish_test_packed(p, 1.3), (ab6,))
    torch.library.opcheck(ops.bias_swish_test.default, (a6, bias6, 0.7))
    torch._dynamo.reset()
    f = torch.compile(lambda p, q: ops.bias_swish_test(p * 2, q, 0.7), fullgraph=True)
    torch.testing.assert_close(f(a, bias), swish_ref(a * 2 + bias, 0.7))
    assert not hasattr(ops, "gated_softsign_test")  # fused ops only where asked for


def test_same_name_other_source_refused():
    assert cuact_torch.activation(  # identical source: the cached op
        "swish_test", forward="x / (C(1) + exp(-C(beta) * x))",
        derivative="C s = C(1) / (C(1) + exp(-C(beta) * x)); return s + C(beta) * x * s * (C(1) - s);",
        params={"beta": 1.0}, namespace="cuact_test", fused=True) is SWISH
    with pytest.raises(ValueError, match="already defined"):
        cuact_torch.activation("swish_test", "x", namespace="cuact_test")
