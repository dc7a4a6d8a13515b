"""API semantics of every public function in every precision tier, driven by the
registry (VARIANTS): dtypes and promotion, scalars and lists, out= and its
errors, precision=, layouts, broadcasting, where=, the ufunc protocol, and the
ISA and thread controls."""
import re

import numpy as np
import pytest

import fastact as fa
from fastact import ufuncs
from fastact._manifest import OPS
from fastact._registry import VARIANTS

FLOATS = [np.float16, np.float32, np.float64]

# Every public function once: (callable, arity, name in its error messages,
# the ufunc it dispatches to).
FUNCS = [pytest.param(a.forward, 1, getattr(a.forward, "func", a.forward).__name__,
                      getattr(ufuncs, a.ufunc_name("forward")), id=a.key) for a in VARIANTS.values()] + [
         pytest.param(a.backward, 2, getattr(a.backward, "func", a.backward).__name__,
                      getattr(ufuncs, a.ufunc_name("backward")), id=a.key + "_backward")
         for a in VARIANTS.values()]

# np.exp (unary) and np.arctan2 (binary) have exactly the loops e, f, d (+ g,
# + complex for exp): the promotion oracles for integer, bool and mixed inputs.
ORACLE = {1: np.exp, 2: np.arctan2}


def as_bits(a):
    a = np.asarray(a)
    return a.view(f"u{min(a.itemsize, 8)}")  # complex128: two words per element


def assert_same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    bad = as_bits(got) != as_bits(want)
    assert not bad.any(), f"{bad.sum()} differ: got {got[bad][:5]}, want {want[bad][:5]}"


def sample(dtype, n=37, seed=0):
    """Moderate random values with the specials a kernel might mishandle
    (quiet NaN must not raise 'invalid': warnings are errors here)."""
    x = np.random.default_rng(seed).standard_normal(n) * 4
    specials = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-6, -30.0][:n]
    x[:len(specials)] = specials
    return x.astype(dtype)


def grad_for(x, seed=1):
    return (np.random.default_rng(seed).standard_normal(np.shape(x)) * 2).astype(np.asarray(x).dtype)


def args_for(arity, x):
    return (x,) if arity == 1 else (grad_for(x), x)


def contiguous(a):
    return np.array(a, copy=True, order="C")  # unlike ascontiguousarray, keeps 0-d


# ---- dtypes, scalars, lists ---------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_float_dtype_in_is_dtype_out(f, arity, name, ufunc, dtype):
    out = f(*args_for(arity, sample(dtype)))
    assert type(out) is np.ndarray and out.dtype == dtype and out.shape == (37,)


def float16_ties(v):
    """Where the float32 values v lie exactly halfway between two float16 values."""
    bits = v.view(np.uint32) & 0x7FFFFFFF
    normal = ((bits & 0x1FFF) == 0x1000) & (bits >= 0x38800000) & (bits <= 0x477FF000)
    with np.errstate(invalid="ignore"):
        scaled = np.abs(v.astype(np.float64)) * 2.0**25
        subnormal = (bits < 0x38800000) & (scaled == np.floor(scaled)) & (np.fmod(scaled, 2) == 1)
    return normal | subnormal


@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_float16_is_float32_rounded_once(f, arity, name, ufunc):
    """float16 results are the float32 results rounded to float16, except where
    a float32 result is exactly halfway between two float16 values: rounding
    it to even could go the wrong way, so those are the float64 results
    rounded once (NumPy's float64 -> float16 conversion rounds once). The
    smooth functions without parameters go further forward: every result is
    the float64 one rounded once."""
    # Every float16 bit pattern (signalling NaNs come back quiet, as F16C makes them).
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    args = (x,) if arity == 1 else (np.resize(np.float16([1, -2, 0.5, 3, -0.75]), x.size), x)
    name_of_op = ufunc.__name__.replace("_with_params", "")
    op = next(op for op in OPS if name_of_op in (op.name, op.name + "_accurate", op.name + "_backward",
                                                 op.name + "_backward_accurate"))
    # the exact piecewise ops' float32 kernels round their parameters to float32, and so do their ties
    params = tuple(float(np.float32(p.default)) if op.exact else p.default for p in op.params)
    smooth_forward = (not op.exact and not op.params and "fast" in op.tiers
                      and "_backward" not in ufunc.__name__)
    with np.errstate(over="ignore", invalid="ignore"):  # selu overflows past 65504; sNaN inputs
        wide32 = f(*(a.astype(np.float32) for a in args))
        wide64 = ufunc(*(a.astype(np.float64) for a in args), *params)
        want = np.where(float16_ties(wide32) | smooth_forward, wide64.astype(np.float16), wide32.astype(np.float16))
    got = f(*args)
    nan = np.isnan(got)
    assert np.array_equal(nan, np.isnan(want))
    assert_same_bits(got[~nan], want[~nan])


