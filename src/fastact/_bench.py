"""fastact against its peers: ``python -m fastact bench``, and the layer under benchmarks/.

Every implementation that is timed (fastact, NumPy formulas, PyTorch, the
optional numexpr and onnxruntime, the memory references) is built here, so
the CLI and the pytest-benchmark suite time exactly the same calls. Peers are
imported only when a benchmark asks for them, and importing fastact never
imports this module.
"""
import argparse
import importlib
import importlib.util
import json
import math
import os
import platform
import re
import statistics
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

import numpy as np

import fastact as fa
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


# ---- inputs and facts --------------------------------------------------------

def make_inputs(size, dtype, seed=0):
    """(grad_output, x, out): x ~ N(0, 3²) reaches every kernel's tail paths
    without overflowing any peer's formula; out is shared by every implementation."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    x = rng.standard_normal(size, dtype=dtype)
    x *= 3
    g = rng.standard_normal(size, dtype=dtype)
    return g, x, np.empty_like(x)


def bytes_moved(size, dtype, direction):
    """Bytes one call must read and write: x -> y, or (g, x) -> y."""
    return (2 if direction == "forward" else 3) * size * np.dtype(dtype).itemsize


def size_label(n):
    exponent = round(math.log10(n)) if n > 0 else 0
    return f"1e{exponent}" if 10 ** exponent == n else str(n)


def cpu_model():
    """/proc/cpuinfo's model name, with family/model (VMs often hide the SKU:
    "AMD EPYC", family 25 model 1 is Zen 3)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if not key.strip():
                    break                   # end of the first processor's block
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.processor() or platform.machine()
    return (f"{fields.get('model name', '?')} (family {fields.get('cpu family', '?')}, "
            f"model {fields.get('model', '?')}, {fields.get('cache size', '?')} cache)")


def machine_facts():
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    # other work on the machine is the main source of noise: say how much there was
    load = [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None
    return {"cpu": cpu_model(), "logical_cpus": os.cpu_count(), "usable_cpus": usable,
            "isa": fa.isa(), "available_isas": fa.available_isas(),
            "fastact_threads": fa.get_num_threads(), "fastact": fa.__version__,
            "python": platform.python_version(),
            "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
            "load_average": load,
            "versions": {name: version(name) for name in IMPLS if available(name)}}


# ---- implementations ---------------------------------------------------------
# A builder takes (function, direction, g, x, y, threads) and returns a
# zero-argument callable that computes into the preallocated y; setup
# (imports, tensor views, sessions) happens there, outside the timed call.

def _fastact(name, direction, g, x, y, threads):
    act = ACTIVATIONS[name]   # the public API, wrapper included: what users call
    if direction == "forward":
        return lambda: act.forward(x, out=y)
    return lambda: act.backward(g, x, out=y)


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
          ("silu", "backward"): lambda: _np_silu(x, y, g)}.get((name, direction))
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
        return lambda: torch.nn.functional.gelu(tx, approximate=approximate, out=ty)
    if name == "relu":
        return lambda: aten.threshold_backward.grad_input(tg, tx, 0, grad_input=ty)
    if name == "silu":
        return lambda: aten.silu_backward.grad_input(tg, tx, grad_input=ty)
    return lambda: aten.gelu_backward.grad_input(tg, tx, approximate=approximate, grad_input=ty)


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
    if direction == "forward":
        if name == "relu":
            op("Relu", x)
        elif name == "silu":
            op("Mul", x, op("Sigmoid", x))
        else:
            op("Gelu", x, approximate="tanh" if name == "gelu_tanh" else "none")
    elif name == "relu":
        op("Where", op("Greater", x, c(0)), g, c(0))
    elif name == "silu":
        s = op("Sigmoid", x)
        op("Mul", g, op("Mul", s, op("Add", c(1), op("Mul", x, op("Sub", c(1), s)))))
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


@dataclass(frozen=True)
class Impl:
    build: Callable
    kind: str                 # "fastact", "peer" or "memory"
    modules: tuple = ()       # what must be importable


IMPLS = {
    "fastact": Impl(_fastact, "fastact"),
    "numpy": Impl(_numpy, "peer"),
    "torch": Impl(_torch, "peer", ("torch",)),
    "numexpr": Impl(_numexpr, "peer", ("numexpr",)),
    "onnxruntime": Impl(_onnxruntime, "peer", ("onnxruntime", "onnx")),
    "memory": Impl(_memory, "memory"),
}
# jax is left out: its CPU thread pool is fixed when it starts, so it cannot
# follow the thread-count axis.


def available(impl):
    return all(importlib.util.find_spec(m) is not None for m in IMPLS[impl].modules)


def version(impl):
    """What was timed, e.g. "numpy 2.4.6 scipy 1.17.1" (scipy gives numpy its exact GELU)."""
    modules = {"fastact": ["fastact"], "memory": ["numpy"],
               "numpy": ["numpy"] + ["scipy"] * bool(importlib.util.find_spec("scipy"))}
    return " ".join(f"{m} {importlib.import_module(m).__version__}"
                    for m in modules.get(impl, IMPLS[impl].modules))


