"""softmax, log_softmax and their backwards (generalized ufuncs over rows).

Accuracy against wider references (float64 for float16/float32 inputs,
x87 long double for float64 inputs), bit identity across every ISA (the
`isa` fixture), thread counts, axes, strides and out=, the special rows the
docstrings promise, the errors, and agreement with PyTorch. Run with -s to
see the worst errors measured (printed at the end of the module).
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import fastact as fa
from fastact import ufuncs

from conftest import TESTABLE_ISAS, forced_isa, forced_threads

DTYPES = [np.float16, np.float32, np.float64]
TIERS = ["accurate", "fast"]
FORWARD = {"softmax": fa.softmax, "log_softmax": fa.log_softmax}
BACKWARD = {"softmax_backward": fa.softmax_backward, "log_softmax_backward": fa.log_softmax_backward}
# per tier: the accurate tier's 2 ULP forward, 4 ULP of the largest term backward; the fast
# tier's 4 forward and (measured in float32 and float64, see DEVELOPING.md) 4 backward
FORWARD_ULP = {"accurate": 2.0, "fast": 4.0}
BACKWARD_ULP = {"accurate": 4.0, "fast": 4.0}
EXP_BITS = np.uint64(0x7FF0000000000000)
HYPOTHESIS = settings(max_examples=50, deadline=None, derandomize=True, database=None)

MEASURED = {}  # (function, dtype, isa, tier) -> worst ULP error seen, printed at the end


@pytest.fixture(scope="module", autouse=True)
def report_measured():
    yield
    if MEASURED:
        print("\n\nworst measured errors (ULP; backward: ULP of the largest term):")
        for key in sorted(MEASURED):
            print("  " + " ".join(f"{k:<20}" for k in key) + f"{MEASURED[key]:.3f}")


def record(key, err):
    MEASURED[key] = max(MEASURED.get(key, 0.0), float(np.max(err)))


# ---- ULPs and references ---------------------------------------------------

def ulp(v, dtype):
    """Spacing of `dtype` in the binade of v (as float64), never below its subnormal spacing."""
    info = np.finfo(dtype)
    v = np.asarray(v, dtype=np.float64)
    power = (np.ascontiguousarray(v).view(np.uint64) & EXP_BITS).view(np.float64).reshape(v.shape)
    return np.maximum(power * 2.0**-info.nmant, float(info.smallest_subnormal))


def wide(dtype):
    """The reference's type: float64 for float16/32 data, long double for float64 data."""
    if dtype == np.float64:
        if np.finfo(np.longdouble).nmant < 63:
            pytest.skip("needs an extended long double for float64 references")
        return np.longdouble
    return np.float64


def ulp_error(got, want, unit, dtype):
    """|got - want| in ULPs (of `dtype`) of `unit`; exact agreement (infinities too) is 0, a NaN
    where a number was due is inf."""
    got_w = got.astype(want.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        err = (np.abs(got_w - want) / ulp(unit, dtype)).astype(np.float64)
    err = np.where(got_w == want, 0.0, err)
    return np.where(np.isnan(err), np.inf, err)


def ref_forward(x, log):
    """softmax / log_softmax of finite rows (last axis) in the wider type. The sum is split as
    k + t (k maxima, t the rest), so that log(sum) = log(k) + log1p(...) stays accurate when the
    result is near 0 (log_softmax at the maximum)."""
    x = np.asarray(x, dtype=wide(x.dtype))
    d = x - x.max(axis=-1, keepdims=True)
    e = np.exp(d)
    top = d == 0
    k = top.sum(axis=-1, keepdims=True).astype(x.dtype)
    t = np.where(top, 0, e).sum(axis=-1, keepdims=True)
    if log:
        return d - (np.log(k) + np.log1p(t / k))
    return e / (k + t)


def ref_backward(name, g, y):
    """(exact-ish value, its largest term) of the backward formulas, in the wider type."""
    w = wide(y.dtype)
    g, y = np.asarray(g, w), np.asarray(y, w)
    if name == "softmax_backward":
        dot = (g * y).sum(axis=-1, keepdims=True)
        return y * (g - dot), np.maximum(np.abs(y * g), np.abs(y * dot))
    total = g.sum(axis=-1, keepdims=True)
    p = np.exp(y)
    return g - p * total, np.maximum(np.abs(g), np.abs(p * total))


# ---- inputs ------------------------------------------------------------------

def rows_for(dtype, seed=0):
    """Finite rows of several kinds (rows along the last axis): moderate normals, a huge
    dynamic range, all-equal rows, rows with one clear maximum (log_softmax near 0 there),
    rows far from 0 (float32's fast softmax shifts by a multiple of 2^-9 up to 2^14, float64's
    by 2^-32 up to 2^20, and by the maximum itself beyond)."""
    rng = np.random.default_rng(seed)
    n_rows = 24 if dtype == np.float64 else 64
    span = 60.0 if dtype == np.float16 else 200.0  # float16 holds +-65504 but exp of -400 is 0 anyway
    blocks = [
        rng.normal(0, 3, (n_rows, 257)),
        rng.uniform(-span, span, (n_rows, 257)),
        np.full((4, 257), 1.5), np.zeros((2, 257)),
        np.concatenate([np.zeros((4, 1)), np.full((4, 256), -30.0)], axis=1),
        np.concatenate([np.zeros((4, 1)), np.full((4, 256), -12.0)], axis=1),
        np.concatenate([np.full((4, 3), 7.0), rng.normal(-20, 5, (4, 254))], axis=1),  # 3 tied maxima
        rng.normal(0, 1e-3, (4, 257)),  # nearly equal
        rng.normal(1e4, 3, (4, 257)), rng.normal(3e4, 3, (4, 257)),  # far from 0: the fast tier's shifts
    ]
    if dtype != np.float16:
        blocks.append(rng.normal(-3e6, 3, (4, 257)))
    x = np.concatenate(blocks).astype(dtype)
    return x


def assert_within(what, err, bound, x=None):
    i = np.unravel_index(int(np.argmax(err)), err.shape)
    assert err[i] <= bound, f"{what}: {err[i]:.3g} ULP > {bound} at index {i}"


# ---- accuracy ----------------------------------------------------------------

@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(FORWARD))
def test_forward_accuracy(isa, name, dtype, tier):
    """softmax / log_softmax within 2 ULP per element (fast tier: 4), including rows spread
    over [-200, 200], all-equal rows and log_softmax's near-zero maximum."""
    x = rows_for(dtype)
    got = FORWARD[name](x, precision=tier)
    assert got.dtype == dtype and got.shape == x.shape
    want = ref_forward(x, name == "log_softmax")
    err = ulp_error(got, want, want, dtype)
    record((name, np.dtype(dtype).name, isa, tier), err)
    assert_within(f"{name} {np.dtype(dtype)} [{isa}, {tier}]", err, FORWARD_ULP[tier])


