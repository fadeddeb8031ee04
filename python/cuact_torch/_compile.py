"""cuact's ops under torch.compile: pointwise math inductor can fuse, or the opaque cuact kernel.

A custom op is opaque to inductor: its neighbours cannot fuse with it, so `silu(t * 1.5 + 0.5)`
with cuact's silu runs three kernels where inductor alone runs one. Here each unary family op and
each fused op gets a decomposition in inductor's table: under torch.compile it becomes the
pointwise expression it is, in inductor's formula. Where the cuact kernel wins (the gated and
bias backwards, fp8 quantize with its amax, the in-place and out= ops) the op stays opaque.

    cuact_torch.compile_mode()                        # "auto": the per-op defaults (DEFAULT_KERNEL)
    cuact_torch.compile_mode("fuse")                  # every op with a decomposition decomposes
    cuact_torch.compile_mode("kernel")                # every op stays the cuact kernel
    cuact_torch.compile_mode("kernel", ops=["silu"])  # one op's override ("silu" covers silu and
                                                      # its backwards; "silu_backward" just that one)
    cuact_torch.compile_mode(None, ops=["silu"])      # drops that override

The mode is read when a graph is compiled, so setting it resets dynamo's compiled graphs. Eager
calls never look at it.
"""
import sys

import torch
import torch.nn.functional as F

from .reference import REFERENCE

MODES = ("auto", "fuse", "kernel")

# Ops kept opaque in "auto" mode: one cuact pass beats inductor's kernels for them (the gated
# backwards write da and db in one pass; the bias backward's column sums are deterministic).
# quantize_NAME, NAME_ and NAME.out are never decomposed.
DEFAULT_KERNEL_SUFFIXES = ("_backward",)
DEFAULT_KERNEL_PREFIXES = ("gated_", "bias_")

_state = {"mode": "auto", "overrides": {}}
_registered = {}  # op name -> (OpOverload, family key)
_decompositions = {}  # op name -> its guarded decomposition
_installed = {"done": False}

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _opmath(t):
    return t.float() if t.dtype in (torch.float16, torch.bfloat16) else t


# ---- derivatives: d act(x) / dx times g, in inductor-friendly pointwise math ----

def _where(cond, g):
    return torch.where(cond, g, torch.zeros_like(g))


_GRAD = {
    "relu": lambda g, x: _where(x > 0, g),
    "selu": lambda g, x: torch.where(x > 0, g * _SELU_SCALE, g * (_SELU_SCALE * _SELU_ALPHA) * torch.exp(x)),
    "relu6": lambda g, x: _where((x > 0) & (x < 6), g),
    "leaky_relu": lambda g, x, s=0.01: torch.where(x > 0, g, g * s),
    "elu": lambda g, x, a=1.0: torch.where(x > 0, g, g * a * torch.exp(x)),
    "celu": lambda g, x, a=1.0: torch.where(x > 0, g, g * torch.exp(x / a)),
    "gelu": lambda g, x: torch.ops.aten.gelu_backward(g, x, approximate="none"),
    "gelu_tanh": lambda g, x: torch.ops.aten.gelu_backward(g, x, approximate="tanh"),
    "silu": lambda g, x: torch.ops.aten.silu_backward(g, x),
    "mish": lambda g, x: torch.ops.aten.mish_backward(g, x),
    "sigmoid": lambda g, x: g * torch.sigmoid(x) * (1 - torch.sigmoid(x)),
    "logsigmoid": lambda g, x: g * torch.sigmoid(-x),
    "tanh": lambda g, x: g * (1 - torch.tanh(x) ** 2),
    "hardtanh": lambda g, x, lo=-1.0, hi=1.0: _where((x > lo) & (x < hi), g),
    "hardsigmoid": lambda g, x: _where((x > -3) & (x < 3), g / 6),
    "hardswish": lambda g, x: torch.ops.aten.hardswish_backward(g, x),
    "softplus": lambda g, x, b=1.0, t=20.0: torch.ops.aten.softplus_backward(g, x, b, t),
    "softsign": lambda g, x: g / (1 + x.abs()) ** 2,
    "tanhshrink": lambda g, x: g * torch.tanh(x) ** 2,
    "softshrink": lambda g, x, l=0.5: _where(x.abs() > l, g),
    "hardshrink": lambda g, x, l=0.5: _where(x.abs() > l, g),
    "threshold": lambda g, x, t=0.5, v=-2.0: _where(x > t, g),
}

