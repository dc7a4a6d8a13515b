#!/usr/bin/env python3
"""Fixed cost of a small call: each public function and its ufunc object
against np.negative on the same array, in one interleaved run.

A call on 100 float32 elements is almost all fixed cost (argument parsing,
dispatch, NumPy's ufunc machinery). This times, per function (softmax and
log_softmax over one row of that length), the default
call `fa.f(x)`, the call with `out=`, the ufunc `fastact.ufuncs.f(x, out=y)`
and the backward `fa.f_backward(g, x, out=y)`, each interleaved with
`np.negative(x, out=y)` (and, for the backward, `np.add(g, x, out=y)`, the
two-operand ufunc of the same shape), and prints the ratios of the medians.
Two more columns compare like with like: a ufunc taking parameters as
operands (`fastact.ufuncs.elu_with_params`) against NumPy's ufunc with as
many float operands, and the generalized ufuncs (softmax) against NumPy's
own, `np.vecdot`.

    python tools/small_call_cost.py [--size 100] [--repeat 41]
"""
import argparse
import timeit
from functools import partial

import numpy as np

import fastact as fa
from fastact._registry import ACTIVATIONS


def unwrapped(fn):
    """The public function and its keywords as source text (", approximate='tanh'"),
    to call as a user writes it rather than through the registry's partial."""
    if not isinstance(fn, partial):
        return fn, ""
    return fn.func, "".join(f", {k}={v!r}" for k, v in fn.keywords.items())


def per_call_ns(timer, calls):
    return timer.timeit(calls) / calls * 1e9


def interleaved_ratio(statement, baseline, names, repeat, calls=2000):
    """Median time of `statement` over the median of `baseline`'s (Python
    source, timed inline by timeit, so no wrapper call is counted), samples
    interleaved."""
    ours, theirs = timeit.Timer(statement, globals=names), timeit.Timer(baseline, globals=names)
    ours.timeit(10), theirs.timeit(10)
    mine, base = [], []
    for _ in range(repeat):
        mine.append(per_call_ns(ours, calls))
        base.append(per_call_ns(theirs, calls))
    return float(np.median(mine)) / float(np.median(base)), float(np.median(mine)), float(np.median(base))


def _clip_ufunc():
    from numpy._core import umath  # np.clip is a Python function over this ufunc
    return umath.clip


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

    negative, add = "np.negative(x, out=y)", "np.add(g, x, out=y)"
    print(f"{fa.isa()}, {args.size} {dtype} elements, 1 thread; time per call over np.negative(x, out=y)'s"
          " (backward: over np.add(g, x, out=y)'s); median of interleaved samples")
    names = {"np": np, "x": x, "g": g, "y": y, "s": np.empty((), dtype), "clip": np.clip if isinstance(np.clip, np.ufunc) else _clip_ufunc()}
    # a ufunc taking parameters as operands pays NumPy's conversion of Python
    # floats: its peer is NumPy's ufunc with as many float operands
    with_scalars = {1: "np.add(x, 1.0, out=y)", 2: "clip(x, -1.0, 1.0, out=y)"}
    print(f"np.negative(x, out=y): {interleaved_ratio(negative, negative, names, 9)[1]:.0f} ns per call")
    print("| function | fa.f(x) | fa.f(x, out=y) | ufuncs.f(x, out=y) | fa.f_backward(g, x, out=y) |"
          " like with like: ufuncs.f_with_params over NumPy's ufunc with as many float operands;"
          " a gufunc over np.vecdot(x, x, out=s) |")
    print("|---|---:|---:|---:|---:|---:|")
    worst = {"call": 0.0, "ufunc": 0.0, "with_params": 0.0, "gufunc": 0.0, "vecdot": 0.0}
    for name, act in ACTIVATIONS.items():
        (forward, keywords), (backward, _) = unwrapped(act.forward), unwrapped(act.backward)
        names.update(f=forward, b=backward, u=getattr(fa.ufuncs, act.ufunc_name("forward", defaults=True)),
                     p=getattr(fa.ufuncs, act.ufunc_name("forward")))
        params = "".join(f", {p!r}" for p in act.params)  # the _with_params ufuncs take them as inputs
        cells = [
            interleaved_ratio(f"f(x{keywords})", negative, names, args.repeat)[0],
            interleaved_ratio(f"f(x, out=y{keywords})", negative, names, args.repeat)[0],
            interleaved_ratio("u(x, out=y)", negative, names, args.repeat)[0],
            interleaved_ratio(f"b(g, x, out=y{keywords})", add, names, args.repeat)[0],
        ]
        if act.params:
            cells.append(interleaved_ratio(f"p(x{params}, out=y)", with_scalars[len(act.params)], names,
                                           args.repeat)[0])
            worst["with_params"] = max(worst["with_params"], cells[-1])
        worst["call"] = max(worst["call"], cells[0], cells[1], cells[3])
        worst["ufunc"] = max(worst["ufunc"], cells[2])
        print(f"| {name} | " + " | ".join(f"{c:.2f}×" for c in cells) + (" |" if act.params else " | |"), flush=True)
    # along an axis: one row of args.size elements; the backward takes the forward's output
    for name in ("softmax", "log_softmax"):
        names.update(f=getattr(fa, name), b=getattr(fa, name + "_backward"), u=getattr(fa.ufuncs, name),
                     out=getattr(fa, name)(x))
        cells = [
            interleaved_ratio("f(x)", negative, names, args.repeat)[0],
            interleaved_ratio("f(x, out=y)", negative, names, args.repeat)[0],
            interleaved_ratio("u(x, out=y)", negative, names, args.repeat)[0],
            interleaved_ratio("b(g, out, out=y)", add, names, args.repeat)[0],
            interleaved_ratio("u(x, out=y)", "np.vecdot(x, x, out=s)", names, args.repeat)[0],
        ]
        worst["call"] = max(worst["call"], cells[0], cells[1], cells[3])
        worst["gufunc"] = max(worst["gufunc"], cells[2])
        worst["vecdot"] = max(worst["vecdot"], cells[4])
        print(f"| {name} | " + " | ".join(f"{c:.2f}×" for c in cells) + " |", flush=True)
    print(f"worst: public calls {worst['call']:.2f}× np.negative; ufunc objects {worst['ufunc']:.2f}×;"
          f" with parameters as operands {worst['with_params']:.2f}× NumPy's ufunc with as many;"
          f" gufuncs {worst['gufunc']:.2f}× np.negative, {worst['vecdot']:.2f}× np.vecdot")


if __name__ == "__main__":
    main()
