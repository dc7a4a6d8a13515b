"""16-bit results whose float64 value is itself exactly on a tie.

Near 0, gelu(x) = x/2 + x²/√(2π) and silu'(x)·g = g/2 + g·x/2: for bfloat16,
whose subnormals reach 2^-133, the second term can be far below float64's
precision, so the float64 recompute of a tie (loops.c) lands exactly on it
and rounding to even picks a side at random. So do swiglu(74, 7) =
7·silu(74), 518 less 518·e^-74, and elu(-100, alpha) = -alpha + alpha·e^-100
where alpha is itself a tie; so does sigmoid's derivative from its output,
g·y - g·y² for a tiny y. The manifest's TieSide rules
say which side the true value is on; here every output is checked against
mpmath on grids of tiny arguments and of odd multiples of the smallest
subnormal (whose halves and quarters may be ties), on every kernel set.
"""
import functools

import numpy as np
import pytest

import fastact as fa
from fastact._manifest import OPS_BY_NAME, TIERS

mpmath = pytest.importorskip("mpmath")
from exact_activations import ACTIVATIONS, sigmoid, softplus_grad  # noqa: E402
try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None

mp = mpmath.mp
# name -> (dtype, smallest subnormal, smallest normal)
TYPES = {"float16": (np.dtype(np.float16), 2.0**-24, 2.0**-14)}
if ml_dtypes is not None:
    TYPES["bfloat16"] = (np.dtype(ml_dtypes.bfloat16), 2.0**-133, 2.0**-126)


# ops of one input: activation, or (value, derivative) with parameters
ELEMENTWISE = {name: ACTIVATIONS[name] for name in ACTIVATIONS}
ELEMENTWISE["softplus"] = (lambda x, beta: mp.log(1 + mp.exp(beta * x)) / beta, softplus_grad)
ELEMENTWISE["elu"] = (lambda x, alpha: x if x > 0 else alpha * mp.expm1(x),
                      lambda x, alpha: 1 if x > 0 else alpha * mp.exp(x))
ELEMENTWISE["celu"] = (lambda x, alpha: x if x > 0 else alpha * mp.expm1(x / alpha),
                       lambda x, alpha: 1 if x > 0 else mp.exp(x / alpha))
# alpha = 1 + 3·2^-8 and 1 + 2^-11 are themselves ties of bfloat16 and float16:
# where e^x vanishes, -alpha + alpha·e^x is one too; beta = 2^-70 puts
# softplus' expansion in beta·x at x = 1
PARAMS = {"softplus": [(1.0, 20.0), (0.5, 20.0), (2.0**-70, 20.0)],
          "elu": [(1.0,), (0.75,), (-0.5,), (1.01171875,), (1 + 2.0**-11,)],
          "celu": [(1.0,), (0.75,), (1.01171875,), (1 + 2.0**-11,)]}
GATED = {"swiglu": "silu", "geglu": "gelu", "geglu_tanh": "gelu_tanh"}
BIAS = {"bias_gelu": "gelu", "bias_gelu_tanh": "gelu_tanh", "bias_silu": "silu"}

# every op with a TieSide rule is checked here
RULED = sorted(op.name for op in OPS_BY_NAME.values() if op.forward_tie_sides or op.backward_tie_sides)
CHECKED = sorted(set(ELEMENTWISE) | set(GATED) | set(BIAS) | {"glu", "sigmoid_backward_from_output"})


def test_every_rule_is_checked():
    assert set(RULED) <= set(CHECKED), set(RULED) - set(CHECKED)


def representable(values, dtype):
    values = np.array(values, np.float64)
    kept = values[(values.astype(dtype).astype(np.float64) == values) & (values != 0)]
    return np.unique(np.concatenate([kept, -kept]))


def tiny(half):
    """Arguments where the deciding term is below float64's precision, and some above."""
    dtype, smallest, normal = TYPES[half]
    return representable([smallest, 3 * smallest, normal, 1.5 * normal, 2.0**-100, 2.0**-60, 2.0**-40,
                          2.0**-31, 2.0**-29, 2.0**-27, 2.0**-26, 2.0**-24, 2.0**-20, 2.0**-14], dtype)


def saturating(half):
    """Arguments where e^x vanishes below float64's precision, some ordinary ones, and 1."""
    return representable([-100.0, -60.0, -40.0, -8.5, 1.0, 3.0], TYPES[half][0])


def large_gates(half, activation):
    """Gates where act(gate) is gate less a part float64 loses (e^-gate for silu; for
    gelu, kept where mpmath at 120 digits still sees it), and some where it does not."""
    gates = [9.25, 37.0, 40.0, 74.0, 100.0] if activation == "silu" else [9.25, 10.5, 12.5]
    return representable(gates, TYPES[half][0])


def subnormals(half):
    """k·2^-133 (bfloat16): the odd k halve to ties, k = 2 mod 4 quarter to them"""
    dtype, smallest, _ = TYPES[half]
    return representable([k * smallest for k in range(1, 128)], dtype)


def scales(half):
    """Values whose products with the tiny ones fall between subnormals."""
    dtype, _, _ = TYPES[half]
    return representable([k * 2.0**e for k in (1, 3, 5, 7, 29, 127) for e in (0, -7, -20)], dtype)


def grid(*axes):
    mesh = np.meshgrid(*axes, indexing="ij")
    return [m.ravel() for m in mesh]


