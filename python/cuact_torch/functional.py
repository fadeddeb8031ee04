"""torch.nn.functional's activations, computed by cuact: the same names, signatures and defaults.

    import cuact_torch.functional as CF
    y = CF.gelu(x, approximate="tanh")        # torch.ops.cuact.gelu_tanh
    CF.leaky_relu(x, 0.2, inplace=True)       # torch.ops.cuact.leaky_relu_
    CF.glu(x, dim=1)                          # any dim

A call runs cuact's op for a CUDA tensor of float32, float64, float16 or bfloat16 (DTensors
included) and torch.nn.functional's own function otherwise: CPU tensors, other dtypes, an op the
library was built without (CUACT_TORCH_FAMILY=0), and parameters torch refuses (so the error is
torch's). Any other name (F.softmax, F.prelu, ...) is torch.nn.functional's.
"""
import torch
import torch.nn.functional as _F

from . import _fakes

_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
_ops = torch.ops.cuact

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_",
           "celu", "celu_", "gelu", "silu", "mish", "hardswish", "hardsigmoid", "hardtanh",
           "hardtanh_", "softplus", "threshold", "threshold_", "sigmoid", "tanh", "logsigmoid",
           "softsign", "tanhshrink", "softshrink", "hardshrink", "glu", "swiglu_clamped",
           "swiglu_clamped_packed"]


def _bind():
    """{op name: torch.ops.cuact.<name>.default} for the ops these functions call: the overloads
    themselves, since a packet's call first picks an overload by the arguments. Built once, so
    that a call (or torch.compile's trace of one) does a plain dict lookup."""
    names = [n + s for n in _fakes.discover("cuact") for s in ("", "_")]
    names += ["gated_" + n + s for n in _fakes.discover_fused("cuact") for s in ("", "_packed")]
    names += [g + s for g in _fakes.discover_gates("cuact") for s in ("", "_packed")]
    return {n: getattr(_ops, n).default for n in names if hasattr(_ops, n)}


_bound = _bind()


def _op(name):
    """torch.ops.cuact.<name>.default, or None where the library has no such op."""
    return _bound.get(name)


def _computes(x):
    """Whether x is a tensor cuact computes over: CUDA, strided, of a cuact dtype."""
    return (isinstance(x, torch.Tensor) and x.is_cuda and x.dtype in _DTYPES
            and x.layout == torch.strided)


def _runs(x, name):
    """Whether cuact computes op `name` over x (else torch does)."""
    return _computes(x) and _op(name) is not None


def _apply(name, x, params, inplace, fallback):
    op = _op(name + "_") if inplace else _op(name)
    if op is None or not _computes(x):
        return fallback()
    if inplace:
        op(x, *params)
        return x
    return op(x, *params)


def relu(input, inplace=False):
    return _apply("relu", input, (), inplace, lambda: _F.relu(input, inplace=inplace))


def relu_(input):
    return relu(input, inplace=True)


def relu6(input, inplace=False):
    return _apply("relu6", input, (), inplace, lambda: _F.relu6(input, inplace=inplace))


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _apply("leaky_relu", input, (float(negative_slope),), inplace,
                  lambda: _F.leaky_relu(input, negative_slope, inplace=inplace))


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    return _apply("elu", input, (float(alpha),), inplace, lambda: _F.elu(input, alpha, inplace=inplace))


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    return _apply("selu", input, (), inplace, lambda: _F.selu(input, inplace=inplace))


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    fallback = lambda: _F.celu(input, alpha, inplace=inplace)  # noqa: E731
    if alpha == 0:  # torch's own error (ZeroDivisionError), not cuact's refusal
        return fallback()
    return _apply("celu", input, (float(alpha),), inplace, fallback)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def gelu(input, approximate="none"):
    """approximate="none" is cuact.gelu, "tanh" cuact.gelu_tanh; torch raises for any other."""
    fallback = lambda: _F.gelu(input, approximate=approximate)  # noqa: E731
    if approximate == "none":
        return _apply("gelu", input, (), False, fallback)
    if approximate == "tanh":
        return _apply("gelu_tanh", input, (), False, fallback)
    return fallback()