@pytest.mark.parametrize("top", [0.0, 0.3, -1234.567])
@pytest.mark.parametrize("tier", TIERS)
def test_log_softmax_near_its_maximum_is_accurate(isa, tier, top):
    """x = [t, t - 30, t - 30, ...]: log_softmax at the maximum is -999·e^-30 ≈ -9.4e-11, far below
    an ULP of the sum; a log(sum) without care would give 0 or a large relative error (a top off
    the fast tier's shift quantum: its terms are scaled back from the shift)."""
    t = float(np.float32(top))
    x = np.concatenate([[t], np.full(999, t - 30.0)]).astype(np.float32)
    gap = t - float(x[1])
    got = fa.log_softmax(x, precision=tier)
    want = -math.log1p(999 * math.exp(-gap))
    assert got[0] != 0
    err = abs(float(got[0]) - want) / float(ulp(np.float64(want), np.float32))
    assert err <= FORWARD_ULP[tier], f"{got[0]!r} vs {want!r}: {err:.3g} ULP"


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(BACKWARD))
def test_backward_accuracy(isa, name, dtype, tier):
    """The backwards within 4 ULP of their largest term, for outputs of the forward and
    random gradients."""
    x = rows_for(dtype, seed=1)
    with forced_isa("scalar"):
        y = FORWARD[name.replace("_backward", "")](x)
    g = np.random.default_rng(2).normal(0, 1, x.shape).astype(dtype)
    got = BACKWARD[name](g, y, precision=tier)
    assert got.dtype == dtype and got.shape == x.shape
    want, scale = ref_backward(name, g, y)
    err = ulp_error(got, want, scale, dtype)
    record((name, np.dtype(dtype).name, isa, tier), err)
    assert_within(f"{name} {np.dtype(dtype)} [{isa}, {tier}]", err, BACKWARD_ULP[tier])


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("name", list(FORWARD) + list(BACKWARD))
def test_long_row_accuracy(isa, name, tier):
    """One row of 2^20 float32 elements (128 stretches of partial sums) stays within the bounds."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-20, 20, 1 << 20).astype(np.float32)
    if name in FORWARD:
        got = FORWARD[name](x, precision=tier)
        want = ref_forward(x, name == "log_softmax")
        err, bound = ulp_error(got, want, want, np.float32), FORWARD_ULP[tier]
    else:
        y = FORWARD[name.replace("_backward", "")](x, precision=tier)
        g = rng.normal(0, 1, x.shape).astype(np.float32)
        got = BACKWARD[name](g, y, precision=tier)
        want, scale = ref_backward(name, g, y)
        err, bound = ulp_error(got, want, scale, np.float32), BACKWARD_ULP[tier]
    record((name, "float32 2^20 row", isa, tier), err)
    assert_within(f"{name} float32 2^20 row [{isa}, {tier}]", err, bound)


def long_rows_with_uneven_stretches():
    """Rows of 3·8192 + 77 float32 elements whose stretches (8192 each, the partial sums') have
    very different maxima, masked or far below the row's max."""
    rng = np.random.default_rng(21)
    x = rng.normal(0, 3, (6, 3 * 8192 + 77)).astype(np.float32)
    x[0, 8192:16384] -= 60          # a stretch far below: its e^(x - max) near the subnormals
    x[1, :8192] += 40               # the first stretch on top
    x[1, 16384:] -= 120             # the last far below: its results 0 or subnormal
    x[2, 8192:16384] = -np.inf      # a masked stretch
    x[3, 100:16384] -= 200          # most of the row far below the last stretch
    x[4, :] = rng.uniform(-100, 0, x.shape[1])
    x[5, 3 * 8192 + 10] = 30        # the max in the short last stretch
    return x


@pytest.mark.parametrize("tier", TIERS)
def test_long_rows_with_uneven_stretches(isa, tier):
    """softmax of long rows whose stretches' maxima differ by up to 200: within the bound of
    the reference (subnormal results included), the same bits for any thread count and as the
    scalar kernel set; NaN and +inf in one stretch make the row's special result."""
    x = long_rows_with_uneven_stretches()
    got = fa.softmax(x, precision=tier)
    want = ref_forward(np.where(np.isinf(x), -1e30, x), False)
    err = ulp_error(got, want, want, np.float32)
    record(("softmax", "float32 uneven stretches", isa, tier), err)
    assert_within(f"softmax uneven stretches [{isa}, {tier}]", err, FORWARD_ULP[tier])
    assert (got[2, 8192:16384] == 0).all() and not np.signbit(got[2, 8192:16384]).any()
    with forced_isa("scalar"), forced_threads(1):
        want_bits = fa.softmax(x, precision=tier)
    with forced_threads(2):
        assert_same_bits(fa.softmax(x, precision=tier), want_bits, f"uneven stretches [{isa}, {tier}]")
    special = x[:3].copy()
    special[0, 9000] = np.nan                    # a NaN in a finite stretch
    special[1, 8192:16384] = -np.inf
    special[1, 9000] = np.nan                    # a NaN among a masked stretch's -inf
    special[2, 20000] = np.inf                   # +inf in the last stretch
    y = fa.softmax(special, precision=tier)
    assert np.isnan(y[:2]).all()
    assert y[2, 20000] == 1 and (np.delete(y[2], 20000) == 0).all()


# ---- bit identity: ISAs, threads, axes, strides, out= --------------------------

def all_four(x, g, tier="fast"):
    y = fa.softmax(x, precision=tier)
    ly = fa.log_softmax(x, precision=tier)
    return [y, ly, fa.softmax_backward(g, y, precision=tier), fa.log_softmax_backward(g, ly, precision=tier)]


def identity_inputs(dtype):
    """Rows of every length from 1 to 40 (vector tails), a long row of 3·8192 + 5 (stretches and
    a tail), and rows with special values."""
    rng = np.random.default_rng(4)
    cases = [rng.normal(0, 4, (7, n)) for n in range(1, 41)]
    cases.append(rng.normal(0, 4, (1, 3 * 8192 + 5)))
    special = rng.normal(0, 4, (6, 33))
    special[0, 5] = np.nan
    special[1, [3, 30]] = np.inf
    special[2, ::2] = -np.inf
    special[3, :] = -np.inf
    special[4, 7] = 1e30 if dtype != np.float16 else 6e4
    cases.append(special)
    return [(c.astype(dtype), rng.normal(0, 1, c.shape).astype(dtype)) for c in cases]


def assert_same_bits(got, want, what, any_nan=False):
    """Bit for bit; with any_nan, a NaN matches any NaN (NaN bits are checked on their own)."""
    assert got.dtype == want.dtype and got.shape == want.shape, what
    u = f"u{got.itemsize}"
    same = got.view(u) == want.view(u)
    if any_nan:
        same |= np.isnan(got) & np.isnan(want)
    if not same.all():
        i = np.unravel_index(int(np.argmin(same)), same.shape)
        raise AssertionError(f"{what}: at {i} got {got[i]!r}, expected {want[i]!r} "
                             f"({int(np.sum(~same))} differ)")


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_isa_gives_the_same_bits(isa, dtype, tier):
    """Every kernel set gives scalar's bits, for every row length, long rows and special rows
    (NaN results: NaN in the same places; their bits are test_nan_bits_are_the_same_on_every_isa's)."""
    with np.errstate(invalid="ignore"):
        for x, g in identity_inputs(dtype):
            with forced_isa("scalar"):
                want = all_four(x, g, tier)
            for got, w, name in zip(all_four(x, g, tier), want, ["softmax", "log_softmax", "softmax_bwd", "log_bwd"]):
                assert_same_bits(got, w, f"{name} {np.dtype(dtype)} {x.shape} [{isa}, {tier}] vs scalar",
                                 any_nan=True)


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_bits_are_the_same_on_every_isa(isa, dtype, tier):
    """The docstrings promise the same bits on every ISA; NaN results included (their sign bit)."""
    x = np.array([[0.5, np.nan, 1.0], [1.0, 2.0, 3.0]], dtype=dtype)
    g = np.array([[1.0, 2.0, 3.0], [np.nan, 1.0, 2.0]], dtype=dtype)
    with np.errstate(invalid="ignore"):
        with forced_isa("scalar"):
            want = all_four(x, g, tier)
        got = all_four(x, g, tier)
    for a, w, name in zip(got, want, ["softmax", "log_softmax", "softmax_bwd", "log_bwd"]):
        assert_same_bits(a, w, f"{name} {np.dtype(dtype)} NaN rows [{isa}, {tier}] vs scalar")


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("shape", [(1, 3 * 8192 + 5), (1, 1 << 20), (4000, 37), (3, 100_000)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_thread_count_does_not_change_bits(shape, dtype, tier):
    """One thread and two give the same bits: long rows split by stretches, many rows by rows."""
    rng = np.random.default_rng(5)
    x = rng.normal(0, 5, shape).astype(dtype)
    g = rng.normal(0, 1, shape).astype(dtype)
    with forced_threads(1):
        want = all_four(x, g, tier)
    for threads in (2, 3):
        with forced_threads(threads):
            got = all_four(x, g, tier)
        for a, b in zip(got, want):
            assert_same_bits(a, b, f"{shape} {np.dtype(dtype)} [{tier}]: {threads} threads vs 1")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fast_tier_bits_across_threads_and_isas(isa, dtype):
    """The fast tier: the same bits for every kernel set and thread count together (a long row
    split by stretches, many rows split by rows), against scalar on one thread."""
    rng = np.random.default_rng(15)
    for shape in [(1, 5 * 8192 + 17), (300, 45)]:
        x = rng.normal(0, 6, shape).astype(dtype)
        g = rng.normal(0, 1, shape).astype(dtype)
        with forced_isa("scalar"), forced_threads(1):
            want = all_four(x, g, "fast")
        for threads in (1, 2, 4):
            with forced_threads(threads):
                got = all_four(x, g, "fast")
            for a, b, name in zip(got, want, ["softmax", "log_softmax", "softmax_bwd", "log_bwd"]):
                assert_same_bits(a, b, f"{name} {shape} {np.dtype(dtype)} [{isa}, {threads} threads] vs scalar")


@pytest.mark.parametrize("dtype", DTYPES)
def test_axis_0_equals_the_transposed_computation(dtype):
    """axis=0 of a (1024, 300) array is the contiguous computation of its transpose, bit for bit."""
    rng = np.random.default_rng(6)
    x = rng.normal(0, 4, (1024, 300)).astype(dtype)
    g = rng.normal(0, 1, x.shape).astype(dtype)
    xt, gt = np.ascontiguousarray(x.T), np.ascontiguousarray(g.T)
    y, ly = fa.softmax(x, axis=0), fa.log_softmax(x, axis=0)
    assert_same_bits(y, fa.softmax(xt).T, "softmax axis=0")
    assert_same_bits(ly, fa.log_softmax(xt).T, "log_softmax axis=0")
    assert_same_bits(fa.softmax_backward(g, y, axis=0), fa.softmax_backward(gt, np.ascontiguousarray(y.T)).T,
                     "softmax_backward axis=0")
    assert_same_bits(fa.log_softmax_backward(g, ly, axis=-2),
                     fa.log_softmax_backward(gt, np.ascontiguousarray(ly.T)).T, "log_softmax_backward axis=-2")


@pytest.mark.parametrize("tier", TIERS)
def test_rows_side_by_side_equal_their_transposed_computation(isa, tier):
    """softmax and log_softmax, forward and backward, along axis 0 of a C-ordered float32 array
    (rows side by side: the fast tier's column
    kernels, a vector across rows, groups of rows through a buffer) every result is the
    contiguous computation's, bit for bit: rows not a multiple of the vector, columns a power of
    two apart, rows the kernels decline (NaN, an infinite max, a max beyond the shift's range)
    between others, rows of 2^13 and 2^13 + 1, and results laid out as the input."""
    rng = np.random.default_rng(17)
    for shape in [(1024, 37), (256, 128), (64, 200), (8192, 17), (8193, 17), (3, 40)]:
        rows, cols = shape
        x = rng.normal(0, 4, shape).astype(np.float32)
        x[5 % rows, 3] = np.nan
        x[:, 7] += np.float32(3e4)
        x[0, 20 % cols] = np.inf
        x[:, 21 % cols] = -np.inf
        g = rng.normal(0, 1, shape).astype(np.float32)
        g[9 % rows, 30 % cols] = np.nan
        y = fa.softmax(x, axis=0, precision=tier)
        assert y.flags.c_contiguous, shape
        xt, gt, yt = (np.ascontiguousarray(a.T) for a in (x, g, y))
        assert_same_bits(y, fa.softmax(xt, precision=tier).T, f"softmax axis=0 {shape} [{tier}]", any_nan=True)
        got = fa.softmax_backward(g, y, axis=0, precision=tier)
        assert_same_bits(got, fa.softmax_backward(gt, yt, precision=tier).T, f"softmax_backward axis=0 {shape} "
                         f"[{tier}]", any_nan=True)
        ly = fa.log_softmax(x, axis=0, precision=tier)
        assert ly.flags.c_contiguous, shape
        lyt = np.ascontiguousarray(ly.T)
        assert_same_bits(ly, fa.log_softmax(xt, precision=tier).T, f"log_softmax axis=0 {shape} [{tier}]",
                         any_nan=True)
        got = fa.log_softmax_backward(g, ly, axis=0, precision=tier)
        assert_same_bits(got, fa.log_softmax_backward(gt, lyt, precision=tier).T,
                         f"log_softmax_backward axis=0 {shape} [{tier}]", any_nan=True)


def test_middle_axis_of_3d():
    x = np.random.default_rng(7).normal(0, 3, (5, 33, 7)).astype(np.float32)
    want = np.moveaxis(fa.softmax(np.ascontiguousarray(np.moveaxis(x, 1, -1))), -1, 1)
    assert_same_bits(fa.softmax(x, axis=1), want, "softmax axis=1 of 3-d")


@pytest.mark.parametrize("dtype", DTYPES)
def test_any_strides_give_the_contiguous_bits(dtype):
    """Non-contiguous and negative-stride views compute what their contiguous copies do."""
    rng = np.random.default_rng(8)
    base = rng.normal(0, 4, (40, 600)).astype(dtype)
    gbase = rng.normal(0, 1, base.shape).astype(dtype)
    for sl in [(slice(None, None, 2), slice(None, None, 3)), (slice(None, None, -1), slice(None, None, -2)),
               (slice(3, 30), slice(599, None, -7))]:
        x, g = base[sl], gbase[sl]
        want = all_four(np.ascontiguousarray(x), np.ascontiguousarray(g))
        for got, w in zip(all_four(x, g), want):
            assert_same_bits(got, w, f"strides {x.strides}")


@pytest.mark.parametrize("name", list(FORWARD))
@pytest.mark.parametrize("dtype", DTYPES)
def test_out_and_in_place(name, dtype):
    """out= gets the result (a strided out too), and out=x works in place."""
    x = np.random.default_rng(9).normal(0, 4, (16, 50)).astype(dtype)
    want = FORWARD[name](x)
    out = np.full((16, 100), 7, dtype)[:, ::2]
    assert FORWARD[name](x, out=out) is out
    assert_same_bits(out, want, f"{name} strided out=")
    y = x.copy()
    FORWARD[name](y, out=y)
    assert_same_bits(y, want, f"{name} out=x")
    bname = f"{name}_backward"
    g = np.random.default_rng(10).normal(0, 1, x.shape).astype(dtype)
    bwant = BACKWARD[bname](g, want)
    g2 = g.copy()
    BACKWARD[bname](g2, want, out=g2)
    assert_same_bits(g2, bwant, f"{bname} out=grad_output")


# ---- special values ------------------------------------------------------------

INF, NAN = np.inf, np.nan
SPECIAL_ROWS = {  # rows of 4, tiled to 40 elements too (vector paths)
    "masked": [1.0, -INF, 1.0, -INF],
    "one finite": [-INF, 3.0, -INF, -INF],
    "+inf": [INF, 2.0, INF, INF],
    "all -inf": [-INF] * 4,
    "nan": [0.0, NAN, 1.0, 2.0],
    "nan and infs": [NAN, INF, -INF, 1.0],
    "all nan": [NAN] * 4,
}


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_special_rows(isa, dtype, tier):
    """-inf entries give 0 (log: -inf), k +infs share the row (1/k; log: -log k and -inf),
    a row of -inf only is NaN, a NaN makes its row NaN."""
    x = np.array(list(SPECIAL_ROWS.values()), dtype=dtype)
    with np.errstate(invalid="ignore"):  # the flags are test_no_warnings's
        y, ly = fa.softmax(x, precision=tier), fa.log_softmax(x, precision=tier)
    log2, log3 = dtype(math.log(2)), dtype(math.log(3))
    np.testing.assert_array_equal(y[0], dtype([0.5, 0, 0.5, 0]))
    np.testing.assert_allclose(ly[0], [-log2, -INF, -log2, -INF], rtol=4 * np.finfo(dtype).eps)
    np.testing.assert_array_equal(y[1], dtype([0, 1, 0, 0]))
    np.testing.assert_array_equal(ly[1], dtype([-INF, 0, -INF, -INF]))
    np.testing.assert_array_equal(y[2], dtype([1 / 3, 0, 1 / 3, 1 / 3]))
    np.testing.assert_allclose(ly[2], [-log3, -INF, -log3, -log3], rtol=4 * np.finfo(dtype).eps)
    assert np.isnan(y[3:]).all() and np.isnan(ly[3:]).all()
    assert not np.signbit(y[0, 1]), "softmax of -inf is +0"


@pytest.mark.parametrize("dtype", DTYPES)
def test_fast_tier_special_rows_are_the_accurate_tiers(isa, dtype):
    """Special rows (NaN, infinities, masks) give the accurate tier's results in the fast tier:
    the same NaNs, infinities and zeros, and the finite values within the fast bound."""
    base = np.array(list(SPECIAL_ROWS.values()), dtype=dtype)
    g = np.random.default_rng(16).normal(0, 1, base.shape).astype(dtype)
    for x, gg in ((base, g), (np.tile(base, 10), np.tile(g, 10))):
        with np.errstate(invalid="ignore"):
            fast, accurate = all_four(x, gg, "fast"), all_four(x, gg, "accurate")
        for a, b, name in zip(fast, accurate, ["softmax", "log_softmax", "softmax_bwd", "log_bwd"]):
            what = f"{name} {np.dtype(dtype)} {x.shape} [{isa}]"
            np.testing.assert_array_equal(np.isnan(a), np.isnan(b), what)
            np.testing.assert_array_equal(np.where(np.isinf(b), a, 0), np.where(np.isinf(b), b, 0), what)
            if name in ("softmax", "log_softmax"):  # the masks' zeros (backward: cancellation may round)
                np.testing.assert_array_equal(a == 0, b == 0, what)
            finite = np.isfinite(b)
            scale = np.max(np.abs(np.where(finite, b, 0)), axis=-1, keepdims=True)
            if name not in ("softmax", "log_softmax"):  # the backwards' largest terms: |y| <= 1
                scale = np.max(np.abs(gg), axis=-1, keepdims=True) * np.maximum(
                    1, np.abs(gg.astype(np.float64).sum(axis=-1, keepdims=True)))
            diff = np.abs(np.where(finite, a, 0).astype(np.float64) - np.where(finite, b, 0))
            tol = 8 * np.finfo(dtype).eps * np.maximum(np.where(finite, np.abs(b), 0), scale)
            assert np.all(diff <= tol), what


# rows whose maximum is far below 0 (exp(x - max) of a vector's unused lanes must not overflow)
# or near the top of the range (nor the shifts the fast tier derives from it)
FLAG_FREE_ROWS = {**SPECIAL_ROWS, "max below -88": [-100.0, -101.0, -100.5, -150.0],
                  "max below -745": [-800.0, -801.0, -800.5, -810.0],
                  # near each type's top (the other types round it to inf: a special row); no
                  # element far below the max, whose e^(x - max) would rightly flag underflow
                  "max near float32's top": [3e38] * 4,
                  "max near float64's top": [1e300] * 4}


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("row", list(FLAG_FREE_ROWS))
def test_no_floating_point_warnings(isa, row, dtype, tier):
    """NaN rows, rows masked with -inf and rows far below 0 raise no floating-point flags
    (np.errstate(all='raise') must not raise); a row of -inf only is 0/0 and may. Short,
    vector-length and odd-length rows."""
    if row == "all -inf":
        pytest.skip("0/0 = NaN may rightly flag invalid")
    with np.errstate(over="ignore"):  # 1e300 is inf in the narrower types
        base = np.array(FLAG_FREE_ROWS[row], dtype=dtype)
    for x in (base[None, :], np.tile(base, (9, 1)), np.tile(base, 10)[None, :], np.tile(base, 10)[None, :37]):
        with np.errstate(all="raise"):
            y = fa.softmax(x, precision=tier)
            ly = fa.log_softmax(x, precision=tier)
            if not np.isnan(y).any():  # the backwards of masked rows, from their outputs
                fa.softmax_backward(np.ones_like(x), y, precision=tier)
                fa.log_softmax_backward(np.ones_like(x), ly, precision=tier)


@pytest.mark.parametrize("tier", TIERS)
def test_nan_rows_in_the_backwards(tier):
    """A NaN in grad_output makes the row NaN in both backwards (it is in the sum); a NaN in
    output does for softmax_backward (in the dot product) but only its own element for
    log_softmax_backward (whose sum is of grad_output alone)."""
    g = np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0]])
    y = np.array([[0.2, 0.3, 0.5], [np.nan, 0.5, 0.5]])
    with np.errstate(invalid="ignore"):
        sb, lb = fa.softmax_backward(g, y, precision=tier), fa.log_softmax_backward(g, y, precision=tier)
    assert np.isnan(sb).all()
    assert np.isnan(lb[0]).all()
    np.testing.assert_array_equal(np.isnan(lb[1]), [True, False, False])


