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
import functools
import os

import torch
import torch.nn.functional as _F

from . import _fakes, _hooks

# Most used first: `in` on a tuple stops at the first match (and torch.compile folds it).
_DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.float64)
_Tensor = torch.Tensor
_strided = torch.strided  # one object per layout: `is` is the whole comparison
_ops = torch.ops.cuact

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_",
           "celu", "celu_", "gelu", "silu", "mish", "hardswish", "hardsigmoid", "hardtanh",
           "hardtanh_", "softplus", "threshold", "threshold_", "sigmoid", "tanh", "logsigmoid",
           "softsign", "tanhshrink", "softshrink", "hardshrink", "glu", "swiglu_clamped",
           "swiglu_clamped_packed"]


def _fast_path():
    """The extension's eager fast path (csrc/fast_call.cu), or None: the JIT build has none."""
    try:
        from . import _C
        call, register = _C._call, _C._fast_op
    except (ImportError, AttributeError):
        return None

    def fast(overload, inplace):
        args = overload._schema.arguments
        if not args or str(args[0].type) != "Tensor" or any(
                str(a.type) != "float" or a.kwarg_only for a in args[1:]):
            return overload
        index = register(overload._schema.name, len(args) - 1, inplace, overload)
        assert index == len(_traced)
        _traced.append(overload)
        return functools.partial(call, index)

    return fast


def _traced_call(index, x, *params):
    """What torch.compile traces for the fast path's C call: the op's OpOverload."""
    return _traced[index](x, *params)


def _trace_as_overloads():
    """Has torch.compile trace _traced_call in place of the C call; run once torch._dynamo is
    imported (importing it with cuact_torch would cost the import a second or more). Should that
    fail, the functions call the overloads themselves."""
    from . import _C
    try:
        torch.compiler.substitute_in_graph(_C._call, skip_signature_check=True)(_traced_call)
    except Exception:
        _unbind_fast_path()
        raise


def _unbind_fast_path():
    """Every name bound to the fast path bound to its OpOverload instead."""
    for name, value in list(globals().items()):
        if isinstance(value, functools.partial):
            overload = _overload_of.get(value)
            if overload is not None:
                globals()[name] = overload
    for name, value in list(_bound.items()):
        _bound[name] = _overload_of.get(value, value)


def _bind():
    """{op name: the callable these functions call}: torch.ops.cuact.<name>.default (the overload
    itself, since a packet's call first picks an overload by the arguments), or for a unary op
    whose parameters are floats, the extension's fast path to it. That one calls the same op
    through its typed dispatcher handle, skipping torch.ops' boxed path (a stack of IValues, the
    arguments matched against the schema), and hands anything but a plain Tensor, and calls under
    a torch function mode, to the overload."""
    names = [n + s for n in _fakes.discover("cuact") for s in ("", "_")]
    names += ["gated_" + n + s for n in _fakes.discover_fused("cuact") for s in ("", "_packed")]
    names += [g + s for g in _fakes.discover_gates("cuact") for s in ("", "_packed")]
    fast = _fast_path() if os.environ.get("CUACT_TORCH_FAST_CALL", "1") != "0" else None
    bound = {}
    for n in names:
        if hasattr(_ops, n):
            overload = getattr(_ops, n).default
            bound[n] = fast(overload, n.endswith("_")) if fast is not None else overload
            if bound[n] is not overload:
                _overload_of[bound[n]] = overload
    return bound


_overload_of = {}  # fast-path callable -> its OpOverload
_traced = []  # fast-path index -> its OpOverload
_bound = _bind()
if _traced:
    _hooks.after_import("torch._dynamo", _trace_as_overloads,
                        "cuact_torch.functional's eager path under torch.compile")


def _op(name):
    """What calls op `name` (_bind), or None where the library has no such op."""
    return _bound.get(name)


def _computes(x):
    """Whether x is a tensor cuact computes over: CUDA, strided, of a cuact dtype."""
    return (isinstance(x, _Tensor) and x.is_cuda and x.dtype in _DTYPES
            and x.layout is _strided)


