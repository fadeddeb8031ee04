"""CUDA graphs: cuact's functional and fused ops captured and replayed (torch.cuda.graph,
make_graphed_callables with autograd) and under torch.compile(mode="reduce-overhead") in both
compile modes. Skipped (with the reason) without torch or a CUDA device."""
from _pytest_compat import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import cuact_torch  # noqa: E402

ops = torch.ops.cuact
UNARY = [n for n in ("silu", "gelu", "relu", "selu") if n in cuact_torch.FAMILIES]
FUSED = [n for n in ("silu", "gelu_tanh", "relu") if n in cuact_torch.FUSED]


def rand(shape, dtype=torch.float32, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(shape, generator=g, device="cuda") * 2).to(dtype)


def capture(fn):
    """A graph of fn() after a warm-up on a side stream, as torch.cuda.graph asks."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outputs = fn()
    return graph, outputs


@pytest.mark.parametrize("name", UNARY)
def test_unary_capture_replay(name):
    x = rand((1000, 37))
    op, backward = getattr(ops, name), getattr(ops, name + "_backward")
    g = rand((1000, 37), seed=1)
    graph, (y, dx) = capture(lambda: (op(x), backward(g, x)))
    for seed in (2, 3):
        x.copy_(rand((1000, 37), seed=seed))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(y, op(x))
        assert torch.equal(dx, backward(g, x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", FUSED)
def test_fused_capture_replay(name, dtype):
    a, b, g = rand((64, 512), dtype), rand((64, 512), dtype, 1), rand((64, 512), dtype, 2)
    ab = torch.cat([a, b], -1)
    bias = rand((512,), dtype, 3)
    scale = torch.full((), 0.5, device="cuda")
    gated, gated_bwd = getattr(ops, "gated_" + name), getattr(ops, "gated_%s_backward" % name)
    packed, bias_op = getattr(ops, "gated_%s_packed" % name), getattr(ops, "bias_" + name)
    quantize = getattr(ops, "quantize_" + name)

    def run():
        q, amax = quantize(a, scale=scale)
        return (gated(a, b), *gated_bwd(g, a, b), packed(ab), bias_op(a, bias), q, amax)

    graph, outputs = capture(run)
    for seed in (5, 6):
        a.copy_(rand((64, 512), dtype, seed))
        ab.copy_(torch.cat([a, b], -1))
        graph.replay()
        torch.cuda.synchronize()
        expected = run()
        for got, want in zip(outputs, expected):
            if got.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
                got, want = got.view(torch.uint8), want.view(torch.uint8)
            assert torch.equal(got, want)


class _MLP(torch.nn.Module):
    def __init__(self, name, width=256):
        super().__init__()
        self.gate = torch.nn.Linear(width, 2 * width)
        self.up = torch.nn.Linear(width, 2 * width)
        self.down = torch.nn.Linear(2 * width, width)
        self.op = getattr(ops, "gated_" + name)

    def forward(self, x):
        return self.down(self.op(self.gate(x), self.up(x)))


@pytest.mark.parametrize("name", FUSED[:1])
def test_make_graphed_callables_autograd(name):
    torch.manual_seed(0)
    model = _MLP(name).cuda()
    reference = _MLP(name).cuda()
    reference.load_state_dict(model.state_dict())
    x = rand((32, 256)).requires_grad_()
    graphed = torch.cuda.make_graphed_callables(model, (x,))
    for seed in (1, 2):
        inp = rand((32, 256), seed=seed).requires_grad_()
        inp_ref = inp.detach().clone().requires_grad_()
        out = graphed(inp)
        out.sum().backward()
        out_ref = reference(inp_ref)
        out_ref.sum().backward()
        torch.testing.assert_close(out, out_ref)
        torch.testing.assert_close(inp.grad, inp_ref.grad)
        torch.testing.assert_close(model.gate.weight.grad, reference.gate.weight.grad)
        for p in list(model.parameters()) + list(reference.parameters()):
            p.grad = None


@pytest.mark.parametrize("mode", ["auto", "kernel"])
def test_reduce_overhead(mode):
    if not UNARY or not FUSED:
        pytest.skip("needs a unary and a fused op")
    unary, fused = getattr(ops, UNARY[0]), getattr(ops, "gated_" + FUSED[0])
    cuact_torch.compile_mode(mode)
    try:
        def fn(a, b):
            return fused(unary(a * 2.0) + 1.0, b)
        compiled = torch.compile(fn, mode="reduce-overhead")
        for seed in range(4):  # recorded on the first calls, replayed after
            a = rand((128, 384), seed=seed).requires_grad_()
            b = rand((128, 384), seed=seed + 10).requires_grad_()
            y = compiled(a, b)
            y.backward(torch.ones_like(y))
            a2, b2 = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
            y2 = fn(a2, b2)
            y2.backward(torch.ones_like(y2))
            torch.testing.assert_close(y, y2, rtol=2e-5, atol=2e-5)
            torch.testing.assert_close(a.grad, a2.grad, rtol=2e-5, atol=2e-5)
            torch.testing.assert_close(b.grad, b2.grad, rtol=2e-5, atol=2e-5)
    finally:
        cuact_torch.compile_mode("auto")
