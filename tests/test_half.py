"""float16 and bfloat16: every one of the 65536 values of each type, through
every elementwise function, tier and direction, under every kernel set.

The 16-bit types are computed in float32 and rounded once to the type, so a
result may differ from the exact value by half a ULP of the 16-bit type plus
the float32 kernel's own error (its bound, in float32 ULPs of the result, or
of the derivative's largest term backward). A float32 result exactly halfway
between two 16-bit values is recomputed in float64 rather than rounded to
even, so tiny results come out right: gelu(2^-24) is 2^-24, not 0.

The reference is the float64 reference of fastact._reference at the exactly
widened inputs (its error is far below a float32 ULP).
"""
import contextlib
import functools
from fractions import Fraction

import numpy as np
import pytest

import fastact as fa
from fastact import _ext
from conftest import TESTABLE_ISAS, fixed_split, forced_threads
from fastact import _reference as ref
from fastact._manifest import OPS_BY_NAME, TIERS
from fastact._registry import VARIANTS

try:
    import ml_dtypes
except ImportError:  # bfloat16 loops exist only with ml_dtypes
    ml_dtypes = None

# name -> (dtype, significand bits, smallest normal exponent, largest finite value)
HALF_TYPES = {"float16": (np.dtype(np.float16), 11, -14, 65504.0)}
if ml_dtypes is not None:
    HALF_TYPES["bfloat16"] = (np.dtype(ml_dtypes.bfloat16), 8, -126,
                              float(ml_dtypes.finfo(ml_dtypes.bfloat16).max))
FLOAT32_ULP = 2.0**-23
# an exact function's float32 kernel is correctly rounded, or (with a float64
# parameter such as leaky_relu's slope) within a float32 ULP
EXACT_FLOAT32_ULP = 1.0


def widen(a):
    """float64 values of a 16-bit array (ml_dtypes' cast flags signaling NaNs)."""
    with np.errstate(invalid="ignore"):
        return a.astype(np.float64)


def all_values(name):
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(HALF_TYPES[name][0])


def spacing(v, bits, emin):
    """The type's ULP at the float64 values v: its binade's power of two, scaled."""
    exponent = np.frexp(np.where(np.isfinite(v) & (v != 0), np.abs(v), 2.0**emin))[1] - 1
    return np.ldexp(1.0, np.maximum(exponent, emin) - (bits - 1))


def check(what, x, got, expected, scale, float32_ulps, name):
    """got (16-bit) against expected (float64): within half a 16-bit ULP of it
    plus float32_ulps float32 ULPs of scale; NaN where expected is NaN,
    the infinity where expected is infinite or beyond the type's range."""
    dtype, bits, emin, largest = HALF_TYPES[name]
    got64 = widen(got)
    assert got.dtype == dtype, f"{what}: {got.dtype}"
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got64), nan), f"{what}: NaN where the reference has none, or back"
    half_ulp = 0.5 * spacing(np.array([largest]), bits, emin)[0]
    with np.errstate(invalid="ignore"):  # at or past half an ULP beyond the largest value, or nearly
        overflow = np.abs(expected) >= (largest + half_ulp) * (1 - float32_ulps * 2.0**-23)
    inf_ok = overflow & (got64 == np.copysign(np.inf, expected))
    with np.errstate(invalid="ignore"):
        allowed = (0.5 * spacing(expected, bits, emin)
                   + float32_ulps * spacing(scale, 24, -126)) * (1 + 2.0**-30)
    with np.errstate(invalid="ignore"):
        err = np.abs(got64 - expected)
    bad = ~nan & ~inf_ok & ~(err <= allowed)
    if bad.any():
        i = np.flatnonzero(bad)[0]
        ulps = err[i] / spacing(expected[i:i + 1], bits, emin)[0]
        raise AssertionError(
            f"{what}: {np.count_nonzero(bad)} results out of bounds; x = {float(x[i])!r} "
            f"(0x{x[i:i + 1].view(np.uint16)[0]:04x}): got {float(got64[i])!r}, expected "
            f"{expected[i]!r} ({ulps:.4f} ULP of {name}; allowed "
            f"{allowed[i] / spacing(expected[i:i + 1], bits, emin)[0]:.4f})")


def worst_ulps(got, expected, name):
    dtype, bits, emin, _ = HALF_TYPES[name]
    finite = np.isfinite(expected) & np.isfinite(widen(got))
    err = np.abs(widen(got) - expected)[finite] / spacing(expected[finite], bits, emin)
    return float(err.max()) if err.size else 0.0


@pytest.fixture(scope="module", params=list(HALF_TYPES))
def half(request):
    return request.param


@pytest.fixture(scope="module", params=list(VARIANTS))
def variant(request):
    return VARIANTS[request.param]


@pytest.fixture(scope="module")
def reference(variant, half):
    """One variant's float64 references over every value of one type, shared by the ISAs."""
    x = all_values(half)
    wide = widen(x)
    with np.errstate(all="ignore"):
        forward = variant.ref_forward(wide)
        backward = variant.ref_backward(np.ones_like(wide), wide)
        scale = np.abs(forward) if variant.op.exact else variant.ref_backward_scale(wide)
    return x, forward, backward, scale


def bounds(variant):
    if variant.op.exact:  # the piecewise functions' 16-bit routes: exact in either tier
        return EXACT_FLOAT32_ULP, EXACT_FLOAT32_ULP
    return variant.forward_ulp, variant.backward_ulp


def quiet():
    return np.errstate(over="ignore")


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_every_value(isa, variant, half, reference, direction):
    x, forward, backward, scale = reference
    fwd_ulps, bwd_ulps = bounds(variant)
    with quiet():
        if direction == "forward":
            got = variant.forward(x)
            check(f"{variant.key} {half} [{isa}]", x, got, forward, forward, fwd_ulps, half)
        else:
            got = variant.backward(np.ones_like(x), x)
            check(f"{variant.key}_backward {half} [{isa}]", x, got, backward,
                  np.abs(backward) if variant.op.exact else scale, bwd_ulps, half)


# smooth functions without parameters: their 16-bit forward results are
# correctly rounded (the others are held to the bound above)
SMOOTH = [key for key, v in VARIANTS.items() if not v.op.exact and not v.op.params and "fast" in v.op.tiers]


