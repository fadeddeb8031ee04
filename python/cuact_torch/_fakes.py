"""Fake (meta) implementations of cuact op families and fused ops, for torch.compile and FakeTensor.

They are Python so that symbolic shapes work; their layout rules are the ones of the C++ kernels
(include/cuact/torch.cuh: flat_dense, flat_alike, empty_result, check_companion; include/cuact/
torch_fused.cuh: contiguous results for the packed and bias ops, the cast and quantize checks).
Keep them in step.
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


def _empty(like, strided, dtype=None):
    dtype = like.dtype if dtype is None else dtype
    if strided:
        return torch.empty_strided(like.shape, like.stride(), dtype=dtype, device=like.device)
    return torch.empty(like.shape, dtype=dtype, device=like.device)


def _empty_output(x, dtype=None):
    """The result of a forward over x: x's strides where x is flat-dense (torch.cuh: empty_output)."""
    return _empty(x, _flat_dense(x.shape, x.stride()), dtype)


def _flat_alike(first, *others):
    """first flat-dense and the others of its strides (torch.cuh: flat_alike)."""
    return _flat_dense(first.shape, first.stride()) and all(
        tuple(t.stride()) == tuple(first.stride()) for t in others)


def _check_companion(t, first, op, arg, first_arg):
    """t on first's device, of its dtype (torch.cuh: check_companion)."""
    torch._check(t.device == first.device,
                 lambda: f"{op}: expected all tensors on the same device, but {first_arg} is on "
                 f"{first.device} and {arg} on {t.device}")
    torch._check(t.dtype == first.dtype,
                 lambda: f"{op}: expected {arg} of dtype {first.dtype}, got {t.dtype}")


def _check_like(t, first, op, arg, first_arg):
    _check_companion(t, first, op, arg, first_arg)
    torch._check(t.shape == first.shape,
                 lambda: f"{op}: expected {arg} of size {tuple(first.shape)}, got {tuple(t.shape)}")


def _fake_forward(x, *params):
    return _empty_output(x)


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
        return _empty(saved, _flat_alike(saved, grad))
    return fake_backward


# ---- the fused ops (torch_fused.cuh) ----

def _fake_gated(qualname):
    def fake(a, b, *params):
        _check_like(b, a, qualname, "b", "a")
        return _empty(a, _flat_alike(a, b))
    return fake


def _fake_gated_backward(qualname):
    def fake(grad, a, b, *params):
        _check_like(b, a, qualname, "b", "a")
        _check_like(grad, a, qualname, "grad", "a")
        flat = _flat_alike(a, b, grad)
        return _empty(a, flat), _empty(a, flat)
    return fake


