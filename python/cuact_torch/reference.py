"""PyTorch's own version of every cuact op, for the tests and the timing script.

REFERENCE[name] = (fn(x, *params), [parameter tuples to test]); the first tuple is the default.
"""
import math

import torch
import torch.nn.functional as F

REFERENCE = {
    "relu": (lambda x: torch.relu(x), [()]),
    "selu": (lambda x: torch.selu(x), [()]),
    "relu6": (lambda x: F.relu6(x), [()]),
    "leaky_relu": (lambda x, s=0.01: F.leaky_relu(x, s), [(0.01,), (0.2,), (-0.5,)]),
    "elu": (lambda x, a=1.0: F.elu(x, a), [(1.0,), (0.5,), (-0.5,)]),
    "celu": (lambda x, a=1.0: F.celu(x, a), [(1.0,), (2.0,)]),
    "gelu": (lambda x: F.gelu(x), [()]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [()]),
    "silu": (lambda x: F.silu(x), [()]),
    "mish": (lambda x: F.mish(x), [()]),
    "sigmoid": (lambda x: torch.sigmoid(x), [()]),
    "logsigmoid": (lambda x: F.logsigmoid(x), [()]),
    "tanh": (lambda x: torch.tanh(x), [()]),
    "hardtanh": (lambda x, lo=-1.0, hi=1.0: F.hardtanh(x, lo, hi), [(-1.0, 1.0), (-2.0, 0.5)]),
    "hardsigmoid": (lambda x: F.hardsigmoid(x), [()]),
    "hardswish": (lambda x: F.hardswish(x), [()]),
    "softplus": (lambda x, b=1.0, t=20.0: F.softplus(x, b, t), [(1.0, 20.0), (2.0, 5.0)]),
    "softsign": (lambda x: F.softsign(x), [()]),
    "tanhshrink": (lambda x: F.tanhshrink(x), [()]),
    "softshrink": (lambda x, l=0.5: F.softshrink(x, l), [(0.5,), (1.5,)]),
    "hardshrink": (lambda x, l=0.5: F.hardshrink(x, l), [(0.5,), (1.5,)]),
    "threshold": (lambda x, t=0.5, v=-2.0: F.threshold(x, t, v), [(0.5, -2.0), (-1.0, 3.0)]),
}

def _gelu_exact(x):
    """0.5 x erfc(-x / sqrt 2): PyTorch's 0.5 x (1 + erf(x / sqrt 2)) cancels for negative x (in
    float64 F.gelu(-10.0) is 0.0, the value -7.6e-23)."""
    return torch.where(torch.isinf(x), F.gelu(x), 0.5 * x * torch.special.erfc(-x * 0.5**0.5))


def _gelu_tanh_exact(x):
    """x sigmoid(2u), u = sqrt(2 / pi) (x + 0.044715 x^3): PyTorch's 0.5 x (1 + tanh u) cancels
    where tanh u is near -1."""
    u = (2 / math.pi) ** 0.5 * (x + 0.044715 * x * x * x)
    return torch.where(torch.isinf(x), F.gelu(x, approximate="tanh"), x * torch.sigmoid(2 * u))


# Where PyTorch's own kernel is not exact in float64, the formula it rounds (tests only): its CUDA
# hardsigmoid/hardswish multiply by a float 1/6 in every dtype (F.hardsigmoid(0.0) in float64 is
# 0.5000000149), which cuact does not copy; its GELUs cancel for negative x.
EXACT_FLOAT64 = {
    "hardsigmoid": lambda x: torch.clamp(x + 3, 0, 6) / 6,
    "hardswish": lambda x: x * torch.clamp(x + 3, 0, 6) / 6,
    "gelu": _gelu_exact,
    "gelu_tanh": _gelu_tanh_exact,
}

# Points where the activation is not differentiable (for gradcheck inputs to avoid), as a
# function of the parameters.
KINKS = {
    "relu": lambda: [0.0], "relu6": lambda: [0.0, 6.0], "leaky_relu": lambda s=0.01: [0.0],
    "elu": lambda a=1.0: [0.0], "celu": lambda a=1.0: [0.0], "selu": lambda: [0.0],
    "hardtanh": lambda lo=-1.0, hi=1.0: [lo, hi], "hardsigmoid": lambda: [-3.0, 3.0],
    "hardswish": lambda: [-3.0, 3.0], "softshrink": lambda l=0.5: [-l, l],
    "hardshrink": lambda l=0.5: [-l, l], "threshold": lambda t=0.5, v=-2.0: [t],
    "softplus": lambda b=1.0, t=20.0: [t / b],
}