# What np.exp gives these dtypes (spelled out: the contract, not just the oracle).
PROMOTION = {np.bool_: np.float16, np.int8: np.float16, np.uint8: np.float16,
             np.int16: np.float32, np.uint16: np.float32, np.int32: np.float64,
             np.uint32: np.float64, np.int64: np.float64, np.uint64: np.float64}


@pytest.mark.parametrize(("dtype", "promoted"), PROMOTION.items(), ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_integers_and_bools_promote_like_exp(f, arity, name, ufunc, dtype, promoted):
    x = np.array([0, 1, 2, 3, 5], dtype=dtype)
    args = (x,) if arity == 1 else (x[::-1], x)
    assert ORACLE[arity](*args).dtype == promoted
    assert_same_bits(f(*args), f(*(a.astype(promoted) for a in args)))


@pytest.mark.parametrize(("g", "x"), [
    (np.float32([1, 2]), np.int8([1, -1])),
    (np.float16([1, 2]), np.int16([1, -1])),
    (np.float32([1, 2]), np.float64([1, -1])),
    (np.int8([1, 2]), np.bool_([True, False])),
    (2.0, np.float32([1, -1])),                 # a Python float is weak (NEP 50)
    (np.float64(2.0), np.float32([1, -1])),     # a NumPy scalar is not
    (3, np.float16([1, -1])),
], ids=["f32-i8", "f16-i16", "f32-f64", "i8-bool", "pyfloat-f32", "npf64-f32", "pyint-f16"])
@pytest.mark.parametrize("a", VARIANTS.values(), ids=VARIANTS.keys())
def test_backward_mixed_dtypes_promote_like_numpy(a, g, x):
    want = np.arctan2(g, x).dtype
    got = a.backward(g, x)
    assert got.dtype == want
    assert_same_bits(got, a.backward(np.asarray(g).astype(want), x.astype(want)))


@pytest.mark.parametrize("value", [1.5, -2, True, np.float32(0.75), np.float16(-1.25), np.int16(3)],
                         ids=repr)
@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_scalars_give_numpy_scalars(f, arity, name, ufunc, value):
    args = (value,) * arity
    got, oracle = f(*args), ORACLE[arity](*args)
    assert type(got) is type(oracle)  # a NumPy scalar of NumPy's promoted type
    assert_same_bits(got, f(*(np.array([v], oracle.dtype) for v in args))[0])


@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_zero_d_array_gives_scalar(f, arity, name, ufunc):
    x = np.array(-0.5, np.float32)
    got = f(*(x,) * arity)
    assert type(got) is np.float32
    assert_same_bits(got, f(*(np.float32([-0.5]),) * arity)[0])


@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_lists_are_arrays(f, arity, name, ufunc):
    values = [[1.5, -2.0, 0.0], [3, -4, 5]]
    got = f(*(values,) * arity)
    assert type(got) is np.ndarray and got.shape == (2, 3)
    assert_same_bits(got, f(*(np.array(values, np.float64),) * arity))


# ---- bad inputs -----------------------------------------------------------------

BAD_INPUTS = {"complex": np.array([1 + 2j, 0j]), "pycomplex": 1j, "object": np.array([1.0, 2.0], object),
              "str": np.array(["1.0", "2"]), "bytes": np.array([b"1", b"2"]),
              "datetime": np.array(["2020-01-01", "2021-01-01"], "datetime64[D]")}


@pytest.mark.parametrize("bad", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_unsupported_dtypes_raise_type_error(f, arity, name, ufunc, bad):
    for position in range(arity):
        args = [np.ones(2)] * arity
        args[position] = bad
        with pytest.raises(TypeError) as info:
            f(*args)
        msg = str(info.value)
        assert msg.startswith(f"fastact.{name}:") and str(np.asarray(bad).dtype) in msg, msg


@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_unconvertible_input_error_names_function(f, arity, name, ufunc):
    # A ragged list cannot become an array: the error must still say which function failed.
    with pytest.raises(ValueError, match=f"^fastact\\.{name}:"):
        f(*[[[1.0], [2.0, 3.0]]] * arity)


@pytest.mark.parametrize("approximate", ["bogus", "TANH", "", None, 1, ["tanh"]], ids=repr)
@pytest.mark.parametrize("backward", [False, True])
def test_gelu_rejects_unknown_approximation(backward, approximate):
    f, name = (fa.gelu_backward, "gelu_backward") if backward else (fa.gelu, "gelu")
    with pytest.raises(ValueError, match=f"^fastact\\.{name}:") as info:
        f(*[np.ones(3)] * (1 + backward), approximate=approximate)
    assert repr(approximate) in str(info.value)


def test_gelu_approximate_selects_ufunc():
    x, g = sample(np.float32), grad_for(sample(np.float32))
    exact, tanh = ufuncs.gelu(x), ufuncs.gelu_tanh(x)
    assert not np.array_equal(exact, tanh, equal_nan=True)  # the two forms do differ
    assert_same_bits(fa.gelu(x), exact)
    assert_same_bits(fa.gelu(x, "none"), exact)
    assert_same_bits(fa.gelu(x, approximate="tanh"), tanh)
    assert_same_bits(fa.gelu_backward(g, x, "tanh"), ufuncs.gelu_tanh_backward(g, x))
    assert_same_bits(fa.gelu_backward(g, x), ufuncs.gelu_backward(g, x))


# each public function once, with its arity
PUBLIC_FUNCTIONS = sorted({(getattr(p.values[0], "func", p.values[0]), p.values[1]) for p in FUNCS},
                          key=lambda pair: pair[0].__name__)


@pytest.mark.parametrize("precision", ["bogus", "Fast", "", None, 1, ["fast"], "exact"], ids=repr)
@pytest.mark.parametrize("f, arity", PUBLIC_FUNCTIONS, ids=[f.__name__ for f, _ in PUBLIC_FUNCTIONS])
def test_unknown_precision_is_a_value_error_naming_function_and_choices(f, arity, precision):
    out = np.full(3, 7.0)
    with pytest.raises(ValueError, match=f"^fastact\\.{f.__name__}: precision must be 'fast' or 'accurate', "
                                         f"not {re.escape(repr(precision))}$"):
        f(*[np.ones(3)] * arity, precision=precision, out=out)
    assert (out == 7.0).all()  # nothing written


def test_precision_selects_the_tier_ufunc():
    x = sample(np.float32, 4000)
    g = grad_for(x)
    for a in VARIANTS.values():
        forward, backward = getattr(ufuncs, a.ufunc_name("forward")), getattr(ufuncs, a.ufunc_name("backward"))
        assert_same_bits(a.forward(x), forward(x, *a.params))
        assert_same_bits(a.backward(g, x), backward(g, x, *a.params))
    # the default is the fast tier; the tiers differ somewhere for every smooth
    # function, and relu has one kernel for both
    assert_same_bits(fa.gelu(x), fa.gelu(x, precision="fast"))
    assert_same_bits(fa.gelu(x, precision="accurate"), ufuncs.gelu_accurate(x))
    assert_same_bits(fa.gelu(x), ufuncs.gelu(x))
    assert not np.array_equal(fa.silu(x), fa.silu(x, precision="accurate"), equal_nan=True)
    assert not np.array_equal(fa.gelu(x, "tanh"), fa.gelu(x, "tanh", precision="accurate"), equal_nan=True)
    assert_same_bits(fa.relu(x, precision="accurate"), fa.relu(x))
    assert_same_bits(fa.relu_backward(g, x, precision="accurate"), fa.relu_backward(g, x))


# ---- out= -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_out_is_filled_and_returned(f, arity, name, ufunc, dtype):
    args = args_for(arity, sample(dtype))
    want = f(*args)
    out = np.full_like(want, 7)
    assert f(*args, out=out) is out
    assert_same_bits(out, want)
    out2 = np.full_like(want, 7)
    assert f(*args, out=(out2,)) is out2  # the ufunc's tuple form too
    assert_same_bits(out2, want)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_in_place_on_each_operand(f, arity, name, ufunc, dtype):
    args = args_for(arity, sample(dtype))
    want = f(*args)
    for position in range(arity):
        work = [a.copy() for a in args]
        assert f(*work, out=work[position]) is work[position]
        assert_same_bits(work[position], want)
        for other in set(range(arity)) - {position}:
            assert_same_bits(work[other], args[other])  # the other operand untouched


@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_out_overlapping_input_with_shift(f, arity, name, ufunc):
    # Partial overlap: NumPy must buffer, the result is as if from a copy.
    x = sample(np.float64, 100)
    want = f(*args_for(arity, x[1:].copy()))
    args = args_for(arity, x[1:])
    f(*args, out=x[:-1])
    assert_same_bits(x[:-1], want)


@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_out_may_broadcast_inputs(f, arity, name, ufunc):
    args = args_for(arity, sample(np.float64, 5))
    out = np.empty((3, 5))
    f(*args, out=out)
    assert_same_bits(out, np.broadcast_to(f(*args), (3, 5)))


@pytest.mark.parametrize("out_shape", [(4,), (2,), (3, 1), ()], ids=str)
@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_out_wrong_shape_raises_and_writes_nothing(f, arity, name, ufunc, out_shape):
    out = np.full(out_shape, 12345.0)
    with pytest.raises(ValueError, match=f"^fastact\\.{name}:"):
        f(*args_for(arity, sample(np.float64, 3)), out=out)
    assert (out == 12345.0).all()


@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_read_only_out_raises_and_writes_nothing(f, arity, name, ufunc):
    out = np.full(37, 12345.0)
    out.flags.writeable = False
    with pytest.raises(ValueError, match=f"^fastact\\.{name}:"):
        f(*args_for(arity, sample(np.float64)), out=out)
    assert (out == 12345.0).all()


@pytest.mark.parametrize("out_dtype", [np.float16, np.float32, np.float64, np.complex128, np.int32,
                                       np.int64, np.uint8, np.bool_], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("in_dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_out_casting_follows_numpy(f, arity, name, ufunc, in_dtype, out_dtype):
    # |x| < 8 so that every allowed cast is exact enough to raise no overflow.
    x = np.linspace(-8, 8, 33).astype(in_dtype)
    args = args_for(arity, x)
    try:
        ORACLE[arity](*args, out=np.zeros(33, out_dtype))
        allowed = True
    except TypeError:
        allowed = False
    out = np.zeros(33, out_dtype) + 99
    if allowed:
        f(*args, out=out)
        assert_same_bits(out, f(*args).astype(out_dtype))
    else:
        with pytest.raises(TypeError, match=f"^fastact\\.{name}:.*{np.dtype(in_dtype).name}"):
            f(*args, out=out)
        assert (out == 99).all()
    # NumPy's same_kind rule: float -> integer/bool refused, float -> float/complex allowed.
    assert allowed == (np.dtype(out_dtype).kind in "fc")


@pytest.mark.parametrize("layout", ["reversed", "strided", "unaligned", "fortran"])
@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_out_with_any_layout(f, arity, name, ufunc, layout):
    args = args_for(arity, sample(np.float32, 24).reshape(4, 6))
    want = f(*args)
    if layout == "reversed":
        out = np.zeros((4, 6), np.float32)[::-1, ::-1]
    elif layout == "strided":
        out = np.zeros((8, 12), np.float32)[::2, 1::2]
    elif layout == "unaligned":
        out = np.ndarray((4, 6), np.float32, np.zeros(24 * 4 + 1, np.uint8), offset=1)
        assert not out.flags.aligned
    else:
        out = np.zeros((4, 6), np.float32, order="F")
    f(*args, out=out)
    assert_same_bits(contiguous(out), want)


# ---- inputs untouched, broadcasting, layouts, where= ------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_inputs_are_never_modified(f, arity, name, ufunc, dtype):
    base = sample(dtype, 60)
    for x in (base, base[::-2]):  # the direct kernel path and the gather path
        args = args_for(arity, x)
        saved = [a.copy() for a in args]
        f(*args)
        f(*args, out=np.empty(x.shape, dtype))
        for a, s in zip(args, saved):
            assert_same_bits(a, s)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("a", VARIANTS.values(), ids=VARIANTS.keys())
def test_backward_broadcasts_grad_and_x(a, dtype):
    x = sample(dtype, 6)
    # a scalar gradient is a full array of it
    assert_same_bits(a.backward(dtype(2), x), a.backward(np.full(6, 2, dtype), x))
    # column gradient times row input: an outer product of shapes
    g = np.array([[1], [-0.5], [3]], dtype)
    got = a.backward(g, x)
    assert got.shape == (3, 6)
    for i in range(3):
        assert_same_bits(got[i], a.backward(np.full(6, g[i, 0], dtype), x))
    # and a column input against a row gradient
    g = np.linspace(-3, 3, 6).astype(dtype)
    assert_same_bits(a.backward(g[None, :], x[:, None]),
                     a.backward(np.tile(g, (6, 1)), np.repeat(x, 6).reshape(6, 6)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("a", VARIANTS.values(), ids=VARIANTS.keys())
def test_backward_at_infinities_is_grad_times_limit(a, dtype):
    # The derivatives are 1 at +inf and 0 at -inf (the manifest's limits; sigmoid's
    # are 0 at both), so the result is g * 1 or g * 0 (NaN for an infinite g);
    # relu_backward selects g or 0 instead.
    g = np.array([1, -5, 1e4, -3e4, np.inf, -np.inf, np.nan] * 2, dtype)
    x = np.repeat(np.array([np.inf, -np.inf], dtype), 7)
    *_, d_minus, d_plus = a.op.limits
    limit = np.where(x > 0, d_plus, d_minus)
    with np.errstate(invalid="ignore", over="ignore"):  # inf * 0 is NaN and rightly flags 'invalid'
        got = a.backward(g, x)
        # g times the limit: rounded once, or the limit first rounded to the dtype (as
        # leaky_relu's slope is, and the fast tier's constants); the piecewise functions
        # select g or 0 where the slope is 1 or 0, in either tier
        kernel = np.float32 if dtype == np.float16 else dtype  # what float16 is computed in
        once = (g.astype(np.float64) * limit).astype(dtype)
        twice = (g.astype(kernel) * limit.astype(kernel)).astype(dtype)
        if a.op.exact:
            once = twice = np.where(limit == 1, g, np.where(limit == 0, 0, twice)).astype(dtype)
    ok = (got == once) | (got == twice) | (np.isnan(got) & np.isnan(once))
    assert ok.all(), f"x={x}\ng={g}\ngot={got}\nwant={once} or {twice}"


def _unaligned(a):
    """A copy of `a` whose data starts one byte past an aligned address."""
    view = np.ndarray(a.shape, a.dtype, np.zeros(a.nbytes + 1, np.uint8), offset=1)
    view[...] = a
    assert not view.flags.aligned or a.size == 0
    return view


LAYOUTS = {
    "0d": lambda a: a[3:4].reshape(()),
    "empty": lambda a: a[:0],
    "empty_3x0": lambda a: a[:0].reshape(3, 0),
    "fortran": lambda a: np.asfortranarray(a[:48].reshape(6, 8)),
    "reversed": lambda a: a[::-1],
    "step3": lambda a: a[::3],
    "transposed": lambda a: a.reshape(12, 20).T,
    "sliced_2d": lambda a: a.reshape(12, 20)[::-2, 1::3],
    "unaligned": _unaligned,
    "unaligned_strided": lambda a: _unaligned(a)[::2],
    "stride0": lambda a: np.broadcast_to(a[:5], (4, 5)),
}


@pytest.mark.parametrize("layout", LAYOUTS.keys())
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_any_layout_matches_contiguous(f, arity, name, ufunc, dtype, layout):
    make = LAYOUTS[layout]
    x = make(sample(dtype, 240))
    args = (x,) if arity == 1 else (make(grad_for(sample(dtype, 240))), x)
    got = f(*args)
    assert np.shape(got) == x.shape
    assert_same_bits(got, f(*(contiguous(a) for a in args)))
    if arity == 2:  # only one operand in the layout
        assert_same_bits(f(contiguous(args[0]), x), got)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_where_leaves_masked_out_elements(f, arity, name, ufunc, dtype):
    args = args_for(arity, sample(dtype, 36).reshape(4, 9))
    where = np.random.default_rng(2).random((1, 9)) < 0.5  # broadcast over rows
    out = np.full((4, 9), 7, dtype)
    f(*args, out=out, where=where)
    mask = np.broadcast_to(where, (4, 9))
    assert_same_bits(out[mask], f(*args)[mask])
    assert (out[~mask] == 7).all()


@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_dtype_and_casting_keywords_pass_through(f, arity, name, ufunc):
    args = args_for(arity, sample(np.float32))
    got = f(*args, dtype=np.float64)
    assert_same_bits(got, f(*(a.astype(np.float64) for a in args)))
    with pytest.raises(TypeError, match=f"^fastact\\.{name}:"):
        f(*args, dtype=np.float64, casting="no")


# ---- the ufunc protocol --------------------------------------------------------------

class Wrapped:
    """A Dask/xarray stand-in: takes over any ufunc applied to it, then runs it on its data."""

    def __init__(self, data):
        self.data = data
        self.seen = []

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        self.seen.append((ufunc, method))
        data = [i.data if isinstance(i, Wrapped) else i for i in inputs]
        return Wrapped(getattr(ufunc, method)(*data, **kwargs))


@pytest.mark.parametrize(("f", "arity", "name", "ufunc"), FUNCS)
def test_array_ufunc_dispatch_sees_fastact_ufunc(f, arity, name, ufunc):
    args = args_for(arity, sample(np.float64))
    want = f(*args)
    for position in range(arity):
        wrapped = list(args)
        wrapped[position] = w = Wrapped(args[position])
        got = f(*wrapped)
        assert isinstance(got, Wrapped) and w.seen == [(ufunc, "__call__")]
        assert_same_bits(got.data, want)


def test_ufunc_objects_are_numpy_ufuncs():
    for a in VARIANTS.values():
        params = "d" * len(a.params)  # float64 parameter inputs after the arrays
        for direction, nin in (("forward", 1), ("backward", 2)):
            u = getattr(ufuncs, a.ufunc_name(direction))
            assert isinstance(u, np.ufunc) and u.__name__ == a.ufunc_name(direction)
            assert (u.nin, u.nout) == (nin + len(params), 1)
            assert u.types == [c * nin + params + "->" + c for c in "efd"]


# ---- ISA and thread controls, version ----------------------------------------------

def test_available_isas_best_first_and_current_among_them():
    isas = fa.available_isas()
    assert isas[-1] == "scalar" and len(set(isas)) == len(isas)
    order = ["neon", "avx512", "avx2", "sse2", "scalar"]  # neon only on AArch64, the others only on x86-64
    assert isas == sorted(isas, key=order.index)
    assert fa.isa() in isas + ["avx512-emulated"]


def test_set_isa_returns_previous_and_takes_effect():
    start = fa.isa()
    try:
        previous = start
        for name in fa.available_isas()[::-1]:
            assert fa.set_isa(name) == previous
            assert fa.isa() == name
            previous = name
    finally:
        fa.set_isa(start)
    assert fa.isa() == start


UNKNOWN_ISAS = ["bogus", "", "AVX2", "NEON", None] + [
    n for n in ("avx512", "avx2", "sse2", "neon") if n not in fa.available_isas()]


@pytest.mark.parametrize("name", UNKNOWN_ISAS, ids=repr)
def test_set_isa_rejects_unknown_or_unsupported(name):
    before = fa.isa()
    with pytest.raises(ValueError, match="^fastact\\.set_isa:") as info:
        fa.set_isa(name)
    msg = str(info.value)
    assert repr(name) in msg and all(repr(n) in msg for n in fa.available_isas()), msg
    assert fa.isa() == before


@pytest.mark.parametrize("n", [0, -1, 1.5, True, False, "2", None, 2.0], ids=repr)
def test_set_num_threads_rejects_non_positive_integers(n):
    before = fa.get_num_threads()
    with pytest.raises(ValueError, match="^fastact\\.set_num_threads:"):
        fa.set_num_threads(n)
    assert fa.get_num_threads() == before


def test_set_num_threads_returns_previous_and_takes_effect():
    start = fa.get_num_threads()
    assert isinstance(start, int) and start >= 1
    try:
        assert fa.set_num_threads(3) == start
        assert fa.get_num_threads() == 3
        assert fa.set_num_threads(np.int64(1)) == 3
        assert fa.get_num_threads() == 1
    finally:
        fa.set_num_threads(start)
    assert fa.get_num_threads() == start


def test_version_is_a_string():
    assert isinstance(fa.__version__, str) and fa.__version__
