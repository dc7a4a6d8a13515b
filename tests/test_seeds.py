"""The numbers of the seed articles (shared/seeds), computed by fastact.

Article 001 tabulates GELU at -2..2 to three decimals (it truncates, so
1e-3 is the honest tolerance), puts GELU's minimum at about -0.17 near
x = -0.75 with a zero gradient there, and says the exact and tanh forms
agree to about three decimals. Every kernel set must reproduce them.
"""
import numpy as np
import pytest

import fastact as fa

TABLE_X = [-2.0, -1.0, 0.0, 1.0, 2.0]
TABLE_GELU = [-0.045, -0.159, 0.0, 0.841, 1.955]
TABLE_RELU = [0.0, 0.0, 0.0, 1.0, 2.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_article_value_table(isa, dtype, approximate):
    x = np.array(TABLE_X, dtype=dtype)
    np.testing.assert_allclose(fa.gelu(x, approximate), TABLE_GELU, atol=1e-3, rtol=0)
    np.testing.assert_array_equal(fa.relu(x), TABLE_RELU)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_silu_is_input_times_sigmoid(isa, dtype):
    # the article defines SiLU(x) = x·σ(x); σ at the table points is 0.119, 0.269, 0.5, 0.731, 0.881
    x = np.array(TABLE_X, dtype=dtype)
    sigma = np.array([0.119, 0.269, 0.5, 0.731, 0.881])
    np.testing.assert_allclose(fa.silu(x), x * sigma, atol=2e-3, rtol=0)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_minimum_near_minus_0_75(isa, approximate):
    x = np.linspace(-3.0, 0.0, 300_001)
    y = fa.gelu(x, approximate)
    i = int(np.argmin(y))
    assert -0.76 < x[i] < -0.74, x[i]
    assert -0.171 < y[i] < -0.169, y[i]
    # the gradient changes sign there: negative to the left, positive to the right
    grad = fa.gelu_backward(np.ones(3), np.array([x[i] - 0.01, x[i], x[i] + 0.01]), approximate)
    assert grad[0] < 0 < grad[2]
    assert abs(grad[1]) < 1e-4


def test_gelu_negative_inputs_pass_a_small_negative_signal(isa):
    # "a neuron with a negative input still produces a small output": nonzero,
    # negative and smaller in size than the input, where ReLU gives exactly 0
    x = np.array([-3.0, -2.0, -0.5])
    y = fa.gelu(x)
    assert np.all(y < 0) and np.all(np.abs(y) < np.abs(x))
    np.testing.assert_array_equal(fa.relu(x), 0.0)


def test_exact_and_tanh_forms_agree_to_three_decimals(isa):
    x = np.linspace(-8, 8, 160_001)
    gap = np.abs(fa.gelu(x) - fa.gelu(x, "tanh"))
    # the true largest gap is about 4.7e-4, near |x| = 2.7
    assert 4.5e-4 < gap.max() < 5.0e-4
    assert 2.5 < abs(x[np.argmax(gap)]) < 2.9


def test_relu_slope_jumps_at_zero_and_gelu_slope_does_not(isa):
    eps = 1e-6
    x = np.array([-eps, eps])
    np.testing.assert_array_equal(fa.relu_backward(np.ones(2), x), [0.0, 1.0])
    g = fa.gelu_backward(np.ones(2), x)
    assert abs(g[1] - g[0]) < 1e-5
    assert fa.gelu_backward(1.0, 0.0) == 0.5


# Article 001's table also has sigmoid and tanh columns (three decimals)
TABLE_SIGMOID = [0.119, 0.269, 0.5, 0.731, 0.881]
TABLE_TANH = [-0.964, -0.762, 0.0, 0.762, 0.964]


@pytest.mark.parametrize("precision", ["accurate", "fast"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_article_sigmoid_and_tanh_columns(isa, dtype, precision):
    x = np.array(TABLE_X, dtype=dtype)
    np.testing.assert_allclose(fa.sigmoid(x, precision=precision), TABLE_SIGMOID, atol=1e-3, rtol=0)
    np.testing.assert_allclose(fa.tanh(x, precision=precision), TABLE_TANH, atol=1e-3, rtol=0)


@pytest.mark.parametrize("precision", ["accurate", "fast"])
def test_sigmoid_squeezes_into_0_1_and_its_slope_peaks_at_a_quarter(isa, precision):
    # "Squeezes any number into 0 to 1"; the exercise: σ(1 - σ) is at most 0.25
    x = np.linspace(-15, 15, 300_001)
    y = fa.sigmoid(x, precision=precision)
    assert (0 < y).all() and (y < 1).all()
    slope = fa.sigmoid_backward(np.ones_like(x), x, precision=precision)
    assert slope.max() == 0.25 and x[np.argmax(slope)] == 0.0
    # nearly flat far out: the vanishing gradient
    assert fa.sigmoid_backward(1.0, 12.0) < 1e-5 and fa.sigmoid_backward(1.0, -12.0) < 1e-5


@pytest.mark.parametrize("precision", ["accurate", "fast"])
def test_tanh_runs_from_minus_1_to_1_centred_on_zero(isa, precision):
    x = np.linspace(-9, 9, 180_001)
    y = fa.tanh(x, precision=precision)
    assert (-1 < y).all() and (y < 1).all() and fa.tanh(0.0) == 0.0
    np.testing.assert_array_equal(fa.tanh(-x, precision=precision), -y)  # centred: odd
    # a sigmoid stretched: tanh(x) = 2σ(2x) - 1
    np.testing.assert_allclose(y, 2 * fa.sigmoid(2 * x) - 1, atol=4e-16)
    assert fa.tanh_backward(1.0, 0.0, precision=precision) == 1.0
    assert fa.tanh_backward(1.0, 12.0) < 1e-9  # it still flattens out


def test_leaky_relu_leaves_a_tiny_slope_for_negatives(isa):
    # Leaky ReLU = max(0.01 z, z): negatives keep 1% of the signal and of the gradient
    z = np.array([-300.0, -2.0, -0.5, 0.5, 2.0])
    np.testing.assert_array_equal(fa.leaky_relu(z), np.maximum(0.01 * z, z))
    np.testing.assert_array_equal(fa.leaky_relu_backward(np.ones_like(z), z), [0.01, 0.01, 0.01, 1, 1])
    # where ReLU's neuron would be dead (slope 0), this one still learns
    assert (fa.relu_backward(np.ones(3), z[:3]) == 0).all()
