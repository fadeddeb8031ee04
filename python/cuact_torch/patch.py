"""cuact_torch.patch: cuact's activations and fused gated MLPs in a model, in one line.

    report = cuact_torch.patch(model)           # an instantiated model, in place
    print(report)                               # what was replaced, and what was left as it was
    cuact_torch.patch(LlamaForCausalLM)         # a class, before instantiation

On a model, every activation module cuact computes (torch.nn.SiLU/GELU/ReLU/..., transformers'
ACT2FN classes: GELUActivation, NewGELUActivation, PytorchGELUTanh/GELUTanh, SiLUActivation, ...)
is replaced by cuact_torch.nn's module, and the gated MLPs get a fused forward:
- Llama, Mistral, Qwen2, Gemma (gate_proj, up_proj, down_proj, act_fn):
  down(gated_<act>(gate(x), up(x))): SwiGLU for silu, GeGLU for gelu / gelu tanh;
- Phi-3 (gate_up_proj, down_proj, activation_fn): down(gated_<act>_packed(gate_up(x)));
- GPT-2, BERT: their GELU modules (the activation replacement).
- gpt-oss (GptOssExperts, whose gate_up interleaves gate and up: gate_up[..., ::2],
  gate_up[..., 1::2]): its _apply_gate becomes cuact's clamped SwiGLU over the interleaved pairs
  (functional.swiglu_clamped_packed(interleaved=True): one copy to [gate | up], one fused pass;
  the backward likewise). transformers versions
  whose experts' forward computes the gate inline, with no _apply_gate, keep their torch
  expression (the forward holds the expert loop and routing too), and the report says so. On a class, the MLP classes of its modeling module get the fused forward and
transformers' ACT2CLS entries get cuact's modules (for every model built afterwards).
Patching twice changes nothing the second time. Tensors cuact does not compute (CPU, other
dtypes) run the original code.
"""
import sys
import types

import torch

from . import functional as CF
from . import nn as cnn

__all__ = ["patch", "PatchReport"]


class PatchReport:
    """What patch() did: `replaced` (path, old -> new), `fused` (path, pattern), `skipped`
    (path, reason)."""

    def __init__(self):
        self.replaced, self.fused, self.skipped = [], [], []

    def __bool__(self):
        return bool(self.replaced or self.fused)

    def __repr__(self):
        lines = [f"cuact_torch.patch: {len(self.replaced)} activation modules replaced, "
                 f"{len(self.fused)} MLPs fused, {len(self.skipped)} left as they were"]
        lines += [f"  replaced {p}: {what}" for p, what in self.replaced]
        lines += [f"  fused    {p}: {what}" for p, what in self.fused]
        lines += [f"  left     {p}: {why}" for p, why in self.skipped]
        return "\n".join(lines)


def _by_name(m):
    return type(m).__name__


def _cuact_module(m):
    """The cuact_torch.nn module standing in for activation module m, or None."""
    if type(m).__module__ == cnn.__name__:
        return None  # already cuact's
    name = _by_name(m)
    torch_types = {_nn: getattr(cnn, _nn.__name__) for _nn in (
        torch.nn.ReLU, torch.nn.ReLU6, torch.nn.SELU, torch.nn.SiLU, torch.nn.Mish, torch.nn.Hardswish,
        torch.nn.Hardsigmoid, torch.nn.Sigmoid, torch.nn.Tanh, torch.nn.LogSigmoid, torch.nn.Softsign,
        torch.nn.Tanhshrink)}
    if type(m) in torch_types:
        new = torch_types[type(m)]()
        if hasattr(m, "inplace"):
            new.inplace = m.inplace
        return new
    if type(m) is torch.nn.GELU:
        return cnn.GELU(approximate=m.approximate)
    if type(m) is torch.nn.LeakyReLU:
        return cnn.LeakyReLU(m.negative_slope, m.inplace)
    if type(m) is torch.nn.ELU:
        return cnn.ELU(m.alpha, m.inplace)
    if type(m) is torch.nn.CELU:
        return cnn.CELU(m.alpha, m.inplace)
    if type(m) is torch.nn.Hardtanh:
        return cnn.Hardtanh(m.min_val, m.max_val, m.inplace)
    if type(m) is torch.nn.Softplus:
        return cnn.Softplus(m.beta, m.threshold)
    if type(m) is torch.nn.GLU:
        return cnn.GLU(m.dim)
    # transformers.activations (by name: no import of transformers needed)
    if name == "GELUActivation" and getattr(m, "act", None) is torch.nn.functional.gelu:
        return cnn.GELU()
    if name in ("NewGELUActivation", "PytorchGELUTanh", "GELUTanh", "FastGELUActivation"):
        # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): torch's tanh GELU, in other words
        return cnn.GELU(approximate="tanh")
    if name == "SiLUActivation":
        return cnn.SiLU()
    if name == "MishActivation":
        return cnn.Mish()
    return None


