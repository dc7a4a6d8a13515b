"""The public functions' direct call (contiguous float32/float64 arrays of one
shape, no ufunc keywords) gives what the ufunc gives, bit for bit, warnings
and errors included; everything else still goes through the ufunc."""
import warnings

import numpy as np
import pytest

import fastact as fa
from fastact._registry import VARIANTS

from conftest import TESTABLE_ISAS, forced_isa, forced_threads

CASES = [(key, act) for key, act in VARIANTS.items()]


def ufuncs_of(act):
    return (getattr(fa.ufuncs, act.ufunc_name("forward")), getattr(fa.ufuncs, act.ufunc_name("backward")))


def same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape and type(a) is type(b)
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def inputs(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 4).astype(dtype)
    x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3.0, 3.0][:min(8, n)] if n >= 8 else x[:8]
    return x, rng.standard_normal(n).astype(dtype)


@pytest.mark.parametrize("isa", TESTABLE_ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("key,act", CASES, ids=[k for k, _ in CASES])
def test_direct_call_is_the_ufunc_bit_for_bit(key, act, dtype, isa):
    forward, backward = ufuncs_of(act)
    with forced_isa(isa):
        for n in (1, 17, 1000, 5000):   # below and above the C loop's small-call path
            x, g = inputs(n, dtype)
            same_bits(act.forward(x), forward(x, *act.params))
            same_bits(act.backward(g, x), backward(g, x, *act.params))
            out = np.full_like(x, 7.0)
            assert act.forward(x, out=out) is out
            same_bits(out, forward(x, *act.params))
            in_place = x.copy()
            act.forward(in_place, out=in_place)
            same_bits(in_place, forward(x, *act.params))
            grid = x[: n - n % 4].reshape(-1, 4) if n >= 4 else x.reshape(1, -1)
            same_bits(act.forward(grid), forward(grid, *act.params))


@pytest.mark.parametrize("threads", [1, 2])
def test_direct_call_on_large_arrays_with_threads(threads):
    x, g = inputs(1 << 20, np.float32)
    with forced_threads(threads):
        same_bits(fa.gelu(x), fa.ufuncs.gelu(x))
        same_bits(fa.silu_backward(g, x), fa.ufuncs.silu_backward(g, x))
        same_bits(fa.softplus(x, beta=2.0, threshold=5.0), fa.ufuncs.softplus_with_params(x, 2.0, 5.0))


def test_parameters_reach_the_kernel():
    x, _ = inputs(100, np.float32)
    same_bits(fa.elu(x, alpha=0.25), fa.ufuncs.elu_with_params(x, 0.25))
    same_bits(fa.hardtanh(x, min_val=-0.5, max_val=2.0), fa.ufuncs.hardtanh_with_params(x, -0.5, 2.0))
    same_bits(fa.leaky_relu(x, negative_slope=-0.25), fa.ufuncs.leaky_relu_with_params(x, -0.25))
    same_bits(fa.softplus(x, beta=np.float32(3), threshold=10), fa.ufuncs.softplus_with_params(x, 3.0, 10.0))


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), "1", None, True])
def test_bad_parameters_are_refused_as_before(bad):
    x, _ = inputs(10, np.float32)
    with pytest.raises((TypeError, ValueError), match="fastact.softplus: beta must be"):
        fa.softplus(x, beta=bad)


@pytest.mark.parametrize("n", [10, 100_000])
def test_floating_point_errors_follow_errstate(n):
    """selu overflows for x near float32's maximum: the flag is reported as
    the ufunc reports it, under np.errstate."""
    x = np.full(n, 3.3e38, np.float32)
    expected = fa.ufuncs.selu.__name__
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError, match=f"overflow encountered in {expected}"):
            fa.selu(x)
        with pytest.raises(FloatingPointError, match=f"overflow encountered in {expected}"):
            fa.ufuncs.selu(x)
    with np.errstate(over="warn"):
        with pytest.warns(RuntimeWarning, match=f"overflow encountered in {expected}"):
            y = fa.selu(x)
    assert np.isinf(y).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="ignore"):
            fa.selu(x)
        fa.gelu(np.array([np.nan, np.inf, -np.inf, 1e-45], np.float32))  # no spurious flags


