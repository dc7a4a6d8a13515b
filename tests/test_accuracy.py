"""Accuracy of every activation against higher-precision references, under
every kernel set (the `isa` fixture).

float32: a strided sweep of 2^24 finite bit patterns, judged against the
float64 references of fastact._reference (far below a float32 ULP from
exact), on the best kernel set the CPU has; the other sets on every 64th
point of it (test_layout and test_fused check that every set gives the
same bits as the scalar one). float64: the mpmath set in tests/data (tools/make_reference_data.py),
judged against the exact value. Every precision tier, each held to its own
bounds, from the registry; errors are in
ULPs of the result (forward) or of the derivative's largest term (backward),
with the subnormal spacing as the smallest ULP. tools/accuracy_report.py
sweeps all 2^32 float32 inputs and prints the full table.
"""
import contextlib
import pathlib

import numpy as np
import pytest

import fastact as fa
from fastact._manifest import TIERS
from fastact._registry import ACTIVATIONS, VARIANTS

SMOOTH = [name for name, act in ACTIVATIONS.items() if not act.exact]
SMOOTH_VARIANTS = [key for key, act in VARIANTS.items() if not act.exact]  # every tier
# the stored mpmath set's: the piecewise functions' exact values are rationals (test_family)
MPMATH = [name for name in SMOOTH if not ACTIVATIONS[name].op.exact]
MPMATH_VARIANTS = [key for key in SMOOTH_VARIANTS if not VARIANTS[key].op.exact]
DATA = pathlib.Path(__file__).parent / "data" / "reference_f64.npz"
DIRECTIONS = ["forward", "backward"]
# The full float32 sweep on the set calls get by default on this CPU; the
# others (scalar and sse2 compute FMAs in software where the CPU lacks them,
# avx512-emulated every register op in two or in lane loops: 2-5x slower)
# sweep every 64th point (2^18 of them: the README's test command keeps to
# 5 minutes on 2 cores). 64 is prime to the sweep's stride (255) and to 97,
# so the points still cycle through every low-bit offset.
FULL_SWEEP_ISA = fa.available_isas()[0]
SUBSWEEP_STEP = 64
EXP_BITS = np.uint64(0x7FF0000000000000)


def ulp(v, dtype):
    """Spacing of `dtype` at the float64 values v (the power of two of v's
    binade, scaled), never below the subnormal spacing."""
    info = np.finfo(dtype)
    power = (np.ascontiguousarray(v, dtype=np.float64).view(np.uint64) & EXP_BITS).view(np.float64)
    return np.maximum(power * 2.0**-info.nmant, float(info.smallest_subnormal))


def hexbits(a):
    return f"0x{a.view(f'u{a.itemsize}').item():0{2 * a.itemsize}x}"


def show(a, i):
    return f"{float(a[i])!r} ({hexbits(a[i:i + 1])})"


def f32_sweep(count=1 << 24):
    """`count` finite float32s: the finite bit patterns cut into `count` equal runs
    (2^32 - 2^24 = 255 * 2^24), one from each at an offset that cycles through
    the run, so the low mantissa bits vary as much as the high ones."""
    stride = 2 * 0x7F800000 // count
    j = np.arange(count, dtype=np.uint64)
    k = j * stride + (j * 97) % stride  # 97 is prime: the offsets cycle through the run
    bits = np.where(k < 0x7F800000, k, k - 0x7F800000 + 0x80000000)  # skip inf/NaN
    return bits.astype(np.uint32).view(np.float32)


def call(act, direction, x, g=None):
    with np.errstate(over="ignore") if act.may_overflow else contextlib.nullcontext():
        if direction == "forward":
            return act.forward(x)
        return act.backward(np.ones_like(x) if g is None else g, x)


def assert_ulps(what, x, got, err, bound, expected):
    """err: error in ULPs per element (NaN where a number was due counts as inf)."""
    err = np.where(np.isnan(err), np.inf, err)
    i = int(np.argmax(err))
    assert err[i] <= bound, (
        f"{what}: {err[i]:.3g} ULP > {bound} at x = {show(x, i)}: "
        f"got {show(got, i)}, expected {float(expected[i])!r}")


