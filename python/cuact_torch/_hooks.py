"""Work deferred until a module is imported: `import cuact_torch` must not import torch's heavy
subsystems (inductor, DTensor) itself, yet their registrations must be in place before the user's
first torch.compile or DTensor op.

    after_import("torch._inductor.decomposition", install, "decompositions for torch.compile")

runs install() at once when the module is already imported, else right after its first import
finishes executing (an import hook on sys.meta_path that removes itself when it fires).
"""
import sys
import warnings


def _run(callback, what):
    try:
        callback()
    except Exception as error:  # the user's program still runs, without cuact's registrations
        warnings.warn(f"cuact_torch: {what} not registered: {error!r}")


class _AfterImport:
    """A sys.meta_path finder that wraps `target`'s loader so that callback() runs right after the
    module's code has executed."""

    def __init__(self, target, callback, what):
        self.target, self.callback, self.what = target, callback, what

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.target:
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original = loader.exec_module
        callback, what = self.callback, self.what

        def exec_module(module):
            original(module)
            _run(callback, what)
        loader.exec_module = exec_module
        return spec


def after_import(target, callback, what):
    """callback() now if module `target` is imported, else right after its first import."""
    if target in sys.modules:
        _run(callback, what)
    elif not any(isinstance(f, _AfterImport) and f.target == target for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(target, callback, what))
