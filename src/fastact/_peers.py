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
from fastact._manifest import TIERS
from fastact._registry import ACTIVATIONS

DIRECTIONS = ("forward", "backward")
SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
INV_SQRT_2 = math.sqrt(0.5)
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
TANH_CUBIC = 0.044715

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

def make_inputs(size, dtype, seed=0):
    """(grad_output, x, out): x ~ N(0, 3²) reaches every kernel's tail paths
    without overflowing any peer's formula; out is shared by every implementation."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    x = rng.standard_normal(size, dtype=dtype)
    x *= 3
    g = rng.standard_normal(size, dtype=dtype)
    return g, x, np.empty_like(x)


# ---- implementations ---------------------------------------------------------
# A builder takes (function, direction, g, x, y, threads) and returns a
# zero-argument callable that computes into the preallocated y (jax, which
# cannot, returns a new array); setup (imports, tensor views, sessions,
# compiles) happens there, outside the timed call.

def _fastact(name, direction, g, x, y, threads, precision=TIERS[0]):
    act = ACTIVATIONS[name]   # the public API, wrapper included: what users call
    if precision not in act.op.tiers:
        raise Unsupported(f"{name} has one precision tier (it is exact)")
    fn = act.forward if direction == "forward" else act.backward
    # gelu_tanh is partial(gelu, approximate="tanh") in the registry; users
    # write the keywords, which skips the partial's own call
    approximate = getattr(fn, "keywords", {}).get("approximate")
    fn = getattr(fn, "func", fn)
    keywords = {"out": y} if precision == TIERS[0] else {"out": y, "precision": precision}
    args = ((x,) if direction == "forward" else (g, x)) + ((approximate,) if approximate else ())
    if len(keywords) == 1 and len(args) == 1:
        return lambda: fn(x, out=y)     # the commonest call, without unpacking
    return lambda: fn(*args, **keywords)


def _fastact_fast(name, direction, g, x, y, threads):
    return _fastact(name, direction, g, x, y, threads, precision="fast")


def _memory(name, direction, g, x, y, threads):
    """The floor: the same bytes moved with (next to) no arithmetic. Single-threaded."""
    if direction == "forward":
        return lambda: np.copyto(y, x)
    return lambda: np.multiply(g, x, out=y)


def _numpy(name, direction, g, x, y, threads):
    """The formulas a NumPy user writes, in the array's dtype (Python-float
    constants do not upcast arrays). Single-threaded, with temporaries."""
    fn = {("relu", "forward"): lambda: np.maximum(x, 0, out=y),
          ("relu", "backward"): lambda: np.multiply(g, x > 0, out=y),
          ("gelu_tanh", "forward"): lambda: _np_gelu_tanh(x, y),
          ("gelu_tanh", "backward"): lambda: _np_gelu_tanh(x, y, g),
          # exp beats scipy's expit here (2.8 vs 6.1 ms per 1e6 float32)
          ("silu", "forward"): lambda: _np_silu(x, y),
          ("silu", "backward"): lambda: _np_silu(x, y, g),
          ("sigmoid", "forward"): lambda: _np_sigmoid(x, y),
          ("sigmoid", "backward"): lambda: _np_sigmoid(x, y, g)}.get((name, direction))
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


def _np_silu(x, y, g=None):
    with np.errstate(over="ignore"):   # exp(-x) = inf for x << 0 gives the right limit
        s = 1 / (1 + np.exp(-x))
    if g is None:
        return np.multiply(x, s, out=y)
    return np.multiply(g, s * (1 + x * (1 - s)), out=y)


def _np_sigmoid(x, y, g=None):
    with np.errstate(over="ignore"):   # exp(-x) = inf for x << 0 gives the right limit
        s = 1 / (1 + np.exp(-x))
    if g is None:
        return np.copyto(y, s)
    return np.multiply(g, s * (1 - s), out=y)


def _torch(name, direction, g, x, y, threads):
    """Preallocated out= everywhere; backward through the aten ops autograd runs.
    Calling aten ops from Python adds dispatcher overhead autograd (C++) does not
    pay: it shows at small sizes."""
    import torch
    aten = torch.ops.aten
    tg, tx, ty = (torch.from_numpy(a) for a in (g, x, y))     # views, no copies
    approximate = "tanh" if name == "gelu_tanh" else "none"
    if direction == "forward":
        if name == "relu":   # F.relu is clamp_min(x, 0) in ATen, which takes out=
            return lambda: torch.clamp_min(tx, 0, out=ty)
        if name == "silu":
            return lambda: torch._C._nn.silu(tx, out=ty)    # F.silu minus its wrapper
        if name == "sigmoid":
            return lambda: torch.sigmoid(tx, out=ty)
        if name in ("gelu", "gelu_tanh"):
            return lambda: torch.nn.functional.gelu(tx, approximate=approximate, out=ty)
        raise Unsupported(f"no torch form of {name} here")
    if name == "relu":
        return lambda: aten.threshold_backward.grad_input(tg, tx, 0, grad_input=ty)
    if name == "silu":
        return lambda: aten.silu_backward.grad_input(tg, tx, grad_input=ty)
    if name == "sigmoid":   # autograd saves the forward's output and runs this on it
        ts = torch.sigmoid(tx)
        return lambda: aten.sigmoid_backward.grad_input(tg, ts, grad_input=ty)
    if name in ("gelu", "gelu_tanh"):
        return lambda: aten.gelu_backward.grad_input(tg, tx, approximate=approximate, grad_input=ty)
    raise Unsupported(f"no torch form of {name} here")


# numexpr types float literals as double: constants go in as dtype scalars.
_NUMEXPR = {
    ("relu", "forward"): "where(x > 0, x, 0)",
    ("relu", "backward"): "where(x > 0, g, 0)",
    ("gelu_tanh", "forward"): "x * (1 + tanh(c * (x + a * x * x * x))) / 2",
    ("gelu_tanh", "backward"): "g * ((1 + tanh(c * (x + a * x * x * x))) / 2"
                               " + x / 2 * (1 - tanh(c * (x + a * x * x * x)) ** 2)"
                               " * c * (1 + 3 * a * x * x))",
    ("silu", "forward"): "x / (1 + exp(-x))",
    ("silu", "backward"): "g / (1 + exp(-x)) * (1 + x * (1 - 1 / (1 + exp(-x))))",
    ("sigmoid", "forward"): "1 / (1 + exp(-x))",
    ("sigmoid", "backward"): "g / (1 + exp(-x)) * (1 - 1 / (1 + exp(-x)))",
}


def _numexpr(name, direction, g, x, y, threads):
    import numexpr as ne
    expr = _NUMEXPR.get((name, direction))
    if expr is None:
        raise Unsupported("numexpr has no erf")
    names = {"x": x, "g": g, "c": x.dtype.type(SQRT_2_OVER_PI), "a": x.dtype.type(TANH_CUBIC)}
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

    x, g = "x", "g"
    if name not in ("relu", "silu", "sigmoid", "gelu", "gelu_tanh"):
        raise Unsupported(f"no ONNX graph of {name} here")
    if direction == "forward":
        if name == "relu":
            op("Relu", x)
        elif name == "silu":
            op("Mul", x, op("Sigmoid", x))
        elif name == "sigmoid":
            op("Sigmoid", x)
        else:
            op("Gelu", x, approximate="tanh" if name == "gelu_tanh" else "none")
    elif name == "relu":
        op("Where", op("Greater", x, c(0)), g, c(0))
    elif name == "silu":
        s = op("Sigmoid", x)
        op("Mul", g, op("Mul", s, op("Add", c(1), op("Mul", x, op("Sub", c(1), s)))))
    elif name == "sigmoid":
        s = op("Sigmoid", x)
        op("Mul", g, op("Mul", s, op("Sub", c(1), s)))
    elif name == "gelu":
        cdf = op("Mul", c(0.5), op("Add", c(1), op("Erf", op("Mul", x, c(INV_SQRT_2)))))
        pdf = op("Mul", c(INV_SQRT_2PI), op("Exp", op("Mul", c(-0.5), op("Mul", x, x))))
        op("Mul", g, op("Add", cdf, op("Mul", x, pdf)))
    else:
        x2 = op("Mul", x, x)
        u = op("Mul", x, op("Add", c(1), op("Mul", c(TANH_CUBIC), x2)))
        t = op("Tanh", op("Mul", c(SQRT_2_OVER_PI), u))
        gate = op("Mul", c(0.5), op("Add", c(1), t))
        inner = op("Mul", c(SQRT_2_OVER_PI), op("Add", c(1), op("Mul", c(3 * TANH_CUBIC), x2)))
        slope = op("Mul", op("Mul", op("Mul", c(0.5), x), op("Sub", c(1), op("Mul", t, t))), inner)
        op("Mul", g, op("Add", gate, slope))
    nodes[-1].output[0] = "y"
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    inputs = [x] if direction == "forward" else [g, x]
    graph = helper.make_graph(nodes, f"{name}_{direction}",
                              [helper.make_tensor_value_info(i, elem, ["n"]) for i in inputs],
                              [helper.make_tensor_value_info("y", elem, ["n"])], consts)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9    # what onnxruntime >= 1.16 reads, whatever onnx writes by default
    return model, inputs


def _onnxruntime(name, direction, g, x, y, threads):
    import onnxruntime as ort
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
        raise
    binding = session.io_binding()
    for input_name, array in zip(inputs, [x] if direction == "forward" else [g, x]):
        binding.bind_cpu_input(input_name, array)
    binding.bind_output("y", "cpu", 0, y.dtype, y.shape, y.ctypes.data)
    return lambda: session.run_with_iobinding(binding)


# jax: jax.nn's functions under jax.jit, backward through jax.vjp (what
# jax.grad runs). XLA sizes jax's CPU pool once, when its client starts, so
# jax runs at that one thread count and is Unsupported at the others. jax
# cannot write into y: every call allocates its result, which is part of what
# a jax user pays and so stays in the timed call. Converting that result to
# NumPy does not: it is the caller's choice, not the activation's cost.

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
    f = {"relu": jax.nn.relu, "gelu": lambda x: jax.nn.gelu(x, approximate=False),
         "gelu_tanh": lambda x: jax.nn.gelu(x, approximate=True), "silu": jax.nn.silu,
         "sigmoid": jax.nn.sigmoid}.get(name)
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
    "fastact-fast": Impl(_fastact_fast, "fastact"),    # precision="fast"
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
    return IMPLS[impl].build(name, direction, g, x, y, threads)


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