# From the output y, for the families whose in-place autograd saves y.
_GRAD_FROM_OUTPUT = {
    "relu": lambda g, y: _where(y > 0, g),
    "selu": lambda g, y: torch.where(y > 0, g * _SELU_SCALE, g * (y + _SELU_SCALE * _SELU_ALPHA)),
    "relu6": lambda g, y: _where((y > 0) & (y < 6), g),
    "hardtanh": lambda g, y, lo=-1.0, hi=1.0: _where((y > lo) & (y < hi), g),
    "leaky_relu": lambda g, y, s=0.01: torch.where(y > 0, g, g * s),
    "elu": lambda g, y, a=1.0: torch.where(y > 0, g, g * (y + a)),
    "celu": lambda g, y, a=1.0: torch.where(y > 0, g, g * (y / a + 1)),
    "sigmoid": lambda g, y: g * y * (1 - y),
    "tanh": lambda g, y: g * (1 - y * y),
}


def _act(name, x, params):
    return REFERENCE[name][0](x, *params)


def _keep_layout(result, like):
    """The family's layout rule: like's strides where like is flat-dense, else contiguous."""
    from ._fakes import _flat_dense
    if like.is_contiguous() or _flat_dense(like.shape, like.stride()):
        return result
    return result.contiguous()


# ---- decompositions, by op kind ----

def _unary(name):
    def forward(x, *params):
        return _keep_layout(_act(name, _opmath(x), params).to(x.dtype), x)
    return forward


def _unary_backward(name, table):
    def backward(grad, saved, *params):
        g, s = _opmath(grad), _opmath(saved)
        return table[name](g, s, *params).to(saved.dtype)
    return backward


def _gated(name):
    def forward(a, b, *params):
        return (_act(name, _opmath(a), params) * _opmath(b)).to(a.dtype)
    return forward


def _gated_backward(name):
    def backward(grad, a, b, *params):
        g, af, bf = _opmath(grad), _opmath(a), _opmath(b)
        da = _GRAD[name](g * bf, af, *params)
        db = g * _act(name, af, params)
        return da.to(a.dtype), db.to(a.dtype)
    return backward


def _halves(ab, activate_first):
    first, second = _opmath(ab).chunk(2, dim=-1)
    return (first, second) if activate_first else (second, first)


def _packed(name):
    def forward(ab, *params, activate_first=True):
        act_in, other = _halves(ab, activate_first)
        return (_act(name, act_in, params) * other).to(ab.dtype).contiguous()
    return forward


def _packed_backward(name):
    def backward(grad, ab, *params, activate_first=True):
        act_in, other = _halves(ab, activate_first)
        g = _opmath(grad)
        d_act = _GRAD[name](g * other, act_in, *params)
        d_other = g * _act(name, act_in, params)
        parts = [d_act, d_other] if activate_first else [d_other, d_act]
        return torch.cat(parts, dim=-1).to(ab.dtype)
    return backward


def _bias(name):
    def forward(x, bias, *params):
        return _act(name, _opmath(x) + _opmath(bias), params).to(x.dtype).contiguous()
    return forward


def _bias_backward(name):
    def backward(grad, x, bias, *params):
        dx = _GRAD[name](_opmath(grad), _opmath(x) + _opmath(bias), *params)
        dbias = dx.reshape(-1, dx.shape[-1]).sum(dim=0)
        return dx.to(x.dtype).contiguous(), dbias.to(bias.dtype)
    return backward


def _cast(name):
    def forward(x, *params, dtype):
        return _keep_layout(_act(name, _opmath(x), params).to(dtype), x)
    return forward


def _cast_backward(name):
    def backward(grad, x, *params):
        g = _opmath(grad.to(x.dtype))
        return _GRAD[name](g, _opmath(x), *params).to(x.dtype)
    return backward


# ---- gates: (forward, (da, db)) of gate(a, b, *params), in opmath ----