def _check_packed(ab, qualname):
    torch._check(ab.dim() >= 1, lambda: f"{qualname}: expected ab with at least one dimension, got a scalar")
    torch._check(ab.shape[-1] % 2 == 0,
                 lambda: f"{qualname}: expected the last dimension of ab to be even (the two halves a "
                 f"and b side by side), got {ab.shape[-1]}")
    return (*ab.shape[:-1], ab.shape[-1] // 2)


def _fake_packed(qualname):
    def fake(ab, *params, activate_first=True):
        return ab.new_empty(_check_packed(ab, qualname))
    return fake


def _fake_packed_backward(qualname):
    def fake(grad, ab, *params, activate_first=True):
        half = _check_packed(ab, qualname)
        _check_companion(grad, ab, qualname, "grad", "ab")
        torch._check(tuple(grad.shape) == tuple(half),
                     lambda: f"{qualname}: expected grad of size {list(half)} (ab's with its last "
                     f"dimension halved), got {list(grad.shape)}")
        return ab.new_empty(ab.shape)
    return fake


def _check_bias(x, bias, qualname):
    torch._check(x.dim() >= 1, lambda: f"{qualname}: expected x with at least one dimension, got a scalar")
    _check_companion(bias, x, qualname, "bias", "x")
    torch._check(bias.dim() == 1 and bias.shape[0] == x.shape[-1],
                 lambda: f"{qualname}: expected bias of size [{x.shape[-1]}] (x's last dimension), "
                 f"got {list(bias.shape)}")


def _fake_bias(qualname):
    def fake(x, bias, *params):
        _check_bias(x, bias, qualname)
        return x.new_empty(x.shape)
    return fake


def _fake_bias_backward(qualname):
    def fake(grad, x, bias, *params):
        _check_bias(x, bias, qualname)
        _check_like(grad, x, qualname, "grad", "x")
        return x.new_empty(x.shape), bias.new_empty(bias.shape)
    return fake


_CAST_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
_FP8_DTYPES = (torch.float8_e4m3fn, torch.float8_e5m2)


def _fake_cast(qualname, quantize):
    def fake(x, *params, dtype):
        torch._check(dtype in _CAST_DTYPES,
                     lambda: f"{qualname}: expected dtype float32, float64, float16 or bfloat16, got "
                     f"{dtype} (fp8 results come from {quantize}, with a scale)")
        return _empty_output(x, dtype)
    return fake


def _fake_cast_backward(qualname):
    def fake(grad, x, *params):
        if grad.dtype == x.dtype:  # the family backward's rule
            _check_like(grad, x, qualname, "grad", "x")
            return _empty(x, _flat_alike(x, grad))
        _check_like(grad.to(x.dtype), x, qualname, "grad", "x")  # grad converted into x's layout
        return _empty_output(x)
    return fake


def _fake_quantize(qualname, cast):
    def fake(x, *params, scale, dtype=None):
        torch._check(scale.device == x.device,
                     lambda: f"{qualname}: expected all tensors on the same device, but x is on "
                     f"{x.device} and scale on {scale.device}")
        torch._check(scale.dtype == torch.float32 and scale.numel() == 1,
                     lambda: f"{qualname}: expected scale a float32 tensor of one element, got "
                     f"{scale.dtype} of size {list(scale.shape)}")
        target = torch.float8_e4m3fn if dtype is None else dtype
        torch._check(target in _FP8_DTYPES,
                     lambda: f"{qualname}: expected dtype float8_e4m3fn or float8_e5m2, got {target} "
                     f"(other dtypes come from {cast})")
        return _empty_output(x, target), x.new_empty((), dtype=torch.float32)
    return fake


_libraries = {}  # namespace -> the Library holding its fakes' Meta kernels (alive while registered)


def _register_fake(qualname, fn, lib=None):
    """torch.library.register_fake(qualname, fn, lib=lib) without its caller inspection: it reads the
    caller's source line and searches the imported modules for its file on every call, most of
    the cost of registering a library's fakes. The fake goes into the registry FakeTensorMode reads,
    with the Meta kernel register_fake makes; where torch's internals differ, register_fake itself."""
    try:
        holder = torch._library.simple_registry.singleton.find(qualname).fake_impl
        if lib is None:
            namespace = qualname.split("::")[0]
            if namespace not in _libraries:
                _libraries[namespace] = torch.library.Library(namespace, "FRAGMENT")
            lib = _libraries[namespace]
        handle = holder.register(fn, __name__, lib=lib)
        handles = getattr(lib, "_registration_handles", None)
        if isinstance(handles, list):  # the library's destruction removes the fake, as register_fake's does
            handles.append(handle)
    except (AttributeError, TypeError):
        torch.library.register_fake(qualname, fn, lib=lib)


def _register(fakes):
    for op, fn in fakes:
        if op not in _registered:
            _register_fake(op, fn)
            _registered.add(op)


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


def discover_fused(namespace):
    """Names of the activations whose fused ops are in `namespace` (gated_NAME, gated_NAME_packed
    and bias_NAME, as CUACT_TORCH_FUSED_OPS defines them)."""
    if namespace == "cuact" and _op_exists("cuact", "_fused"):
        return torch.ops.cuact._fused().split(",")
    names = []
    prefix = namespace + "::gated_"
    for qualname in torch._C._dispatch_get_all_op_names():
        if qualname.startswith(prefix) and qualname.endswith("_packed") and "." not in qualname:
            name = qualname[len(prefix):-len("_packed")]
            if _op_exists(namespace, "gated_" + name) and _op_exists(namespace, "bias_" + name):
                names.append(name)
    return sorted(names)


def register_fused_fakes(namespace, names=None):
    """Registers fakes for the fused ops of the activations `names` (default: all found) of
    `namespace`: those CUACT_TORCH_FUSED_OPS (include/cuact/torch_fused.cuh) defines (gated, packed,
    bias, cast, quantize and the backwards). Returns the names."""
    if names is None:
        names = discover_fused(namespace)
    elif isinstance(names, str):
        names = [names]
    for name in names:
        gated, bias = f"{namespace}::gated_{name}", f"{namespace}::bias_{name}"
        packed = gated + "_packed"
        cast, quantize = f"{namespace}::cast_{name}", f"{namespace}::quantize_{name}"
        fakes = [(gated, _fake_gated(gated)), (packed, _fake_packed(packed)), (bias, _fake_bias(bias)),
                 (cast, _fake_cast(cast, quantize)), (quantize, _fake_quantize(quantize, cast))]
        if _op_exists(namespace, f"gated_{name}_backward"):
            fakes += [(gated + "_backward", _fake_gated_backward(gated + "_backward")),
                      (packed + "_backward", _fake_packed_backward(packed + "_backward")),
                      (bias + "_backward", _fake_bias_backward(bias + "_backward")),
                      (cast + "_backward", _fake_cast_backward(cast + "_backward"))]
        if _op_exists(namespace, f"gated_{name}_backward_"):
            fakes.append((gated + "_backward_", _fake_inplace))
        _register(fakes)
    return list(names)


def discover_gates(namespace):
    """Names of the gate families in `namespace` (NAME and NAME_packed, as CUACT_TORCH_GATE_OPS
    defines them; not an activation's gated_NAME, which has bias_NAME beside it)."""
    if namespace == "cuact":
        return torch.ops.cuact._gates().split(",") if _op_exists("cuact", "_gates") else []
    names = []
    prefix = namespace + "::"
    for qualname in torch._C._dispatch_get_all_op_names():
        if qualname.startswith(prefix) and qualname.endswith("_packed") and "." not in qualname:
            name = qualname[len(prefix):-len("_packed")]
            fused = name.startswith("gated_") and _op_exists(namespace, "bias_" + name[len("gated_"):])
            if _op_exists(namespace, name) and not fused:
                names.append(name)
    return sorted(names)


def register_gate_fakes(namespace, names=None):
    """Registers fakes for the gate families `names` (default: all found) of `namespace`: NAME,
    NAME_packed and, where defined, NAME_backward, NAME_backward_ and NAME_packed_backward
    (include/cuact/torch_fused.cuh: CUACT_TORCH_GATE_OPS; the gated ops' layout rules). Returns
    the names."""
    if names is None:
        names = discover_gates(namespace)
    elif isinstance(names, str):
        names = [names]
    for name in names:
        qual = f"{namespace}::{name}"
        fakes = [(qual, _fake_gated(qual)), (qual + "_packed", _fake_packed(qual + "_packed"))]
        if _op_exists(namespace, name + "_backward"):
            fakes += [(qual + "_backward", _fake_gated_backward(qual + "_backward")),
                      (qual + "_packed_backward", _fake_packed_backward(qual + "_packed_backward"))]
        if _op_exists(namespace, name + "_backward_"):
            fakes.append((qual + "_backward_", _fake_inplace))
        _register(fakes)
    return list(names)


def _fake_relu_mask(x):
    words = (x.numel() + 31) // 32  # cuact::relu_mask_words
    return x.new_empty(x.shape), x.new_empty((words,), dtype=torch.int32)


def _fake_relu_backward_mask(grad, mask):
    torch._check(mask.dtype == torch.int32 and mask.dim() == 1
                 and mask.shape[0] == (grad.numel() + 31) // 32,
                 lambda: "cuact::relu_backward_mask: expected mask a contiguous int32 tensor of "
                 "relu_mask's words for grad's elements")
    return grad.new_empty(grad.shape)


def register_mask_fakes(namespace="cuact"):
    """Fakes of relu_mask and relu_backward_mask (contiguous results, as the kernels make)."""
    if _op_exists(namespace, "relu_mask"):
        _register([(f"{namespace}::relu_mask", _fake_relu_mask),
                   (f"{namespace}::relu_backward_mask", _fake_relu_backward_mask)])


def register_fakes(namespace, names=None):
    """Registers fakes for the op families `names` (default: all found) of `namespace`, and for
    the fused ops of those names (default: all found) where they exist.

    For families defined in C++ with CUACT_TORCH_OP_FAMILY, fused ops defined with
    CUACT_TORCH_FUSED_OPS and (with no names) gate families defined with CUACT_TORCH_GATE_OPS;
    call once after loading the library. Returns the family names.
    """
    if names is None:
        names = discover(namespace)
        register_fused_fakes(namespace)
        register_gate_fakes(namespace)
        register_mask_fakes(namespace)
    else:
        names = [names] if isinstance(names, str) else list(names)
        register_fused_fakes(namespace, [n for n in names if _op_exists(namespace, "gated_" + n)])
        names = [n for n in names if _op_exists(namespace, n)]
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
        _register(fakes)
    return list(names)
