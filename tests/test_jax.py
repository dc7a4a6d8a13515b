"""fastact.jax's two routes, the XLA custom call (CPU) and the host callback,
against fastact's NumPy functions: the same bits for every function, dtype,
direction and parameter, under jit, vmap and grad."""
import numpy as np
import pytest

import fastact as fa

jax = pytest.importorskip("jax")
faj = pytest.importorskip("fastact.jax")
jnp = jax.numpy

# (name, keywords, number of inputs)
CALLS = [("gelu", {}, 1), ("gelu", {"approximate": "tanh"}, 1), ("silu", {}, 1), ("quick_gelu", {}, 1),
         ("relu", {}, 1), ("sigmoid", {}, 1), ("tanh", {}, 1), ("softplus", {"beta": 2.0, "threshold": 5.0}, 1),
         ("log_sigmoid", {}, 1), ("mish", {}, 1), ("elu", {"alpha": 0.5}, 1), ("selu", {}, 1),
         ("celu", {"alpha": 2.0}, 1), ("leaky_relu", {"negative_slope": 0.2}, 1), ("relu6", {}, 1),
         ("hardtanh", {"min_val": -0.5, "max_val": 2.0}, 1), ("hardsigmoid", {}, 1), ("hardswish", {}, 1),
         ("swiglu", {}, 2), ("geglu", {}, 2), ("geglu", {"approximate": "tanh"}, 2)]
DTYPES = ["float32", "float64", "float16", "bfloat16"]


@pytest.fixture(params=["custom_call", "callback"])
def route(request, monkeypatch):
    if request.param == "custom_call" and not faj.uses_xla_ffi:
        pytest.fail("fastact.jax did not register its XLA handler")
    if request.param == "callback":
        monkeypatch.setattr(faj, "uses_xla_ffi", False)
    faj._cached.cache_clear()
    yield request.param
    faj._cached.cache_clear()


def _numpy_dtype(dtype):
    return np.dtype(jnp.dtype(dtype))


def _inputs(dtype, nin, n=67):
    rng = np.random.default_rng(7)
    values = [rng.normal(0, 4, n) for _ in range(nin)]
    values[0][:4] = [0.0, -0.0, np.inf, -np.inf]
    arrays = [v.astype(_numpy_dtype(dtype)) for v in values]
    # subnormal inputs, and results (gelu(-13.5) in float32): XLA's own ops flush them
    tiny = float(jnp.finfo(dtype).smallest_subnormal)
    arrays[0][4:8] = [tiny, -3 * tiny, -13.5, -9.25]
    return arrays


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, keywords, nin", CALLS)
def test_forward_and_gradient_match_fastact(route, name, keywords, nin, dtype):
    with jax.enable_x64(dtype == "float64"):
        _check_forward_and_gradient(name, keywords, nin, dtype)


def _check_forward_and_gradient(name, keywords, nin, dtype):
    xs = _inputs(dtype, nin)
    function = lambda *a: getattr(faj, name)(*a, **keywords)  # noqa: E731
    got = np.asarray(jax.jit(function)(*xs))
    assert got.dtype == _numpy_dtype(dtype)
    np.testing.assert_array_equal(got, getattr(fa, name)(*xs, **keywords))
    weights = _inputs(dtype, 1)[0]
    weights[:4] = 1
    grads = jax.jit(jax.grad(lambda *a: (function(*a) * weights).sum(), tuple(range(nin))))(*xs)
    if name in ("sigmoid", "tanh"):  # from the output, as JAX's own gradient
        expected = (getattr(fa, f"{name}_backward_from_output")(weights, getattr(fa, name)(*xs)),)
    else:
        expected = getattr(fa, f"{name}_backward")(weights, *xs, **keywords)
        expected = expected if isinstance(expected, tuple) else (expected,)
    for g, e in zip(grads, expected):
        np.testing.assert_array_equal(np.asarray(g), e)


