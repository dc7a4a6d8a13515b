#!/usr/bin/env python3
"""Fit every polynomial used by the C kernels and write src_c/generated/fa_coeffs.h.

Run:  python tools/fit_coeffs.py            (rewrites src_c/generated/fa_coeffs.h)
      python tools/fit_coeffs.py --check    (exit 1 if the header is stale)

The header holds, for the float64 kernels (double coefficients, "F64"/"D":
target < 2^-56) and the float32 ones (coefficients rounded to float, "F":
target < 2^-26, a sixth of a float32 ULP; the kernels compute in float lanes
with the last step compensated):

- exp(r) = 1 + r + r^2 P(r) on the reduced argument |r| <= ln2/2 + 2^-20,
  shared by every kernel (SiLU and tanh GELU need exp(-a) and exp(-2u), exact
  GELU exp(-a^2/2)): P by interpolation at Chebyshev nodes, a near-minimax
  fit, then rounded.
- exact GELU's G(a) = exp(a^2/2) Phi(-a), so that Phi(-a) = exp(-a^2/2) G(a):
  one polynomial in v = a - mid per binade of a up to the clamp, which the
  kernels pick per lane by in-register permutes (no division, no branch). Its
  coefficients are rounded one at a time, the higher ones refitted to absorb
  each rounding; c0 is kept as hi + lo.
- the float fast tier's log(1 + e^-a) (softplus, log-sigmoid): one
  polynomial in r = a - k per integer k = round(a) below 16, read by 16-entry
  permutes, coefficients rounded one at a time as G's.
- the float fast tier's tanh(softplus(x)) (Mish): one polynomial per
  interval of width 1.5 from -14 to 9.5, read the same way.
- the constants beyond the fits: tanh GELU's 2u = c1 x + c3 x^3 coefficients
  as hi + lo, ln 2 split for Cody-Waite reduction, log2(e), 1/sqrt(2 pi).

Fits run in 60-digit arithmetic (mpmath). The printed error is the worst
relative error of the *rounded* coefficients over a dense grid, evaluated
exactly; it excludes the rounding of the evaluation itself, which the
accuracy tests measure.
"""
import argparse
import pathlib
import struct
import sys

import mpmath as mp

DPS = 60  # digits of every computation here (main() sets them; importing changes nothing)
HEADER = pathlib.Path(__file__).resolve().parent.parent / "src_c" / "generated" / "fa_coeffs.h"

# Thresholds on a = |x|, float64 and float32 (_F): the one place they are
# typed. fa_coeffs.h gets them as FA_<name> (with a line saying why), and
# tools/make_reference_data.py imports the float64 ones.
#   A_MAX   from here on every output is saturated: f(-a) and f'(-a) round to
#           -0, f(a) = a, f'(a) = 1. The kernels clamp a here, which keeps
#           every intermediate finite.
#   A_FAST  below it (and from TINY up) the 2^k of exp(h(a)) = p 2^k and the
#           results are normal, so the kernels' fast variant serves the lane.
# threshold_lines() checks both claims for each value.
SILU_A_MAX, SILU_A_MAX_F = 760, 110
SILU_A_FAST, SILU_A_FAST_F = 708, 87
SIGMOID_A_MAX, SIGMOID_A_MAX_F = 760, 110
SIGMOID_A_FAST, SIGMOID_A_FAST_F = 708, 87
GELU_TANH_A_MAX, GELU_TANH_A_MAX_F = 22, 11
GELU_TANH_A_FAST, GELU_TANH_A_FAST_F = 21, 9.5
QUICK_GELU_A_MAX, QUICK_GELU_A_MAX_F = 450, 66
QUICK_GELU_A_FAST, QUICK_GELU_A_FAST_F = 415, 51
GELU_A_MAX, GELU_A_MAX_F = 40, 15
GELU_A_FAST, GELU_A_FAST_F = 37, 13
# a/2 is subnormal below TINY = 2^(min exponent + 1): a rounding tie there is
# decided by f's next term (kernels_lanes.inc, fa_tiny_magnitude)
TINY_EXPONENT, TINY_EXPONENT_F = -1021, -125


def cheb_nodes(lo, hi, n):
    return [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (2 * i + 1) / (2 * n)) for i in range(n)]


def fit(f, lo, hi, degree):
    """Monomial coefficients (lowest first) interpolating f at degree+1 Chebyshev
    nodes, rounded to double, plus the rounding error of the constant term (the
    kernels add it back in double-double where they need it)."""
    nodes = cheb_nodes(mp.mpf(lo), mp.mpf(hi), degree + 1)
    a = mp.matrix([[v**j for j in range(degree + 1)] for v in nodes])
    b = mp.matrix([f(v) for v in nodes])
    c = mp.lu_solve(a, b)
    coeffs = [float(c[j]) for j in range(degree + 1)]
    return coeffs, float(c[0] - mp.mpf(coeffs[0]))


def to_float32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def fit_float(f, lo, hi, degree):
    """fit(), with coefficients rounded to float32; the constant term's low
    part is taken against its float32 rounding."""
    coeffs, c0_lo = fit(f, lo, hi, degree)
    c0 = mp.mpf(coeffs[0]) + mp.mpf(c0_lo)
    coeffs = [to_float32(c) for c in coeffs]
    return coeffs, to_float32(c0 - mp.mpf(coeffs[0]))


