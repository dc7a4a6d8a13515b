"""The elementwise family's own contract: parameters (checked by the public
functions, carried to the kernels as float64 ufunc inputs, broadcast like any
input), the piecewise-linear functions' exactness against rational
arithmetic, identities between functions, and the derivatives PyTorch's
backward ops compute from the forward's output. Accuracy at the default
parameters, layouts and special values: test_accuracy, test_layout and the
rest, from the registry."""
from fractions import Fraction

import numpy as np
import pytest

import fastact as fa
from conftest import forced_isa
from fastact import _reference as ref
from fastact import ufuncs
from fastact._manifest import OPS, OPS_BY_NAME, TIERS

PARAM_OPS = [op for op in OPS if op.params]
BAD_VALUES = {
    "finite": [np.nan, np.inf, -np.inf],
    "positive": [0.0, -1.0, np.nan, np.inf],
    "positive_or_inf": [0.0, -2.0, np.nan],
}
NOT_NUMBERS = ["0.5", None, True, [0.5], 1j]


def _bad_cases():
    for op in PARAM_OPS:
        for param in op.params:
            for value in BAD_VALUES[param.check] + NOT_NUMBERS:
                yield pytest.param(op, param.name, value, id=f"{op.name}-{param.name}-{value!r}")


@pytest.mark.parametrize("op,param,value", list(_bad_cases()))
@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_bad_parameter_is_refused_and_nothing_written(op, param, value, direction):
    x = np.linspace(-2, 2, 5)
    out = np.full_like(x, 7.0)
    name = op.name if direction == "forward" else f"{op.name}_backward"
    args = (x,) if direction == "forward" else (np.ones_like(x), x)
    with pytest.raises((ValueError, TypeError), match=rf"^fastact\.{name}: {param} must be "):
        getattr(fa, name)(*args, **{param: value}, out=out)
    np.testing.assert_array_equal(out, 7.0)


@pytest.mark.parametrize("name", ["hardtanh", "hardtanh_backward"])
def test_hardtanh_bounds_must_be_ordered(name):
    x = np.zeros(3)
    args = (x,) if name == "hardtanh" else (x, x)
    with pytest.raises(ValueError, match=rf"^fastact\.{name}: min_val must be <= max_val"):
        getattr(fa, name)(*args, min_val=1.0, max_val=-1.0)
    getattr(fa, name)(*args, min_val=0.5, max_val=0.5)  # equal bounds are fine


def test_parameters_are_positional_too_as_in_torch():
    x = np.linspace(-3, 3, 13)
    np.testing.assert_array_equal(fa.leaky_relu(x, 0.2), fa.leaky_relu(x, negative_slope=0.2))
    np.testing.assert_array_equal(fa.softplus(x, 2.0, 1.0), fa.softplus(x, beta=2.0, threshold=1.0))
    np.testing.assert_array_equal(fa.hardtanh(x, -2.0, 2.0), fa.hardtanh(x, min_val=-2.0, max_val=2.0))


# ---- parameters reach the kernels --------------------------------------------

PARAM_CASES = {
    "softplus": [dict(beta=2.0, threshold=5.0), dict(beta=0.5, threshold=1.0), dict(beta=1.0, threshold=np.inf),
                 dict(beta=3.0, threshold=20.0)],
    "elu": [dict(alpha=0.5), dict(alpha=2.5), dict(alpha=-1.0)],
    "celu": [dict(alpha=0.5), dict(alpha=3.0)],
    "leaky_relu": [dict(negative_slope=0.2), dict(negative_slope=-0.5), dict(negative_slope=1.5)],
    "hardtanh": [dict(min_val=-2.0, max_val=0.5), dict(min_val=0.0, max_val=0.0), dict(min_val=-0.1, max_val=0.3)],
}
assert set(PARAM_CASES) == {op.name for op in PARAM_OPS}


