"""cuact's ops under torch.compile: pointwise math inductor can fuse, or the opaque cuact kernel.

A custom op is opaque to inductor: its neighbours cannot fuse with it, so `silu(t * 1.5 + 0.5)`
with cuact's silu runs three kernels where inductor alone runs one. Here each unary family op and
each fused op gets a decomposition in inductor's table: under torch.compile it becomes the
pointwise expression it is, in inductor's formula. Where the cuact kernel is needed or wins (the
bias backwards, fp8 quantize with its amax, the in-place and out= ops) the op stays opaque.

    cuact_torch.compile_mode()                        # "auto": the per-op defaults (DEFAULT_KERNEL)
    cuact_torch.compile_mode("fuse")                  # every op with a decomposition decomposes
    cuact_torch.compile_mode("kernel")                # every op stays the cuact kernel
    cuact_torch.compile_mode("kernel", ops=["silu"])  # one op's override ("silu" covers silu and
                                                      # its backwards; "silu_backward" just that one)
    cuact_torch.compile_mode(None, ops=["silu"])      # drops that override

The mode is read when a graph is compiled, so setting it resets dynamo's compiled graphs, and it
is part of torch.compile's cache key (see _tag_caches). Eager calls never look at it.

Where a cuact op means what an aten op means (silu, gelu, elu, hardtanh, ...), its decomposition
is that aten op itself, with the same arguments: inductor then sees what it sees for torch's own
function (the same graph, its own lowering and formula, the same kernel). Only the ops that no aten
op matches (softsign, tanhshrink, the gated, bias and cast ops, the clamped SwiGLU) get a formula
here, computed in float32 for 16-bit data and rounded once.
"""
import hashlib
import math
import os
import sys

import torch

from .reference import REFERENCE

MODES = ("auto", "fuse", "kernel")

# Ops kept opaque in "auto" mode: the bias backwards, whose column sums are deterministic where
# inductor's reduction order is its own. The gated backwards decompose: in a compiled step inductor
# writes one of da, db over a saved input the backward frees (a donated buffer) in the same single
# pass cuact's kernel makes, which an opaque op's freshly allocated results cannot match.
# quantize_NAME, NAME_ and NAME.out are never decomposed.
DEFAULT_KERNEL_SUFFIXES = ("_backward",)
DEFAULT_KERNEL_PREFIXES = ("bias_",)

_state = {"mode": "auto", "overrides": {}}
_registered = {}  # op name -> (OpOverload, family key)
_decompositions = {}  # op name -> its guarded decomposition
_installed = {"done": False}

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _opmath(t):
    return t.float() if t.dtype in (torch.float16, torch.bfloat16) else t


# ---- the aten op each cuact op means: forward, backward from x, backward from y ----

_aten = torch.ops.aten


def _inverse(a):
    """1 / a as aten's celu takes it (C++ double division: alpha 0 gives inf, not an error)."""
    return 1.0 / a if a != 0 else math.copysign(math.inf, a)


# (x, *cuact's parameters in schema order) -> the aten op of the same meaning. torch's own
# functions call these (F.silu is aten.silu, F.celu aten.celu, F.relu6 aten.relu6, ...), so under
# "fuse" inductor builds what it builds for torch's function.
ATEN_FORWARD = {
    "relu": lambda x: _aten.relu.default(x),
    "selu": lambda x: _aten.selu.default(x),
    "relu6": lambda x: _aten.relu6.default(x),
    "leaky_relu": lambda x, s=0.01: _aten.leaky_relu.default(x, s),
    "elu": lambda x, a=1.0: _aten.elu.default(x, a),
    "celu": lambda x, a=1.0: _aten.celu.default(x, a),
    "gelu": lambda x: _aten.gelu.default(x),
    "gelu_tanh": lambda x: _aten.gelu.default(x, approximate="tanh"),
    "silu": lambda x: _aten.silu.default(x),
    "mish": lambda x: _aten.mish.default(x),
    "sigmoid": lambda x: _aten.sigmoid.default(x),
    "logsigmoid": lambda x: _aten.log_sigmoid.default(x),
    "tanh": lambda x: _aten.tanh.default(x),
    "hardtanh": lambda x, lo=-1.0, hi=1.0: _aten.hardtanh.default(x, lo, hi),
    "hardsigmoid": lambda x: _aten.hardsigmoid.default(x),
    "hardswish": lambda x: _aten.hardswish.default(x),
    "softplus": lambda x, b=1.0, t=20.0: _aten.softplus.default(x, b, t),
    "softshrink": lambda x, l=0.5: _aten.softshrink.default(x, l),
    "hardshrink": lambda x, l=0.5: _aten.hardshrink.default(x, l),
    "threshold": lambda x, t=0.5, v=-2.0: _aten.threshold.default(x, t, v),
}