@pytest.mark.parametrize("tier", TIERS)
def test_zero_d_input(tier):
    """A 0-d input is a row of one: softmax 1.0, log_softmax 0.0 (as in PyTorch), shape ()."""
    for dtype in DTYPES:
        y, ly = fa.softmax(dtype(3.5), precision=tier), fa.log_softmax(dtype(-2.0), precision=tier)
        assert np.shape(y) == np.shape(ly) == ()
        assert y == 1.0 and ly == 0.0 and y.dtype == ly.dtype == dtype


# ---- identities (the seed article's claims) ---------------------------------------

@pytest.mark.parametrize("tier", TIERS)
def test_shift_invariance_bit_for_bit(isa, tier):
    """softmax(x + c) == softmax(x) exactly when x + c is exact (integer values): the max is
    subtracted first, so the same differences go in."""
    rng = np.random.default_rng(11)
    x = rng.integers(-50, 50, (200, 77)).astype(np.float32)
    for c in (-100.0, 1.0, 37.0, 4096.0):
        assert_same_bits(fa.softmax(x + np.float32(c), precision=tier), fa.softmax(x, precision=tier),
                         f"softmax shift {c} [{tier}]")
        assert_same_bits(fa.log_softmax(x + np.float32(c), precision=tier), fa.log_softmax(x, precision=tier),
                         f"log_softmax shift {c} [{tier}]")


