"""fastact's functions for JAX arrays, inside jax.jit, jax.vmap and jax.grad.

    import fastact.jax as faj
    y = jax.jit(faj.gelu)(x)
    dx = jax.grad(lambda x: faj.silu(x).sum())(x)

Each function runs fastact on the host through jax.pure_callback (CPU
arrays; on an accelerator JAX copies them to the host and back), and its
gradient is fastact's backward kernel (jax.custom_vjp). Elementwise, so
vmap batches a whole array into one call. float32, float64, float16 and
bfloat16 (integers and Python numbers become JAX's default float; mixed
operands promote as in jnp). Parameters (alpha, beta, negative_slope, ...)
are Python numbers, fixed when traced, not traced arrays. Second
derivatives are not implemented. JAX is an optional dependency, not
installed with fastact.
"""
import functools

import numpy as np

try:
    import jax
except ImportError as exc:  # pragma: no cover - exercised without jax only
    raise ImportError("fastact.jax needs JAX: pip install jax") from exc

import fastact as fa

__all__ = ["gelu", "silu", "quick_gelu", "relu", "sigmoid", "tanh", "softplus", "log_sigmoid", "mish", "elu",
           "selu", "celu", "leaky_relu", "relu6", "hardtanh", "hardsigmoid", "hardswish", "swiglu", "geglu", "glu"]


def _host(function, shape_dtype, *arrays):
    """function on the host's NumPy copies of arrays (one result or a tuple), as traced JAX values."""
    def on_host(*values):
        result = function(*(np.asarray(v) for v in values))
        return tuple(np.asarray(r) for r in result) if isinstance(result, tuple) else np.asarray(result)
    return jax.pure_callback(on_host, shape_dtype, *arrays, vmap_method="broadcast_all")


def _activation(name, forward, backward, nin=1, **params):
    """A differentiable JAX function of nin arrays from fastact's forward and backward."""

    @jax.custom_vjp
    def apply(*arrays):
        return _host(lambda *a: forward(*a, **params), jax.ShapeDtypeStruct(arrays[0].shape, arrays[0].dtype),
                     *arrays)

    def apply_forward(*arrays):
        return apply(*arrays), arrays

    def apply_backward(arrays, grad):
        shape = jax.ShapeDtypeStruct(grad.shape, grad.dtype)
        if nin == 1:
            return (_host(lambda g, x: backward(g, x, **params), shape, grad, *arrays),)
        return _host(lambda g, *a: backward(g, *a, **params), (shape,) * nin, grad, *arrays)

    apply.defvjp(apply_forward, apply_backward)

    def call(*arrays):
        jnp = jax.numpy
        arrays = [jnp.asarray(a) for a in arrays]
        # one floating dtype for all, as NumPy would promote them (integers as for np.exp)
        dtype = jnp.result_type(*arrays)
        if not jnp.issubdtype(dtype, jnp.floating):
            dtype = jnp.result_type(float)
        arrays = [a.astype(dtype) for a in arrays]
        if nin > 1:  # one shape for all (vmap batches each operand along its first axis)
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
            arrays = [jnp.broadcast_to(a, shape) for a in arrays]
        return apply(*arrays)

    call.__name__ = call.__qualname__ = name
    return call


@functools.lru_cache(maxsize=None)
def _cached(name, nin=1, **params):
    forward, backward = getattr(fa, name), getattr(fa, f"{name}_backward")
    return _activation(name, forward, backward, nin, **params)


def gelu(x, approximate="none"):
    """fastact.gelu for JAX arrays (approximate: "none" or "tanh"), differentiable."""
    return _cached("gelu", approximate=approximate)(x)


def silu(x):
    return _cached("silu")(x)


def quick_gelu(x):
    return _cached("quick_gelu")(x)


def relu(x):
    return _cached("relu")(x)


def sigmoid(x):
    return _cached("sigmoid")(x)


def tanh(x):
    return _cached("tanh")(x)


def softplus(x, beta=1.0, threshold=20.0):
    return _cached("softplus", beta=float(beta), threshold=float(threshold))(x)


def log_sigmoid(x):
    return _cached("log_sigmoid")(x)


def mish(x):
    return _cached("mish")(x)


def elu(x, alpha=1.0):
    return _cached("elu", alpha=float(alpha))(x)


def selu(x):
    return _cached("selu")(x)


def celu(x, alpha=1.0):
    return _cached("celu", alpha=float(alpha))(x)


def leaky_relu(x, negative_slope=0.01):
    return _cached("leaky_relu", negative_slope=float(negative_slope))(x)


def relu6(x):
    return _cached("relu6")(x)


def hardtanh(x, min_val=-1.0, max_val=1.0):
    return _cached("hardtanh", min_val=float(min_val), max_val=float(max_val))(x)


def hardsigmoid(x):
    return _cached("hardsigmoid")(x)


def hardswish(x):
    return _cached("hardswish")(x)


def swiglu(gate, up):
    """silu(gate)·up in one pass; gate and up broadcast together."""
    return _cached("swiglu", nin=2)(gate, up)


def geglu(gate, up, approximate="none"):
    """gelu(gate)·up in one pass; gate and up broadcast together."""
    return _cached("geglu", nin=2, approximate=approximate)(gate, up)


def glu(x, axis=-1):
    """a·σ(b), a and b the halves of x along axis (fastact.glu), differentiable."""
    x = jax.numpy.asarray(x)
    length = x.shape[axis] if x.ndim else 0
    if length % 2 or not x.ndim:
        raise ValueError(f"fastact.jax.glu: the length of axis {axis} must be even, not {length}")
    a, b = jax.numpy.split(x, 2, axis=axis)
    return _glu_halves(a, b)


# the ufunc of the halves: a·σ(b) with b the gate, and its (grad_a, grad_b)
_glu_halves = _activation("glu", fa.ufuncs.glu, fa.ufuncs.glu_backward, nin=2)

for _f in (silu, quick_gelu, relu, sigmoid, tanh, softplus, log_sigmoid, mish, elu, selu, celu, leaky_relu, relu6,
           hardtanh, hardsigmoid, hardswish):
    _f.__doc__ = f"fastact.{_f.__name__} for JAX arrays, differentiable (jit, vmap, grad)."
del _f
