"""Your own activation as a cuact op family, from C++ expressions, JIT-compiled and cached."""
import hashlib
import re

import torch

from . import _fakes, _paths

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_built = {}  # (namespace, name) -> source hash, for this process


def _body(expression):
    """A member body: statements when the text has `return`, else one returned expression."""
    text = expression.strip()
    if re.search(r"\breturn\b", text):
        return text if text.endswith((";", "}")) else text + ";"
    return f"return {text};"


def source(name, forward, derivative=None, derivative_from_output=None, params=None,
           namespace="cuact_user", heavy=None, fused=False):
    """The CUDA source `activation` compiles (public so you can read or vendor it)."""
    params = dict(params or {})
    for ident in [name, namespace, *params]:
        if not _IDENT.match(ident):
            raise ValueError(f"cuact_torch.activation: {ident!r} is not a C++ identifier")
    members = "".join(f"  double {p} = {float(v)!r};\n" for p, v in params.items())
    schema = ", ".join(f"float {p}={float(v)!r}" for p, v in params.items())
    lines = [
        "#include <cuact/torch_fused.cuh>" if fused else "#include <cuact/torch.cuh>",
        "#include <cmath>",
        "",
        "namespace {",
        f"struct {name}_activation {{",
        members.rstrip("\n"),
    ]
    if heavy is not None:
        lines.append(f"  static constexpr bool is_heavy = {'true' if heavy else 'false'};")
    lines += [
        "  template <class C>",
        f"  __host__ __device__ C operator()(C x) const {{ {_body(forward)} }}",
    ]
    if derivative is not None:
        lines += ["  template <class C>",
                  f"  __host__ __device__ C derivative(C x) const {{ {_body(derivative)} }}"]
    if derivative_from_output is not None:
        lines += ["  template <class C>",
                  "  __host__ __device__ C derivative_from_output(C y) const "
                  f"{{ {_body(derivative_from_output)} }}"]
    lines += [
        "};",
        "}  // namespace",
        "",
        f"TORCH_LIBRARY_FRAGMENT({namespace}, m) {{",
        f"  CUACT_TORCH_OP_FAMILY(m, {namespace}, {name}, {name}_activation, \"{schema}\");",
        f"  CUACT_TORCH_FUSED_OPS(m, {namespace}, {name}, {name}_activation, \"{schema}\");"
        if fused else None,
        "}",
        "",
    ]
    return "\n".join(line for line in lines if line is not None)


def activation(name, forward, derivative=None, derivative_from_output=None, params=None,
               namespace="cuact_user", heavy=None, fused=False, verbose=False):
    """Compiles an activation written as C++ expressions into the op family `namespace::name`.

    forward: an expression in `x` of the compute type `C` (float for float32/float16/bfloat16,
        double for float64), e.g. "x / (C(1) + exp(-x))"; or statements with `return`.
        Write constants as C(0.5) to stay in the compute type.
    derivative: act'(x), the same way (enables autograd and NAME_backward).
    derivative_from_output: act'(x) as a function of y = act(x) (in-place ops then save y only).
    params: {"alpha": 1.0, ...}: double members usable in the expressions, op parameters with
        these defaults (schema `float alpha=1.0`).
    heavy: the cost hint (True for tens of instructions per element); None lets cuact estimate.
    fused: also define the fused ops (include/cuact/torch_fused.cuh): gated_NAME(a, b) = act(a) * b,
        gated_NAME_packed(ab, activate_first=True), bias_NAME(x, bias) = act(x + bias),
        cast_NAME(x, dtype=...), quantize_NAME(x, scale=..., dtype=None) -> (fp8, amax), and with
        a derivative the _backward ops and autograd (quantize_NAME has none).

    One fused kernel per call; built with torch.utils.cpp_extension.load_inline and cached on disk
    (TORCH_EXTENSIONS_DIR) under a hash of the source, so later processes load it without
    compiling. Returns the functional op torch.ops.NAMESPACE.NAME; the family is beside it:
    NAME_, NAME.out, NAME_backward (with a derivative), NAME_backward_from_output.
    """
    from torch.utils.cpp_extension import load_inline

    src = source(name, forward, derivative, derivative_from_output, params, namespace, heavy, fused)
    cuda_flags = _paths.NVCC_FLAGS
    digest = hashlib.sha1((src + "\0".join(cuda_flags)).encode())
    for header in _paths.header_files():
        with open(header, "rb") as f:
            digest.update(f.read())
    key = digest.hexdigest()[:12]
    previous = _built.get((namespace, name))
    if previous is not None and previous != key:
        raise ValueError(
            f"cuact_torch.activation: {namespace}::{name} is already defined in this process with "
            "another source; choose another name")
    if previous is None:
        load_inline(
            name=f"cuact_fn_{namespace}_{name}_{key}",
            cpp_sources="",
            cuda_sources=src,
            extra_include_paths=[_paths.include_dir()],
            extra_cflags=_paths.CXX_FLAGS,
            extra_cuda_cflags=cuda_flags,
            is_python_module=False,
            verbose=verbose,
        )
        _fakes.register_fakes(namespace, [name])
        _built[(namespace, name)] = key
    return getattr(getattr(torch.ops, namespace), name)