rows_f32 = hnp.arrays(np.float32, st.tuples(st.integers(1, 6), st.integers(1, 300)),
                      elements=st.floats(-80, 80, width=32))


@pytest.mark.parametrize("tier", TIERS)
@HYPOTHESIS
@given(x=rows_f32)
def test_rows_sum_to_one(x, tier):
    """Each float32 row of softmax sums to 1 within its bound's worth: n·2^-24 (fast: each
    element within 4 ULP, relative 2^-21)."""
    y = fa.softmax(x, precision=tier)
    n = x.shape[-1]
    total = y.astype(np.float64).sum(axis=-1)
    bound = n * 2.0**-24 if tier == "accurate" else 2.0**-21 + 2.0**-24
    assert np.all(np.abs(total - 1) <= bound), (total - 1, n)


@pytest.mark.parametrize("tier", TIERS)
@HYPOTHESIS
@given(x=rows_f32)
def test_log_softmax_is_log_of_softmax(x, tier):
    """log_softmax ≈ log(softmax): apart by at most log_softmax's 2 ULP plus what softmax's
    2 ULP (relative 2·2^-23) become after the log (where softmax is a normal number); fast
    tier: 4 and 4."""
    y, ly = fa.softmax(x, precision=tier).astype(np.float64), fa.log_softmax(x, precision=tier)
    ok = y >= np.finfo(np.float32).tiny
    with np.errstate(divide="ignore"):
        gap = np.abs(np.log(y) - ly.astype(np.float64))
    bound = FORWARD_ULP[tier] * ulp(ly, np.float32) + FORWARD_ULP[tier] * 2.0**-23 * (1 + 2.0**-20)
    assert np.all(gap[ok] <= bound[ok])