def cases(name, half):
    """(direction, inputs as float64 arrays, params, exact outputs per element)."""
    dtype = TYPES[half][0]
    every_tiny = np.concatenate([tiny(half), subnormals(half)])
    g_values = np.concatenate([subnormals(half), representable([1.0, 1.5, 3.0], dtype)])
    found = []
    if name in ELEMENTWISE:
        value, derivative = ELEMENTWISE[name]
        for params in PARAMS.get(name, [()]):
            x_values = np.concatenate([every_tiny, saturating(half)]) if params else every_tiny
            if not (name == "softplus" and params[0] < 1e-10):   # forward: ln 2/beta overflows
                found.append(("fwd", [x_values], params, [lambda x, p=params: (value(x, *p[:1]),)]))
            g, x = grid(g_values, np.concatenate([tiny(half), saturating(half)]) if params else tiny(half))
            found.append(("bwd", [g, x], params, [lambda g, x, p=params: (g * derivative(x, *p[:1]),)]))
    elif name in GATED:
        act, act_grad = ACTIVATIONS[GATED[name]]
        gate, up = grid(np.concatenate([every_tiny, large_gates(half, GATED[name])]), scales(half))
        found.append(("fwd", [gate, up], (), [lambda gate, up: (act(gate) * up,)]))
        g, gate, up = grid(representable([1.0, 3.0, 7.0, 9.0, TYPES[half][1], 3 * TYPES[half][1]], dtype),
                           np.concatenate([tiny(half), large_gates(half, GATED[name])]), scales(half))
        found.append(("bwd", [g, gate, up], (), [lambda g, gate, up: (g * up * act_grad(gate), g * act(gate))]))
    elif name in BIAS:
        act, act_grad = ACTIVATIONS[BIAS[name]]
        zero = np.zeros_like(every_tiny)
        found.append(("fwd", [every_tiny, zero], (), [lambda x, b: (act(x),)]))
        g, x = grid(g_values, tiny(half))
        found.append(("bwd", [g, x, np.zeros_like(x)], (), [lambda g, x, b: (g * act_grad(x),)]))
    elif name == "sigmoid_backward_from_output":  # g·y - g·y²
        g, y = grid(g_values, every_tiny)
        found.append(("fwd", [g, y], (), [lambda g, y: (g * (y - y * y),)]))
    elif name == "glu":
        a, b = grid(g_values, tiny(half))
        found.append(("fwd", [a, b], (), [lambda a, b: (a * sigmoid(b),)]))
        g, a, b = grid(representable([1.0, 3.0], dtype), scales(half), tiny(half))
        found.append(("bwd", [g, a, b], (),
                      [lambda g, a, b: (g * sigmoid(b), g * a * sigmoid(b) * (1 - sigmoid(b)))]))
    return found


def ordered(bits):
    """16-bit patterns as integers in the order of their values (both zeros 0)."""
    bits = bits.astype(np.int64)
    return np.where(bits & 0x8000, -(bits & 0x7FFF), bits)


def from_ordered(order):
    return np.where(order < 0, (-order) | 0x8000, order).astype(np.uint16)


def nearest(exact_values, dtype):
    """The 16-bit values nearest the exact ones (mpf), each unique."""
    start = np.array([float(e) for e in exact_values]).astype(np.float32).astype(dtype)
    centre = ordered(start.view(np.uint16))
    best = []
    for e, c in zip(exact_values, centre):
        candidates = from_ordered(np.array([c - 1, c, c + 1])).view(dtype).astype(np.float64)
        distances = [abs(mp.mpf(float(v)) - e) for v in candidates]
        order = sorted(range(3), key=lambda k: distances[k])  # in mpf: the gaps are far below float's
        assert distances[order[0]] != distances[order[1]], f"a true tie at {e}"
        best.append(candidates[order[0]])
    return np.array(best)


@functools.lru_cache(maxsize=None)
def expected(name, half):
    """Per case: the inputs in the type, the params and the correctly rounded outputs."""
    dtype = TYPES[half][0]
    result = []
    with mp.workdps(120):  # b²/16 of 1/4 with b = 2^-133: 2^-270
        for direction, inputs, params, (exact,) in cases(name, half):
            outputs = list(zip(*[exact(*(mp.mpf(float(v)) for v in row)) for row in zip(*inputs)]))
            result.append((direction, [i.astype(dtype) for i in inputs], params,
                           [nearest(o, dtype) for o in outputs]))
    return result


@pytest.mark.parametrize("half", list(TYPES))
@pytest.mark.parametrize("name", CHECKED)
def test_float64_ties_are_decided(isa, name, half):
    for direction, inputs, params, want in expected(name, half):
        ufunc = getattr(fa.ufuncs, (name if direction == "fwd" else f"{name}_backward") +
                        ("_with_params" if OPS_BY_NAME[name].params else ""))
        for tier in OPS_BY_NAME[name].tiers:
            tiered = getattr(fa.ufuncs, ufunc.__name__ + ("" if tier == OPS_BY_NAME[name].default_tier
                                                                  else f"_{tier}"))
            with np.errstate(all="ignore"):
                got = tiered(*inputs, *params)
            got = got if isinstance(got, tuple) else (got,)
            for o, (g, w) in enumerate(zip(got, want)):
                g = g.astype(np.float64)
                wrong = g != w
                assert not wrong.any(), (
                    f"{tiered.__name__}{params} {half} [{isa}] output {o}: {np.count_nonzero(wrong)} of {g.size} "
                    f"not correctly rounded, first at inputs {[float(i[wrong][0]) for i in inputs]}: "
                    f"got {g[wrong][0]!r}, want {w[wrong][0]!r}")