def correctly_rounded(forward, x, name, half):
    """The float64 values `forward` = name(x) rounded once to the type, and the
    count of those float64 itself puts exactly on a tie (bfloat16's inputs
    below 2^-125 whose half is one: gelu(x) = x/2 + x²/√(2π), and x² is past
    float64's precision), where the exact value from mpmath picks the side."""
    import mpmath
    _, bits, emin, _ = HALF_TYPES[half]
    with np.errstate(all="ignore"):
        expected = widen(round_once(forward, half))
        ulp = spacing(forward, bits, emin)
        undecided = np.isfinite(forward) & (np.abs(forward) / ulp % 1 == 0.5)
    if undecided.any():
        from exact_activations import ACTIVATIONS
        exact = ACTIVATIONS[name][0]
        with mpmath.workdps(80):
            side = [np.sign(float(exact(mpmath.mpf(float(v))) - mpmath.mpf(float(t))))
                    for v, t in zip(widen(x[undecided]), forward[undecided])]
        assert 0 not in side
        expected[undecided] = forward[undecided] + np.array(side) * 0.5 * ulp[undecided]
    return expected, np.count_nonzero(undecided)


@pytest.mark.parametrize("variant", SMOOTH, indirect=True)
def test_smooth_forward_is_correctly_rounded(isa, variant, half, reference):
    """Results near a 16-bit tie are recomputed in float64 (loops.c), so every
    one is the exact value rounded once, in both tiers, the float64 kernel's
    own ties included."""
    x, forward, _, _ = reference
    with quiet():
        got = widen(variant.forward(x))
    expected, undecided = correctly_rounded(forward, x, variant.op.name, half)
    wrong = ~(np.isnan(expected) & np.isnan(got)) & (got != expected)
    assert not wrong.any(), (f"{variant.key} {half} [{isa}]: {np.count_nonzero(wrong)} results not "
                             f"correctly rounded, first at x = {float(x[wrong][0])!r}")
    assert undecided <= (0 if half == "float16" else 256), undecided


def test_backward_scales_grad_output(isa, variant, half, reference):
    """grad_output other than 1: each product rounded once too."""
    x, _, _, scale = reference
    rng = np.random.default_rng(7)
    g = rng.normal(0, 2, x.size).astype(np.float32).astype(HALF_TYPES[half][0])
    wide_g = widen(g)
    with np.errstate(all="ignore"):
        expected = variant.ref_backward(wide_g, widen(x))
        scale_g = np.abs(expected) if variant.op.exact else np.abs(wide_g) * scale
    with quiet():
        got = variant.backward(g, x)
    _, bwd_ulps = bounds(variant)
    check(f"{variant.key}_backward(g) {half} [{isa}]", x, got, expected, scale_g, bwd_ulps, half)


def test_same_bits_on_every_isa_and_layout(variant, half):
    """Every kernel set, contiguous or strided, in place or not: the same bits."""
    x = all_values(half)
    g = np.full_like(x, 1.5)
    results = []
    for name in fa.available_isas() + ["scalar"]:
        with _isa(name), quiet():
            results.append(variant.forward(x).view(np.uint16))
            strided = np.empty(2 * x.size, x.dtype)[::2]
            strided[...] = x
            results.append(variant.forward(strided).view(np.uint16))
            in_place = x.copy()
            variant.forward(in_place, out=in_place)
            results.append(in_place.view(np.uint16))
            results.append(variant.backward(g, x).view(np.uint16))
    forwards = results[0::4]
    backwards = results[3::4]
    for r in forwards[1:] + results[1::4] + results[2::4]:
        np.testing.assert_array_equal(forwards[0], r)
    for r in backwards[1:]:
        np.testing.assert_array_equal(backwards[0], r)


# unary forward functions without one-pass code of their own look 16-bit
# results up in a table of all 65536, filled by the computing path
TABLED = [key for key, v in VARIANTS.items()
          if v.name not in ("relu", "relu6", "hardsigmoid", "hardtanh", "leaky_relu")]


@contextlib.contextmanager
def _tables(on):
    previous = _ext.table16(on)
    try:
        yield
    finally:
        _ext.table16(previous)


@pytest.mark.parametrize("variant", TABLED, indirect=True)
def test_tables_give_the_computed_bits(variant, half):
    """Under every kernel set, a table of all results (table16.c) gives the bits
    the computing path gives, contiguous, strided, in place and overlapping
    by one element; small calls before a table is filled compute."""
    x = all_values(half)
    strided = np.empty(2 * x.size, x.dtype)[::2]
    strided[...] = x

    def layouts():
        """contiguous, strided, reversed, in place, out= one element behind
        the input (read before written) and one ahead (NumPy copies first)"""
        got = [variant.forward(x), variant.forward(strided), variant.forward(x[::-1])[::-1]]
        in_place = x.copy()
        variant.forward(in_place, out=in_place)
        shifted = np.concatenate([x[:1], x])
        variant.forward(shifted[1:], out=shifted[:-1])
        behind = np.concatenate([x, x[-1:]])
        variant.forward(behind[:-1], out=behind[1:])
        return [r.view(np.uint16) for r in got + [in_place, shifted[:-1], behind[1:]]]

    for isa_name in TESTABLE_ISAS:
        with _isa(isa_name), quiet(), forced_threads(2), fixed_split(4096):
            with _tables(False):
                computed = variant.forward(x).view(np.uint16)
                for got in layouts():
                    np.testing.assert_array_equal(got, computed, err_msg=isa_name)
            _ext.table16_forget()
            published = _ext.table16_published()
            with _tables(True):
                for start in range(0, x.size, 4099):  # filled part way through
                    part = variant.forward(x[start:start + 4099]).view(np.uint16)
                    np.testing.assert_array_equal(part, computed[start:start + 4099], err_msg=isa_name)
                # hardswish's one-pass loop serves contiguous data on AVX-512
                # (loops.c): there only a strided call fills its table
                one_pass = variant.name == "hardswish" and isa_name == "avx512"
                if one_pass:
                    assert _ext.table16_published() == published, "a contiguous call filled a table"
                    np.testing.assert_array_equal(variant.forward(strided).view(np.uint16), computed)
                assert _ext.table16_published() == published + 1, "no table was filled"
                for got in layouts():
                    np.testing.assert_array_equal(got, computed, err_msg=isa_name)


# the smooth functions' backward: g times the float32 derivative at g = 1,
# which a table of all 65536 x can hold
DERIVED = [key for key, v in VARIANTS.items() if not v.op.exact]


