#!/usr/bin/env python3
"""Write tests/data/reference_f64.npz: mpmath values of every smooth activation
(forward, backward, backward scale) on float64 inputs chosen where kernels go
wrong: random bit patterns, grids around 0 and the derivative's root (or a
kink or threshold), the tails that underflow into subnormals, tiny and huge
inputs.

Run:  python tools/make_reference_data.py [--jobs 2]     (~45 s on 2 cores)

Every value is computed at 50 digits and again at 100; the file is written
only if the rounded results agree. Deterministic: a fixed seed and a zip
with fixed timestamps, so a rerun reproduces the file bit for bit.

Arrays, for each name in gelu, gelu_tanh, silu, sigmoid, tanh, softplus,
log_sigmoid, mish, elu, selu, celu, quick_gelu (default parameters: softplus beta = 1,
threshold = 20; elu and celu alpha = 1; selu PyTorch's constants):
  {name}_x              float64 inputs (unique bit patterns, sorted by value)
  {name}_forward        f(x) correctly rounded to float64
  {name}_forward_rem    (exact - rounded) / ulp(rounded), in [-1/2, 1/2]
  {name}_backward       f'(x), correctly rounded
  {name}_backward_rem   as forward_rem
  {name}_scale          the size of f'(x)'s largest term, the unit of backward
                        error: |g(x)| + |x g'(x)| for f = x g (gelu, gelu_tanh,
                        silu, quick_gelu), |tanh(sp)| + |x sech(sp)^2 sigma(x)| for mish
                        (sp = log(1 + e^x)), and |f'(x)| where f' is one term
                        (sigmoid: sigma(x) sigma(-x); the other new functions)
and "meta", rows of (key, value) strings.
"""
import argparse
import io
import math
import multiprocessing
import pathlib
import sys
import time
import zipfile

import mpmath as mp
import numpy as np

# the kernels' thresholds are typed once, in tools/fit_coeffs.py (next to this script)
from fit_coeffs import GELU_A_MAX, GELU_TANH_A_MAX, QUICK_GELU_A_MAX, SIGMOID_A_MAX, SILU_A_MAX, quick_gelu_c

DPS = 50
SEED = 20240611
OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "reference_f64.npz"
FMAX = np.finfo(np.float64).max

# (negative a beyond which f(-a) underflows to 0: the float64 kernels' clamp,
# a beyond which the positive side is saturated, an x range holding the
# subnormal results). The order is part of the data: inputs() seeds each
# name's generator with its index here, so new names go at the end. For the
# functions after sigmoid, "saturated" means that f and f' are each 0, a
# constant, or x (times a constant), or round to it, beyond the bound.
RANGES = {"gelu": (float(GELU_A_MAX), 10.0, (-39.0, -37.0)),
          "gelu_tanh": (float(GELU_TANH_A_MAX), 8.0, (-22.0, -20.0)),
          "silu": (float(SILU_A_MAX), 40.0, (-760.0, -700.0)),
          "sigmoid": (float(SIGMOID_A_MAX), 40.0, (-746.0, -700.0)),
          # odd: tanh(-a) rounds to -1 from a = 19.1, but f' = sech^2 ~ 4 e^-2a
          # only goes subnormal at a = 354.9 and rounds to 0 from a = 373.3:
          # 380 on both sides; the tail holds the subnormal f' (inputs() adds
          # its mirror image too)
          "tanh": (380.0, 380.0, (-376.0, -352.0)),
          # f = log(1 + e^x) ~ e^x and f' = sigma(x) ~ e^x: subnormal from
          # x = -708.4, 0 from -745.13 (as sigmoid); x > 20 gives x and 1
          "softplus": (750.0, 40.0, (-746.0, -700.0)),
          # softplus's mirror: f = x - log(1 + e^x) rounds to x and f' to 1
          # below x = -37.4; on the right f ~ -e^-x and f' ~ e^-x are subnormal
          # from x = 708.4 and round to -0, 0 from 745.13 (a positive tail)
          "log_sigmoid": (40.0, 750.0, (700.0, 746.0)),
          # as silu on the left: f ~ x e^x, f' ~ (1 + x) e^x are subnormal from
          # x ~ -702 and round to 0 from -751.8; f and f' round to x and 1
          # from x ~ 20.5
          "mish": (760.0, 40.0, (-760.0, -700.0)),
          # f = alpha expm1(x) rounds to -alpha from x = -37.4, f' = alpha e^x
          # is subnormal from -708.4 (-709.0 for selu's 1.76) and 0 from
          # -745.13 (-745.7); x > 0 gives x and 1 (times selu's scale)
          "elu": (750.0, 40.0, (-746.0, -700.0)),
          "selu": (750.0, 40.0, (-746.0, -700.0)),
          "celu": (750.0, 40.0, (-746.0, -700.0)),
          # silu at 1.702 x: f ~ x e^(1.702 x) is subnormal from x ~ -419.8 and
          # rounds to -0 from -441.7; f and f' round to x and 1 from x ~ 25
          "quick_gelu": (float(QUICK_GELU_A_MAX), 30.0, (-442.0, -418.0))}
