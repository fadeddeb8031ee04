"""`import cuact_torch` stays light: it imports neither DTensor, dynamo, inductor nor transformers
(each a second or more), and the registrations that need them still happen once the program imports them.
Each case runs in a fresh interpreter, so that nothing this test process imported counts.
Skipped (with the reason) without torch or a CUDA device."""
import importlib.util
import json
import os
import subprocess
import sys

from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

HEAVY = ("torch.distributed.tensor", "torch._inductor", "torch._dynamo", "transformers")


def run(code):
    """The JSON that `code` prints last, run in a fresh interpreter that finds this cuact_torch."""
    package = os.path.dirname(importlib.util.find_spec("cuact_torch").origin)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(package)] +
                                        [p for p in [env.get("PYTHONPATH")] if p])
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_leaves_heavy_modules_alone():
    result = run(f"""
import json, sys, time
import torch
before = set(sys.modules)
start = time.perf_counter()
import cuact_torch
seconds = time.perf_counter() - start
heavy = {list(HEAVY)!r}
added = [m for m in heavy if m in sys.modules and m not in before]
print(json.dumps(dict(added=added, seconds=seconds, new_modules=len(set(sys.modules) - before))))
""")
    print(f"import cuact_torch: {result['seconds']:.3f} s after torch, "
          f"{result['new_modules']} modules")
    assert result["added"] == [], result


def test_functional_compiles_after_a_later_dynamo_import():
    # cuact_torch.functional's eager path is a C call; torch.compile traces its OpOverload once
    # torch._dynamo is imported, after cuact_torch too: fullgraph, no graph break
    result = run("""
import json
import torch
import cuact_torch
import cuact_torch.functional as CF
x = torch.randn(64, device="cuda")
f = torch.compile(lambda t: CF.leaky_relu(CF.silu(t) * 2.0, 0.1), fullgraph=True)
want = torch.nn.functional.leaky_relu(torch.nn.functional.silu(x) * 2.0, 0.1)
print(json.dumps(dict(error=float((f(x) - want).abs().max()))))
""")
    assert result["error"] < 1e-5, result


def test_dtensor_rules_follow_a_later_import():
    result = run("""
import json
import torch
import cuact_torch
if not torch.distributed.is_available():
    print(json.dumps(dict(skip="torch.distributed is not available")))
    raise SystemExit
before = len(cuact_torch.dtensor.REGISTERED)
import torch.distributed.tensor
names = [str(op) for op in cuact_torch.dtensor.REGISTERED]
print(json.dumps(dict(before=before, names=names)))
""")
    if "skip" in result:
        pytest.skip(result["skip"])
    assert result["before"] == 0
    assert "cuact.silu.default" in result["names"] and "cuact.gated_silu.default" in result["names"]


def test_decompositions_follow_a_later_inductor_import():
    result = run("""
import json
import torch
import cuact_torch
from cuact_torch import _compile
before = _compile._installed["done"]
import torch._inductor.decomposition as d
op = torch.ops.cuact.silu.default
print(json.dumps(dict(before=before, after=_compile._installed["done"], in_table=op in d.decompositions)))
""")
    assert result == dict(before=False, after=True, in_table=True), result


def test_library_loads_on_first_use():
    # `import cuact_torch` loads no extension and registers no fake; the first lookup on
    # torch.ops.cuact (or an attribute of cuact_torch that needs the library) does both, once
    result = run("""
import json, sys
import torch
import cuact_torch
loaded_at_import = "cuact_torch._C" in sys.modules or cuact_torch._load._state["loaded_from"] is not None
x = torch.tensor([-1.0, 0.5, float("nan")], device="cuda")
y = torch.ops.cuact.relu(x)
has_fake = torch._library.simple_registry.singleton.find("cuact::relu").fake_impl.kernel is not None
print(json.dumps(dict(loaded_at_import=loaded_at_import, loaded_from=cuact_torch.LOADED_FROM,
                      y=[str(v) for v in y.tolist()], has_fake=has_fake, relu=callable(cuact_torch.relu),
                      families="relu" in cuact_torch.FAMILIES, all="relu" in cuact_torch.__all__)))
""")
    assert result["loaded_at_import"] is False, result
    assert result["loaded_from"] in ("installed", "jit"), result
    assert result["y"] == ["0.0", "0.5", "nan"], result
    assert result["has_fake"] and result["relu"] and result["families"] and result["all"], result


def test_attributes_that_need_the_library_load_it():
    result = run("""
import json
import torch
import cuact_torch
families = cuact_torch.FAMILIES
import cuact_torch.patch  # the submodule: cuact_torch.patch stays callable
print(json.dumps(dict(families=len(families), loaded=cuact_torch._load._state["loaded_from"] is not None,
                      patch_callable=callable(cuact_torch.patch), nn=hasattr(cuact_torch.nn, "SiLU"),
                      memory=hasattr(cuact_torch.memory, "relu"))))
""")
    assert result["families"] > 0 and result["loaded"], result
    assert result["patch_callable"] and result["nn"] and result["memory"], result


def test_own_activation_needs_no_library():
    # a program that only defines its own activation never loads the built-in extension
    result = run("""
import json, sys
import torch
import cuact_torch
swish = cuact_torch.activation("import_swish", "x / (C(1) + exp(-x))", namespace="cuact_import_test")
x = torch.tensor([-2.0, 0.0, 3.0], device="cuda")
got = swish(x)
want = x * torch.sigmoid(x)
print(json.dumps(dict(error=float((got - want).abs().max()), loaded="cuact_torch._C" in sys.modules
                      or cuact_torch._load._state["loaded_from"] is not None)))
""")
    assert result["error"] < 1e-6, result
    assert result["loaded"] is False, result