def silu(input, inplace=False):
    return _apply("silu", input, (), inplace, lambda: _F.silu(input, inplace=inplace))


def mish(input, inplace=False):
    return _apply("mish", input, (), inplace, lambda: _F.mish(input, inplace=inplace))


def hardswish(input, inplace=False):
    return _apply("hardswish", input, (), inplace, lambda: _F.hardswish(input, inplace=inplace))


def hardsigmoid(input, inplace=False):
    return _apply("hardsigmoid", input, (), inplace, lambda: _F.hardsigmoid(input, inplace=inplace))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    fallback = lambda: _F.hardtanh(input, min_val, max_val, inplace=inplace)  # noqa: E731
    if min_val > max_val:  # torch's ValueError
        return fallback()
    return _apply("hardtanh", input, (float(min_val), float(max_val)), inplace, fallback)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def softplus(input, beta=1.0, threshold=20.0):
    return _apply("softplus", input, (float(beta), float(threshold)), False,
                  lambda: _F.softplus(input, beta, threshold))


def threshold(input, threshold, value, inplace=False):
    return _apply("threshold", input, (float(threshold), float(value)), inplace,
                  lambda: _F.threshold(input, threshold, value, inplace=inplace))


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, inplace=True)


def sigmoid(input):
    return _apply("sigmoid", input, (), False, lambda: torch.sigmoid(input))


def tanh(input):
    return _apply("tanh", input, (), False, lambda: torch.tanh(input))


def logsigmoid(input):
    return _apply("logsigmoid", input, (), False, lambda: _F.logsigmoid(input))


def softsign(input):
    return _apply("softsign", input, (), False, lambda: _F.softsign(input))


def tanhshrink(input):
    return _apply("tanhshrink", input, (), False, lambda: _F.tanhshrink(input))


def softshrink(input, lambd=0.5):
    fallback = lambda: _F.softshrink(input, lambd)  # noqa: E731
    if lambd < 0:  # torch's own error
        return fallback()
    return _apply("softshrink", input, (float(lambd),), False, fallback)