# ---- errors ------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(FORWARD) + list(BACKWARD))
def test_bad_axis(name):
    f = {**FORWARD, **BACKWARD}[name]
    args = (np.zeros((2, 3)),) * (1 if name in FORWARD else 2)
    with pytest.raises(ValueError, match=rf"^fastact\.{name}:"):
        f(*args, axis=2)
    with pytest.raises(ValueError, match=rf"^fastact\.{name}:"):
        f(*args, axis=-3)
    for bad in (1.0, "0", None, True):
        with pytest.raises(TypeError, match=rf"^fastact\.{name}:"):
            f(*args, axis=bad)


@pytest.mark.parametrize("name", list(FORWARD) + list(BACKWARD))
def test_complex_and_bad_precision_are_refused(name):
    f = {**FORWARD, **BACKWARD}[name]
    args = (np.zeros(3, complex),) * (1 if name in FORWARD else 2)
    with pytest.raises(TypeError, match=rf"^fastact\.{name}:"):
        f(*args)
    with pytest.raises(ValueError, match=rf"^fastact\.{name}:"):
        f(*(np.zeros(3),) * len(args), precision="exact")


@pytest.mark.parametrize("name", list(BACKWARD))
def test_mismatched_row_lengths(name):
    with pytest.raises(ValueError, match=rf"^fastact\.{name}:"):
        BACKWARD[name](np.zeros((2, 3)), np.zeros((2, 4)))


