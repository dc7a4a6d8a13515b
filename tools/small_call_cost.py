#!/usr/bin/env python3
"""Fixed cost of a small call: each public function and its ufunc object
against np.negative on the same array, in one interleaved run.

A call on 100 float32 elements is almost all fixed cost (argument parsing,
dispatch, NumPy's ufunc machinery). This times, per function, the default
call `fa.f(x)`, the call with `out=`, the ufunc `fastact.ufuncs.f(x, out=y)`
and the backward `fa.f_backward(g, x, out=y)`, each interleaved with
`np.negative(x, out=y)` (and, for the backward, `np.add(g, x, out=y)`, the
two-operand ufunc of the same shape), and prints the ratios of the medians.

    python tools/small_call_cost.py [--size 100] [--repeat 41]
"""
import argparse
import time
from functools import partial

import numpy as np

import fastact as fa
from fastact._registry import ACTIVATIONS


def unwrapped(fn):
    """fa.gelu(x, approximate="tanh") as a user writes it, not through the registry's functools.partial."""
    if not isinstance(fn, partial):
        return fn
    inner, keywords = fn.func, fn.keywords
    return lambda *args, **kw: inner(*args, **keywords, **kw)


def per_call_ns(fn, calls):
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - start) / calls


def interleaved_ratio(fn, baseline, repeat, calls=2000):
    """Median of fn's time over the median of baseline's, samples interleaved."""
    fn(), baseline()
    ours, theirs = [], []
    for _ in range(repeat):
        ours.append(per_call_ns(fn, calls))
        theirs.append(per_call_ns(baseline, calls))
    return float(np.median(ours)) / float(np.median(theirs)), float(np.median(ours)), float(np.median(theirs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=41)
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args()
    dtype = np.dtype(args.dtype)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(args.size) * 3).astype(dtype)
    g = rng.standard_normal(args.size).astype(dtype)
    y = np.empty_like(x)

    def negative():
        np.negative(x, out=y)

    def add():
        np.add(g, x, out=y)

    print(f"{fa.isa()}, {args.size} {dtype} elements, 1 thread; time per call over np.negative(x, out=y)'s"
          " (backward: over np.add(g, x, out=y)'s); median of interleaved samples")
    print(f"np.negative(x, out=y): {interleaved_ratio(negative, negative, 9)[1]:.0f} ns per call")
    print("| function | fa.f(x) | fa.f(x, out=y) | ufuncs.f(x, out=y) | fa.f_backward(g, x, out=y) |")
    print("|---|---:|---:|---:|---:|")
    worst = {"call": 0.0, "ufunc": 0.0}
    for name, act in ACTIVATIONS.items():
        forward, backward = unwrapped(act.forward), unwrapped(act.backward)
        ufunc, params = getattr(fa.ufuncs, act.ufunc_name("forward")), act.params  # the ufuncs take parameters as inputs
        cells = [
            interleaved_ratio(lambda: forward(x), negative, args.repeat)[0],
            interleaved_ratio(lambda: forward(x, out=y), negative, args.repeat)[0],
            interleaved_ratio(lambda: ufunc(x, *params, out=y), negative, args.repeat)[0],
            interleaved_ratio(lambda: backward(g, x, out=y), add, args.repeat)[0],
        ]
        worst["call"] = max(worst["call"], cells[0], cells[1], cells[3])
        worst["ufunc"] = max(worst["ufunc"], cells[2])
        print(f"| {name} | " + " | ".join(f"{c:.2f}×" for c in cells) + " |", flush=True)
    print(f"worst: public calls {worst['call']:.2f}×, ufunc objects {worst['ufunc']:.2f}×")


if __name__ == "__main__":
    main()
