"""Loads the operator library: the extension `pip install ./python` built, else a JIT build."""
import hashlib
import importlib
import importlib.util
import os

from . import _paths


def _source_hash(files, flags):
    digest = hashlib.sha1()
    for path in files:
        with open(path, "rb") as f:
            digest.update(path.encode() + b"\0" + f.read())
    digest.update("\0".join(flags).encode())
    return digest.hexdigest()[:12]


def jit_build(verbose=False):
    """Builds (or reuses from the torch extensions cache) and loads the operators.

    The build's name carries a hash of the sources, every cuact header and the flags, so a change
    in any of them builds afresh and an unchanged tree loads the cached library.
    """
    from torch.utils.cpp_extension import load

    sources = _paths.op_sources()
    cuda_flags = _paths.NVCC_FLAGS + _paths.family_flags()
    hashed = sources + [_paths.csrc("ops.h")] + _paths.header_files()
    name = "cuact_torch_ops_" + _source_hash(hashed, cuda_flags)
    return load(
        name=name,
        sources=sources,
        extra_include_paths=[_paths.include_dir()],
        extra_cflags=_paths.CXX_FLAGS,
        extra_cuda_cflags=cuda_flags,
        is_python_module=False,
        verbose=verbose,
    )


def load():
    """Registers torch.ops.cuact: the installed extension unless CUACT_TORCH_JIT=1 or absent."""
    if os.environ.get("CUACT_TORCH_JIT") != "1" and importlib.util.find_spec("cuact_torch._C"):
        importlib.import_module("cuact_torch._C")
        return "installed"
    jit_build(verbose=os.environ.get("CUACT_TORCH_VERBOSE") == "1")
    return "jit"
