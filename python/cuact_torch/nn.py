"""torch.nn's activation modules, computed by cuact: the same names and constructor arguments.

Each is a subclass of torch.nn's module of that name whose forward calls cuact_torch.functional
(so isinstance(m, torch.nn.SiLU) holds, and state_dict, repr and extra_repr are torch's), plus
the fused gated modules cuact_torch.patch puts into transformer MLPs.
"""
import torch

from . import functional as CF

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Hardswish",
           "Hardsigmoid", "Hardtanh", "Softplus", "Threshold", "Sigmoid", "Tanh", "LogSigmoid",
           "Softsign", "Tanhshrink", "Softshrink", "Hardshrink", "GLU", "Gated"]

_nn = torch.nn


class ReLU(_nn.ReLU):
    def forward(self, input):
        return CF.relu(input, inplace=self.inplace)


class ReLU6(_nn.ReLU6):
    def forward(self, input):
        return CF.relu6(input, inplace=self.inplace)


class LeakyReLU(_nn.LeakyReLU):
    def forward(self, input):
        return CF.leaky_relu(input, self.negative_slope, self.inplace)


class ELU(_nn.ELU):
    def forward(self, input):
        return CF.elu(input, self.alpha, self.inplace)


class SELU(_nn.SELU):
    def forward(self, input):
        return CF.selu(input, self.inplace)


class CELU(_nn.CELU):
    def forward(self, input):
        return CF.celu(input, self.alpha, self.inplace)


class GELU(_nn.GELU):
    def forward(self, input):
        return CF.gelu(input, approximate=self.approximate)


class SiLU(_nn.SiLU):
    def forward(self, input):
        return CF.silu(input, inplace=self.inplace)


class Mish(_nn.Mish):
    def forward(self, input):
        return CF.mish(input, inplace=self.inplace)


class Hardswish(_nn.Hardswish):
    def forward(self, input):
        return CF.hardswish(input, self.inplace)


class Hardsigmoid(_nn.Hardsigmoid):
    def forward(self, input):
        return CF.hardsigmoid(input, self.inplace)


class Hardtanh(_nn.Hardtanh):
    def forward(self, input):
        return CF.hardtanh(input, self.min_val, self.max_val, self.inplace)


class Softplus(_nn.Softplus):
    def forward(self, input):
        return CF.softplus(input, self.beta, self.threshold)


class Threshold(_nn.Threshold):
    def forward(self, input):
        return CF.threshold(input, self.threshold, self.value, self.inplace)


class Sigmoid(_nn.Sigmoid):
    def forward(self, input):
        return CF.sigmoid(input)


class Tanh(_nn.Tanh):
    def forward(self, input):
        return CF.tanh(input)


class LogSigmoid(_nn.LogSigmoid):
    def forward(self, input):
        return CF.logsigmoid(input)


class Softsign(_nn.Softsign):
    def forward(self, input):
        return CF.softsign(input)


class Tanhshrink(_nn.Tanhshrink):
    def forward(self, input):
        return CF.tanhshrink(input)


class Softshrink(_nn.Softshrink):
    def forward(self, input):
        return CF.softshrink(input, self.lambd)


class Hardshrink(_nn.Hardshrink):
    def forward(self, input):
        return CF.hardshrink(input, self.lambd)


class GLU(_nn.GLU):
    def forward(self, input):
        return CF.glu(input, self.dim)


class Gated(_nn.Module):
    """act(a) * b in one pass: Gated("silu")(a, b) is SwiGLU's gate, Gated("gelu_tanh") GeGLU's."""

    def __init__(self, activation="silu"):
        super().__init__()
        self.activation = activation

    def forward(self, a, b):
        return CF.gated(self.activation, a, b)

    def extra_repr(self):
        return f"activation={self.activation!r}"