@pytest.mark.parametrize("name", list(FORWARD) + list(BACKWARD))
def test_wrong_out_is_refused_and_untouched(name):
    f = {**FORWARD, **BACKWARD}[name]
    args = (np.zeros((2, 3)),) * (1 if name in FORWARD else 2)
    for out in (np.full((2, 4), 7.0), np.full((3, 3), 7.0), np.full((2, 3), 7, dtype=np.int64)):
        before = out.copy()
        with pytest.raises((ValueError, TypeError), match=rf"^fastact\.{name}:"):
            f(*args, out=out)
        np.testing.assert_array_equal(out, before)


def test_gufuncs_are_public():
    """The default (fast) tier's gufuncs keep the plain names, the accurate tier's are _accurate."""
    for name in list(FORWARD) + list(BACKWARD):
        for u in (getattr(ufuncs, name), getattr(ufuncs, name + "_accurate")):
            assert u.signature == ("(n)->(n)" if name in FORWARD else "(n),(n)->(n)")
    assert ufuncs.softmax.__name__ == "softmax" and ufuncs.softmax_accurate.__name__ == "softmax_accurate"
    x = np.random.default_rng(12).normal(size=(3, 9))
    assert_same_bits(ufuncs.log_softmax(x), fa.log_softmax(x), "gufunc")
    assert_same_bits(ufuncs.log_softmax_accurate(x), fa.log_softmax(x, precision="accurate"), "gufunc accurate")


