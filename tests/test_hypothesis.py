"""Property tests: on random shapes, strides and values, every function stays
within the registry's ULP bounds of the float64 reference (fastact._reference);
relu is bit-exact; NaN goes exactly where the reference puts it."""
import contextlib
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import TESTABLE_ISAS, forced_isa
from fastact import _reference as ref
from fastact._registry import VARIANTS

# On a failure, hypothesis's pytest plugin imports its patch writer (libcst), whose
# DeprecationWarning (mypy_extensions) filterwarnings=error turns into an
# INTERNALERROR that hides the failure. Import it now, quietly.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        import hypothesis.extra._patching  # noqa: F401
    except ImportError:
        pass

# Reproducible in CI: the same examples every run, nothing carried between runs.
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None)
# Each example also draws the kernel set, so every ISA is exercised without
# tripling the run time (test_layout checks that they all give the same bits).
ISAS = st.sampled_from(TESTABLE_ISAS)
ACTS = pytest.mark.parametrize("a", VARIANTS.values(), ids=VARIANTS.keys())  # every tier
DTYPES = pytest.mark.parametrize("dtype", [np.float32, np.float64])

# Exactly representable gradients, so that g * f'(x) adds at most one rounding.
GRADS = st.sampled_from([0.0, 1.0, -1.0, 2.0, -3.0, 0.5])


def max_abs(a, dtype):
    return ref.valid_below(a.name, dtype)


@st.composite
def views(draw, dtype, limit=None, shape=None):
    """A random array (any float incl. subnormals, quiet NaN) seen through random slices
    (negative and large steps) and a random axis order: arbitrary strides."""
    # Infinities are left to the special-value tests: the reference mishandles them
    # (see test_documented_limits). NaN is placed by hand, always quiet (hypothesis
    # would also draw signalling NaNs, which rightly raise 'invalid', an error here).
    elements = st.floats(width=np.finfo(dtype).bits, allow_nan=False, allow_infinity=False,
                         allow_subnormal=True, min_value=None if limit is None else -limit,
                         max_value=limit)
    if shape is None:
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=7))
    base = draw(hnp.arrays(dtype, shape, elements=elements))
    base[draw(hnp.arrays(bool, shape, elements=st.sampled_from([False] * 7 + [True])))] = np.nan
    view = base[tuple(draw(st.slices(n)) for n in shape)]
    return view.transpose(draw(st.permutations(range(view.ndim))))


def ulp(value, dtype):
    """Spacing of `dtype` at |value|, and never less than its smallest subnormal."""
    largest = np.finfo(dtype).max
    with np.errstate(over="ignore", invalid="ignore"):
        # a finite float64 reference beyond the largest float (selu's can be) counts as the largest
        a = np.where(np.isfinite(value), np.minimum(np.abs(value), largest), np.abs(value)).astype(dtype)
        # at the largest float the next step is inf: use the one below
        spacing = np.where(a == largest, np.spacing(np.nextafter(a, 0)), np.spacing(a))
    return np.maximum(spacing.astype(np.float64), np.finfo(dtype).smallest_subnormal)


def ref64_error_ulps(a, x, backward):
    """A generous bound, in ULPs, on the float64 reference's OWN error (float32
    results are judged strictly: this is far below their ULP)."""
    return ref.own_error_ulps(a.name, x, backward)


# Below this the float64 reference underflows (ndtr and expit go subnormal before
# the product with x) and returns 0 or a few digits: there only the mpmath tests judge.
REF64_FLOOR = 1e-304


# the largest finite value plus half its ULP: from there a value rounds to inf
OVERFLOWS_AT = {np.dtype(np.float16): 65520.0, np.dtype(np.float32): 2.0**128 - 2.0**103}


def assert_within(got, ref, tol, x, g=None):
    """NaN exactly where the reference has NaN; elsewhere |got - ref| <= tol."""
    assert got.shape == ref.shape
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan), f"NaN positions differ: x={x}, got={got}, ref={ref}"
    with np.errstate(invalid="ignore"):  # inf - inf: equal infinities (selu's overflow) are right
        err = np.where(got == ref, 0.0, np.abs(got.astype(np.float64) - ref))
        # a finite float64 reference that rounds to inf in got's type (selu near the largest
        # float), or within the tolerance of doing so: inf is right
        if got.dtype in OVERFLOWS_AT:
            overflow = (np.isinf(got) & np.isfinite(ref) & (np.sign(got) == np.sign(ref))
                        & (np.abs(ref) + tol >= OVERFLOWS_AT[got.dtype]))
            err = np.where(overflow, 0.0, err)
    unjudged = nan
    if got.dtype == np.float64:
        unjudged = nan | ((np.abs(ref) < REF64_FLOOR) & (np.abs(got) < REF64_FLOOR))
    bad = ~unjudged & (err != 0) & ~(err <= tol)
    if bad.any():
        i = np.argmax(np.where(bad, err / tol, 0))
        xb = np.broadcast_to(x, ref.shape).ravel()[i]
        gb = "" if g is None else f" g={np.broadcast_to(g, ref.shape).ravel()[i]!r}"
        pytest.fail(f"x={xb!r}{gb}: got {got.ravel()[i]!r}, ref {ref.ravel()[i]!r}, "
                    f"error {err.ravel()[i] / tol.ravel()[i]:.3g} x the tolerance")