# (the new functions) a range where f and f' are neither saturated nor tiny,
# sampled once more: the bounds above stretch the linear sample of inputs()
# over hundreds of units where only the tail is left
LIVE = {"tanh": (-20.0, 20.0), "softplus": (-40.0, 25.0), "log_sigmoid": (-25.0, 40.0),
        "mish": (-40.0, 25.0), "elu": (-40.0, 0.0), "selu": (-40.0, 0.0), "celu": (-40.0, 0.0)}
# where inputs()' grids sit for a function whose f' has no root (gelu,
# gelu_tanh, silu, mish have one): softplus's threshold (f jumps from
# log(1 + e^20) to x between 20 and its successor), else 0: sigmoid's and
# tanh's centre, log_sigmoid's, and the kink of elu, selu, celu
FOCUS = {"sigmoid": 0.0, "tanh": 0.0, "softplus": 20.0, "log_sigmoid": 0.0,
         "elu": 0.0, "selu": 0.0, "celu": 0.0}
SOFTPLUS_THRESHOLD = 20  # with beta = 1
# SELU's constants are PyTorch's C++ doubles (these decimal strings rounded
# to double), and scale * alpha is their exact product: the function the
# kernels implement (tools/fit_coeffs.py: FA_SELU_SCALE, FA_SELU_SCALE_ALPHA_HI/LO).
SELU_ALPHA = float("1.6732632423543772848170429916717")
SELU_SCALE = float("1.0507009873554804934193349852946")


# ---- exact values ----------------------------------------------------------

def _sigmoid(z):
    if z >= 0:
        return 1 / (1 + mp.exp(-z))
    e = mp.exp(z)
    return e / (1 + e)


def _npdf(x):
    return mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)


def _phi_lower(a):
    """Phi(-a) for a >= 0. mpmath's erfc overflows internally for a > ~1e150,
    so large a uses the asymptotic series (10 terms: relative error < 1e-70 there)."""
    if a < 10**4:
        return mp.erfc(a / mp.sqrt(2)) / 2
    z, term, total = 1 / (a * a), mp.mpf(1), mp.mpf(1)
    for n in range(1, 11):
        term *= -(2 * n - 1) * z
        total += term
    return _npdf(a) / a * total


def _mish_tanh_sp(x):
    """tanh(sp) and sech(sp)^2, sp = log(1 + e^x), as rational functions of e^x
    (w = (1 + e^x)^2: tanh = (w - 1)/(w + 1), sech^2 = 4w/(w + 1)^2), written
    with nothing subtracted (in e^x on the left, e^-x on the right)."""
    if x <= 0:
        e = mp.exp(x)
        den = e * (e + 2) + 2
        return e * (e + 2) / den, 4 * (1 + e) ** 2 / den**2
    q = mp.exp(-x)
    den = 1 + 2 * q * (1 + q)
    return (1 + 2 * q) / den, 4 * (q * (1 + q)) ** 2 / den**2


