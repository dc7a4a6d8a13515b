"""Timing and the CLI: ``python -m fastact bench``, and the timing layer under benchmarks/.

The implementations timed are built in fastact._peers, so this CLI and the
pytest-benchmark suite time exactly the same calls. Importing fastact never
imports this module.
"""
import argparse
import importlib.util
import json
import math
import os
import platform
import random
import statistics
import sys
import textwrap
import time

import numpy as np

import fastact as fa
from fastact._peers import (DIRECTIONS, DTYPES, FROM_OUTPUT, HALF, IMPLS, Unsupported, available, build,
                            dtype_of, jax_pool_threads, make_inputs, using_threads, version)
from fastact._registry import ACTIVATIONS
from fastact import _peers_rows as rows


# ---- facts -------------------------------------------------------------------

def bytes_moved(size, dtype, direction):
    """Bytes one call must read and write: x -> y, or (g, x) -> y."""
    return (2 if direction == "forward" else 3) * size * dtype_of(dtype).itemsize


def size_label(n):
    exponent = round(math.log10(n)) if n > 0 else 0
    return f"1e{exponent}" if 10 ** exponent == n else str(n)


def cpu_fields():
    """The first processor's block of /proc/cpuinfo as a dict ({} where there is none)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if not key.strip():
                    break                   # end of the first processor's block
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


def cpu_model():
    """/proc/cpuinfo's model name, with family/model (VMs often hide the SKU:
    "AMD EPYC", family 25 model 1 is Zen 3)."""
    fields = cpu_fields()
    if not fields:
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
    once, in an order shuffled each round (seeded: the same orders every run):
    they share the machine's noise, and none always runs right after the same
    neighbour, whose cache state (dirty lines of a 12 MB working set) it would
    otherwise inherit. (A rotation keeps every callable's cyclic neighbour.)"""
    loops = {key: calibrate(fn, target) for key, fn in calls.items()}
    samples = {key: [] for key in calls}
    keys = list(calls)
    order = random.Random(len(keys) * 1000 + repeat)
    for _ in range(repeat):
        order.shuffle(keys)
        for key in keys:
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
    top = min(fa.get_num_threads(), fa._ext.cpus_available())  # the default never oversubscribes
    parser = argparse.ArgumentParser(
        prog="python -m fastact bench",
        description="Time fastact against every installed peer (numpy always; torch, numexpr, "
                    "onnxruntime, jax if importable) and the memory reference, interleaved. "
                    "Markdown on stdout, progress on stderr.")
    parser.add_argument("--sizes", type=_csv(_size), default=[10**3, 10**5, 10**6],
                        help="elements per array (default 1e3,1e5,1e6)")
    parser.add_argument("--dtypes", type=_csv(str, DTYPES), default=["float32"],
                        help="any of float32, float64, float16, bfloat16 (ml_dtypes'; 16-bit "
                             "rows are also compared with float32 and torch) (default float32)")
    parser.add_argument("--threads", type=_csv(_positive), default=sorted({1, top}),
                        help=f"thread counts (default {','.join(map(str, sorted({1, top})))})")
    parser.add_argument("--functions", type=_csv(str, list(ACTIVATIONS)), default=list(ACTIVATIONS),
                        help=f"default all: {','.join(ACTIVATIONS)}")
    parser.add_argument("--directions", type=_csv(str, DIRECTIONS), default=["forward", "backward"],
                        help="default forward,backward; from_output: sigmoid's and tanh's derivative "
                             "from the forward's output, as autograd runs them")
    parser.add_argument("--repeat", type=_positive, default=15,
                        help="interleaved samples per implementation; the median is shown "
                             "(default 15)")
    # short samples: on a shared machine fewer of them are cut by a preemption
    parser.add_argument("--sample-time", type=float, default=5e-4, metavar="SECONDS",
                        help="length of one sample: short calls are looped (default 0.0005)")
    parser.add_argument("--impls", type=_csv(str, list(IMPLS)), default=list(IMPLS),
                        help="implementations to time, when installed (default all)")
    parser.add_argument("--oversubscribe", action="store_true",
                        help="allow --threads above the usable CPUs (marked in the output: such "
                             "numbers measure the scheduler, not the libraries)")
    parser.add_argument("--structured", nargs="?", const=list(rows.FUNCTIONS), default=None,
                        type=_csv(str, list(rows.FUNCTIONS)), metavar="FUNCTIONS",
                        help="instead of the elementwise activations, time the structured functions "
                             "(default all: " + ",".join(rows.FUNCTIONS) + ") on their own shapes: "
                             "softmax/log_softmax over rows of (4096, 1024), (64, 32000), (1, 1e6) and "
                             "axis 0 of (1024, 4096); the gated and bias functions on (N, 4096), "
                             "N = 24, 244, 2441 (~1e5, 1e6, 1e7 elements). --sizes, --dtypes, "
                             "--functions do not apply (float32); --quick: one small shape each. "
                             "Minutes, not seconds")
    parser.add_argument("--quick", action="store_true",
                        help="with --structured: one small shape per function (seconds)")
    parser.add_argument("--isa", choices=fa.available_isas(),
                        help="the kernel set to time (default: the best this CPU runs)")
    parser.add_argument("--wide", action="store_true",
                        help="a column for every implementation (default: fastact's default call, its "
                             "accurate tier and the fastest peer, in 100 columns)")
    parser.add_argument("--json", metavar="PATH", help="also write every sample as JSON")
    parser.add_argument("--plot", metavar="PATH",
                        help="also draw Gelem/s against size, a panel per function, direction and dtype, "
                             "to PATH (PNG or any format matplotlib writes; needs matplotlib)")
    args = parser.parse_args(argv)
    if "bfloat16" in args.dtypes and importlib.util.find_spec("ml_dtypes") is None:
        parser.error("--dtypes bfloat16: NumPy's bfloat16 is ml_dtypes', which is not installed "
                     "(pip install ml_dtypes)")
    cpus = fa._ext.cpus_available()
    args.oversubscribed = [t for t in args.threads if t > cpus]
    if args.oversubscribed and not args.oversubscribe:
        parser.error(f"--threads {','.join(map(str, args.oversubscribed))}: more than the {cpus} CPUs "
                     "this process may use; every library would share those cores, and whichever "
                     "suffers least would look fastest. Use counts <= "
                     f"{cpus}, or --oversubscribe to time it anyway.")
    return args


