"""The gated ops' backward in place (cuact_torch.memory.inplace_backward, torch_fused.cuh's
in_place_is_safe): taken where a and b are dead intermediates, with the gradients of the separate
backward bit for bit; never taken where something else can read a or b (a Python reference, a
view, another node's saved tensor, a retained graph, create_graph, saved-tensor hooks, leaves,
torch.compile); "always" and "never" force either; peak memory of an MLP block matches the
explicit in-place variant. Skipped (with the reason) without torch or a CUDA device."""
import gc

from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import cuact_torch  # noqa: E402
from cuact_torch import memory  # noqa: E402

ops = torch.ops.cuact
GATED = [n for n in cuact_torch.FUSED if hasattr(ops, f"gated_{n}_backward")]
NAME = "silu" if "silu" in GATED else GATED[0]
CLAMPED = hasattr(ops, "gated_swiglu_clamped_backward")


@pytest.fixture(autouse=True)
def default_mode():
    previous = memory.inplace_backward("auto")
    yield
    memory.inplace_backward(previous)


def rand(shape, dtype=torch.float32, seed=0, specials=True):
    g = torch.Generator(device="cuda").manual_seed(seed)
    t = (torch.randn(shape, generator=g, device="cuda", dtype=torch.float64) * 3).to(dtype)
    if specials and t.numel() >= 8:
        tiny = torch.finfo(dtype).tiny / 4 if dtype != torch.bfloat16 else 1e-39
        t.view(-1)[:8] = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0,
                                       tiny, -tiny, 40.0], device="cuda").to(dtype)
    return t


def same(x, y):
    """Bit for bit, NaN where NaN."""
    torch.testing.assert_close(x, y, rtol=0, atol=0, equal_nan=True)


def op_of(name):
    return getattr(ops, name if name.startswith("gated_swiglu_clamped") else "gated_" + name)


class Probe:
    """a, b as non-leaf intermediates of leaves a0, b0 (a = a0 * 1), with hooks that record the
    memory of the gradients arriving for a and b: equal to a's and b's memory when the backward
    wrote in place."""

    def __init__(self, shape, dtype=torch.float32, seed=0, specials=True):
        self.a0 = rand(shape, dtype, seed, specials).requires_grad_()
        self.b0 = rand(shape, dtype, seed + 1, specials).requires_grad_()
        self.seen = {}

    def inputs(self):
        a, b = self.a0 * 1, self.b0 * 1
        self.ptr = {"a": a.data_ptr(), "b": b.data_ptr()}
        a.register_hook(lambda g: self.seen.__setitem__("a", g.data_ptr()))
        b.register_hook(lambda g: self.seen.__setitem__("b", g.data_ptr()))
        return a, b

    def in_place(self):
        return self.seen.get("a") == self.ptr["a"] and self.seen.get("b") == self.ptr["b"]


def reference(name, a0, b0, g, params=()):
    """(da, db) of the separate backward op on copies."""
    backward = getattr(ops, (name if name.startswith("gated_swiglu") else "gated_" + name) + "_backward")
    return backward(g, a0.detach().clone(), b0.detach().clone(), *params)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("name", GATED)
def test_taken_for_dead_intermediates(name, dtype):
    for shape in [(3, 1031), (256, 96), (1,), (0, 5)]:
        p = Probe(shape, dtype)
        g = rand(shape, dtype, 7)
        a, b = p.inputs()
        out = op_of(name)(a, b)
        del a, b
        out.backward(g)
        da, db = reference(name, p.a0, p.b0, g)
        same(p.a0.grad, da)
        same(p.b0.grad, db)
        if 0 not in shape:
            assert p.in_place(), (name, shape)


