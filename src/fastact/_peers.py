"""The implementations fastact is timed against, each built into a zero-argument call.

NumPy formulas, PyTorch, and the optional numexpr, onnxruntime and jax, plus
the memory references: the CLI (fastact._bench) and benchmarks/ time exactly
these calls. A peer is imported only when a benchmark asks for it, and
importing fastact never imports this module.
"""
import importlib
import importlib.util
import math
import os
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Optional

import numpy as np

import fastact as fa
from fastact._registry import ACTIVATIONS

DIRECTIONS = ("forward", "backward", "from_output")
# from_output: the derivative from the forward's saved output, as autograd
# runs sigmoid's and tanh's backward (fastact's *_backward_from_output)
FROM_OUTPUT = ("sigmoid", "tanh")
SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
INV_SQRT_2 = math.sqrt(0.5)
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
TANH_CUBIC = 0.044715
QUICK_GELU_SCALE = 1.702  # quick GELU: x·sigmoid(1.702 x)
# torch's SELU constants (torch.nn.functional.selu, jax.nn.selu)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946

# PyTorch's OpenMP threads spin after each parallel region by default. On a
# machine with other work, a spinning thread takes the core the next timed
# call needs (measured here: a 1e3-element torch GELU went from 11 µs to 4-8 ms
# with 2 threads, and slowed the calls timed after it). Passive waiting is
# what fastact's pool and onnxruntime's (allow_spinning=0 below) do. It has
# to be set before torch is imported; an explicit setting is left alone.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


class Unsupported(Exception):
    """This implementation has no such function, direction or dtype."""


# ---- inputs ----------------------------------------------------------------

DTYPES = ("float32", "float64", "float16", "bfloat16")    # bfloat16: ml_dtypes'
HALF = ("float16", "bfloat16")      # computed by fastact in float32 lanes, rounded once


def dtype_of(name):
    """The NumPy dtype called `name`; "bfloat16" is ml_dtypes' (ImportError without it)."""
    if str(name) == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def make_inputs(size, dtype, seed=0):
    """(grad_output, x, out): x ~ N(0, 3²) reaches every kernel's tail paths
    without overflowing any peer's formula; out is shared by every implementation.
    16-bit inputs are the float32 draws, rounded: the same values at every width."""
    rng = np.random.default_rng(seed)
    dtype = dtype_of(dtype)
    drawn = dtype if dtype in (np.float32, np.float64) else np.dtype(np.float32)
    x = rng.standard_normal(size, dtype=drawn)
    x *= 3
    g = rng.standard_normal(size, dtype=drawn)
    return g.astype(dtype, copy=False), x.astype(dtype, copy=False), np.empty(size, dtype)


def _first_call(fn, peer, dtype, errors=(RuntimeError, TypeError, NotImplementedError)):
    """fn, once called: a 16-bit kernel or loop `peer` lacks fails here, as
    Unsupported, not in the middle of the timing."""
    try:
        fn()
    except errors as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise Unsupported(f"{peer} fails on {dtype}: {reason[:120]}") from None
    return fn


# ---- implementations ---------------------------------------------------------
# A builder takes (function, direction, g, x, y, threads) and returns a
# zero-argument callable that computes into the preallocated y (jax, which
# cannot, returns a new array); setup (imports, tensor views, sessions,
# compiles) happens there, outside the timed call.

def _fastact(name, direction, g, x, y, threads, precision=None):
    act = ACTIVATIONS[name]   # the public API, wrapper included: what users call
    precision = precision or act.tier   # None: the default call
    if precision not in act.op.tiers:
        raise Unsupported(f"{name} has one precision tier (it is exact)")
    fn = act.forward if direction == "forward" else act.backward
    # gelu_tanh is partial(gelu, approximate="tanh") in the registry; users
    # write the keywords, which skips the partial's own call
    approximate = getattr(fn, "keywords", {}).get("approximate")
    fn = getattr(fn, "func", fn)
    keywords = {"out": y} if precision == act.tier else {"out": y, "precision": precision}
    args = ((x,) if direction == "forward" else (g, x)) + ((approximate,) if approximate else ())
    if len(keywords) == 1 and len(args) == 1:
        return lambda: fn(x, out=y)     # the commonest call, without unpacking
    return lambda: fn(*args, **keywords)


def _fastact_accurate(name, direction, g, x, y, threads):
    return _fastact(name, direction, g, x, y, threads, precision="accurate")


def _memory(name, direction, g, x, y, threads):
    """The floor: the same bytes moved with (next to) no arithmetic. Single-threaded."""
    if direction == "forward":
        return lambda: np.copyto(y, x)
    if x.dtype.name in HALF:    # NumPy's float16 multiply converts element by element
        g, x, y = (a.view(np.int16) for a in (g, x, y))     # (0.2 Gelem/s): bits instead
        return lambda: np.bitwise_and(g, x, out=y)
    return lambda: np.multiply(g, x, out=y)


