"""PyTorch's own OpInfo samples (torch.testing._internal.common_methods_invocations.op_db) for each
activation cuact_torch.functional has, on CUDA, in every dtype torch supports there: each sample
matches torch within torch.testing's default tolerances (float64 hardsigmoid/hardswish/GELU
against the exact formula, see reference.EXACT_FLOAT64), and each of torch's error inputs is
refused with torch's kind of error. Skipped (with the reason) without torch or a CUDA device."""
import sys
import types

from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

if "expecttest" not in sys.modules:  # torch.testing._internal imports it; only its TestCase is used
    try:
        import expecttest  # noqa: F401
    except ImportError:
        import unittest
        sys.modules["expecttest"] = types.SimpleNamespace(TestCase=unittest.TestCase)

try:
    from torch.testing._internal.common_methods_invocations import op_db
except Exception as e:  # noqa: BLE001  (torch's internal test helpers missing or changed)
    pytest.skip(f"torch's OpInfo database is not importable: {e}", allow_module_level=True)

import cuact_torch.functional as CF  # noqa: E402
from cuact_torch.reference import EXACT_FLOAT64  # noqa: E402

# OpInfo name -> (cuact_torch.functional name, cuact op that computes it, EXACT_FLOAT64 key)
NAMES = {"nn.functional." + n: (n, n, n) for n in (
    "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "silu", "mish", "hardswish", "hardsigmoid",
    "hardtanh", "softplus", "threshold", "logsigmoid", "softsign", "tanhshrink", "softshrink",
    "hardshrink")}
NAMES.update({"sigmoid": ("sigmoid", "sigmoid", None), "tanh": ("tanh", "tanh", None),
              "nn.functional.gelu": ("gelu", "gelu", "gelu"),
              "nn.functional.glu": ("glu", "gated_sigmoid_packed", None)})
OPS = [op for op in op_db if op.name in NAMES and not op.variant_test_name]


def _expected(op, sample, dtype):
    name = NAMES[op.name][0]
    source = sample.input.clone() if sample.kwargs.get("inplace") else sample.input
    expected = op(source, *sample.args, **sample.kwargs)
    key = NAMES[op.name][2]
    if dtype == torch.float64 and key == "gelu" and sample.kwargs.get("approximate", "none") == "tanh":
        key = "gelu_tanh"
    if dtype == torch.float64 and key in EXACT_FLOAT64 and name in ("hardsigmoid", "hardswish", "gelu"):
        # the documented difference: torch's float64 kernels round a float 1/6 or cancel
        expected = EXACT_FLOAT64[key](sample.input)
    return expected


def _check(op, dtype, sample, actual, expected):
    """Within torch's default tolerances, or (16-bit dtypes, where cuact rounds its float result
    once and torch may round differently) no farther from the float64 value than torch's result
    is, give or take half a unit in the last place: the documented accuracy contract."""
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True)
        return
    except AssertionError as error:
        if dtype not in (torch.float16, torch.bfloat16):
            raise AssertionError(f"{op.name} {dtype} {sample}: {error}") from None
    kwargs = {k: v for k, v in sample.kwargs.items() if k != "inplace"}
    exact = op(sample.input.double(), *sample.args, **kwargs)
    half_ulp = torch.finfo(dtype).eps / 2 * exact.abs()
    ours = (actual.double() - exact).abs()
    theirs = (expected.double() - exact).abs()
    ok = (ours <= theirs + half_ulp) | (actual.isnan() & expected.isnan()) | (actual.double() == exact)
    assert bool(ok.all()), f"{op.name} {dtype} {sample}: farther from float64 than torch"


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_opinfo_samples(op):
    fn = getattr(CF, NAMES[op.name][0])
    checked = 0
    for dtype in sorted(op.supported_dtypes("cuda"), key=str):
        for sample in op.sample_inputs("cuda", dtype, requires_grad=False):
            if not isinstance(sample.input, torch.Tensor):
                continue
            kwargs = dict(sample.kwargs)
            inplace = kwargs.pop("inplace", False)
            expected = _expected(op, sample, dtype)
            x = sample.input.clone() if inplace else sample.input
            actual = fn(x, *sample.args, **kwargs, **({"inplace": True} if inplace else {}))
            _check(op, dtype, sample, actual, expected)
            checked += 1
    assert checked > 0, op.name


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_opinfo_errors(op):
    fn = getattr(CF, NAMES[op.name][0])
    try:
        errors = list(op.error_inputs("cuda"))
    except Exception:  # noqa: BLE001
        errors = []
    if not errors:
        pytest.skip(f"{op.name} has no error inputs in this torch")
    for error in errors:
        s = error.sample_input
        with pytest.raises(error.error_type):
            fn(s.input, *s.args, **s.kwargs)


def test_empty_integer_refused_as_torch_is():
    # torch refuses silu/gelu of integer tensors, empty or not; cuact's op does too
    for shape in ((0,), (2, 0), (3,)):
        x = torch.zeros(shape, dtype=torch.int64, device="cuda")
        with pytest.raises(RuntimeError):
            torch.nn.functional.silu(x)
        with pytest.raises(RuntimeError):
            torch.ops.cuact.silu(x)
        with pytest.raises(RuntimeError):
            CF.silu(x)
