"""fastact vs its peers under pytest-benchmark: every activation in the registry,
forward and backward (and sigmoid's and tanh's derivative from the saved
output, as torch's autograd takes it), float32, float64, float16 and bfloat16 (with ml_dtypes),
1e2..1e7 elements (1e8 with --bench-huge), 1 and all threads. Each group
(function-direction-dtype-size) holds every implementation, so pytest-benchmark's
table compares them side by side.

    pytest benchmarks                                  # everything (float32 and float64: ~5 min here)
    pytest benchmarks -m quick                         # float32, 1e3 and 1e5, 1 thread;
                                                       # gelu 1e3 in float16 and bfloat16
    pytest benchmarks -k "gelu and float32 and 1e6"    # any subset of the ids
    pytest benchmarks --benchmark-json=b.json && python benchmarks/report.py b.json
"""
import importlib.util
from typing import NamedTuple

import pytest

import fastact as fa
from fastact import _bench, _peers
from fastact._registry import ACTIVATIONS

SIZES = [10**k for k in range(2, 8)]
HUGE = 10**8
DTYPES = ["float32", "float64", "float16"] + ["bfloat16"] * bool(importlib.util.find_spec("ml_dtypes"))
THREADS = sorted({1, fa.get_num_threads()})
QUICK = {"dtype": "float32", "sizes": (10**3, 10**5), "threads": 1}
QUICK_16 = {"dtypes": _peers.HALF, "function": "gelu", "size": 10**3, "threads": 1}   # one small case each

# A round lasts >= 0.2 ms so that timer and loop overhead vanish; >= 3 rounds
# for a median even when one call of a 1e7 NumPy formula takes half a second.
ROUND_TIME, MIN_ROUNDS, MAX_ROUNDS = 2e-4, 3, 1000


class Case(NamedTuple):
    function: str
    direction: str
    dtype: str
    size: int
    impl: str
    threads: int

    @property
    def group(self):
        return f"{self.function}-{self.direction}-{self.dtype}-{_bench.size_label(self.size)}"

    @property
    def id(self):
        return f"{self.group}-{self.impl}-t{self.threads}"

    @property
    def quick(self):
        return ((self.dtype == QUICK["dtype"] and self.size in QUICK["sizes"]
                 and self.threads == QUICK["threads"])
                or (self.dtype in QUICK_16["dtypes"] and self.function == QUICK_16["function"]
                    and self.size == QUICK_16["size"] and self.threads == QUICK_16["threads"]))


def cases(huge):
    """Ordered by size and dtype first, so one set of input arrays serves a run of cases."""
    impls = [i for i in _peers.IMPLS if _peers.available(i)]   # absent peers: listed in the header
    for size in SIZES + [HUGE] * huge:
        for dtype in DTYPES:
            for name in ACTIVATIONS:
                for direction in _peers.DIRECTIONS:
                    if direction == "from_output" and name not in _peers.FROM_OUTPUT:
                        continue
                    for threads in THREADS:
                        for impl in impls:
                            case = Case(name, direction, dtype, size, impl, threads)
                            yield pytest.param(case, id=case.id,
                                               marks=[pytest.mark.quick] if case.quick else [])


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        metafunc.parametrize("case", list(cases(metafunc.config.getoption("--bench-huge"))))


def plan(fn, budget):
    """(iterations per round, rounds) that fill about `budget` seconds."""
    iterations = _bench.calibrate(fn, ROUND_TIME)
    round_time = _bench.time_per_call(fn, iterations) * iterations
    return iterations, int(min(MAX_ROUNDS, max(MIN_ROUNDS, budget / round_time)))


def test_activation(benchmark, case, bench_inputs, bench_time):
    g, x, y = bench_inputs(case.size, case.dtype)
    try:
        fn = _peers.build(case.impl, case.function, case.direction, g, x, y, case.threads)
    except _peers.Unsupported as exc:
        pytest.skip(str(exc))
    benchmark.group = case.group
    benchmark.extra_info.update(
        case._asdict(), isa=fa.isa(), elements=case.size, version=_peers.version(case.impl),
        bytes=_bench.bytes_moved(case.size, case.dtype, case.direction))
    with _peers.using_threads(case.threads):
        iterations, rounds = plan(fn, bench_time)
        benchmark.pedantic(fn, iterations=iterations, rounds=rounds, warmup_rounds=1)