def _swiglu_clamped(a, b, alpha=1.702, limit=7.0):
    x = a.clamp(max=limit)
    return x * torch.sigmoid(alpha * x) * (b.clamp(min=-limit, max=limit) + 1)


def _swiglu_clamped_grad(g, a, b, alpha=1.702, limit=7.0):
    # 1 - s as sigmoid(-alpha x): the subtraction cancels where alpha x >> 0
    x = a.clamp(max=limit)
    s, c = torch.sigmoid(alpha * x), torch.sigmoid(-alpha * x)
    y = x * s
    up = b.clamp(min=-limit, max=limit) + 1
    da = _where(a <= limit, g * up * (s + alpha * y * c))
    db = _where((b >= -limit) & (b <= limit), g * y)
    return da, db


_GATES = {"gated_swiglu_clamped": (_swiglu_clamped, _swiglu_clamped_grad)}


def _gate(name):
    def forward(a, b, *params):
        return _GATES[name][0](_opmath(a), _opmath(b), *params).to(a.dtype)
    return forward


def _gate_backward(name):
    def backward(grad, a, b, *params):
        da, db = _GATES[name][1](_opmath(grad), _opmath(a), _opmath(b), *params)
        return da.to(a.dtype), db.to(a.dtype)
    return backward


def _gate_packed(name):
    def forward(ab, *params, activate_first=True):
        a, b = _halves(ab, activate_first)
        return _GATES[name][0](a, b, *params).to(ab.dtype).contiguous()
    return forward


def _gate_packed_backward(name):
    def backward(grad, ab, *params, activate_first=True):
        a, b = _halves(ab, activate_first)
        da, db = _GATES[name][1](_opmath(grad), a, b, *params)
        parts = [da, db] if activate_first else [db, da]
        return torch.cat(parts, dim=-1).to(ab.dtype)
    return backward


def _gate_candidates(gates):
    """(op name, decomposition) for the gate families of this build with a formula in _GATES."""
    out = []
    for name in gates:
        if name not in _GATES:
            continue
        out += [(name, _gate(name)), (name + "_packed", _gate_packed(name)),
                (name + "_backward", _gate_backward(name)),
                (name + "_packed_backward", _gate_packed_backward(name))]
    return out


# ---- the mode ----

def _family_of(op_name):
    """The override key that covers op_name as a whole family: "silu_backward" -> "silu",
    "gated_silu_packed_backward" -> "gated_silu_packed"."""
    for suffix in ("_backward_from_output", "_backward"):
        if op_name.endswith(suffix):
            return op_name[: -len(suffix)]
    return op_name


def default_mode(op_name):
    """"fuse" or "kernel": what "auto" mode does for op_name (e.g. "gated_silu_backward")."""
    if op_name.startswith(DEFAULT_KERNEL_PREFIXES) and op_name.endswith(DEFAULT_KERNEL_SUFFIXES):
        return "kernel"
    return "fuse"


def effective_mode(op_name):
    """"fuse" or "kernel": what torch.compile does now with torch.ops.cuact.<op_name>."""
    overrides = _state["overrides"]
    for key in (op_name, _family_of(op_name)):
        if key in overrides:
            return overrides[key]
    if _state["mode"] != "auto":
        return _state["mode"]
    return default_mode(op_name)


def compile_mode(mode=None, *, ops=None):
    """Sets (or with no arguments returns) how torch.compile treats cuact's ops.

    mode: "auto" (the documented per-op defaults), "fuse" (decompose into pointwise math that
    inductor fuses with its neighbours, in inductor's formula) or "kernel" (the opaque cuact
    kernel). With ops (names like "silu", "gated_silu", "gated_silu_backward") it sets those ops'
    override instead, and mode None drops their override. Returns the mode that held before.
    Resets dynamo's compiled graphs: the mode is read when a graph compiles.
    """
    if mode is None and ops is None:
        return _state["mode"]
    if mode is not None and mode not in MODES:
        raise ValueError(f"compile_mode: expected one of {MODES} (or None with ops), got {mode!r}")
    install()
    previous = _state["mode"]
    if ops is None:
        _state["mode"] = mode
    else:
        names = [ops] if isinstance(ops, str) else list(ops)
        for name in names:
            if mode is None or mode == "auto":
                _state["overrides"].pop(name, None)
                continue
            known = set(_registered) | {_family_of(n) for n in _registered}
            if name not in known:
                raise ValueError(f"compile_mode: torch.ops.cuact has no decomposable op {name!r} "
                                 f"(see cuact_torch.decomposed_ops())")
            _state["overrides"][name] = mode
    _sync()
    import torch._dynamo
    torch._dynamo.reset()
    return previous