@pytest.mark.parametrize("variant", DERIVED, indirect=True)
def test_derivative_tables_give_the_computed_bits(variant, half):
    """Backward with a table of derivatives gives the computing path's bits,
    for a random grad_output with zeros, infinities and NaN: contiguous,
    strided, in place over x or over grad_output, and part by part while
    the table fills."""
    x = all_values(half)
    g = np.random.default_rng(11).normal(0, 2, x.size).astype(np.float32).astype(x.dtype)
    g[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 65504.0 if half == "float16" else 1e38]
    # NaN g over NaN x with other payloads: g's NaN, whichever operand order
    nan_x = np.flatnonzero(np.isnan(widen(x)))[::2]
    g.view(np.uint16)[nan_x] = 0x7e01 if half == "float16" else 0x7fc1
    strided_x = np.empty(2 * x.size, x.dtype)[::2]
    strided_x[...] = x
    strided_g = np.empty(2 * g.size, g.dtype)[::2]
    strided_g[...] = g

    def layouts():
        """contiguous, strided x, strided g (x contiguous: the block path's
        lookups, fa_table16_scale), reversed, in place over x and over g"""
        got = [variant.backward(g, x), variant.backward(g, strided_x), variant.backward(strided_g, x),
               variant.backward(g[::-1], x[::-1])[::-1]]
        over_x, over_g = x.copy(), g.copy()
        variant.backward(g, over_x, out=over_x)
        variant.backward(over_g, x, out=over_g)
        return [r.view(np.uint16) for r in got + [over_x, over_g]]

    for isa_name in TESTABLE_ISAS:
        with _isa(isa_name), quiet(), forced_threads(2), fixed_split(4096):
            with _tables(False):
                computed = variant.backward(g, x).view(np.uint16)
                for got in layouts():
                    np.testing.assert_array_equal(got, computed, err_msg=isa_name)
            _ext.table16_forget()
            published = _ext.table16_published()
            with _tables(True):
                for start in range(0, x.size, 4099):
                    part = variant.backward(g[start:start + 4099], x[start:start + 4099]).view(np.uint16)
                    np.testing.assert_array_equal(part, computed[start:start + 4099], err_msg=isa_name)
                assert _ext.table16_published() == published + 1, "no table was filled"
                for got in layouts():
                    np.testing.assert_array_equal(got, computed, err_msg=isa_name)


# ---- the derivatives from the forward's output, g·f'(y) ----------------------

FROM_OUTPUT = {"sigmoid": ref.sigmoid_backward_from_output, "tanh": ref.tanh_backward_from_output}


def from_output_inputs(half, seed, name=None):
    """Every 16-bit y (those the function can output, given its name), a
    random g (zeros, infinities and NaN among them), and NaN g with other
    payloads over NaN y."""
    y = all_values(half)
    if name is not None:
        wide = widen(y)
        y = y[np.isnan(wide) | ((wide >= (0 if name == "sigmoid" else -1)) & (wide <= 1))]
    g = np.random.default_rng(seed).normal(0, 2, y.size).astype(np.float32).astype(y.dtype)
    g[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 65504.0 if half == "float16" else 1e38]
    nan_y = np.flatnonzero(np.isnan(widen(y)))[::2]
    g.view(np.uint16)[nan_y] = 0x7e01 if half == "float16" else 0x7fc1
    return g, y


@functools.lru_cache(maxsize=None)
def straddling_inputs(half, name):
    """(g, y) pairs, g in [1, 2), whose float32 value (1 - y² or y - y²
    rounded, then the product) rounds to another 16-bit value than the
    exact one, on a tie or not: found here by trying every g in [1, 2)
    with every y."""
    y = from_output_inputs(half, 0, name)[1]
    y = y[np.isfinite(widen(y))]
    ones = all_values(half)[np.flatnonzero((widen(all_values(half)) >= 1) & (widen(all_values(half)) < 2))]
    g = np.repeat(ones, y.size)
    y = np.tile(y, ones.size)
    g64, y64, y32 = widen(g), widen(y), widen(y).astype(np.float32)
    d32 = y32 - y32 * y32 if name == "sigmoid" else np.float32(1) - y32 * y32  # y² exact: one rounding
    float32_value = (g64 * d32).astype(np.float32).astype(np.float64)
    exact = g64 * (y64 - y64 * y64 if name == "sigmoid" else 1 - y64 * y64)  # exact for float16
    differ = widen(round_once(float32_value, half)) != widen(round_once(exact, half))
    return g[differ], y[differ]


def exact_rounded(g, y, approx, half, exact_of):
    """The exact values of exact_of(g, y) rounded once to the type, as
    float64: rounded from the float64 approximation, except where that lies
    within 2^-20 ULP of a tie, which are rounded in rationals."""
    _, bits, emin, _ = HALF_TYPES[half]
    result = widen(round_once(approx, half))
    with np.errstate(all="ignore"):
        ulp = spacing(approx, bits, emin)
        near = np.isfinite(approx) & (np.abs(np.abs(approx) / ulp % 1 - 0.5) < 2.0**-20)
    for i in np.flatnonzero(near):
        value = exact_of(Fraction(widen(g[i : i + 1])[0]), Fraction(widen(y[i : i + 1])[0]))
        step = Fraction(ulp[i])
        whole, rest = divmod(abs(value), step)
        up = rest > step / 2 or (rest == step / 2 and whole % 2 == 1)
        result[i] = float((whole + up) * step) * (1 if value >= 0 else -1)
    return result


