"""The thread pool and its policy: where the thread count comes from
(FASTACT_NUM_THREADS, OMP_NUM_THREADS, set_num_threads, threadpoolctl), the
cost model's bookkeeping, the spin-then-park wake path under back-to-back and
idle calls, exit, and the benchmark's refusal to oversubscribe. No timing
assertions: speed is measured by benchmarks (docs/DEVELOPING.md), not here."""
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import fastact as fa
from conftest import fixed_split, forced_threads

SRC = os.path.dirname(os.path.dirname(fa.__file__))


def python(code, env_extra=None, drop=("FASTACT_NUM_THREADS", "OMP_NUM_THREADS"), timeout=120):
    """Run `code` in a fresh interpreter with this fastact; returns its stdout."""
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPATH"] = SRC
    env.update(env_extra or {})
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done.stdout


COUNT = "import fastact as fa; print(fa.get_num_threads(), fa._num_threads_source(), fa._ext.cpus_available())"


def test_default_is_the_usable_cpus():
    n, *source = python(COUNT).split()
    assert int(n) == int(source[-1]) and "CPUs" in " ".join(source)


@pytest.mark.parametrize(("omp", "want"), [("1", 1), ("1,3", 1), ("100000", None), ("x", None), ("0", None)])
def test_omp_num_threads_is_honoured_when_fastact_num_threads_is_unset(omp, want):
    n, *rest = python(COUNT, {"OMP_NUM_THREADS": omp}).split()
    cpus = int(rest[-1])
    if want is not None:
        assert int(n) == want and "OMP_NUM_THREADS" in " ".join(rest)
    elif omp == "100000":  # capped at the CPUs this process may use
        assert int(n) == cpus and "OMP_NUM_THREADS" in " ".join(rest)
    else:  # invalid: ignored
        assert int(n) == cpus and "CPUs" in " ".join(rest)


def test_fastact_num_threads_wins_over_omp_num_threads():
    n, *rest = python(COUNT, {"OMP_NUM_THREADS": "1", "FASTACT_NUM_THREADS": "3"}).split()
    assert int(n) == 3 and rest[0] == "FASTACT_NUM_THREADS"


def test_set_num_threads_is_reported_as_the_source():
    with forced_threads(2):
        assert fa._num_threads_source() == "fastact.set_num_threads()"


def test_info_says_where_the_thread_count_came_from():
    out = python("import runpy, sys; sys.argv = ['fastact']; runpy.run_module('fastact', run_name='__main__')",
                 {"OMP_NUM_THREADS": "1"})
    line = next(l for l in out.splitlines() if l.startswith("threads for large arrays"))
    assert "1, from OMP_NUM_THREADS" in line and "CPUs usable" in line
    assert "waking a worker" not in out  # one thread: no pool to measure


def test_info_states_the_wake_cost_it_measures():
    out = python("import runpy, sys; sys.argv = ['fastact']; runpy.run_module('fastact', run_name='__main__')",
                 {"FASTACT_NUM_THREADS": "2"})
    line = next(l for l in out.splitlines() if l.startswith("waking a worker"))
    parked, spinning = (float(v) for v in re.findall(r"([0-9.]+) µs", line))
    assert 0 < spinning and 0 < parked


# ---- threadpoolctl ----------------------------------------------------------------------

def test_threadpoolctl_limits_fastact():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with forced_threads(2):
        info = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "fastact"]
        assert len(info) == 1 and info[0]["num_threads"] == 2 and "_ext" in info[0]["filepath"]
        with threadpoolctl.threadpool_limits(1):
            assert fa.get_num_threads() == 1
            assert fa._num_threads_source() == "threadpoolctl"
            x = np.linspace(-5, 5, 100_000, dtype=np.float32)
            np.testing.assert_array_equal(fa.gelu(x), fa.gelu(x.copy()))
        assert fa.get_num_threads() == 2
        with threadpoolctl.threadpool_limits(limits={"fastact": 1}):
            assert fa.get_num_threads() == 1
        assert fa.get_num_threads() == 2