def test_vmap_shapes_and_empty_arrays(route):
    batch = jnp.asarray(_inputs("float32", 1, 60)[0].reshape(3, 4, 5))
    np.testing.assert_array_equal(np.asarray(jax.vmap(jax.jit(faj.gelu))(batch)), fa.gelu(np.asarray(batch)))
    assert jax.jit(faj.silu)(jnp.zeros((0, 3), jnp.float32)).shape == (0, 3)
    np.testing.assert_array_equal(np.asarray(jax.jit(faj.mish)(jnp.float32(1.5))), fa.mish(np.float32(1.5)))
    grads = jax.vmap(jax.grad(lambda t: faj.elu(t, 0.5).sum()))(batch)
    np.testing.assert_array_equal(np.asarray(grads), fa.elu_backward(np.ones((3, 4, 5), np.float32),
                                                                     np.asarray(batch), alpha=0.5))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_select_keeps_fastacts_bits_for_nans_and_zeros(dtype):
    with jax.enable_x64(dtype == "float64"), np.errstate(invalid="ignore"):  # a signalling NaN raises it
        bits = np.uint32(0x7FA00001) if dtype == "float32" else np.uint64(0x7FF4000000000001)
        signalling = np.frombuffer(bits.tobytes(), dtype)[0]
        tiny = np.finfo(dtype).smallest_subnormal
        x = np.array([signalling, -np.nan, 1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, 2.0, tiny, -tiny, 3 * tiny], dtype)
        g = np.array([3.0, -3.0, -2.0, -2.0, -5.0, 5.0, np.nan, 1.0, np.nan, tiny, 2.0, -tiny], dtype)
        integer = x.view(f"u{x.itemsize}").dtype
        got = np.asarray(jax.jit(faj.relu)(x))
        np.testing.assert_array_equal(got.view(integer), fa.relu(x).view(integer))
        _, vjp = jax.vjp(faj.relu, jnp.asarray(x))
        grad = np.asarray(jax.jit(vjp)(jnp.asarray(g))[0])
        np.testing.assert_array_equal(grad.view(integer), fa.relu_backward(g, x).view(integer))


def test_the_custom_call_is_what_jit_compiles():
    """On the CPU the compiled program calls fastact's handler, with no host callback."""
    assert faj.uses_xla_ffi
    faj._cached.cache_clear()
    text = jax.jit(lambda t: faj.softplus(t, beta=2.0)).lower(jnp.ones(8, jnp.float32)).as_text()
    assert "fastact_elementwise" in text
    assert "callback" not in text.lower()


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
def test_derivative_from_the_output_takes_x_in_one_call(name):
    """sigmoid's and tanh's gradient is the derivative from the output with the forward
    recomputed from x in the same custom call, a stretch of 2^16 elements at a time: a
    gradient alone compiles to that one call (the forward's own is dropped), with the two
    kernels' bits, also where the loss's value is used (value_and_grad) and past a stretch."""
    assert faj.uses_xla_ffi
    n = (1 << 17) + 300
    x, weights = _inputs("float32", 1, n)[0], _inputs("float32", 1, n)[0][::-1].copy()
    weights[-8:] = 1  # the weights' own infinities (the reversed specials) made finite
    function = getattr(faj, name)
    loss = lambda t, w: (function(t) * w).sum()  # noqa: E731
    compiled = jax.jit(jax.grad(loss)).lower(x, weights).compile().as_text()
    assert compiled.count('custom_call_target="fastact_elementwise"') == 1
    y = getattr(fa, name)(x)
    expected = getattr(fa, f"{name}_backward_from_output")(weights, y)
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.grad(loss))(x, weights)), expected)
    value, grad = jax.jit(jax.value_and_grad(loss))(x, weights)
    np.testing.assert_array_equal(np.asarray(grad), expected)
    assert np.isclose(float(value), float((y.astype(np.float64) * weights).sum()), rtol=1e-4)


def test_bad_parameters_raise_fastact_errors_when_traced():
    with pytest.raises(ValueError, match="softplus"):
        faj.softplus(jnp.ones(3), beta=-1.0)
    with pytest.raises(ValueError, match="gelu"):
        faj.gelu(jnp.ones(3), approximate="sigmoid")


def test_custom_calls_from_many_threads_at_once():
    """XLA may run the handler on several threads at a time: each call's own bits."""
    import concurrent.futures
    x = jnp.asarray(_inputs("float32", 1, 200_000)[0])
    expected = fa.gelu(np.asarray(x))
    function = jax.jit(faj.gelu)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: np.asarray(function(x)), range(16)))
    for got in results:
        np.testing.assert_array_equal(got, expected)