@pytest.mark.parametrize("name", FROM_OUTPUT)
def test_from_output_every_value(isa, name, half):
    """g·f'(y) for every 16-bit y the function outputs (and NaN), with g
    random and g, y pairs whose float32 value rounds the other way: within
    half an ULP of the type plus the float32 kernel's bound; in float16, the
    exact value rounded once (float32 values near a tie recomputed, or the
    exact value rounded to odd), checked in rationals wherever it lies near a
    tie; in both types, where the float32 value sits on a tie, decided by
    the exact value's side of it."""
    fn = getattr(fa, f"{name}_backward_from_output")
    bound = OPS_BY_NAME[f"{name}_backward_from_output"].forward_ulp  # float32 ULPs of the result
    _, bits, emin, _ = HALF_TYPES[half]
    decided = inexact = 0
    hard_g, hard_y = straddling_inputs(half, name)
    if half == "float16":  # bfloat16's tanh has none, its sigmoid's are rare
        assert hard_g.size > 20, hard_g.size
        if name == "sigmoid":  # and some off a tie, which only a window catches
            with np.errstate(all="ignore"):
                y32 = widen(hard_y).astype(np.float32)
                p32 = (widen(hard_g) * (y32 - y32 * y32)).astype(np.float32)
            assert np.count_nonzero(np.abs(p32).view(np.uint32) & 0x1FFF != 0x1000) > 0
    for seed in range(8):
        g, y = from_output_inputs(half, seed, name)
        g, y = np.concatenate([g, g[::-1], hard_g]), np.concatenate([y, y, hard_y])  # more products, more ties
        with np.errstate(all="ignore"):
            exact = FROM_OUTPUT[name](widen(g), widen(y))  # long double: exact for float16's g and y
            d32 = (widen(y) - widen(y) ** 2 if name == "sigmoid" else 1 - widen(y) ** 2).astype(np.float32)
            p32 = (widen(g) * d32.astype(np.float64)).astype(np.float32).astype(np.float64)
        with quiet():
            got = fn(g, y)
        check(f"{name}_backward_from_output {half} [{isa}]", y, got, exact.astype(np.float64),
              np.abs(exact.astype(np.float64)), bound, half)
        if half == "float16":  # correctly rounded (bfloat16: the tie rule below)
            correct = exact_rounded(g, y, exact.astype(np.float64), half,
                                    lambda gi, yi: gi * (yi - yi * yi if name == "sigmoid" else 1 - yi * yi))
            finite = np.isfinite(correct)
            np.testing.assert_array_equal(widen(got[finite]), correct[finite],
                                          err_msg=f"{name} {half} [{isa}]: not the exact value rounded once")
        with np.errstate(all="ignore"):
            on_tie = np.isfinite(p32) & (p32 != 0) & (np.abs(p32) / spacing(p32, bits, emin) % 1 == 0.5)
        # the exact value's side of each tie, in rationals (bfloat16's y reach
        # 2^-133: g·y² is past even long double's precision)
        ulp = spacing(p32[on_tie], bits, emin)
        expected = []
        for gi, yi, tie, step in zip(widen(g[on_tie]), widen(y[on_tie]), p32[on_tie], ulp):
            gi, yi, tie = Fraction(gi), Fraction(yi), Fraction(tie)
            value = gi * (yi - yi * yi if name == "sigmoid" else 1 - yi * yi)
            side = (value > tie) - (value < tie)
            inexact += side != 0
            expected.append(float(tie + side * Fraction(step) / 2) if side else np.nan)
        expected = np.array(expected)
        exact_tie = np.isnan(expected)  # rounded to nearest even, as the tie itself
        expected[exact_tie] = widen(round_once(p32[on_tie][exact_tie], half))
        np.testing.assert_array_equal(widen(got[on_tie]), expected,
                                      err_msg=f"{name} {half} [{isa}]: a float32 tie rounded twice")
        decided += np.count_nonzero(on_tie)
    print(f"{name} {half}: {decided} float32 ties, {inexact} of inexact values")
    assert decided > 20, decided
    if half == "float16":  # float32 ties of inexact products: the recomputation decides them
        assert inexact > 0, inexact


@pytest.mark.parametrize("name", FROM_OUTPUT)
def test_from_output_same_bits_on_every_isa_and_layout(name, half):
    """The one-pass loops (AVX2, AVX-512) and the three passes (scalar,
    strided): the same bits, NaN payloads included: y's NaN where y is
    NaN, g's where g is (over y's)."""
    fn = getattr(fa, f"{name}_backward_from_output")
    g, y = from_output_inputs(half, 11)
    strided_y = np.empty(2 * y.size, y.dtype)[::2]
    strided_y[...] = y
    with _isa("scalar"), quiet():
        computed = fn(g, y).view(np.uint16)
    nan_g, nan_y = np.isnan(widen(g)), np.isnan(widen(y))
    quiet_bit = 0x0200 if half == "float16" else 0x0040
    np.testing.assert_array_equal(computed[nan_g], g.view(np.uint16)[nan_g] | quiet_bit)
    np.testing.assert_array_equal(computed[nan_y & ~nan_g], y.view(np.uint16)[nan_y & ~nan_g] | quiet_bit)
    for isa_name in TESTABLE_ISAS:
        with _isa(isa_name), quiet(), forced_threads(2), fixed_split(4096):
            over_y, over_g = y.copy(), g.copy()
            fn(g, over_y, out=over_y)
            fn(over_g, y, out=over_g)
            for got in (fn(g, y), fn(g, strided_y), fn(g[::-1], y[::-1])[::-1], over_y, over_g,
                        fn(g[1:], y[1:])):
                np.testing.assert_array_equal(got.view(np.uint16), computed[-got.size:], err_msg=isa_name)


@pytest.mark.parametrize("name, param_sets", [
    ("elu", [{"alpha": -0.0}, {"alpha": 0.0}, {"alpha": 0.5}]),
    ("celu", [{"alpha": 2.0}, {"alpha": 1.0}]),
    ("softplus", [{"beta": 2.0, "threshold": 5.0}, {"beta": 2.0, "threshold": 20.0}, {}])])
def test_tables_hold_their_parameters(name, param_sets, half):
    """A table holds the results for one set of parameters, told apart bit for
    bit (alpha -0.0 is not 0.0): other parameters compute."""
    x = all_values(half)
    forward = getattr(fa, name)
    for isa_name in TESTABLE_ISAS:
        with _isa(isa_name), quiet():
            with _tables(False):
                computed = [forward(x, **params).view(np.uint16) for params in param_sets]
            assert not all(np.array_equal(computed[0], c) for c in computed[1:])
            _ext.table16_forget()
            with _tables(True):
                for _ in range(2):  # the first fills the table; then looked up, or computed
                    for params, want in zip(param_sets, computed):
                        got = forward(x, **params).view(np.uint16)
                        np.testing.assert_array_equal(got, want, err_msg=f"{isa_name} {params}")


@pytest.mark.parametrize("name, params", [("relu6", {}), ("hardtanh", {"min_val": -0.3, "max_val": 2.7}),
                                          ("hardsigmoid", {}), ("leaky_relu", {"negative_slope": 0.37}),
                                          ("leaky_relu", {"negative_slope": 1e-39}),
                                          ("leaky_relu", {"negative_slope": 3e30})])