def _numpy(name, direction, g, x, y, threads):
    """The formulas a NumPy user writes, in the array's dtype (Python-float
    constants do not upcast arrays). Single-threaded, with temporaries.
    Parameters at torch's defaults, factors of 1 left out. Piecewise parts are
    masks and max/min, not np.where, which costs 5-10x more on mixed signs.
    float16 ufuncs compute in float32 inside NumPy; bfloat16 runs ml_dtypes'
    loops, where a Python float makes float32 temporaries, and is skipped where
    a loop is missing."""
    fn = _numpy_formula(name, direction, g, x, y)
    return _first_call(fn, "numpy", x.dtype) if x.dtype.name in HALF else fn


def _numpy_formula(name, direction, g, x, y):
    fn = {("relu", "forward"): lambda: np.maximum(x, 0, out=y),
          ("relu", "backward"): lambda: np.multiply(g, x > 0, out=y),
          ("gelu_tanh", "forward"): lambda: _np_gelu_tanh(x, y),
          ("gelu_tanh", "backward"): lambda: _np_gelu_tanh(x, y, g),
          # exp beats scipy's expit here (2.8 vs 6.1 ms per 1e6 float32)
          ("silu", "forward"): lambda: _np_silu(x, y),
          ("silu", "backward"): lambda: _np_silu(x, y, g),
          ("quick_gelu", "forward"): lambda: _np_quick_gelu(x, y),
          ("quick_gelu", "backward"): lambda: _np_quick_gelu(x, y, g),
          ("sigmoid", "forward"): lambda: _np_sigmoid(x, y),
          ("sigmoid", "backward"): lambda: _np_sigmoid(x, y, g),
          ("tanh", "forward"): lambda: np.tanh(x, out=y),
          ("tanh", "backward"): lambda: np.multiply(g, 1 - np.tanh(x) ** 2, out=y),
          ("softplus", "forward"): lambda: np.add(np.maximum(x, 0), _np_log1p_exp_neg_abs(x),
                                                  out=y),
          ("softplus", "backward"): lambda: np.multiply(g, _np_logistic(x), out=y),
          ("log_sigmoid", "forward"): lambda: np.subtract(np.minimum(x, 0),
                                                          _np_log1p_exp_neg_abs(x), out=y),
          ("log_sigmoid", "backward"): lambda: np.multiply(g, _np_logistic(-x), out=y),
          ("mish", "forward"): lambda: _np_mish(x, y),
          ("mish", "backward"): lambda: _np_mish(x, y, g),
          ("elu", "forward"): lambda: _np_elu(x, y),
          ("elu", "backward"): lambda: _np_elu(x, y, g),
          ("selu", "forward"): lambda: _np_selu(x, y),
          ("selu", "backward"): lambda: _np_selu(x, y, g),
          ("celu", "forward"): lambda: _np_elu(x, y),        # at alpha = 1 celu is elu
          ("celu", "backward"): lambda: _np_elu(x, y, g),
          # max(x, 0.01 x) is leaky_relu for any slope in [0, 1]
          ("leaky_relu", "forward"): lambda: np.maximum(x, 0.01 * x, out=y),
          # max(mask, 0.01): 1 or 0.01, with the slope in x's dtype (a bool array and
          # a Python float would give float64)
          ("leaky_relu", "backward"): lambda: np.multiply(
              g, np.maximum(x > 0, x.dtype.type(0.01)), out=y),
          ("relu6", "forward"): lambda: np.clip(x, 0, 6, out=y),
          ("relu6", "backward"): lambda: np.multiply(g, (x > 0) & (x < 6), out=y),
          ("hardtanh", "forward"): lambda: np.clip(x, -1, 1, out=y),
          ("hardtanh", "backward"): lambda: np.multiply(g, (x > -1) & (x < 1), out=y),
          ("hardsigmoid", "forward"): lambda: np.divide(np.clip(x + 3, 0, 6), 6, out=y),
          ("hardsigmoid", "backward"): lambda: np.multiply(g / 6, (x > -3) & (x < 3), out=y),
          ("hardswish", "forward"): lambda: np.multiply(x, np.clip(x + 3, 0, 6) / 6, out=y),
          # torch's sides at the kinks: 0 at -3, 1 at 3
          ("hardswish", "backward"): lambda: np.multiply(
              g, (x / 3 + 0.5) * ((x > -3) & (x < 3)) + (x >= 3), out=y)}.get((name, direction))
    if fn is not None:
        return fn
    if importlib.util.find_spec("scipy") is None:
        raise Unsupported("exact GELU in NumPy needs scipy.special.ndtr")
    from scipy.special import ndtr
    if direction == "forward":
        return lambda: np.multiply(x, ndtr(x), out=y)
    return lambda: np.multiply(g, ndtr(x) + x * (np.exp(-0.5 * x * x) * INV_SQRT_2PI), out=y)


def _np_gelu_tanh(x, y, g=None):
    t = np.tanh(SQRT_2_OVER_PI * (x + TANH_CUBIC * x * x * x))
    if g is None:
        return np.multiply(0.5 * x, 1 + t, out=y)
    slope = 0.5 * x * (1 - t * t) * (SQRT_2_OVER_PI * (1 + 3 * TANH_CUBIC * x * x))
    return np.multiply(g, 0.5 * (1 + t) + slope, out=y)


