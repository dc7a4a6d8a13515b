"""fastact's functions for JAX arrays, inside jax.jit, jax.vmap and jax.grad.

    import fastact.jax as faj
    y = jax.jit(faj.gelu)(x)
    dx = jax.grad(lambda x: faj.silu(x).sum())(x)

On the CPU each function is an XLA custom call (jax.ffi) into fastact's
kernels, so jit compiles it into the program like any other operation; on
other platforms it runs fastact on the host through jax.pure_callback (JAX
copies the arrays to the host and back). Its gradient is fastact's backward
kernel (jax.custom_vjp; sigmoid's and tanh's from their output, as JAX's
own, the forward recomputed from x in the same pass over memory).
Elementwise, so vmap batches a whole array into one call. Results
are fastact's bits, subnormals kept, where XLA's own CPU operations flush
them to zero. float32, float64, float16 and bfloat16 (integers and Python
numbers become JAX's default float; mixed operands promote as in jnp). Parameters (alpha, beta,
negative_slope, ...) are Python numbers, checked and fixed when traced, not
traced arrays. Second derivatives are not implemented. The default tier's
kernels, as fastact's functions called without precision=. JAX is an
optional dependency, not installed with fastact.
"""
import functools
import re

import numpy as np

try:
    import jax
except ImportError as exc:  # pragma: no cover - exercised without jax only
    raise ImportError("fastact.jax needs JAX: pip install jax") from exc

import fastact as fa
from fastact import _ext, _manifest

__all__ = ["gelu", "silu", "quick_gelu", "relu", "sigmoid", "tanh", "softplus", "log_sigmoid", "mish", "elu",
           "selu", "celu", "leaky_relu", "relu6", "hardtanh", "hardsigmoid", "hardswish", "swiglu", "geglu", "glu"]

_TARGET = "fastact_elementwise"


def _register_target():
    """Whether fastact's XLA handler is registered for the CPU (jax.ffi with ffi_call returning a
    callable: jax 0.5 and later)."""
    ffi = getattr(jax, "ffi", None)
    release = tuple(int(part) for part in re.findall(r"\d+", jax.__version__)[:2])
    if ffi is None or not hasattr(ffi, "ffi_call") or release < (0, 5):
        return False
    try:
        ffi.register_ffi_target(_TARGET, _ext.xla_ffi_capsule(), platform="cpu")
    except Exception as exc:  # registered before, by an earlier import of this module
        return "already" in str(exc).lower()
    return True


uses_xla_ffi = _register_target()


def _kernel(ufunc_name, params, shapes, *arrays, through=None):
    """fastact's ufunc `ufunc_name` (parameters `params`) on arrays, as traced JAX values: an XLA
    custom call on the CPU, a host callback elsewhere. through: a forward ufunc (no parameters) that
    the last array goes through first (ufunc_name then takes its output)."""
    ufunc = getattr(fa.ufuncs, ufunc_name)

    def on_host(*values):
        values = [np.asarray(v) for v in values]
        if through:
            values[-1] = _ext.call_in_default_fpenv(getattr(fa.ufuncs, through), values[-1])
        result = _ext.call_in_default_fpenv(ufunc, *values, *params)
        return tuple(np.asarray(r) for r in result) if isinstance(result, tuple) else np.asarray(result)

    def callback(*values):
        return jax.pure_callback(on_host, shapes, *values, vmap_method="broadcast_all")

    if not uses_xla_ffi:
        return callback(*arrays)
    op, direction, tier, _, nparams, _ = _ext.ufunc_operations[ufunc_name]
    attributes = {"op": np.int32(op), "direction": np.int32(direction), "tier": np.int32(tier)}
    if nparams:
        attributes["params"] = np.asarray(params, np.float64)
    if through:
        op, direction, tier = _ext.ufunc_operations[through][:3]
        attributes.update(forward_op=np.int32(op), forward_direction=np.int32(direction),
                          forward_tier=np.int32(tier))

    def custom_call(*values):
        return jax.ffi.ffi_call(_TARGET, shapes, vmap_method="broadcast_all")(*values, **attributes)

    return jax.lax.platform_dependent(*arrays, cpu=custom_call, default=callback)


