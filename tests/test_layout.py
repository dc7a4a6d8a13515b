"""Results are the same bits whatever an element's position and the array's
length and alignment, whichever kernel set runs and however many threads
share the work (the contract's "bit-identical" promise)."""
import contextlib
import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import fastact as fa
from conftest import LANES, TESTABLE_ISAS, child_exit_code, fixed_split, forced_isa, forced_threads
from fastact._registry import ACTIVATIONS, VARIANTS

# Every public function once: an activation and the direction.
FUNCS = [pytest.param(a, backward, id=a.key + "_backward" * backward)
         for backward in (False, True) for a in VARIANTS.values()]
DTYPES = [np.float32, np.float64]
UINT = {np.dtype(np.float16): np.uint16, np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}


def assert_same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    bad = got.view(UINT[got.dtype]) != want.view(UINT[want.dtype])
    assert not bad.any(), f"{bad.sum()} of {bad.size} differ, first at {np.flatnonzero(bad)[:5]}"


def specials(dtype):
    fi = np.finfo(dtype)
    s = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, fi.max, -fi.max, fi.smallest_normal,
         -fi.smallest_normal, fi.smallest_subnormal, -fi.smallest_subnormal, fi.smallest_normal / 3,
         -fi.smallest_normal / 7, fi.eps, 1.0, -1.0, 0.5, -0.75, 5.0, -5.0, 9.0, -9.0, 13.0, -13.0,
         20.0, -20.0, 40.0, -40.0, 88.0, -88.0, 104.0, -104.0, 710.0, -710.0, 1e5, -1e5, 1e19, -1e19]
    with np.errstate(over="ignore"):  # float32 saturates the float64-only values to inf: fine
        return np.array(s).astype(dtype)


