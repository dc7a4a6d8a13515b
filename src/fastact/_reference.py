"""Plain float64 NumPy/SciPy references with fastact's signatures.

Slow and simple on purpose: tests compare the kernels with them, and the
benchmarks use them as the "pure NumPy" peer. Results are float64; the
float32 kernels are judged against these (their float64 error is far below
a float32 ULP). The float64 kernels are judged against mpmath instead
(tests/data, made by tools/make_reference_data.py). Needs SciPy for ndtr.
"""
import numpy as np

SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)
TANH_CUBIC = 0.044715
QUICK_GELU_SCALE = 1.702  # quick GELU's x·σ(1.702 x)


def _f64(*arrays):
    return [np.asarray(a, dtype=np.float64) for a in arrays]


# Beyond this |x| every slope term below is 0 in float64; clipping keeps
# inf * 0 and overflowing cubes out of the formulas.
_SLOPE_CLIP = 1e4


def _limits(x, value, at_plus_inf, at_minus_inf):
    """value, with the limits at +-inf and NaN passed through."""
    value = np.where(x == np.inf, at_plus_inf, value)
    value = np.where(x == -np.inf, at_minus_inf, value)
    return np.where(np.isnan(x), x, value)


def _normal(x):
    from scipy.special import ndtr
    xc = np.clip(x, -_SLOPE_CLIP, _SLOPE_CLIP)
    return ndtr(x), np.exp(-0.5 * xc * xc) / np.sqrt(2 * np.pi)


def _sigmoid(x):
    from scipy.special import expit
    return expit(x)


def _tanh_gate(x):
    xc = np.clip(x, -_SLOPE_CLIP, _SLOPE_CLIP)
    return _sigmoid(2 * SQRT_2_OVER_PI * (xc + TANH_CUBIC * xc**3))


def _terms(x, name):
    """f'(x) = gate + slope: the gate g(x) and x g'(x), finite for every x."""
    xc = np.clip(x, -_SLOPE_CLIP, _SLOPE_CLIP)
    if name == "gelu":
        cdf, pdf = _normal(x)
        return cdf, xc * pdf
    if name == "gelu_tanh":
        s, inner = _tanh_gate(x), 2 * SQRT_2_OVER_PI * (1 + 3 * TANH_CUBIC * xc * xc)
    elif name == "quick_gelu":
        s, inner = _sigmoid(QUICK_GELU_SCALE * x), QUICK_GELU_SCALE
    else:
        s, inner = _sigmoid(x), 1.0
    return s, xc * s * (1 - s) * inner


def _forward(x, name):
    (x,) = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        gate = _terms(x, name)[0]
        return _limits(x, x * gate, np.inf, -0.0)


def _backward(grad_output, x, name):
    g, x = _f64(grad_output, x)
    with np.errstate(over="ignore", invalid="ignore"):
        gate, slope = _terms(x, name)
        return g * _limits(x, gate + slope, 1.0, -0.0)


def _backward_scale(x, name):
    (x,) = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        gate, slope = _terms(x, name)
        return _limits(x, np.abs(gate) + np.abs(slope), 1.0, 0.0)


def gelu(x):
    return _forward(x, "gelu")


def gelu_backward(grad_output, x):
    return _backward(grad_output, x, "gelu")


def gelu_backward_scale(x):
    """|g(x)| + |x g'(x)|: the size of gelu'(x)'s largest term, the unit its
    error is stated in (near the derivative's root the result itself is tiny)."""
    return _backward_scale(x, "gelu")


def gelu_tanh(x):
    return _forward(x, "gelu_tanh")


def gelu_tanh_backward(grad_output, x):
    return _backward(grad_output, x, "gelu_tanh")


def gelu_tanh_backward_scale(x):
    return _backward_scale(x, "gelu_tanh")


def silu(x):
    return _forward(x, "silu")


def silu_backward(grad_output, x):
    return _backward(grad_output, x, "silu")


def silu_backward_scale(x):
    return _backward_scale(x, "silu")


def quick_gelu(x):
    return _forward(x, "quick_gelu")


def quick_gelu_backward(grad_output, x):
    return _backward(grad_output, x, "quick_gelu")


def quick_gelu_backward_scale(x):
    return _backward_scale(x, "quick_gelu")


def _logistic(x):
    """σ(x) with e = exp(-|x|): e/(1 + e) for x < 0, 1/(1 + e) otherwise. Unlike
    expit (1/(1 + exp(-x)), 0 once exp(-x) overflows), results in the float64
    subnormal range (x < -708) stay there. Exact at ±inf, NaN passed through."""
    e = np.exp(-np.abs(x))
    return np.where(x < 0, e / (1 + e), 1 / (1 + e))


def sigmoid(x):
    """σ(x) itself, the gate (not x·g(x))."""
    (x,) = _f64(x)
    return _logistic(x)


