"""The seed articles as runnable demos: the ReLU/GELU figure (python -m fastact
plot), the XOR network trained with fastact's kernels (examples/xor.py) and a
transformer feed-forward block whose gradients are checked against finite
differences (examples/ffn_block.py). Each is run as a user runs it."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ndtr  # Φ, accurate in the tail too

import fastact as fa
from fastact import _plot

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(*args):
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_gelu_minimum_is_the_articles():
    """'dips slightly below zero (to about -0.17 at x ≈ -0.75)': the minimum,
    where x·φ(x) = -Φ(x), found from fastact's derivative."""
    x, y = _plot.gelu_minimum()
    assert round(x, 2) == -0.75 and round(y, 2) == -0.17
    # the stationary point of x·Φ(x), from SciPy's Φ: Φ(x) + x·φ(x) changes sign there
    slope = lambda t: ndtr(t) + t * np.exp(-t * t / 2) / np.sqrt(2 * np.pi)
    assert slope(x - 1e-9) < 0 < slope(x + 1e-9)
    assert y == pytest.approx(x * ndtr(x), rel=1e-15)


def test_figure_data_are_the_functions():
    data = _plot.figure_data()
    x = data["x"]
    assert x[0] == -3 and x[-1] == 3
    np.testing.assert_array_equal(data["relu"], np.maximum(x, 0))
    np.testing.assert_allclose(data["gelu"], x * ndtr(x), rtol=1e-14, atol=1e-300)
    np.testing.assert_array_equal(data["relu'"], (x > 0).astype(float))
    assert data["gelu'"].min() > -0.13 and data["gelu'"].max() < 1.13  # GELU's slope dips and overshoots


def test_plot_command_writes_the_figure(tmp_path):
    out = tmp_path / "figure.png"
    printed = run("-m", "fastact", "plot", "--out", str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    x, y = (float(v) for v in re.search(r"minimum is (\S+) at x = (\S+)", printed).groups()[::-1])
    assert (x, y) == pytest.approx(_plot.gelu_minimum(), abs=1e-6)


@pytest.mark.parametrize("activation", ["relu", "tanh", "gelu"])
def test_xor_network_learns_the_truth_table(activation):
    printed = run(str(EXAMPLES / "xor.py"), "--activation", activation)
    predicted = re.findall(r"(\d) xor (\d) = (\d): predicted (\S+) -> (\d)", printed)
    assert len(predicted) == 4, printed
    for a, b, target, p, bit in predicted:
        assert int(target) == int(a) ^ int(b) and int(bit) == int(target), printed
        assert abs(float(p) - int(target)) < 0.1, printed  # confidently, not by a hair


def test_ffn_block_gradients_match_finite_differences():
    printed = run(str(EXAMPLES / "ffn_block.py"))
    worst = dict(re.findall(r"(\w+): .* worst relative difference (\S+)", printed))
    assert set(worst) == {"gelu", "swiglu"}, printed
    for form, value in worst.items():
        assert float(value) < 1e-5, printed


def test_ffn_block_backward_is_fastacts():
    """The example's gradient uses fastact's derivative, not a copy of it."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        import ffn_block
    finally:
        sys.path.remove(str(EXAMPLES))
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1, (4, 8))
    weights = ffn_block.init("gelu", 8, 16, rng)
    y, saved = ffn_block.forward("gelu", weights, x)
    grads = ffn_block.backward("gelu", weights, y, saved)
    pre = x @ weights["w_in"] + weights["b_in"]
    expected = x.T @ fa.gelu_backward(y @ weights["w_out"].T, pre)
    np.testing.assert_array_equal(grads["w_in"], expected)