def _elu_like(x, pos, neg):
    """pos x for x > 0, neg expm1(x) for x <= 0; f' pos, or neg e^x (neg at 0)."""
    if x > 0:
        return pos * x, pos, abs(pos)
    slope = neg * mp.exp(x)
    return neg * mp.expm1(x), slope, abs(slope)


def exact(name, x):
    """(f(x), f'(x), scale) as mpf at x, a float (taken exactly) or an mpf. The
    gate g and its complement 1 - g are each computed directly, never by subtraction."""
    x = mp.mpf(x)
    if name == "tanh":  # f' = sech^2, not 1 - tanh^2
        slope = mp.sech(x) ** 2
        return mp.tanh(x), slope, slope
    if name == "softplus":  # PyTorch's rule: x itself above the threshold
        if x > SOFTPLUS_THRESHOLD:
            return x, mp.mpf(1), mp.mpf(1)
        slope = _sigmoid(x)
        return mp.log1p(mp.exp(x)), slope, slope
    if name == "log_sigmoid":  # min(x, 0) - log(1 + e^-|x|): terms of one sign
        slope = _sigmoid(-x)
        if x > 0:
            return -mp.log1p(mp.exp(-x)), slope, slope
        return x - mp.log1p(mp.exp(x)), slope, slope
    if name == "mish":
        t, sech2 = _mish_tanh_sp(x)
        slope = x * sech2 * _sigmoid(x)
        return x * t, t + slope, abs(t) + abs(slope)
    if name in ("elu", "celu"):  # alpha = 1, where celu is elu
        return _elu_like(x, mp.mpf(1), mp.mpf(1))
    if name == "selu":
        return _elu_like(x, mp.mpf(SELU_SCALE), mp.mpf(SELU_SCALE) * mp.mpf(SELU_ALPHA))
    if name == "sigmoid":  # f = g itself; f' = sigma(x) sigma(-x) is one term
        slope = _sigmoid(x) * _sigmoid(-x)
        return _sigmoid(x), slope, slope
    if name == "gelu":
        tail = _phi_lower(abs(x))
        gate = tail if x < 0 else 1 - tail
        slope = x * _npdf(x)
    else:
        if name == "gelu_tanh":
            c = mp.sqrt(2 / mp.pi)
            k = mp.mpf("0.044715")
            z = 2 * c * (x + k * x**3)
            dz = 2 * c * (1 + 3 * k * x * x)
        elif name == "quick_gelu":
            z, dz = quick_gelu_c() * x, quick_gelu_c()
        else:
            z, dz = x, 1
        gate = _sigmoid(z)
        slope = x * gate * _sigmoid(-z) * dz
    return x * gate, gate + slope, abs(gate) + abs(slope)


def _ulp_exponent(d):
    """log2 of the spacing of doubles at |d| (subnormal spacing below 2^-1022)."""
    return -1074 if d == 0 else max(math.frexp(abs(d))[1] - 53, -1074)


def round_double(v):
    """v rounded to nearest-even double, and (v - rounded) / ulp(rounded).

    Done on the integer mantissa because float(mpf) rounds to 53 bits first and
    then again onto the subnormal grid (double rounding below 2^-1022)."""
    sign, man, exp, bc = v._mpf_
    if not man:
        return 0.0, 0.0
    if exp + bc < -1075:  # below half the smallest subnormal: rounds to zero
        return 0.0, float(v * mp.mpf(2) ** 1074)
    q = max(exp + bc - 1 - 52, -1074)  # exponent of the last kept bit
    if exp >= q:
        n = man << (exp - q)
    else:
        shift = q - exp
        n, rest = man >> shift, man & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        n += rest > half or (rest == half and n & 1)
    d = math.ldexp(-n if sign else n, q)
    return d, float((v - mp.mpf(d)) * mp.mpf(2) ** -_ulp_exponent(d))


