"""Run-time compilation of cuact kernels: NVRTC to a cubin, a disk cache, and driver-API launches.

No build tools: NVRTC (the libnvrtc PyTorch ships, else the CUDA toolkit's) compiles a source that
includes cuact's NVRTC-safe headers (docs/nvrtc.md) to a cubin for the current device, libcuda
loads it and launches its kernels on the current stream, all through ctypes.
"""
import ctypes
import ctypes.util
import glob
import hashlib
import os
import re
import sys
import tempfile

# The options cuact's headers need under NVRTC (docs/nvrtc.md): C++17, and -default-device for the
# unannotated lambdas and constexpr helpers that nvcc compiles for both sides.
OPTIONS = ("-std=c++17", "-default-device", "-DNDEBUG")


class CompileError(RuntimeError):
    """NVRTC rejected a source: `log` is its log, `line` / `column` the position in the user's
    expression (1-based; None when the error is elsewhere), `part` which expression it is."""

    def __init__(self, message, log, part=None, line=None, column=None):
        super().__init__(message)
        self.log, self.part, self.line, self.column = log, part, line, column


def _candidate_files_nvrtc():
    """libnvrtc files in the order nvrtc() tries them: torch's, pip's beside it, the toolkit's."""
    names = []
    try:
        import torch
        lib = os.path.join(os.path.dirname(torch.__file__), "lib")
        names += sorted(glob.glob(os.path.join(lib, "libnvrtc*.so*")))
        site = os.path.dirname(os.path.dirname(torch.__file__))
        for pattern in ("nvidia/cu*/lib/libnvrtc.so*", "nvidia/cuda_nvrtc/lib/libnvrtc.so*"):
            names += sorted(glob.glob(os.path.join(site, pattern)), reverse=True)
    except ImportError:
        pass
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    names += sorted(glob.glob(os.path.join(home, "lib64", "libnvrtc.so*")))
    return [n for n in names if "builtins" not in os.path.basename(n)
            and "alt" not in os.path.basename(n)]


def _candidates_nvrtc():
    """The files, then names for the loader's search. ctypes.util.find_library runs ldconfig, so
    it comes last and only when no file loaded: a warm start never reaches it."""
    yield from _candidate_files_nvrtc()
    yield "libnvrtc.so"
    found = ctypes.util.find_library("nvrtc")
    if found:
        yield found


_nvrtc = None
_cuda = None


def nvrtc():
    """libnvrtc, loaded once."""
    global _nvrtc
    if _nvrtc is None:
        errors = []
        for name in _candidates_nvrtc():
            try:
                lib = ctypes.CDLL(name)
                lib.nvrtcGetErrorString.restype = ctypes.c_char_p
                _nvrtc = lib
                break
            except OSError as e:
                errors.append(f"{name}: {e}")
        if _nvrtc is None:
            raise OSError("cuact_torch: libnvrtc not found (" + "; ".join(errors) + ")")
    return _nvrtc


def nvrtc_version():
    major, minor = ctypes.c_int(), ctypes.c_int()
    nvrtc().nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return f"{major.value}.{minor.value}"


_nvrtc_file = []


def nvrtc_file():
    """The libnvrtc file nvrtc() loads first, without loading it (None: none)."""
    if not _nvrtc_file:
        found = None
        for name in _candidate_files_nvrtc():
            if os.path.isabs(name) and os.path.isfile(name):
                found = os.path.realpath(name)
                break
        _nvrtc_file.append(found)
    return _nvrtc_file[0]


def nvrtc_identity():
    """The cache key's NVRTC version: the library's resolved file name (libnvrtc.so.13.0.88) and
    size, so a warm start does not load the library to ask it."""
    path = nvrtc_file()
    if path is None:
        return nvrtc_version()
    return f"{os.path.basename(path)}:{os.stat(path).st_size}"


def include_dirs():
    """The CUDA headers NVRTC needs (cuda_fp16.h, cuda_bf16.h, and CCCL's cuda/std)."""
    dirs = []
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    if not any(h and os.path.isfile(os.path.join(h, "include", "cuda_fp16.h")) for h in homes):
        try:  # slower to import: only where the usual places have no toolkit
            from torch.utils.cpp_extension import CUDA_HOME
            homes.append(CUDA_HOME)
        except Exception:  # noqa: BLE001  (torch without its extension helpers)
            pass
    for home in homes:
        if home and os.path.isfile(os.path.join(home, "include", "cuda_fp16.h")):
            dirs.append(os.path.join(home, "include"))
            if os.path.isdir(os.path.join(home, "include", "cccl")):
                dirs.append(os.path.join(home, "include", "cccl"))
            break
    try:  # pip's CUDA headers (nvidia-cuda-runtime, nvidia-cuda-cccl) next to torch
        import torch
        site = os.path.dirname(os.path.dirname(torch.__file__))
        for pattern in ("nvidia/cu*/include", "nvidia/cuda_runtime/include",
                        "nvidia/cuda_cccl/include", "nvidia/cu*/include/cccl"):
            dirs += [d for d in sorted(glob.glob(os.path.join(site, pattern))) if d not in dirs]
    except (ImportError, AttributeError, TypeError):
        pass
    return dirs


def _check(status, what):
    if status != 0:
        raise RuntimeError(f"cuact_torch: {what} failed: "
                           f"{nvrtc().nvrtcGetErrorString(status).decode()} ({status})")