def _runs(x, name):
    """Whether cuact computes op `name` over x (else torch does)."""
    return _computes(x) and _op(name) is not None


# Each activation's functional and in-place overloads, bound once (None where the library lacks
# them). The functions below spell out _computes inline and call these directly: a call costs a
# few attribute reads over the op's own, with no helper frames, closures or argument tuples.
_relu, _relu_ = _op("relu"), _op("relu_")
_relu6, _relu6_ = _op("relu6"), _op("relu6_")
_leaky_relu, _leaky_relu_ = _op("leaky_relu"), _op("leaky_relu_")
_elu, _elu_ = _op("elu"), _op("elu_")
_selu, _selu_ = _op("selu"), _op("selu_")
_celu, _celu_ = _op("celu"), _op("celu_")
_gelu, _gelu_tanh = _op("gelu"), _op("gelu_tanh")
_silu, _silu_ = _op("silu"), _op("silu_")
_mish, _mish_ = _op("mish"), _op("mish_")
_hardswish, _hardswish_ = _op("hardswish"), _op("hardswish_")
_hardsigmoid, _hardsigmoid_ = _op("hardsigmoid"), _op("hardsigmoid_")
_hardtanh, _hardtanh_ = _op("hardtanh"), _op("hardtanh_")
_softplus = _op("softplus")
_threshold, _threshold_ = _op("threshold"), _op("threshold_")
_sigmoid, _tanh, _logsigmoid = _op("sigmoid"), _op("tanh"), _op("logsigmoid")
_softsign, _tanhshrink = _op("softsign"), _op("tanhshrink")
_softshrink, _hardshrink = _op("softshrink"), _op("hardshrink")
_glu = _op("gated_sigmoid_packed")


