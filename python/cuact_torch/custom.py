"""Your own activation as a cuact op family, from C++ expressions, compiled at run time by NVRTC
(load_inline as the fallback) and cached on disk."""
import ctypes
import hashlib
import os
import re
import warnings

import torch

from . import _fakes, _nvrtc, _paths

CompileError = _nvrtc.CompileError  # a user source NVRTC rejected: log, part, line, column
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_built = {}  # (namespace, name) -> source hash, for this process


_HEADER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./+-]*$")


def _includes(includes):
    """`includes` as a tuple of header names, each checked: a relative path (no quotes, spaces or
    ..), as #include <...> takes it."""
    if isinstance(includes, str):
        includes = (includes,)
    headers = tuple(includes)
    for h in headers:
        if not isinstance(h, str) or not _HEADER.fullmatch(h) or ".." in h.split("/"):
            raise ValueError(f"cuact_torch.activation: includes: {h!r} is not a header name such "
                             "as 'cuact/activations.cuh'")
    return headers


# Every member of a user's functor takes cuact's accuracy tag (activation.cuh: rounded_to), named
# `accuracy` in its expressions: unused, it changes nothing; passed on, a built-in activation's
# math is the one the built-in op runs for that dtype (`cuact::forward_at(cuact::selu{}, x,
# accuracy)`: for 16-bit results the shorter 16-bit math), where without it a call computes at
# float accuracy.
_TAGGED_TEMPLATE = "  template <class C, class Accuracy = cuact::rounded_to<C>>"
_TAG_PARAMETER = "[[maybe_unused]] Accuracy accuracy = Accuracy{}"


def _body(expression):
    """A member body: statements when the text has `return`, else one returned expression."""
    text = expression.strip()
    if re.search(r"\breturn\b", text):
        return text if text.endswith((";", "}")) else text + ";"
    return f"return {text};"