def _np_logistic(x):
    with np.errstate(over="ignore"):   # exp(-x) = inf for x << 0 gives the right limit
        return 1 / (1 + np.exp(-x))


def _np_silu(x, y, g=None):
    s = _np_logistic(x)
    if g is None:
        return np.multiply(x, s, out=y)
    return np.multiply(g, s * (1 + x * (1 - s)), out=y)


def _np_quick_gelu(x, y, g=None):
    cx = x.dtype.type(QUICK_GELU_SCALE) * x
    s = _np_logistic(cx)
    if g is None:
        return np.multiply(x, s, out=y)
    return np.multiply(g, s * (1 + cx * (1 - s)), out=y)


def _np_sigmoid(x, y, g=None):
    s = _np_logistic(x)
    if g is None:
        return np.copyto(y, s)
    return np.multiply(g, s * (1 - s), out=y)


def _np_log1p_exp_neg_abs(x):
    """log(1 + exp(-|x|)): softplus(x) = max(x, 0) + this and log_sigmoid(x) = min(x, 0)
    - this, without overflow (np.logaddexp(0, x) is the same softplus, 5x slower)."""
    return np.log1p(np.exp(-np.abs(x)))


def _np_mish(x, y, g=None):
    with np.errstate(over="ignore"):   # exp(x) = inf gives tanh(inf) = 1, the right limit
        t = np.tanh(np.log1p(np.exp(x)))
    if g is None:
        return np.multiply(x, t, out=y)
    return np.multiply(g, t + x * _np_logistic(x) * (1 - t * t), out=y)


def _np_elu(x, y, g=None):
    """elu at alpha = 1, which is also celu at alpha = 1: max(x, 0) + expm1(min(x, 0))."""
    if g is None:
        return np.add(np.maximum(x, 0), np.expm1(np.minimum(x, 0)), out=y)
    # exp(min(x, 0)): 1 for x > 0, exp(x) for x <= 0 (torch's side at 0)
    return np.multiply(g, np.exp(np.minimum(x, 0)), out=y)


def _np_selu(x, y, g=None):
    if g is None:
        return np.multiply(SELU_SCALE, np.maximum(x, 0) + SELU_ALPHA * np.expm1(np.minimum(x, 0)),
                           out=y)
    slope = (x > 0) + SELU_ALPHA * np.exp(np.minimum(x, 0)) * (x <= 0)
    return np.multiply(g, SELU_SCALE * slope, out=y)


def _torch_view(a):
    """A tensor on a's memory; torch.from_numpy takes no ml_dtypes bfloat16,
    so it goes through the int16 bits."""
    import torch
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _torch(name, direction, g, x, y, threads):
    """Preallocated out= everywhere; backward through the aten ops autograd runs.
    Calling aten ops from Python adds dispatcher overhead autograd (C++) does not
    pay: it shows at small sizes. float16 and bfloat16 are torch.float16 and
    torch.bfloat16 tensors, the same calls."""
    fn = _torch_call(name, direction, g, x, y)
    return _first_call(fn, "torch", x.dtype) if x.dtype.name in HALF else fn


