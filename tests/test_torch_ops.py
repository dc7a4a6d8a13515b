"""fastact.torch: the functions as torch custom ops (autograd through
fastact's backward kernels, torch.compile, torch.export), the nn.Module
drop-ins, replace_activations, zero-copy views and torch's own op for what
fastact does not compute."""
import warnings

import numpy as np
import pytest

import fastact as fa

torch = pytest.importorskip("torch")
fat = pytest.importorskip("fastact.torch")
F = torch.nn.functional

# name -> (fastact.torch call, torch call, kink points to keep away from)
ELEMENTWISE = {
    "gelu": (fat.gelu, F.gelu, ()),
    "gelu_tanh": (lambda x: fat.gelu(x, approximate="tanh"), lambda x: F.gelu(x, approximate="tanh"), ()),
    "silu": (fat.silu, F.silu, ()),
    "relu": (fat.relu, F.relu, (0,)),
    "sigmoid": (fat.sigmoid, torch.sigmoid, ()),
    "tanh": (fat.tanh, torch.tanh, ()),
    "softplus": (lambda x: fat.softplus(x, 2.0, 3.0), lambda x: F.softplus(x, 2.0, 3.0), (1.5,)),
    "logsigmoid": (fat.logsigmoid, F.logsigmoid, ()),
    "mish": (fat.mish, F.mish, ()),
    "elu": (lambda x: fat.elu(x, 0.7), lambda x: F.elu(x, 0.7), (0,)),
    "selu": (fat.selu, F.selu, (0,)),
    "celu": (lambda x: fat.celu(x, 1.3), lambda x: F.celu(x, 1.3), (0,)),
    "leaky_relu": (lambda x: fat.leaky_relu(x, 0.2), lambda x: F.leaky_relu(x, 0.2), (0,)),
    "relu6": (fat.relu6, F.relu6, (0, 6)),
    "hardtanh": (lambda x: fat.hardtanh(x, -0.5, 2.0), lambda x: F.hardtanh(x, -0.5, 2.0), (-0.5, 2.0)),
    "hardsigmoid": (fat.hardsigmoid, F.hardsigmoid, (-3, 3)),
    "hardswish": (fat.hardswish, F.hardswish, (-3, 3)),
}
ROWS = {
    "softmax": (lambda x: fat.softmax(x, 1), lambda x: F.softmax(x, 1)),
    "log_softmax": (lambda x: fat.log_softmax(x, 0), lambda x: F.log_softmax(x, 0)),
    "glu": (lambda x: fat.glu(x, 0), lambda x: F.glu(x, 0)),
}
GATED = {
    "swiglu": (fat.swiglu, lambda gate, up: F.silu(gate) * up),
    "geglu": (fat.geglu, lambda gate, up: F.gelu(gate) * up),
    "geglu_tanh": (lambda gate, up: fat.geglu(gate, up, "tanh"), lambda gate, up: F.gelu(gate, approximate="tanh") * up),
}


def away_from(kinks, shape, dtype=torch.float64, seed=0):
    """Random values in [-8, 8] at least 0.01 from every kink (finite differences cross none)."""
    x = torch.empty(shape, dtype=torch.float64).uniform_(-8, 8, generator=torch.Generator().manual_seed(seed))
    for k in kinks:
        near = (x - k).abs() < 0.01
        x = torch.where(near, x + 0.05, x)
    return x.to(dtype)


@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_gradcheck_elementwise(name):
    ours, _, kinks = ELEMENTWISE[name]
    x = away_from(kinks, (6, 5)).requires_grad_()
    assert torch.autograd.gradcheck(ours, (x,))


@pytest.mark.parametrize("name", list(ROWS))
def test_gradcheck_rows(name):
    ours, _ = ROWS[name]
    x = away_from((), (6, 5)).requires_grad_()
    assert torch.autograd.gradcheck(ours, (x,))


@pytest.mark.parametrize("name", list(GATED))
def test_gradcheck_gated_with_broadcasting(name):
    ours, _ = GATED[name]
    gate = away_from((), (4, 1, 5), seed=1).requires_grad_()
    up = away_from((), (3, 5), seed=2).requires_grad_()
    assert torch.autograd.gradcheck(ours, (gate, up))


def value_and_grads(fn, *inputs):
    inputs = [t.detach().clone().requires_grad_() for t in inputs]
    y = fn(*inputs)
    weights = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape)
    grads = torch.autograd.grad((y * weights).sum(), inputs)
    return [y.detach()] + list(grads)


