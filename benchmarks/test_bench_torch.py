"""A transformer MLP block in PyTorch, forward and backward: Linear → GELU
(or SiLU, or the SwiGLU gate) → Linear with torch's activation against
fastact.torch's, float32, side by side under pytest-benchmark. The matrix
products are the same torch calls in both, so the difference is the
activation and its backward. The quick mark (the CI pass) takes the
smallest block at 1 thread.

    pytest benchmarks/test_bench_torch.py
"""
import pytest

import fastact as fa
from fastact import _bench
from fastact._peers import using_threads

torch = pytest.importorskip("torch")
fat = pytest.importorskip("fastact.torch")

ROUND_TIME, MIN_ROUNDS, MAX_ROUNDS = 2e-4, 3, 1000
# (tokens, model width, hidden width)
SHAPES = [(64, 256, 1024), (256, 1024, 4096)]
THREADS = sorted({1, fa.get_num_threads()})
ACTIVATIONS = {
    "gelu": (torch.nn.functional.gelu, fat.gelu),
    "silu": (torch.nn.functional.silu, fat.silu),
    "swiglu": (lambda gate, up: torch.nn.functional.silu(gate) * up, fat.swiglu),
}


def block(name, impl, tokens, width, hidden):
    """One forward and backward pass of the block, as a closure over its tensors."""
    generator = torch.Generator().manual_seed(0)
    gated = name == "swiglu"
    x = torch.randn(tokens, width, generator=generator)
    w_in = (torch.randn((2 if gated else 1) * hidden, width, generator=generator) / width**0.5).requires_grad_()
    w_out = (torch.randn(width, hidden, generator=generator) / hidden**0.5).requires_grad_()
    act = ACTIVATIONS[name][impl == "fastact"]

    def step():
        h = x @ w_in.T
        a = act(*h.chunk(2, dim=-1)) if gated else act(h)
        (a @ w_out.T).square().mean().backward()
        w_in.grad = w_out.grad = None
    return step


def cases():
    for name in ACTIVATIONS:
        for index, shape in enumerate(SHAPES):
            for threads in THREADS:
                quick = index == 0 and threads == 1
                for impl in ("torch", "fastact"):
                    yield pytest.param(name, shape, threads, impl, marks=[pytest.mark.quick] if quick else [],
                                       id=f"mlp_{name}-{'x'.join(map(str, shape))}-{impl}-t{threads}")


@pytest.mark.parametrize("name, shape, threads, impl", list(cases()))
def test_mlp_block(benchmark, name, shape, threads, impl, bench_time):
    tokens, width, hidden = shape
    benchmark.group = f"mlp_{name}-fwd+bwd-{'x'.join(map(str, shape))}-t{threads}"
    benchmark.extra_info.update(function=f"mlp_{name}", direction="fwd+bwd", dtype="float32",
                                size=tokens * hidden, threads=threads, impl=impl, isa=fa.isa(), shape=list(shape))
    with using_threads(threads):  # fastact's and torch's
        step = block(name, impl, *shape)
        iterations = _bench.calibrate(step, ROUND_TIME)
        round_time = _bench.time_per_call(step, iterations) * iterations
        rounds = int(min(MAX_ROUNDS, max(MIN_ROUNDS, bench_time / round_time)))
        benchmark.pedantic(step, iterations=iterations, rounds=rounds, warmup_rounds=1)
