#!/usr/bin/env python3
"""Measure where a second thread starts paying, per activation (float32 and float64).

For each size, time the call with 1 and with 2 threads, every size split
(a fixed split of 64 elements per thread, not the cost model), median of
many runs, and print the speedup: the curve the cost model in src_c/runtime/threads.c
should follow. --costs prints each forward kernel's cost per element on one
thread instead: the manifest's ns_per_element estimates come from it.
Timings on a shared 2-core machine are noisy: run it twice and read the trend.

    python tools/thread_threshold.py [--repeat 41] [--costs]
"""
import argparse
import time

import numpy as np

import fastact as fa
from fastact import _ext
from fastact._registry import ACTIVATIONS


def median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=41)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--costs", action="store_true", help="ns per element on one thread, 2^16 elements")
    args = parser.parse_args()
    if args.costs:
        fa.set_num_threads(1)
        for name, act in ACTIVATIONS.items():
            row = []
            for dtype in (np.float32, np.float64):
                x = np.random.default_rng(0).normal(0, 3, 1 << 16).astype(dtype)
                out = np.empty_like(x)
                row.append(median_time(lambda: act.forward(x, out=out), args.repeat) * 1e9 / x.size)
            print(f"{name}: ns_per_element=({row[0]:.2g}, {row[1]:.2g})  [{fa.isa()}]")
        return
    sizes = [2**k for k in range(12, 22)]
    print(f"ISA {fa.isa()}; speedup of {args.threads} threads over 1 (median of {args.repeat})")
    print("| function | dtype | " + " | ".join(f"2^{int(np.log2(n))}" for n in sizes) + " |")
    print("|---|---|" + "---|" * len(sizes))
    for name, act in ACTIVATIONS.items():
        for dtype in (np.float32, np.float64):
            _ext.set_thread_threshold(name, 64, np.dtype(dtype).name)  # let every size split
            row = []
            for n in sizes:
                x = np.random.default_rng(0).normal(0, 3, n).astype(dtype)
                out = np.empty_like(x)
                # the split is decided by the size: measure both sides explicitly
                fa.set_num_threads(1)
                one = median_time(lambda: act.forward(x, out=out), args.repeat)
                fa.set_num_threads(args.threads)
                many = median_time(lambda: act.forward(x, out=out), args.repeat)
                row.append(f"{one / many:.2f}")
            print(f"| {name} | {np.dtype(dtype).name} | " + " | ".join(row) + " |", flush=True)
            _ext.set_thread_threshold(name, 0, np.dtype(dtype).name)  # back to the cost model


if __name__ == "__main__":
    main()
