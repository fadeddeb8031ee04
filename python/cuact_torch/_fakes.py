"""Fake (meta) implementations of cuact op families, for torch.compile and FakeTensor.

They are Python so that symbolic shapes work; their layout rule is the one of the C++ kernels
(include/cuact/torch.cuh: flat_dense, empty_output, gradient_kernel). Keep the two in step.
"""
import torch

_registered = set()


def _flat_dense(shape, stride):
    """True when the layout covers numel consecutive elements (torch.cuh: flat_dense)."""
    dims = []
    for size, st in zip(shape, stride):
        if size == 0:
            return True
        if size != 1:
            dims.append((st, size))
    dims.sort()
    expected = 1
    for st, size in dims:
        if st != expected:
            return False
        expected *= size
    return True


def _empty(like, strided):
    if strided:
        return torch.empty_strided(like.shape, like.stride(), dtype=like.dtype, device=like.device)
    return torch.empty(like.shape, dtype=like.dtype, device=like.device)


def _check_like(t, first, op, arg, first_arg):
    torch._check(t.device == first.device,
                 lambda: f"{op}: expected all tensors on the same device, but {first_arg} is on "
                 f"{first.device} and {arg} on {t.device}")
    torch._check(t.dtype == first.dtype,
                 lambda: f"{op}: expected {arg} of dtype {first.dtype}, got {t.dtype}")
    torch._check(t.shape == first.shape,
                 lambda: f"{op}: expected {arg} of size {tuple(first.shape)}, got {tuple(t.shape)}")


def _fake_forward(x, *params):
    return _empty(x, _flat_dense(x.shape, x.stride()))


def _fake_inplace(x, *params):
    return None


def _make_fake_out(qualname):
    def fake_out(x, *params, out):
        _check_like(out, x, qualname + ".out", "out", "x")
        return None
    return fake_out


def _make_fake_backward(qualname, saved_name):
    def fake_backward(grad, saved, *params):
        _check_like(grad, saved, qualname, "grad", saved_name)
        flat = _flat_dense(saved.shape, saved.stride()) and tuple(grad.stride()) == tuple(saved.stride())
        return _empty(saved, flat)
    return fake_backward


def _op_exists(namespace, name, overload="default"):
    packet = getattr(getattr(torch.ops, namespace), name, None)
    return packet is not None and overload in packet.overloads()


def discover(namespace):
    """Names of the op families in `namespace` (ops NAME with NAME_ and NAME.out beside them)."""
    if namespace == "cuact" and _op_exists("cuact", "_families"):
        return torch.ops.cuact._families().split(",")
    names = []
    prefix = namespace + "::"
    for qualname in torch._C._dispatch_get_all_op_names():
        if qualname.startswith(prefix) and "." not in qualname:
            name = qualname[len(prefix):]
            if _op_exists(namespace, name + "_") and _op_exists(namespace, name, "out"):
                names.append(name)
    return sorted(names)


def register_fakes(namespace, names=None):
    """Registers fakes for the op families `names` (default: all found) of `namespace`.

    For families defined in C++ with CUACT_TORCH_OP_FAMILY; call once after loading the library.
    Returns the family names.
    """
    if names is None:
        names = discover(namespace)
    elif isinstance(names, str):
        names = [names]
    for name in names:
        qual = f"{namespace}::{name}"
        fakes = [
            (qual, _fake_forward),
            (qual + "_", _fake_inplace),
            (qual + ".out", _make_fake_out(qual)),
        ]
        if _op_exists(namespace, name + "_backward"):
            fakes.append((qual + "_backward", _make_fake_backward(qual + "_backward", "x")))
        if _op_exists(namespace, name + "_backward_from_output"):
            fakes.append((qual + "_backward_from_output",
                          _make_fake_backward(qual + "_backward_from_output", "y")))
        for op, fn in fakes:
            if op not in _registered:
                torch.library.register_fake(op, fn)
                _registered.add(op)
    return list(names)
