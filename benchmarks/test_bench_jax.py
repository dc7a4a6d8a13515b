"""fastact.jax against jax.nn inside jax.jit, float32, side by side under
pytest-benchmark: forward, the gradient of sum(f(x)·w), and for sigmoid a
training step's value and gradient (tools/jax_speed.py prints the same
comparison as one table). Both on one thread: jax's CPU pool is sized when
it starts (_peers sets it), fastact's set here. The quick mark (the CI pass)
takes 1e3 elements.

    pytest benchmarks/test_bench_jax.py
"""
import numpy as np
import pytest

import fastact as fa
from fastact import _bench, _peers
from fastact._peers import using_threads

if not _peers.available("jax"):
    pytest.skip("jax is not installed", allow_module_level=True)
_peers._start_jax()
import jax  # noqa: E402
import fastact.jax as faj  # noqa: E402

ROUND_TIME, MIN_ROUNDS, MAX_ROUNDS = 2e-4, 3, 1000
SIZES = [1000, 100_000, 1_000_000]


def _grad(f):
    return jax.grad(lambda x, w: (f(x) * w).sum())


def _value_and_grad(f):
    def step(x, w):
        value, grad = jax.value_and_grad(lambda t: (f(t) * w).sum())(x)
        return grad + value
    return step


# (function, what): (jax.nn's, fastact.jax's), each of (x, w)
CASES = {
    ("gelu", "forward"): (lambda x, w: jax.nn.gelu(x, approximate=False), lambda x, w: faj.gelu(x)),
    ("gelu", "grad"): (_grad(lambda x: jax.nn.gelu(x, approximate=False)), _grad(faj.gelu)),
    ("silu", "forward"): (lambda x, w: jax.nn.silu(x), lambda x, w: faj.silu(x)),
    ("silu", "grad"): (_grad(jax.nn.silu), _grad(faj.silu)),
    ("sigmoid", "value_and_grad"): (_value_and_grad(jax.nn.sigmoid), _value_and_grad(faj.sigmoid)),
    ("relu", "forward"): (lambda x, w: jax.nn.relu(x), lambda x, w: faj.relu(x)),
}


def cases():
    for (name, what) in CASES:
        for size in SIZES:
            for impl in ("jax", "fastact"):
                marks = [pytest.mark.quick] if size == SIZES[0] else []
                yield pytest.param(name, what, size, impl, marks=marks, id=f"jit_{name}-{what}-{size:.0e}-{impl}")


@pytest.mark.parametrize("name, what, size, impl", list(cases()))
def test_jitted(benchmark, name, what, size, impl, bench_time):
    benchmark.group = f"jit_{name}-{what}-float32-{size:.0e}"
    benchmark.extra_info.update(function=f"jit_{name}", direction=what, dtype="float32", size=size, threads=1,
                                impl=impl, isa=fa.isa())
    rng = np.random.default_rng(0)
    x, w = (jax.numpy.asarray(rng.normal(0, 3, size).astype(np.float32)) for _ in range(2))
    function = jax.jit(CASES[name, what][impl == "fastact"])

    def call():
        return function(x, w).block_until_ready()

    with using_threads(1):
        call()
        iterations = _bench.calibrate(call, ROUND_TIME)
        round_time = _bench.time_per_call(call, iterations) * iterations
        rounds = int(min(MAX_ROUNDS, max(MIN_ROUNDS, bench_time / round_time)))
        benchmark.pedantic(call, iterations=iterations, rounds=rounds, warmup_rounds=1)