def test_fastact_imports_without_threadpoolctl():
    # sys.modules[name] = None makes `import name` fail, as if it were not installed
    out = python("import sys; sys.modules['threadpoolctl'] = None\n"
                 "import fastact as fa, numpy as np\n"
                 "print(fa._threadpoolctl.register(), fa.relu(np.array([-1.0, 2.0])).tolist())")
    assert out.split("\n")[0] == "False [0.0, 2.0]"


def test_controller_follows_the_third_party_api():
    # A stand-in threadpoolctl (the real one may be absent): what register() hands it
    # must be a LibController subclass with the attributes and methods the API asks for.
    code = """
import sys, types, ctypes
from abc import ABC
tp = types.ModuleType("threadpoolctl")
class LibController(ABC):
    def __init__(self, *, filepath=None, prefix=None, parent=None):
        self.filepath, self.prefix = filepath, prefix
        self.dynlib = ctypes.CDLL(filepath)
registered = []
tp.LibController, tp.register, tp._ALL_CONTROLLERS = LibController, registered.append, registered
sys.modules["threadpoolctl"] = tp
import fastact as fa
(cls,) = registered
assert cls.user_api == "fastact" and cls.filename_prefixes == ("_ext",)
c = cls(filepath=fa._ext.__file__, prefix="_ext")
assert all(hasattr(c.dynlib, s) for s in cls.check_symbols)
c.set_num_threads(1); assert c.get_num_threads() == fa.get_num_threads() == 1
assert fa._num_threads_source() == "threadpoolctl" and c.get_version() == fa.__version__
fa._threadpoolctl.register(); assert len(registered) == 1  # once only
print("ok")
"""
    assert python(code).strip() == "ok"


# ---- the cost model and the pool ---------------------------------------------------------

def test_cost_model_learns_each_kernels_cost():
    x = np.linspace(-5, 5, 50_000)
    with forced_threads(2):
        fa.silu(x)  # float64, contiguous, forward
        fa.silu(x[::2])  # gathered
    assert fa._ext.cost_ns("silu", "fwd", "float64") > 0   # the default call's (fast) kernel
    assert fa._ext.cost_ns("silu", "fwd", "float64", gathered=True) > 0
    with forced_threads(2):
        fa.silu(x, precision="accurate")
    assert fa._ext.cost_ns("silu", "fwd", "float64", precision="accurate") > 0   # each tier its own
    assert fa._ext.thread_threshold("silu", "float64") >= 4096
    assert fa._ext.cost_estimate_ns("silu", "float64") > 0
    with fixed_split(1234):
        assert fa._ext.thread_threshold("silu", "float64") == 1234
    assert fa._ext.thread_threshold("silu", "float64") != 1234


def test_wake_cost_is_measured_when_the_pool_starts():
    out = python("import fastact as fa, numpy as np\n"
                 "fa.set_num_threads(2); before = fa._ext.wake_ns()\n"
                 "fa._ext.set_thread_threshold('relu', 4096)\n"
                 "fa.relu(np.ones(10_000, np.float32)); print(before, fa._ext.wake_ns())")
    before, after = out.replace("(", " ").replace(")", " ").replace(",", " ").split()[:2], \
        out.replace("(", " ").replace(")", " ").replace(",", " ").split()[2:]
    assert [float(v) for v in before] == [0.0, 0.0]
    assert all(float(v) > 0 for v in after)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cost_model_split_gives_the_same_bits_at_every_size(dtype):
    rng = np.random.default_rng(3)
    for n in (1, 63, 4097, 8191, 8192, 20_000, 1 << 17, 300_001):
        x = rng.normal(0, 4, n).astype(dtype)
        with forced_threads(1):
            want = [fa.gelu(x), fa.silu_backward(x, x), fa.relu(x)]
        with forced_threads(2):
            for _ in range(2):  # first call learns the cost; the second uses it
                got = [fa.gelu(x), fa.silu_backward(x, x), fa.relu(x)]
                for g, w in zip(got, want):
                    assert np.array_equal(g.view(np.uint8), w.view(np.uint8)), n


