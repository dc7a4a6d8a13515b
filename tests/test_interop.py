"""Other array types through fastact's NumPy functions, and fastact.jax.

torch tensors: computed on NumPy views of them and returned as tensors (as a
NumPy ufunc returns them), with no warning; out= a tensor is written in
place. JAX arrays: NumPy's own rule, an ndarray back (__array__ in, no
__array_wrap__); inside jit, fastact.jax's functions instead."""
import warnings

import numpy as np
import pytest

import fastact as fa
from fastact import _ext
from fastact._manifest import OPS, directions

def public_calls():
    """(public function, number of array arguments) for each one with a default form."""
    for op in OPS:
        if op.generated_function and not (op.form and not op.form.is_default):
            for direction in directions(op):
                suffix = "" if direction == "fwd" else "_backward"
                inputs = op.inputs if direction == "fwd" else op.backward_inputs
                for name in (op.public,) + op.aliases:   # the aliases are functions of their own
                    yield name + suffix, len(inputs)
    for name, nin in (("softmax", 1), ("log_softmax", 1), ("softmax_backward", 2), ("log_softmax_backward", 2),
                      ("glu", 1), ("glu_backward", 2)):
        yield name, nin


CALLS = sorted(set(public_calls()))


def test_every_public_function_is_covered():
    covered = {name for name, _ in CALLS}
    assert set(_ext.PUBLIC) <= covered, set(_ext.PUBLIC) - covered


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("name, nin", CALLS)
def test_torch_tensors_in_tensors_out_without_warnings(torch, name, nin):
    arrays = [np.linspace(-3, 3, 32, dtype=np.float32).reshape(8, 4) + np.float32(0.1 * i) for i in range(nin)]
    if name == "glu_backward":   # grad_output has the halves' shape
        arrays[0] = arrays[0][:, :2].copy()
    tensors = [torch.from_numpy(a.copy()) for a in arrays]
    function = getattr(fa, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = function(*tensors)
    want = function(*arrays)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert isinstance(g, torch.Tensor) and g.dtype == torch.float32
        np.testing.assert_array_equal(g.numpy(), w)


def test_torch_out_tuple_with_a_gap(torch):
    g, gate, up = (torch.linspace(-2, 2, 6) + i for i in range(3))
    grad_gate = torch.empty(6)
    got = fa.swiglu_backward(g, gate, up, out=(grad_gate, None))
    want = fa.swiglu_backward(g.numpy(), gate.numpy(), up.numpy())
    assert got[0] is grad_gate and isinstance(got[1], torch.Tensor)
    np.testing.assert_array_equal(got[0].numpy(), want[0])
    np.testing.assert_array_equal(got[1].numpy(), want[1])


def test_torch_out_and_16_bit(torch):
    x = torch.linspace(-3, 3, 16)
    out = torch.empty(16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fa.silu(x, out=out) is out
        np.testing.assert_array_equal(out.numpy(), fa.silu(x.numpy()))
        assert fa.gelu(x.half()).dtype == torch.float16
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x16 = x.to(torch.bfloat16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = fa.gelu(x16, approximate="tanh", precision="fast")
    assert y.dtype == torch.bfloat16
    want = fa.gelu(x16.view(torch.int16).numpy().view(ml_dtypes.bfloat16), approximate="tanh", precision="fast")
    np.testing.assert_array_equal(y.view(torch.int16).numpy(), want.view(np.int16))


def test_torch_tensor_that_requires_grad_raises_clearly(torch):
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(TypeError, match=r"fastact.gelu: the tensor requires grad; fastact.torch"):
        fa.gelu(x)
    with torch.no_grad():
        assert isinstance(fa.gelu(x), torch.Tensor)
    with pytest.raises(TypeError, match=r"fastact.softmax: the tensor requires grad"):
        fa.softmax(x)


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    pytest.importorskip("fastact.jax")
    return jax


def test_jax_array_through_numpy_functions_gives_ndarray(jax):
    x = jax.numpy.linspace(-3, 3, 7, dtype=jax.numpy.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = fa.gelu(x)
    assert type(y) is np.ndarray
    np.testing.assert_array_equal(y, fa.gelu(np.asarray(x)))


def test_fastact_jax_under_jit_vmap_and_grad(jax):
    import fastact.jax as faj
    jnp = jax.numpy
    x = jnp.linspace(-4, 4, 33, dtype=jnp.float32)
    np.testing.assert_array_equal(np.asarray(jax.jit(faj.gelu)(x)), fa.gelu(np.asarray(x)))
    batch = jnp.stack([x, -x, 2 * x])
    np.testing.assert_array_equal(np.asarray(jax.vmap(faj.silu)(batch)), fa.silu(np.asarray(batch)))
    grad = jax.jit(jax.grad(lambda t: (faj.gelu(t, approximate="tanh") * jnp.arange(33.0)).sum()))(x)
    np.testing.assert_array_equal(np.asarray(grad), fa.gelu_backward(np.arange(33.0, dtype=np.float32),
                                                                    np.asarray(x), approximate="tanh"))
    leaky = jax.grad(lambda t: faj.leaky_relu(t, 0.25).sum())(x)
    np.testing.assert_array_equal(np.asarray(leaky), np.where(np.asarray(x) > 0, 1.0, 0.25).astype(np.float32))


def test_fastact_jax_has_every_function_of_the_manifest(jax):
    """Every elementwise and gated op with a derivative has its fastact.jax
    function (by its public name, its own or torch's spelling): a new
    activation cannot be left out of the adapter unnoticed."""
    import fastact.jax as faj
    for op in OPS:
        if op.has_backward and op.kind != "bias":
            assert {op.public, op.name, *op.aliases} & set(faj.__all__), f"{op.name} is missing from fastact.jax"


def test_fastact_jax_glu(jax):
    import fastact.jax as faj
    jnp = jax.numpy
    x = jnp.linspace(-3, 3, 24, dtype=jnp.float32).reshape(4, 6)
    np.testing.assert_array_equal(np.asarray(jax.jit(faj.glu)(x)), fa.glu(np.asarray(x)))
    np.testing.assert_array_equal(np.asarray(faj.glu(x, axis=0)), fa.glu(np.asarray(x), axis=0))
    ours = jax.grad(lambda t: (faj.glu(t) * jnp.arange(12.0).reshape(4, 3)).sum())(x)
    theirs = jax.grad(lambda t: (jax.nn.glu(t) * jnp.arange(12.0).reshape(4, 3)).sum())(x)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=4e-6, atol=1e-6)
    with pytest.raises(ValueError, match="fastact.jax.glu: the length of axis 0 must be even, not 3"):
        faj.glu(jnp.ones((3, 2)), axis=0)


def test_fastact_jax_gated_gradients_sum_over_broadcasting(jax):
    import fastact.jax as faj
    jnp = jax.numpy
    gate = jnp.linspace(-2, 2, 20, dtype=jnp.float32).reshape(4, 1, 5)
    up = jnp.linspace(0, 1, 15, dtype=jnp.float32).reshape(3, 5)
    ours = jax.grad(lambda a, b: faj.swiglu(a, b).sum(), (0, 1))(gate, up)
    theirs = jax.grad(lambda a, b: (jax.nn.silu(a) * b).sum(), (0, 1))(gate, up)
    for o, t in zip(ours, theirs):
        assert o.shape == t.shape
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=4e-6, atol=1e-6)