def sigmoid_backward(grad_output, x):
    g, x = _f64(grad_output, x)
    return g * sigmoid_backward_scale(x)


def sigmoid_backward_scale(x):
    """σ'(x) = σ(x)·σ(-x): one term, both factors accurate (no 1 - σ), 0 at ±inf."""
    (x,) = _f64(x)
    return _logistic(x) * _logistic(-x)


def relu(x):
    (x,) = _f64(x)
    return np.where(np.isnan(x) | (x > 0), x, 0.0)


def relu_backward(grad_output, x):
    g, x = _f64(grad_output, x)
    return np.where(x > 0, g, np.where(np.isnan(x), x, 0.0))


# ---- the elementwise family: smooth functions (default parameters) ----------

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _sech2(x):
    """1 - tanh(x)² without the subtraction: 1/cosh(x)², 0 once cosh overflows."""
    with np.errstate(over="ignore"):
        return 1.0 / np.cosh(x) ** 2


def tanh(x):
    (x,) = _f64(x)
    return np.tanh(x)


def tanh_backward(grad_output, x):
    g, x = _f64(grad_output, x)
    return g * _sech2(x)


def tanh_backward_scale(x):
    (x,) = _f64(x)
    return _sech2(x)


def softplus(x, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x))/beta, x where beta x > threshold (PyTorch's rule)."""
    (x,) = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(beta * x > threshold, x, np.logaddexp(0.0, beta * x) / beta)


def softplus_backward(grad_output, x, beta=1.0, threshold=20.0):
    g, x = _f64(grad_output, x)
    return g * softplus_backward_scale(x, beta, threshold)


def softplus_backward_scale(x, beta=1.0, threshold=20.0):
    (x,) = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(beta * x > threshold, 1.0, _logistic(beta * x))


def log_sigmoid(x):
    (x,) = _f64(x)
    with np.errstate(invalid="ignore"):  # NaN passes through logaddexp, flagging 'invalid'
        return _limits(x, -np.logaddexp(0.0, -x), -0.0, -np.inf)


def log_sigmoid_backward(grad_output, x):
    g, x = _f64(grad_output, x)
    return g * _logistic(-x)


def log_sigmoid_backward_scale(x):
    (x,) = _f64(x)
    return _logistic(-x)


def _mish_terms(x):
    """tanh(softplus(x)) and x·sech²(softplus(x))·σ(x)."""
    with np.errstate(over="ignore", invalid="ignore"):
        sp = np.logaddexp(0.0, x)
        slope = np.where(np.isinf(x), 0.0, x * _sech2(sp) * _logistic(x))
        return np.tanh(sp), slope


def mish(x):
    (x,) = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        return _limits(x, x * _mish_terms(x)[0], np.inf, -0.0)


def mish_backward(grad_output, x):
    g, x = _f64(grad_output, x)
    gate, slope = _mish_terms(x)
    return g * _limits(x, gate + slope, 1.0, 0.0)


def mish_backward_scale(x):
    (x,) = _f64(x)
    gate, slope = _mish_terms(x)
    return _limits(x, np.abs(gate) + np.abs(slope), 1.0, 0.0)


def _elu(x, alpha, scale, inner):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(x > 0, scale * x, scale * alpha * np.expm1(x / inner))


def _elu_slope(x, alpha, scale, inner):
    return np.where(x > 0, scale, scale * alpha / inner * np.exp(np.minimum(x, 0) / inner))


def elu(x, alpha=1.0):
    (x,) = _f64(x)
    return _elu(x, alpha, 1.0, 1.0)


def elu_backward(grad_output, x, alpha=1.0):
    g, x = _f64(grad_output, x)
    return g * _elu_slope(x, alpha, 1.0, 1.0)


def elu_backward_scale(x, alpha=1.0):
    (x,) = _f64(x)
    return np.abs(_elu_slope(x, alpha, 1.0, 1.0))


def selu(x):
    (x,) = _f64(x)
    return _elu(x, SELU_ALPHA, SELU_SCALE, 1.0)


def selu_backward(grad_output, x):
    g, x = _f64(grad_output, x)
    return g * _elu_slope(x, SELU_ALPHA, SELU_SCALE, 1.0)


def selu_backward_scale(x):
    (x,) = _f64(x)
    return np.abs(_elu_slope(x, SELU_ALPHA, SELU_SCALE, 1.0))


def celu(x, alpha=1.0):
    (x,) = _f64(x)
    return _elu(x, alpha, 1.0, alpha)


def celu_backward(grad_output, x, alpha=1.0):
    g, x = _f64(grad_output, x)
    return g * _elu_slope(x, alpha, 1.0, alpha)


def celu_backward_scale(x, alpha=1.0):
    (x,) = _f64(x)
    return np.abs(_elu_slope(x, alpha, 1.0, alpha))


# ---- piecewise linear (exact in float64 for float32 inputs; the tests judge
# float64 against exact rational arithmetic) -------------------------------

def leaky_relu(x, negative_slope=0.01):
    (x,) = _f64(x)
    return np.where(x > 0, x, x * negative_slope)


def leaky_relu_backward(grad_output, x, negative_slope=0.01):
    g, x = _f64(grad_output, x)
    return np.where(np.isnan(x), x, np.where(x > 0, g, g * negative_slope))


def hardtanh(x, min_val=-1.0, max_val=1.0):
    (x,) = _f64(x)
    return np.where(x < min_val, min_val, np.where(x > max_val, max_val, x))


def hardtanh_backward(grad_output, x, min_val=-1.0, max_val=1.0):
    g, x = _f64(grad_output, x)
    return np.where(np.isnan(x), x, np.where((x > min_val) & (x < max_val), g, 0.0))


def relu6(x):
    return hardtanh(x, 0.0, 6.0)


def relu6_backward(grad_output, x):
    return hardtanh_backward(grad_output, x, 0.0, 6.0)


def hardsigmoid(x):
    (x,) = _f64(x)
    return np.where(x <= -3, 0.0, np.where(x >= 3, 1.0, (x + 3) / 6))


def hardsigmoid_backward(grad_output, x):
    g, x = _f64(grad_output, x)
    return np.where(np.isnan(x), x, np.where((x > -3) & (x < 3), g / 6, 0.0))


def hardsigmoid_backward_scale(x):
    """hardsigmoid'(x): 1/6 inside (-3, 3), 0 outside."""
    (x,) = _f64(x)
    return np.where((x > -3) & (x < 3), 1 / 6, 0.0)


def hardswish(x):
    (x,) = _f64(x)
    inside = np.clip(x, -3, 3)
    inside = inside * (inside + 3) / 6  # clipped: no overflow where x is selected away
    return np.where(x <= -3, np.copysign(0.0, x), np.where(x >= 3, x, inside))


def hardswish_backward(grad_output, x):
    g, x = _f64(grad_output, x)
    inside = g * (2 * np.clip(x, -3, 3) + 3) / 6  # clipped: no inf·0 where x is selected away
    return np.where(np.isnan(x), x, np.where(x <= -3, 0.0, np.where(x >= 3, g, inside)))


def hardswish_backward_scale(x):
    """|g(x)| + |x·g'(x)| for hardswish = x·g(x), g = hardsigmoid: (x + 3)/6 + |x|/6
    inside (-3, 3); 0 and 1 outside."""
    (x,) = _f64(x)
    inside = np.clip(x, -3, 3)  # clipped: the sides selected away cannot overflow
    return np.where(x <= -3, 0.0, np.where(x >= 3, 1.0, (inside + 3 + np.abs(inside)) / 6))


def sigmoid_backward_from_output(grad_output, output):
    """g y (1 - y) in long double, from factors that are exact there (1 - y
    and 1 + y of a float64 need 54 bits): no cancellation near y = 1."""
    g, y = (np.asarray(a, np.longdouble) for a in _f64(grad_output, output))
    return g * (y * (1 - y))


def tanh_backward_from_output(grad_output, output):
    g, y = (np.asarray(a, np.longdouble) for a in _f64(grad_output, output))
    return g * ((1 - y) * (1 + y))


# ---- the references' own limits, for tests that judge fastact against them ----

def own_error_ulps(name, x, backward):
    """A generous bound, in float64 ULPs, on these references' own error at x.
    exp() of a rounded argument t is off by ~|t| eps relative (t = x²/2 in Φ,
    2u in the tanh gate), and 1 - σ near 1 loses ~eps absolutely, times the
    factor in front of it in f'. Past t ~ 750 exp(-t) underflows and the
    terms these errors scale vanish."""
    x = np.abs(np.asarray(x, np.float64))
    with np.errstate(over="ignore", invalid="ignore"):
        t = {"gelu": x * x / 2,
             "gelu_tanh": 2 * SQRT_2_OVER_PI * (x + TANH_CUBIC * x**3),
             "quick_gelu": QUICK_GELU_SCALE * x}.get(name, 0 * x)
        if backward:
            t = t + {"gelu_tanh": x * 2 * SQRT_2_OVER_PI * (1 + 3 * TANH_CUBIC * x * x),
                     "silu": x, "quick_gelu": QUICK_GELU_SCALE * x}.get(name, 0 * x)
    return 64 + 8 * np.minimum(t, 1000)


def valid_below(name, dtype):
    """|x| below which these references hold for `dtype` (None: everywhere finite).
    The tanh form's derivative computes x*x: past ~1.3e154 it overflows and
    0*inf gives 0 instead of 1."""
    return 1e150 if (name == "gelu_tanh" and np.dtype(dtype) == np.float64) else None