@pytest.mark.parametrize("name", list(ELEMENTWISE) + list(ROWS) + list(GATED))
def test_float32_matches_torch(name):
    """Values and gradients within a few float32 ULPs of torch's, of the
    array's scale (at least 1: the inputs' and weights'): both are that close
    to the exact values, and where a derivative cancels (gelu' near x = -0.75,
    softmax's) the error is relative to its largest term, not to the result."""
    if name in GATED:
        ours, theirs = GATED[name]
        inputs = (away_from((), (64, 33), torch.float32, 1), away_from((), (64, 33), torch.float32, 2))
    else:
        ours, theirs = (ROWS[name] if name in ROWS else ELEMENTWISE[name][:2])
        kinks = ELEMENTWISE[name][2] if name in ELEMENTWISE else ()
        inputs = (away_from(kinks, (64, 34), torch.float32),)
    for got, want in zip(value_and_grads(ours, *inputs), value_and_grads(theirs, *inputs)):
        assert got.dtype == want.dtype == torch.float32
        torch.testing.assert_close(got, want, rtol=8 * 2.0**-23, atol=8 * 2.0**-23 * max(1.0, float(want.abs().max())))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_each_dtype_gives_fastacts_bits(dtype):
    if dtype == torch.bfloat16:
        ml_dtypes = pytest.importorskip("ml_dtypes")
    x = away_from((), (1000,), dtype)
    g = away_from((), (1000,), dtype, seed=3)
    y = fat.gelu(x.requires_grad_())
    (dx,) = torch.autograd.grad(y, x, g)
    as_numpy = {torch.bfloat16: lambda t: t.detach().view(torch.int16).numpy().view(ml_dtypes.bfloat16)}.get(
        dtype, lambda t: t.detach().numpy())
    assert y.dtype == dx.dtype == dtype
    np.testing.assert_array_equal(as_numpy(y).view(np.uint8), fa.gelu(as_numpy(x)).view(np.uint8))
    np.testing.assert_array_equal(as_numpy(dx).view(np.uint8), fa.gelu_backward(as_numpy(g), as_numpy(x)).view(np.uint8))


def test_zero_copy_views_and_in_place():
    for dtype in (torch.float16, torch.float32, torch.float64) + ((torch.bfloat16,) if fat._HAVE_ML_DTYPES else ()):
        t = torch.ones(8, dtype=dtype)
        assert fat._array(t).__array_interface__["data"][0] == t.data_ptr()
    x = away_from((0,), (100,), torch.float32)
    expected = F.leaky_relu(x, 0.3)
    pointer = x.data_ptr()
    out = fat.leaky_relu(x, 0.3, inplace=True)
    assert out is x and x.data_ptr() == pointer
    torch.testing.assert_close(x, expected, rtol=0, atol=0)


def test_strided_and_broadcast_inputs():
    base = away_from((), (10, 12), torch.float32)
    view = base[::2, 1::3]                     # not contiguous
    torch.testing.assert_close(fat.silu(view), F.silu(view), rtol=2.0**-21, atol=0)
    expanded = base[:1].expand(4, 12)          # stride 0
    torch.testing.assert_close(fat.swiglu(expanded, base[:4]), F.silu(expanded) * base[:4], rtol=2.0**-21, atol=0)


def test_double_backward_raises_clearly():
    x = away_from((), (5,)).requires_grad_()
    (dx,) = torch.autograd.grad(fat.gelu(x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="second derivatives are not implemented"):
        torch.autograd.grad(dx.sum(), x)


def test_other_dtypes_fall_back_to_torch_with_one_warning():
    fat._warned.clear()
    x = torch.arange(-3, 4, dtype=torch.int32)
    with pytest.warns(RuntimeWarning, match="fastact.torch.relu: .*int32.* runs torch's own relu"):
        y = fat.relu(x)
    assert y.dtype == torch.int32 and y.tolist() == [0, 0, 0, 0, 1, 2, 3]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fat.relu(x)                            # warned once


def test_not_a_tensor_raises_naming_the_function():
    with pytest.raises(TypeError, match=r"fastact.torch.gelu: expected a torch.Tensor, not ndarray"):
        fat.gelu(np.ones(3))
    with pytest.raises(ValueError, match="fastact.torch.gelu: approximate"):
        fat.gelu(torch.ones(3), approximate="erf")


def mlp(activation):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), activation, torch.nn.Linear(32, 8),
                               torch.nn.Sequential(torch.nn.LeakyReLU(0.1), torch.nn.Linear(8, 4)), torch.nn.Tanh())


def test_model_loss_and_gradients_match_torch():
    x, target = torch.randn(32, 16), torch.randn(32, 4)
    results = []
    for activation in (torch.nn.GELU(), fat.GELU()):
        model = mlp(activation)
        if isinstance(activation, fat.GELU):
            assert set(fat.replace_activations(model)) == {"3.0", "4"}
        loss = F.mse_loss(model(x), target)
        loss.backward()
        results.append([loss.detach()] + [p.grad for p in model.parameters()])
    for ours, theirs in zip(*results):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-7)