# (g, x, *parameters) -> dx: the backward torch's autograd runs for that aten op (relu's
# threshold_backward, selu's elu_backward with its scale, ...). sigmoid's and tanh's aten backwards
# take the output, recomputed here from x. Selections keep aten's conditions: a NaN x passes g
# where aten's comparison does (threshold_backward: x <= t gives 0, so NaN gives g).
ATEN_BACKWARD = {
    "relu": lambda g, x: _aten.threshold_backward.default(g, x, 0),
    "selu": lambda g, x: _aten.elu_backward.default(g, _SELU_ALPHA, _SELU_SCALE, 1.0, False, x),
    "relu6": lambda g, x: _aten.hardtanh_backward.default(g, x, 0.0, 6.0),
    "leaky_relu": lambda g, x, s=0.01: _aten.leaky_relu_backward.default(g, x, s, False),
    "elu": lambda g, x, a=1.0: _aten.elu_backward.default(g, a, 1.0, 1.0, False, x),
    "celu": lambda g, x, a=1.0: _aten.elu_backward.default(g, a, 1.0, _inverse(a), False, x),
    "gelu": lambda g, x: _aten.gelu_backward.default(g, x),
    "gelu_tanh": lambda g, x: _aten.gelu_backward.default(g, x, approximate="tanh"),
    "silu": lambda g, x: _aten.silu_backward.default(g, x),
    "mish": lambda g, x: _aten.mish_backward.default(g, x),
    "sigmoid": lambda g, x: _aten.sigmoid_backward.default(g, _aten.sigmoid.default(x)),
    "tanh": lambda g, x: _aten.tanh_backward.default(g, _aten.tanh.default(x)),
    "hardtanh": lambda g, x, lo=-1.0, hi=1.0: _aten.hardtanh_backward.default(g, x, lo, hi),
    "hardsigmoid": lambda g, x: _aten.hardsigmoid_backward.default(g, x),
    "hardswish": lambda g, x: _aten.hardswish_backward.default(g, x),
    "softplus": lambda g, x, b=1.0, t=20.0: _aten.softplus_backward.default(g, x, b, t),
    "softshrink": lambda g, x, l=0.5: _aten.softshrink_backward.default(g, x, l),
    "hardshrink": lambda g, x, l=0.5: _aten.hardshrink_backward.default(g, x, l),
    "threshold": lambda g, x, t=0.5, v=-2.0: _aten.threshold_backward.default(g, x, t),
}

# (g, y, *parameters) -> dx from the output, as torch's in-place autograd computes it.
ATEN_BACKWARD_FROM_OUTPUT = {
    "relu": lambda g, y: _aten.threshold_backward.default(g, y, 0),
    "selu": lambda g, y: _aten.elu_backward.default(g, _SELU_ALPHA, _SELU_SCALE, 1.0, True, y),
    "relu6": lambda g, y: _aten.hardtanh_backward.default(g, y, 0.0, 6.0),
    "hardtanh": lambda g, y, lo=-1.0, hi=1.0: _aten.hardtanh_backward.default(g, y, lo, hi),
    "leaky_relu": lambda g, y, s=0.01: _aten.leaky_relu_backward.default(g, y, s, True),
    "elu": lambda g, y, a=1.0: _aten.elu_backward.default(g, a, 1.0, 1.0, True, y),
    "celu": lambda g, y, a=1.0: _aten.elu_backward.default(g, a, 1.0, _inverse(a), True, y),
    "sigmoid": lambda g, y: _aten.sigmoid_backward.default(g, y),
    "tanh": lambda g, y: _aten.tanh_backward.default(g, y),
}