def test_one_pass_piecewise_tails_and_parameters(name, params, half):
    """relu6, hardtanh, hardsigmoid and leaky_relu take one pass over contiguous
    16-bit data (piecewise16.c): every length up to three vectors, at every
    offset, parameters rounded to float32 (-0.3 is not a 16-bit value; 1e-39
    is a subnormal slope; 3e30 overflows) give the bits of the block path that
    strided data takes."""
    rng = np.random.default_rng(3)
    forward, backward = getattr(fa, name), getattr(fa, f"{name}_backward")
    pool = rng.normal(0, 3, 200).astype(np.float32).astype(HALF_TYPES[half][0])
    pool[:6] = [np.nan, np.inf, -np.inf, -0.0, 3.0, -3.0]
    grads = rng.normal(0, 2, 200).astype(np.float32).astype(pool.dtype)
    grads[10:20] = -0.0  # g/6 keeps its sign
    for isa_name in TESTABLE_ISAS:
        with _isa(isa_name), quiet():
            for n in range(1, 50):
                for offset in (0, 1, 7):
                    x, g = pool[offset:offset + n], grads[offset:offset + n]
                    strided_x = np.empty(2 * n, x.dtype)[::2]
                    strided_x[...] = x
                    for got, want in [(forward(x, **params), forward(strided_x, **params)),
                                      (backward(g, x, **params), backward(g, strided_x, **params))]:
                        assert np.array_equal(got.view(np.uint16), want.view(np.uint16)), (isa_name, n, offset)


def test_one_pass_hardswish_tails_and_overlaps(half):
    """hardswish takes one pass over contiguous 16-bit data in either
    direction (convert16.c), its results near a 16-bit tie settled after each
    block: every length to past two bitmap words, at three offsets, in place
    over x or g, with the edge values and inputs whose value is a tie (x =
    0.75 makes 3g/4) among them, gives the bits of the block path that
    strided data takes. Tables off, so that the forward computes."""
    rng = np.random.default_rng(4)
    dtype = HALF_TYPES[half][0]
    pool = rng.normal(0, 3, 300).astype(np.float32).astype(dtype)
    pool[:12] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 3.0, -3.0, -1.5, 0.75, -0.75, 1.5, 6e-8]
    pool[40:80:3] = 0.75
    grads = rng.normal(0, 2, 300).astype(np.float32).astype(dtype)
    grads[12:20] = [-0.0, np.nan, np.inf, 6e-8, -6e-8, 65504, -1.0, 3.0]
    for isa_name in TESTABLE_ISAS:
        with _isa(isa_name), _tables(False), quiet():
            for n in list(range(1, 20)) + [63, 64, 65, 127, 128, 129, 200]:
                for offset in (0, 1, 7):
                    x, g = pool[offset:offset + n], grads[offset:offset + n]
                    strided_x = np.empty(2 * n, x.dtype)[::2]
                    strided_x[...] = x
                    want = [fa.hardswish(strided_x), fa.hardswish_backward(g, strided_x)]
                    over_x, over_g, in_place = x.copy(), g.copy(), x.copy()
                    fa.hardswish(in_place, out=in_place)
                    fa.hardswish_backward(g, over_x, out=over_x)
                    fa.hardswish_backward(over_g, x, out=over_g)
                    for got, expected in [(fa.hardswish(x), want[0]), (in_place, want[0]),
                                          (fa.hardswish_backward(g, x), want[1]), (over_x, want[1]),
                                          (over_g, want[1])]:
                        assert np.array_equal(got.view(np.uint16), expected.view(np.uint16)), (isa_name, n, offset)


def test_hardtanh_limits_in_either_order_through_the_ufuncs(isa, half):
    """fastact.ufuncs takes min_val > max_val (fastact.hardtanh refuses it):
    the kernels then give min_val below it and max_val above, min_val where
    both apply, and a zero gradient; contiguous 16-bit data gives the bits
    strided data gets."""
    x = all_values(half)
    g = np.full(x.shape, 0.75, x.dtype)
    strided_x = np.repeat(x, 2)[::2]
    for lo, hi in [(2.0, 1.0), (0.3, -0.3), (0.0, -0.0)]:
        with np.errstate(all="ignore"):
            got = [fa.ufuncs.hardtanh_with_params(x, lo, hi), fa.ufuncs.hardtanh_backward_with_params(g, x, lo, hi)]
            want = [fa.ufuncs.hardtanh_with_params(strided_x, lo, hi), fa.ufuncs.hardtanh_backward_with_params(g, strided_x, lo, hi)]
        for a, b in zip(got, want):
            assert np.array_equal(a.view(np.uint16), b.view(np.uint16)), (lo, hi, isa)


# signaling and quiet NaNs with payloads, in g and in x, among ordinary values
NAN_BITS = {"float16": [0x7c01, 0xfc01, 0x7e00, 0x7d55, 0xffff], "bfloat16": [0x7f81, 0xff81, 0x7fc0, 0x7fa5, 0xffff]}
ONE_PASS_BACKWARDS = ["leaky_relu", "hardswish", "relu6", "hardtanh", "hardsigmoid", "gelu", "silu", "tanh"]


@pytest.mark.parametrize("name", ONE_PASS_BACKWARDS + ["sigmoid_from_output", "tanh_from_output"])
def test_nan_payloads_come_out_as_the_block_path_gives_them(isa, half, name):
    """The one-pass 16-bit loops (contiguous data) give a NaN's bits as the
    block path (strided data) gives them: a signaling NaN made quiet, its
    payload kept, x's NaN before g's. A product with 1 that a compiler folds
    away, or a rounding half up that carries out of a payload, fails here."""
    dtype = HALF_TYPES[half][0]
    rng = np.random.default_rng(13)
    n = 256
    g = rng.normal(0, 2, n).astype(np.float32).astype(dtype).view(np.uint16)
    x = rng.normal(0, 3, n).astype(np.float32).astype(dtype).view(np.uint16)
    g[::7] = np.resize(NAN_BITS[half], g[::7].size)
    x[3::11] = np.resize(NAN_BITS[half], x[3::11].size)
    g, x = g.view(dtype), x.view(dtype)
    if name.endswith("_from_output"):
        backward = getattr(fa, name.replace("_from_output", "_backward_from_output"))
        x = np.where(np.abs(widen(x)) <= 1, x, 0.5).astype(dtype)  # outputs of tanh or sigmoid
        x.view(np.uint16)[3::11] = np.resize(NAN_BITS[half], x[3::11].size)
    else:
        backward = getattr(fa, f"{name}_backward")
    strided_g, strided_x = (np.repeat(a, 2)[::2] for a in (g, x))
    with np.errstate(all="ignore"):
        for _ in range(3):  # the derivative tables fill on the way
            got = backward(g, x).view(np.uint16)
        want = backward(strided_g, strided_x).view(np.uint16)
    assert np.isnan(widen(want.view(dtype))).sum() >= x[3::11].size  # a NaN x gives NaN
    wrong = got != want
    assert not wrong.any(), (f"{name} [{isa}]: {np.count_nonzero(wrong)} differ, first g = 0x{g.view(np.uint16)[wrong][0]:04x}, "
                             f"x = 0x{x.view(np.uint16)[wrong][0]:04x}: 0x{got[wrong][0]:04x}, not 0x{want[wrong][0]:04x}")