def test_replace_activations_keeps_settings():
    model = torch.nn.Sequential(torch.nn.GELU(approximate="tanh"), torch.nn.Sequential(torch.nn.ELU(0.5)),
                                torch.nn.ReLU6(), torch.nn.Hardtanh(-2.0, 2.0), torch.nn.Softmax(dim=1),
                                torch.nn.Linear(3, 3))
    model.eval()
    x = torch.randn(4, 3)
    before = model(x)
    swapped = fat.replace_activations(model)
    assert swapped == {"0": "GELU", "1.0": "ELU", "2": "ReLU6", "3": "Hardtanh", "4": "Softmax"}
    assert isinstance(model[0], fat.GELU) and model[0].approximate == "tanh"
    assert isinstance(model[1][0], fat.ELU) and model[1][0].alpha == 0.5
    assert type(model[2]) is fat.ReLU6 and type(model[3]) is fat.Hardtanh and model[3].min_val == -2.0
    assert not model[0].training
    torch.testing.assert_close(model(x), before, rtol=1e-5, atol=1e-7)
    assert fat.replace_activations(model) == {}   # nothing left to swap


def test_compile_fullgraph_and_export():
    """No graph break at fastact's ops: register_fake and register_autograd
    let the tracer through, forward and backward."""
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), fat.GELU(), torch.nn.Linear(32, 32), fat.SiLU())
    x = torch.randn(8, 16)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    y = compiled(x)
    y.sum().backward()
    torch.testing.assert_close(y, model(x), rtol=0, atol=0)
    exported = torch.export.export(model, (x,))
    targets = {str(node.target) for node in exported.graph.nodes}
    assert {"fastact.gelu.default", "fastact.silu.default"} <= targets


def test_accurate_tier_through_functions_modules_and_replace():
    x = away_from((), (300,), torch.float32).requires_grad_()
    g = away_from((), (300,), torch.float32, seed=5)
    for y in (fat.silu(x, precision="accurate"), fat.SiLU(precision="accurate")(x)):
        (dx,) = torch.autograd.grad(y, x, g)
        np.testing.assert_array_equal(y.detach().numpy(), fa.silu(x.detach().numpy(), precision="accurate"))
        np.testing.assert_array_equal(dx.numpy(), fa.silu_backward(g.numpy(), x.detach().numpy(), precision="accurate"))
    assert fat.SiLU().precision == "fast" and "precision" not in repr(fat.SiLU())  # the default
    np.testing.assert_array_equal(fat.silu(x).detach().numpy(), fa.silu(x.detach().numpy()))
    model = torch.nn.Sequential(torch.nn.GELU(approximate="tanh"))
    fat.replace_activations(model, precision="accurate")
    assert model[0].precision == "accurate" and "precision='accurate'" in repr(model[0])
    np.testing.assert_array_equal(model(x).detach().numpy(),
                                  fa.gelu(x.detach().numpy(), "tanh", precision="accurate"))
    with pytest.raises(ValueError, match="fastact.torch.silu: precision must be"):
        fat.silu(x, precision="fastest")
    with pytest.raises(ValueError, match="fastact.torch.GELU: precision must be"):
        fat.GELU(precision="fastest")


def test_in_place_keeps_autograds_checks():
    """Overwriting a tensor another op saved for backward is an error, as in torch."""
    w = torch.ones(3, requires_grad=True)
    x = torch.tensor([-1.0, 2.0, 3.0])
    y = (w * x).sum()
    fat.relu(x, inplace=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    leaf = torch.tensor([-1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        fat.relu(leaf, inplace=True)   # torch's own in-place op decides
    expanded = torch.zeros(1).expand(4)
    with pytest.raises(RuntimeError):
        fat.relu(expanded, inplace=True)   # one element behind four: torch refuses it too


def test_gated_mixed_dtypes_promote_as_torch():
    gate = away_from((), (3, 4), torch.float32, 1).requires_grad_()
    up = away_from((), (4,), torch.float64, 2).requires_grad_()
    y = fat.swiglu(gate, up)
    assert y.dtype == torch.float64 == (F.silu(gate) * up).dtype
    dgate, dup = torch.autograd.grad(y.sum(), (gate, up))
    assert (dgate.dtype, dup.dtype, dup.shape) == (torch.float32, torch.float64, up.shape)
    want = torch.autograd.grad((F.silu(gate) * up).sum(), (gate, up))
    torch.testing.assert_close(dgate, want[0], rtol=2e-6, atol=1e-6)
    # fastact computes silu(gate) in the promoted float64, torch in float32
    torch.testing.assert_close(dup, want[1], rtol=1e-6, atol=1e-7)


def test_compiled_gradients_and_fallback_under_compile():
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), fat.GELU(), torch.nn.Linear(16, 4))
    x = torch.randn(5, 8)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    compiled(x).square().sum().backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).square().sum().backward()
    for g, w in zip(got, (p.grad for p in model.parameters())):
        torch.testing.assert_close(g, w, rtol=1e-6, atol=1e-7)
    # torch's own op where fastact does not compute (integers), no graph break for the warning
    fat._warned.clear()
    relu = torch.compile(fat.relu, fullgraph=True, backend="aot_eager")
    assert relu(torch.arange(-2, 3)).tolist() == [0, 0, 0, 1, 2]