def test_back_to_back_and_idle_calls():
    # Back to back: workers still spinning; after a pause: parked. Both paths must deliver
    # every chunk (a lost wake-up hangs, a missed chunk leaves NaN).
    x = np.linspace(-8, 8, 3 * 4096 + 5, dtype=np.float32)
    want = fa.gelu(x)
    with forced_threads(3), fixed_split(4096):
        for i in range(300):
            out = np.full_like(x, np.nan)
            fa.gelu(x, out=out)
            assert np.array_equal(out.view(np.uint32), want.view(np.uint32)), i
            if i % 50 == 0:
                time.sleep(0.002)  # past the spin budget: the workers park


def run_in_threads(work, count=4):
    """count Python threads running work, joined (each given two minutes)."""
    threads = [threading.Thread(target=work) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return threads


def test_many_python_threads_with_a_small_split():
    # Contention for the pool: the losers run on their own thread, never block.
    x = np.linspace(-8, 8, 2 * 4096 + 77)
    want = fa.silu(x)
    errors = []

    def work():
        for _ in range(200):
            if not np.array_equal(fa.silu(x).view(np.uint64), want.view(np.uint64)):
                errors.append(1)

    with forced_threads(2), fixed_split(4096):
        threads = run_in_threads(work)
        assert not any(t.is_alive() for t in threads), "a call blocked on the busy pool"
    assert not errors


def test_python_threads_fill_16_bit_tables_at_once():
    # Every thread reaches the fill threshold together: one table is
    # published, the others' are freed, and everyone gets the computed bits.
    from fastact import _ext
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    g = np.linspace(-3, 3, x.size).astype(np.float16)
    with np.errstate(all="ignore"):
        previous = _ext.table16(False)
        try:
            want = [fa.gelu(x), fa.silu_backward(g, x)]
            _ext.table16(True)
            _ext.table16_forget()
            published = _ext.table16_published()
            errors = []
            start = threading.Barrier(4)

            def work():
                start.wait()
                for _ in range(3):
                    got = [fa.gelu(x), fa.silu_backward(g, x)]
                    if not all(np.array_equal(a.view(np.uint16), b.view(np.uint16)) for a, b in zip(got, want)):
                        errors.append(1)

            with forced_threads(2), fixed_split(4096):
                threads = run_in_threads(work)
            assert _ext.table16_published() == published + 2
        finally:
            _ext.table16(previous)
    assert not any(t.is_alive() for t in threads)
    assert not errors


@pytest.mark.parametrize("when", ["spinning", "parked", "from a thread"])
def test_no_hang_at_interpreter_exit(when):
    pause = {"spinning": "", "parked": "time.sleep(0.05)", "from a thread": ""}[when]
    call = "fa.gelu(np.ones(100_000))"
    if when == "from a thread":
        call = "threading.Thread(target=lambda: fa.gelu(np.ones(100_000)), daemon=True).start()"
    python("import threading, time, numpy as np, fastact as fa\n"
           "fa.set_num_threads(4); fa._ext.set_thread_threshold('gelu', 4096, 'float64')\n"
           f"{call}\n{pause}\n", timeout=60)


# ---- the benchmark ------------------------------------------------------------------------

def test_bench_refuses_more_threads_than_cpus(capsys):
    from fastact._bench import oversubscription_warning, parse_args
    cpus = fa._ext.cpus_available()
    with pytest.raises(SystemExit):
        parse_args(["--threads", f"1,{cpus + 1}"])
    assert "more than the" in capsys.readouterr().err
    args = parse_args(["--threads", f"1,{cpus + 1}", "--oversubscribe"])
    assert args.oversubscribed == [cpus + 1]
    assert "OVERSUBSCRIBED" in oversubscription_warning(args)
    assert oversubscription_warning(parse_args(["--threads", f"1,{cpus}"])) is None


def test_bench_default_thread_counts_fit_the_cpus():
    from fastact._bench import parse_args
    with forced_threads(fa._ext.cpus_available() + 3):
        args = parse_args([])
    assert max(args.threads) <= fa._ext.cpus_available() and not args.oversubscribed