@pytest.mark.parametrize("name", GATED)
def test_float64_reference(name):
    """The gradients (in place) against torch autograd of the reference formula in float64."""
    from cuact_torch.reference import REFERENCE
    p = Probe((64, 129), torch.float64, specials=False)
    g = rand((64, 129), torch.float64, 5, specials=False)
    op_of(name)(*p.inputs()).backward(g)  # a and b dead: no name holds them
    assert p.in_place()
    a1, b1 = p.a0.detach().clone().requires_grad_(), p.b0.detach().clone().requires_grad_()
    (REFERENCE[name][0](a1) * b1).backward(g)
    torch.testing.assert_close(p.a0.grad, a1.grad, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(p.b0.grad, b1.grad, rtol=1e-9, atol=1e-9)


def test_expanded_grad_and_layouts():
    p = Probe((128, 64))
    op_of(NAME)(*p.inputs()).sum().backward()  # grad: one element expanded; copied contiguous
    assert p.in_place()
    da, db = reference(NAME, p.a0, p.b0, torch.ones(128, 64, device="cuda"))
    same(p.a0.grad, da)
    same(p.b0.grad, db)
    # a.t() and b.t(): views, never written over
    p = Probe((64, 128))
    a, b = p.inputs()
    g = rand((128, 64), seed=3)
    op_of(NAME)(a.t(), b.t()).backward(g)  # a.t() is a view: never in place
    assert not p.in_place()
    da, db = reference(NAME, p.a0.t(), p.b0.t(), g)
    same(p.a0.grad, da.t())
    same(p.b0.grad, db.t())


def check_not_taken(run, shape=(64, 96)):
    """run(a, b) -> the output; asserts the gradients equal the separate backward's and that the
    backward did not write over a and b."""
    p = Probe(shape)
    g = rand(shape, seed=9)
    a, b = p.inputs()
    out, keep = run(a, b)
    del a, b
    out.backward(g)
    da, db = reference(NAME, p.a0, p.b0, g)
    same(p.a0.grad, da)
    same(p.b0.grad, db)
    assert not p.in_place()
    return keep


def test_not_taken_when_the_user_keeps_a_or_b():
    def keep_a(a, b):
        return op_of(NAME)(a, b), a
    kept = check_not_taken(keep_a)
    assert kept._version == 0  # untouched

    def keep_b_in_a_list(a, b):
        return op_of(NAME)(a, b), [b]
    check_not_taken(keep_b_in_a_list)

    def keep_a_view(a, b):
        return op_of(NAME)(a, b), a[1:]
    check_not_taken(keep_a_view)

    def keep_a_detached(a, b):
        return op_of(NAME)(a, b), a.detach()
    check_not_taken(keep_a_detached)

    def keep_a_data(a, b):
        return op_of(NAME)(a, b), a.data
    check_not_taken(keep_a_data)

    def keep_storage(a, b):
        return op_of(NAME)(a, b), b.untyped_storage()
    check_not_taken(keep_storage)


def test_not_taken_for_views_of_a_bigger_tensor():
    p = Probe((64, 96))
    g = rand((32, 96), seed=9)
    a, b = p.inputs()
    out = op_of(NAME)(a[:32], b[:32])  # contiguous views
    del a, b
    out.backward(g)
    da, db = reference(NAME, p.a0[:32], p.b0[:32], g)
    same(p.a0.grad[:32], da)
    same(p.b0.grad[:32], db)
    assert torch.count_nonzero(p.a0.grad[32:]) == 0
    p = Probe((64, 96))
    g = rand((64, 48), seed=8)
    a, b = p.inputs()
    out = op_of(NAME)(a[:, :48], b[:, :48])  # strided views
    del a, b
    out.backward(g)
    assert not p.in_place()
    da, db = reference(NAME, p.a0[:, :48], p.b0[:, :48], g)
    same(p.a0.grad[:, :48], da)
    same(p.b0.grad[:, :48], db)


def test_not_taken_when_another_node_saved_a():
    p = Probe((64, 96))
    g = rand((64, 96), seed=9)
    a, b = p.inputs()
    out = op_of(NAME)(a, b) + a.sin()  # sin saves a (an input)
    del a, b
    out.backward(g)
    a1, b1 = p.a0.detach().clone().requires_grad_(), p.b0.detach().clone().requires_grad_()
    (op_of(NAME)(a1 * 1, b1 * 1) + (a1 * 1).sin()).backward(g)
    same(p.a0.grad, a1.grad)
    same(p.b0.grad, b1.grad)
    assert not p.in_place()
    # a is another node's saved output (exp saves its result's memory)
    x = rand((64, 96), specials=False).requires_grad_()
    y = rand((64, 96), seed=1).requires_grad_()
    out = op_of(NAME)(x.exp(), y * 1)
    out.backward(g)
    x1, y1 = x.detach().clone().requires_grad_(), y.detach().clone().requires_grad_()
    memory.inplace_backward("never")
    op_of(NAME)(x1.exp(), y1 * 1).backward(g)
    same(x.grad, x1.grad)
    same(y.grad, y1.grad)


def test_not_taken_for_leaves():
    a0, b0 = rand((32, 64)).requires_grad_(), rand((32, 64), seed=1).requires_grad_()
    before = a0.detach().clone()
    g = rand((32, 64), seed=2)
    op_of(NAME)(a0, b0).backward(g)
    same(a0.detach(), before)
    da, db = reference(NAME, a0, b0, g)
    same(a0.grad, da)
    same(b0.grad, db)


def test_retain_graph_and_second_backward():
    p = Probe((64, 96))
    g = rand((64, 96), seed=9)
    a, b = p.inputs()
    out = op_of(NAME)(a, b)
    del a, b
    out.backward(g, retain_graph=True)
    assert not p.in_place()
    out.backward(g)  # the graph's last backward: in place now, same values
    da, db = reference(NAME, p.a0, p.b0, g)
    same(p.a0.grad, da * 2)
    same(p.b0.grad, db * 2)
    assert p.in_place()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward(g)


def test_create_graph():
    p = Probe((16, 24), torch.float64, specials=False)
    g = rand((16, 24), torch.float64, 9, specials=False)
    a, b = p.inputs()
    out = op_of(NAME)(a, b)
    del a, b
    da, db = torch.autograd.grad(out, (p.a0, p.b0), g, create_graph=True)
    assert not p.in_place()
    rda, rdb = reference(NAME, p.a0, p.b0, g)
    same(da, rda)
    same(db, rdb)


def test_saved_tensor_hooks():
    p = Probe((64, 96))
    g = rand((64, 96), seed=9)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        a, b = p.inputs()
        out = op_of(NAME)(a, b)
        del a, b
    out.backward(g)
    assert not p.in_place()
    da, db = reference(NAME, p.a0, p.b0, g)
    same(p.a0.grad, da)
    same(p.b0.grad, db)


def test_torch_compile():
    torch._dynamo.reset()
    a0, b0 = rand((64, 96), specials=False).requires_grad_(), rand((64, 96), seed=1).requires_grad_()
    g = rand((64, 96), seed=9)
    fn = torch.compile(lambda a, b: op_of(NAME)(a * 1, b * 1) * 2.0, fullgraph=True)
    fn(a0, b0).backward(g)
    a1, b1 = a0.detach().clone().requires_grad_(), b0.detach().clone().requires_grad_()
    memory.inplace_backward("never")
    (op_of(NAME)(a1 * 1, b1 * 1) * 2.0).backward(g)
    torch.testing.assert_close(a0.grad, a1.grad, equal_nan=True)
    torch.testing.assert_close(b0.grad, b1.grad, equal_nan=True)


def test_packed():
    for first in (True, False):
        ab0 = rand((33, 2 * 257)).requires_grad_()
        g = rand((33, 257), seed=4)
        ab = ab0 * 1
        ptr, seen = ab.data_ptr(), []
        ab.register_hook(lambda t: seen.append(t.data_ptr()))
        out = getattr(ops, f"gated_{NAME}_packed")(ab, activate_first=first)
        del ab
        out.backward(g)
        assert seen == [ptr]
        ref = getattr(ops, f"gated_{NAME}_packed_backward")(g, ab0.detach(), activate_first=first)
        same(ab0.grad, ref)
    # kept by the caller: new memory, same values
    ab0 = rand((33, 2 * 257)).requires_grad_()
    ab = ab0 * 1
    ptr, seen = ab.data_ptr(), []
    ab.register_hook(lambda t: seen.append(t.data_ptr()))
    getattr(ops, f"gated_{NAME}_packed")(ab).backward(g)
    assert seen and seen[0] != ptr
    same(ab0.grad, getattr(ops, f"gated_{NAME}_packed_backward")(g, ab0.detach()))


@pytest.mark.skipif(not CLAMPED, reason="no gated_swiglu_clamped")
def test_gate_family():
    p = Probe((48, 200))
    g = rand((48, 200), seed=6)
    a, b = p.inputs()
    out = ops.gated_swiglu_clamped(a, b, 1.702, 7.0)
    del a, b
    out.backward(g)
    assert p.in_place()
    da, db = ops.gated_swiglu_clamped_backward(g, p.a0.detach(), p.b0.detach(), 1.702, 7.0)
    same(p.a0.grad, da)
    same(p.b0.grad, db)


def test_modes():
    assert memory.inplace_backward() == "auto"
    with memory.inplace_backward_mode("never"):
        assert memory.inplace_backward() == "never"
        p = Probe((64, 96))
        a, b = p.inputs()
        out = op_of(NAME)(a, b)
        del a, b
        out.backward(rand((64, 96), seed=9))
        assert not p.in_place()
    assert memory.inplace_backward() == "auto"
    with pytest.raises(ValueError):
        memory.inplace_backward("sometimes")
    # "always": in place though the caller keeps a; its version shows the write, and a node that
    # saved a fails loudly instead of reading the gradient
    memory.inplace_backward("always")
    p = Probe((64, 96))
    g = rand((64, 96), seed=9)
    a, b = p.inputs()
    version = a._version
    op_of(NAME)(a, b).backward(g)
    assert p.in_place() and a._version > version
    same(a.detach(), p.a0.grad)  # a's memory holds da (times 1)
    a, b = p.inputs()
    s = a.sin()  # created first, so its backward runs after the gated one and reads a
    out = op_of(NAME)(a, b) + s
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward(g)


def test_explicit_inplace_variant_keeps_working():
    p = Probe((64, 96))
    g = rand((64, 96), seed=9)
    a, b = p.inputs()
    out = memory.gated(a, b, NAME, inplace_backward=True)
    del a, b
    out.backward(g, retain_graph=True)  # a retained graph: separate, right values
    out.backward(g)
    da, db = reference(NAME, p.a0, p.b0, g)
    same(p.a0.grad, da * 2)
    same(p.b0.grad, db * 2)


def mlp_peak(gate, tokens=4096, hidden=1024, inter=2816, dtype=torch.bfloat16):
    torch.manual_seed(0)
    layers = [torch.nn.Linear(hidden, inter, bias=False), torch.nn.Linear(hidden, inter, bias=False),
              torch.nn.Linear(inter, hidden, bias=False)]
    up, gate_proj, down = (m.to("cuda", dtype) for m in layers)
    x = torch.randn(tokens, hidden, device="cuda", dtype=dtype)
    for _ in range(2):
        gc.collect()
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        out = down(gate(gate_proj(x), up(x)))
        out.backward(torch.ones_like(out))
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        del out
        for m in (up, gate_proj, down):
            m.weight.grad = None
    return peak


def test_peak_memory_matches_the_inplace_variant():
    default = mlp_peak(op_of(NAME))
    explicit = mlp_peak(lambda a, b: memory.gated(a, b, NAME, inplace_backward=True))
    memory.inplace_backward("never")
    separate = mlp_peak(op_of(NAME))
    one = 4096 * 2816 * 2  # bytes of one intermediate
    assert abs(default - explicit) <= one // 16, (default, explicit, separate)
    assert default <= separate - one, (default, explicit, separate)
