"""python -m fastact: what this build runs on, and the seed article's table;
``bench`` times fastact against the installed peers (fastact._bench times
the calls that fastact._peers builds).

Usage: python -m fastact [info]
       python -m fastact bench [--help]
       python -m fastact plot [--out FILE]   (the seed article's figure; needs matplotlib)
"""
import sys

import numpy as np

import fastact as fa
from fastact._registry import ACTIVATIONS

TABLE_POINTS = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
# the elementwise functions the seed articles discuss (the rest: python -m fastact bench)
SEED_FUNCTIONS = ("relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh", "leaky_relu")


def value_table():
    """Rows of (x, f(x) and f'(x) for the seed articles' activations), float64, as Markdown."""
    names = [n for n in SEED_FUNCTIONS if n in ACTIVATIONS]
    header = ["x"] + [f"{n}(x)" for n in names] + [f"{n}'(x)" for n in names]
    columns = [TABLE_POINTS]
    columns += [ACTIVATIONS[n].forward(TABLE_POINTS) for n in names]
    columns += [ACTIVATIONS[n].backward(np.ones_like(TABLE_POINTS), TABLE_POINTS) for n in names]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in zip(*columns):
        lines.append("| " + " | ".join(f"{v:+.6f}" for v in row) + " |")
    return "\n".join(lines)


def wake_cost():
    """The pool's wake costs after a few large calls start it, in words."""
    x = np.zeros(1 << 22, np.float32)
    for _ in range(3):
        fa.relu(x, out=x)
    parked, spinning = fa._ext.wake_ns()
    if not parked:
        return "no split made (the pool has not started)"
    return (f"{parked / 1000:.1f} µs from a park, {spinning / 1000:.2f} µs spinning (a call splits where its work"
            " is worth 1.5 wake-ups per extra thread; both costs follow what later calls see)")


def info():
    print(f"fastact {fa.__version__} (numpy {np.__version__})")
    print(f"ISAs this CPU supports (best first): {', '.join(fa.available_isas())}")
    print(f"ISA in use: {fa.isa()}   (cap with FASTACT_ISA=scalar|sse2|avx2|avx512|neon)")
    print(f"threads for large arrays: {fa.get_num_threads()}, from {fa._num_threads_source()}; "
          f"{fa._ext.cpus_available()} CPUs usable")
    print("   (order: fastact.set_num_threads / threadpoolctl, FASTACT_NUM_THREADS, OMP_NUM_THREADS, CPUs;"
          " a call uses fewer threads when its work would not pay for waking them)")
    if fa.get_num_threads() > 1:
        print(f"waking a worker, measured now: {wake_cost()}")
    print()
    print("The seed article's table, computed by fastact (float64; ' is the derivative):")
    print(value_table())


def main(argv):
    command = argv[0] if argv else "info"
    if command == "info":
        info()
        return 0
    if command == "bench":
        from fastact._bench import main as bench   # imports peers only when asked
        return bench(argv[1:])
    if command == "plot":
        from fastact._plot import main as plot
        return plot(argv[1:])
    print(__doc__, file=sys.stderr)
    return 0 if command in ("-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