def mixed(dtype, n, seed=0):
    """Normals * 10 with the special values scattered through (so they also land in tails)."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 10).astype(dtype)
    s = specials(dtype)
    x[rng.choice(n, min(n, 4 * len(s)), replace=False)] = np.resize(s, min(n, 4 * len(s)))
    return x


def grad(dtype, n, seed=1):
    return (np.random.default_rng(seed).standard_normal(n) * 3).astype(dtype)


def run(a, backward, g, x, **kwargs):
    with np.errstate(over="ignore") if a.may_overflow else contextlib.nullcontext():
        return a.backward(g, x, **kwargs) if backward else a.forward(x, **kwargs)


# ---- position, length, alignment ------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("a", "backward"), FUNCS)
def test_result_independent_of_position_and_length(isa, a, backward, dtype):
    w = LANES[isa][dtype is np.float32]  # elements per register
    x, g = mixed(dtype, 5000), grad(dtype, 5000)
    whole = run(a, backward, g, x)
    # each element computed alone (scalar tail path) equals its value in the long array
    for i in range(3 * w + 2):
        assert_same_bits(run(a, backward, g[i:i + 1], x[i:i + 1]), whole[i:i + 1])
    # every short length and a few odd long ones, at every offset within a register
    for n in [*range(2 * w + 2), 1023, 1025, 4097]:
        for off in range(w + 1):
            assert_same_bits(run(a, backward, g[off:off + n], x[off:off + n]), whole[off:off + n])


# ---- kernel sets ----------------------------------------------------------------------

def isa_sweep(dtype):
    """~1e5 inputs: a stride through all bit patterns, normals, a dense band and specials."""
    rng = np.random.default_rng(3)
    if dtype is np.float32:
        bits = np.arange(0, 1 << 32, 65_537, dtype=np.uint64).astype(np.uint32)
        nan_quiet = np.uint32(1 << 22)
    else:
        bits = rng.integers(0, 1 << 64, 40_000, dtype=np.uint64, endpoint=False)
        nan_quiet = np.uint64(1 << 51)
    patterns = bits.view(dtype)
    # signalling NaNs rightly raise 'invalid'; quiet them (their handling is not the point)
    patterns = np.where(np.isnan(patterns), (bits | nan_quiet).view(dtype), patterns)
    return np.concatenate([patterns, (rng.standard_normal(20_000) * 10).astype(dtype),
                           np.linspace(-30, 30, 20_001, dtype=dtype), specials(dtype)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("a", "backward"), FUNCS)
@pytest.mark.parametrize("isa_name", [i for i in TESTABLE_ISAS if i != "scalar"])
def test_every_isa_gives_the_scalar_bits(isa_name, a, backward, dtype):
    x = isa_sweep(dtype)
    g = np.resize(np.concatenate([grad(dtype, 997), specials(dtype)]), x.size)
    with np.errstate(invalid="ignore", over="ignore"):  # e.g. g=inf times a zero derivative
        with forced_isa("scalar"):
            want = run(a, backward, g, x)
        with forced_isa(isa_name):
            got = run(a, backward, g, x)
    bad = got.view(UINT[got.dtype]) != want.view(UINT[want.dtype])
    assert not bad.any(), f"{bad.sum()} differ: x={x[bad][:4]} g={g[bad][:4]} " \
                          f"{isa_name}={got[bad][:4]} scalar={want[bad][:4]}"


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_streams_large_outputs_from_any_alignment(isa, dtype, backward):
    """Beyond 16 MiB of output ReLU stores past the caches, after an unaligned
    head: every element right, nothing written outside the output."""
    n = (16 << 20) // np.dtype(dtype).itemsize + 37
    x, g = mixed(dtype, n + 3, seed=9), grad(dtype, n + 3, seed=10)
    relu = ACTIVATIONS["relu"]
    for offset in (0, 1, 3):
        xs, gs = x[offset:offset + n], g[offset:offset + n]
        want = np.where(xs > 0, gs if backward else xs, np.where(np.isnan(xs), xs, 0)).astype(dtype)
        out = np.full(n + 3, 7, dtype)
        with forced_threads(1):
            run(relu, backward, gs, xs, out=out[offset:offset + n])
        assert_same_bits(out[offset:offset + n], want)
        assert (out[:offset] == 7).all() and (out[offset + n:] == 7).all()


# ---- threads ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize(("a", "backward"), FUNCS)
def test_thread_count_does_not_change_bits(a, backward, dtype):
    # Large enough that seven threads get the fixed per-thread minimum each.
    n = 8 * 1024 + 123
    x2, g2 = mixed(dtype, 2 * n, seed=5), grad(dtype, 2 * n, seed=6)
    for g, x in ((g2[:n], x2[:n]), (g2[::2], x2[::-2])):  # direct kernel path, gather path
        with forced_threads(1):
            want = run(a, backward, g, x)
        for threads in (2, 3, 7):  # 7 > cores: uneven chunks, more workers than CPUs
            out = np.full(n, np.nan, dtype)  # a skipped chunk would show as NaN
            with forced_threads(threads), fixed_split(1024):
                run(a, backward, g, x, out=out)
            assert_same_bits(out, want)
        with forced_threads(2):  # and whatever the cost model picks
            assert_same_bits(run(a, backward, g, x), want)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads via /proc")
def test_only_large_calls_start_workers():
    # The premise of the thread tests: a large call really is split, a small one is not.
    # A fresh process, since the pool persists once started.
    code = ("import os, numpy as np, fastact as fa\n"
            "count = lambda: len(os.listdir('/proc/self/task'))\n"
            "fa.set_num_threads(3); before = count()\n"
            "fa.gelu(np.ones(8000)); assert count() == before  # the cost model: too small\n"
            "minimum = 4096; fa._ext.set_thread_threshold('gelu', minimum, 'float64')\n"
            "fa.gelu(np.ones(2 * minimum - 1)); small = count()\n"
            "fa.gelu(np.ones(4 * minimum)); print(small - before, count() - before)")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(fa.__file__)))
    env.pop("FASTACT_NUM_THREADS", None)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "2"]


def test_concurrent_calls_from_python_threads():
    # The pool serves one caller at a time; the others must run alone, correctly.
    jobs = [(ACTIVATIONS["gelu"].forward, 1), (ACTIVATIONS["silu"].backward, 2),
            (ACTIVATIONS["gelu_tanh"].forward, 1), (ACTIVATIONS["relu"].backward, 2)]
    inputs = [[grad(np.float32, 300_000, seed=10 + i), mixed(np.float32, 300_000, seed=10 + i)][-arity:]
              for i, (f, arity) in enumerate(jobs)]
    with forced_threads(1):
        expected = [f(*args) for (f, _), args in zip(jobs, inputs)]
    barrier, errors = threading.Barrier(len(jobs)), []

    def worker(i):
        f, _ = jobs[i]
        barrier.wait()
        for _ in range(5):
            out = np.full(300_000, np.nan, np.float32)
            f(*inputs[i], out=out)
            if not np.array_equal(out.view(np.uint32), expected[i].view(np.uint32)):
                errors.append(i)

    with forced_threads(2):
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, f"wrong results in jobs {sorted(set(errors))}"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_pool_works_in_forked_child():
    x = mixed(np.float32, 300_000, seed=20)
    with forced_threads(1):
        want = fa.gelu(x)
    with forced_threads(2):
        fa.gelu(x)  # start the pool's worker before forking
        with warnings.catch_warnings():
            # Python >= 3.12 warns that fork() in a threaded process may deadlock:
            # that is exactly what this test checks fastact avoids.
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            # JAX, when an earlier test imported it, warns the same from its at-fork hook
            warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)
            pid = os.fork()
        if pid == 0:  # child: only the forking thread survives; the pool must be rebuilt
            ok = False
            try:
                ok = all(np.array_equal(fa.gelu(x).view(np.uint32), want.view(np.uint32))
                         for _ in range(3))
            finally:
                os._exit(0 if ok else 1)
    code = child_exit_code(pid, "forked child hung in fa.gelu (thread pool not reset after fork?)")
    assert code == 0, "forked child computed a wrong gelu"


@pytest.mark.parametrize("threads", [1, 2])
def test_floating_point_flags_reach_the_caller_from_any_thread(threads):
    # NumPy reads the calling thread's flags only: workers must hand theirs back.
    n = 4 * 4096
    x, g = np.zeros(n, np.float32), np.ones(n, np.float32)
    x[-1], g[-1] = -np.inf, np.inf  # inf * 0: invalid, in the last (a worker's) chunk
    with forced_threads(threads), fixed_split(4096), np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError, match="silu_backward"):
            fa.silu_backward(g, x)
