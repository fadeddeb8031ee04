"""cuact activations as PyTorch operators.

    import cuact_torch                      # registers torch.ops.cuact.* (and their fakes)
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
CUACT_TORCH_JIT=1) a JIT build through torch.utils.cpp_extension.load, cached by content hash.
"""
import torch

from . import _fakes, _load
from ._fakes import register_fakes
from ._paths import include_dir, version as _version
from .custom import activation

try:
    from ._version import __version__  # written by setup.py into the built package
except ImportError:  # a checkout: the headers beside it
    __version__ = _version()
__all__ = ["FAMILIES", "FUSED", "GATES", "LOADED_FROM", "activation", "include_dir", "register_fakes", "ops",
           "functional", "nn", "patch", "__version__"]

LOADED_FROM = _load.load()  # "installed" or "jit"
FAMILIES = register_fakes("cuact")  # e.g. ["relu", "selu"]; the fused ops' fakes too
FUSED = _fakes.discover_fused("cuact")  # e.g. ["relu", "sigmoid", "silu", "gelu", "gelu_tanh"]
GATES = _fakes.discover_gates("cuact")  # gate families, e.g. ["gated_swiglu_clamped"]
ops = torch.ops.cuact

_names = [n + s for n in FAMILIES for s in ("", "_", "_backward", "_backward_from_output")]
_names += [op.format(n) + s for n in FUSED
           for op in ("gated_{}", "gated_{}_packed", "bias_{}", "cast_{}", "quantize_{}")
           for s in ("", "_backward")]
_names += [n + s for n in GATES for s in ("", "_packed", "_backward", "_packed_backward")]
_packet = None
for _name in _names:
    if hasattr(ops, _name):
        # an op of one overload is bound as that overload: calling a packet first picks an
        # overload by the arguments; NAME keeps its packet (NAME.out beside NAME.default)
        _packet = getattr(ops, _name)
        globals()[_name] = _packet.default if _packet.overloads() == ["default"] else _packet
        __all__.append(_name)
del _name, _names, _packet
from . import _memory as memory  # noqa: E402  (relu(x, save_mask=True), gated(..., inplace_backward=True))
from ._compile import compile_mode, decomposed_ops  # noqa: E402,F401  (torch.compile: fuse or kernel)

from . import functional, nn  # noqa: E402  (they look up the ops registered above)
from .patch import patch  # noqa: E402
from . import dtensor  # noqa: E402

dtensor.hook()  # DTensor sharding rules, once torch.distributed.tensor is imported