def _activation_name(m):
    """The cuact gated op's activation for activation module m: silu, gelu, gelu_tanh, relu."""
    if isinstance(m, torch.nn.SiLU) or _by_name(m) == "SiLUActivation":
        return "silu"
    if isinstance(m, torch.nn.GELU):
        return "gelu_tanh" if m.approximate == "tanh" else "gelu"
    if _by_name(m) == "GELUActivation" and getattr(m, "act", None) is torch.nn.functional.gelu:
        return "gelu"
    if _by_name(m) in ("NewGELUActivation", "PytorchGELUTanh", "GELUTanh", "FastGELUActivation"):
        return "gelu_tanh"
    if isinstance(m, torch.nn.ReLU):
        return "relu"
    return None


def _fusable(x, name):
    return (name is not None and x.device.type == "cuda" and x.dtype in CF._DTYPES
            and hasattr(torch.ops.cuact, "gated_" + name))


def _swiglu_forward(self, x):
    """down(act(gate(x)) * up(x)) with act(a) * b fused (Llama, Mistral, Qwen2, Gemma MLPs)."""
    name = _activation_name(self.act_fn)
    if not _fusable(x, name):
        return type(self).forward(self, x)
    return self.down_proj(CF.gated(name, self.gate_proj(x), self.up_proj(x)))


def _packed_forward(self, x):
    """down(act(gate) * up), [gate | up] = gate_up(x), fused (Phi-3's MLP)."""
    name = _activation_name(self.activation_fn)
    if not _fusable(x, name):
        return type(self).forward(self, x)
    return self.down_proj(CF.gated_packed(name, self.gate_up_proj(x)))


def _pattern(m):
    """(pattern name, fused forward) for an MLP module m, or None."""
    if all(hasattr(m, n) for n in ("gate_proj", "up_proj", "down_proj", "act_fn")):
        return "gated MLP (gate_proj, up_proj)", _swiglu_forward
    if all(hasattr(m, n) for n in ("gate_up_proj", "down_proj", "activation_fn")) and \
            isinstance(m.gate_up_proj, torch.nn.Module):
        return "packed gated MLP (gate_up_proj)", _packed_forward
    return None


def _clamped_swiglu(m):
    return hasattr(m, "alpha") and hasattr(m, "limit") and hasattr(m, "gate_up_proj")


def _clamped_gate_fusable(x):
    return (x.device.type == "cuda" and x.dtype in CF._DTYPES
            and hasattr(torch.ops.cuact, "gated_swiglu_clamped_packed"))


def _clamped_gate(original):
    """GptOssExperts._apply_gate(gate_up) as cuact's clamped SwiGLU over interleaved pairs;
    `original` (the class's) where cuact does not compute."""
    def apply_gate(self, gate_up):
        if not _clamped_gate_fusable(gate_up):
            return original(self, gate_up)
        return CF.swiglu_clamped_packed(gate_up, self.alpha, self.limit, interleaved=True)
    apply_gate._cuact_original = original
    return apply_gate


_CLAMPED_INLINE = "clamped SwiGLU (gpt-oss) computed inside forward (no _apply_gate): its torch expression kept"


def _patch_clamped(m, path, report):
    """Fuses gpt-oss experts' gate on instance m where its class has _apply_gate."""
    original = getattr(type(m), "_apply_gate", None)
    if original is None:
        report.skipped.append((path, _CLAMPED_INLINE))
        return
    if getattr(m, "_cuact_fused", None) == "clamped SwiGLU":
        return
    original = getattr(original, "_cuact_original", original)
    m._apply_gate = types.MethodType(_clamped_gate(original), m)
    m._cuact_fused = "clamped SwiGLU"
    report.fused.append((path, "clamped SwiGLU (gpt-oss, interleaved gate_up): gated_swiglu_clamped_packed"))


def _patch_model(model, report):
    for path, m in list(model.named_modules()):
        for child_name, child in list(m.named_children()):
            new = _cuact_module(child)
            if new is not None:
                setattr(m, child_name, new)
                where = f"{path}.{child_name}" if path else child_name
                report.replaced.append((where, f"{type(child).__name__} -> cuact_torch.nn.{type(new).__name__}"))
    for path, m in model.named_modules():
        if _clamped_swiglu(m):
            _patch_clamped(m, path, report)
            continue
        found = _pattern(m)
        if found is None:
            continue
        what, forward = found
        if getattr(m, "_cuact_fused", None) == what:
            continue
        act = getattr(m, "act_fn", None) or getattr(m, "activation_fn", None)
        name = _activation_name(act)
        if name is None or not hasattr(torch.ops.cuact, "gated_" + name):
            report.skipped.append((path, f"{what} with activation {type(act).__name__}: no cuact gated op"))
            continue
        m.forward = types.MethodType(forward, m)
        m._cuact_fused = what
        report.fused.append((path, f"{what}: gated_{name}"))
    return report