def fit_sequential(f, lo, hi, degree, rounded):
    """Coefficients rounded (to float or double: `rounded`) one at a time,
    lowest first, refitting the higher ones each time (weighted least squares
    at Chebyshev nodes) so they absorb the earlier roundings; c0 is kept as
    hi + lo."""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    nodes = cheb_nodes(lo, hi, 2 * (degree + 1))
    values = [f(v) for v in nodes]
    fixed, c0_lo = [], 0.0
    for j in range(degree + 1):
        a = mp.matrix([[v**i / fv for i in range(j, degree + 1)] for v, fv in zip(nodes, values)])
        b = mp.matrix([(fv - sum(c * v**i for i, c in enumerate(fixed))) / fv for v, fv in zip(nodes, values)])
        cj = mp.qr_solve(a, b)[0][0]
        if j == 0:
            c0_lo = rounded(cj - mp.mpf(rounded(cj)))
            fixed.append(mp.mpf(rounded(cj)) + mp.mpf(c0_lo))
        else:
            fixed.append(mp.mpf(rounded(cj)))
    return [rounded(fixed[0])] + [float(c) for c in fixed[1:]], c0_lo


def gelu_g(a):
    """G(a) = exp(a^2/2) Phi(-a), so that Phi(-a) = exp(-a^2/2) G(a)."""
    return mp.exp(a * a / 2) * mp.erfc(a / mp.sqrt(2)) / 2


# Exact GELU: G on binades of a (index = biased exponent - first exponent, at
# least 0), one polynomial in v = a - mid each, picked by in-register
# permutes: no division, and the same code for every a. Per precision: the
# intervals (up to the clamp), the exponent bits of [0.25, 0.5) (index 0 holds
# [0, 0.5)), the degree.
GELU_G = {
    "F": ([(0, 0.5), (0.5, 1), (1, 2), (2, 4), (4, 8), (8, GELU_A_MAX_F)], 125, 10, to_float32),
    "D": ([(0, 0.5), (0.5, 1), (1, 2), (2, 4), (4, 8), (8, 16), (16, 32), (32, GELU_A_MAX)], 1021, 22, float),
}


# The fast tier's float G: 8 intervals picked by the half-binade of a + 1 (its
# exponent and first mantissa bit), which splits [0, 15) into [0, 0.5), [0.5, 1),
# [1, 2), [2, 3), [3, 5), [5, 7), [7, 11), [11, 15): narrower at the top than
# binades of a, so degree 8 (a plain Horner chain) holds 2^-24.
GELU_G_FAST_F = {"offset": 1.0, "degree": 8, "rounded": to_float32}

# The fast tier's float forward fits H(a) = a G(a) = a exp(a^2/2) Phi(-a) itself on
# the same 8 intervals, so that N = a Phi(-a) = H exp(-a^2/2) is H (1 + q) 2^-k,
# rounded once (exp(-r) = 1 + q). H(0) = 0: on the first interval v = a (mid 0)
# and c0 = 0, the rest G's fit of one degree less, so that H keeps its relative
# accuracy down to the subnormals; elsewhere v = a - mid is exact. Degree 7:
# degree 6 (fits to 2^-22.9, the first interval's effectively a degree less)
# measured 3.95 ULP over every float32 input, too near the bound of 4.
GELU_H_FAST_F = {"offset": 1.0, "degree": 7, "rounded": to_float32}
# and its exponential, exp(-a^2/2) = 2^-k exp(-s/2) with s = a^2 - 2k ln2 (the
# kernel's reduction, a^2 exact in an FMA): Q(s) = (exp(-s/2) - 1)/s
GELU_EXP_FAST_F = {"degree": 5}


def gelu_exp_q(s):
    """(exp(-s/2) - 1)/s, -1/2 at 0."""
    if s == 0:
        return mp.mpf(-1) / 2
    return mp.expm1(-s / 2) / s


def half_binades(offset, count):
    """The intervals of a whose a + offset lie in `count` successive half-binades from offset."""
    edges = [offset]
    while len(edges) <= count:
        e = edges[-1]
        top = 2 ** mp.floor(mp.log(e, 2))
        edges.append(e + top / 2)
    return [(float(lo - offset), float(hi - offset)) for lo, hi in zip(edges, edges[1:])]


def gelu_g_tables(intervals, degree, rounded):
    """(mids, c0_lo, coefficient rows, worst relative error of the rounded fits),
    padded to 8 intervals by repeating the last."""
    mids, c0_los, rows, worst = [], [], [], mp.mpf(0)
    for lo, hi in intervals:
        mid, half = mp.mpf(lo + hi) / 2, mp.mpf(hi - lo) / 2
        g = lambda v, mid=mid: gelu_g(v + mid)  # noqa: E731
        c, c0_lo = fit_sequential(g, -half, half, degree, rounded)
        worst = max(worst, max_rel_error(g, c, -half, half, points=400, c0_lo=c0_lo))
        # the compensated last step relies on |c0| >= |v R1(v)|
        for i in range(201):
            v = -half + 2 * half * i / 200
            assert abs(v * horner_exact(c[1:], v)) <= abs(c[0]), (lo, hi)
        mids.append(rounded(mid))
        c0_los.append(c0_lo)
        rows.append(c)
    while len(mids) < 8:
        mids.append(mids[-1]), c0_los.append(c0_los[-1]), rows.append(rows[-1])
    return mids, c0_los, rows, worst