def evaluate(job):
    """Worker: rows of (forward, forward_rem, backward, backward_rem, scale)."""
    name, xs, dps = job
    with mp.workdps(dps):
        rows = []
        for x in xs:
            f, d, s = exact(name, x)
            rows.append((*round_double(f), *round_double(d), round_double(s)[0]))
    return np.array(rows, dtype=np.float64).reshape(-1, 5)


# ---- inputs ----------------------------------------------------------------

def _random_bits(rng, n, lo, hi):
    """Random doubles with |x| between lo and hi, uniform in the bit pattern
    (so log-uniform in magnitude), both signs."""
    blo, bhi = (np.array([lo, hi]).view(np.uint64)).tolist()
    bits = rng.integers(blo, bhi, size=n, dtype=np.uint64, endpoint=True)
    x = bits.view(np.float64)
    return np.where(rng.random(n) < 0.5, -x, x)


def _neighbours(x0, count):
    """x0 and its `count` nearest doubles on each side."""
    steps = np.arange(-count, count + 1)
    return (np.float64(x0).view(np.int64) + steps).view(np.float64)


def _root(name):
    """The root of f' (f's minimum), as the nearest double; for a function whose
    f' has none, FOCUS's point (sigmoid: 0, where sigma is closest to 1/2)."""
    if name in FOCUS:
        return FOCUS[name]
    with mp.workdps(DPS):
        guess = {"silu": -1.28, "mish": -1.19}.get(name, -0.75)
        return float(mp.findroot(lambda t: exact(name, t)[1], guess))


def _selu_top():
    """The largest double whose selu (scale x) rounds to a finite double: past
    it the result is inf, which the stored set cannot hold."""
    with mp.workdps(DPS):
        limit = mp.mpf(FMAX) + mp.mpf(2) ** 970  # from half an ULP above FMAX: inf

        def finite(x):
            return mp.mpf(SELU_SCALE) * mp.mpf(x) < limit

        x = float(mp.mpf(FMAX) / SELU_SCALE)
        while finite(np.nextafter(x, np.inf)):
            x = float(np.nextafter(x, np.inf))
        while not finite(x):
            x = float(np.nextafter(x, 0))
        return x


def inputs(name, index):
    rng = np.random.default_rng([SEED, index])
    neg, pos, (tail_lo, tail_hi) = RANGES[name]
    wide = max(neg, pos) * 2
    root = _root(name)
    bits = rng.integers(0, 2**64, size=2500, dtype=np.uint64).view(np.float64)
    signed = [
        bits[np.isfinite(bits)],                                   # anywhere (mostly saturated)
        _random_bits(rng, 8000, 2.0**-40, wide),                   # log-uniform, interesting
        rng.uniform(-neg - 2, pos + 2, 8000),                      # linear over the live range
        np.linspace(-4, 4, 4001),                                  # grid around 0
        _neighbours(root, 300), np.linspace(root - 1e-3, root + 1e-3, 1001),
        rng.uniform(tail_lo, tail_hi, 3000), np.linspace(tail_lo, tail_hi, 1001),
        _random_bits(rng, 1500, 5e-324, 1e-300),                   # tiny
        _random_bits(rng, 1000, 32.0, FMAX),                       # huge
    ]
    both_signs = [np.arange(65) * 5e-324, _neighbours(2.0**-1022, 32),
                  [1.8e19, 3.4e38, FMAX, 2.0**-149, 2.0**-126]]
    if name == "gelu":  # results just below 0.125, top of a binade: a review found 2.03 ULP here
        signed += [rng.uniform(-1.34, -1.30, 4000), [-1.3237462800639432, -1.307954557088771]]
    if name == "sigmoid":  # tiny x: sigma(x) = 1/2 + x/4 must round correctly on both sides of 1/2
        signed.append(_random_bits(rng, 3000, 2.0**-60, 2.0**-10))
    signed.append(rng.uniform(-3, 3, 6000))                        # dense where results are O(1)
    if name == "gelu_tanh":  # where the exponent's argument 2u is large, and x^3 overflows
        signed.append(rng.uniform(-22, 22, 3000))
        both_signs += [_neighbours(np.cbrt(FMAX), 16), _neighbours(np.cbrt(FMAX) / np.cbrt(0.044715), 16)]
    # the functions after sigmoid (every draw above, the first four's, is as it was)
    if name in LIVE:
        signed.append(rng.uniform(*LIVE[name], 4000))
    if name in ("tanh", "elu", "selu", "celu"):  # tiny x: tanh x ~ x - x^3/3, expm1 x ~ x + x^2/2
        signed.append(_random_bits(rng, 3000, 2.0**-60, 2.0**-10))
    if name in LIVE and root == 0:  # the grid's other half (the bit patterns below +0 are NaNs)
        signed.append(-_neighbours(0.0, 300))
    if name == "tanh":  # f' is even: the subnormal tail on the right too
        signed += [rng.uniform(-tail_hi, -tail_lo, 3000), np.linspace(-tail_hi, -tail_lo, 1001)]
    if name == "softplus":  # both formulas near the threshold
        signed.append(rng.uniform(SOFTPLUS_THRESHOLD - 2, SOFTPLUS_THRESHOLD + 2, 2000))
    if name == "selu":  # the last finite results
        signed.append(_neighbours(_selu_top(), 32))
    mirrored = np.concatenate([np.asarray(p, dtype=np.float64) for p in both_signs])
    x = np.concatenate(signed + [mirrored, -mirrored])
    x = x[np.isfinite(x)]
    if name == "selu":  # scale x overflows
        x = x[x <= _selu_top()]
    x = np.unique(x.view(np.uint64)).view(np.float64)
    return x[np.argsort(x, kind="stable")]


