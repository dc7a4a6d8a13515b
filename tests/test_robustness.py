"""Regression tests for what an adversarial review broke: shifted out=
overlaps split across threads, calls from threads with the smallest stack,
argument errors that named no function, and directed rounding modes. (The
whole class of layouts, overlaps and ufunc methods: test_fuzz.py.)"""
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import fastact as fa
from conftest import forced_threads
from fastact._registry import VARIANTS

SMOOTH = [a for a in VARIANTS.values() if not a.exact]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shift", [1, 100_000])
@pytest.mark.parametrize("a", VARIANTS.values(), ids=VARIANTS.keys())
def test_out_behind_the_input_matches_a_copy(a, shift, dtype, threads):
    # out = buf[:-k], x = buf[k:]: NumPy hands this to the loop uncopied
    n = 1 << 20
    buf = np.random.default_rng(shift).normal(0, 3, n).astype(dtype)
    expected = a.forward(buf[shift:].copy())
    with forced_threads(threads):
        a.forward(buf[shift:], out=buf[:-shift])
    np.testing.assert_array_equal(buf[:-shift], expected)


@pytest.mark.parametrize("threads", [1, 2])
def test_backward_out_behind_grad_matches_a_copy(threads):
    n, shift = 1 << 20, 3
    buf = np.random.default_rng(0).normal(0, 3, n)
    x = np.random.default_rng(1).normal(0, 3, n - shift)
    expected = fa.silu_backward(buf[shift:].copy(), x)
    with forced_threads(threads):
        fa.silu_backward(buf[shift:], x, out=buf[:-shift])
    np.testing.assert_array_equal(buf[:-shift], expected)


@pytest.mark.parametrize("threads", [1, 2])
def test_accumulate_and_reduce_run_in_order(threads):
    x = np.array([1.0, 2.0, 3.0, -1.0, 5.0])
    relu_backward = fa.ufuncs.relu_backward
    with forced_threads(threads):
        np.testing.assert_array_equal(relu_backward.accumulate(x), [1, 1, 1, 0, 0])
        assert relu_backward.reduce(x) == 0.0
        assert relu_backward.reduce(np.array([2.0, 1.0, 1.0])) == 2.0
        big = np.random.default_rng(2).normal(0, 1, 1 << 18)
        acc = big[0]
        for v in big[1:2000]:
            acc = fa.ufuncs.silu_backward(acc, v)
        assert fa.ufuncs.silu_backward.reduce(big[:2000]) == acc


def test_strided_call_from_a_thread_with_the_smallest_stack():
    results = []

    def work():
        x = np.linspace(-4, 4, 20_000)
        results.append([fa.gelu(x[::3]), fa.silu_backward(x[::2], x[1::2]), fa.relu(x.astype(np.float16)[::2])])

    for size in (32768, 65536, 131072, 262144):  # the smallest this platform allows (aarch64: 128 KiB)
        try:
            previous = threading.stack_size(size)
            break
        except ValueError:
            continue
    try:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(previous)
    assert len(results) == 1
    x = np.linspace(-4, 4, 20_000)
    np.testing.assert_array_equal(results[0][0], fa.gelu(x[::3].copy()))


@pytest.mark.parametrize("call, words", [
    (lambda x: fa.silu(x, x), "silu()"),
    (lambda x: fa.relu(), "relu()"),
    (lambda x: fa.gelu_backward(x), "gelu_backward()"),
    (lambda x: fa.gelu(x, "tanh", approximate="tanh"), "gelu()"),
    (lambda x: fa.silu_backward(x, x, x), "silu_backward()"),
    (lambda x: fa.relu(x, where=True, bogus=1), "fastact.relu"),
])
def test_argument_errors_name_the_function(call, words):
    with pytest.raises(TypeError, match=words.replace("(", r"\(").replace(")", r"\)")):
        call(np.ones(3))


ROUNDING_SCRIPT = textwrap.dedent("""
    import ctypes, ctypes.util, sys
    import numpy as np
    import fastact as fa
    from fastact._registry import VARIANTS
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    import platform  # fenv.h's values: x86's MXCSR-style bits, or AArch64's FPCR.RMode bits
    arm = platform.machine() in ("aarch64", "arm64")
    mode = ({"upward": 0x400000, "downward": 0x800000, "towardzero": 0xc00000} if arm else
            {"upward": 0x800, "downward": 0x400, "towardzero": 0xc00})[sys.argv[1]]
    rng = np.random.default_rng(5)
    fa.set_num_threads(2)
    worst = []
    for dtype in (np.float32, np.float64):
        x = np.concatenate([rng.normal(0, 6, 50_000), [-0.0, 1e-300, -700, 700]]).astype(dtype)
        g = rng.normal(0, 1, x.size).astype(dtype)
        x16 = x.astype(np.float16)  # here: NumPy converts in the FPU's mode on AArch64
        for isa in fa.available_isas() + ["avx512-emulated"][:fa._ext.isa_supported(3)]:
            fa.set_isa(isa)
            for a in VARIANTS.values():
                nearest = [a.forward(x), a.backward(g, x), a.forward(x16)]
                assert libm.fesetround(mode) == 0
                directed = [a.forward(x), a.backward(g, x), a.forward(x16)]
                assert libm.fegetround() == mode, "the caller's rounding mode was changed"
                libm.fesetround(0)
                for want, got in zip(nearest, directed):
                    if not np.array_equal(want, got, equal_nan=True):
                        worst.append(f"{a.key} {np.dtype(dtype)} [{isa}]")
    print("differ:", worst)
    sys.exit(1 if worst else 0)
""")


@pytest.mark.parametrize("mode", ["upward", "downward", "towardzero"])
def test_results_do_not_depend_on_the_rounding_mode(mode):
    # a fresh process: a directed mode must not leak into the rest of the suite
    done = subprocess.run([sys.executable, "-c", ROUNDING_SCRIPT, mode], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("dtype, quiet_bit", [(np.float32, 1 << 22), (np.float64, 1 << 51)])
def test_backward_of_a_signalling_nan_is_that_nan_quieted(isa, dtype, quiet_bit):
    # vector and tail lanes, with a finite and with a NaN grad_output
    uint = np.uint32 if dtype is np.float32 else np.uint64
    exponent = np.array(np.inf, dtype).view(uint)
    sign = np.array(-0.0, dtype).view(uint)
    signalling = exponent | np.array([1, 5, 12345, quiet_bit - 1], uint)
    x = np.tile(np.concatenate([signalling, signalling | sign]), 5)[:37].view(dtype)
    for g in (np.linspace(-3, 3, x.size).astype(dtype), np.full(x.size, np.nan, dtype)):
        for a in SMOOTH:
            with np.errstate(invalid="ignore"):
                got = a.backward(g, x)
            np.testing.assert_array_equal(got.view(uint), x.view(uint) | uint(quiet_bit), err_msg=a.key)
