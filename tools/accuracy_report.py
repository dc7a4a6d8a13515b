#!/usr/bin/env python3
"""Print a Markdown table of fastact's worst-case errors, per kernel set.

float32 (default): every finite float32 bit pattern (or every --stride-th),
forward and backward (grad_output = 1), against the float64 references of
fastact._reference, in float32 ULPs of the result (forward) or of the
derivative's largest term (backward); relu must match bit for bit.
--float64 N: N random float64 inputs plus the stored mpmath set
(tests/data/reference_f64.npz) against mpmath, in float64 ULPs.

Run:  python tools/accuracy_report.py > table.md            (all 2^32 inputs)
      python tools/accuracy_report.py --isa avx512-emulated --stride 16 --jobs 2
      python tools/accuracy_report.py --float64 20000
Progress goes to stderr, the table to stdout.
"""
import argparse
import multiprocessing
import pathlib
import signal
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))  # make_reference_data, for --float64
sys.path.append(str(ROOT / "src"))  # fastact from the checkout only when not installed

import fastact as fa  # noqa: E402
from fastact._registry import ACTIVATIONS, VARIANTS  # noqa: E402

DATA = ROOT / "tests" / "data" / "reference_f64.npz"
DIRECTIONS = ("forward", "backward")
EXP_BITS = np.uint64(0x7FF0000000000000)
# same as tests/conftest.py: the real ISAs plus the AVX-512 source through SIMDe
TESTABLE_ISAS = fa.available_isas() + (
    ["avx512-emulated"] if fa._ext.isa_supported(fa._ISA_NAMES.index("avx512-emulated")) else [])


def ulp(v, dtype):
    """Spacing of `dtype` at the float64 values v (2^exponent of v, scaled),
    never below the subnormal spacing. Bit masking: 4x faster than frexp."""
    info = np.finfo(dtype)
    power = (np.ascontiguousarray(v, dtype=np.float64).view(np.uint64) & EXP_BITS).view(np.float64)
    return np.maximum(power * 2.0**-info.nmant, float(info.smallest_subnormal))


class Worst:
    """The largest error seen for one (function, direction, ISA), and where.
    For relu, `err` counts the inputs whose result differs in any bit."""

    def __init__(self, err, x, got, expected):
        self.err, self.x, self.got, self.expected = err, x, got, expected

    @classmethod
    def of(cls, err, x, got, expected, exact):
        if exact:
            i = int(np.argmax(err)) if err.any() else 0
            return cls(float(np.count_nonzero(err)), x[i], got[i], expected[i])
        err = np.where(np.isnan(err), np.inf, err)
        i = int(np.argmax(err))
        return cls(float(err[i]), x[i], got[i], expected[i])

    def merge(self, other, exact):
        if exact:
            first = self if self.err > 0 or other.err <= 0 else other
            return Worst(max(self.err, 0) + max(other.err, 0), first.x, first.got, first.expected)
        return self if self.err >= other.err else other

    def cell(self, exact):
        bits = np.asarray(self.x).view(f"u{np.asarray(self.x).itemsize}")
        where = f"x = 0x{int(bits):0{2 * bits.itemsize}x} ({float(self.x):.9g})"
        if exact:
            return "exact" if self.err == 0 else (
                f"**{self.err:.0f} differ**, e.g. {where}: got {float(self.got)!r}, expected {float(self.expected)!r}")
        return f"{self.err:.3f} at {where}"


def _call(act, direction, x):
    return act.forward(x) if direction == "forward" else act.backward(np.ones_like(x), x)


# ---- float32 sweep ----------------------------------------------------------