def hardshrink(input, lambd=0.5):
    return _apply("hardshrink", input, (float(lambd),), False, lambda: _F.hardshrink(input, lambd))


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the halves of input along dim (cuact.gated_sigmoid_packed).

    For dim other than the last, input is made contiguous (one copy if it is not) and viewed as
    [outer, 2 * inner]: the halves along dim are then the halves of that last dimension, so the
    packed op serves any dim without a transpose, and the result is contiguous, as torch's is.
    """
    fallback = lambda: _F.glu(input, dim)  # noqa: E731
    if not _runs(input, "gated_sigmoid_packed") or input.dim() == 0:
        return fallback()
    d = dim + input.dim() if dim < 0 else dim
    if not 0 <= d < input.dim() or input.shape[d] % 2:
        return fallback()  # torch's IndexError or "Halving dimension must be even"
    op = _op("gated_sigmoid_packed")
    if d == input.dim() - 1:
        return op(input, activate_first=False)
    return _packed_along(op, input, d, (), False)


def _packed_along(op, ab, d, params, activate_first):
    """op over halves along dim d < ab.dim() - 1: ab contiguous, viewed as [outer, 2 * inner]."""
    shape = list(ab.shape)
    outer = inner = 1
    for s in shape[:d]:
        outer *= s
    for s in shape[d:]:
        inner *= s
    out = op(ab.contiguous().reshape(outer, inner), *params, activate_first=activate_first)
    shape[d] //= 2
    return out.reshape(shape)


def gated(name, a, b, *params):
    """act(a) * b in one pass (cuact.gated_<name>: silu is SwiGLU, gelu / gelu_tanh GeGLU)."""
    op = _op("gated_" + name) or getattr(_ops, "gated_" + name)  # AttributeError where absent
    return op(a, b, *params)


def gated_packed(name, ab, *params, dim=-1, activate_first=True):
    """act(first half) * second half of ab along dim (the other way round with
    activate_first=False); dims other than the last as glu does them (a contiguous view)."""
    d = dim + ab.dim() if dim < 0 else dim
    op = getattr(_ops, "gated_" + name + "_packed")
    if d == ab.dim() - 1:
        return op(ab, *params, activate_first=activate_first)
    if not 0 <= d < ab.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ab.dim()}, "
                         f"{ab.dim() - 1}], but got {dim})")
    if ab.shape[d] % 2:
        raise RuntimeError(f"gated_{name}_packed: halving dimension must be even, but dimension "
                           f"{d} is size {ab.shape[d]}")
    return _packed_along(op, ab, d, params, activate_first)


def _swiglu_clamped_reference(a, b, alpha, limit):
    x = a.clamp(max=limit)
    return x * torch.sigmoid(alpha * x) * (b.clamp(min=-limit, max=limit) + 1)


def swiglu_clamped(a, b, alpha=1.702, limit=7.0):
    """gpt-oss's clamped SwiGLU in one pass (cuact.gated_swiglu_clamped):
    x * sigmoid(alpha * x) * (b.clamp(-limit, limit) + 1) with x = a.clamp(max=limit), torch's
    formula where cuact does not run (CPU tensors, other dtypes)."""
    if not (_runs(a, "gated_swiglu_clamped") and _runs(b, "gated_swiglu_clamped")):
        return _swiglu_clamped_reference(a, b, alpha, limit)
    return _op("gated_swiglu_clamped")(a, b, alpha, limit)


def swiglu_clamped_packed(ab, alpha=1.702, limit=7.0, *, dim=-1, interleaved=False):
    """swiglu_clamped of ab's two halves along dim (a first), or with interleaved=True of its even
    and odd elements along the last dim (gpt-oss's gate_up: a = ab[..., ::2], b = ab[..., 1::2]).
    Interleaved: one torch copy makes each row [a | b] (a transpose of its pairs), then the packed
    op's one pass; the packed op on rows of a single pair would need no copy, but its row walk
    over one-element rows is far slower than the copy."""
    if not _runs(ab, "gated_swiglu_clamped_packed"):
        if interleaved:
            return _swiglu_clamped_reference(ab[..., ::2], ab[..., 1::2], alpha, limit)
        a, b = ab.chunk(2, dim=dim)
        return _swiglu_clamped_reference(a, b, alpha, limit)
    op = _op("gated_swiglu_clamped_packed")
    if interleaved:
        if ab.dim() == 0 or ab.shape[-1] % 2:
            raise RuntimeError("gated_swiglu_clamped_packed: interleaved pairs need an even last "
                               f"dimension, got shape {list(ab.shape)}")
        half = ab.shape[-1] // 2
        halves = ab.unflatten(-1, (half, 2)).transpose(-1, -2)  # [..., 2, half]: a, then b
        return op(halves.reshape(*ab.shape[:-1], 2 * half), alpha, limit, activate_first=True)
    d = dim + ab.dim() if dim < 0 else dim
    if d == ab.dim() - 1:
        return op(ab, alpha, limit, activate_first=True)
    if not 0 <= d < ab.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ab.dim()}, "
                         f"{ab.dim() - 1}], but got {dim})")
    if ab.shape[d] % 2:
        raise RuntimeError(f"gated_swiglu_clamped_packed: halving dimension must be even, but "
                           f"dimension {d} is size {ab.shape[d]}")
    return _packed_along(op, ab, d, (alpha, limit), True)


def __getattr__(name):
    # the rest of torch.nn.functional (softmax, prelu, linear, ...), so this module stands in for it
    return getattr(_F, name)