def _ulps(got, want, unit, dtype):
    """|got - want| in ULPs of `unit` (the result, or the derivative's largest term)."""
    spacing = np.spacing(np.maximum(np.abs(unit), np.finfo(dtype).tiny).astype(dtype)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / spacing


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("precision", TIERS)
@pytest.mark.parametrize("name,params", [(n, p) for n, cases in PARAM_CASES.items() for p in cases],
                         ids=lambda v: v if isinstance(v, str) else ",".join(f"{k}={w}" for k, w in v.items()))
def test_parameters_reach_the_kernels(isa, name, params, precision, dtype):
    op = OPS_BY_NAME[name]
    points = 4001 if dtype == np.float32 else 1001
    x = np.concatenate([np.linspace(-12, 12, points), [-0.0, 0.0, 1e-30, -1e-30]]).astype(dtype)
    g = np.linspace(-2, 2, x.size).astype(dtype)
    got = getattr(fa, name)(x, **params, precision=precision)
    grad = getattr(fa, f"{name}_backward")(g, x, **params, precision=precision)
    if op.exact:  # the parameters rounded to the data's precision first, then exact
        rounded = {k: float(dtype(v)) for k, v in params.items()}
        want = getattr(ref, name)(x, **rounded).astype(dtype)
        want_grad = getattr(ref, f"{name}_backward")(g, x, **rounded).astype(dtype)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(grad, want_grad)
        return
    if dtype == np.float32:  # float64 references are exact enough (beta x is exact in float64)
        want = getattr(ref, name)(x, **params)
        want_grad = getattr(ref, f"{name}_backward")(g, x, **params)
        scale = getattr(ref, f"{name}_backward_scale")(x, **params)
    else:
        want, slope = _mp_smooth(name, x, params)
        want_grad, scale = g * slope, np.abs(slope)
    forward_error = _ulps(got, want, want, dtype)
    backward_error = _ulps(grad, want_grad, g * scale, dtype)
    assert forward_error.max() <= op.bound(precision, "fwd"), x[np.argmax(forward_error)]
    assert backward_error.max() <= op.bound(precision, "bwd"), x[np.argmax(backward_error)]


def _mp_smooth(name, x, params):
    """(f(x), f'(x)) in 40-digit arithmetic, as float64 arrays."""
    mpmath = pytest.importorskip("mpmath")
    values, slopes = [], []
    with mpmath.workdps(40):
        for v in x.tolist():
            t = mpmath.mpf(v)
            if name == "softplus":
                beta, threshold = (mpmath.mpf(params[k]) for k in ("beta", "threshold"))
                if beta * t > threshold:
                    f, d = t, mpmath.mpf(1)
                else:
                    f, d = mpmath.log1p(mpmath.exp(beta * t)) / beta, 1 / (1 + mpmath.exp(-beta * t))
            else:  # elu, celu
                alpha = mpmath.mpf(params["alpha"])
                inner = alpha if name == "celu" else 1
                f = t if t > 0 else alpha * mpmath.expm1(t / inner)
                d = mpmath.mpf(1) if t > 0 else alpha / inner * mpmath.exp(t / inner)
            values.append(float(f))
            slopes.append(float(d))
    return np.array(values), np.array(slopes)


NAN_PARAMETER_CALLS = ["elu", "elu_backward", "celu", "celu_backward", "softplus", "softplus_backward",
                        "leaky_relu", "leaky_relu_backward", "hardtanh", "hardtanh_backward"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("call", NAN_PARAMETER_CALLS)
def test_nan_parameters_give_the_scalar_bits_on_any_layout(isa, call, dtype):
    """fastact.ufuncs takes parameters unchecked: a NaN parameter (either
    sign, quiet or signalling, its payload in bits that float32 keeps) gives
    on every kernel set and layout the scalar set's bits on contiguous data.
    Where two NaNs meet inside a kernel, an emulated FMA must not pick one by
    the compiler's operand order, nor negate one that the instruction keeps."""
    uint = np.uint32 if dtype == np.float32 else np.uint64
    x = np.concatenate([np.linspace(-9, 9, 61), [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(dtype)
    x = np.resize(x, 4 * 23).reshape(4, 23)  # rows of odd length: vector bodies and tails
    g = np.linspace(-3, 3, x.size).astype(dtype).reshape(x.shape)
    ufunc = getattr(fa.ufuncs, call + "_with_params")
    args = (g, x) if call.endswith("_backward") else (x,)
    layouts = {"C order": args, "Fortran order": tuple(np.asfortranarray(a) for a in args),
               "every other element": tuple(np.repeat(a, 2, axis=1)[:, ::2] for a in args)}
    for bits in (0x7ff8100000000000, 0xfff4200000000000, 0x7ff0400000000000):
        nan = np.array([bits], np.uint64).view(np.float64)[0]
        params = {"softplus": (nan, 20.0), "hardtanh": (nan, 1.0)}.get(call.removesuffix("_backward"), (nan,))
        with np.errstate(all="ignore"):
            with forced_isa("scalar"):
                want = ufunc(*args, *params).view(uint)
            for layout, inputs in layouts.items():
                got = np.ascontiguousarray(ufunc(*inputs, *params)).view(uint)
                wrong = got != want
                assert not wrong.any(), (f"{call} [{isa}] {layout}, NaN 0x{bits:016x}: {np.count_nonzero(wrong)} "
                                         f"differ, first 0x{int(got[wrong][0]):x}, not 0x{int(want[wrong][0]):x}")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("op", PARAM_OPS, ids=lambda op: op.name)
def test_the_ufuncs_with_the_defaults_are_the_ones_with_parameters_at_the_defaults(isa, op, dtype):
    """fastact.ufuncs.elu(x) is elu_with_params(x, 1.0), bit for bit, in every
    tier and direction: contiguous and small (one kernel call), strided, and
    long enough to split over threads; and it is the public call's result."""
    defaults = tuple(p.default for p in op.params)
    rng = np.random.default_rng(len(op.name))
    x = np.concatenate([rng.standard_normal((1 << 17) + 5) * 8, [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(dtype)
    g = rng.standard_normal(x.size).astype(dtype)
    for tier in op.tiers:
        suffix = "" if tier == op.default_tier else "_" + tier
        for base, arrays in ((op.name, (x,)), (op.name + "_backward", (g, x))):
            plain, general = getattr(ufuncs, base + suffix), getattr(ufuncs, base + "_with_params" + suffix)
            assert plain.nin == len(arrays) and general.nin == len(arrays) + len(defaults)
            for layout in (lambda a: a[:100], lambda a: a[::3], lambda a: a):
                inputs = tuple(layout(a) for a in arrays)
                with np.errstate(all="ignore"):
                    got, want = plain(*inputs), general(*inputs, *defaults)
                assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (base + suffix, dtype, got.size)
        with np.errstate(all="ignore"):
            assert fa.__dict__[op.public](x, precision=tier).tobytes() == getattr(ufuncs, op.name + suffix)(x).tobytes()


def test_parameter_arrays_broadcast_like_inputs(isa):
    # ufunc level: one slope per column, and a slope that changes from element to element
    x = np.linspace(-4, 4, 9)
    slopes = np.array([0.01, 0.2, -1.0])
    table = ufuncs.leaky_relu_with_params(x[:, None], slopes[None, :])
    for j, s in enumerate(slopes):
        np.testing.assert_array_equal(table[:, j], fa.leaky_relu(x, s))
    alphas = np.linspace(0.5, 2.0, x.size)
    got = ufuncs.elu_with_params(x, alphas)
    np.testing.assert_array_equal(got, [fa.elu(np.array([v]), a)[0] for v, a in zip(x, alphas)])
    # parameters broadcast against each other too, and through the float16 path
    lo, hi = np.array([[-1.0], [-2.0]]), np.array([0.5, 1.0, 3.0])
    np.testing.assert_array_equal(ufuncs.hardtanh_with_params(np.float16(2.5), lo, hi), np.minimum(2.5, hi) + 0 * lo)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pass_through_bounds_at_the_edges(isa, dtype):
    # the ufunc takes any bounds: signed zeros, infinities, subnormals, NaN
    # (which passes nothing); x at and beside them, NaN payloads, random bits
    rng = np.random.default_rng(16)
    tiny = float(np.finfo(dtype).smallest_subnormal)
    bounds = [0.0, -0.0, 1.0, -1.0, 6.0, tiny, -tiny, np.inf, -np.inf, np.nan, -np.nan]
    width = np.dtype(dtype).itemsize * 8
    uint = np.dtype(f"u{width // 8}")
    random_bits = rng.integers(0, 2**width - 1, 4000, dtype=np.uint64, endpoint=True).astype(uint).view(dtype)
    edges = np.array(bounds + [np.nextafter(dtype(b), dtype(np.inf)) for b in bounds[:7]]
                     + [np.nextafter(dtype(b), dtype(-np.inf)) for b in bounds[:7]], dtype=dtype)
    x = np.concatenate([edges, -edges, random_bits, rng.standard_normal(1000).astype(dtype) * 4])
    g = rng.standard_normal(x.size).astype(dtype) + 1
    for lo in bounds:
        for hi in bounds:
            with np.errstate(invalid="ignore"):  # signalling NaNs among the random bits
                got = ufuncs.hardtanh_backward_with_params(g, x, lo, hi)
                want = np.where(np.isnan(x), x + 0, np.where((x > lo) & (x < hi), g, 0)).astype(dtype)
            assert got.dtype == dtype
            np.testing.assert_array_equal(got.view(uint), want.view(uint), err_msg=f"bounds ({lo}, {hi})")
    quiet = np.array([np.nan, -np.nan, 1.0, 0.5, -0.0] * 4, dtype=dtype)
    with np.errstate(all="raise"):  # a quiet NaN raises no flag
        for name in ("relu6", "hardtanh", "hardsigmoid"):
            getattr(fa, f"{name}_backward")(np.ones_like(quiet), quiet)


def test_defaults_match_torch_functional():
    torch = pytest.importorskip("torch")
    import inspect
    F = torch.nn.functional
    torch_names = {"log_sigmoid": "logsigmoid"}
    checked = 0
    for op in PARAM_OPS:
        try:  # F.softplus is a builtin without a Python signature
            signature = inspect.signature(getattr(F, torch_names.get(op.name, op.name)))
        except ValueError:
            continue
        for param in op.params:
            assert signature.parameters[param.name].default == param.default, (op.name, param.name)
            checked += 1
    assert checked >= 4


# ---- piecewise linear: exact -------------------------------------------------

def _exact(name, x, g):
    """(f(x), g f'(x)) as Fractions, with the default parameters, PyTorch's sides at the kinks."""
    x, g = Fraction(x), Fraction(g)
    if name == "leaky_relu":
        return x if x > 0 else x * Fraction(0.01 if isinstance(x, float) else 0.01), None
    if name == "hardsigmoid":
        y = 0 if x <= -3 else 1 if x >= 3 else (x + 3) / 6
        return y, (g / 6 if -3 < x < 3 else 0)
    if name == "hardswish":
        y = 0 if x <= -3 else x if x >= 3 else x * (x + 3) / 6
        return y, (0 if x <= -3 else g if x >= 3 else g * (2 * x + 3) / 6)
    raise ValueError(name)


def _round(value, dtype):
    """A Fraction rounded to nearest-even in `dtype`: to double by round-to-odd
    (float() rounds to nearest; the inexact even results stepped towards the
    value), then to the target, which that makes a single rounding."""
    d = float(value)
    if dtype == np.float64 or Fraction(d) == value:
        return dtype(d)
    if np.frombuffer(np.float64(d).tobytes(), np.uint64)[0] % 2 == 0:
        d = float(np.nextafter(d, np.inf if value > Fraction(d) else -np.inf))
    return dtype(d)


def _hard_inputs(dtype, n):
    rng = np.random.default_rng(7)
    finfo = np.finfo(dtype)
    x = np.concatenate([
        rng.uniform(-4, 4, n), rng.uniform(-3.001, -2.999, n // 4), rng.uniform(2.999, 3.001, n // 4),
        np.array([-3, 3, 0, finfo.smallest_subnormal, finfo.tiny, 3 * 2.0**-24, 3 * 2.0**-53, 6 * 2.0**-25]),
        rng.uniform(-1, 1, n // 4) * 2.0 ** rng.integers(finfo.minexp - finfo.nmant, 0, n // 4)])
    if dtype == np.float32:  # near and exact rounding ties the float32 sweep found
        x = np.concatenate([x, np.array([0x3F3FFFFF, 0x33DDB3D7], np.uint32).view(np.float32)])
    x = np.concatenate([x, -x]).astype(dtype)
    # neighbours of the interesting points
    for point in (-3.0, 3.0, -1.5, 0.0):
        x = np.concatenate([x, (np.array(point, dtype) + np.arange(-3, 4) * np.spacing(dtype(max(abs(point), 1))))])
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["hardsigmoid", "hardswish"])
def test_hard_functions_are_correctly_rounded(isa, name, dtype):
    x = _hard_inputs(dtype, 4000)
    g = np.random.default_rng(3).uniform(-4, 4, x.size).astype(dtype)
    got = getattr(fa, name)(x, precision="accurate")
    grad = getattr(fa, f"{name}_backward")(g, x, precision="accurate")
    for i in range(x.size):
        f, d = _exact(name, float(x[i]), float(g[i]))
        assert got[i] == _round(f, dtype), f"{name}({x[i]!r}) = {got[i]!r}, want {_round(f, dtype)!r}"
        assert grad[i] == _round(d, dtype), f"{name}_backward({g[i]!r}, {x[i]!r}) = {grad[i]!r}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["hardsigmoid", "hardswish"])
def test_hard_functions_fast_tier_rounds_as_pytorch(isa, name, dtype):
    """The default tier rounds each step of PyTorch's formula in the data's
    precision, the division by 6 included; only near a rounding tie of that
    division, or where a product is subnormal (rounded twice there, in another
    order), may it land on the other neighbour."""
    x = _hard_inputs(dtype, 4000)
    g = np.random.default_rng(3).uniform(-4, 4, x.size).astype(dtype)
    s = np.clip(x + dtype(3), 0, 6)
    with np.errstate(under="ignore"):
        if name == "hardsigmoid":
            want, want_grad = s / dtype(6), np.where((x > -3) & (x < 3), g / dtype(6), 0).astype(dtype)
        else:
            inside = np.abs(x) < 3
            want = np.where(x > 3, x, np.copysign(np.clip(x, -3, 3) * s / dtype(6), x))
            d = g * ((dtype(2) * np.where(inside, x, 0) + dtype(3)) / dtype(6))
            want_grad = np.where(x <= -3, 0, np.where(x >= 3, g, d)).astype(dtype)
        got, grad = getattr(fa, name)(x), getattr(fa, f"{name}_backward")(g, x)
    for have, expected in ((got, want), (grad, want_grad)):
        apart = np.abs(have.astype(np.float64) - expected) / np.spacing(np.abs(expected).astype(dtype))
        normal = np.abs(expected) >= np.finfo(dtype).tiny
        assert apart.max() <= 1 and np.mean(have[normal] == expected[normal]) > 0.999, (name, apart.max())
    # and within the tier's bounds of the exact values (float64 here; float32: the sweep)
    op = OPS_BY_NAME[name]
    for i in range(0, x.size, 3):
        f, d = _exact(name, float(x[i]), float(g[i]))
        for have, value, scale, bound in ((got[i], f, abs(f), op.bound("fast", "fwd")),
                                          (grad[i], d, abs(g[i]) * getattr(ref, f"{name}_backward_scale")(float(x[i])), op.bound("fast", "bwd"))):
            unit = max(float(np.spacing(dtype(abs(float(scale))))), float(np.finfo(dtype).smallest_subnormal))
            assert abs(Fraction(float(have)) - value) <= Fraction(bound) * Fraction(unit), (name, x[i], g[i], have)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["hardsigmoid", "hardswish"])
def test_hard_backwards_are_correctly_rounded_for_gradients_of_any_size(isa, name, dtype):
    # g from the subnormals to the largest finite: float32 results near and
    # below the underflow threshold round on the subnormal grid (once), huge
    # ones may overflow. float64's hardswish backward is correctly rounded
    # only where its product g (2x + 3) does not underflow (README, Accuracy).
    finfo = np.finfo(dtype)
    rng = np.random.default_rng(11)
    n = 3000
    exponents = rng.integers(finfo.minexp - finfo.nmant, finfo.maxexp, n)
    g = (rng.uniform(-2, 2, n) * np.ldexp(1.0, np.clip(exponents, -1074, 1023))).astype(dtype)
    g = np.concatenate([g, rng.uniform(-1, 1, n // 2).astype(dtype) * finfo.smallest_subnormal * 64])
    x = _hard_inputs(dtype, 800)[: g.size]
    x = np.resize(x, g.size)
    with np.errstate(over="ignore", under="ignore"):
        grad = getattr(fa, f"{name}_backward")(g, x, precision="accurate")
    for i in range(g.size):
        _, d = _exact(name, float(x[i]), float(g[i]))
        want = _round(d, dtype) if abs(d) <= Fraction(float(finfo.max)) else None
        if dtype == np.float64 and name == "hardswish" and abs(d) < Fraction(2.0**-1000):
            continue
        if want is not None and np.isfinite(want):
            assert grad[i] == want, f"{name}_backward({g[i]!r}, {x[i]!r}) = {grad[i]!r}, want {want!r}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hardswish_subnormal_ties_go_to_the_next_term(isa, dtype):
    """hardswish(x) = x/2 + x²/6: where x/2 is a tie between subnormals, the
    x²/6 term decides: up for x > 0, towards 0 for x < 0."""
    tiny = np.finfo(dtype).smallest_subnormal
    x = np.array([tiny, 3 * tiny, -tiny, -3 * tiny], dtype=dtype)
    got = fa.hardswish(x, precision="accurate")
    np.testing.assert_array_equal(got, np.array([tiny, 2 * tiny, -0.0, -tiny], dtype=dtype))
    assert np.signbit(got[2])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clamps_keep_negative_zero_and_nan_like_torch(isa, dtype):
    x = np.array([-0.0, np.nan, -7.0, 7.0], dtype=dtype)
    for y in (fa.relu6(x), fa.hardtanh(x)):
        assert np.signbit(y[0]) and y[0] == 0 and np.isnan(y[1])
    np.testing.assert_array_equal(fa.relu6(x)[2:], [0.0, 6.0])
    np.testing.assert_array_equal(fa.hardtanh(x)[2:], [-1.0, 1.0])


# ---- identities ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("precision", TIERS)
def test_identities(isa, dtype, precision):
    x = np.concatenate([np.linspace(-30, 30, 20001), np.geomspace(1e-30, 1, 200)]).astype(dtype)
    eps = np.finfo(dtype).eps
    bound = OPS_BY_NAME["tanh"].bound(precision, "fwd")
    # tanh is odd, bit for bit; so is the sigmoid's distance from 1/2
    np.testing.assert_array_equal(fa.tanh(-x, precision=precision), -fa.tanh(x, precision=precision))
    s = fa.sigmoid(x, precision=precision).astype(np.float64) + fa.sigmoid(-x, precision=precision)
    assert np.abs(s - 1).max() <= 2 * bound * eps
    # softplus(x) - softplus(-x) = x, within the two results' bounds (without the threshold's switch to x)
    plain = dict(threshold=np.inf, precision=precision)
    d = fa.softplus(x, **plain).astype(np.float64) - fa.softplus(-x, **plain)
    tolerance = bound * np.spacing(np.abs(fa.softplus(np.abs(x), threshold=np.inf)).astype(dtype)).astype(np.float64) * 2
    assert (np.abs(d - x) <= tolerance).all()
    # log_sigmoid(x) = -softplus(-x) exactly in the accurate tier (one formula, one rounding)
    if precision == "accurate":
        np.testing.assert_array_equal(fa.log_sigmoid(x), -fa.softplus(-x, threshold=np.inf))
    # logsigmoid is PyTorch's spelling
    np.testing.assert_array_equal(fa.logsigmoid(x, precision=precision), fa.log_sigmoid(x, precision=precision))
    # selu is elu scaled; celu with alpha = 1 is elu
    np.testing.assert_array_equal(fa.celu(x, precision=precision), fa.elu(x, precision=precision))


# ---- derivatives from the forward's output --------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
def test_backward_from_output(isa, name, dtype):
    x = np.linspace(-12, 12, 20001).astype(dtype)
    g = np.random.default_rng(5).uniform(-3, 3, x.size).astype(dtype)
    y = getattr(fa, name)(x)
    got = getattr(fa, f"{name}_backward_from_output")(g, y)
    exact = getattr(ref, f"{name}_backward_from_output")(g, y)  # long double
    op = OPS_BY_NAME[f"{name}_backward_from_output"]
    spacing = np.spacing(np.maximum(np.abs(exact), np.finfo(dtype).tiny).astype(dtype)).astype(np.longdouble)
    assert (np.abs(got - exact) / spacing).max() <= op.forward_ulp
    # torch computes the same thing
    torch = pytest.importorskip("torch")
    aten = torch.ops.aten
    theirs = getattr(aten, f"{name}_backward")(torch.from_numpy(g), torch.from_numpy(y)).numpy()
    assert (np.abs(got.astype(np.float64) - theirs) <= 2 * np.spacing(np.abs(theirs)).astype(np.float64) + 0).all()


def test_backward_from_output_api():
    y = np.array([0.25, 0.5], np.float32)
    out = np.empty(2, np.float32)
    assert fa.sigmoid_backward_from_output(np.float32(2), y, out=out) is out
    np.testing.assert_array_equal(out, [0.375, 0.5])
    with pytest.raises(TypeError, match="^fastact.tanh_backward_from_output: "):
        fa.tanh_backward_from_output(y, np.array(["a", "b"]))


@pytest.mark.parametrize("dtype,edge", [(np.float32, 80.0), (np.float64, 700.0)])
@pytest.mark.parametrize("name", ["softplus", "log_sigmoid"])
def test_no_underflow_flag_where_the_result_is_normal(isa, name, dtype, edge):
    # e^-|x| is normal up to the edge, so neither tier's steps may underflow there
    # (the fast log(1 + t) once squared a tiny t into the subnormals)
    x = np.concatenate([np.linspace(-edge, edge, 4001), [-edge, edge, -50.0, 50.0]]).astype(dtype)
    for precision in TIERS:
        with np.errstate(all="raise"):
            getattr(fa, name)(x, precision=precision)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("param", [0.3, 2.7, 1e-3, 40.0])
def test_huge_inputs_with_a_parameter_reach_the_limits(isa, dtype, param):
    # y = beta x (softplus) and z = x / alpha (celu) are kept as hi + lo; the low
    # part of a huge one (up to half its ULP) once joined the clamped high part
    # and gave NaN, inf or wrong values where e^-|y| is 0
    big = np.logspace(6, 30 if dtype == np.float32 else 300, 49)
    x = np.concatenate([-big, big, [-np.inf, np.inf]]).astype(dtype)
    neg, pos = x < 0, x > 0
    one = np.ones_like(x)
    for precision in TIERS:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            celu = fa.celu(x, alpha=param, precision=precision)
            celu_grad = fa.celu_backward(one, x, alpha=param, precision=precision)
            softplus = fa.softplus(x, beta=param, threshold=1e30, precision=precision)
            softplus_grad = fa.softplus_backward(one, x, beta=param, threshold=1e30, precision=precision)
        far = neg & (x * param < -1e4) & (x / param < -1e4)
        np.testing.assert_array_equal(celu[far], dtype(-param))
        np.testing.assert_array_equal(celu_grad[far], 0)
        np.testing.assert_array_equal(softplus[far], 0)
        np.testing.assert_array_equal(softplus_grad[far], 0)
        far = pos & (x * param > 1e4)
        np.testing.assert_array_equal(softplus[far], x[far])
        np.testing.assert_array_equal(softplus_grad[far], 1)