def _class_forward(original, forward):
    def patched(self, x):
        found = _pattern(self)
        if found is None or found[1] is not forward:
            return original(self, x)
        act = getattr(self, "act_fn", None) or getattr(self, "activation_fn", None)
        name = _activation_name(act)
        if not _fusable(x, name):
            return original(self, x)
        if forward is _swiglu_forward:
            return self.down_proj(CF.gated(name, self.gate_proj(x), self.up_proj(x)))
        return self.down_proj(CF.gated_packed(name, self.gate_up_proj(x)))
    patched._cuact_original = original
    return patched


def _patch_class(cls, report):
    module = sys.modules.get(cls.__module__)
    for attr, value in sorted(vars(module).items()) if module else []:
        if not (isinstance(value, type) and issubclass(value, torch.nn.Module)):
            continue
        if value.__module__ != cls.__module__ or "forward" not in vars(value):
            continue
        if hasattr(value.forward, "_cuact_original"):
            continue
        if attr.endswith("Experts") and "GptOss" in attr:
            where = f"{cls.__module__}.{attr}"
            gate = vars(value).get("_apply_gate")
            if gate is None:
                report.skipped.append((where, _CLAMPED_INLINE))
            elif not hasattr(gate, "_cuact_original"):
                value._apply_gate = _clamped_gate(gate)
                report.fused.append((where, "clamped SwiGLU (gpt-oss, interleaved gate_up)"))
            continue
        if attr.endswith("MLP"):
            source = getattr(value.forward, "__code__", None)
            names = set(source.co_names) if source else set()
            if {"gate_proj", "up_proj", "down_proj", "act_fn"} <= names:
                value.forward = _class_forward(value.forward, _swiglu_forward)
                report.fused.append((f"{cls.__module__}.{attr}", "gated MLP (gate_proj, up_proj)"))
            elif {"gate_up_proj", "down_proj", "activation_fn"} <= names:
                value.forward = _class_forward(value.forward, _packed_forward)
                report.fused.append((f"{cls.__module__}.{attr}", "packed gated MLP (gate_up_proj)"))
    try:
        from transformers import activations
    except ImportError:
        return report
    for key, entry in list(activations.ACT2CLS.items()):
        act_cls, kwargs = entry if isinstance(entry, tuple) else (entry, {})
        if getattr(act_cls, "__module__", None) == cnn.__name__:
            continue
        try:
            new = _cuact_module(act_cls(**kwargs))
        except Exception:  # an activation class that needs arguments we do not know
            new = None
        if new is None:
            continue
        new_cls = type(new)
        new_kwargs = {"approximate": new.approximate} if isinstance(new, torch.nn.GELU) else {}
        value = (new_cls, new_kwargs) if new_kwargs else new_cls
        activations.ACT2CLS[key] = value
        # ACT2FN is a copy of ACT2CLS taken at import, and the model files hold it by reference
        table = getattr(activations, "ACT2FN", None)
        if isinstance(table, dict) and key in table:
            dict.__setitem__(table, key, value)
        report.replaced.append((f"transformers ACT2CLS[{key!r}]", f"{act_cls.__name__} -> cuact_torch.nn.{new_cls.__name__}"))
    return report


def patch(model_or_class, verbose=False):
    """Puts cuact's activations and fused gated MLPs into a model (in place) or a model class
    (before instantiation). Returns a PatchReport; prints it with verbose=True."""
    report = PatchReport()
    if isinstance(model_or_class, type):
        _patch_class(model_or_class, report)
    elif isinstance(model_or_class, torch.nn.Module):
        _patch_model(model_or_class, report)
    else:
        raise TypeError(f"cuact_torch.patch: expected a torch.nn.Module or a model class, got "
                        f"{type(model_or_class).__name__}")
    if verbose:
        print(report)
    return report


class _CallableModule(types.ModuleType):
    """This module, callable as patch(): an import of cuact_torch.patch binds the package's
    attribute to the module, and `cuact_torch.patch(model)` must work after it all the same."""

    def __call__(self, model_or_class, verbose=False):
        return patch(model_or_class, verbose)


sys.modules[__name__].__class__ = _CallableModule
