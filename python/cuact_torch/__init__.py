"""cuact activations as PyTorch operators.

    import cuact_torch                      # torch.ops.cuact.*, loaded on first use
    y = torch.ops.cuact.selu(x)             # functional, autograd, torch.compile(fullgraph=True)
    torch.ops.cuact.relu_(x)                # in place; bumps x's version; keeps a gradient
    torch.ops.cuact.relu.out(x, out=y)
    dx = torch.ops.cuact.selu_backward(dy, x)
    cuact_torch.selu(x)                     # the same ops, as module attributes (.default where
                                            # an op has one overload)

    out = torch.ops.cuact.gated_silu(a, b)  # fused: silu(a) * b (SwiGLU) in one pass, autograd
    out = torch.ops.cuact.gated_silu_packed(ab)                        # ab [..., 2c] -> [..., c]
    out = torch.ops.cuact.gated_sigmoid_packed(ab, activate_first=False)   # torch.nn.GLU
    out = torch.ops.cuact.bias_gelu(x, bias)                           # gelu(x + bias[x's last dim])
    y16 = torch.ops.cuact.cast_silu(x, dtype=torch.bfloat16)           # silu(x) rounded once to bf16
    q, amax = torch.ops.cuact.quantize_gelu(x, scale=scale)            # fp8 e4m3 of gelu(x) * scale
    cuact_torch.FUSED                       # the activations with fused ops
    out = torch.ops.cuact.gated_swiglu_clamped(a, b, alpha=1.702, limit=7.0)   # gpt-oss's gate

    swish = cuact_torch.activation("swish", "x / (C(1) + exp(-x))",
                                   derivative="C s = C(1) / (C(1) + exp(-x)); return s * (C(1) + x * (C(1) - s));")
    y = swish(x)                            # torch.ops.cuact_user.swish, JIT-compiled once, cached on disk

    import cuact_torch.functional as CF     # torch.nn.functional's signatures: CF.gelu(x, approximate="tanh")
    cuact_torch.nn.SiLU()                   # torch.nn's modules and constructor arguments
    report = cuact_torch.patch(model)       # HuggingFace models: activations and gated MLPs fused
    cuact_torch.__version__                 # cuact's version (include/cuact/version.cuh)

Loading: the extension built by `pip install --no-build-isolation ./python`, else (or with
CUACT_TORCH_JIT=1) a JIT build through torch.utils.cpp_extension.load, cached by content hash. It is
loaded, and its fakes registered, on the first use of torch.ops.cuact or of an attribute below that
needs it (an op, FAMILIES, functional, ...), so that `import cuact_torch` stays a few milliseconds
for a program that only defines its own activations.
"""
import importlib

import torch

from . import _fakes, _load
from ._fakes import register_fakes
from ._paths import include_dir, version as _version
from .custom import CompileError, activation

try:
    from ._version import __version__  # written by setup.py into the built package
except ImportError:  # a checkout: the headers beside it
    __version__ = _version()
_FIXED = ["FAMILIES", "FUSED", "GATES", "LOADED_FROM", "CompileError", "activation", "include_dir",
          "register_fakes", "ops", "functional", "nn", "patch", "memory", "compile_mode",
          "decomposed_ops", "__version__"]
_SUBMODULES = {"functional": "functional", "nn": "nn", "memory": "_memory", "patch": "patch"}
_OP_NAMES = []  # the op attributes, bound once the library is loaded


def _bind_ops():
    """FAMILIES, FUSED, GATES and the op attributes, once the library is loaded (_load.after_load)."""
    names = register_fakes("cuact")  # e.g. ["relu", "selu"]; the fused ops' fakes too
    fused = _fakes.discover_fused("cuact")  # e.g. ["relu", "sigmoid", "silu", "gelu", "gelu_tanh"]
    gates = _fakes.discover_gates("cuact")  # gate families, e.g. ["gated_swiglu_clamped"]
    candidates = [n + s for n in names for s in ("", "_", "_backward", "_backward_from_output")]
    candidates += [op.format(n) + s for n in fused
                   for op in ("gated_{}", "gated_{}_packed", "bias_{}", "cast_{}", "quantize_{}")
                   for s in ("", "_backward")]
    candidates += [n + s for n in gates for s in ("", "_packed", "_backward", "_packed_backward")]
    bound = {}
    for name in candidates:
        packet = getattr(torch.ops.cuact, name, None)
        if packet is not None:
            # an op of one overload is bound as that overload: calling a packet first picks an
            # overload by the arguments; NAME keeps its packet (NAME.out beside NAME.default)
            bound[name] = packet.default if packet.overloads() == ["default"] else packet
    globals().update(bound, FAMILIES=names, FUSED=fused, GATES=gates)
    _OP_NAMES[:] = list(bound)


_load.after_load(_bind_ops)
_load.install_namespace("cuact")
ops = torch.ops.cuact  # loads the library on its first lookup
from ._compile import compile_mode, decomposed_ops  # noqa: E402  (torch.compile: fuse or kernel)
from . import dtensor  # noqa: E402


def __getattr__(name):
    """The attributes that need the library (loaded now) or a submodule that looks up its ops."""
    if name in _SUBMODULES:
        module = importlib.import_module("." + _SUBMODULES[name], __name__)
        value = module.patch if name == "patch" else module
        globals()[name] = value  # over the submodule the import bound (cuact_torch.patch: the function)
        return value
    if name == "LOADED_FROM":
        return _load.ensure_loaded()
    if name in ("FAMILIES", "FUSED", "GATES", "__all__") or not name.startswith("_"):
        _load.ensure_loaded()
        if name == "__all__":
            return _FIXED + _OP_NAMES
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_FIXED) | set(_OP_NAMES))


dtensor.hook()  # DTensor sharding rules, once torch.distributed.tensor is imported