# ---- float32: strided sweep against the float64 references -----------------

@pytest.fixture(scope="module")
def sweep_x():
    return f32_sweep()


@pytest.fixture(scope="module", params=SMOOTH)
def sweep_reference(request, sweep_x):
    """One function's float64 references over the sweep, shared by every ISA.
    (A module-scoped param: pytest runs one function's tests together, then
    frees its arrays.)"""
    act = ACTIVATIONS[request.param]
    x = sweep_x.astype(np.float64)
    forward = act.ref_forward(x)
    backward = act.ref_backward(np.ones_like(x), x)
    return act, {"forward": (forward, ulp(forward, np.float32)),
                 "backward": (backward, ulp(act.ref_backward_scale(x), np.float32))}


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("tier", TIERS)
def test_float32_sweep(isa, sweep_x, sweep_reference, tier, direction):
    op_act, reference = sweep_reference
    act = VARIANTS[op_act.name if tier == op_act.op.default_tier else f"{op_act.name}_{tier}"]
    expected, unit = reference[direction]
    if isa != FULL_SWEEP_ISA:
        sweep_x = np.ascontiguousarray(sweep_x[::SUBSWEEP_STEP])
        expected, unit = expected[::SUBSWEEP_STEP], unit[::SUBSWEEP_STEP]
    got = call(act, direction, sweep_x)
    assert got.dtype == np.float32
    err = np.abs(got.astype(np.float64) - expected) / unit
    # past the largest float32 by half an ULP or more the right result is ±inf (selu's scale x)
    overflow = np.finfo(np.float32).max * (1 + 2.0**-25)
    err = np.where((np.abs(expected) >= overflow) & (got == np.copysign(np.inf, expected)), 0, err)
    bound = act.forward_ulp if direction == "forward" else act.backward_ulp
    if act.exact:  # an exact tier beside a fast one: correctly rounded (test_family: bit for bit)
        bound = 0.5
    assert_ulps(f"{act.key} {direction} float32 [{isa}]", sweep_x, got, err, bound, expected)


# ---- float64: the stored mpmath set ---------------------------------------

@pytest.fixture(scope="module")
def mpmath_set():
    with np.load(DATA) as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("key", MPMATH_VARIANTS)
def test_float64_mpmath(isa, mpmath_set, key, direction):
    act = VARIANTS[key]
    name = act.name
    x = mpmath_set[f"{name}_x"]
    expected = mpmath_set[f"{name}_{direction}"]
    rem = mpmath_set[f"{name}_{direction}_rem"]  # exact = expected + rem ulp(expected)
    got = call(act, direction, x)
    assert got.dtype == np.float64
    step = ulp(expected, np.float64)
    if direction == "forward":
        # ULP of the exact value: one binade down if it lies below a power of two
        below = rem * np.sign(expected) < 0
        unit, bound = ulp(np.where(below, np.nextafter(expected, 0), expected), np.float64), act.forward_ulp
    else:
        unit, bound = ulp(mpmath_set[f"{name}_scale"], np.float64), act.backward_ulp
    with np.errstate(over="ignore", invalid="ignore"):  # a wild result gives inf, and fails
        err = np.abs((got - expected) / step - rem) * (step / unit)
    assert_ulps(f"{key} {direction} float64 [{isa}]", x, got, err, bound, expected)


def test_mpmath_set_is_current():
    """The stored set is what the generator describes (guards against a stale file)."""
    with np.load(DATA) as data:
        meta = dict(data["meta"].tolist())
        assert meta["generator"] == "tools/make_reference_data.py"
        assert int(meta["mpmath_dps"]) >= 40
        for name in MPMATH:
            assert 20_000 <= len(data[f"{name}_x"]) <= 60_000


# ---- relu: bit-exact ------------------------------------------------------