# ---- PyTorch ------------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_agrees_with_torch(dtype, tier):
    """F.softmax, F.log_softmax and aten's backward-data ops agree with ours, allowing for
    PyTorch's own (larger) error: it rounds x - max to the dtype before exp, an error of
    ulp(x - max)/2 relative that exp carries into the result (measured: ~33 ULP in float32
    and ~260 in float64 for rows spread over [-200, 200]), and its log_softmax is accurate
    only to the largest term max(|x - max|, log(sum)), not near 0. Bounds: our bound plus
    theirs (taken as the same), in those units."""
    torch = _torch()
    F = torch.nn.functional
    x = rows_for(dtype, seed=13)
    g = np.random.default_rng(14).normal(0, 1, x.shape).astype(dtype)
    tx, tg = torch.from_numpy(x), torch.from_numpy(g)
    y, ly = fa.softmax(x, precision=tier), fa.log_softmax(x, precision=tier)
    w = wide(dtype)
    d = x.astype(w) - x.max(axis=-1, keepdims=True)
    d_rounding = ulp(d, dtype) / 2 * np.abs(y)  # PyTorch's rounding of x - max, carried by exp
    lse = -ref_forward(x, True).max(axis=-1, keepdims=True)  # log(sum(exp(x - max)))
    t_sb = torch.ops.aten._softmax_backward_data(tg, torch.from_numpy(y), -1, tx.dtype).numpy()
    t_lb = torch.ops.aten._log_softmax_backward_data(tg, torch.from_numpy(ly), -1, tx.dtype).numpy()
    cases = {  # name: (ours, theirs, unit, allowance beyond 2 x our bound in the dtype's values)
        "softmax": (y, F.softmax(tx, -1).numpy(), y, d_rounding, FORWARD_ULP[tier]),
        "log_softmax": (ly, F.log_softmax(tx, -1).numpy(), np.maximum(np.abs(d), lse), 0, FORWARD_ULP[tier]),
        "softmax_backward": (fa.softmax_backward(g, y, precision=tier), t_sb,
                             ref_backward("softmax_backward", g, y)[1], 0, BACKWARD_ULP[tier]),
        "log_softmax_backward": (fa.log_softmax_backward(g, ly, precision=tier), t_lb,
                                 ref_backward("log_softmax_backward", g, ly)[1], 0, BACKWARD_ULP[tier]),
    }
    for name, (ours, theirs, unit, allowance, bound) in cases.items():
        theirs = theirs.astype(w)
        err = ulp_error(ours, theirs, unit, dtype)
        # PyTorch's own measured error against our reference (the triangle inequality)
        want = {"softmax": lambda: ref_forward(x, False), "log_softmax": lambda: ref_forward(x, True),
                "softmax_backward": lambda: ref_backward(name, g, y)[0],
                "log_softmax_backward": lambda: ref_backward(name, g, ly)[0]}[name]()
        slack = ulp_error(theirs.astype(dtype), want, unit, dtype)
        record((name, np.dtype(dtype).name, "vs torch", tier), err - slack)
        assert_within(f"{name} {np.dtype(dtype)} vs torch", err - slack, 2 * bound)


