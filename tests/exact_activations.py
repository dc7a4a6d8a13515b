"""Exact values of the smooth activations in mpmath, for the tests that must
decide 16-bit rounding ties (test_half, test_half_ties): one formula per
function, value and derivative, each written directly (1 - g by its own
expression, never by subtraction where it would cancel)."""
import mpmath

mp = mpmath.mp


def sigmoid(x):
    return 1 / (1 + mp.exp(-x))


def gelu_tanh_parts(x):
    k, c = mp.sqrt(2 / mp.pi), mp.mpf("0.044715")
    t = mp.tanh(k * (x + c * x**3))
    return x / 2 * (1 + t), (1 + t) / 2 + x / 2 * (1 - t**2) * k * (1 + 3 * c * x**2)


def quick_gelu_parts(x):
    cx = mp.mpf("1.702") * x
    return x * sigmoid(cx), sigmoid(cx) * (1 + cx * (1 - sigmoid(cx)))


def softplus_grad(x, beta):
    return sigmoid(beta * x)


# activation -> (value, derivative), exact
ACTIVATIONS = {
    "gelu": (lambda x: x * mp.ncdf(x), lambda x: mp.ncdf(x) + x * mp.npdf(x)),
    "gelu_tanh": (lambda x: gelu_tanh_parts(x)[0], lambda x: gelu_tanh_parts(x)[1]),
    "silu": (lambda x: x * sigmoid(x), lambda x: sigmoid(x) * (1 + x * (1 - sigmoid(x)))),
    "quick_gelu": (lambda x: quick_gelu_parts(x)[0], lambda x: quick_gelu_parts(x)[1]),
    "sigmoid": (sigmoid, lambda x: sigmoid(x) * (1 - sigmoid(x))),
    "tanh": (mp.tanh, lambda x: 1 - mp.tanh(x)**2),
    "log_sigmoid": (lambda x: -mp.log(1 + mp.exp(-x)), lambda x: 1 - sigmoid(x)),
    "mish": (lambda x: x * mp.tanh(mp.log(1 + mp.exp(x))),
             lambda x: mp.tanh(mp.log(1 + mp.exp(x)))
             + x * sigmoid(x) * (1 - mp.tanh(mp.log(1 + mp.exp(x)))**2)),
    "hardswish": (lambda x: x * (x + 3) / 6, lambda x: (2 * x + 3) / 6),  # on (-3, 3)
}