def _two_prod(a, b):
    """a·b exactly as hi + lo (Dekker: float64 has no FMA in NumPy)."""
    def split(v):
        t = v * 134217729.0  # 2^27 + 1
        hi = t - (t - v)
        return hi, v - hi
    p = a * b
    (ah, al), (bh, bl) = split(a), split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _round_to_odd_div6(hi, lo):
    """(hi + lo)/6 rounded to float64 by round-to-odd, which the cast to float32
    then rounds once more without double rounding's error."""
    q = hi / 6
    p, e = _two_prod(q, np.full_like(q, 6.0))
    rem = ((hi - p) - e) + lo  # the sign of the exact remainder
    bits = q.view(np.uint64)
    even = (bits & 1) == 0
    toward = np.where(rem > 0, np.inf, -np.inf)
    return np.where((rem != 0) & even, np.nextafter(q, toward), q)


def exact_float32(name, x64):
    """The correctly rounded float32 result of an exact function on float32 inputs
    (forward, grad_output = 1 backward), where float64 alone would round twice;
    the parameters rounded to float32 first, as the kernels round them."""
    from fastact import _reference as ref
    if name == "leaky_relu":
        slope = float(np.float32(0.01))
        return (ref.leaky_relu(x64, slope).astype(np.float32),
                ref.leaky_relu_backward(np.ones_like(x64), x64, slope).astype(np.float32))
    if name not in ("hardsigmoid", "hardswish"):
        act = ACTIVATIONS[name]
        return (act.ref_forward(x64).astype(np.float32),
                act.ref_backward(np.ones_like(x64), x64).astype(np.float32))
    inside = np.abs(x64) < 3
    y = x64 + 3  # exact for |x| >= 2^-27; below, the result is x's own term
    if name == "hardsigmoid":
        value = _round_to_odd_div6(y, np.zeros_like(y))
        forward = np.where(x64 <= -3, 0.0, np.where(x64 >= 3, 1.0, value))
        backward = np.where(inside, 1 / 6, 0.0)  # 1/6 in float64 is far from a float32 midpoint
    else:
        p, e = _two_prod(x64, y)
        value = _round_to_odd_div6(p, e)
        # |x| < 2^-27: x/2 + x²/6, x/2 exact in float64: a float32 tie goes up
        tiny = np.nextafter(x64 / 2, np.inf)
        value = np.where((np.abs(x64) < 2.0**-27) & (x64 != 0), tiny, value)
        forward = np.where(x64 <= -3, np.copysign(0.0, x64), np.where(x64 >= 3, x64, value))
        slope_value = _round_to_odd_div6(2 * x64 + 3, np.zeros_like(x64))
        backward = np.where(x64 <= -3, 0.0, np.where(x64 >= 3, 1.0, slope_value))
    nan = np.isnan(x64)
    return (np.where(nan, x64, forward).astype(np.float32), np.where(nan, x64, backward).astype(np.float32))


