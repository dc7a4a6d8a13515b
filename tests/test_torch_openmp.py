"""fastact.torch's calls on tensor memory split over PyTorch's own OpenMP
threads (src_c/runtime/openmp_team.c): the same bits as one thread, the
workers' flags handed back, and a forked child left to fastact's pool."""
import os
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import fastact as fa  # noqa: E402
import fastact.torch as fat  # noqa: E402
from conftest import child_exit_code, forced_threads  # noqa: E402
from fastact import _ext  # noqa: E402

needs_runtime = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and torch.backends.openmp.is_available()),
    reason="PyTorch's OpenMP runtime is found through /proc/self/maps")


def team_threads(n):
    """torch's and fastact's thread counts set to n for the block, restored after"""
    class Scope:
        def __enter__(self):
            self.before = torch.get_num_threads()
            self.forced = forced_threads(n)
            self.forced.__enter__()
            torch.set_num_threads(n)

        def __exit__(self, *exc):
            torch.set_num_threads(self.before)
            self.forced.__exit__(*exc)
    return Scope()


def mixed_tensor(n, seed):
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32) * 4
    x[::97] = -30.0  # the careful lanes too
    return torch.from_numpy(x)


@needs_runtime
def test_fastact_torch_finds_the_runtime_torch_loaded():
    parallel, max_threads = fat._openmp_entry_points()
    assert parallel and max_threads


@needs_runtime
@pytest.mark.parametrize("name, call", [
    ("gelu", lambda x: fat.gelu(x)),
    ("gelu accurate", lambda x: fat.gelu(x, precision="accurate")),
    ("silu", lambda x: fat.silu(x)),
    ("softmax", lambda x: fat.softmax(x.reshape(256, -1), dim=-1).reshape(-1)),
])
def test_calls_split_over_torchs_threads_give_one_threads_bits(name, call):
    x = mixed_tensor(1 << 20, seed=3)
    with torch.inference_mode():
        with team_threads(1):
            want = call(x).numpy().copy()
        with team_threads(2):
            call(x)  # the first call learns the kernel's cost
            before = _ext.openmp_team_calls()
            got = call(x).numpy()
            assert _ext.openmp_team_calls() > before, f"{name} did not split over torch's threads"
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), name


@needs_runtime
def test_flags_raised_on_torchs_threads_reach_the_caller():
    x = mixed_tensor(1 << 20, seed=4)
    x.numpy().view(np.uint32)[-1] = 0x7FA00000  # a signalling NaN in the last block: invalid
    with torch.inference_mode(), team_threads(2):
        with np.errstate(invalid="ignore"):
            fat.silu(x)
        before = _ext.openmp_team_calls()
        with np.errstate(invalid="raise"), pytest.raises(FloatingPointError, match="silu"):
            fat.silu(x)
        assert _ext.openmp_team_calls() > before


@needs_runtime
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_forked_child_leaves_torchs_threads_alone():
    # a child's copy of the OpenMP runtime may wait for threads that were not copied
    x = mixed_tensor(1 << 20, seed=5)
    with torch.inference_mode():
        with team_threads(1):
            want = fat.gelu(x).numpy().copy()
        with team_threads(2):
            fat.gelu(x)
            fat.gelu(x)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=DeprecationWarning)
                warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)
                pid = os.fork()
            if pid == 0:
                ok = False
                try:
                    before = _ext.openmp_team_calls()
                    ok = all(np.array_equal(fat.gelu(x).numpy().view(np.uint32), want.view(np.uint32))
                             for _ in range(3)) and _ext.openmp_team_calls() == before
                finally:
                    os._exit(0 if ok else 1)
    code = child_exit_code(pid, "forked child hung in fastact.torch.gelu")
    assert code == 0, "forked child split over threads or computed other bits"


@needs_runtime
def test_autograds_kernels_split_over_torchs_threads_too():
    x = mixed_tensor(1 << 20, seed=6)

    def grads():
        leaf = x.clone().requires_grad_(True)
        fat.silu(leaf).sum().backward()
        return leaf.grad.numpy().copy()

    with team_threads(1):
        want = grads()
    with team_threads(2):
        grads()
        before = _ext.openmp_team_calls()
        got = grads()
        assert _ext.openmp_team_calls() >= before + 2, "forward and backward did not both split"
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_the_runtime_is_torchs_own_where_two_are_mapped():
    pick = fat._openmp_runtime_path
    torch_dir = "/env/site-packages/torch"
    own, other = f"{torch_dir}/lib/libgomp.so.1", "/env/site-packages/scikit_learn.libs/libgomp-a34b3233.so.1.0.0"
    assert pick(["/usr/lib/libc.so.6", own, own, "[heap]"], torch_dir) == own  # mapped several times: one
    assert pick([other, own], torch_dir) == own
    assert pick(["/usr/lib/libgomp.so.1"], torch_dir) == "/usr/lib/libgomp.so.1"  # conda's, outside torch
    assert pick([other, "/usr/lib/libomp.so.5"], torch_dir) is None  # no telling which one torch calls
    assert pick(["/usr/lib/libc.so.6"], torch_dir) is None
    assert pick([f"{torch_dir}-extras/libgomp.so.1", other], torch_dir) is None  # a prefix is not the folder
