"""DTensor sharding rules for torch.ops.cuact (torch.distributed.tensor.experimental.register_sharding).

Rules, for each mesh dimension (DTensor expands them over the mesh):
- unary ops (forward, in place, backward, backward_from_output, cast and its backward): any
  Replicate or Shard(d), the result placed as the input (elementwise: no communication);
- gated ops and their backwards (gate families such as gated_swiglu_clamped too): a, b (and
  grad) sharded alike;
- packed gated ops: Shard(d) for any d but the last; under Shard(last) each rank would hold a
  slice of [a | b] that is not its own [a_i | b_i], so the op refuses with a message (shard a and
  b separately, e.g. two column-parallel linears, and use gated_NAME);
- bias ops: bias replicated with x replicated or sharded on any dim but the last, or bias
  Shard(0) with x sharded on its last dim; the bias gradient of row-sharded x is Partial (a sum
  over the ranks' rows), reduced where DTensor needs it;
- quantize ops: amax is a maximum over the whole tensor, so they take replicated x only and
  refuse any sharding with a message.

Importing DTensor costs more than the rest of `import cuact_torch`, so the rules are registered
when the program imports torch.distributed.tensor (hook(); at once if it already has), or by an
explicit register().
"""
import torch

__all__ = ["register", "hook", "REGISTERED"]

REGISTERED = []  # the op overloads with rules


def _spec_types():
    from torch.distributed.tensor._dtensor_spec import DTensorSpec
    return DTensorSpec


def _inputs(args, kwargs, placement_of):
    """One placement per argument (None for non-tensors), kwarg tensors after the positional ones."""
    spec = _spec_types()
    out = [placement_of(i, a) if isinstance(a, spec) else None for i, a in enumerate(args)]
    if _kwarg_tensors_count():  # DTensor versions that match kwarg tensors (quantize's scale) too
        out += [placement_of(len(args), v) for v in kwargs.values() if isinstance(v, spec)]
    return out


def _kwarg_tensors_count():
    from torch.distributed.tensor._op_schema import OpSchema
    return hasattr(OpSchema, "kwargs_strategy")


def _elementwise(n_outputs):
    """All tensors (inputs and outputs) placed alike: Replicate or Shard(d). An in-place op has
    n_outputs 0: DTensor counts its result as the mutated input, not as an output of the rule."""
    from torch.distributed.tensor import Replicate, Shard

    def rule(*args, **kwargs):
        ndim = next(a.ndim for a in args if isinstance(a, _spec_types()))
        options = [Replicate()] + [Shard(d) for d in range(ndim)]
        return [([p] * n_outputs, _inputs(args, kwargs, lambda i, a, p=p: p)) for p in options]
    return rule


def _packed(n_outputs, name):
    from torch.distributed.tensor import Replicate, Shard

    def rule(*args, **kwargs):
        spec = _spec_types()
        specs = [a for a in args if isinstance(a, spec)]
        ab = specs[-1]  # (ab) or (grad, ab)
        last = ab.ndim - 1
        for s in specs:
            for p in s.placements:
                if isinstance(p, Shard) and p.dim in (s.ndim - 1, -1):
                    raise RuntimeError(
                        f"{name}: the packed [a | b] layout cannot be sharded on its last dimension "
                        f"(a rank's slice is not its own [a_i | b_i]); shard a and b separately and "
                        f"use the unpacked gated op, or shard another dimension")
        options = [Replicate()] + [Shard(d) for d in range(last)]
        return [([p] * n_outputs, _inputs(args, kwargs, lambda i, a, p=p: p)) for p in options]
    return rule


def _bias(backward):
    from torch.distributed.tensor import Partial, Replicate, Shard

    def rule(*args, **kwargs):
        spec = _spec_types()
        tensors = [a for a in args if isinstance(a, spec)]
        ndim = tensors[-2].ndim  # x (bias is last)
        n_tensors = len(tensors)
        strategies = []

        def inputs(x_p, bias_p):
            placements = iter([x_p] * (n_tensors - 1) + [bias_p])
            return _inputs(args, kwargs, lambda i, a: next(placements))
        strategies.append(([Replicate()] * (2 if backward else 1), inputs(Replicate(), Replicate())))
        for d in range(ndim - 1):
            outs = [Shard(d), Partial()] if backward else [Shard(d)]
            strategies.append((outs, inputs(Shard(d), Replicate())))
        outs = [Shard(ndim - 1), Shard(0)] if backward else [Shard(ndim - 1)]
        strategies.append((outs, inputs(Shard(ndim - 1), Shard(0))))
        return strategies
    return rule


def _quantize(name):
    from torch.distributed.tensor import Replicate

    def rule(*args, **kwargs):
        spec = _spec_types()
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, spec) and not all(isinstance(p, Replicate) for p in a.placements):
                raise RuntimeError(
                    f"{name}: amax is a maximum over the whole tensor, so a sharded x is refused; "
                    f"replicate x, or quantize each rank's local tensor and reduce the amax yourself "
                    f"(torch.distributed.all_reduce with ReduceOp.MAX)")
        return [([Replicate(), Replicate()], _inputs(args, kwargs, lambda i, a: Replicate()))]
    return rule


def _overload(name, overload="default"):
    packet = getattr(torch.ops.cuact, name, None)
    if packet is None or overload not in packet.overloads():
        return None
    return getattr(packet, overload)


def register():
    """Registers the rules for every cuact op present; a no-op without torch.distributed's DTensor.
    Returns the registered overloads."""
    if REGISTERED:
        return REGISTERED
    try:
        from torch.distributed.tensor.experimental import register_sharding
        _spec_types()
    except Exception:  # torch without distributed, or a DTensor without this API
        return REGISTERED
    from . import _fakes

    rules = []
    for n in _fakes.discover("cuact"):
        rules += [(n, _elementwise(1)), (n + "_", _elementwise(0)), (n + "_backward", _elementwise(1)),
                  (n + "_backward_from_output", _elementwise(1))]
    for n in _fakes.discover_fused("cuact"):
        g, p = "gated_" + n, "gated_" + n + "_packed"
        rules += [(g, _elementwise(1)), (g + "_backward", _elementwise(2)),
                  (p, _packed(1, p)), (p + "_backward", _packed(1, p + "_backward")),
                  ("bias_" + n, _bias(False)), ("bias_" + n + "_backward", _bias(True)),
                  ("cast_" + n, _elementwise(1)), ("cast_" + n + "_backward", _elementwise(1)),
                  ("quantize_" + n, _quantize("quantize_" + n))]
    for g in _fakes.discover_gates("cuact"):  # gate families: the gated ops' rules
        p = g + "_packed"
        rules += [(g, _elementwise(1)), (g + "_backward", _elementwise(2)),
                  (p, _packed(1, p)), (p + "_backward", _packed(1, p + "_backward"))]
    for name, rule in rules:
        op = _overload(name)
        if op is None:
            continue
        try:
            register_sharding(op)(rule)
            REGISTERED.append(op)
        except Exception:  # an op DTensor cannot take a rule for: left without one
            pass
    return REGISTERED


def hook():
    """Registers the rules now if torch.distributed.tensor is imported, else right after its
    first import (a DTensor cannot exist before it)."""
    from ._hooks import after_import
    after_import("torch.distributed.tensor", register, "DTensor sharding rules")
