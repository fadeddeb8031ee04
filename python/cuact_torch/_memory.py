"""Autograd that saves less: ReLU with a 1-bit mask, and the gated backward in place.

    y = cuact_torch.relu(x, save_mask=True)    # saves 1 bit per element for the backward, not x
    out = torch.ops.cuact.gated_silu(a, b)     # backward: da over a, db over b where provably safe
    memory.inplace_backward("never")           # "auto" (the default), "always" or "never"
    out = cuact_torch.gated(a, b, "silu", inplace_backward=True)   # in place by the caller's word

relu(x, save_mask=True): the forward writes y and a mask of x > 0 (cuact/relu_mask.cuh), the
backward reads only the mask and dy: 32 x less saved memory than x for fp32, 16 x for bf16. The
gradient is dy where x > 0, else 0, as torch.relu's; at x = NaN it is 0 (torch.relu's passes dy).

The gated ops' backward in place. The autograd of gated_NAME, gated_NAME_packed and of a gate
family (gated_swiglu_clamped and its _packed) writes da into a's memory and db into b's (dab into
ab's), as Liger-Kernel's SwiGLU does, so the backward allocates no gradient of its own: an MLP's
gate(x) and up(x) die into their gradients. With inplace_backward("auto"), the default, it does so
only where nothing else can read a and b afterwards (include/cuact/torch_fused.cuh,
in_place_is_safe), checked when the backward runs:
- a plain backward: not create_graph, and a graph the engine frees (not retain_graph, not a
  second backward of a retained graph, not a node called outside the engine);
- no torch.compile / AOTAutograd tracing, export, functionalization, FakeTensor, DTensor or other
  tensor subclass or TorchDispatchMode; no saved-tensor hooks (activation checkpointing, offload);
- a and b non-leaf CUDA tensors of one flat-dense layout (grad is copied contiguous where it is
  not: a temporary of one gradient), neither a view, neither sharing memory with the other or
  with grad (the packed op: ab contiguous);
- a and b referenced by this node alone: their TensorImpl and storage use counts are the node's
  saved variable and its unpacked copy (plus the Python wrapper's own reference where no Python
  code holds the wrapper, torch >= 2.10): a Python variable, another node's saved tensor (input or
  output), a view, .detach() or .data makes the backward allocate da and db as before.
Before torch 2.10 "auto" never writes in place. Every in-place write bumps a's and b's version
counters, so a stale reader inside autograd fails with PyTorch's "modified by an inplace
operation" rather than reading gradients. The gradients are the same bits either way.

inplace_backward("always"): in place wherever the first two conditions and the layout allow it,
whoever references a and b (the caller vouches that they are dead); "never": never in place. The
setting is the process's, read by each backward when it runs, for the ops of torch.ops.cuact (a
library of your own built with torch_fused.cuh has its own: cuact::torch_ops::
set_gated_backward_memory).

gated(..., inplace_backward=True): the backward writes da over a and db over b by the caller's
word, through gated_NAME_backward_ (the op's version bumps included), whatever the setting: for a
and b that are dead after the backward. It falls back to new tensors under create_graph, a
retained graph, torch.compile and odd layouts.
"""
import contextlib

import torch

_ops = torch.ops.cuact
_MODES = ("auto", "always", "never")  # cuact::torch_ops::gated_backward_memory's order


def inplace_backward(mode=None):
    """The gated ops' backward memory (see the module comment): "auto" (in place where provably
    safe; the default), "always" or "never". With no argument, returns the mode in force; with
    one, sets it and returns the mode it replaces."""
    if mode is None:
        return _MODES[_ops._gated_backward_memory(-1)]
    if mode not in _MODES:
        raise ValueError(f"cuact_torch.memory.inplace_backward: expected one of {_MODES}, got {mode!r}")
    return _MODES[_ops._gated_backward_memory(_MODES.index(mode))]


@contextlib.contextmanager
def inplace_backward_mode(mode):
    """inplace_backward(mode) for the backwards run inside the block, then the mode before."""
    previous = inplace_backward(mode)
    try:
        yield
    finally:
        inplace_backward(previous)


class _ReluMask(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y, mask = _ops.relu_mask(x)
        ctx.save_for_backward(mask)
        ctx.mark_non_differentiable(mask)
        return y, mask

    @staticmethod
    def backward(ctx, grad, _grad_mask):
        (mask,) = ctx.saved_tensors
        return _ops.relu_backward_mask(grad, mask)


def relu(x, save_mask=False):
    """torch.relu(x); with save_mask=True autograd saves a 1-bit mask instead of x."""
    if not save_mask:
        return _ops.relu(x)
    if not (torch.is_grad_enabled() and x.requires_grad):
        return _ops.relu(x)
    return _ReluMask.apply(x)[0]


def _graph_kept():
    keep = getattr(torch._C._autograd, "_get_current_graph_task_keep_graph", None)
    return True if keep is None else keep()


class _GatedInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, name, params):
        ctx.name, ctx.params = name, params
        ctx.save_for_backward(a, b)
        return getattr(_ops, "gated_" + name)(a, b, *params)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        if not grad.is_contiguous():
            grad = grad.contiguous()  # e.g. the expanded gradient of a sum
        if (torch.compiler.is_compiling() or torch.is_grad_enabled() or _graph_kept()
                or not (a.is_contiguous() and b.is_contiguous())):
            # functional under torch.compile (inductor plans the buffers), create_graph, a
            # retained graph (a and b are read again) and odd layouts
            da, db = getattr(_ops, "gated_%s_backward" % ctx.name)(grad, a, b, *ctx.params)
            return da, db, None, None
        a, b = a.detach(), b.detach()  # they share the version counters the op bumps
        # a and b are dead by the caller's word
        getattr(_ops, "gated_%s_backward_" % ctx.name)(grad, a, b, *ctx.params)
        return a, b, None, None


def gated(a, b, name="silu", inplace_backward=False, params=()):
    """act(a) * b with cuact's fused op gated_<name> (a gate family too: name "swiglu_clamped"
    is gated_swiglu_clamped, params its (alpha, limit)). inplace_backward=False: the op's own
    autograd (in place where provably safe, see inplace_backward()); True: in place by the
    caller's word (see the module comment)."""
    params = tuple(params)
    if inplace_backward and torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        return _GatedInplace.apply(a, b, name, params)
    return getattr(_ops, "gated_" + name)(a, b, *params)
