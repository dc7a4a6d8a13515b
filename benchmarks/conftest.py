"""Options, markers and machine facts for the pytest-benchmark suite (test_bench.py)."""
import functools

import pytest

import fastact as fa
from fastact import _bench, _peers   # _peers before any peer: it sets OMP_WAIT_POLICY for torch


def pytest_addoption(parser):
    group = parser.getgroup("fastact benchmarks")
    group.addoption("--bench-huge", action="store_true",
                    help="also time 1e8-element arrays (float64: 2.4 GB, plus NumPy's temporaries)")
    group.addoption("--bench-time", type=float, default=0.2, metavar="SECONDS",
                    help="timing budget per benchmark (rounds are planned from it; "
                         "--benchmark-max-time/min-rounds do not apply to these pedantic runs)")


def pytest_configure(config):
    # pyproject.toml runs pytest with --strict-markers
    config.addinivalue_line("markers",
                            "quick: float32, 1e3 and 1e5 elements, 1 thread; gelu at 1e3 in float16 "
                            "and bfloat16 (the CI pass)")


def pytest_report_header(config):
    absent = [i for i in _peers.IMPLS if not _peers.available(i)]
    return [f"fastact {fa.__version__}: ISA {fa.isa()}, threads {fa.get_num_threads()}, "
            f"peers not installed (not timed): {', '.join(absent) or 'none'}"]


def pytest_benchmark_update_machine_info(config, machine_info):
    """Into the JSON, for benchmarks/report.py: what ran, and on what."""
    machine_info["fastact"] = _bench.machine_facts()


@functools.lru_cache(maxsize=1)   # the cases come ordered by (size, dtype): one set alive at a time
def _inputs(size, dtype):
    return _peers.make_inputs(size, dtype)


@pytest.fixture
def bench_inputs():
    return _inputs


@pytest.fixture
def bench_time(request):
    return request.config.getoption("--bench-time")
