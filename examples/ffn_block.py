"""A transformer feed-forward block in NumPy, forward and backward, with
fastact's kernels: Linear -> GELU -> Linear (GPT-2, BERT), or the SwiGLU form
(Llama): (silu(x W_gate) * (x W_up)) W_down. The loss is half the sum of
squares of the output; its gradients are checked against central finite
differences.

    python examples/ffn_block.py [--form gelu|swiglu] [--tokens N] [--d-model D]
"""
import argparse

import numpy as np

import fastact as fa


def init(form, d_model, d_ff, rng):
    weights = {"w_in": rng.normal(0, d_model ** -0.5, (d_model, d_ff)), "b_in": rng.normal(0, 0.1, d_ff),
               "w_out": rng.normal(0, d_ff ** -0.5, (d_ff, d_model))}
    if form == "swiglu":
        weights["w_up"] = rng.normal(0, d_model ** -0.5, (d_model, d_ff))
    return weights


def forward(form, weights, x):
    """The block's output and what backward needs."""
    pre = x @ weights["w_in"] + weights["b_in"]
    if form == "gelu":
        hidden = fa.gelu(pre)
        saved = (x, pre, None)
    else:
        up = x @ weights["w_up"]
        hidden = fa.swiglu(pre, up)
        saved = (x, pre, up)
    return hidden @ weights["w_out"], (hidden,) + saved


def backward(form, weights, grad_y, saved):
    """Gradients of the loss for every weight and for x, given dL/dy."""
    hidden, x, pre, up = saved
    grads = {"w_out": hidden.T @ grad_y}
    grad_hidden = grad_y @ weights["w_out"].T
    if form == "gelu":
        grad_pre = fa.gelu_backward(grad_hidden, pre)
        grad_x = grad_pre @ weights["w_in"].T
    else:
        grad_pre, grad_up = fa.swiglu_backward(grad_hidden, pre, up)
        grads["w_up"] = x.T @ grad_up
        grad_x = grad_pre @ weights["w_in"].T + grad_up @ weights["w_up"].T
    grads["w_in"] = x.T @ grad_pre
    grads["b_in"] = grad_pre.sum(axis=0)
    grads["x"] = grad_x
    return grads


def loss(form, weights, x):
    y, _ = forward(form, weights, x)
    return 0.5 * float(np.sum(y * y))


def finite_difference_check(form, weights, x, grads, probes=6, step=1e-6, seed=1):
    """Largest relative difference between backward's gradients and central
    differences of the loss, over a few entries of every parameter and of x."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for name, grad in grads.items():
        target = x if name == "x" else weights[name]
        for flat in rng.choice(target.size, size=min(probes, target.size), replace=False):
            index = np.unravel_index(flat, target.shape)
            saved = target[index]
            target[index] = saved + step
            above = loss(form, weights, x)
            target[index] = saved - step
            below = loss(form, weights, x)
            target[index] = saved
            numeric = (above - below) / (2 * step)
            worst = max(worst, abs(numeric - grad[index]) / max(abs(numeric), abs(grad[index]), 1e-8))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--form", choices=["gelu", "swiglu"], action="append",
                        help="the activation (repeat for both; default: both)")
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--d-model", type=int, default=32)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, (args.tokens, args.d_model))
    for form in args.form or ["gelu", "swiglu"]:
        weights = init(form, args.d_model, 4 * args.d_model, rng)
        y, saved = forward(form, weights, x)
        grads = backward(form, weights, y, saved)  # dL/dy = y for L = sum(y^2)/2
        worst = finite_difference_check(form, weights, x, grads)
        print(f"{form}: output {y.shape}, loss {loss(form, weights, x):.6f}, "
              f"gradient vs finite differences: worst relative difference {worst:.2e}")


if __name__ == "__main__":
    main()