def _torch_call(name, direction, g, x, y):
    import torch
    aten = torch.ops.aten
    nn = torch._C._nn           # what torch.nn.functional calls, minus its Python wrappers
    tg, tx, ty = (_torch_view(a) for a in (g, x, y))      # views, no copies
    approximate = "tanh" if name == "gelu_tanh" else "none"
    if direction == "forward":
        # F.relu is clamp_min(x, 0) in ATen, which takes out=
        fn = {"relu": lambda: torch.clamp_min(tx, 0, out=ty),
              "silu": lambda: nn.silu(tx, out=ty),
              "sigmoid": lambda: torch.sigmoid(tx, out=ty),
              # as transformers' QuickGELUActivation: two temporaries, then the product
              "quick_gelu": lambda: torch.mul(tx, torch.sigmoid(1.702 * tx), out=ty),
              "gelu": lambda: torch.nn.functional.gelu(tx, approximate=approximate, out=ty),
              "gelu_tanh": lambda: torch.nn.functional.gelu(tx, approximate=approximate, out=ty),
              "tanh": lambda: torch.tanh(tx, out=ty),
              "softplus": lambda: nn.softplus(tx, 1, 20, out=ty),
              "log_sigmoid": lambda: nn.log_sigmoid(tx, out=ty),
              "mish": lambda: nn.mish(tx, out=ty),
              "elu": lambda: nn.elu(tx, 1.0, out=ty),
              # torch.selu, torch.celu and F.relu6 take no out=; ATen computes them as
              # elu(x, alpha, scale, input_scale) and hardtanh(x, 0, 6), which do
              "selu": lambda: nn.elu(tx, SELU_ALPHA, SELU_SCALE, 1.0, out=ty),
              "celu": lambda: nn.elu(tx, 1.0, 1.0, 1.0, out=ty),    # input_scale = 1/alpha
              "leaky_relu": lambda: nn.leaky_relu(tx, 0.01, out=ty),
              "relu6": lambda: nn.hardtanh(tx, 0.0, 6.0, out=ty),
              "hardtanh": lambda: nn.hardtanh(tx, -1.0, 1.0, out=ty),
              "hardsigmoid": lambda: nn.hardsigmoid(tx, out=ty),
              "hardswish": lambda: nn.hardswish(tx, out=ty)}.get(name)
        if fn is None:
            raise Unsupported(f"no torch form of {name} here")
        return fn
    # autograd saves the forward's output for these and runs the backward on it
    if name == "sigmoid":
        ts = torch.sigmoid(tx)
        return lambda: aten.sigmoid_backward.grad_input(tg, ts, grad_input=ty)
    if name == "tanh":
        tt = torch.tanh(tx)
        return lambda: aten.tanh_backward.grad_input(tg, tt, grad_input=ty)
    if name == "quick_gelu":    # autograd's steps through x * sigmoid(1.702 x)
        def quick_gelu_backward():
            cx = 1.702 * tx
            s = torch.sigmoid(cx)
            ds = aten.sigmoid_backward(tg * tx, s)
            return torch.add(tg * s, ds, alpha=1.702, out=ty)
        return quick_gelu_backward
    if name == "log_sigmoid":   # the CPU kernel reads exp(-|x|) from the forward's buffer
        buffer = aten.log_sigmoid_forward(tx)[1]
        return lambda: aten.log_sigmoid_backward.grad_input(tg, tx, buffer, grad_input=ty)
    if name == "mish":   # no out= overload: each call allocates, as autograd's does
        ty.copy_(aten.mish_backward(tg, tx))    # out holds this peer's answer, like the others'
        return lambda: aten.mish_backward(tg, tx)
    # elu_backward(g, alpha, scale, input_scale, is_result, x): selu and celu are elu
    # in ATen, so autograd runs this with their coefficients
    fn = {"relu": lambda: aten.threshold_backward.grad_input(tg, tx, 0, grad_input=ty),
          "silu": lambda: aten.silu_backward.grad_input(tg, tx, grad_input=ty),
          "gelu": lambda: aten.gelu_backward.grad_input(tg, tx, approximate=approximate,
                                                        grad_input=ty),
          "gelu_tanh": lambda: aten.gelu_backward.grad_input(tg, tx, approximate=approximate,
                                                             grad_input=ty),
          "softplus": lambda: aten.softplus_backward.grad_input(tg, tx, 1.0, 20.0, grad_input=ty),
          "elu": lambda: aten.elu_backward.grad_input(tg, 1.0, 1.0, 1.0, False, tx, grad_input=ty),
          "selu": lambda: aten.elu_backward.grad_input(tg, SELU_ALPHA, SELU_SCALE, 1.0, False, tx,
                                                       grad_input=ty),
          "celu": lambda: aten.elu_backward.grad_input(tg, 1.0, 1.0, 1.0, False, tx, grad_input=ty),
          "leaky_relu": lambda: aten.leaky_relu_backward.grad_input(tg, tx, 0.01, False,
                                                                    grad_input=ty),
          "relu6": lambda: aten.hardtanh_backward.grad_input(tg, tx, 0.0, 6.0, grad_input=ty),
          "hardtanh": lambda: aten.hardtanh_backward.grad_input(tg, tx, -1.0, 1.0, grad_input=ty),
          "hardsigmoid": lambda: aten.hardsigmoid_backward.grad_input(tg, tx, grad_input=ty),
          "hardswish": lambda: aten.hardswish_backward.out(tg, tx, out=ty)}.get(name)
    if fn is None:
        raise Unsupported(f"no torch form of {name} here")
    return fn