@pytest.mark.parametrize("call", ["elu_backward", "celu_backward", "leaky_relu", "leaky_relu_backward",
                                  "hardtanh", "hardtanh_backward"])
def test_nan_parameters_through_the_ufuncs(isa, half, call):
    """fastact.ufuncs takes parameters unchecked: a float64 NaN whose payload
    fills float32's low bits gives, on contiguous data (one-pass loops and
    derivative tables), the bits strided data gets."""
    dtype = HALF_TYPES[half][0]
    nan = np.array([0x7fffffffffffffff], np.uint64).view(np.float64)[0]
    x = all_values(half)
    g = np.ones_like(x)
    ufunc = getattr(fa.ufuncs, call + "_with_params")
    args = (g, x) if call.endswith("_backward") else (x,)
    params = (nan, 1.0) if call.startswith("hardtanh") else (nan,)
    strided = tuple(np.repeat(a, 2)[::2] for a in args)
    with np.errstate(all="ignore"):
        for _ in range(3):  # the derivative tables fill on the way
            got = ufunc(*args, *params).view(np.uint16)
        want = ufunc(*strided, *params).view(np.uint16)
    wrong = got != want
    assert not wrong.any(), f"{call} [{isa}]: {np.count_nonzero(wrong)} differ, first 0x{got[wrong][0]:04x}, not 0x{want[wrong][0]:04x}"


@contextlib.contextmanager
def _isa(name):
    previous = fa.set_isa(name)
    try:
        yield
    finally:
        fa.set_isa(previous)


# ---- the documented cases -------------------------------------------------

def test_tiny_results_are_rounded_once():
    """gelu(2^-24) is just above 2^-25, half the smallest float16: it rounds up,
    where rounding float32's 2^-25 to even would give 0."""
    tiny = np.array([2.0**-24, -(2.0**-24), 3 * 2.0**-24], np.float16)
    got = fa.gelu(tiny).astype(np.float64)
    np.testing.assert_array_equal(got, [2.0**-24, -0.0, 2 * 2.0**-24])
    assert fa.silu(np.float16(2.0**-24)) == np.float16(2.0**-24)


@pytest.mark.parametrize("half_name", list(HALF_TYPES))
def test_no_floating_point_warnings(isa, half_name):
    """A 16-bit result that overflows its type becomes inf, and one that
    underflows a subnormal, silently: the float32 intermediate's flags and the
    conversions' are dropped."""
    dtype, _, emin, largest = HALF_TYPES[half_name]
    big = np.full(3000, largest, dtype)  # several blocks: more than one conversion call
    tiny = np.full(3000, -(2.0**emin) * 2.0**-3, dtype)
    with np.errstate(all="ignore"):
        expected = fa.gelu(widen(tiny)).astype(dtype)
    with np.errstate(all="raise"):
        assert np.isinf(widen(fa.selu(big))).all()
        np.testing.assert_array_equal(widen(fa.gelu(tiny)), widen(expected))
        np.testing.assert_array_equal(widen(fa.sigmoid(-big)), 0.0)


@pytest.mark.parametrize("half_name", list(HALF_TYPES))
def test_dtype_in_is_dtype_out(half_name):
    dtype = HALF_TYPES[half_name][0]
    x = np.linspace(-3, 3, 7).astype(dtype)
    for fn in (fa.relu, fa.gelu, fa.silu, fa.sigmoid, fa.tanh, fa.leaky_relu, fa.hardswish):
        assert fn(x).dtype == dtype, fn
    assert fa.gelu_backward(x, x).dtype == dtype
    assert fa.swiglu(x, x).dtype == dtype
    assert fa.bias_gelu(x, x).dtype == dtype
    assert fa.softmax(x).dtype == dtype
    out = np.empty_like(x)
    assert fa.gelu(x, out=out) is out


@pytest.mark.skipif(ml_dtypes is None, reason="bfloat16 needs ml_dtypes")
def test_mixed_inputs_promote_as_numpy():
    bf = np.ones(4, ml_dtypes.bfloat16)
    assert fa.swiglu(bf, np.ones(4, np.float32)).dtype == np.float32
    half = np.ones(4, np.float16)
    assert fa.swiglu(bf, half).dtype == np.add(bf, half).dtype == np.float32  # NumPy's ufunc rule
    assert fa.gelu_backward(np.ones(4, np.float16), np.ones(4, np.float16)).dtype == np.float16


def test_relu_on_the_bits():
    """ReLU of a 16-bit value needs no conversion: -0 and negatives give +0,
    NaN stays NaN (made quiet, as the conversions make it)."""
    for name, (dtype, bits, _, _) in HALF_TYPES.items():
        x = all_values(name)
        y = fa.relu(x).view(np.uint16).astype(np.uint32)
        wide = widen(x)
        expected = np.where(np.isnan(wide) | (wide > 0), x.view(np.uint16), 0).astype(np.uint32)
        quiet_bit = 1 << (bits - 2)
        expected = np.where(np.isnan(wide), expected | quiet_bit, expected)
        np.testing.assert_array_equal(y, expected)


# the fused functions' float64 references: (name, reference of (a, b), bounds by tier)
FUSED = {
    "swiglu": lambda gate, up: ref.silu(gate) * up,
    "geglu": lambda gate, up: ref.gelu(gate) * up,
    "geglu_tanh": lambda gate, up: ref.gelu_tanh(gate) * up,
    "glu": lambda a, b: a * ref.sigmoid(b),
    "bias_gelu": lambda x, bias: ref.gelu(x + bias),
    "bias_gelu_tanh": lambda x, bias: ref.gelu_tanh(x + bias),
    "bias_silu": lambda x, bias: ref.silu(x + bias),
    "bias_relu": lambda x, bias: ref.relu(x + bias),
}
FUSED_ULPS = {"accurate": 2, "fast": 4}


@pytest.mark.parametrize("name, tier", [(name, tier) for name in FUSED for tier in FUSED_ULPS
                                        if not (name == "bias_relu" and tier == "fast")])  # exact: one tier