def gelu_h(a):
    """H(a) = a G(a) = a exp(a^2/2) Phi(-a)."""
    return a * gelu_g(a)


def interval_tables(f, f_over_a, intervals, degree, rounded):
    """(mids, coefficient rows, worst relative error of the rounded fits) of f
    on each interval, in v = a - mid; the first, from 0, with mid 0 and c0 = 0
    (f(a)/a of degree - 1, times v), so that f of a tiny a keeps its relative
    accuracy."""
    mids, rows, worst = [], [], mp.mpf(0)
    for n, (lo, hi) in enumerate(intervals):
        if n == 0:
            assert lo == 0
            c, _ = fit_sequential(f_over_a, 0, hi, degree - 1, rounded)
            worst = max(worst, max_rel_error(f_over_a, c, 0, hi, points=400))
            mids.append(0.0)
            rows.append([0.0] + c)
            continue
        mid = rounded(mp.mpf(lo + hi) / 2)
        g = lambda v, mid=mid: f(v + mid)  # noqa: E731
        c, _ = fit_sequential(g, lo - mid, hi - mid, degree, rounded)  # c0's low part dropped
        worst = max(worst, max_rel_error(g, c, lo - mid, hi - mid, points=400))
        assert mid / 2 <= lo, "v = a - mid must be exact"
        mids.append(mid)
        rows.append(c)
    return mids, rows, worst


def gelu_h_tables(intervals, degree, rounded):
    """interval_tables of H (G times a), padded to 8 intervals by repeating the last."""
    mids, rows, worst = interval_tables(gelu_h, gelu_g, intervals, degree, rounded)
    while len(mids) < 8:
        mids.append(mids[-1]), rows.append(rows[-1])
    return mids, rows, worst


# fast tier tanh, float: one polynomial on [0, 1.5 floor), then one per
# half-binade of a up to the clamp, where tanh(a) has rounded to 1 (from 9.011)
TANH_FAST_F = {"floor": 2.0**-4, "degree": 6, "clamp": 9.1}


def tanh_tables(intervals, degree, clamp, rounded):
    """interval_tables of tanh on the intervals up to the clamp, the last cut there."""
    cut = []
    for lo, hi in intervals:
        cut.append((lo, min(hi, clamp)))
        if hi >= clamp:
            break
    assert cut[-1][1] == clamp, "the intervals must reach the clamp"
    ratio = lambda v: mp.tanh(v) / v if v else mp.mpf(1)  # noqa: E731
    return interval_tables(mp.tanh, ratio, cut, degree, rounded)


# fast tier softplus and log-sigmoid, float: log(1 + e^-a) as one polynomial
# per integer k = round(a) up to 15, in r = a - k; from a = k_count - 1/2 on the
# kernels take e^-a itself
LOG1P_EXP_FAST_F = {"degree": 6, "count": 16}


def log1p_exp_tables(count, degree):
    """(rows, worst relative error of the rounded fits) of log(1 + e^-(k + r)),
    r in [-1/2, 1/2] (from 0 for k = 0), per k below count"""
    rows, worst = [], mp.mpf(0)
    for k in range(count):
        lo = 0 if k == 0 else -0.5
        f = lambda r, k=k: mp.log1p(mp.exp(-(r + k)))  # noqa: E731
        c, _ = fit_sequential(f, lo, 0.5, degree, to_float32)  # c0's low part dropped
        worst = max(worst, max_rel_error(f, c, lo, 0.5, points=400))
        rows.append(c)
    return rows, worst


# fast tier Mish, float: tanh(softplus(x)) as one polynomial per interval of
# width 1.5 centred on 1.5 m, m = round(x / 1.5) from -9 to 6 (x in [-14, 9.5];
# below, the kernels take e^x itself; above, mish(x) rounds to x)
MISH_FAST_F = {"degree": 8, "width": 1.5, "m_low": -9, "m_high": 6}


def mish_tables(degree, width, m_low, m_high):
    """(rows laid out by m mod 16, worst relative error of the rounded fits) of
    tanh(softplus(1.5 m + r)), r in [-width/2, width/2]"""
    rows, worst = [None] * 16, mp.mpf(0)
    for m in range(m_low, m_high + 1):
        f = lambda r, m=m: mp.tanh(mp.log1p(mp.exp(width * m + r)))  # noqa: E731
        c, _ = fit_sequential(f, -width / 2, width / 2, degree, to_float32)  # c0's low part dropped
        worst = max(worst, max_rel_error(f, c, -width / 2, width / 2, points=400))
        rows[m % 16] = c
    assert all(r is not None for r in rows), "16 intervals, one per index"
    return rows, worst


def horner_exact(coeffs, v, c0_lo=0.0):
    p = mp.mpf(0)
    for c in reversed(coeffs):
        p = p * v + mp.mpf(c)
    return p + mp.mpf(c0_lo)


def max_rel_error(f, coeffs, lo, hi, points=3000, wrap=lambda p, v: p, c0_lo=0.0):
    worst = mp.mpf(0)
    for i in range(points + 1):
        v = mp.mpf(lo) + (mp.mpf(hi) - mp.mpf(lo)) * i / points
        exact = f(v)
        approx = wrap(horner_exact(coeffs, v, c0_lo), v)
        worst = max(worst, abs((approx - exact) / exact))
    return worst


