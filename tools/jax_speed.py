#!/usr/bin/env python3
"""fastact.jax against jax.nn inside jax.jit: forward, gradient (of sum(f(x)·w)) and a chain, float32.

Each case is one jitted function per library, timed in interleaved samples
(the median of --repeat samples, each the mean over enough calls to take
about 20 ms, after block_until_ready); prints a Markdown table of µs per call
and the ratio (jax.nn's time over fastact.jax's: > 1, fastact.jax is
faster). Both run at one thread unless --threads says otherwise (PJRT_NPROC
for XLA's pool, set before jax starts; fastact's pool likewise).

    python tools/jax_speed.py [--sizes 1e3,1e5,1e6] [--repeat 11] [--threads 1]
"""
import argparse
import os
import time

import numpy as np


def cases(jax, faj):
    nn, jnp = jax.nn, jax.numpy

    def grad_of(f):  # d/dx of sum(f(x)·w): w is the cotangent, an array as a real loss gives
        return jax.grad(lambda x, w: (f(x) * w).sum())

    def value_and_grad_of(f):  # a training step's: the loss sum(f(x)·w) is used too (added to the gradient)
        def step(x, w):
            value, grad = jax.value_and_grad(lambda t: (f(t) * w).sum())(x)
            return grad + value
        return step

    def chain(f):
        return lambda x, w: f(x * 2 + 1).sum()

    return {
        ("gelu", "forward"): (lambda x, w: nn.gelu(x, approximate=False), lambda x, w: faj.gelu(x)),
        ("gelu", "grad"): (grad_of(lambda x: nn.gelu(x, approximate=False)), grad_of(faj.gelu)),
        ("gelu tanh", "forward"): (lambda x, w: nn.gelu(x, approximate=True),
                                   lambda x, w: faj.gelu(x, approximate="tanh")),
        ("gelu tanh", "grad"): (grad_of(lambda x: nn.gelu(x, approximate=True)),
                                grad_of(lambda x: faj.gelu(x, approximate="tanh"))),
        ("silu", "forward"): (lambda x, w: nn.silu(x), lambda x, w: faj.silu(x)),
        ("silu", "grad"): (grad_of(nn.silu), grad_of(faj.silu)),
        ("sigmoid", "forward"): (lambda x, w: nn.sigmoid(x), lambda x, w: faj.sigmoid(x)),
        ("sigmoid", "grad"): (grad_of(nn.sigmoid), grad_of(faj.sigmoid)),
        ("sigmoid", "value and grad"): (value_and_grad_of(nn.sigmoid), value_and_grad_of(faj.sigmoid)),
        ("tanh", "forward"): (lambda x, w: jnp.tanh(x), lambda x, w: faj.tanh(x)),
        ("tanh", "grad"): (grad_of(jnp.tanh), grad_of(faj.tanh)),
        ("tanh", "value and grad"): (value_and_grad_of(jnp.tanh), value_and_grad_of(faj.tanh)),
        ("relu", "forward"): (lambda x, w: nn.relu(x), lambda x, w: faj.relu(x)),
        ("relu", "grad"): (grad_of(nn.relu), grad_of(faj.relu)),
        ("gelu", "x*2+1 → gelu → sum"): (chain(lambda x: nn.gelu(x, approximate=False)), chain(faj.gelu)),
    }


def seconds_per_call(function, x, w, calls):
    start = time.perf_counter()
    for _ in range(calls):
        result = function(x, w)
    result.block_until_ready()
    return (time.perf_counter() - start) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e3,1e5,1e6")
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--callback", action="store_true",
                        help="time fastact.jax's host-callback route (its fallback off the CPU) instead")
    parser.add_argument("--only", default="", help="comma-separated function names to time (default: all)")
    args = parser.parse_args()
    os.environ.setdefault("PJRT_NPROC", str(args.threads))
    import jax

    import fastact as fa
    import fastact.jax as faj
    from fastact._bench import cpu_model
    fa.set_num_threads(args.threads)
    if args.callback:
        faj.uses_xla_ffi = False
    print(f"fastact {fa.__version__} (ISA {fa.isa()}, XLA custom call: {faj.uses_xla_ffi}), jax {jax.__version__}, "
          f"on {cpu_model()}; {args.threads} thread(s) each; µs per call, median of {args.repeat} interleaved "
          "samples\n")
    print("| function | what | size | jax.nn µs | fastact.jax µs | jax.nn / fastact.jax |")
    print("|---|---|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for (name, what), (theirs, ours) in cases(jax, faj).items():
        if args.only and name not in args.only.split(","):
            continue
        for size in (int(float(s)) for s in args.sizes.split(",")):
            x, w = (jax.numpy.asarray(rng.normal(0, 3, size).astype(np.float32)) for _ in range(2))
            functions = [jax.jit(theirs), jax.jit(ours)]
            for f in functions:
                f(x, w).block_until_ready()
            calls = max(3, int(0.02 / max(seconds_per_call(functions[1], x, w, 3), 1e-7)))
            samples = [[], []]
            for _ in range(args.repeat):
                for f, sample in zip(functions, samples):
                    sample.append(seconds_per_call(f, x, w, calls))
            t_theirs, t_ours = (np.median(s) * 1e6 for s in samples)
            print(f"| {name} | {what} | {size:.0e} | {t_theirs:.1f} | {t_ours:.1f} | {t_theirs / t_ours:.2f}× |",
                  flush=True)


if __name__ == "__main__":
    main()