def decomposed_ops():
    """{op name: "fuse" or "kernel"}: the ops with a decomposition and what compile does now."""
    install()
    return {name: effective_mode(name) for name in sorted(_registered)}


# ---- registration into inductor's table ----

_KERNEL_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _guarded(op_name, fn):
    def decomposition(*args, **kwargs):
        first = args[0]
        if first.device.type != "cuda" or first.dtype not in _KERNEL_DTYPES:
            return NotImplemented  # the kernel's refusal, as in eager
        return fn(*args, **kwargs)
    decomposition.__name__ = "cuact_" + op_name
    return decomposition


def _candidates(families, fused):
    """(op name, decomposition) for the ops of this build."""
    ops = torch.ops.cuact
    out = []
    for name in families:
        if name not in REFERENCE:
            continue
        out.append((name, _unary(name)))
        if hasattr(ops, name + "_backward") and name in _GRAD:
            out.append((name + "_backward", _unary_backward(name, _GRAD)))
        if hasattr(ops, name + "_backward_from_output") and name in _GRAD_FROM_OUTPUT:
            out.append((name + "_backward_from_output", _unary_backward(name, _GRAD_FROM_OUTPUT)))
    for name in fused:
        if name not in REFERENCE or name not in _GRAD:
            continue
        out += [("gated_" + name, _gated(name)), ("gated_%s_packed" % name, _packed(name)),
                ("bias_" + name, _bias(name)), ("cast_" + name, _cast(name))]
        if hasattr(ops, "gated_%s_backward" % name):
            out += [("gated_%s_backward" % name, _gated_backward(name)),
                    ("gated_%s_packed_backward" % name, _packed_backward(name)),
                    ("bias_%s_backward" % name, _bias_backward(name)),
                    ("cast_%s_backward" % name, _cast_backward(name))]
    return [(n, fn) for n, fn in out if hasattr(ops, n)]


def _register_into(table):
    from . import FAMILIES, FUSED
    from ._fakes import discover_gates
    candidates = _candidates(FAMILIES, FUSED)
    candidates += [(n, fn) for n, fn in _gate_candidates(discover_gates("cuact"))
                   if hasattr(torch.ops.cuact, n)]
    for name, fn in candidates:
        op = getattr(torch.ops.cuact, name).default
        _registered[name] = op
        _decompositions[name] = _guarded(name, fn)
    _installed["table"] = table
    _sync()


def _sync():
    """Puts into inductor's table exactly the ops whose mode is "fuse" now. An op in "kernel" mode
    must be absent: inductor refuses an op that has both a decomposition and a fallback kernel."""
    table = _installed.get("table")
    if table is None:
        return
    for name, op in _registered.items():
        if effective_mode(name) == "fuse":
            table[op] = _decompositions[name]
        else:
            table.pop(op, None)
    module = sys.modules.get("torch._inductor.decomposition")
    cached = getattr(module, "fast_random_decomps", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()  # a copy of the table, taken at the first compile


def install():
    """Puts the decompositions into inductor's table (once). Importing inductor costs a second or
    more, so cuact_torch's import leaves it to the first torch.compile (see hook)."""
    if _installed["done"]:
        return
    import importlib
    name = "torch._inductor.decomposition"
    # from sys.modules first: right after its exec the parent package lacks the attribute
    inductor_decomposition = sys.modules.get(name) or importlib.import_module(name)
    _installed["done"] = True
    _register_into(inductor_decomposition.decompositions)


def hook():
    """Installs now if inductor's decompositions are loaded, else right after they load, so that
    `import cuact_torch` does not import inductor itself."""
    from ._hooks import after_import
    after_import("torch._inductor.decomposition", install, "decompositions for torch.compile")


hook()
