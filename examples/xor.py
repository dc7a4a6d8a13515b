"""The XOR network of the seed articles, trained in NumPy with fastact's
forward and backward kernels: 2 inputs, one hidden layer, a sigmoid output,
binary cross-entropy, full-batch gradient descent. It trains once with each
hidden activation the article compares (ReLU, tanh, GELU) and prints the
predictions.

    python examples/xor.py [--activation relu|tanh|gelu] [--steps N] [--seed S]
"""
import argparse

import numpy as np

import fastact as fa

INPUTS = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.float64)
TARGETS = np.array([[0], [1], [1], [0]], dtype=np.float64)
ACTIVATIONS = {
    "relu": (fa.relu, fa.relu_backward),
    "tanh": (fa.tanh, fa.tanh_backward),
    "gelu": (fa.gelu, fa.gelu_backward),
}


def train(activation, steps=3000, hidden=8, learning_rate=0.5, seed=0):
    """Weights trained on XOR; returns (predictions for INPUTS, final loss)."""
    act, act_backward = ACTIVATIONS[activation]
    rng = np.random.default_rng(seed)
    w1 = rng.normal(0, 1, (2, hidden))
    b1 = np.zeros(hidden)
    w2 = rng.normal(0, 1 / np.sqrt(hidden), (hidden, 1))
    b2 = np.zeros(1)
    n = len(INPUTS)
    for _ in range(steps):
        z1 = INPUTS @ w1 + b1
        h = act(z1)
        p = fa.sigmoid(h @ w2 + b2)
        # binary cross-entropy through a sigmoid: its gradient is p - target
        grad_z2 = (p - TARGETS) / n
        grad_h = grad_z2 @ w2.T
        grad_z1 = act_backward(grad_h, z1)
        w2 -= learning_rate * (h.T @ grad_z2)
        b2 -= learning_rate * grad_z2.sum(axis=0)
        w1 -= learning_rate * (INPUTS.T @ grad_z1)
        b1 -= learning_rate * grad_z1.sum(axis=0)
    p = fa.sigmoid(act(INPUTS @ w1 + b1) @ w2 + b2)
    loss = -np.mean(TARGETS * np.log(p) + (1 - TARGETS) * np.log1p(-p))
    return p.ravel(), float(loss)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--activation", choices=list(ACTIVATIONS), action="append",
                        help="hidden activation (repeat for several; default: all three)")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for name in args.activation or list(ACTIVATIONS):
        predictions, loss = train(name, steps=args.steps, seed=args.seed)
        print(f"{name}: loss {loss:.4f}")
        for (a, b), target, p in zip(INPUTS.astype(int), TARGETS.ravel().astype(int), predictions):
            print(f"  {a} xor {b} = {target}: predicted {p:.3f} -> {int(p > 0.5)}")


if __name__ == "__main__":
    main()