def exp_tail(r):
    """(exp(r) - 1 - r) / r^2, by its series near 0 to avoid cancellation."""
    if abs(r) < mp.mpf("1e-8"):
        return mp.mpf(1) / 2 + r / 6 + r * r / 24
    return (mp.exp(r) - 1 - r) / (r * r)


def polynomials():
    """(C name, coefficients, low part of c0, domain text, error, C type) of the
    exp polynomials, float64 then float32. The low part of c0 is written as 0:
    c0 is scaled by r^2 next to 1 + r, so its rounding alone is small enough."""
    out = []
    r_max = mp.log(2) / 2 + mp.mpf(2) ** -20  # |r| after reduction, plus the low part
    for tier, degree in (("f64", 10),):
        c, _ = fit(exp_tail, -r_max, r_max, degree)
        err = max_rel_error(mp.exp, c, -r_max, r_max, wrap=lambda p, r: 1 + r + r * r * p)
        out.append((f"FA_EXP_{tier.upper()}", c, 0.0,
                    f"exp(r) = 1 + r + r^2 P(r), |r| <= ln2/2 + 2^-20, degree {degree}", err, "double"))
    # float32 kernels, in float lanes
    c, _ = fit_float(exp_tail, -r_max, r_max, 5)
    err = max_rel_error(mp.exp, c, -r_max, r_max, wrap=lambda p, r: 1 + r + r * r * p)
    out.append(("FA_EXPF", c, 0.0, "exp(r) = 1 + r + r^2 P(r), |r| <= ln2/2 + 2^-20, degree 5", err, "float"))
    # the fast tier rounds exp once, plainly: a tenth of an ULP of fit error is enough
    for name, degree, fitter, ctype in (("FA_EXP_F64_FAST", 9, fit, "double"),
                                        ("FA_EXPF_FAST", 4, fit_float, "float")):
        c, _ = fitter(exp_tail, -r_max, r_max, degree)
        err = max_rel_error(mp.exp, c, -r_max, r_max, wrap=lambda p, r: 1 + r + r * r * p)
        out.append((name, c, 0.0, f"fast tier: exp(r) = 1 + r + r^2 P(r), |r| <= ln2/2 + 2^-20, degree {degree}",
                    err, ctype))
    # log(1 + f) = 2 atanh(s) = 2s + s^3 P(s^2), s = f/(2 + f), 1 + f in
    # [sqrt(1/2), sqrt(2)]: the accurate tier of softplus, log_sigmoid and mish
    # (kernels_family.inc). The double fast tier's log1p: log(1 + f) = v + v^3 P(v^2),
    # v = 2f/(2 + f) = 2s, 1 + f split at 3/2 (f from t without forming 1 + t),
    # |v| <= 2/5 (float's fast tier has its own table, LOG1P_EXP_FAST_F).
    z_max = ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2 * (1 + mp.mpf(2) ** -20)
    w_max = mp.mpf(4) / 25 * (1 + mp.mpf(2) ** -20)
    both = ("_F64", 7, fit, "double"), ("F", 3, fit_float, "float")
    log_forms = (("FA_LOG_ATANH", log_atanh_tail, z_max, "log(1 + f) = 2s + s^3 P(s^2), s = f/(2 + f), s^2", both),
                 ("FA_LOG1P_FAST", log1p_fast_tail, w_max,
                  "fast tier, double: log(1 + f) = v + v^3 P(v^2), v = 2f/(2 + f), v^2", both[:1]))
    for prefix, tail, top, form, variants in log_forms:
        for suffix, degree, fitter, ctype in variants:
            name = prefix + suffix
            c, _ = fitter(tail, 0, top, degree)
            err = max_rel_error(tail, c, 0, top)
            out.append((name, c, 0.0, f"{form} <= {mp.nstr(top, 5)}, degree {degree}", err, ctype))
    return out


def log_atanh_tail(z):
    """P(z) = (2 atanh(s) - 2s) / s^3 at z = s^2: 2/3 + 2z/5 + 2z^2/7 + ..."""
    if z < mp.mpf("1e-12"):
        return mp.mpf(2) / 3 + 2 * z / 5 + 2 * z * z / 7
    s = mp.sqrt(z)
    return (2 * mp.atanh(s) - 2 * s) / (s * z)


def log1p_fast_tail(w):
    """P(w) = (2 atanh(v/2) - v) / v^3 at w = v^2: the tail above at z = w/4, over 8"""
    return log_atanh_tail(w / 4) / 8


def tanh_coefficients():
    """c1, c3 with 2u = c1 x + c3 x^3: tanh GELU's gate is sigmoid(2u)."""
    c1 = 2 * mp.sqrt(2 / mp.pi)
    return c1, c1 * mp.mpf("0.044715")


def quick_gelu_c():
    """c of quick GELU, x·sigmoid(c x): the decimal 1.702 as published, at the working precision."""
    return mp.mpf("1.702")