def relu_inputs(dtype):
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=dtype)
    if dtype == np.float16:
        bits = np.arange(1 << 16, dtype=np.uint16)  # every float16
    elif dtype == np.float32:
        bits = f32_sweep(1 << 20).view(np.uint32)
    else:
        bits = np.random.default_rng(1).integers(0, 2**64, 1 << 20, dtype=np.uint64)
    tiny = np.array([np.finfo(dtype).smallest_subnormal, np.finfo(dtype).max], dtype=dtype)
    return np.concatenate([specials, tiny, -tiny, bits.view(dtype)])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_relu_exact(isa, direction, dtype):
    act = ACTIVATIONS["relu"]
    x = relu_inputs(dtype)
    g = x[::-1].copy()  # a grad_output with every kind of value
    with np.errstate(invalid="ignore"):  # signaling NaNs among the inputs raise FE_INVALID
        got = call(act, direction, x, g)
        expected = (act.ref_forward(x) if direction == "forward" else act.ref_backward(g, x)).astype(dtype)
    uint = f"u{x.itemsize}"
    same = (got.view(uint) == expected.view(uint)) | (np.isnan(got) & np.isnan(expected))
    i = int(np.argmin(same))
    assert same.all(), (f"relu {direction} {np.dtype(dtype)} [{isa}] at x = {show(x, i)}, g = {show(g, i)}: "
                        f"got {show(got, i)}, expected {show(expected, i)}")


# ---- special values -------------------------------------------------------

HUGE = {np.float16: [65504.0], np.float32: [3.4e38, 1.8e19], np.float64: [1.7e308, 1.8e19]}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", SMOOTH_VARIANTS)
def test_special_values(isa, name, dtype):
    act = VARIANTS[name]
    # the manifest's limits: f(-inf) (sign of zero included), f(+inf), f'(-inf), f'(+inf)
    f_minus, _, f_plus, d_minus, d_plus = (dtype(v) for v in act.op.limits)
    huge = np.array(HUGE[dtype], dtype=dtype)
    x = np.concatenate([np.array([np.nan, -np.nan, np.inf, -np.inf], dtype=dtype), huge, -huge])
    where = f"{name} {np.dtype(dtype)} [{isa}]"
    with np.errstate(over="ignore" if d_plus > 1 else "raise"):  # selu: scale·x may overflow, rightly
        y, d = call(act, "forward", x), call(act, "backward", x)
    assert y.dtype == d.dtype == dtype
    assert np.isnan(y[:2]).all() and np.isnan(d[:2]).all(), f"{where}: NaN in, {y[:2]}, {d[:2]} out"
    assert y[2] == f_plus and np.signbit(y[2]) == np.signbit(f_plus) and d[2] == d_plus, \
        f"{where}: at +inf f = {y[2]}, f' = {d[2]} (want {f_plus}, {d_plus})"
    assert y[3] == f_minus and np.signbit(y[3]) == np.signbit(f_minus) and d[3] == d_minus, \
        f"{where}: at -inf f = {y[3]}, f' = {d[3]} (want {f_minus}, {d_minus})"
    n = len(huge)
    big, minus_big = slice(4, 4 + n), slice(4 + n, None)
    # growing like x (f(+inf) = inf): f(huge) = f'(+inf) huge; bounded: f saturates at its limit
    with np.errstate(over="ignore"):
        f_big = (huge.astype(np.float64) * d_plus).astype(dtype) if f_plus == np.inf else f_plus
        f_minus_big = (-huge.astype(np.float64) * d_minus).astype(dtype) if f_minus == -np.inf else f_minus
    assert np.isfinite(d[4:]).all(), f"{where}: at {x[4:]}: f' = {d[4:]}"
    assert (y[big] == f_big).all() and (d[big] == d_plus).all(), f"{where}: at {huge}: f = {y[big]}, f' = {d[big]}"
    assert (y[minus_big] == f_minus_big).all() and (d[minus_big] == d_minus).all(), \
        f"{where}: at {-huge}: f = {y[minus_big]}, f' = {d[minus_big]}"
    # a signaling NaN (quiet bit clear) may raise FE_INVALID, but must come out NaN
    uint = f"u{np.dtype(dtype).itemsize}"
    snan = (np.array([np.inf, -np.inf], dtype=dtype).view(uint) | 1).view(dtype)
    with np.errstate(invalid="ignore"):
        assert np.isnan(call(act, "forward", snan)).all() and np.isnan(call(act, "backward", snan)).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", SMOOTH)