def compile_cubin(source, name, arch, include):
    """(cubin bytes, log) of `source` for sm_<arch>; CompileError carries the log on failure."""
    lib = nvrtc()
    program = ctypes.c_void_p()
    _check(lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), name.encode(), 0, None,
                                  None), "nvrtcCreateProgram")
    try:
        options = [f"--gpu-architecture=sm_{arch}", *OPTIONS] + [f"-I{d}" for d in include]
        array = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        status = lib.nvrtcCompileProgram(program, len(options), array)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(program, log)
        log = log.value.decode(errors="replace")
        if status != 0:
            raise CompileError(log, log)
        _check(lib.nvrtcGetCUBINSize(program, ctypes.byref(size)), "nvrtcGetCUBINSize")
        cubin = ctypes.create_string_buffer(size.value)
        _check(lib.nvrtcGetCUBIN(program, cubin), "nvrtcGetCUBIN")
        return cubin.raw, log
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))


# ---- the disk cache -------------------------------------------------------------------------

def cache_dir():
    root = os.environ.get("CUACT_TORCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "cuact_torch", "nvrtc")
    os.makedirs(root, exist_ok=True)
    return root


_stamps = {}


def _headers_stamp(include_dir):
    """Sizes and mtimes of cuact's headers: a checkout's edits make new keys (cheaper than hashing
    the contents on every warm start). Once per process and directory."""
    if include_dir in _stamps:
        return _stamps[include_dir]
    parts = []
    for directory, _, names in os.walk(os.path.join(include_dir, "cuact")):
        for n in sorted(names):
            st = os.stat(os.path.join(directory, n))
            parts.append(f"{n}:{st.st_size}:{st.st_mtime_ns}")
    _stamps[include_dir] = "|".join(sorted(parts))
    return _stamps[include_dir]


def cache_key(source, arch, include_dir, version):
    digest = hashlib.sha256()
    for part in (source, " ".join(OPTIONS), str(arch), version, nvrtc_identity(),
                 _headers_stamp(include_dir)):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:24]


def cached_cubin(key):
    path = os.path.join(cache_dir(), key + ".cubin")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def store_cubin(key, cubin):
    """Atomic: a temporary file in the cache directory, then os.replace, so a concurrent process
    reads either nothing or a whole cubin."""
    directory = cache_dir()
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=key, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(cubin)
        os.replace(tmp, os.path.join(directory, key + ".cubin"))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---- the driver API -------------------------------------------------------------------------

def cuda():
    global _cuda
    if _cuda is None:
        _cuda = ctypes.CDLL("libcuda.so.1")
    return _cuda


def _cu_check(status, what):
    if status != 0:
        text = ctypes.c_char_p()
        cuda().cuGetErrorString(status, ctypes.byref(text))
        raise RuntimeError(f"cuact_torch: {what} failed: {text.value.decode() if text.value else status}")


class Module:
    """A loaded cubin and its kernels, in the current device's primary context (torch's)."""

    def __init__(self, cubin):
        lib = cuda()
        _cu_check(lib.cuInit(0), "cuInit")
        context = ctypes.c_void_p()
        _cu_check(lib.cuCtxGetCurrent(ctypes.byref(context)), "cuCtxGetCurrent")
        if not context.value:  # torch's primary context, made current in this thread
            import torch
            ordinal = torch.cuda.current_device()
            handle = ctypes.c_int()
            _cu_check(lib.cuDeviceGet(ctypes.byref(handle), ordinal), "cuDeviceGet")
            _cu_check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), handle),
                      "cuDevicePrimaryCtxRetain")
            _cu_check(lib.cuCtxSetCurrent(context), "cuCtxSetCurrent")
        self.handle = ctypes.c_void_p()
        _cu_check(lib.cuModuleLoadData(ctypes.byref(self.handle), cubin), "cuModuleLoadData")
        self.functions = {}

    def function(self, name):
        f = self.functions.get(name)
        if f is None:
            f = ctypes.c_void_p()
            _cu_check(cuda().cuModuleGetFunction(ctypes.byref(f), self.handle, name.encode()),
                      f"cuModuleGetFunction({name})")
            self.functions[name] = f
        return f

    def launch(self, name, blocks, threads, stream, args):
        """args: ctypes values, in the kernel's parameter order."""
        pointers = (ctypes.c_void_p * len(args))(
            *[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
        _cu_check(cuda().cuLaunchKernel(self.function(name), blocks, 1, 1, threads, 1, 1, 0,
                                        ctypes.c_void_p(stream), pointers, None), f"launch {name}")


_LOCATION = re.compile(r"^(?P<file>[^\n(]+)\((?P<line>\d+)\): (?P<kind>error|warning)", re.M)


def first_error(log, file_name):
    """(line, text of the caret line's column, message) of the first error in `file_name`."""
    for m in _LOCATION.finditer(log):
        if m.group("kind") != "error" or os.path.basename(m.group("file")) != file_name:
            continue
        rest = log[m.end():].split("\n")
        message = rest[0].strip(": ")
        column = None
        # NVRTC echoes the source line indented by two spaces, then a caret line under it
        for text in rest[1:4]:
            if text.strip() == "^":
                column = text.index("^") - 1
                break
        return int(m.group("line")), column, message
    return None, None, log.strip().split("\n")[0] if log.strip() else "compilation failed"


def version_of_cuact(include_dir):
    with open(os.path.join(include_dir, "cuact", "version.cuh")) as f:
        text = f.read()
    return ".".join(re.search(rf"CUACT_VERSION_{p}\s+(\d+)", text).group(1)
                    for p in ("MAJOR", "MINOR", "PATCH"))


def log_compile(message):
    if os.environ.get("CUACT_TORCH_VERBOSE") == "1":
        print(f"cuact_torch: {message}", file=sys.stderr, flush=True)