def test_torch_differs_on_infinite_rows():
    """Documented difference: torch gives NaN for a row with +inf (inf - inf), we give 1/k."""
    torch = _torch()
    x = np.array([np.inf, 1.0, np.inf], dtype=np.float32)
    assert np.isnan(torch.softmax(torch.from_numpy(x), -1).numpy()).all()
    np.testing.assert_array_equal(fa.softmax(x), np.float32([0.5, 0, 0.5]))
    # rows with -inf entries (masks) agree exactly in where the zeros are
    m = np.array([[0.5, -np.inf, 2.0, -np.inf]], dtype=np.float32)
    assert_same_bits(fa.softmax(m) == 0, torch.softmax(torch.from_numpy(m), -1).numpy() == 0, "mask zeros")


def test_dask_applies_the_generalized_ufunc_chunk_by_chunk():
    """The gufunc signature lets dask.array.apply_gufunc run softmax on each chunk along an
    unchunked axis: the same bits as one call on the whole array (rows, or axis 0)."""
    da = pytest.importorskip("dask.array")
    x = np.random.default_rng(9).normal(0, 3, (1000, 300)).astype(np.float32)
    by_rows = da.apply_gufunc(fa.ufuncs.softmax, "(n)->(n)", da.from_array(x, chunks=(128, 300)),
                              output_dtypes=np.float32)
    assert_same_bits(by_rows.compute(), fa.softmax(x), "dask, rows chunked")
    by_columns = da.apply_gufunc(fa.ufuncs.log_softmax, "(n)->(n)", da.from_array(x, chunks=(1000, 64)),
                                 axes=[(0,), (0,)], output_dtypes=np.float32)
    assert_same_bits(by_columns.compute(), fa.log_softmax(x, axis=0), "dask, columns chunked")