# numexpr types float literals as double: constants go in as dtype scalars.
# Its minimum and maximum compute in double too: clamps are written with where.
_NUMEXPR = {
    ("relu", "forward"): "where(x > 0, x, 0)",
    ("relu", "backward"): "where(x > 0, g, 0)",
    ("gelu_tanh", "forward"): "x * (1 + tanh(c * (x + a * x * x * x))) / 2",
    ("gelu_tanh", "backward"): "g * ((1 + tanh(c * (x + a * x * x * x))) / 2"
                               " + x / 2 * (1 - tanh(c * (x + a * x * x * x)) ** 2)"
                               " * c * (1 + 3 * a * x * x))",
    ("silu", "forward"): "x / (1 + exp(-x))",
    ("silu", "backward"): "g / (1 + exp(-x)) * (1 + x * (1 - 1 / (1 + exp(-x))))",
    ("quick_gelu", "forward"): "x / (1 + exp(-q * x))",
    ("quick_gelu", "backward"): "g / (1 + exp(-q * x)) * (1 + q * x * (1 - 1 / (1 + exp(-q * x))))",
    ("sigmoid", "forward"): "1 / (1 + exp(-x))",
    ("sigmoid", "backward"): "g / (1 + exp(-x)) * (1 - 1 / (1 + exp(-x)))",
    ("tanh", "forward"): "tanh(x)",
    ("tanh", "backward"): "g * (1 - tanh(x) ** 2)",
    # torch's threshold keeps exp(x) from overflowing
    ("softplus", "forward"): "where(x > 20, x, log1p(exp(x)))",
    ("softplus", "backward"): "where(x > 20, g, g / (1 + exp(-x)))",
    # min(x, 0) - log(1 + exp(-|x|)): no overflow, as in torch's kernel
    ("log_sigmoid", "forward"): "where(x < 0, x, 0) - log1p(exp(-abs(x)))",
    ("log_sigmoid", "backward"): "g / (1 + exp(x))",
    ("mish", "forward"): "x * tanh(log1p(exp(x)))",
    ("mish", "backward"): "g * (tanh(log1p(exp(x)))"
                          " + x / (1 + exp(-x)) * (1 - tanh(log1p(exp(x))) ** 2))",
    ("elu", "forward"): "where(x > 0, x, expm1(x))",
    ("elu", "backward"): "where(x > 0, g, g * exp(x))",
    ("selu", "forward"): "where(x > 0, scale * x, scale_alpha * expm1(x))",
    ("selu", "backward"): "where(x > 0, g * scale, g * scale_alpha * exp(x))",
    ("celu", "forward"): "where(x > 0, x, expm1(x))",      # at alpha = 1 celu is elu
    ("celu", "backward"): "where(x > 0, g, g * exp(x))",
    ("leaky_relu", "forward"): "where(x > 0, x, slope * x)",
    ("leaky_relu", "backward"): "where(x > 0, g, slope * g)",
    ("relu6", "forward"): "where(x < 0, 0, where(x > 6, 6, x))",
    ("relu6", "backward"): "where((x > 0) & (x < 6), g, 0)",
    ("hardtanh", "forward"): "where(x < -1, -1, where(x > 1, 1, x))",
    ("hardtanh", "backward"): "where((x > -1) & (x < 1), g, 0)",
    ("hardsigmoid", "forward"): "where(x < -3, 0, where(x > 3, 1, (x + 3) / 6))",
    ("hardsigmoid", "backward"): "where((x > -3) & (x < 3), g / 6, 0)",
    ("hardswish", "forward"): "where(x < -3, 0, where(x > 3, x, x * (x + 3) / 6))",
    # torch's sides at the kinks: 0 at -3, 1 at 3
    ("hardswish", "backward"): "where(x <= -3, 0, where(x >= 3, g, g * (2 * x + 3) / 6))",
}


def _numexpr(name, direction, g, x, y, threads):
    import numexpr as ne
    if x.dtype.name in HALF:
        raise Unsupported(f"numexpr has no {x.dtype}")
    expr = _NUMEXPR.get((name, direction))
    if expr is None:
        raise Unsupported("numexpr has no erf")
    constants = {"c": SQRT_2_OVER_PI, "a": TANH_CUBIC, "slope": 0.01, "scale": SELU_SCALE, "q": QUICK_GELU_SCALE,
                 "scale_alpha": SELU_SCALE * SELU_ALPHA}
    names = {"x": x, "g": g, **{k: x.dtype.type(v) for k, v in constants.items()}}
    # casting="no": fail rather than time a float64 evaluation of float32 data
    return lambda: ne.evaluate(expr, local_dict=names, out=y, casting="no")


def _onnx_model(name, direction, dtype):
    from onnx import helper, numpy_helper
    nodes, consts = [], []

    def op(kind, *inputs, **attrs):
        nodes.append(helper.make_node(kind, list(inputs), [f"t{len(nodes)}"], **attrs))
        return nodes[-1].output[0]

    def c(value):
        consts.append(numpy_helper.from_array(np.array(value, dtype), f"c{len(consts)}"))
        return consts[-1].name

    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    def mask(condition):    # 1 where true, else 0, in the data's type
        return op("Cast", condition, to=elem)

    x, g = "x", "g"
    if direction == "forward":
        _onnx_forward(name, op, c, x)
    else:
        _onnx_backward(name, op, c, mask, g, x)
    nodes[-1].output[0] = "y"
    inputs = [x] if direction == "forward" else [g, x]
    graph = helper.make_graph(nodes, f"{name}_{direction}",
                              [helper.make_tensor_value_info(i, elem, ["n"]) for i in inputs],
                              [helper.make_tensor_value_info("y", elem, ["n"])], consts)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9    # what onnxruntime >= 1.16 reads, whatever onnx writes by default
    return model, inputs