def exp_argument_and_tails(name, a):
    """(h, N, T) at a >= 0 for f(x) = x g(x): the argument h(a) <= 0 of the
    kernel's exponential, N = -f(-a) = a g(-a) and T = f'(-a) = g(-a) - a g'(a).
    For sigmoid, f = g: N = f(-a) = sigma(-a), T = f'(-a) = sigma(-a) sigma(a)."""
    if name == "gelu":
        tail = mp.erfc(a / mp.sqrt(2)) / 2
        return -a * a / 2, a * tail, tail - a * mp.exp(-a * a / 2) / mp.sqrt(2 * mp.pi)
    if name == "sigmoid":  # f = g itself: f(-a) = sigma(-a), f'(-a) = sigma(-a) sigma(a)
        lower = 1 / (1 + mp.exp(a))
        return -a, lower, lower * (1 - lower)
    if name == "gelu_tanh":
        c1, c3 = tanh_coefficients()
        z, dz = c1 * a + c3 * a**3, c1 + 3 * c3 * a * a
    elif name == "quick_gelu":
        z, dz = quick_gelu_c() * a, quick_gelu_c()
    else:
        z, dz = a, 1
    lower = 1 / (1 + mp.exp(z))  # g(-a) = sigmoid(-z)
    return -z, a * lower, lower - a * (1 - lower) * lower * dz


def first_where(predicate, lo, hi):
    """The a in [lo, hi] from which the monotone predicate holds, by bisection."""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    assert not predicate(lo) and predicate(hi)
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if predicate(mid) else (mid, hi)
    return hi


def threshold_lines():
    """fa_coeffs.h's thresholds, float64 and float32, each pair after a comment
    saying why; the claims are checked here (exactly, in mpmath)."""
    formats = [("", -1022, 53, "double"), ("_F", -126, 24, "float")]  # min exponent, precision
    lines = [
        "/* Thresholds on a = |x|, float64 then float32 (_F). A_MAX: from there on",
        " * every output is saturated (f(-a), f'(-a) round to -0; f(a) = a, f'(a) = 1),",
        " * so the kernels clamp a there, which keeps every intermediate finite.",
        " * A_FAST: below it (and from TINY up) the 2^k of exp(h) = p 2^k (h = -a,",
        " * -2u or -a^2/2) and the results are normal, so the kernels' fast variant",
        " * serves the lane. tools/fit_coeffs.py computes the limits quoted and checks",
        " * each value against them. */",
    ]

    def literal(value, suffix):
        return f"{float(value)!r}{'f' if suffix else ''}"

    for title, name, a_max, a_fast in (
            ("SiLU", "silu", (SILU_A_MAX, SILU_A_MAX_F), (SILU_A_FAST, SILU_A_FAST_F)),
            ("sigmoid", "sigmoid", (SIGMOID_A_MAX, SIGMOID_A_MAX_F), (SIGMOID_A_FAST, SIGMOID_A_FAST_F)),
            ("tanh GELU", "gelu_tanh", (GELU_TANH_A_MAX, GELU_TANH_A_MAX_F),
             (GELU_TANH_A_FAST, GELU_TANH_A_FAST_F)),
            ("quick GELU", "quick_gelu", (QUICK_GELU_A_MAX, QUICK_GELU_A_MAX_F),
             (QUICK_GELU_A_FAST, QUICK_GELU_A_FAST_F)),
            ("GELU", "gelu", (GELU_A_MAX, GELU_A_MAX_F), (GELU_A_FAST, GELU_A_FAST_F))):
        saturated, normal = [], []
        for (suffix, emin, precision, _), top, fast in zip(formats, a_max, a_fast):
            def underflow(a, emin=emin, precision=precision):  # both round to -0
                _, n, t = exp_argument_and_tails(name, a)
                return max(abs(n), abs(t)) < mp.mpf(2) ** (emin - precision)

            def abnormal(a, emin=emin):  # 2^k or a result below the normal range
                h, n, t = exp_argument_and_tails(name, a)
                return mp.nint(h / mp.log(2)) < emin or min(abs(n), abs(t)) < mp.mpf(2) ** emin

            saturated.append(first_where(underflow, 2, 4 * top))
            normal.append(first_where(abnormal, 2, 4 * top))
            k_max = mp.nint(exp_argument_and_tails(name, mp.mpf(top))[0] / mp.log(2))
            assert saturated[-1] <= top, (name, suffix, "A_MAX below saturation")
            # fa_scale splits 2^k into two normal factors: k must not pass 2 emin
            assert k_max >= 2 * emin, (name, suffix, "A_MAX too large for fa_scale")
            assert fast <= normal[-1], (name, suffix, "A_FAST too large")
        macro = f"FA_{name.upper()}"
        zero = "+0" if name == "sigmoid" else "-0"  # sigmoid is positive; x g(x) at x < 0 is not
        lines.append(f"/* {title}: f(-a), f'(-a) round to {zero} from a = {mp.nstr(saturated[0], 4)} "
                     f"(float32: {mp.nstr(saturated[1], 4)}) */")
        lines += [f"#define {macro}_A_MAX{suffix} {literal(top, suffix)}"
                  for (suffix, *_), top in zip(formats, a_max)]
        lines.append(f"/* {title}: 2^k and the results stay normal below a = {mp.nstr(normal[0], 4)} "
                     f"(float32: {mp.nstr(normal[1], 4)}) */")
        lines += [f"#define {macro}_A_FAST{suffix} {literal(fast, suffix)}"
                  for (suffix, *_), fast in zip(formats, a_fast)]
    lines.append("/* a/2 is subnormal below TINY: fa_tiny_magnitude decides its rounding ties */")
    for (suffix, emin, *_), exponent in zip(formats, (TINY_EXPONENT, TINY_EXPONENT_F)):
        assert exponent == emin + 1
        lines.append(f"#define FA_TINY{suffix} 0x1p{exponent}{'f' if suffix else ''}")
    return lines