def _activation(name, forward, backward, params=(), nin=1, from_output=False):
    """A differentiable JAX function of nin arrays from fastact's ufuncs `forward` and `backward`
    (which takes grad_output, then the inputs, or the output where from_output)."""

    @jax.custom_vjp
    def apply(*arrays):
        return _kernel(forward, params, jax.ShapeDtypeStruct(arrays[0].shape, arrays[0].dtype), *arrays)

    def apply_forward(*arrays):
        return apply(*arrays), arrays

    def apply_backward(saved, grad):
        shape = jax.ShapeDtypeStruct(grad.shape, grad.dtype)
        if nin == 1:  # from the output: the forward again, in the same pass (a gradient alone reads x once)
            return (_kernel(backward, params, shape, grad, *saved, through=forward if from_output else None),)
        return tuple(_kernel(backward, params, (shape,) * nin, grad, *saved))

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
def _cached(name, nin=1, **keywords):
    """fastact's public function `name` with these keywords, for JAX: its default tier's ufuncs
    and its parameters in their order, checked here as fastact checks them."""
    getattr(fa, name)(*[np.zeros(1, np.float32)] * nin, **keywords)  # raises fastact's own errors
    forms = _manifest.public_functions()[name]
    op = next(op for op in forms if op.form is None or (
        keywords[op.form.keyword] == op.form.value if op.form.keyword in keywords else op.form.is_default))
    params = tuple(float(keywords.get(p.name, p.default)) for p in op.params)
    # the derivative from the output where it exists (sigmoid, tanh), as JAX's own rules take it
    from_output = f"{op.name}_backward_from_output" in _ext.ufunc_operations
    operands = "_with_params" if op.params else ""  # the ufuncs taking the parameters as operands
    backward = f"{op.name}_backward_from_output" if from_output else f"{op.name}_backward{operands}"
    return _activation(name, op.name + operands, backward, params, nin, from_output)


def gelu(x, approximate="none"):
    """fastact.gelu for JAX arrays (approximate: "none" or "tanh"), differentiable."""
    return _cached("gelu", approximate=approximate)(x)


def silu(x):
    return _cached("silu")(x)


def quick_gelu(x):
    return _cached("quick_gelu")(x)


# relu's result is x, zero or x's NaN: for float32 and float64 (where fastact passes a NaN
# through unchanged) it is written as XLA's own select, which jit fuses with its neighbours
# where a custom call could not; same bits as fastact.relu and relu_backward (tested).
# x > 0 is asked of x's bits as an integer: XLA treats subnormal operands of
# floating-point compares as zero, fastact does not.
def _bits(x):
    return jax.lax.bitcast_convert_type(x, jax.numpy.int32 if x.dtype == jax.numpy.float32 else jax.numpy.int64)


def _positive(x):
    return _bits(x) > 0  # NaNs with the sign bit clear too, which the callers' isnan covers anyway


# -inf's bits as a signed integer: above it are the negative NaNs, +0 and everything
# positive (NaNs included); at or below it -0 and the negative numbers
_MINUS_INF_BITS = {"float32": -(1 << 23), "float64": -(1 << 52)}


@jax.custom_vjp
def _relu_select(x):  # x where x > 0 or NaN, else +0 (x itself where x is +0): one integer compare
    return jax.numpy.where(_bits(x) > _MINUS_INF_BITS[x.dtype.name], x, jax.numpy.zeros_like(x))


def _relu_select_forward(x):
    return _relu_select(x), x


def _relu_select_backward(x, grad):
    jnp = jax.numpy
    return (jnp.where(jnp.isnan(x), x, jnp.where(_positive(x), grad, jnp.zeros_like(grad))),)


_relu_select.defvjp(_relu_select_forward, _relu_select_backward)


def relu(x):
    x = jax.numpy.asarray(x)
    if x.dtype in (jax.numpy.float32, jax.numpy.float64):
        return _relu_select(x)
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
_glu_halves = _activation("glu", "glu", "glu_backward", nin=2)

for _f in (silu, quick_gelu, relu, sigmoid, tanh, softplus, log_sigmoid, mish, elu, selu, celu, leaky_relu, relu6,
           hardtanh, hardsigmoid, hardswish):
    _f.__doc__ = f"fastact.{_f.__name__} for JAX arrays, differentiable (jit, vmap, grad)."
del _f