def oversubscription_warning(args):
    """The loud line for counts above the usable CPUs (None when there are none)."""
    if not args.oversubscribed:
        return None
    return (f"WARNING: OVERSUBSCRIBED: thread counts {','.join(map(str, args.oversubscribed))} exceed the "
            f"{fa._ext.cpus_available()} usable CPUs; those rows time the OS scheduler, not the libraries, "
            "and are no evidence of one being faster than another.")


def run(args, progress=sys.stderr):
    impls = [i for i in IMPLS if available(i) and i in args.impls]
    cells = [(dtype, size, name, direction, threads)
             for dtype in args.dtypes for size in args.sizes for name in args.functions
             for direction in args.directions for threads in args.threads
             if direction != "from_output" or name in FROM_OUTPUT]
    records, inputs = [], None
    for done, (dtype, size, name, direction, threads) in enumerate(cells, 1):
        print(f"[{done}/{len(cells)}] {name} {direction} {dtype} {size_label(size)} "
              f"{threads} thread(s)", file=progress, flush=True)
        if inputs is None or inputs[1].size != size or inputs[1].dtype.name != dtype:
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


def run_structured(args, progress=sys.stderr):
    """Records of the structured functions (fastact._peers_rows), interleaved per case
    and thread count as run() does; "size" is the output's elements."""
    impls = [i for i in rows.IMPLS if rows.available(i) and (i in args.impls or i == "ort-contrib"
                                                             and "onnxruntime" in args.impls)]
    directions = [d for d in args.directions if d != "from_output"]    # elementwise only
    cases = list(rows.cases(args.structured, directions, quick=args.quick))
    records = []
    for done, (name, direction, shape, axis) in enumerate(cases, 1):
        arrays = rows.make_case_inputs(name, direction, shape, axis)
        for threads in args.threads:
            print(f"[{done}/{len(cases)}] {name} {direction} {rows.label(name, shape, axis)} "
                  f"{threads} thread(s)", file=progress, flush=True)
            calls = {}
            for impl in impls:
                try:
                    calls[impl] = rows.build(impl, name, direction, arrays, axis, threads)
                except Unsupported:
                    pass
            with using_threads(threads):
                samples = time_interleaved(calls, args.repeat, args.sample_time)
            records += [{"function": name, "direction": direction, "dtype": "float32",
                         "shape": list(shape), "axis": axis, "size": rows.elements(name, shape),
                         "threads": threads, "impl": impl, "seconds": statistics.median(s),
                         "samples": s} for impl, s in samples.items()]
        del arrays
    return records


