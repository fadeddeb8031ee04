"""Autograd that saves less: ReLU with a 1-bit mask, and the gated backward in place.

    y = cuact_torch.relu(x, save_mask=True)    # saves 1 bit per element for the backward, not x
    out = cuact_torch.gated(a, b, "silu", inplace_backward=True)   # da over a, db over b

relu(x, save_mask=True): the forward writes y and a mask of x > 0 (cuact/relu_mask.cuh), the
backward reads only the mask and dy: 32 x less saved memory than x for fp32, 16 x for bf16. The
gradient is dy where x > 0, else 0, as torch.relu's; at x = NaN it is 0 (torch.relu's passes dy).

gated(..., inplace_backward=True): the backward writes da into a's memory and db into b's, as
Liger-Kernel's SwiGLU does, so it allocates nothing. Use it only where a and b are dead after the
backward (intermediates such as gate(x) and up(x) of an MLP); a and b then hold the gradients, so
a tensor that another autograd node saved must not be passed (it is opt-in for that reason).
"""
import torch

_ops = torch.ops.cuact


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
        if torch.compiler.is_compiling() or not (a.is_contiguous() and b.is_contiguous()):
            # functional under torch.compile (inductor plans the buffers) and for odd layouts
            da, db = getattr(_ops, "gated_%s_backward" % ctx.name)(grad, a, b, *ctx.params)
            return da, db, None, None
        a, b = a.detach(), b.detach()
        # a and b are dead by contract
        getattr(_ops, "gated_%s_backward_" % ctx.name)(grad, a, b, *ctx.params)
        return a, b, None, None


def gated(a, b, name="silu", inplace_backward=False, params=()):
    """act(a) * b with cuact's fused op gated_<name> (a gate family too: name "swiglu_clamped"
    is gated_swiglu_clamped, params its (alpha, limit)); inplace_backward=True: see the module
    comment."""
    params = tuple(params)
    if inplace_backward and torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        return _GatedInplace.apply(a, b, name, params)
    return getattr(_ops, "gated_" + name)(a, b, *params)