def double_double(x):
    """x as hi + lo, two doubles whose sum is x to about 2^-106."""
    hi = float(x)
    return hi, float(x - mp.mpf(hi))


def constants():
    """(C name, value[, "f" for float]) of the constants the kernels need beyond the fits."""
    c1, c3 = tanh_coefficients()
    out = []
    for name, value in (("FA_TANH_C1", c1), ("FA_TANH_C3", c3)):
        hi, lo = double_double(value)
        out += [(name + "_HI", hi), (name + "_LO", lo)]
    out += [("FA_INV_SQRT_2PI", float(1 / mp.sqrt(2 * mp.pi))),
            ("FA_LOG2E", float(1 / mp.log(2)))]
    for name, value in (("FA_TANH_C1F", c1), ("FA_TANH_C3F", c3)):
        hi = to_float32(value)
        out += [(name + "_HI", hi, "f"), (name + "_LO", to_float32(value - mp.mpf(hi)), "f")]
    hi, lo = double_double(quick_gelu_c())
    out += [("FA_QUICK_GELU_C_HI", hi), ("FA_QUICK_GELU_C_LO", lo)]
    hi = to_float32(quick_gelu_c())
    out += [("FA_QUICK_GELU_C_HI_F", hi, "f"), ("FA_QUICK_GELU_C_LO_F", to_float32(quick_gelu_c() - mp.mpf(hi)), "f")]
    # float ln 2 with 16 significant bits: k * FA_LN2F_HI is exact for |k| < 2^8
    ln2f_hi = float(mp.mpf(int(mp.log(2) * 2**15)) / 2**15)
    out += [("FA_LN2F_HI", ln2f_hi, "f"), ("FA_LN2F_LO", to_float32(mp.log(2) - mp.mpf(ln2f_hi)), "f"),
            ("FA_LOG2EF", to_float32(1 / mp.log(2)), "f")]
    # float ln 2 to a multiple of 2^-9 (softmax's shifted exponential: c + k * hi exact for
    # c a multiple of 2^-9 below 2^14 and |k| < 2^8)
    ln2f_q9_hi = float(mp.nint(mp.log(2) * 2**9) / 2**9)
    out += [("FA_LN2F_Q9_HI", ln2f_q9_hi, "f"), ("FA_LN2F_Q9_LO", to_float32(mp.log(2) - mp.mpf(ln2f_q9_hi)), "f")]
    # ln 2, sqrt(2) for log1p; 1/6 for the fast tier's hardsigmoid and hardswish (a division
    # by 6 as two products); SELU's constants (PyTorch's), scale * alpha as hi + lo
    for name, value in (("FA_LN2", mp.log(2)), ("FA_SIXTH", mp.mpf(1) / 6)):
        hi, lo = double_double(value)
        out += [(name + "_DD_HI", hi), (name + "_DD_LO", lo)]
        out += [(name + "F_DD_HI", to_float32(value), "f"), (name + "F_DD_LO", to_float32(value - mp.mpf(to_float32(value))), "f")]
    out += [("FA_SQRT2", float(mp.sqrt(2))), ("FA_SQRT2F", to_float32(mp.sqrt(2)), "f")]
    selu_alpha = mp.mpf("1.6732632423543772848170429916717")
    selu_scale = mp.mpf("1.0507009873554804934193349852946")
    hi, lo = double_double(float(selu_scale) * mp.mpf(float(selu_alpha)))
    out += [("FA_SELU_SCALE", float(selu_scale)), ("FA_SELU_SCALE_ALPHA_HI", hi), ("FA_SELU_SCALE_ALPHA_LO", lo),
            ("FA_SELU_SCALEF", to_float32(selu_scale), "f"),
            ("FA_SELU_SCALE_ALPHAF", to_float32(float(selu_scale) * mp.mpf(float(selu_alpha))), "f")]
    # ln 2 split so that k * FA_LN2_HI is exact for |k| < 2^21 (low 21 bits zero).
    ln2_hi = float(mp.mpf(int(mp.log(2) * 2**32)) / 2**32)
    out += [("FA_LN2_HI", ln2_hi), ("FA_LN2_LO", float(mp.log(2) - mp.mpf(ln2_hi)))]
    return out


def float_tables16(name, mids, rows, place):
    """C lines: NAME_MID[16] and NAME[degree + 1][16], float, each row laid out by place()"""
    row = lambda values: ", ".join(f"{v.hex()}f" for v in place(values))  # noqa: E731
    lines = [f"static const float {name}_MID[16] = {{{row(mids)}}};",
             f"static const float {name}[{len(rows[0])}][16] = {{"]
    lines += [f"    {{{row([r[j] for r in rows])}}}," for j in range(len(rows[0]))]
    return lines + ["};", ""]