# ---- output ----------------------------------------------------------------

def save_npz(path, arrays):
    """np.savez_compressed, but with fixed zip timestamps (reproducible bytes)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for key, array in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    parser.add_argument("--no-verify", action="store_true",
                        help="skip recomputing everything at twice the precision")
    args = parser.parse_args()
    start = time.perf_counter()

    arrays, jobs, spans = {}, [], {}
    for index, name in enumerate(RANGES):
        x = inputs(name, index)
        arrays[f"{name}_x"] = x
        chunks = np.array_split(x, max(1, len(x) // 1000))
        spans[name] = slice(len(jobs), len(jobs) + len(chunks))
        jobs += [(name, chunk.tolist()) for chunk in chunks]
        print(f"{name}: {len(x)} inputs", file=sys.stderr)
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.map(evaluate, [(name, xs, DPS) for name, xs in jobs], chunksize=1)
        # every value again at twice the precision: the rounded results must not move
        again = [] if args.no_verify else pool.map(evaluate, [(name, xs, 2 * DPS) for name, xs in jobs], chunksize=1)
    for name, span in spans.items():
        values = np.concatenate(results[span])
        if again:
            check = np.concatenate(again[span])
            if not (np.array_equal(values[:, [0, 2]], check[:, [0, 2]])
                    and np.allclose(values, check, rtol=1e-12, atol=1e-12)):
                sys.exit(f"{name}: values change with the precision; raise DPS")
        for column, key in enumerate(["forward", "forward_rem", "backward", "backward_rem", "scale"]):
            arrays[f"{name}_{key}"] = values[:, column]

    arrays["meta"] = np.array([
        ["generator", "tools/make_reference_data.py"],
        ["mpmath", mp.__version__],
        ["mpmath_dps", str(DPS)],
        ["seed", str(SEED)],
        ["rounding", "nearest-even, subnormals on the 2^-1074 grid"],
        ["scale", "|g(x)| + |x g'(x)| for f(x) = x g(x); |tanh(sp)| + |x sech(sp)^2 sigma(x)| "
                  "for mish; |f'(x)| for sigmoid, tanh, softplus, log_sigmoid, elu, selu, celu"],
    ])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save_npz(args.out, arrays)
    print(f"wrote {args.out} in {time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