def _onnx_forward(name, op, c, x):
    """The ONNX operator of each function at torch's default parameters, added with
    op(); c() makes constants."""
    if name == "relu":
        op("Relu", x)
    elif name == "silu":
        op("Mul", x, op("Sigmoid", x))
    elif name == "quick_gelu":
        op("Mul", x, op("Sigmoid", op("Mul", c(QUICK_GELU_SCALE), x)))
    elif name == "sigmoid":
        op("Sigmoid", x)
    elif name in ("gelu", "gelu_tanh"):
        op("Gelu", x, approximate="tanh" if name == "gelu_tanh" else "none")
    elif name == "tanh":
        op("Tanh", x)
    elif name == "softplus":     # log(1 + exp(x)), without torch's threshold (20)
        op("Softplus", x)
    elif name == "log_sigmoid":
        op("Neg", op("Softplus", op("Neg", x)))
    elif name == "mish":
        op("Mish", x)
    elif name == "elu":
        op("Elu", x, alpha=1.0)
    elif name == "selu":
        op("Selu", x, alpha=SELU_ALPHA, gamma=SELU_SCALE)
    elif name == "celu":
        op("Celu", x, alpha=1.0)
    elif name == "leaky_relu":
        op("LeakyRelu", x, alpha=0.01)
    elif name == "relu6":
        op("Clip", x, c(0), c(6))
    elif name == "hardtanh":
        op("Clip", x, c(-1), c(1))
    elif name == "hardsigmoid":
        op("HardSigmoid", x, alpha=1 / 6, beta=0.5)
    elif name == "hardswish":
        op("HardSwish", x)
    else:
        raise Unsupported(f"no ONNX graph of {name} here")


def _onnx_backward(name, op, c, mask, g, x):
    """grad_output times the derivative in elementwise ONNX ops, on torch's sides
    of the kinks. Piecewise slopes are mask() products: onnxruntime's Where costs
    10-20x more (1e5 float32 leaky_relu backward: 0.14 vs 2.2 Gelem/s)."""
    if name == "relu":
        op("Where", op("Greater", x, c(0)), g, c(0))
    elif name == "silu":
        s = op("Sigmoid", x)
        op("Mul", g, op("Mul", s, op("Add", c(1), op("Mul", x, op("Sub", c(1), s)))))
    elif name == "quick_gelu":
        cx = op("Mul", c(QUICK_GELU_SCALE), x)
        s = op("Sigmoid", cx)
        op("Mul", g, op("Mul", s, op("Add", c(1), op("Mul", cx, op("Sub", c(1), s)))))
    elif name == "sigmoid":
        s = op("Sigmoid", x)
        op("Mul", g, op("Mul", s, op("Sub", c(1), s)))
    elif name == "gelu":
        cdf = op("Mul", c(0.5), op("Add", c(1), op("Erf", op("Mul", x, c(INV_SQRT_2)))))
        pdf = op("Mul", c(INV_SQRT_2PI), op("Exp", op("Mul", c(-0.5), op("Mul", x, x))))
        op("Mul", g, op("Add", cdf, op("Mul", x, pdf)))
    elif name == "gelu_tanh":
        x2 = op("Mul", x, x)
        u = op("Mul", x, op("Add", c(1), op("Mul", c(TANH_CUBIC), x2)))
        t = op("Tanh", op("Mul", c(SQRT_2_OVER_PI), u))
        gate = op("Mul", c(0.5), op("Add", c(1), t))
        inner = op("Mul", c(SQRT_2_OVER_PI), op("Add", c(1), op("Mul", c(3 * TANH_CUBIC), x2)))
        slope = op("Mul", op("Mul", op("Mul", c(0.5), x), op("Sub", c(1), op("Mul", t, t))), inner)
        op("Mul", g, op("Add", gate, slope))
    elif name == "tanh":
        t = op("Tanh", x)
        op("Mul", g, op("Sub", c(1), op("Mul", t, t)))
    elif name == "softplus":     # σ(x), the forward's derivative: no threshold either
        op("Mul", g, op("Sigmoid", x))
    elif name == "log_sigmoid":
        op("Mul", g, op("Sigmoid", op("Neg", x)))
    elif name == "mish":
        t = op("Tanh", op("Softplus", x))
        slope = op("Mul", op("Mul", x, op("Sigmoid", x)), op("Sub", c(1), op("Mul", t, t)))
        op("Mul", g, op("Add", t, slope))
    elif name in ("elu", "celu"):    # at alpha = 1 celu is elu
        # exp(min(x, 0)): 1 for x > 0, exp(x) for x <= 0 (torch's side at 0)
        op("Mul", g, op("Exp", op("Min", x, c(0))))
    elif name == "selu":
        negative = op("Mul", c(SELU_SCALE * SELU_ALPHA), op("Exp", op("Min", x, c(0))))
        op("Mul", g, op("Add", op("Mul", c(SELU_SCALE), mask(op("Greater", x, c(0)))),
                        op("Mul", negative, mask(op("LessOrEqual", x, c(0))))))
    elif name == "leaky_relu":   # max(mask, 0.01): 1 or 0.01
        op("Mul", g, op("Max", mask(op("Greater", x, c(0))), c(0.01)))
    elif name in ("relu6", "hardtanh"):
        low, high = (0, 6) if name == "relu6" else (-1, 1)
        op("Mul", g, mask(op("And", op("Greater", x, c(low)), op("Less", x, c(high)))))
    elif name == "hardsigmoid":
        op("Mul", op("Mul", g, c(1 / 6)),
           mask(op("And", op("Greater", x, c(-3)), op("Less", x, c(3)))))
    elif name == "hardswish":    # torch's sides at the kinks: 0 at -3, 1 at 3
        inside = mask(op("And", op("Greater", x, c(-3)), op("Less", x, c(3))))
        slope = op("Mul", op("Add", op("Div", x, c(3)), c(0.5)), inside)
        op("Mul", g, op("Add", slope, mask(op("GreaterOrEqual", x, c(3)))))
    else:
        raise Unsupported(f"no ONNX graph of {name} here")