def structured_table(records):
    """A row per (function, direction, shape, threads): Gelem/s of each implementation
    and each fastact tier's speedup over the fastest peer (> 1: fastact is faster)."""
    impls = [i for i in rows.IMPLS if any(r["impl"] == i for r in records)]
    ours = [i for i in impls if rows.kind(i) == "fastact"]
    cells = {}
    for r in records:
        key = (r["function"], r["direction"], tuple(r["shape"]), r["axis"], r["threads"])
        cells.setdefault(key, {})[r["impl"]] = r
    lines = ["| function | direction | shape | threads | " + " | ".join(impls) + " | "
             + " | ".join(f"{i} vs fastest peer" for i in ours) + " |",
             "|---|---|---|---:|" + "---:|" * (len(impls) + len(ours))]
    for (name, direction, shape, axis, threads), row in cells.items():
        values = cell_columns(row, impls, ours, lambda i: rows.kind(i) == "peer")
        lines.append(f"| {name} | {direction} | {rows.label(name, shape, axis)} | {threads} | "
                     + " | ".join(values) + " |")
    return "\n".join(lines)


def main_structured(args, facts):
    started = time.perf_counter()
    records = run_structured(args)
    elapsed = time.perf_counter() - started
    versions = {i: facts["versions"][i] for i in facts["versions"] if IMPLS[i].kind == "peer"}
    print(f"fastact {facts['fastact']}, ISA {facts['isa']}, on {facts['cpu']}, "
          f"{facts['usable_cpus']} usable CPUs (load average before the run "
          f"{facts['load_average']}); peers: {', '.join(versions.values())}")
    jax_note = (f"; jax only at {jax_pool_threads()} thread(s) (PJRT_NPROC)" if "jax" in versions else "")
    print(f"Structured functions, float32. Gelem/s = 10^9 output elements/s, median of {args.repeat} "
          f"interleaved samples; numpy and memory (np.copyto of the output's size) use 1 thread{jax_note}. "
          "Peers' compositions: fastact._peers_rows.\n")
    print(structured_table(records))
    print(f"bench took {elapsed:.1f} s", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": facts, "args": {k: v for k, v in vars(args).items()},
                       "structured": records}, f, indent=1)
    return 0


CALL_SIZE = 100   # the small-call cost, compared with np.negative(x, out=y)


def call_costs(args):
    """Microseconds per call of each fastact function on CALL_SIZE elements, 1
    thread, interleaved with np.negative(x, out=y) on the same arrays: a call
    that does almost nothing but pass through the ufunc machinery."""
    rows = []
    for dtype in args.dtypes:
        g, x, y = make_inputs(CALL_SIZE, dtype)
        calls = {"np.negative": lambda: np.negative(x, out=y)}
        for name in args.functions:
            for direction in args.directions:
                if direction != "from_output" or name in FROM_OUTPUT:
                    calls[(name, direction)] = build("fastact", name, direction, g, x, y, 1)
        with using_threads(1):
            samples = time_interleaved(calls, args.repeat, args.sample_time)
        base = statistics.median(samples.pop("np.negative"))
        rows += [{"function": name, "direction": direction, "dtype": dtype, "size": CALL_SIZE,
                  "seconds": statistics.median(s), "np_negative_seconds": base}
                 for (name, direction), s in samples.items()]
    return rows