def table16_lines(name, rows, worst, about, defines):
    """C lines: a comment (the lines of `about`, then the fits' worst error),
    NAME_DEGREE and the other #defines, and NAME[degree + 1][16] of float
    coefficients, entry i of each row from rows[i]"""
    degree = len(rows[0]) - 1
    text = [f"/* {about[0]}"] + [f" * {line}" for line in about[1:]]
    text += [f" * Max relative error of the rounded fits (c0's rounding included) {mp.nstr(worst, 3)}",
             f" * (2^{mp.nstr(mp.log(worst, 2), 4)}). */", f"#define {name}_DEGREE {degree}"]
    text += [f"#define {name}_{key} {value}" for key, value in defines]
    text.append(f"static const float {name}[{degree + 1}][16] = {{")
    text += ["    {" + ", ".join(f"{r[j].hex()}f" for r in rows) + "}," for j in range(degree + 1)]
    return text + ["};", ""]


def render():
    lines = [
        "/* Generated by tools/fit_coeffs.py -- do not edit; rerun the script. */",
        "#ifndef FA_COEFFS_H",
        "#define FA_COEFFS_H",
        "",
        *threshold_lines(),
        "",
    ]
    lines += [f"#define {name} {value.hex()}{suffix} /* {value!r} */"
              for name, value, *float_suffix in constants() for suffix in [''.join(float_suffix)]]
    lines.append("")
    for name, coeffs, c0_lo, domain, err, ctype in polynomials():
        lines.append(f"/* {domain}; max relative error of the rounded fit {mp.nstr(err, 3)}"
                     f" (2^{mp.nstr(mp.log(err, 2), 4)}). Lowest degree first. */")
        lines.append(f"#define {name}_DEGREE {len(coeffs) - 1}")
        suffix = "f" if ctype == "float" else ""
        lines.append(f"#define {name}_C0_LO {c0_lo.hex()}{suffix}")
        lines.append(f"static const {ctype} {name}[{len(coeffs)}] = {{")
        lines += [f"    {c.hex()}{suffix}," for c in coeffs]
        lines.append("};")
        lines.append("")
    for suffix, (intervals, first, degree, rounded) in GELU_G.items():
        mids, c0_los, rows, worst = gelu_g_tables(intervals, degree, rounded)
        ctype, literal = ("float", "f") if suffix == "F" else ("double", "")
        name = f"FA_GELU_G{suffix}"
        lines.append(f"/* G(a) = exp(a^2/2) Phi(-a) on {intervals} (then repeated to fill 8),")
        lines.append(f" * degree {degree} in v = a - mid, {ctype}; interval index = max(exponent bits - "
                     f"{first}, 0).")
        lines.append(f" * Max relative error of the rounded fits {mp.nstr(worst, 3)} "
                     f"(2^{mp.nstr(mp.log(worst, 2), 4)}). */")
        lines.append(f"#define {name}_DEGREE {degree}")
        lines.append(f"#define {name}_FIRST_EXPONENT {first}")
        row = lambda values: ", ".join(f"{v.hex()}{literal}" for v in values)  # noqa: E731
        lines.append(f"static const {ctype} {name}_MID[8] = {{{row(mids)}}};")
        lines.append(f"static const {ctype} {name}_C0_LO[8] = {{{row(c0_los)}}};")
        lines.append(f"static const {ctype} {name}[{degree + 1}][8] = {{")
        for j in range(degree + 1):
            lines.append(f"    {{{row([r[j] for r in rows])}}},")
        lines.append("};")
        lines.append("")
    offset, degree, rounded = GELU_G_FAST_F["offset"], GELU_G_FAST_F["degree"], GELU_G_FAST_F["rounded"]
    intervals = half_binades(offset, 8)
    mids, c0_los, rows, worst = gelu_g_tables(intervals, degree, rounded)
    first = struct.unpack("<I", struct.pack("<f", offset))[0] >> 22
    name = "FA_GELU_GF_FAST"
    lines.append(f"/* fast tier: G(a) on {intervals}, degree {degree} in v = a - mid, float, no")
    lines.append(f" * compensated step; interval index = (bits of a + {offset!r}) >> 22, minus {first}.")
    lines.append(f" * Max relative error of the rounded fits (c0's rounding aside) {mp.nstr(worst, 3)} "
                 f"(2^{mp.nstr(mp.log(worst, 2), 4)}). */")
    lines.append(f"#define {name}_DEGREE {degree}")
    lines.append(f"#define {name}_OFFSET {offset.hex()}f")
    lines.append(f"#define {name}_FIRST {first}")
    row = lambda values: ", ".join(f"{v.hex()}f" for v in values)  # noqa: E731
    lines.append(f"static const float {name}_MID[8] = {{{row(mids)}}};")
    lines.append(f"static const float {name}[{degree + 1}][8] = {{")
    for j in range(degree + 1):
        lines.append(f"    {{{row([r[j] for r in rows])}}},")  # c0's low part: below the fast tier's notice
    lines.append("};")
    lines.append("")
    offset, degree, rounded = GELU_H_FAST_F["offset"], GELU_H_FAST_F["degree"], GELU_H_FAST_F["rounded"]
    intervals = half_binades(offset, 8)
    mids, rows, worst = gelu_h_tables(intervals, degree, rounded)
    first = struct.unpack("<I", struct.pack("<f", offset))[0] >> 22
    # interval n sits at (first + n) mod 8, twice: the kernels index with
    # bits(a + offset) >> 22 as it is (vf_lookup8_wrap)
    wrap = lambda values: [values[(p - first) % 8] for p in range(16)]  # noqa: E731
    name = "FA_GELU_HF_FAST"
    lines.append(f"/* fast tier forward: H(a) = a G(a) on {intervals},")
    lines.append(f" * degree {degree} in v = a - mid (mid 0 and c0 = 0 on the first), float, plain Horner.")
    lines.append(f" * Interval index (bits of a + {offset!r}) >> 22, taken mod 8: interval n at")
    lines.append(f" * ({first} + n) mod 8 and 8 places on. Max relative error of the rounded fits")
    lines.append(f" * (c0's rounding included) {mp.nstr(worst, 3)} (2^{mp.nstr(mp.log(worst, 2), 4)}). */")
    lines.append(f"#define {name}_DEGREE {degree}")
    lines.append(f"#define {name}_OFFSET {offset.hex()}f")
    lines += float_tables16(name, mids, rows, wrap)
    floor, degree, clamp = TANH_FAST_F["floor"], TANH_FAST_F["degree"], TANH_FAST_F["clamp"]
    assert to_float32(clamp) > 9.0109 and mp.tanh(to_float32(clamp)) > 1 - mp.mpf(2) ** -25, "clamp: tanh rounds to 1"
    start = 1.5 * floor  # the half-binade of the floor: below it every a shares its index
    intervals = [(0.0, start)] + [(lo + start, hi + start) for lo, hi in half_binades(start, 15)]
    mids, rows, worst = tanh_tables(intervals, degree, to_float32(clamp), to_float32)
    first = struct.unpack("<I", struct.pack("<f", floor))[0] >> 22
    used = len(mids)
    assert used <= 16
    # interval n at (first + n) mod 16, the unused places repeating the last
    wrap16 = lambda values: [values[min((p - first) % 16, used - 1)] for p in range(16)]  # noqa: E731
    name = "FA_TANHF_FAST"
    edges = ", ".join(f"{lo:g}" for lo, _ in intervals[:used])
    lines.append(f"/* fast tier tanh, float: tanh(a) on the intervals from {edges}")
    lines.append(f" * to the clamp {to_float32(clamp)!r} (tanh rounds to 1 from 9.011); degree {degree}")
    lines.append(f" * in v = a - mid (mid 0 and c0 = 0 on the first), plain Horner. Interval index")
    lines.append(f" * (bits of max(a, {floor!r})) >> 22, taken mod 16: interval n at ({first} + n) mod 16.")
    lines.append(f" * Max relative error of the rounded fits (c0's rounding included) {mp.nstr(worst, 3)}")
    lines.append(f" * (2^{mp.nstr(mp.log(worst, 2), 4)}). */")
    lines.append(f"#define {name}_DEGREE {degree}")
    lines.append(f"#define {name}_FLOOR {floor.hex()}f")
    lines.append(f"#define {name}_CLAMP {to_float32(clamp).hex()}f")
    lines += float_tables16(name, mids, rows, wrap16)
    degree, count = LOG1P_EXP_FAST_F["degree"], LOG1P_EXP_FAST_F["count"]
    rows, worst = log1p_exp_tables(count, degree)
    lines += table16_lines(
        "FA_LOG1P_EXPF_FAST", rows, worst,
        [f"fast tier softplus and log-sigmoid, float: log(1 + e^-a) for a below {count - 0.5!r}, degree",
         f"{degree} in r = a - k, k = round(a) (interval index k, 0 to {count - 1}), plain Horner."],
        [("TAIL", f"{float(count - 0.5).hex()}f")])
    degree, width = MISH_FAST_F["degree"], MISH_FAST_F["width"]
    m_low, m_high = MISH_FAST_F["m_low"], MISH_FAST_F["m_high"]
    rows, worst = mish_tables(degree, width, m_low, m_high)
    lines += table16_lines(
        "FA_MISHF_FAST", rows, worst,
        [f"fast tier Mish, float: tanh(softplus(x)) for x in [{width * m_low - width / 2!r}, "
         f"{width * m_high + width / 2!r}], degree {degree}",
         f"in r = x - {width!r} m, m = round(x / {width!r}) (interval index m mod 16), plain Horner."],
        [("WIDTH", f"{float(width).hex()}f")])
    # its exponential: exp(-s/2) = 1 + s Q(s), s = a^2 - 2k ln2, |s| <= ln2 (and k's slack)
    s_max = mp.log(2) + mp.mpf(2) ** -14
    degree = GELU_EXP_FAST_F["degree"]
    c, _ = fit_sequential(gelu_exp_q, -s_max, s_max, degree, to_float32)
    err = max_rel_error(lambda t: mp.exp(-t / 2), c, -s_max, s_max, wrap=lambda q, t: 1 + t * q)
    lines.append(f"/* fast tier forward: exp(-s/2) = 1 + s Q(s), |s| <= ln2 + 2^-14, Q of degree {degree}")
    lines.append(f" * in float; max relative error of the rounded fit {mp.nstr(err, 3)} "
                 f"(2^{mp.nstr(mp.log(err, 2), 4)}). Lowest degree first. */")
    lines.append(f"#define FA_GELU_EXPF_FAST_DEGREE {degree}")
    lines.append(f"static const float FA_GELU_EXPF_FAST[{degree + 1}] = {{{row(c)}}};")
    lines.append("")
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the header differs")
    args = parser.parse_args()
    with mp.workdps(DPS):
        text = render()
    if args.check:
        if HEADER.read_text() != text:
            sys.exit(f"{HEADER} is stale: rerun tools/fit_coeffs.py")
        print(f"{HEADER} is up to date")
        return
    HEADER.write_text(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