def build(impl, name, direction, g, x, y, threads):
    """The timed callable, or Unsupported; imports the peer (so using_threads sees it)."""
    for module in IMPLS[impl].modules:
        importlib.import_module(module)
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


# ---- timing ------------------------------------------------------------------

def time_per_call(fn, loops):
    start = time.perf_counter()
    for _ in range(loops):
        fn()
    return (time.perf_counter() - start) / loops


def calibrate(fn, target):
    """Calls per sample so that one sample lasts about `target` seconds (>= 1).
    A first, untimed call takes the one-off costs (page faults on out, lazy init)."""
    fn()
    loops, elapsed = 1, time_per_call(fn, 1)
    while loops * elapsed < target / 10:
        loops *= 10
        elapsed = time_per_call(fn, loops)
    return max(1, round(target / elapsed))


def time_interleaved(calls, repeat, target):
    """Median seconds per call of each callable. Each round times every callable
    once, in an order rotated each round: they share the machine's noise, and
    none always runs right after the same neighbour."""
    loops = {key: calibrate(fn, target) for key, fn in calls.items()}
    samples = {key: [] for key in calls}
    keys = list(calls)
    for r in range(repeat):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            samples[key].append(time_per_call(calls[key], loops[key]))
    return samples


# ---- the CLI -----------------------------------------------------------------