def test_stale_flags_are_not_reported():
    with np.errstate(over="ignore"):
        np.float32(3e38) * np.float32(10)  # raises the flag, ignored
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fa.gelu(np.ones(10, np.float32))


def test_the_other_cases_still_take_the_ufunc():
    x, g = inputs(64, np.float32)
    expected = fa.ufuncs.gelu(x)
    same_bits(fa.gelu(x[::1].reshape(8, 8).T).T.copy(), expected.reshape(8, 8))   # Fortran order
    same_bits(fa.gelu(x[::2]), fa.ufuncs.gelu(x[::2]))                               # strided
    assert type(fa.gelu(np.float32(1.0))) is np.float32                             # scalar
    assert type(fa.gelu(np.array(1.0, np.float32))) is np.float32                   # 0-d
    same_bits(fa.gelu(x.astype(">f4")), expected)                                    # byte-swapped
    same_bits(fa.gelu(x.astype(np.float16)), fa.ufuncs.gelu(x.astype(np.float16)))  # 16-bit
    same_bits(fa.gelu(np.arange(5)), fa.ufuncs.gelu(np.arange(5)))                   # integers
    out64 = np.empty(64)
    fa.gelu(x, out=out64)                                                            # out of another dtype
    same_bits(out64, fa.ufuncs.gelu(x, out=np.empty(64)))
    same_bits(fa.silu_backward(g[:1], x), fa.ufuncs.silu_backward(g[:1], x))        # broadcast

    class Sub(np.ndarray):
        pass
    assert type(fa.gelu(x.view(Sub))) is Sub

    buffer = x.copy()
    shifted = fa.ufuncs.gelu(buffer[:-1])
    fa.gelu(buffer[:-1], out=buffer[1:])                                             # partial overlap
    same_bits(buffer[1:], shifted)


@pytest.mark.parametrize("isa", TESTABLE_ISAS)
@pytest.mark.parametrize("precision", ["fast", "accurate"])
@pytest.mark.parametrize("dtype,big", [(np.float32, 3e38), (np.float64, 1.7e308)])
def test_elu_family_raises_no_overflow_below_the_limit(isa, precision, dtype, big):
    """selu(x) = 1.0507 x stays finite for x = 3e38, though scale·alpha·x
    (the negative branch's factor) would overflow there, as would celu's
    x/alpha: the branch not taken raises no flag."""
    x = np.array([big, 1.0, -1.0, -0.0] * 8, dtype)
    with forced_isa(isa), np.errstate(over="raise", invalid="raise", divide="raise"):
        fa.selu(x, precision=precision)
        fa.elu(x, precision=precision)
        fa.celu(x, alpha=0.5, precision=precision)
        fa.selu_backward(np.full_like(x, 1.0), x, precision=precision)
        fa.elu_backward(x / 4, x, alpha=1.5, precision=precision)
        fa.celu_backward(np.full_like(x, 1.0), x, alpha=0.5, precision=precision)


ROW_FUNCTIONS = ["softmax", "log_softmax", "softmax_backward", "log_softmax_backward"]