def test_smallest_subnormal(isa, name, dtype):
    """f(x) = x/2 + c x^2 + ... with c > 0: at x = ±(smallest subnormal) the exact
    result lies just above / below half of it, so it rounds to x and to -0.
    Where f(0) is not 0 (sigmoid: 1/2 + x/4), f(±tiny) rounds to f(0).
    The accurate tier only: the fast tier may be an ULP off there, within its
    bound, which the sweep checks on subnormal inputs too."""
    tiny = np.finfo(dtype).smallest_subnormal
    x = np.array([tiny, -tiny], dtype=dtype)
    act = VARIANTS[f"{name}_accurate"]
    got = act.forward(x)
    at_zero = act.op.limits[1]
    # f(±tiny) = f'(0±)·(±tiny) rounded: x/2 is a tie that x² decides; other
    # slopes (tanh's 1, selu's 1.05 and 1.76) round to the nearest multiple of tiny
    slopes = act.ref_backward(np.ones(2), np.array([tiny, -tiny], np.float64))
    if at_zero != 0:
        expected = np.array([at_zero, at_zero], dtype=dtype)
    elif (slopes == 0.5).all():
        expected = np.array([tiny, -0.0], dtype=dtype)
    else:
        expected = np.array([np.round(slopes[0]) * tiny, -np.round(slopes[1]) * tiny], dtype=dtype)
    uint = f"u{x.itemsize}"
    assert (got.view(uint) == expected.view(uint)).all(), \
        f"{name} [{isa}]: f({x}) = {got} ({hexbits(got[:1])}, {hexbits(got[1:])}), expected {expected}"


# where the fast tier's direct formula stops: the op's A_FAST (fa_coeffs.h), float32 and float64
_FAST_LIMITS = {"gelu": (13.0, 37.0), "gelu_tanh": (9.5, 21.0), "silu": (87.0, 708.0),
                "quick_gelu": (51.0, 415.0), "sigmoid": (87.0, 708.0)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(_FAST_LIMITS))
def test_fast_tier_beyond_its_direct_range_is_the_accurate_tiers(isa, name, dtype):
    """Lanes past the fast tier's direct range take constants above it (x, or
    1 for sigmoid; a derivative of 1) and the accurate kernel below it and at
    NaN: the accurate tier's bits, in vectors mixed with direct lanes, both
    directions, signalling NaN and infinities included."""
    limit = dtype(_FAST_LIMITS[name][dtype == np.float64])
    rng = np.random.default_rng(11)
    edge = np.array([limit, np.nextafter(limit, dtype(np.inf)), 2 * limit, 1e30, np.inf, np.nan], dtype)
    edge = np.concatenate([edge, -edge])
    x = rng.normal(0, 3, 4096).astype(dtype)
    x[rng.integers(0, x.size, 600)] = rng.choice(edge, 600)
    x[::97] = (rng.uniform(1, 50, x[::97].size) * limit).astype(dtype) * rng.choice([-1, 1], x[::97].size)
    bits = np.uint32 if dtype == np.float32 else np.uint64
    x[5] = np.array(0x7FA00000 if dtype == np.float32 else 0x7FF4000000000000, bits).view(dtype)  # signalling
    g = rng.normal(0, 2, x.size).astype(dtype)
    g[::53] = np.inf
    above = np.flatnonzero(x > limit)[:3]  # a signalling NaN, a NaN and -0 as gradients above the range
    g[above] = np.array([x[5], np.nan, -0.0], dtype)
    function, form = (fa.gelu, ("tanh",)) if name == "gelu_tanh" else (getattr(fa, name), ())
    backward = getattr(fa, f"{function.__name__}_backward")
    beyond = ~(np.abs(x) <= limit)
    with np.errstate(all="ignore"):
        for fast, accurate in ((function(x, *form), function(x, *form, precision="accurate")),
                               (backward(g, x, *form), backward(g, x, *form, precision="accurate"))):
            np.testing.assert_array_equal(fast[beyond].view(bits), accurate[beyond].view(bits))
