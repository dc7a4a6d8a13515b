"""Shared fixtures: run kernel tests under every kernel set this CPU can run."""
import contextlib
import os
import time

import numpy as np
import pytest

import fastact as fa

# Every ISA the kernels can be tested under here: the real ones the CPU has,
# plus the AVX-512 source through SIMDe when the CPU lacks AVX-512 itself
# (and alongside it when it has it, so the two are compared).
TESTABLE_ISAS = fa.available_isas() + (
    ["avx512-emulated"] if fa._ext.isa_supported(fa._ISA_NAMES.index("avx512-emulated")) else [])

# lanes per register of each ISA, for double / float
LANES = {"scalar": (1, 1), "sse2": (2, 4), "neon": (2, 4), "avx2": (4, 8), "avx512": (8, 16), "avx512-emulated": (8, 16)}


def pytest_report_header(config):
    return [f"fastact {fa.__version__}: CPU ISAs {fa.available_isas()}, default {fa.isa()}, "
            f"tested {TESTABLE_ISAS}, threads {fa.get_num_threads()}",
            f"numpy {np.__version__}"]


def child_exit_code(pid, hung, seconds=120):
    """A forked child's exit code; a child still running after `seconds` is
    killed and fails the test with the message `hung` (not a timing
    assertion: it keeps a deadlocked child from hanging the suite)."""
    deadline = time.monotonic() + seconds
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0:
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail(hung)
        time.sleep(0.02)
    return os.waitstatus_to_exitcode(done[1])


@contextlib.contextmanager
def forced_isa(name):
    previous = fa.set_isa(name)
    try:
        yield name
    finally:
        fa.set_isa(previous)


@contextlib.contextmanager
def forced_threads(n):
    previous = fa.set_num_threads(n)
    try:
        yield n
    finally:
        fa.set_num_threads(previous)


@contextlib.contextmanager
def fixed_split(min_per_thread=4096):
    """Split every call of at least 2 * min_per_thread elements, whatever the
    cost model would choose (which depends on timings): tests of the split
    itself need it to happen. Back to the cost model afterwards."""
    names = list(fa._ext.OPS)
    for name in names:
        for dtype in ("float32", "float64"):
            fa._ext.set_thread_threshold(name, min_per_thread, dtype)
    try:
        yield min_per_thread
    finally:
        for name in names:
            for dtype in ("float32", "float64"):
                fa._ext.set_thread_threshold(name, 0, dtype)


@pytest.fixture(params=TESTABLE_ISAS)
def isa(request):
    """Run the test once per kernel set, restoring the default afterwards."""
    with forced_isa(request.param) as name:
        yield name