def _csv(kind, choices=None):
    """An argparse type for comma-separated lists of `kind`, optionally from `choices`."""
    def comma_separated(text):
        try:
            items = [kind(item) for item in text.split(",") if item]
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None
        bad = [i for i in items if choices is not None and i not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(
                f"{text!r}: choose from {', '.join(choices)}" if bad else "empty list")
        return items
    return comma_separated


def _size(text):
    value = float(text)
    if not (value >= 1 and value.is_integer()):
        raise ValueError(f"size {text} is not a positive integer")
    return int(value)


def _positive(text):
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{text} is not an integer >= 1")
    return int(text)


def parse_args(argv):
    top = fa.get_num_threads()
    parser = argparse.ArgumentParser(
        prog="python -m fastact bench",
        description="Time fastact against every installed peer (numpy always; torch, numexpr, "
                    "onnxruntime if importable) and the memory reference, interleaved. "
                    "Markdown on stdout, progress on stderr.")
    parser.add_argument("--sizes", type=_csv(_size), default=[10**3, 10**5, 10**6],
                        help="elements per array (default 1e3,1e5,1e6)")
    parser.add_argument("--dtypes", type=_csv(str, ["float32", "float64"]), default=["float32"],
                        help="float32 and/or float64 (default float32)")
    parser.add_argument("--threads", type=_csv(_positive), default=sorted({1, top}),
                        help=f"thread counts (default {','.join(map(str, sorted({1, top})))})")
    parser.add_argument("--functions", type=_csv(str, list(ACTIVATIONS)), default=list(ACTIVATIONS),
                        help=f"default all: {','.join(ACTIVATIONS)}")
    parser.add_argument("--directions", type=_csv(str, DIRECTIONS), default=list(DIRECTIONS),
                        help="default forward,backward")
    parser.add_argument("--repeat", type=_positive, default=15,
                        help="interleaved samples per implementation; the median is shown "
                             "(default 15)")
    # short samples: on a shared machine fewer of them are cut by a preemption
    parser.add_argument("--sample-time", type=float, default=5e-4, metavar="SECONDS",
                        help="length of one sample: short calls are looped (default 0.0005)")
    parser.add_argument("--json", metavar="PATH", help="also write every sample as JSON")
    parser.add_argument("--plot", metavar="PATH", help="throughput vs size (needs matplotlib)")
    return parser.parse_args(argv)


def run(args, progress=sys.stderr):
    impls = [i for i in IMPLS if available(i)]
    cells = [(dtype, size, name, direction, threads)
             for dtype in args.dtypes for size in args.sizes for name in args.functions
             for direction in args.directions for threads in args.threads]
    records, inputs = [], None
    for done, (dtype, size, name, direction, threads) in enumerate(cells, 1):
        print(f"[{done}/{len(cells)}] {name} {direction} {dtype} {size_label(size)} "
              f"{threads} thread(s)", file=progress, flush=True)
        if inputs is None or inputs[1].size != size or inputs[1].dtype != dtype:
            inputs = None     # free the previous arrays before making the next
            inputs = make_inputs(size, dtype)
        calls = {}
        for impl in impls:
            try:
                calls[impl] = build(impl, name, direction, *inputs, threads)
            except Unsupported:
                pass
        with using_threads(threads):
            samples = time_interleaved(calls, args.repeat, args.sample_time)
        records += [{"function": name, "direction": direction, "dtype": dtype, "size": size,
                     "threads": threads, "impl": impl, "seconds": statistics.median(s),
                     "samples": s} for impl, s in samples.items()]
    return records


def gelem_per_s(record):
    return record["size"] / record["seconds"] / 1e9


def markdown_table(records):
    """One row per cell: Gelem/s of each implementation, and fastact's speedup
    over the fastest peer (peer time / fastact time; > 1: fastact is faster)."""
    impls = [i for i in IMPLS if any(r["impl"] == i for r in records)]
    cells = {}
    for r in records:
        key = (r["function"], r["direction"], r["dtype"], r["size"], r["threads"])
        cells.setdefault(key, {})[r["impl"]] = r
    order = {key: (list(ACTIVATIONS).index(key[0]), DIRECTIONS.index(key[1]), *key[2:])
             for key in cells}     # a function's sizes and thread counts on adjacent rows
    lines = ["| function | direction | dtype | size | threads | "
             + " | ".join(impls) + " | fastact vs fastest peer |",
             "|---|---|---|---:|---:|" + "---:|" * (len(impls) + 1)]
    for (name, direction, dtype, size, threads), row in sorted(cells.items(),
                                                               key=lambda kv: order[kv[0]]):
        peers = [r for i, r in row.items() if IMPLS[i].kind == "peer"]
        best = min(peers, key=lambda r: r["seconds"], default=None)
        ratio = (f"{best['seconds'] / row['fastact']['seconds']:.2f}× {best['impl']}"
                 if best and "fastact" in row else "—")
        values = [f"{gelem_per_s(row[i]):.3f}" if i in row else "—" for i in impls]
        lines.append(f"| {name} | {direction} | {dtype} | {size_label(size)} | {threads} | "
                     + " | ".join(values) + f" | {ratio} |")
    return "\n".join(lines)


def plot_throughput(records, path):
    """Gelem/s vs size: a panel per function (rows) and direction+dtype (columns),
    a colour per implementation, solid for 1 thread and dashed for more."""
    import matplotlib
    matplotlib.use("Agg")     # files only; no display needed
    import matplotlib.pyplot as plt
    functions = [f for f in ACTIVATIONS if any(r["function"] == f for r in records)]
    columns = sorted({(r["direction"], r["dtype"]) for r in records},
                     key=lambda c: (DIRECTIONS.index(c[0]), c[1]))
    impls = [i for i in IMPLS if any(r["impl"] == i for r in records)]
    fig, axes = plt.subplots(len(functions), len(columns), squeeze=False, sharex=True,
                             figsize=(4.5 * len(columns), 3 * len(functions) + 0.8),
                             layout="constrained")
    for (row, name), (col, (direction, dtype)) in (
            (a, b) for a in enumerate(functions) for b in enumerate(columns)):
        ax = axes[row][col]
        for k, impl in enumerate(impls):
            for threads in sorted({r["threads"] for r in records}):
                points = sorted((r["size"], gelem_per_s(r)) for r in records
                                if (r["function"], r["direction"], r["dtype"], r["impl"],
                                    r["threads"]) == (name, direction, dtype, impl, threads))
                if points:   # the memory reference is the ceiling: grey, dotted
                    memory = IMPLS[impl].kind == "memory"
                    ax.plot(*zip(*points), marker="o", color="grey" if memory else f"C{k}",
                            linestyle=":" if memory else "-" if threads == 1 else "--",
                            label=f"{impl} ×{threads}")
        # log y: throughputs span three orders of magnitude
        ax.set(xscale="log", yscale="log", title=f"{name} {direction} {dtype}", ylabel="Gelem/s")
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()   # below the panels, not over one
    fig.legend(handles, labels, loc="outside lower center", ncol=min(6, len(labels)),
               fontsize="small")
    fig.savefig(path, dpi=110)


def main(argv):
    args = parse_args(argv)
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        print("fastact bench: --plot needs matplotlib (pip install matplotlib)", file=sys.stderr)
        return 2    # before timing anything, not after a minute of it
    facts = machine_facts()
    started = time.perf_counter()
    records = run(args)
    elapsed = time.perf_counter() - started
    peers = ", ".join(v for k, v in facts["versions"].items() if IMPLS[k].kind == "peer")
    print(f"fastact {facts['fastact']}, ISA {facts['isa']}, on {facts['cpu']}, "
          f"{facts['usable_cpus']} usable CPUs (load average before the run "
          f"{facts['load_average']}); peers: {peers}")
    print(f"Gelem/s (10^9 elements/s, median of {args.repeat} interleaved samples); "
          f"numpy and memory (np.copyto forward, np.multiply backward) use 1 thread.\n")
    print(markdown_table(records))
    print(f"bench took {elapsed:.1f} s", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": facts, "args": {k: v for k, v in vars(args).items()},
                       "results": records}, f, indent=1)
    if args.plot:
        plot_throughput(records, args.plot)
    return 0