# ---- own formulas, where no aten op matches: d act(x) / dx times g, in opmath ----

def _where(cond, g):
    return torch.where(cond, g, torch.zeros_like(g))


# torch's softsign and tanhshrink are Python formulas over aten ops (no aten op of their own), and
# logsigmoid's aten backward needs the forward's buffer: these three keep a formula here.
_OWN_GRAD = {
    "logsigmoid": lambda g, x: g * torch.sigmoid(-x),
    "softsign": lambda g, x: g / (1 + x.abs()) ** 2,
    "tanhshrink": lambda g, x: g * torch.tanh(x) ** 2,
}

# The derivative of every activation that has one, for the fused ops' backwards (in opmath).
_GRAD = {**ATEN_BACKWARD, **_OWN_GRAD}
_GRAD_FROM_OUTPUT = ATEN_BACKWARD_FROM_OUTPUT


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
    aten_op = ATEN_FORWARD.get(name)
    if aten_op is not None:
        def forward(x, *params):  # the aten op in x's dtype: inductor does its own upcast
            return _keep_layout(aten_op(x, *params), x)
    else:
        def forward(x, *params):
            return _keep_layout(_act(name, _opmath(x), params).to(x.dtype), x)
    return forward


def _unary_backward(name, table):
    if table is not _OWN_GRAD:
        def backward(grad, saved, *params):  # aten's backward op in the tensors' dtype
            return table[name](grad, saved, *params)
    else:
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
    Resets dynamo's compiled graphs: the mode is read when a graph compiles. The mode and the
    overrides are part of torch.compile's cache key (cache_tag()), so a compile under another mode
    never loads an artifact saved under this one.
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
        backward_table = ATEN_BACKWARD if name in ATEN_BACKWARD else _OWN_GRAD
        if hasattr(ops, name + "_backward") and name in backward_table:
            out.append((name + "_backward", _unary_backward(name, backward_table)))
        if hasattr(ops, name + "_backward_from_output") and name in ATEN_BACKWARD_FROM_OUTPUT:
            out.append((name + "_backward_from_output",
                        _unary_backward(name, ATEN_BACKWARD_FROM_OUTPUT)))
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
    _tag_caches()


# ---- torch.compile's caches ----

_TAG_MARK = "|cuact:"


def _fingerprint():
    """A hash of the code the decompositions come from (this file and reference.py)."""
    digest = hashlib.sha1()
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("_compile.py", "reference.py"):
        try:
            with open(os.path.join(here, name), "rb") as f:
                digest.update(f.read())
        except OSError:  # no sources beside the package (a zip import): its version stands in
            from ._paths import version
            digest.update(version().encode())
    return digest.hexdigest()[:12]


def cache_tag():
    """cuact's part of torch.compile's cache key now: the decompositions' code, the mode and the
    per-op overrides."""
    if "fingerprint" not in _installed:
        _installed["fingerprint"] = _fingerprint()
    overrides = ",".join(f"{k}={v}" for k, v in sorted(_state["overrides"].items()))
    return f"{_TAG_MARK}{_installed['fingerprint']}:{_state['mode']}:{overrides}"


def _tag_caches():
    """Puts cache_tag() into torch.compiler.config.cache_key_tag, after the user's own tag.

    AOTAutograd's cache (and so inductor's, behind it) is keyed on the graph dynamo captured, in
    which a cuact op is the same node whatever its mode: without the tag, a compile in "kernel"
    mode would load the artifact a "fuse" compile saved (or one saved by older decompositions),
    from memory or from disk. The tag is part of every torch.compile cache key."""
    config = sys.modules.get("torch.compiler.config")
    if config is None:
        try:
            import torch.compiler.config as config
        except ImportError:  # a torch without the tag: see docs/pytorch.md
            return
    if not hasattr(config, "cache_key_tag"):
        return
    base = str(config.cache_key_tag or "").split(_TAG_MARK)[0]
    config.cache_key_tag = base + cache_tag()


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
