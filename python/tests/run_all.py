"""Runs the tests in this folder without pytest: python3 python/tests/run_all.py [-k substring]

Same tests as `python3 -m pytest python/tests`; prints one line per test and a summary, exits 1
on any failure.
"""
import importlib
import itertools
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import conftest  # noqa: E402,F401  (sys.path)
from _pytest_compat import pytest  # noqa: E402

Skipped = getattr(pytest, "Skipped", None)
if Skipped is None:  # real pytest installed: use its skip exception
    from _pytest.outcomes import Skipped  # noqa: F811


def cases(fn):
    params = fn.__dict__.get("_parametrize") or getattr(fn, "pytestmark", None)
    if not params:
        yield fn.__name__, {}
        return
    if not isinstance(params[0], tuple):  # real pytest marks
        params = [([n.strip() for n in m.args[0].split(",")] if isinstance(m.args[0], str) else list(m.args[0]),
                   list(m.args[1])) for m in reversed(params) if m.name == "parametrize"]
    for combo in itertools.product(*[values for _, values in params]):
        kwargs, ids = {}, []
        for (names, _), value in zip(params, combo):
            values = value if len(names) > 1 else (value,)
            kwargs.update(zip(names, values))
            ids.append("-".join(str(v) for v in values))
        yield f"{fn.__name__}[{'-'.join(ids)}]", kwargs


def main():
    keyword = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else ""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for file in sorted(f for f in os.listdir(HERE) if f.startswith("test_") and f.endswith(".py")):
        try:
            module = importlib.import_module(file[:-3])
        except Skipped as e:
            print(f"{file}: SKIPPED ({e})")
            counts["skipped"] += 1
            continue
        for name in sorted(n for n in dir(module) if n.startswith("test_")):
            fn = getattr(module, name)
            for case_id, kwargs in cases(fn):
                full = f"{file}::{case_id}"
                if keyword and keyword not in full:
                    continue
                reason = getattr(fn, "_skip_reason", None)
                try:
                    if reason:
                        raise Skipped(reason)
                    fn(**kwargs)
                    counts["passed"] += 1
                    print(f"{full}: PASSED", flush=True)
                except Skipped as e:
                    counts["skipped"] += 1
                    print(f"{full}: SKIPPED ({e})", flush=True)
                except Exception:
                    counts["failed"] += 1
                    print(f"{full}: FAILED\n{traceback.format_exc()}", flush=True)
    print(", ".join(f"{v} {k}" for k, v in counts.items()))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
