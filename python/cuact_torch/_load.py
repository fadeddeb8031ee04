"""Loads the operator library: the extension `pip install ./python` built, else a JIT build.

The library is loaded on the first use of torch.ops.cuact, not by `import cuact_torch`: loading it
and registering the fakes of its ops costs tens of milliseconds, which a program that only defines
its own activations (cuact_torch.activation) never needs. install_namespace() puts a torch.ops.cuact
in place whose first attribute lookup loads it (ensure_loaded); every way to an op of the library
goes through such a lookup (torch.ops.cuact.NAME, cuact_torch.NAME, the submodules).
"""
import hashlib
import importlib
import importlib.util
import os
import threading

import torch

from . import _paths

_lock = threading.RLock()
_state = {"loaded_from": None, "loading": False}
_after_load = []  # callbacks run once the library is loaded, in order


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


def after_load(callback):
    """callback() once the library is loaded (now, if it is)."""
    with _lock:
        _after_load.append(callback)
        if _state["loaded_from"] is not None:
            callback()


def ensure_loaded():
    """Loads the library and runs the after_load callbacks, once; returns "installed" or "jit".

    Lookups on torch.ops.cuact made while it loads (the callbacks' own) see the ops already
    registered and return None here. A failed load raises, and the next lookup tries again."""
    if _state["loaded_from"] is not None:
        return _state["loaded_from"]
    with _lock:
        if _state["loaded_from"] is not None or _state["loading"]:
            return _state["loaded_from"]
        _state["loading"] = True
        try:
            where = load()
            for callback in _after_load:
                callback()
            _state["loaded_from"] = where
        finally:
            _state["loading"] = False
    return where


class _LoadingNamespace(torch._ops._OpNamespace):
    """torch.ops.cuact, loading the library on its first lookup. Python calls __getattr__ only
    for names not yet bound, so a bound op costs nothing more; dunder probes (copy, pickle,
    inspect) load nothing."""

    # the ops' __module__ derives from this (torch.ops.cuact.NAME's is "torch._ops.cuact"), and
    # inductor's generated code finds an op by it
    __module__ = torch._ops._OpNamespace.__module__

    def __getattr__(self, op_name):
        if not op_name.startswith("__"):
            ensure_loaded()
        return super().__getattr__(op_name)


def install_namespace(namespace="cuact"):
    """Puts the loading torch.ops.<namespace> in place; where one exists already (looked up before
    this import), loads the library now."""
    if namespace in vars(torch.ops):
        ensure_loaded()
        return
    setattr(torch.ops, namespace, _LoadingNamespace(namespace))
    listed = getattr(torch.ops, "_dir", None)
    if isinstance(listed, list) and namespace not in listed:
        listed.append(namespace)