def call_cost_table(rows):
    lines = [f"| function | direction | dtype | µs per call ({CALL_SIZE} elements) | np.negative µs "
             "| ratio |", "|---|---|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['function']} | {r['direction']} | {r['dtype']} | {r['seconds'] * 1e6:.2f} "
                     f"| {r['np_negative_seconds'] * 1e6:.2f} | {r['seconds'] / r['np_negative_seconds']:.2f} |")
    return "\n".join(lines)


# ---- accuracy beside the speed ------------------------------------------------

ACCURACY_SAMPLE = 1 << 20   # float32 bit patterns: a second or two per function


def float32_sample(count=ACCURACY_SAMPLE):
    """`count` finite float32s spread evenly over the bit patterns (every one of
    2^32 is what tools/accuracy_report.py sweeps; this is its strided cousin)."""
    stride = 2 * 0x7F800000 // count
    k = np.arange(count, dtype=np.uint64) * stride
    bits = np.where(k < 0x7F800000, k, k - 0x7F800000 + 0x80000000)
    return bits.astype(np.uint32).view(np.float32)


def ulps(got, expected, scale):
    """|got - expected| in float32 ULPs of `scale` (never below the subnormal spacing)."""
    unit = np.maximum(np.spacing(np.abs(scale).astype(np.float32)).astype(np.float64), 2.0**-149)
    err = np.abs(got.astype(np.float64) - expected) / unit
    # past the largest float32 by half an ULP or more the right result is ±inf (selu's scale x)
    overflow = np.finfo(np.float32).max * (1 + 2.0**-25)
    err = np.where((np.abs(expected) >= overflow) & (got == np.copysign(np.inf, expected)), 0, err)
    return float(np.nanmax(np.where(np.isnan(err), np.inf, err)))


def accuracy_rows(functions):
    """Worst float32 error of each function's tiers on a strided sample, against
    fastact's float64 references: what the speed buys or costs, in one place.
    None when the references' SciPy is not installed."""
    if importlib.util.find_spec("scipy") is None:
        return None
    from fastact._registry import VARIANTS
    x = float32_sample()
    x64 = x.astype(np.float64)
    ones32, ones = np.ones_like(x), np.ones_like(x64)
    rows = []
    for name in functions:
        act = ACTIVATIONS.get(name)
        if act is None or act.exact:     # the structured functions have no entry here
            continue
        with np.errstate(all="ignore"):
            fwd, bwd = act.ref_forward(x64), act.ref_backward(ones, x64)
            scale = act.ref_backward_scale(x64)
        for tier in sorted(act.op.tiers, key=lambda t: t != act.tier):  # the default first
            v = VARIANTS[act.key if tier == act.tier else f"{name}_{tier}"]
            rows.append({"function": name, "precision": tier, "exact": v.exact,  # correctly rounded
                         "forward": ulps(v.forward(x), fwd, fwd), "forward_bound": v.forward_ulp,
                         "backward": ulps(v.backward(ones32, x), bwd, scale), "backward_bound": v.backward_ulp})
    return rows


def accuracy_table(rows):
    lines = ["| function | precision | forward: worst ULP (bound) | backward: worst ULP of largest term "
             "(bound) |", "|---|---|---:|---:|"]
    for r in rows:
        bounds = [("correctly rounded" if r.get("exact") else f"{r[d + '_bound']:g}") for d in ("forward", "backward")]
        lines.append(f"| {r['function']} | {r['precision']} | {r['forward']:.3f} ({bounds[0]}) "
                     f"| {r['backward']:.3f} ({bounds[1]}) |")
    return "\n".join(lines)


def gelem_per_s(record):
    return record["size"] / record["seconds"] / 1e9


def cell_columns(row, impls, ours, is_peer):
    """One table row's cells: Gelem/s of each implementation, then each of ours
    over the fastest peer (peer time / our time) and that peer's name."""
    peers = [r for i, r in row.items() if is_peer(i)]
    best = min(peers, key=lambda r: r["seconds"], default=None)
    ratios = [f"{best['seconds'] / row[i]['seconds']:.2f}× {best['impl']}" if best and i in row else "—"
              for i in ours]
    return [f"{gelem_per_s(row[i]):.3f}" if i in row else "—" for i in impls] + ratios


