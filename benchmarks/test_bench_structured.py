"""The structured functions (softmax and log_softmax along an axis, the gated
units, bias + activation) against their peers under pytest-benchmark: the
cases and compositions of fastact._peers_rows, float32, 1 and all threads.
Groups are function-direction-shape, so each table compares implementations
side by side. The quick mark (the CI pass) takes one small shape per function
at 1 thread: softmax rows (64, 1024), the others (24, 4096).

    pytest benchmarks/test_bench_structured.py                 # every shape, minutes
    pytest benchmarks -m quick -k "softmax or glu or bias_"    # the CI subset of these
"""
import functools
from typing import NamedTuple

import pytest

import fastact as fa
from fastact import _bench
from fastact import _peers_rows as rows
from fastact._peers import Unsupported, using_threads, version

THREADS = sorted({1, fa.get_num_threads()})
ROUND_TIME, MIN_ROUNDS, MAX_ROUNDS = 2e-4, 3, 1000


class Case(NamedTuple):
    function: str
    direction: str
    shape: tuple
    axis: int
    impl: str
    threads: int
    quick: bool

    @property
    def group(self):
        shape = rows.label(self.function, self.shape, self.axis).replace(" ", "-")
        return f"{self.function}-{self.direction}-{shape}"

    @property
    def id(self):
        return f"{self.group}-{self.impl}-t{self.threads}"


def cases():
    impls = [i for i in rows.IMPLS if rows.available(i)]
    for quick in (True, False):
        for name, direction, shape, axis in rows.cases(quick=quick):
            for threads in [1] if quick else THREADS:
                for impl in impls:
                    case = Case(name, direction, shape, axis, impl, threads, quick)
                    yield pytest.param(case, id=case.id, marks=[pytest.mark.quick] if quick else [])


@functools.lru_cache(maxsize=1)    # cases come ordered by function and shape: one set alive at a time
def _inputs(name, direction, shape, axis):
    return rows.make_case_inputs(name, direction, shape, axis)


@pytest.mark.parametrize("case", list(cases()))
def test_structured(benchmark, case, bench_time):
    arrays = _inputs(case.function, case.direction, case.shape, case.axis)
    try:
        fn = rows.build(case.impl, case.function, case.direction, arrays, case.axis, case.threads)
    except Unsupported as exc:
        pytest.skip(str(exc))
    benchmark.group = case.group
    # benchmarks/report.py reads function/direction/dtype/size/threads/impl/isa; the
    # axis-0 softmax gets its own function label (its size equals (4096, 1024)'s)
    label = case.function + (f" axis={case.axis}" if case.axis != -1 else "")
    benchmark.extra_info.update(
        function=label, direction=case.direction, dtype="float32", shape=list(case.shape),
        axis=case.axis, size=rows.elements(case.function, case.shape), impl=case.impl,
        threads=case.threads, isa=fa.isa(), elements=rows.elements(case.function, case.shape),
        version=version(rows.LOADS.get(case.impl, case.impl) if case.impl in rows.MODULES else "numpy"))
    with using_threads(case.threads):
        iterations = _bench.calibrate(fn, ROUND_TIME)
        round_time = _bench.time_per_call(fn, iterations) * iterations
        rounds = int(min(MAX_ROUNDS, max(MIN_ROUNDS, bench_time / round_time)))
        benchmark.pedantic(fn, iterations=iterations, rounds=rounds, warmup_rounds=1)

