#!/usr/bin/env python3
"""Worst float32 error of fastact and of every installed peer, per function.

The inputs are every --stride-th float32 bit pattern in [-LIMIT, LIMIT] (both
signs); errors are in ULPs of the result (forward) or of the derivative's
largest term (backward, grad_output = 1), against fastact's float64 kernels,
which are within 2 float64 ULPs (tests/test_accuracy.py) -- exact at float32
resolution. The peers are built exactly as the benchmarks time them
(fastact._peers), so this is the accuracy of what the speed tables compare.

    python tools/peer_accuracy.py [--stride 64] [--limit 20]
"""
import argparse

import numpy as np

from fastact._peers import IMPLS, Unsupported, available, build
from fastact._registry import ACTIVATIONS

DIRECTIONS = ("forward", "backward")


def ulps(got, exact, scale):
    """|got - exact| in float32 ULPs of |scale| (its binade's spacing, at least
    the subnormal one); NaN where a number was due counts as inf."""
    power = 2.0 ** np.floor(np.log2(np.maximum(np.abs(scale), 1e-300)))
    unit = np.maximum(power * 2.0**-23, 2.0**-149)
    return np.nan_to_num(np.abs(got.astype(np.float64) - exact) / unit, nan=np.inf)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stride", type=int, default=64, help="test every N-th bit pattern (64)")
    parser.add_argument("--limit", type=float, default=20.0, help="inputs in [-LIMIT, LIMIT] (20)")
    args = parser.parse_args()
    top = np.float32(args.limit).view(np.uint32)
    half = np.arange(0, top + 1, args.stride, dtype=np.uint32).view(np.float32)
    x = np.concatenate([half, -half])
    g = np.ones_like(x)
    impls = [i for i in IMPLS if IMPLS[i].kind in ("fastact", "peer") and available(i)]
    print(f"Worst float32 error in ULPs (at x), {x.size} inputs in [-{args.limit:g}, {args.limit:g}]\n")
    print("| function | direction | " + " | ".join(impls) + " |")
    print("|---|---|" + "---|" * len(impls))
    x64 = x.astype(np.float64)
    for name, act in ACTIVATIONS.items():
        if act.exact:
            continue
        for direction in DIRECTIONS:
            if direction == "forward":
                exact = act.forward(x64)
                scale = exact
            else:
                exact = act.backward(np.ones_like(x64), x64)
                scale = act.ref_backward_scale(x64)
            cells = []
            for impl in impls:
                y = np.empty_like(x)
                try:
                    build(impl, name, direction, g, x, y, 1)()   # jax fills y when built
                except Unsupported:
                    cells.append("—")
                    continue
                err = ulps(y, exact, scale)
                i = int(np.argmax(err))
                cells.append(f"{err[i]:.3g} ({x[i]:.4g})")
            print(f"| {name} | {direction} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
