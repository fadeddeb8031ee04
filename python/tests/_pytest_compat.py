"""`pytest` itself when installed; else the little of it these tests use, for run_all.py."""
import contextlib
import re

try:
    import pytest  # noqa: F401
except ImportError:  # the runner in run_all.py drives these tests
    class Skipped(Exception):
        pass

    class _Mark:
        @staticmethod
        def parametrize(argnames, argvalues, ids=None):
            names = [n.strip() for n in argnames.split(",")] if isinstance(argnames, str) else list(argnames)

            def decorate(fn):
                fn.__dict__.setdefault("_parametrize", []).insert(0, (names, list(argvalues)))
                return fn
            return decorate

        @staticmethod
        def skipif(condition, reason=""):
            def decorate(fn):
                if condition:
                    fn._skip_reason = reason
                return fn
            return decorate

    class _MiniPytest:
        mark = _Mark()
        Skipped = Skipped

        @staticmethod
        def skip(reason="", allow_module_level=False):
            raise Skipped(reason)

        @staticmethod
        def importorskip(name, reason=None):
            import importlib
            try:
                return importlib.import_module(name)
            except ImportError:
                raise Skipped(reason or f"could not import {name}")

        @staticmethod
        @contextlib.contextmanager
        def raises(exc, match=None):
            try:
                yield
            except exc as e:
                if match is not None and not re.search(match, str(e)):
                    raise AssertionError(f"{exc.__name__} raised, but {str(e)!r} does not match {match!r}")
                return
            raise AssertionError(f"{exc.__name__} not raised")

    pytest = _MiniPytest()