@SETTINGS
@given(data=st.data())
@DTYPES
@ACTS
def test_forward_matches_reference(a, dtype, data):
    x = data.draw(views(dtype, max_abs(a, dtype)))
    with forced_isa(data.draw(ISAS, label="isa")), \
            np.errstate(over="ignore") if a.may_overflow else contextlib.nullcontext():
        got = a.forward(x)
    with np.errstate(over="ignore") if a.may_overflow else contextlib.nullcontext():
        ref = a.ref_forward(x)
    assert got.dtype == dtype
    if a.name in SELECTING:  # bit-exact, sign of zero included (relu(-0.0) is +0.0)
        assert_same_non_nan_bits(got, ref, x)
        tol = np.zeros(ref.shape)
    elif a.exact:  # correctly rounded (test_family checks it against rational arithmetic)
        tol = EXACT_ULPS * ulp(ref, dtype)
    else:
        bound = a.forward_ulp if dtype is np.float32 else ref64_error_ulps(a, x, False)
        tol = bound * ulp(ref, dtype)
    with np.errstate(over="ignore") if a.may_overflow else contextlib.nullcontext():
        assert_within(got, ref, tol, x)


@SETTINGS
@given(data=st.data())
@DTYPES
@ACTS
def test_backward_matches_reference(a, dtype, data):
    x = data.draw(views(dtype, max_abs(a, dtype)))
    # a gradient of x's shape, or one that broadcasts against it
    g_shape = data.draw(hnp.broadcastable_shapes(x.shape, max_dims=3, max_side=7))
    g = data.draw(hnp.arrays(dtype, g_shape, elements=GRADS))
    with forced_isa(data.draw(ISAS, label="isa")):
        got = a.backward(g, x)
    ref = a.ref_backward(g, x)
    assert got.dtype == dtype and got.shape == np.broadcast_shapes(g.shape, x.shape)
    if a.name in SELECTING:
        assert_same_non_nan_bits(got, ref, x)
        tol = np.zeros(ref.shape)
    elif a.exact:
        tol = EXACT_ULPS * ulp(ref, dtype)
    else:
        # Error of f'(x) in ULPs of its largest term, scaled by |g|, plus the final
        # rounding of the product (half an ULP of the result).
        bound = a.backward_ulp if dtype is np.float32 else ref64_error_ulps(a, x, True)
        scale = np.broadcast_to(a.ref_backward_scale(x), ref.shape)
        tol = bound * np.abs(g) * ulp(scale, dtype) + 0.5 * ulp(ref, dtype)
    assert_within(got, ref, tol, x, g)


# The exact functions whose results are inputs or constants, selected: the
# float64 reference gives their bits. The others round a product or quotient,
# which the float64 reference rounds too (and leaky_relu's slope is rounded to
# the data's precision first): within the reference's rounding and the result's.
SELECTING = ("relu", "relu6", "hardtanh")
EXACT_ULPS = 1.0


def assert_same_non_nan_bits(got, ref, x):
    keep = ~np.isnan(ref)
    same = got.astype(np.float64).view(np.uint64) == ref.view(np.uint64)
    assert (same | ~keep).all(), f"x={x}: got {got}, ref {ref}"


@settings(SETTINGS, max_examples=50)
@given(data=st.data())
@ACTS
def test_nan_in_nan_out(a, data):
    # NaN anywhere in x, or in an (otherwise finite) grad, gives NaN there;
    # except relu_backward, which is 0 wherever x <= 0 whatever the grad.
    x = data.draw(views(np.float32, 1e6, shape=(9,)))
    g = np.where(data.draw(hnp.arrays(bool, x.shape)), np.float32(np.nan), np.float32(1.5))
    assert np.array_equal(np.isnan(a.forward(x)), np.isnan(x))
    # the piecewise functions select 0 where their slope is 0, whatever the grad, in either tier
    with np.errstate(invalid="ignore"):
        selected_away = np.isnan(a.ref_backward(g, x)) if a.op.exact else True
    want = np.isnan(x) | (np.isnan(g) & selected_away)
    assert np.array_equal(np.isnan(a.backward(g, x)), want)


# The limits the contract documents (the manifest's Op.limits): for the x·g(x)
# family f(+inf) = +inf, f(-inf) = -0 (relu: +0), f'(+inf) = 1, f'(-inf) = 0, and
# f(huge) = huge, f'(huge) = 1 for a huge finite x; a bounded function (sigmoid)
# has its own limits and saturates at them.
LIMIT_X = np.array([np.inf, -np.inf, 1e200])


def documented_limits(a):
    f_minus, _, f_plus, d_minus, d_plus = a.op.limits
    f_huge = 1e200 * d_plus if f_plus == np.inf else f_plus  # selu grows like its scale times x
    return np.array([f_plus, f_minus, f_huge]), np.array([d_plus, d_minus, d_plus])


@pytest.mark.parametrize("reference", [False, True], ids=["fastact", "reference"])
@ACTS
def test_documented_limits(a, reference):
    f, df = (a.ref_forward, a.ref_backward) if reference else (a.forward, a.backward)
    limit_f, limit_df = documented_limits(a)
    with np.errstate(over="ignore", invalid="ignore"):
        got_f, got_df = f(LIMIT_X), df(np.ones(3), LIMIT_X)
    assert np.array_equal(got_f, limit_f), f"{a.name}{tuple(LIMIT_X)} = {got_f}"
    assert np.array_equal(got_df, limit_df), f"{a.name}'{tuple(LIMIT_X)} = {got_df}"
