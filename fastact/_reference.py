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


def _f64(*arrays):
    return [np.asarray(a, dtype=np.float64) for a in arrays]


def _phi(x):
    from scipy.special import ndtr
    return ndtr(x), np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)


def _tanh_gate(x):
    from scipy.special import expit
    return expit(2 * SQRT_2_OVER_PI * (x + TANH_CUBIC * x**3))


def gelu(x, approximate="none"):
    (x,) = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        if approximate == "tanh":
            return np.where(np.isnan(x), x, np.nan_to_num(x * _tanh_gate(x), nan=0.0))
        return x * _phi(x)[0]


def _gelu_derivative_terms(x, approximate):
    """The two terms of gelu'(x): g(x) and x g'(x)."""
    if approximate == "tanh":
        s = _tanh_gate(x)
        return s, x * s * (1 - s) * 2 * SQRT_2_OVER_PI * (1 + 3 * TANH_CUBIC * x * x)
    cdf, pdf = _phi(x)
    return cdf, x * pdf


def gelu_backward(grad_output, x, approximate="none"):
    g, x = _f64(grad_output, x)
    with np.errstate(over="ignore", invalid="ignore"):
        gate, slope = _gelu_derivative_terms(x, approximate)
        return g * np.where(np.isnan(x), x, np.nan_to_num(gate + slope, nan=0.0))


def gelu_backward_scale(x, approximate="none"):
    """|g(x)| + |x g'(x)|: the size of gelu'(x)'s largest term, the unit its
    error is stated in (near the derivative's root the result itself is tiny)."""
    (x,) = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        gate, slope = _gelu_derivative_terms(x, approximate)
        return np.nan_to_num(np.abs(gate) + np.abs(slope), nan=0.0)


def _sigmoid(x):
    from scipy.special import expit
    return expit(x)


def silu(x):
    (x,) = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.isnan(x), x, np.nan_to_num(x * _sigmoid(x), nan=0.0))


def silu_backward(grad_output, x):
    g, x = _f64(grad_output, x)
    with np.errstate(over="ignore", invalid="ignore"):
        s = _sigmoid(x)
        return g * np.where(np.isnan(x), x, np.nan_to_num(s * (1 + x * (1 - s)), nan=0.0))


def silu_backward_scale(x):
    (x,) = _f64(x)
    with np.errstate(over="ignore", invalid="ignore"):
        s = _sigmoid(x)
        return np.nan_to_num(s + np.abs(x * s * (1 - s)), nan=0.0)


def relu(x):
    (x,) = _f64(x)
    return np.where(np.isnan(x) | (x > 0), x, 0.0)


def relu_backward(grad_output, x):
    g, x = _f64(grad_output, x)
    return np.where(x > 0, g, np.where(np.isnan(x), x, 0.0))