def _onnxruntime(name, direction, g, x, y, threads):
    import onnxruntime as ort
    # float16: where the CPU provider lacks a kernel, onnxruntime's session wraps
    # the node in Casts to float32 and back, which is what its users get
    if x.dtype.name == "bfloat16":
        raise Unsupported("onnxruntime's CPU provider lacks bfloat16 kernels for these ops "
                          "(Relu, Sigmoid, Tanh, Mul, Exp ...)")
    model, inputs = _onnx_model(name, direction, x.dtype)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # idle pool threads would otherwise spin and steal the next timed call's cores
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        session = ort.InferenceSession(model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
    except Exception as exc:     # onnxruntime raises its own NotImplemented type
        if "NOT_IMPLEMENTED" in str(exc):    # e.g. "... implementation for Erf(13) node ..."
            op = re.search(r"implementation for (\w+)", str(exc))
            raise Unsupported(f"onnxruntime has no {x.dtype} {op[1] if op else ''} kernel") from None
        # ONNX itself types some operators float32-only, e.g. "Type 'tensor(double)' of
        # input parameter (x) of operator (Celu) in node () is invalid"
        op = re.search(r"Type 'tensor\(\w+\)' of input parameter .* of operator \((\w+)\)",
                       str(exc))
        if op:
            raise Unsupported(f"ONNX's {op[1]} takes no {x.dtype}") from None
        raise
    binding = session.io_binding()
    for input_name, array in zip(inputs, [x] if direction == "forward" else [g, x]):
        binding.bind_cpu_input(input_name, array)
    binding.bind_output("y", "cpu", 0, y.dtype, y.shape, y.ctypes.data)
    fn = lambda: session.run_with_iobinding(binding)      # noqa: E731
    if x.dtype.name in HALF:    # onnxruntime raises its own exception types
        return _first_call(fn, "onnxruntime", x.dtype, errors=Exception)
    return fn


# jax: jax.nn's functions under jax.jit, backward through jax.vjp (what
# jax.grad runs). XLA sizes jax's CPU pool once, when its client starts, so
# jax runs at that one thread count and is Unsupported at the others. jax
# cannot write into y: every call allocates its result, which is part of what
# a jax user pays and so stays in the timed call. Converting that result to
# NumPy does not: it is the caller's choice, not the activation's cost.
# float16 and bfloat16 (ml_dtypes', which jax's is) arrays become jnp.float16
# and jnp.bfloat16 device arrays.

def jax_pool_threads():
    """Threads in jax's CPU pool: PJRT_NPROC, else NPROC, else the usable CPUs
    (DefaultThreadPoolSize in XLA's xla/pjrt/utils.cc)."""
    for name in ("PJRT_NPROC", "NPROC"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


@lru_cache(maxsize=1)
def _start_jax():
    """Set jax up once, before its CPU client starts (at first use, not import).

    One thread unless the environment already chose. If jax came in before
    this ran, its client may have started: it is left be, and
    jax_pool_threads() reads what it started with."""
    if "jax" not in sys.modules and "PJRT_NPROC" not in os.environ and "NPROC" not in os.environ:
        os.environ["PJRT_NPROC"] = "1"
    import jax
    # Run on the calling thread, as every other implementation does. Async
    # dispatch hands each call to a pool thread and back, which a pipelined
    # jax program hides but a call synced every time pays: a 1e3-element
    # tanh-GELU took 8-9 µs inline and 8-90 µs async here (55-90 µs with
    # PJRT_NPROC=1).
    if "jax_cpu_enable_async_dispatch" in jax.config.values:
        jax.config.update("jax_cpu_enable_async_dispatch", False)
    jax.config.update("jax_enable_x64", True)   # else float64 inputs silently become float32


@lru_cache(maxsize=None)     # one jitted function per case; jax caches its compiles per shape
def _jax_jitted(name, direction):
    import jax
    import jax.numpy as jnp
    # jax.nn's softplus (and log_sigmoid, mish) has no threshold: logaddexp needs none.
    # Its gradients take the other side of torch's at leaky_relu's 0 and hard_tanh's ±1.
    f = {"relu": jax.nn.relu, "gelu": lambda x: jax.nn.gelu(x, approximate=False),
         "gelu_tanh": lambda x: jax.nn.gelu(x, approximate=True), "silu": jax.nn.silu,
         "quick_gelu": lambda x: x * jax.nn.sigmoid(1.702 * x),
         "sigmoid": jax.nn.sigmoid, "tanh": jnp.tanh, "softplus": jax.nn.softplus,
         "log_sigmoid": jax.nn.log_sigmoid,
         "mish": getattr(jax.nn, "mish", None),      # not in older jax
         "elu": jax.nn.elu, "selu": jax.nn.selu, "celu": jax.nn.celu,
         "leaky_relu": jax.nn.leaky_relu, "relu6": jax.nn.relu6, "hardtanh": jax.nn.hard_tanh,
         "hardsigmoid": jax.nn.hard_sigmoid, "hardswish": jax.nn.hard_swish}.get(name)
    if f is None:
        raise Unsupported(f"jax.nn has no {name}")
    if direction == "forward":
        return jax.jit(f)
    return jax.jit(lambda g, x: jax.vjp(f, x)[1](g)[0])


def _jax(name, direction, g, x, y, threads):
    import jax
    pool = jax_pool_threads()
    if threads != pool:
        raise Unsupported(f"jax's CPU pool has {pool} thread(s), fixed when it started "
                          "(PJRT_NPROC)")
    fn = _jax_jitted(name, direction)
    args = [jax.device_put(a) for a in ([x] if direction == "forward" else [g, x])]
    result = fn(*args)                          # compiles here, outside any timing
    if result.dtype != x.dtype:
        raise RuntimeError(f"jax computed {name} {direction} in {result.dtype}, not {x.dtype}")
    np.copyto(y, np.asarray(result))            # out holds this peer's answer, like the others'
    # block_until_ready: a no-op inline, and a sync if jax started with async dispatch
    return lambda: fn(*args).block_until_ready()


@dataclass(frozen=True)
class Impl:
    build: Callable
    kind: str                 # "fastact", "peer" or "memory"
    modules: tuple = ()       # what must be importable
    start: Optional[Callable] = None    # runs before the modules are imported


IMPLS = {
    "fastact": Impl(_fastact, "fastact"),
    "fastact-accurate": Impl(_fastact_accurate, "fastact"),    # precision="accurate"
    "numpy": Impl(_numpy, "peer"),
    "torch": Impl(_torch, "peer", ("torch",)),
    "numexpr": Impl(_numexpr, "peer", ("numexpr",)),
    "onnxruntime": Impl(_onnxruntime, "peer", ("onnxruntime", "onnx")),
    "jax": Impl(_jax, "peer", ("jax", "jaxlib"), _start_jax),
    "memory": Impl(_memory, "memory"),
}


def available(impl):
    return all(importlib.util.find_spec(m) is not None for m in IMPLS[impl].modules)


def load(impl):
    """Import an implementation's modules, after its start hook (jax: set up
    before its client starts)."""
    if IMPLS[impl].start is not None:
        IMPLS[impl].start()
    for module in IMPLS[impl].modules:
        importlib.import_module(module)


def version(impl):
    """What was timed, e.g. "numpy 2.4.6 scipy 1.17.1" (scipy gives numpy its exact GELU)."""
    load(impl)
    modules = {"fastact": ["fastact"], "memory": ["numpy"],
               "numpy": ["numpy"] + ["scipy"] * bool(importlib.util.find_spec("scipy"))}
    return " ".join(f"{m} {importlib.import_module(m).__version__}"
                    for m in modules.get(impl, IMPLS[impl].modules))


def build(impl, name, direction, g, x, y, threads):
    """The timed callable, or Unsupported; imports the peer (so using_threads sees it)."""
    load(impl)
    if direction == "from_output":
        return _from_output(impl, name, g, x, y, threads)
    return IMPLS[impl].build(name, direction, g, x, y, threads)


def _from_output(impl, name, g, x, y, threads):
    """g·f'(x) computed from the forward's output s = f(x), for sigmoid and
    tanh: fastact's *_backward_from_output, torch's backward (the aten op
    autograd runs on the saved output, as in the "backward" rows), NumPy's
    formula on s, and the memory floor of a backward."""
    if name not in FROM_OUTPUT:
        raise Unsupported(f"{name} has no derivative from its output here")
    if impl in ("torch", "memory"):
        return IMPLS[impl].build(name, "backward", g, x, y, threads)
    if impl not in ("fastact", "numpy"):
        raise Unsupported(f"{impl}: no derivative from the output here")
    saved = getattr(fa, name)(x)
    if impl == "fastact":
        fn = getattr(fa, f"{name}_backward_from_output")
        return lambda: fn(g, saved, out=y)
    if name == "sigmoid":
        fn = lambda: np.multiply(g, saved * (1 - saved), out=y)
    else:
        fn = lambda: np.multiply(g, 1 - saved * saved, out=y)
    return _first_call(fn, "numpy", x.dtype) if x.dtype.name in HALF else fn


@contextmanager
def using_threads(n):
    """n threads for fastact and every imported peer with a process-wide pool."""
    restore = [(fa.set_num_threads, fa.set_num_threads(n))]
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        restore.append((torch.set_num_threads, torch.get_num_threads()))
        torch.set_num_threads(n)
    if "numexpr" in sys.modules:
        ne = sys.modules["numexpr"]
        restore.append((ne.set_num_threads, ne.set_num_threads(n)))
    try:
        yield n
    finally:
        for setter, previous in restore:
            setter(previous)
