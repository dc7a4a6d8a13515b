"""python -m fastact plot: the seed article's figure, ReLU and GELU and their
derivatives on [-3, 3], computed by fastact, with GELU's minimum marked.

Usage: python -m fastact plot [--out FILE]   (needs matplotlib: pip install "fastact[plot]")
"""
import argparse

import numpy as np

import fastact as fa

X_RANGE = (-3.0, 3.0)


def gelu_minimum():
    """(x, gelu(x)) where gelu' = 0 on the negative side: bisection on fastact's
    own derivative, to float64's resolution."""
    lo, hi = -2.0, -0.25  # gelu' < 0 at -2 (falling), > 0 at -0.25
    one = np.float64(1.0)
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if fa.gelu_backward(one, mid) < 0:
            lo = mid
        else:
            hi = mid
    return lo, float(fa.gelu(lo))


def figure_data(points=601):
    """The curves the figure draws: x, then each function and derivative at x."""
    x = np.linspace(*X_RANGE, points)
    ones = np.ones_like(x)
    return {"x": x, "relu": fa.relu(x), "gelu": fa.gelu(x),
            "relu'": fa.relu_backward(ones, x), "gelu'": fa.gelu_backward(ones, x)}


def draw(out):
    try:
        import matplotlib
    except ImportError:
        raise SystemExit('python -m fastact plot needs matplotlib: pip install "fastact[plot]"') from None
    matplotlib.use("Agg")  # a file, not a window
    import matplotlib.pyplot as plt

    data = figure_data()
    x_min, y_min = gelu_minimum()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(data["x"], data["relu"], "--", label="ReLU")
    left.plot(data["x"], data["gelu"], label="GELU  x·Φ(x)")
    left.plot([x_min], [y_min], "o", color="black")
    left.annotate(f"minimum {y_min:.4f}\nat x = {x_min:.4f}", (x_min, y_min), xytext=(-2.9, 1.0),
                  arrowprops={"arrowstyle": "->"})
    left.set_title("ReLU and GELU")
    right.plot(data["x"], data["relu'"], "--", label="ReLU′")
    right.plot(data["x"], data["gelu'"], label="GELU′")
    right.set_title("their derivatives")
    for ax in (left, right):
        ax.axhline(0, color="gray", linewidth=0.5)
        ax.axvline(0, color="gray", linewidth=0.5)
        ax.set_xlabel("x")
        ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return x_min, y_min


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m fastact plot", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="relu_gelu.png", help="the image file (default: relu_gelu.png)")
    args = parser.parse_args(argv)
    x_min, y_min = draw(args.out)
    print(f"wrote {args.out}: ReLU and GELU on [{X_RANGE[0]:g}, {X_RANGE[1]:g}] and their derivatives; "
          f"GELU's minimum is {y_min:.6f} at x = {x_min:.6f}")
    return 0
