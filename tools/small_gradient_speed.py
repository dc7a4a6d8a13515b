#!/usr/bin/env python3
"""Time each 16-bit backward with small gradients against N(0, 1) ones.

Real gradients are small, and in float16 small products are subnormal for
any x: a loop that sends those lanes to a slow path (a tie scan that marks
every subnormal result, say) runs many times slower there, which a
benchmark drawing g from N(0, 1) never shows. This prints, per function,
dtype and gradient scale, the call's speed as a fraction of its speed with
g ~ N(0, 1) (x ~ N(0, 9), as `python -m fastact bench`); a value far
below 1 is a slow path to look at. Minimum of --repeat samples of 10
calls each.

    python tools/small_gradient_speed.py [--size 1e5] [--scales 1e-3,1e-5]
"""
import argparse
import time

import numpy as np

import fastact as fa
from fastact._peers import dtype_of
from fastact._registry import ACTIVATIONS


def best_time(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(10):
            fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=float, default=1e5)
    parser.add_argument("--scales", default="1e-3,1e-5", help="gradient scales to compare with 1")
    parser.add_argument("--dtypes", default="float16,bfloat16")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    fa.set_num_threads(args.threads)
    scales = [float(s) for s in args.scales.split(",")]
    rng = np.random.default_rng(0)
    n = int(args.size)
    x32 = rng.standard_normal(n, dtype=np.float32) * 3
    g32 = rng.standard_normal(n, dtype=np.float32)
    print(f"{fa.isa()}, {n} elements, {args.threads} thread(s): speed with g scaled, over the speed with g ~ N(0, 1)")
    print("| dtype | function | " + " | ".join(f"g × {s:g}" for s in scales) + " |")
    print("|---|---|" + "---:|" * len(scales))
    calls = [(name, act.backward, None) for name, act in ACTIVATIONS.items()]
    calls += [(name + "_backward_from_output", getattr(fa, name + "_backward_from_output"), forward)
              for name, forward in (("sigmoid", fa.sigmoid), ("tanh", fa.tanh))]
    for dtype in (dtype_of(d) for d in args.dtypes.split(",")):
        x = x32.astype(dtype)
        out = np.empty_like(x)
        for name, backward, forward in calls:
            second = forward(x) if forward is not None else x   # the output y, or x
            speeds = []
            for scale in [1.0] + scales:
                g = (g32 * scale).astype(dtype)
                speeds.append(1 / best_time(lambda: backward(g, second, out=out), args.repeat))
            print(f"| {dtype.name} | {name} | " + " | ".join(f"{s / speeds[0]:.2f}" for s in speeds[1:]) + " |")


if __name__ == "__main__":
    main()