def markdown_table(records):
    """One row per cell: Gelem/s of each implementation, and each fastact tier's
    speedup over the fastest peer (peer time / fastact time; > 1: fastact is faster)."""
    impls = [i for i in IMPLS if any(r["impl"] == i for r in records)]
    cells = {}
    for r in records:
        key = (r["function"], r["direction"], r["dtype"], r["size"], r["threads"])
        cells.setdefault(key, {})[r["impl"]] = r
    dtypes = list(dict.fromkeys(r["dtype"] for r in records))     # as --dtypes listed them
    order = {key: (list(ACTIVATIONS).index(key[0]), DIRECTIONS.index(key[1]), dtypes.index(key[2]),
                   *key[3:]) for key in cells}   # a function's sizes and thread counts on adjacent rows
    ours = [i for i in impls if IMPLS[i].kind == "fastact"]
    lines = ["| function | direction | dtype | size | threads | " + " | ".join(impls) + " | "
             + " | ".join(f"{i} vs fastest peer" for i in ours) + " |",
             "|---|---|---|---:|---:|" + "---:|" * (len(impls) + len(ours))]
    for (name, direction, dtype, size, threads), row in sorted(cells.items(),
                                                               key=lambda kv: order[kv[0]]):
        values = cell_columns(row, impls, ours, lambda i: IMPLS[i].kind == "peer")
        lines.append(f"| {name} | {direction} | {dtype} | {size_label(size)} | {threads} | "
                     + " | ".join(values) + " |")
    return "\n".join(lines)


def compact_table(records):
    """One row per cell, in 100 columns: fastact's Gelem/s in each tier, the
    fastest peer's, and each tier's speedup over it (> 1: fastact is faster)."""
    impls = [i for i in IMPLS if any(r["impl"] == i for r in records)]
    ours = [i for i in impls if IMPLS[i].kind == "fastact"]
    cells = {}
    for r in records:
        key = (r["function"], r["direction"], r["dtype"], r["size"], r["threads"])
        cells.setdefault(key, {})[r["impl"]] = r
    dtypes = list(dict.fromkeys(r["dtype"] for r in records))
    order = {key: (list(ACTIVATIONS).index(key[0]), DIRECTIONS.index(key[1]), dtypes.index(key[2]), *key[3:])
             for key in cells}
    short = {"forward": "fwd", "backward": "bwd", "from_output": "from y"}
    tier = {"fastact": "fastact", "fastact-accurate": "accurate"}
    lines = ["| function | dir | dtype | size | thr | " + " | ".join(tier.get(i, i) for i in ours)
             + " | fastest peer | " + " | ".join(f"{tier.get(i, i)} ×" for i in ours) + " |",
             "|---|---|---|---:|---:|" + "---:|" * len(ours) + "---|" + "---:|" * len(ours)]
    for (name, direction, dtype, size, threads), row in sorted(cells.items(), key=lambda kv: order[kv[0]]):
        peers = [r for i, r in row.items() if IMPLS[i].kind == "peer"]
        best = min(peers, key=lambda r: r["seconds"], default=None)
        speeds = [f"{gelem_per_s(row[i]):.3f}" if i in row else "—" for i in ours]
        peer = f"{best['impl']} {gelem_per_s(best):.3f}" if best else "—"
        ratios = [f"{best['seconds'] / row[i]['seconds']:.2f}×" if best and i in row else "—" for i in ours]
        lines.append(f"| {name} | {short.get(direction, direction)} | {dtype} | {size_label(size)} | {threads} | "
                     + " | ".join(speeds) + f" | {peer} | " + " | ".join(ratios) + " |")
    return "\n".join(lines)