def source(name, forward, derivative=None, derivative_from_output=None, params=None,
           namespace="cuact_user", heavy=None, fused=False, includes=()):
    """The CUDA source `activation` compiles (public so you can read or vendor it)."""
    params = dict(params or {})
    includes = _includes(includes)
    for ident in [name, namespace, *params]:
        if not _IDENT.match(ident):
            raise ValueError(f"cuact_torch.activation: {ident!r} is not a C++ identifier")
    members = "".join(f"  double {p} = {float(v)!r};\n" for p, v in params.items())
    schema = ", ".join(f"float {p}={float(v)!r}" for p, v in params.items())
    lines = [
        "#include <cuact/torch_fused.cuh>" if fused else "#include <cuact/torch.cuh>",
        "#include <cmath>",
        *[f"#include <{h}>" for h in includes],
        "",
        "namespace {",
        f"struct {name}_activation {{",
        members.rstrip("\n"),
    ]
    if heavy is not None:
        lines.append(f"  static constexpr cuact::cost cost = cuact::cost::{'heavy' if heavy else 'light'};")
    lines += [
        _TAGGED_TEMPLATE,
        f"  __host__ __device__ C operator()(C x, {_TAG_PARAMETER}) const {{ {_body(forward)} }}",
    ]
    if derivative is not None:
        lines += [_TAGGED_TEMPLATE,
                  f"  __host__ __device__ C derivative(C x, {_TAG_PARAMETER}) const "
                  f"{{ {_body(derivative)} }}"]
    if derivative_from_output is not None:
        lines += [_TAGGED_TEMPLATE,
                  f"  __host__ __device__ C derivative_from_output(C y, {_TAG_PARAMETER}) const "
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


def _activation_load_inline(name, forward, derivative=None, derivative_from_output=None,
                            params=None, namespace="cuact_user", heavy=None, fused=False,
                            verbose=False, includes=()):
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

    src = source(name, forward, derivative, derivative_from_output, params, namespace, heavy, fused,
                 includes)
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


# ---- the NVRTC path ---------------------------------------------------------------------------
# One source per (group, dtype), compiled on first use: "forward" (the forward; in place and out
# reuse it), "backward", "fused" (gated and bias), "fused_backward" (their backwards), "cast" and
# "quantize" (per output dtype). Each module holds only the kernels of its group, at the one
# vector width its launches use.

_CTYPE = {}  # torch dtype -> (C++ type, vector width): 16-byte vectors as cuact's auto_width
_THREADS = int(os.environ.get("CUACT_TORCH_JIT_THREADS", "128"))  # cuact's threads_per_block
_VECTORS = int(os.environ.get("CUACT_TORCH_JIT_VECTORS", "0"))  # 0: max_load_bytes_per_thread's
_BLOCKS_PER_SM = int(os.environ.get("CUACT_TORCH_JIT_BLOCKS_PER_SM", "0"))  # 0: one pass, no cap
_PASSES = int(os.environ.get("CUACT_TORCH_JIT_PASSES", "0"))  # grid-stride steps; 0: the rule in run
# A quantize grid of 4 x this many blocks or more runs a quarter of them, each over four times
# the elements, as fused_dispatch.cuh's quantize_launch_shape does (quantize_min_blocks).
_QUANTIZE_MIN_BLOCKS = 8192
_families = {}  # (namespace, name) -> _Family
_libraries = {}  # namespace -> torch.library.Library (kept alive: dropping it removes the ops)


def _ctypes_of():
    if not _CTYPE:
        _CTYPE.update({torch.float32: ("float", 4), torch.float64: ("double", 2),
                       torch.float16: ("__half", 8), torch.bfloat16: ("__nv_bfloat16", 8),
                       torch.float8_e4m3fn: ("__nv_fp8_e4m3", 16),
                       torch.float8_e5m2: ("__nv_fp8_e5m2", 16)})
    return _CTYPE


def _split(n, pointers, element_bytes, width):
    """(head, vectors, tail): vectors where every pointer sits at the same element offset from its
    vector boundary (kernels/elementwise.cuh: make_params), else scalars only."""
    vector_bytes = element_bytes * width
    offsets = {p % vector_bytes for p in pointers}
    if len(offsets) != 1 or any(p % element_bytes for p in pointers):
        return 0, 0, n
    offset = offsets.pop() // element_bytes
    head = min((width - offset) % width, n)
    vectors = (n - head) // width
    return head, vectors, n - head - vectors * width


class _Family:
    """One user activation: its functor source, its compiled modules per (group, dtype, device)."""

    def __init__(self, name, namespace, parts, params, heavy, fused, includes=()):
        self.name, self.namespace, self.params, self.fused = name, namespace, params, fused
        self.includes = includes  # headers the functor's expressions use, after cuact's
        self.heavy = heavy  # the cost hint: True, False, or None (not declared)
        self.parts = parts  # {"forward": text, "derivative": text or None, ...}
        self.include = _paths.include_dir()
        self.version = _nvrtc.version_of_cuact(self.include)
        self.defaults = [float(v) for v in params.values()]
        self.modules = {}
        self.functor, self.part_lines = self._functor(heavy)
        self.key = hashlib.sha1("\0".join([self.functor, *includes]).encode()).hexdigest()[:16]

    # -- source ----------------------------------------------------------------------------
    def _functor(self, heavy):
        """The functor's C++ text and, per part, its first line in the full source."""
        lines = [f"  double {p} = {float(v)!r};" for p, v in self.params.items()]
        if heavy is not None:
            lines.append(f"  static constexpr cuact::cost cost = cuact::cost::{'heavy' if heavy else 'light'};")
        starts = {}
        members = {"forward": ("operator()", "x"), "derivative": ("derivative", "x"),
                   "derivative_from_output": ("derivative_from_output", "y"),
                   "gradient": ("gradient", "dy, C x")}
        for part, (member, arg) in members.items():
            text = self.parts.get(part)
            if text is None:
                continue
            lines += [_TAGGED_TEMPLATE, f"  __device__ C {member}(C {arg}, {_TAG_PARAMETER}) const {{"]
            body = text.strip()
            if re.search(r"\breturn\b", body):
                starts[part] = len(lines)
                lines += body.split("\n")
                if not body.endswith((";", "}")):
                    lines[-1] += ";"
            else:
                lines.append("    return (")
                starts[part] = len(lines)
                lines += body.split("\n")
                lines.append("    );")
            lines.append("  }")
        return "\n".join(lines), starts

    def _prelude(self, group):
        head = ["#include <cuact/rtc.cuh>"]  # first: it sets CCCL up for NVRTC
        if group in ("fused", "fused_backward", "quantize"):
            head.append("#include <cuact/fused.cuh>")
        if group == "quantize":
            head.append("#include <cuact/detail/kernels/quantize.cuh>")
        head += [f"#include <{h}>" for h in self.includes]
        head += ["using cuda::std::size_t;", "struct user_activation {"]
        return head

    def source(self, group, dtype, out_dtype=None):
        """The full source of one group for one dtype; functor at the lines part_lines names."""
        ctype, width = _ctypes_of()[dtype]
        lines = self._prelude(group)
        self.functor_line = len(lines)  # 0-based index of the functor's first line
        lines += self.functor.split("\n")
        lines += ["};", f"using T = {ctype};"]
        sig = "".join(f", double {p}" for p in self.params)
        make = "user_activation act{" + ", ".join(self.params) + "};"
        grid = ("const size_t thread = blockIdx.x * size_t(blockDim.x) + threadIdx.x;"
                " const size_t threads = size_t(gridDim.x) * blockDim.x;")
        split = "size_t head, size_t vectors, size_t tail, unsigned k"

        def elementwise(kernel, op, outs, ins, width_=width, init="{}, act"):
            out_types = ", ".join(t for t, _ in outs)
            in_types = ", ".join(t for t, _ in ins)
            args = ", ".join([f"{t}* {n}" for t, n in outs] + [f"const {t}* {n}" for t, n in ins])
            return [
                f'extern "C" __global__ void {kernel}({args}, {split}{sig}) {{',
                f"  {make}",
                f"  using op_t = {op};",
                f"  cuact::elementwise_params<op_t, {width_}, cuact::detail::type_list<{out_types}>,"
                f" cuact::detail::type_list<{in_types}>> p{{{{{', '.join(n for _, n in outs)}}}, "
                f"{{{', '.join(n for _, n in ins)}}}, head, vectors, tail, k, op_t{{{init}}}}};",
                f"  {grid}",
                "  cuact::elementwise_thread(p, thread, threads);",
                "}"]

        def rows(kernel, op, ins, body):
            args = ", ".join(["T* out"] + [f"const T* {n}" for n in ins])
            return [
                f'extern "C" __global__ void {kernel}({args}, size_t n, size_t cols{sig}) {{',
                f"  {make}", f"  const {op} op{{{{}}, act}};", f"  {grid}",
                "  for (size_t i = thread; i < n; i += threads) {", f"    {body}", "  }", "}"]

        if group == "forward":
            lines += elementwise("cuact_forward", "cuact::forward_op<user_activation, T>",
                                 [("T", "out")], [("T", "x")])
            if self._forward_one_vector(dtype):
                lines += elementwise(
                    "cuact_forward_one",
                    "cuact::detail::one_vector_op<cuact::forward_op<user_activation, T>>",
                    [("T", "out")], [("T", "x")], init="{{}, act}")
        elif group == "backward":
            if self.parts.get("derivative") is not None or self.parts.get("gradient") is not None:
                lines += elementwise("cuact_backward", "cuact::gradient_op<user_activation, T>",
                                     [("T", "dx")], [("T", "x"), ("T", "dy")])
            if self.parts.get("derivative_from_output") is not None:
                lines += elementwise("cuact_backward_from_output",
                                     "cuact::gradient_from_output_op<user_activation, T>",
                                     [("T", "dx")], [("T", "y"), ("T", "dy")])
        elif group == "fused":
            lines += elementwise("cuact_gated", "cuact::gated_op<user_activation, T>",
                                 [("T", "out")], [("T", "a"), ("T", "b")])
            lines += rows("cuact_bias", "cuact::bias_op<user_activation, T>", ["x", "bias"],
                          "out[i] = T(op(float(x[i]), float(bias[i % cols])));" if ctype in (
                              "__half", "__nv_bfloat16") else "out[i] = op(x[i], bias[i % cols]);")
        elif group == "fused_backward":
            if self.has_gradient:
                lines += elementwise("cuact_gated_backward",
                                     "cuact::gated_gradient_op<user_activation, T>",
                                     [("T", "da"), ("T", "db")], [("T", "a"), ("T", "b"), ("T", "dy")])
                lines += rows("cuact_bias_backward", "cuact::bias_gradient_op<user_activation, T>",
                              ["x", "bias", "dy"],
                              "out[i] = T(op(float(x[i]), float(bias[i % cols]), float(dy[i])));"
                              if ctype in ("__half", "__nv_bfloat16")
                              else "out[i] = op(x[i], bias[i % cols], dy[i]);")
        elif group == "cast":
            uctype, uwidth = _ctypes_of()[out_dtype]
            w = min(width, uwidth)
            lines += [f"using U = {uctype};"]
            lines += elementwise("cuact_cast", "cuact::forward_op<user_activation, U>",
                                 [("U", "out")], [("T", "x")], width_=w)
        elif group == "quantize":  # kernels/quantize.cuh: quantize_block, amax folded per block
            uctype, uwidth = _ctypes_of()[out_dtype]
            w = min(width, uwidth)
            lines += [
                f"using U = {uctype};",
                'extern "C" __global__ void cuact_quantize(U* out, const T* x, '
                f"{split}, float* amax, const float* scale{sig}) {{",
                f"  {make}",
                "  using op_t = cuact::detail::amax_op<user_activation, U>;",
                f"  using params_t = cuact::elementwise_params<op_t, {w}, "
                "cuact::detail::type_list<U>, cuact::detail::type_list<T>>;",
                "  const cuact::detail::quantize_params<params_t> q{params_t{{out}, {x}, head, "
                "vectors, tail, k, op_t{{}, act, 1.0f, nullptr}}, amax, scale};",
                "  cuact::detail::quantize_block(q, cuact::detail::global_memory_access{});",
                "}"]
        return "\n".join(lines) + "\n"

    def _forward_one_vector(self, dtype):
        """Whether the forward for `dtype` runs a kernel compiled for one vector per thread: a
        16-bit forward declared heavy, as cuact's launch model runs one (dispatch.cuh:
        heavy_runs_one_vector). Compiled for two and run with one, its math keeps the second
        vector's registers and code, and it fell well short of the built-in kernel."""
        return self.heavy is True and _ctypes_of()[dtype][0] in ("__half", "__nv_bfloat16")

    @property
    def has_gradient(self):
        return any(self.parts.get(p) is not None for p in ("derivative", "gradient"))

    # -- compile -----------------------------------------------------------------------------
    def module(self, group, dtype, device, out_dtype=None):
        slot = (group, dtype, out_dtype, device)
        mod = self.modules.get(slot)
        if mod is not None:
            return mod
        major, minor = torch.cuda.get_device_capability(device)
        arch = f"{major}{minor}"
        src = self.source(group, dtype, out_dtype)
        key = _nvrtc.cache_key(src, arch, self.include, self.version)
        cubin = _nvrtc.cached_cubin(key)
        if cubin is None:
            file_name = f"{self.namespace}_{self.name}.cu"
            _nvrtc.log_compile(f"compiling {self.namespace}::{self.name} {group} {dtype} sm_{arch}")
            try:
                cubin, _ = _nvrtc.compile_cubin(src, file_name, arch,
                                                [self.include, *_nvrtc.include_dirs()])
            except _nvrtc.CompileError as e:
                raise self._user_error(e.log, file_name) from None
            _nvrtc.store_cubin(key, cubin)  # only a source that compiled is cached
        with torch.cuda.device(device):
            torch.cuda.current_stream(device)  # the primary context is current from here
            mod = _nvrtc.Module(cubin)
        self.modules[slot] = mod
        return mod

    def _user_error(self, log, file_name):
        line, column, message = _nvrtc.first_error(log, file_name)
        part = where = None
        if line is not None:
            functor_first = self.functor_line + 1  # 1-based line of the functor's first line
            for p, start in sorted(self.part_lines.items(), key=lambda kv: kv[1]):
                count = len(self.parts[p].strip().split("\n"))
                first = functor_first + start
                if first <= line < first + count:
                    part, where = p, line - first + 1
        if part is not None:
            text = (f"cuact_torch.activation: {self.namespace}::{self.name}: {part}, line {where}"
                    f"{f', column {column}' if column else ''}: {message}")
            return _nvrtc.CompileError(text + "\n\nNVRTC log:\n" + log, log, part, where, column)
        return _nvrtc.CompileError(f"cuact_torch.activation: {self.namespace}::{self.name} did "
                                   f"not compile: {message}\n\nNVRTC log:\n" + log, log)

    # -- launch ------------------------------------------------------------------------------
    def run(self, group, kernel, outs, ins, params, out_dtype=None, extra=()):
        """An elementwise kernel over flat tensors of the same numel (outs, then ins); `extra`:
        pointers the kernel takes after the split, before the parameters (quantize's amax, scale)."""
        first = ins[0]
        n = first.numel()
        if n == 0:
            return
        dtype = first.dtype
        mod = self.module(group, dtype, first.device.index, out_dtype)
        _, width = _ctypes_of()[dtype]
        if out_dtype is not None:
            width = min(width, _ctypes_of()[out_dtype][1])
        tensors = [*outs, *ins]
        pointers = [t.data_ptr() for t in tensors]
        element = min(t.element_size() for t in tensors)
        head, vectors, tail = _split(n, pointers, max(t.element_size() for t in tensors), width) \
            if element == max(t.element_size() for t in tensors) else _split_mixed(n, tensors, width)
        load_bytes = sum(t.element_size() for t in ins) * width
        k = 1 if load_bytes >= 32 else 32 // load_bytes  # max_load_bytes_per_thread
        # one vector per thread for a declared-light forward over vectors of 4 elements or fewer
        # (fp32, fp64), as the built-in light ops launch; a heavy or undeclared one keeps two,
        # whose loads hide its math as launch.cuh's model gives heavy ops (one starves it)
        if width <= 4 and out_dtype is None and self.heavy is False:
            k = 1
        passes = 1
        if kernel == "cuact_forward" and width >= 8 and self.heavy is not False:
            # a heavy or undeclared 16-bit forward: two grid-stride passes, where the grid still
            # fills the GPU (the model's passes where a 16-bit forward's instruction budget is
            # tight, as on every current data-centre GPU); a declared-heavy one in the kernel
            # compiled for one vector per thread (_forward_one_vector)
            if self._forward_one_vector(dtype):
                kernel, k = "cuact_forward_one", 1
            waves = vectors / (k * 2048 * _sm_count(first.device))
            passes = 2 if waves >= 2 else 1
        k = min(k, _VECTORS) if _VECTORS else k
        passes = _PASSES if _PASSES else passes
        work = max(-(-vectors // (k * passes)), head + tail)
        blocks = max(1, min(-(-work // _THREADS), 2 ** 31 - 1))
        if group == "quantize" and blocks >= 4 * _QUANTIZE_MIN_BLOCKS:
            blocks = -(-blocks // 4)  # each block ends in a reduction and an atomicMax
        if _BLOCKS_PER_SM:
            sms = torch.cuda.get_device_properties(first.device).multi_processor_count
            blocks = min(blocks, _BLOCKS_PER_SM * sms)
        args = [ctypes.c_void_p(p) for p in pointers]
        args += [ctypes.c_size_t(head), ctypes.c_size_t(vectors), ctypes.c_size_t(tail),
                 ctypes.c_uint(k)]
        args += [ctypes.c_void_p(t.data_ptr()) for t in extra]
        args += [ctypes.c_double(float(v)) for v in params]
        mod.launch(kernel, blocks, _THREADS, torch.cuda.current_stream(first.device).cuda_stream,
                   args)

    def run_rows(self, group, kernel, out, ins, cols, params):
        n = out.numel()
        if n == 0:
            return
        mod = self.module(group, out.dtype, out.device.index)
        blocks = max(1, min(-(-n // _THREADS), 65535 * 32))
        args = [ctypes.c_void_p(t.data_ptr()) for t in (out, *ins)]
        args += [ctypes.c_size_t(n), ctypes.c_size_t(cols)]
        args += [ctypes.c_double(float(v)) for v in params]
        mod.launch(kernel, blocks, _THREADS, torch.cuda.current_stream(out.device).cuda_stream,
                   args)


_SMS = {}  # device index -> SM count


def _sm_count(device):
    count = _SMS.get(device.index)
    if count is None:
        count = _SMS[device.index] = torch.cuda.get_device_properties(device).multi_processor_count
    return count


def _split_mixed(n, tensors, width):
    """The split for arrays of different element sizes: every pointer at the same element offset
    from its boundary of width elements."""
    offsets = set()
    for t in tensors:
        vector_bytes = t.element_size() * width
        if t.data_ptr() % t.element_size():
            return 0, 0, n
        offsets.add(t.data_ptr() % vector_bytes // t.element_size())
    if len(offsets) != 1:
        return 0, 0, n
    head = min((width - offsets.pop()) % width, n)
    vectors = (n - head) // width
    return head, vectors, n - head - vectors * width


_FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def _check(cond, message):
    """torch._check for the CUDA kernels, which see real tensors and so plain bools: torch._check
    imports torch.fx.experimental.symbolic_shapes (and sympy) on its first call, seconds that
    would land on an op's first call. Anything but a bool (a SymBool) goes to torch._check."""
    if cond is True:
        return
    if cond is False:
        raise RuntimeError(message())
    torch._check(cond, message)


def _check_input(t, op, arg="self"):
    _check(t.is_cuda, lambda: f"{op}: expected a CUDA tensor for {arg}, got {t.device}")
    _check(t.dtype in _FLOATS,
           lambda: f"{op}: unsupported dtype {t.dtype} for {arg} (float32, float64, float16, "
           "bfloat16)")


def _dense(x):
    """x itself where its elements are consecutive in memory (any dim order), else a copy."""
    return x if _fakes._flat_dense(x.shape, x.stride()) else x.contiguous()


def _register(family):
    """Defines NAME, NAME_, NAME.out, NAME_backward(_from_output) and, with fused, gated_NAME,
    gated_NAME_packed, bias_NAME, cast_NAME and their backwards, in torch.library."""
    ns, name = family.namespace, family.name
    lib = _libraries.get(ns)
    if lib is None:
        lib = _libraries[ns] = torch.library.Library(ns, "FRAGMENT")
    params = list(family.params)
    schema = "".join(f", float {p}={float(v)!r}" for p, v in family.params.items())
    ops = getattr(torch.ops, ns)
    qual = f"{ns}::{name}"

    def p_of(args):  # the dispatcher leaves out trailing arguments at their defaults
        return [float(a) for a in args] + family.defaults[len(args):]

    def forward(x, *p):
        _check_input(x, qual)
        xd = _dense(x)
        out = torch.empty_like(xd)
        family.run("forward", "cuact_forward", [out], [xd], p_of(p))
        return out

    def forward_inplace(x, *p):
        _check_input(x, qual + "_")
        if _fakes._flat_dense(x.shape, x.stride()):
            family.run("forward", "cuact_forward", [x], [x], p_of(p))
        else:
            x.copy_(forward(x, *p))
        return x

    def forward_out(x, *p, out):
        _check_input(x, qual + ".out")
        _check(out.dtype == x.dtype, lambda: f"{qual}.out: out must be of dtype {x.dtype}")
        if out.shape != x.shape:
            out.resize_(x.shape)
        if _fakes._flat_alike(x, out):
            family.run("forward", "cuact_forward", [out], [x], p_of(p))
        else:
            out.copy_(forward(x, *p))
        return out

    lib.define(f"{name}(Tensor self{schema}) -> Tensor")
    lib.define(f"{name}_(Tensor(a!) self{schema}) -> Tensor(a!)")
    lib.define(f"{name}.out(Tensor self{schema}, *, Tensor(a!) out) -> Tensor(a!)")
    lib.impl(name, forward, "CUDA")
    lib.impl(f"{name}_", forward_inplace, "CUDA")
    lib.impl(f"{name}.out", forward_out, "CUDA")
    _fakes._register_fake(qual, lambda x, *p: _fakes._empty_output(x), lib=lib)
    _fakes._register_fake(qual + "_", lambda x, *p: x, lib=lib)
    _fakes._register_fake(qual + ".out", lambda x, *p, out: out, lib=lib)

    def define_backward(suffix, kernel, saved):
        """NAME<suffix>(grad_output, <saved>): dx from dy and the saved x or y, with its fake."""
        def backward_op(dy, t, *p):
            t = _dense(t)
            if not _fakes._flat_alike(t, dy):
                t, dy = t.contiguous(), dy.contiguous()
            dx = torch.empty_like(t)
            family.run("backward", kernel, [dx], [t, dy], p_of(p))
            return dx
        lib.define(f"{name}{suffix}(Tensor grad_output, Tensor {saved}{schema}) -> Tensor")
        lib.impl(f"{name}{suffix}", backward_op, "CUDA")
        _fakes._register_fake(qual + suffix, lambda dy, t, *p: _fakes._empty_output(t),
                                    lib=lib)

    has_x = family.has_gradient
    has_y = family.parts.get("derivative_from_output") is not None
    if has_x:
        define_backward("_backward", "cuact_backward", "self")
    if has_y:
        define_backward("_backward_from_output", "cuact_backward_from_output", "result")

    def setup_context(ctx, inputs, output):
        if not (has_x or has_y):
            raise RuntimeError(f"{qual}: no derivative: pass derivative= (or "
                               "derivative_from_output=) to cuact_torch.activation for autograd")
        ctx.p = p_of(inputs[1:])
        ctx.inputs = len(inputs)
        ctx.save_for_backward(inputs[0] if has_x else output)

    def backward(ctx, grad):
        (saved,) = ctx.saved_tensors
        if has_x:
            dx = getattr(ops, f"{name}_backward")(grad, saved, *ctx.p)
        else:
            dx = getattr(ops, f"{name}_backward_from_output")(grad, saved, *ctx.p)
        return (dx, *([None] * (ctx.inputs - 1)))

    torch.library.register_autograd(qual, backward, setup_context=setup_context, lib=lib)

    def inplace_autograd(x, *p):
        # with a gradient to record: the functional op (its autograd) copied back into x; from a
        # copy of x where the backward reads x, which the copy back overwrites
        if torch.is_grad_enabled() and x.requires_grad:
            return x.copy_(getattr(ops, name)(x.clone() if has_x else x, *p))
        with torch._C._AutoDispatchBelowADInplaceOrView():
            getattr(ops, f"{name}_")(x, *p)
        torch.autograd.graph.increment_version(x)
        return x
    lib.impl(f"{name}_", inplace_autograd, "Autograd")

    if family.fused:
        _register_fused(family, lib, schema, params)


def _register_fused(family, lib, schema, params):
    ns, name = family.namespace, family.name
    ops = getattr(torch.ops, ns)

    def p_of(args):  # the dispatcher leaves out trailing arguments at their defaults
        return [float(a) for a in args] + family.defaults[len(args):]

    def gated(a, b, *p):
        _check_input(a, f"{ns}::gated_{name}", "a")
        _check(b.shape == a.shape and b.dtype == a.dtype,
               lambda: f"{ns}::gated_{name}: b must match a's size and dtype")
        a, b = a.contiguous(), b.contiguous()
        out = torch.empty_like(a)
        family.run("fused", "cuact_gated", [out], [a, b], p_of(p))
        return out

    def gated_backward(dy, a, b, *p):
        a, b, dy = a.contiguous(), b.contiguous(), dy.contiguous()
        da, db = torch.empty_like(a), torch.empty_like(b)
        family.run("fused_backward", "cuact_gated_backward", [da, db], [a, b, dy], p_of(p))
        return da, db

    def halves(ab, activate_first):
        c = ab.shape[-1] // 2
        first, second = ab[..., :c], ab[..., c:]
        return (first, second) if activate_first else (second, first)

    def gated_packed(ab, *p, activate_first=True):
        _check(ab.shape[-1] % 2 == 0,
               lambda: f"{ns}::gated_{name}_packed: the last dim must be even")
        a, b = halves(ab, activate_first)
        return gated(a, b, *p)

    def bias(x, bias_, *p):
        _check_input(x, f"{ns}::bias_{name}")
        _check(bias_.dim() == 1 and bias_.shape[0] == x.shape[-1] and bias_.dtype == x.dtype,
               lambda: f"{ns}::bias_{name}: bias must be 1-D of x's last dim and dtype")
        x, bias_ = x.contiguous(), bias_.contiguous()
        out = torch.empty_like(x)
        family.run_rows("fused", "cuact_bias", out, [x, bias_], x.shape[-1], p_of(p))
        return out

    def bias_backward(dy, x, bias_, *p):
        x, bias_, dy = x.contiguous(), bias_.contiguous(), dy.contiguous()
        dx = torch.empty_like(x)
        family.run_rows("fused_backward", "cuact_bias_backward", dx, [x, bias_, dy], x.shape[-1],
                        p_of(p))
        return dx, dx.reshape(-1, x.shape[-1]).sum(0, dtype=torch.float32).to(x.dtype) \
            if x.dtype != torch.float64 else dx.reshape(-1, x.shape[-1]).sum(0)

    def cast(x, *p, dtype):
        _check_input(x, f"{ns}::cast_{name}")
        x = _dense(x)
        out = torch.empty_like(x, dtype=dtype)
        if dtype == x.dtype:
            family.run("forward", "cuact_forward", [out], [x], p_of(p))
        else:
            family.run("cast", "cuact_cast", [out], [x], p_of(p), out_dtype=dtype)
        return out

    quantize_qual = f"{ns}::quantize_{name}"

    def quantize(x, *p, scale, dtype=None):
        """(saturate(act(x) * scale) as fp8, max |act(x)| as a 0-dim float32), the scale read on
        the device: the built-in quantize_NAME's contract (torch_fused.cuh), checks included."""
        _check_input(x, quantize_qual, "x")
        _check(scale.device == x.device,
               lambda: f"{quantize_qual}: expected all tensors on the same device, but x is "
               f"on {x.device} and scale on {scale.device}")
        _check(scale.dtype == torch.float32 and scale.numel() == 1,
               lambda: f"{quantize_qual}: expected scale a float32 tensor of one element, "
               f"got {scale.dtype} of size {list(scale.shape)}")
        target = torch.float8_e4m3fn if dtype is None else dtype
        _check(target in (torch.float8_e4m3fn, torch.float8_e5m2),
               lambda: f"{quantize_qual}: expected dtype float8_e4m3fn or float8_e5m2, got "
               f"{target} (other dtypes come from {ns}::cast_{name})")
        xd = _dense(x)
        out = torch.empty_like(xd, dtype=target)
        amax = torch.zeros((), dtype=torch.float32, device=x.device)  # the kernel folds into it
        family.run("quantize", "cuact_quantize", [out], [xd], p_of(p), out_dtype=target,
                   extra=[amax, scale])
        return out, amax

    def quantize_autograd(x, *p, scale, dtype=None):
        # not differentiable, as the built-in: the results never require grad
        with torch._C._AutoDispatchBelowADInplaceOrView():
            return getattr(ops, f"quantize_{name}")(x, *p, scale=scale, dtype=dtype)

    lib.define(f"gated_{name}(Tensor a, Tensor b{schema}) -> Tensor")
    lib.define(f"gated_{name}_packed(Tensor ab{schema}, *, bool activate_first=True) -> Tensor")
    lib.define(f"bias_{name}(Tensor self, Tensor bias{schema}) -> Tensor")
    lib.define(f"cast_{name}(Tensor self{schema}, *, ScalarType dtype) -> Tensor")
    lib.define(f"quantize_{name}(Tensor x{schema}, *, Tensor scale, ScalarType? dtype=None) "
               "-> (Tensor, Tensor)")
    lib.impl(f"gated_{name}", gated, "CUDA")
    lib.impl(f"gated_{name}_packed", gated_packed, "CUDA")
    lib.impl(f"bias_{name}", bias, "CUDA")
    lib.impl(f"cast_{name}", cast, "CUDA")
    lib.impl(f"quantize_{name}", quantize, "CUDA")
    lib.impl(f"quantize_{name}", quantize_autograd, "Autograd")
    _fakes._register_fake(f"{ns}::gated_{name}", lambda a, b, *p: torch.empty_like(
        a, memory_format=torch.contiguous_format), lib=lib)
    _fakes._register_fake(
        f"{ns}::gated_{name}_packed", lambda ab, *p, activate_first=True: ab.new_empty(
            (*ab.shape[:-1], ab.shape[-1] // 2)), lib=lib)
    _fakes._register_fake(f"{ns}::bias_{name}", lambda x, b, *p: torch.empty_like(
        x, memory_format=torch.contiguous_format), lib=lib)
    _fakes._register_fake(f"{ns}::cast_{name}", lambda x, *p, dtype: _fakes._empty_output(
        x, dtype), lib=lib)
    _fakes._register_fake(quantize_qual, _fakes._fake_quantize(
        quantize_qual, f"{ns}::cast_{name}"), lib=lib)
    if not family.has_gradient:
        return
    lib.define(f"gated_{name}_backward(Tensor grad_output, Tensor a, Tensor b{schema}) "
               "-> (Tensor, Tensor)")
    lib.define(f"bias_{name}_backward(Tensor grad_output, Tensor self, Tensor bias{schema}) "
               "-> (Tensor, Tensor)")
    lib.impl(f"gated_{name}_backward", gated_backward, "CUDA")
    lib.impl(f"bias_{name}_backward", bias_backward, "CUDA")
    _fakes._register_fake(
        f"{ns}::gated_{name}_backward", lambda dy, a, b, *p: (
            torch.empty_like(a, memory_format=torch.contiguous_format),
            torch.empty_like(b, memory_format=torch.contiguous_format)), lib=lib)
    _fakes._register_fake(
        f"{ns}::bias_{name}_backward", lambda dy, x, b, *p: (
            torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(b)),
        lib=lib)

    def gated_setup(ctx, inputs, output):
        ctx.p, ctx.inputs = p_of(inputs[2:]), len(inputs)
        ctx.save_for_backward(inputs[0], inputs[1])

    def gated_grad(ctx, grad):
        a, b = ctx.saved_tensors
        da, db = getattr(ops, f"gated_{name}_backward")(grad, a, b, *ctx.p)
        return (da, db, *([None] * (ctx.inputs - 2)))

    def packed_grad(ctx, grad):
        (ab,) = ctx.saved_tensors
        first = ctx.activate_first
        a, b = halves(ab, first)
        da, db = getattr(ops, f"gated_{name}_backward")(grad, a, b, *ctx.p)
        return (torch.cat([da, db] if first else [db, da], -1), *([None] * (ctx.inputs - 1)))

    def bias_setup(ctx, inputs, output):
        ctx.p, ctx.inputs = p_of(inputs[2:]), len(inputs)
        ctx.save_for_backward(inputs[0], inputs[1])

    def bias_grad(ctx, grad):
        x, b = ctx.saved_tensors
        dx, dbias = getattr(ops, f"bias_{name}_backward")(grad, x, b, *ctx.p)
        return (dx, dbias, *([None] * (ctx.inputs - 2)))

    torch.library.register_autograd(f"{ns}::gated_{name}", gated_grad, setup_context=gated_setup,
                                    lib=lib)
    torch.library.register_autograd(f"{ns}::bias_{name}", bias_grad, setup_context=bias_setup,
                                    lib=lib)

    def packed_setup_kw(ctx, inputs, keyword_only_inputs, output):
        ctx.p, ctx.inputs = p_of(inputs[1:]), len(inputs)
        ctx.activate_first = keyword_only_inputs.get("activate_first", True)
        ctx.save_for_backward(inputs[0])

    torch.library.register_autograd(f"{ns}::gated_{name}_packed", packed_grad,
                                    setup_context=packed_setup_kw, lib=lib)


def _nvrtc_usable():
    if os.environ.get("CUACT_TORCH_CUSTOM") == "load_inline":
        return "CUACT_TORCH_CUSTOM=load_inline"
    try:
        _nvrtc.cuda()
    except OSError as e:
        return str(e)
    if _nvrtc.nvrtc_file() is None:  # loaded only to compile: a warm start needs none
        return "libnvrtc not found"
    return None


def activation(name, forward, derivative=None, derivative_from_output=None, params=None,
               namespace="cuact_user", heavy=None, fused=False, gradient=None, verbose=False,
               dtype=torch.float32, includes=()):
    """Compiles an activation written as C++ expressions into the op family `namespace::name`.

    forward: an expression in `x` of the compute type `C` (float for float32/float16/bfloat16,
        double for float64), e.g. "x / (C(1) + exp(-x))"; or statements with `return`.
        Write constants as C(0.5) to stay in the compute type.
    derivative: act'(x), the same way (enables autograd and NAME_backward).
    gradient: dx from (dy, x) directly, in place of dy * derivative (for a selection such as
        "x > C(0) ? dy : C(0)").
    derivative_from_output: act'(x) as a function of y = act(x).
    params: {"alpha": 1.0, ...}: double members usable in the expressions, op parameters with
        these defaults (schema `float alpha=1.0`).
    heavy: the cost hint (True for tens of instructions per element); None: taken as heavy, as
        cuact's launch model takes an undeclared cost. A float32 or float64 forward declared light
        (False) loads one vector per thread, any other two, whose loads hide the math.
    fused: also define gated_NAME(a, b) = act(a) * b, gated_NAME_packed(ab, activate_first=True),
        bias_NAME(x, bias) = act(x + bias), cast_NAME(x, dtype=...), quantize_NAME(x, scale=...,
        dtype=None) -> (fp8, amax) (not differentiable), and with a derivative the _backward ops
        and autograd.
    includes: headers the expressions use, included after cuact's (#include <...>), from cuact's
        include directory or the CUDA toolkit's: e.g. "cuact/activations.cuh" to use a built-in
        activation (`cuact::gelu{}(x)`); part of the cache key.

    NVRTC compiles each kernel for the current GPU on first use, per dtype; the forward for `dtype`
    (None: none) at once, so a bad expression raises here (cuact_torch.CompileError with NVRTC's
    log and the line and column in the expression) and nothing is registered. It caches the cubin on disk ($CUACT_TORCH_CACHE, else
    ~/.cache/cuact_torch/nvrtc) keyed by source, options, architecture, cuact and NVRTC versions.
    Without NVRTC or libcuda it falls back to torch.utils.cpp_extension.load_inline (nvcc, tens of
    seconds) and warns. Returns torch.ops.NAMESPACE.NAME; the family is beside it: NAME_,
    NAME.out, NAME_backward, NAME_backward_from_output.
    """
    params = dict(params or {})
    for ident in [name, namespace, *params]:
        if not _IDENT.match(ident):
            raise ValueError(f"cuact_torch.activation: {ident!r} is not a C++ identifier")
    includes = _includes(includes)
    why = _nvrtc_usable()
    if why is not None:
        if gradient is not None:
            raise ValueError("cuact_torch.activation: gradient= needs the NVRTC path "
                             f"(unavailable: {why})")
        warnings.warn(f"cuact_torch.activation: NVRTC path unavailable ({why}); building "
                      f"{namespace}::{name} with torch.utils.cpp_extension.load_inline (nvcc)",
                      stacklevel=2)
        return _activation_load_inline(name, forward, derivative, derivative_from_output, params,
                                       namespace, heavy, fused, verbose, includes)
    parts = {"forward": forward, "derivative": derivative, "gradient": gradient,
             "derivative_from_output": derivative_from_output}
    family = _Family(name, namespace, parts, params, heavy, fused, includes)
    previous = _families.get((namespace, name))
    if previous is not None:
        if previous.key != family.key or previous.fused != fused:
            raise ValueError(
                f"cuact_torch.activation: {namespace}::{name} is already defined in this process "
                "with another source; choose another name")
        return getattr(getattr(torch.ops, namespace), name)
    if hasattr(getattr(torch.ops, namespace), name) or (namespace, name) in _built:
        raise ValueError(f"cuact_torch.activation: {namespace}::{name} is already defined (not "
                         "by cuact_torch.activation's NVRTC path); choose another name")
    if dtype is not None and torch.cuda.is_available():
        family.module("forward", dtype, torch.cuda.current_device())
    _register(family)
    _families[(namespace, name)] = family
    return getattr(getattr(torch.ops, namespace), name)