def relu(input, inplace=False):
    if (_relu is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        if inplace:
            _relu_(input)
            return input
        return _relu(input)
    return _F.relu(input, inplace=inplace)


def relu_(input):
    if (_relu is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        _relu_(input)
        return input
    return _F.relu(input, inplace=True)


def relu6(input, inplace=False):
    if (_relu6 is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        if inplace:
            _relu6_(input)
            return input
        return _relu6(input)
    return _F.relu6(input, inplace=inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if (_leaky_relu is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        if inplace:
            _leaky_relu_(input, float(negative_slope))
            return input
        return _leaky_relu(input, float(negative_slope))
    return _F.leaky_relu(input, negative_slope, inplace=inplace)


def leaky_relu_(input, negative_slope=0.01):
    if (_leaky_relu is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        _leaky_relu_(input, float(negative_slope))
        return input
    return _F.leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    if (_elu is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        if inplace:
            _elu_(input, float(alpha))
            return input
        return _elu(input, float(alpha))
    return _F.elu(input, alpha, inplace=inplace)


def elu_(input, alpha=1.0):
    if (_elu is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        _elu_(input, float(alpha))
        return input
    return _F.elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    if (_selu is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        if inplace:
            _selu_(input)
            return input
        return _selu(input)
    return _F.selu(input, inplace=inplace)


def selu_(input):
    if (_selu is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        _selu_(input)
        return input
    return _F.selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    # alpha == 0 goes to torch for its own error (ZeroDivisionError), not cuact's refusal
    if (alpha != 0 and _celu is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        if inplace:
            _celu_(input, float(alpha))
            return input
        return _celu(input, float(alpha))
    return _F.celu(input, alpha, inplace=inplace)


def celu_(input, alpha=1.0):
    if (alpha != 0 and _celu is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        _celu_(input, float(alpha))
        return input
    return _F.celu(input, alpha, inplace=True)


def gelu(input, approximate="none"):
    """approximate="none" is cuact.gelu, "tanh" cuact.gelu_tanh; torch raises for any other."""
    op = _gelu if approximate == "none" else _gelu_tanh if approximate == "tanh" else None
    if (op is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        return op(input)
    return _F.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    if (_silu is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        if inplace:
            _silu_(input)
            return input
        return _silu(input)
    return _F.silu(input, inplace=inplace)


def mish(input, inplace=False):
    if (_mish is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        if inplace:
            _mish_(input)
            return input
        return _mish(input)
    return _F.mish(input, inplace=inplace)


def hardswish(input, inplace=False):
    if (_hardswish is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        if inplace:
            _hardswish_(input)
            return input
        return _hardswish(input)
    return _F.hardswish(input, inplace=inplace)


def hardsigmoid(input, inplace=False):
    if (_hardsigmoid is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        if inplace:
            _hardsigmoid_(input)
            return input
        return _hardsigmoid(input)
    return _F.hardsigmoid(input, inplace=inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    # min_val > max_val goes to torch for its ValueError (NaN bounds stay with cuact, as before)
    if (not min_val > max_val and _hardtanh is not None and isinstance(input, _Tensor)
            and input.is_cuda and input.dtype in _DTYPES and input.layout is _strided):
        if inplace:
            _hardtanh_(input, float(min_val), float(max_val))
            return input
        return _hardtanh(input, float(min_val), float(max_val))
    return _F.hardtanh(input, min_val, max_val, inplace=inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    if (not min_val > max_val and _hardtanh is not None and isinstance(input, _Tensor)
            and input.is_cuda and input.dtype in _DTYPES and input.layout is _strided):
        _hardtanh_(input, float(min_val), float(max_val))
        return input
    return _F.hardtanh(input, min_val, max_val, inplace=True)


def softplus(input, beta=1.0, threshold=20.0):
    if (_softplus is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        return _softplus(input, float(beta), float(threshold))
    return _F.softplus(input, beta, threshold)


def threshold(input, threshold, value, inplace=False):
    if (_threshold is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        if inplace:
            _threshold_(input, float(threshold), float(value))
            return input
        return _threshold(input, float(threshold), float(value))
    return _F.threshold(input, threshold, value, inplace=inplace)


def threshold_(input, threshold, value):
    if (_threshold is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        _threshold_(input, float(threshold), float(value))
        return input
    return _F.threshold(input, threshold, value, inplace=True)


def sigmoid(input):
    if (_sigmoid is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        return _sigmoid(input)
    return torch.sigmoid(input)


def tanh(input):
    if (_tanh is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        return _tanh(input)
    return torch.tanh(input)


def logsigmoid(input):
    if (_logsigmoid is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        return _logsigmoid(input)
    return _F.logsigmoid(input)


def softsign(input):
    if (_softsign is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        return _softsign(input)
    return _F.softsign(input)


def tanhshrink(input):
    if (_tanhshrink is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        return _tanhshrink(input)
    return _F.tanhshrink(input)


def softshrink(input, lambd=0.5):
    # lambd < 0 goes to torch for its own error
    if (not lambd < 0 and _softshrink is not None and isinstance(input, _Tensor)
            and input.is_cuda and input.dtype in _DTYPES and input.layout is _strided):
        return _softshrink(input, float(lambd))
    return _F.softshrink(input, lambd)


def hardshrink(input, lambd=0.5):
    if (_hardshrink is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        return _hardshrink(input, float(lambd))
    return _F.hardshrink(input, lambd)


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the halves of input along dim (cuact.gated_sigmoid_packed).

    For dim other than the last, input is made contiguous (one copy if it is not) and viewed as
    [outer, 2 * inner]: the halves along dim are then the halves of that last dimension, so the
    packed op serves any dim without a transpose, and the result is contiguous, as torch's is.
    """
    if (_glu is not None and isinstance(input, _Tensor) and input.is_cuda
            and input.dtype in _DTYPES and input.layout is _strided):
        n = input.dim()
        d = dim + n if dim < 0 else dim
        if n and 0 <= d < n and not input.shape[d] % 2:
            if d == n - 1:
                return _glu(input, activate_first=False)
            return _packed_along(_glu, input, d, (), False)
    return _F.glu(input, dim)  # with torch's IndexError or "Halving dimension must be even"


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