def test_fused_every_value(isa, half, name, tier):
    """Every value of the type as the activation's input (the gate, glu's b,
    or x with bias 0), the other operand 1, then random."""
    ufunc = getattr(fa.ufuncs, name if tier == "fast" or name.startswith("bias_relu") else f"{name}_accurate")
    dtype = HALF_TYPES[half][0]
    values = all_values(half)
    rng = np.random.default_rng(11)
    for other in (np.ones_like(values) if not name.startswith("bias") else np.zeros_like(values),
                  rng.normal(0, 1, values.size).astype(np.float32).astype(dtype)):
        first, second = (other, values) if name == "glu" else (values, other)
        with np.errstate(all="ignore"):
            if name.startswith("bias"):  # the activation of the sum as NumPy rounds it, bias 0
                first = (first.astype(np.float32) + second.astype(np.float32)).astype(dtype)
                second = np.zeros_like(second)
                expected = FUSED[name](widen(first), 0.0)
                first, second = values, other
            else:
                expected = FUSED[name](widen(first), widen(second))
            with quiet():
                got = ufunc(first, second)
        check(f"{name} ({tier}) {half} [{isa}]", values, got, expected, np.abs(expected),
              EXACT_FLOAT32_ULP if name == "bias_relu" else FUSED_ULPS[tier], half)
        # the bias ops, smooth and of one rounded sum, are correctly rounded as SMOOTH above; the
        # gated products are held to their bound: a subnormal act(gate) times a large up is far
        # from any window
        if name.startswith("bias") and name != "bias_relu":
            with np.errstate(all="ignore"):
                act_x = (values.astype(np.float32) + other.astype(np.float32)).astype(dtype)
            want, _ = correctly_rounded(expected, act_x, name[len("bias_"):], half)
            wrong = ~(np.isnan(want) & np.isnan(widen(got))) & (widen(got) != want)
            assert not wrong.any(), f"{name} ({tier}) {half} [{isa}]: {np.count_nonzero(wrong)} not correctly rounded"


def test_fused_match_unfused_in_16_bits():
    """swiglu and bias_gelu in a 16-bit type: the float32 result rounded once,
    within half an ULP plus the fused kernels' bound of the float64 value."""
    rng = np.random.default_rng(3)
    for name, (dtype, bits, emin, _) in HALF_TYPES.items():
        gate = rng.normal(0, 3, 1 << 14).astype(np.float32).astype(dtype)
        up = rng.normal(0, 1, 1 << 14).astype(np.float32).astype(dtype)
        g64, u64 = widen(gate), widen(up)
        check(f"swiglu {name}", gate, fa.swiglu(gate, up), ref.silu(g64) * u64,
              np.abs(ref.silu(g64) * u64), 2, name)
        total = (g64 + u64).astype(np.float32).astype(dtype).astype(np.float64)  # the rounded sum
        check(f"bias_gelu {name}", gate, fa.bias_gelu(gate, up), ref.gelu(total), np.abs(ref.gelu(total)),
              2, name)


def test_softmax_in_16_bits():
    rng = np.random.default_rng(5)
    for name, (dtype, bits, emin, _) in HALF_TYPES.items():
        x = rng.normal(0, 4, (64, 333)).astype(np.float32).astype(dtype)
        wide = widen(x)
        e = np.exp(wide - wide.max(axis=-1, keepdims=True))
        expected = e / e.sum(axis=-1, keepdims=True)
        check(f"softmax {name}", x.ravel(), fa.softmax(x).ravel(), expected.ravel(), expected.ravel(), 2.5, name)
        check(f"softmax axis 0 {name}", x.ravel(), fa.softmax(x.T.copy(), axis=0).T.ravel(), expected.ravel(),
              expected.ravel(), 2.5, name)


def test_tier_names_cover_every_variant():
    assert {v.tier for v in VARIANTS.values()} <= set(TIERS)


def round_once(v, name):
    """float64 values rounded once to the 16-bit type: NumPy's float16 cast
    rounds directly; for bfloat16, through float32, nudged off a tie towards v."""
    if name == "float16":
        return v.astype(np.float16)
    f = v.astype(np.float32)
    bits = f.view(np.uint32).astype(np.int64)
    tie = ((bits & 0xFFFF) == 0x8000) & np.isfinite(f) & (f != v)
    bits = np.where(tie, bits + np.where(np.abs(v) > np.abs(f), 1, -1), bits)
    return bits.astype(np.uint32).view(np.float32).astype(HALF_TYPES[name][0])


EXACT = [key for key, v in VARIANTS.items() if v.op.exact]  # exact in 16 bits, either tier


def exact_rational(key, direction, x, g):
    """A piecewise function's exact value where its formula is a polynomial in x
    (default parameters), for the float64 ties below."""
    v, w = Fraction(float(x)), Fraction(float(g))
    formulas = {("hardswish", "forward"): lambda: v * (v + 3) / 6,
                ("hardswish", "backward"): lambda: w * (2 * v + 3) / 6,
                ("hardsigmoid", "forward"): lambda: (v + 3) / 6,
                ("hardsigmoid", "backward"): lambda: w / 6}
    assert (key, direction) in formulas and -3 < v < 3, (key, direction, v)
    return formulas[key, direction]()


@pytest.mark.parametrize("variant", EXACT, indirect=True)
def test_exact_functions_are_rounded_once(isa, variant, half):
    """The piecewise functions, forward and backward with a random grad_output:
    every 16-bit result is the exact value rounded once, float32's rounding
    on a 16-bit tie never passed on (the bound above allows a float32 ULP).
    The exact value: float64 of the 16-bit inputs, with the parameters
    rounded to float32 as the kernels round them."""
    x = all_values(half)
    g = np.random.default_rng(11).normal(0, 2, x.size).astype(np.float32).astype(x.dtype)
    params = {p.name: float(np.float32(p.default)) for p in variant.op.params}
    with np.errstate(all="ignore"):
        forward = variant.ref_forward(widen(x), **params)
        backward = variant.ref_backward(widen(g), widen(x), **params)
    with quiet():
        got_forward = widen(variant.forward(x, **params))
        got_backward = widen(variant.backward(g, x, **params))
    for what, got, exact in [("forward", got_forward, forward), ("backward", got_backward, backward)]:
        expected = widen(round_once(exact, half))
        _, bits, emin, _ = HALF_TYPES[half]
        with np.errstate(all="ignore"):
            undecided = np.isfinite(exact) & (np.abs(exact) / spacing(exact, bits, emin) % 1 == 0.5)
        if undecided.any():
            # float64 on a tie: exact there (round to even), or not where the true value
            # needs more bits, as hardswish's x/2 + x^2/6 for bfloat16's subnormal x;
            # the rational value decides
            for i in np.flatnonzero(undecided):
                side = exact_rational(variant.name, what, x[i], g[i]) - Fraction(float(exact[i]))
                if side != 0:
                    expected[i] = exact[i] + (1 if side > 0 else -1) * 0.5 * spacing(exact[i:i + 1], bits, emin)[0]
        wrong = ~(np.isnan(expected) & np.isnan(got)) & (got != expected)
        assert not wrong.any(), (f"{variant.key} {what} {half} [{isa}]: {np.count_nonzero(wrong)} results "
                                 f"not rounded once, first at x = {float(x[wrong][0])!r}")