def float32_chunk(job):
    """Errors on one run of bit patterns, for every function, direction and ISA:
    the float64 reference is computed once and reused across ISAs."""
    start, size, stride, offset, isas, names = job
    bits = np.arange(start + offset, start + size, stride, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    x = x[np.isfinite(x)]
    x64 = x.astype(np.float64)
    ones = np.ones_like(x64)
    out, references = {}, {}
    for name in names:
        act = VARIANTS[name]
        if act.name in references:  # another tier of the same op
            reference = references[act.name]
        elif act.exact:
            forward, backward = exact_float32(act.name, x64)
            reference = {"forward": (forward, None), "backward": (backward, None)}
        else:
            forward, backward = act.ref_forward(x64), act.ref_backward(ones, x64)
            reference = {"forward": (forward, ulp(forward, np.float32)),
                         "backward": (backward, ulp(act.ref_backward_scale(x64), np.float32))}
        references[act.name] = reference
        for isa in isas:
            fa.set_isa(isa)
            for direction, (expected, unit) in reference.items():
                got = _call(act, direction, x)
                if act.exact:
                    err = got.view(np.uint32) != expected.view(np.uint32)
                else:
                    err = np.abs(got.astype(np.float64) - expected) / unit
                    # past the largest float32 by half an ULP the right result is ±inf (selu)
                    overflow = (np.abs(expected) >= np.finfo(np.float32).max * (1 + 2.0**-25)) & \
                        (got == np.copysign(np.inf, expected))
                    err = np.where(overflow, 0.0, err)
                out[name, direction, isa] = Worst.of(err, x, got, expected, act.exact)
    return out, len(x)


def float32_sweep(args):
    size = 1 << args.chunk_bits
    jobs = [(start, size, args.stride, (index * 97) % args.stride, args.isa, args.functions)
            for index, start in enumerate(range(0, 2**32, size))]
    total = {}
    count, done, started = 0, 0, time.perf_counter()
    try:
        with pool_for(args.jobs) as pool:
            mapper = pool.imap_unordered(float32_chunk, jobs) if pool else map(float32_chunk, jobs)
            for done, (result, n) in enumerate(mapper, 1):
                count += n
                for key, worst in result.items():
                    exact = VARIANTS[key[0]].exact
                    total[key] = total[key].merge(worst, exact) if key in total else worst
                elapsed = time.perf_counter() - started
                so_far = max((w.err for k, w in total.items() if not VARIANTS[k[0]].exact), default=0)
                print(f"[{done}/{len(jobs)}] {count} inputs, worst so far {so_far:.3f} ULP, {elapsed:.0f} s, "
                      f"about {elapsed / done * (len(jobs) - done):.0f} s left", file=sys.stderr, flush=True)
    except KeyboardInterrupt:  # SIGINT or SIGTERM: still print the table of what was swept
        print("interrupted", file=sys.stderr)
    every = "every finite float32" if args.stride == 1 else f"every {args.stride}th float32 bit pattern (finite)"
    partial = "" if done == len(jobs) else f"; PARTIAL, interrupted after {done} of {len(jobs)} chunks"
    return total, f"float32: {count} inputs ({every}){partial}; float64 reference (fastact._reference)"


# ---- float64 against mpmath -------------------------------------------------

def float64_inputs(gen, name, n, seed):
    """Half log-uniform over the live magnitudes, a quarter linear over the live
    range, a quarter random finite bit patterns (mostly saturated or tiny)."""
    rng = np.random.default_rng([seed, list(gen.RANGES).index(name)])
    neg, pos, _ = gen.RANGES[name]
    bits = rng.integers(0, 2**64, size=n // 4, dtype=np.uint64).view(np.float64)
    x = np.concatenate([gen._random_bits(rng, n // 2, 2.0**-40, 2 * max(neg, pos)),
                        rng.uniform(-neg - 2, pos + 2, n - n // 2 - n // 4),
                        bits[np.isfinite(bits)]])
    return x[x <= gen._selu_top()] if name == "selu" else x  # selu overflows above it


def float64_errors(act, direction, x, expected, rem, scale):
    """As tests/test_accuracy.py: error against the exact value expected + rem ulp(expected)."""
    got = _call(act, direction, x)
    step = ulp(expected, np.float64)
    if direction == "forward":
        below = rem * np.sign(expected) < 0  # exact value in the binade below
        unit = ulp(np.where(below, np.nextafter(expected, 0), expected), np.float64)
    else:
        unit = ulp(scale, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.abs((got - expected) / step - rem) * (step / unit), got


def float64_report(args):
    import make_reference_data as gen
    total, sizes, evaluated = {}, [], {}
    with np.load(DATA) as data, pool_for(args.jobs) as pool:
        for key in args.functions:
            act = VARIANTS[key]
            name = act.name
            if act.exact:  # random bit patterns, NaN and inf included, bit for bit
                x = np.random.default_rng(args.seed).integers(0, 2**64, args.float64, dtype=np.uint64).view(np.float64)
                for isa in args.isa:
                    fa.set_isa(isa)
                    for direction in DIRECTIONS:
                        with np.errstate(invalid="ignore"):  # signaling NaNs raise FE_INVALID
                            got = _call(act, direction, x)
                            expected = (act.ref_forward(x) if direction == "forward"
                                        else act.ref_backward(np.ones_like(x), x))
                        err = (got.view(np.uint64) != expected.view(np.uint64)) & ~(np.isnan(got) & np.isnan(expected))
                        total[key, direction, isa] = Worst.of(err, x, got, expected, True)
                continue
            if name not in evaluated:  # mpmath once per op, for every tier
                fresh = float64_inputs(gen, name, args.float64, args.seed)
                started = time.perf_counter()
                chunks = [(name, c.tolist(), gen.DPS) for c in np.array_split(fresh, max(1, len(fresh) // 500))]
                values = np.concatenate(list(pool.map(gen.evaluate, chunks) if pool else map(gen.evaluate, chunks)))
                print(f"{name}: mpmath on {len(fresh)} inputs in {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
                x = np.concatenate([data[f"{name}_x"], fresh])
                columns = {c: np.concatenate([data[f"{name}_{c}"], values[:, i]]) for i, c in
                           enumerate(["forward", "forward_rem", "backward", "backward_rem", "scale"])}
                evaluated[name] = x, columns
                sizes.append(f"{name} {len(x)}")
            x, columns = evaluated[name]
            for isa in args.isa:
                fa.set_isa(isa)
                for direction in DIRECTIONS:
                    expected = columns[direction]
                    err, got = float64_errors(act, direction, x, expected, columns[f"{direction}_rem"],
                                              columns["scale"])
                    total[key, direction, isa] = Worst.of(err, x, got, expected, False)
    return total, (f"float64: stored mpmath set + {args.float64} random inputs per function "
                   f"({', '.join(sizes)}); reference mpmath, dps {gen.DPS}")


# ---- driver -----------------------------------------------------------------

class _NoPool:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _worker_init():
    fa.set_num_threads(1)  # the processes already fill the cores


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def pool_for(jobs):
    # spawn: a forked child would inherit fastact's thread pool without its threads
    context = multiprocessing.get_context("spawn")
    return context.Pool(jobs, initializer=_worker_init) if jobs > 1 else _NoPool()


def table(total, isas, names, title):
    lines = [f"### {title}", "", f"fastact {fa.__version__}, numpy {np.__version__}", "",
             "| function | direction | bound | " + " | ".join(isas) + " |",
             "|---|---|---|" + "---|" * len(isas)]
    for name in names:
        act = VARIANTS[name]
        for direction in DIRECTIONS:
            bound = "exact" if act.exact else f"{act.forward_ulp if direction == 'forward' else act.backward_ulp:g} ULP"
            cells = [total[name, direction, isa].cell(act.exact) if (name, direction, isa) in total else "-"
                     for isa in isas]
            lines.append(f"| {name} | {direction} | {bound} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--isa", nargs="+", default=TESTABLE_ISAS, choices=TESTABLE_ISAS)
    parser.add_argument("--functions", nargs="+", default=list(VARIANTS), choices=list(VARIANTS),
                        help="ops by name, a tier other than the default as NAME_TIER (default: all, every tier)")
    parser.add_argument("--stride", type=int, default=1, help="test every N-th float32 bit pattern")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--chunk-bits", type=int, default=24, help="log2 of the bit patterns per chunk")
    parser.add_argument("--float64", type=int, metavar="N", help="float64 mode: N random inputs plus the stored set")
    parser.add_argument("--seed", type=int, default=1, help="float64 mode: seed of the random inputs")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupt)
    if args.stride < 1 or not 10 <= args.chunk_bits <= 32:
        parser.error("--stride must be >= 1 and --chunk-bits in 10..32")
    started = time.perf_counter()
    total, title = float64_report(args) if args.float64 else float32_sweep(args)
    title += f"; {time.perf_counter() - started:.0f} s"
    print(table(total, args.isa, args.functions, title))


if __name__ == "__main__":
    main()