@pytest.mark.parametrize("precision", ["fast", "accurate"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ROW_FUNCTIONS)
def test_row_functions_direct_call_is_the_gufunc_bit_for_bit(name, dtype, precision):
    """softmax and the like along the last axis of C-contiguous arrays call the row loop
    directly: the gufunc's bits, with out=, in place, on 1-d and 3-d arrays, with NaN rows."""
    fn = getattr(fa, name)
    gufunc = getattr(fa.ufuncs, name if precision == "fast" else name + "_accurate")
    nin = 2 if name.endswith("_backward") else 1
    rng = np.random.default_rng(5)
    before = fa._ext._row_direct_count()
    for shape in [(1,), (17,), (3, 1000), (2, 3, 40), (4, 9000)]:
        args = [(rng.standard_normal(shape) * 4).astype(dtype) for _ in range(nin)]
        args[0].flat[0] = np.nan
        for axis in (-1, len(shape) - 1):
            same_bits(fn(*args, axis, precision=precision), gufunc(*args))
        out = np.full(shape, 7.0, dtype)
        assert fn(*args, precision=precision, out=out) is out
        same_bits(out, gufunc(*args))
        in_place = [a.copy() for a in args]
        fn(*in_place, precision=precision, out=in_place[0])
        same_bits(in_place[0], gufunc(*args))
    assert fa._ext._row_direct_count() - before == 5 * 4  # every call above but the gufunc's


def test_row_functions_other_cases_take_the_gufunc():
    """Another axis, strides, another dtype, mixed shapes, lists and overlapping out= give
    the gufunc's results as before."""
    x = (np.random.default_rng(6).standard_normal((6, 8)) * 3).astype(np.float32)
    before = fa._ext._row_direct_count()
    with pytest.raises((OverflowError, ValueError)):  # as before: the gufunc's own error
        fa.softmax(x, axis=2**70)
    same_bits(np.ascontiguousarray(fa.softmax(x, axis=0)),
              np.ascontiguousarray(fa.ufuncs.softmax(x, axes=[(0,), (0,)])))
    same_bits(fa.softmax(x[:, ::2]), fa.ufuncs.softmax(np.ascontiguousarray(x[:, ::2])))
    same_bits(fa.softmax(x.astype(np.float16)), fa.ufuncs.softmax(x.astype(np.float16)))
    same_bits(fa.softmax(x.tolist()), fa.ufuncs.softmax(np.asarray(x.tolist())))
    g = np.ones(8, np.float32)
    same_bits(fa.softmax_backward(g, x), fa.ufuncs.softmax_backward(g, x))
    buf = np.concatenate([x.ravel(), np.zeros(8, np.float32)])
    shifted = buf[8:].reshape(6, 8)   # overlaps the input by all but one row
    want = fa.ufuncs.softmax(buf[:48].reshape(6, 8))
    fa.softmax(buf[:48].reshape(6, 8), out=shifted)
    same_bits(shifted, want)
    assert fa._ext._row_direct_count() == before  # none of these took the direct path


@pytest.mark.parametrize("precision", ["fast", "accurate"])
def test_row_functions_direct_call_reports_flags_as_the_gufunc(precision):
    """A backward whose dot product overflows reports it as the gufunc does, under
    np.errstate, with the gufunc's name; a clean call reports nothing."""
    big = np.full((2, 4), 3e38, np.float32)
    name = "softmax_backward" if precision == "fast" else "softmax_backward_accurate"
    before = fa._ext._row_direct_count()
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError, match=f"overflow encountered in {name}"):
            fa.softmax_backward(big, big, precision=precision)
        assert fa._ext._row_direct_count() == before + 1
        with pytest.raises(FloatingPointError, match=f"overflow encountered in {name}"):
            getattr(fa.ufuncs, name)(big, big)
    with np.errstate(all="raise"):
        fa.softmax(np.zeros((2, 5), np.float32), precision=precision)
    caught = []
    for call in (lambda: fa.softmax_backward(big, big, precision=precision),
                 lambda: getattr(fa.ufuncs, name)(big, big)):
        with warnings.catch_warnings(record=True) as each:
            warnings.simplefilter("always")
            with np.errstate(all="warn"):
                call()
        caught.append(sorted(str(w.message) for w in each))
    assert caught[0] == caught[1] and f"overflow encountered in {name}" in caught[0]