# 1e-39: a subnormal float32 slope, whose bfloat16 products fall below 2^-126;
# 0.37 and 0.7: bfloat16 products just above 2^-126 whose remainder float32 cannot hold;
# negative slopes: positive products (rounded toward zero is then rounded down);
# 1e35: products past float32's range
@pytest.mark.parametrize("slope", [0.1, 0.01, 0.3, 0.37, 0.7, 1e-39, 3e30, 1e35, -0.2, -1e-39, -3e30, -1e35])
def test_piecewise_parameters_rounded_as_float32_does(isa, half, slope):
    """leaky_relu's slope is rounded to float32 first, as its float32 kernel and
    PyTorch round it; a tie of the product is resolved with that slope too, so
    every result, forward and backward, is x * float32(slope) (or g *) rounded
    once."""
    x = all_values(half)
    x = x[np.isfinite(widen(x)) & (widen(x) < 0)]
    exact = widen(x) * float(np.float32(slope))  # exact in float64: at most 11 + 24 bits
    with quiet():
        np.testing.assert_array_equal(widen(fa.leaky_relu(x, slope)), widen(round_once(exact, half)))
        g = -x[::-1]
        np.testing.assert_array_equal(widen(fa.leaky_relu_backward(g, x, slope)),
                                      widen(round_once(widen(g) * float(np.float32(slope)), half)))


@pytest.mark.parametrize("name", ["relu", "relu6", "hardtanh"])
def test_large_outputs_stream_from_any_alignment(isa, half, name):
    """Beyond 16 MiB of output, relu, relu6 and hardtanh store past the caches
    (AVX2), after a head up to the output's first 32-byte boundary: the bits
    the same calls give on pieces small enough to be stored plainly, and
    nothing written outside the output."""
    dtype = HALF_TYPES[half][0]
    n = (16 << 20) // 2 + 37
    rng = np.random.default_rng(21)
    x = (rng.standard_normal(n + 17) * 4).astype(np.float32).astype(dtype)
    x[rng.choice(n + 17, 1 << 16, replace=False)] = all_values(half)  # NaNs, infinities, subnormals
    g = rng.standard_normal(n + 17).astype(np.float32).astype(dtype)
    g.view(np.uint16)[::1001] = NAN_BITS[half][0]
    out = np.empty(n + 17, dtype)
    aligned = (32 - out.ctypes.data % 32) % 32 // 2  # out[aligned] starts 32 bytes
    piece = 1 << 20
    for backward in (False, True):
        fn = getattr(fa, f"{name}_backward" if backward else name)
        call = (lambda gs, xs, **out: fn(gs, xs, **out)) if backward else (lambda gs, xs, **out: fn(xs, **out))
        for offset in (aligned, aligned + 1):  # heads of 0 and 15 elements before a 32-byte boundary
            xs, gs = x[offset:offset + n], g[offset:offset + n]
            out[...] = 7
            with forced_threads(1), np.errstate(invalid="ignore"):
                want = np.concatenate([call(gs[i:i + piece], xs[i:i + piece]) for i in range(0, n, piece)])
                call(gs, xs, out=out[offset:offset + n])
            got = out[offset:offset + n].view(np.uint16)
            wrong = np.flatnonzero(got != want.view(np.uint16))
            assert wrong.size == 0, f"{name} backward={backward} offset {offset} [{isa}]: {wrong.size} differ, first at {wrong[:4]}"
            assert (out[:offset] == 7).all() and (out[offset + n:] == 7).all()


# no 16-bit value (-0.3, 2.7); equal; signed zeros; float16's subnormals and
# below them; past float16's largest value; -inf in float32 and near
# bfloat16's largest; a float32 subnormal; float16's and bfloat16's ties
# next to 1 and float16's smallest tie
@pytest.mark.parametrize("limits", [(-0.3, 2.7), (0.3, 0.3), (-0.0, 0.0), (0.0, -0.0), (1e-9, 3e-7),
                                    (-3e-7, -1e-9), (-65520.0, 65519.0), (-1e39, 3e38), (-2.5, -1e-40),
                                    (-1 - 2.0**-11, 1 + 2.0**-11), (-1 - 2.0**-8, 1 + 2.0**-8),
                                    (-(2.0**-25), 2.0**-25)])
def test_hardtanh_compares_with_the_float32_limits(isa, half, limits):
    """hardtanh on contiguous 16-bit data compares the 16-bit values with the
    limits, rounded to float32, exactly (piecewise16.c compares their bits
    with the limits' neighbours in the type): every input, forward and
    backward, against float64."""
    with np.errstate(over="ignore"):  # -1e39 is -inf in float32
        lo, hi = (float(np.float32(v)) for v in limits)
    if lo > hi:
        lo, hi = hi, lo
    x = all_values(half)
    g = np.random.default_rng(12).normal(0, 2, x.size).astype(np.float32).astype(x.dtype)
    wide = widen(x)
    with np.errstate(invalid="ignore"):
        forward = np.where(wide < lo, lo, np.where(wide > hi, hi, wide))
        backward = np.where(np.isnan(wide), wide, np.where((wide > lo) & (wide < hi), widen(g), 0.0))
    with quiet():
        got = [fa.hardtanh(x, *limits), fa.hardtanh_backward(g, x, *limits)]
    for what, result, want in [("forward", got[0], forward), ("backward", got[1], backward)]:
        with quiet():
            expected = round_once(want, half)
        same = (result.view(np.uint16) == expected.view(np.uint16)) | (np.isnan(widen(result)) & np.isnan(want))
        assert same.all(), (f"hardtanh {what} {limits} {half} [{isa}]: {np.count_nonzero(~same)} wrong, "
                            f"first at x = {float(wide[~same][0])!r}")
