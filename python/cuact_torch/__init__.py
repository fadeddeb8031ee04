"""cuact activations as PyTorch operators.

    import cuact_torch                      # registers torch.ops.cuact.* (and their fakes)
    y = torch.ops.cuact.selu(x)             # functional, autograd, torch.compile(fullgraph=True)
    torch.ops.cuact.relu_(x)                # in place; bumps x's version; keeps a gradient
    torch.ops.cuact.relu.out(x, out=y)
    dx = torch.ops.cuact.selu_backward(dy, x)
    cuact_torch.selu(x)                     # the same ops, as module attributes

    swish = cuact_torch.activation("swish", "x / (C(1) + exp(-x))",
                                   derivative="C s = C(1) / (C(1) + exp(-x)); return s * (C(1) + x * (C(1) - s));")
    y = swish(x)                            # torch.ops.cuact_user.swish, JIT-compiled once, cached on disk

Loading: the extension built by `pip install --no-build-isolation ./python`, else (or with
CUACT_TORCH_JIT=1) a JIT build through torch.utils.cpp_extension.load, cached by content hash.
"""
import torch

from . import _load
from ._fakes import register_fakes
from ._paths import include_dir
from .custom import activation

__all__ = ["FAMILIES", "LOADED_FROM", "activation", "include_dir", "register_fakes", "ops"]

LOADED_FROM = _load.load()  # "installed" or "jit"
FAMILIES = register_fakes("cuact")  # e.g. ["relu", "selu"]
ops = torch.ops.cuact

for _name in FAMILIES:
    for _suffix in ("", "_", "_backward", "_backward_from_output"):
        if hasattr(ops, _name + _suffix):
            globals()[_name + _suffix] = getattr(ops, _name + _suffix)
            __all__.append(_name + _suffix)
del _name, _suffix