def half_table(records):
    """For the 16-bit dtypes timed: a row per (function, direction, size, threads),
    fastact's throughput in each over its float32 throughput (float32 time / 16-bit
    time: > 1, the 16-bit call is faster) and its speedup over torch in the same
    dtype. None when no 16-bit dtype was timed."""
    halves = [d for d in HALF if any(r["dtype"] == d for r in records)]
    if not halves:
        return None
    seconds = {(r["function"], r["direction"], r["size"], r["threads"], r["dtype"], r["impl"]):
               r["seconds"] for r in records}
    keys = sorted({k[:4] for k in seconds},
                  key=lambda k: (list(ACTIVATIONS).index(k[0]), DIRECTIONS.index(k[1]), *k[2:]))

    def speedup(other, ours):     # other's time over ours
        return f"{seconds[other] / seconds[ours]:.2f}×" if other in seconds and ours in seconds else "—"

    lines = ["| function | direction | size | threads | "
             + " | ".join(f"{d} ÷ float32 | {d} vs torch {d}" for d in halves) + " |",
             "|---|---|---:|---:|" + "---:|---:|" * len(halves)]
    for key in keys:
        cells = [c for d in halves for c in (speedup(key + ("float32", "fastact"), key + (d, "fastact")),
                                              speedup(key + (d, "torch"), key + (d, "fastact")))]
        lines.append(f"| {key[0]} | {key[1]} | {size_label(key[2])} | {key[3]} | " + " | ".join(cells) + " |")
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
    warning = oversubscription_warning(args)
    if warning:
        print(warning, file=sys.stderr)
    if args.isa:
        fa.set_isa(args.isa)
    facts = machine_facts()
    if args.structured:
        return main_structured(args, facts)
    started = time.perf_counter()
    records = run(args)
    costs = call_costs(args)
    elapsed = time.perf_counter() - started
    peers = ", ".join(v for k, v in facts["versions"].items() if IMPLS[k].kind == "peer")
    print(textwrap.fill(f"fastact {facts['fastact']}, ISA {facts['isa']}, on {facts['cpu']}, "
                        f"{facts['usable_cpus']} usable CPUs (load average before the run "
                        f"{facts['load_average']}); peers: {peers}", 100))
    jax_note = (f"; jax only at {jax_pool_threads()} (its CPU pool is sized at start-up: "
                "PJRT_NPROC)" if "jax" in facts["versions"] else "")
    half_note = ("; 16-bit memory backward: np.bitwise_and of the int16 bits (NumPy's float16 "
                 "multiply is no floor)" if any(d in HALF for d in args.dtypes) else "")
    legend = ("" if args.wide else " fastest peer: the fastest other library in that row (--wide: every one); "
              "×: its time over fastact's (> 1: fastact is faster).")
    print(textwrap.fill(f"Gelem/s (10^9 elements/s, median of {args.repeat} interleaved samples); "
                        f"numpy and memory (np.copyto forward, np.multiply backward) use 1 thread{jax_note}"
                        f"{half_note}.{legend}", 100) + "\n")
    print(markdown_table(records) if args.wide else compact_table(records))
    halves = half_table(records)
    if halves:
        print("\n" + textwrap.fill("16-bit against float32 and torch: fastact's 16-bit Gelem/s over its "
                                   "float32 Gelem/s (> 1: the 16-bit call is faster; — without float32 in "
                                   "the run), and its speedup over torch in the same dtype (torch's time / "
                                   "fastact's):", 100) + "\n")
        print(halves)
    if warning:
        print(f"\n**{warning}**")
    accuracy = accuracy_rows(args.functions) if "float32" in args.dtypes else None
    if accuracy:
        print("\n" + textwrap.fill(f"Accuracy of what was timed: worst error on {ACCURACY_SAMPLE} float32 "
                                   "inputs spread over every bit pattern, against float64 references (every "
                                   "one of 2^32: tools/accuracy_report.py; the bounds hold over all of "
                                   "them):", 100) + "\n")
        print(accuracy_table(accuracy))
    print("\n" + textwrap.fill(f"Cost of a small call, fastact (wrapper included) against "
                               f"np.negative(x, out=y) on the same {CALL_SIZE} elements (median of "
                               f"{args.repeat} interleaved samples):", 100) + "\n")
    print(call_cost_table(costs))
    print(f"bench took {elapsed:.1f} s", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": facts, "args": {k: v for k, v in vars(args).items()},
                       "results": records, "call_costs": costs, "accuracy": accuracy}, f, indent=1)
    if args.plot:
        plot_throughput(records, args.plot)
    return 0
