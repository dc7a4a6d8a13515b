"""fastact does not import ml_dtypes, and its bfloat16 loops are there
however ml_dtypes comes to be imported: before fastact, after it, through
JAX, or by fastact itself for a torch bfloat16 tensor. Each case runs in a
fresh interpreter, since this one has imported ml_dtypes long ago."""
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("ml_dtypes")

# bfloat16 in gives bfloat16 out from a ufunc, a backward, a row gufunc and
# the ufunc object itself; the values are gelu's, not a float32 loop's
CHECK_LOOPS = """
import numpy as np, ml_dtypes
x = np.array([-1.0, 0.0, 1.0, 2.0 ** -133], ml_dtypes.bfloat16)
for y in (fa.gelu(x), fa.gelu_backward(x, x), fa.softmax(x), fa.ufuncs.gelu(x), fa.swiglu(x, x)):
    assert y.dtype == ml_dtypes.bfloat16, y.dtype
assert fa.gelu(x)[3] == x[3], fa.gelu(x)  # gelu(tiny) = tiny/2 rounds up to tiny only if rounded once
assert fa.gelu(x).view(np.uint16).tolist() == [0xBE22, 0, 0x3F57, 0x0001], fa.gelu(x).view(np.uint16)
"""


def run(*parts):
    code = "\n".join(textwrap.dedent(part) for part in parts)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_import_leaves_ml_dtypes_alone_and_adds_its_loops_after():
    run("""
        import sys
        import fastact as fa
        assert "ml_dtypes" not in sys.modules
        assert fa._ext.BFLOAT16 is None
        """, CHECK_LOOPS, """
        from fastact import _bfloat16
        assert _bfloat16._finder not in sys.meta_path  # done with once ml_dtypes is in
        assert type(sys.modules["ml_dtypes"].__loader__).__module__ != "fastact._bfloat16"
        assert type(sys.modules["ml_dtypes"].__spec__.loader).__module__ != "fastact._bfloat16"
        """)


def test_ml_dtypes_imported_first():
    run("""
        import sys, ml_dtypes
        import fastact as fa
        from fastact import _bfloat16
        assert _bfloat16._finder not in sys.meta_path
        """, CHECK_LOOPS)


def test_a_spec_looked_up_but_not_imported_changes_nothing():
    """importlib.util.find_spec passes through the finder without importing."""
    run("""
        import importlib.util, sys
        import fastact as fa
        assert importlib.util.find_spec("ml_dtypes") is not None
        assert "ml_dtypes" not in sys.modules and fa._ext.BFLOAT16 is None
        """, CHECK_LOOPS)


def test_through_jax():
    pytest.importorskip("jax")
    run("""
        import fastact as fa
        import jax.numpy as jnp, numpy as np
        y = fa.silu(np.asarray(jnp.ones(3, jnp.bfloat16)))
        assert y.dtype.name == "bfloat16", y.dtype
        """)


def test_torch_bfloat16_tensor_without_ml_dtypes_imported():
    pytest.importorskip("torch")
    run("""
        import sys
        import fastact as fa, torch
        assert "ml_dtypes" not in sys.modules
        t = torch.tensor([-1.0, 0.0, 1.0], dtype=torch.bfloat16)
        y = fa.gelu(t)
        assert y.dtype == torch.bfloat16 and "ml_dtypes" in sys.modules
        assert torch.equal(y.view(torch.int16), torch.tensor([-16862, 0, 16215], dtype=torch.int16)), y
        """)


def test_a_finder_ahead_that_answers_for_ml_dtypes():
    """Another import hook that finds ml_dtypes itself bypasses fastact's
    finder; the public functions still add the loops before computing."""
    run("""
        import importlib.machinery, sys
        import fastact as fa

        class Instrumenting:
            def find_spec(self, name, path=None, target=None):
                if name == "ml_dtypes":
                    return importlib.machinery.PathFinder.find_spec(name, path, target)
        sys.meta_path.insert(0, Instrumenting())
        import ml_dtypes
        assert fa._ext.BFLOAT16 is None  # the finder never saw it
        """, CHECK_LOOPS)


def test_ml_dtypes_blocked_or_a_stub():
    """None in sys.modules (how tests block an optional package) or a stub
    without bfloat16: fastact imports and computes, without bfloat16."""
    run("""
        import sys, types
        import numpy as np
        sys.modules["ml_dtypes"] = None
        import fastact as fa
        assert fa.gelu(np.ones(3, np.float16)).dtype == np.float16 and fa._ext.BFLOAT16 is None
        sys.modules["ml_dtypes"] = types.ModuleType("ml_dtypes")
        assert fa.gelu(np.ones(3, np.float32)).dtype == np.float32 and fa._ext.BFLOAT16 is None
        del sys.modules["ml_dtypes"]
        """, CHECK_LOOPS)


def test_reloading_fastact_adds_no_second_finder():
    run("""
        import importlib, sys
        import fastact as fa
        from fastact import _bfloat16
        importlib.reload(fa)
        importlib.reload(fa)
        assert sys.meta_path.count(_bfloat16._finder) == 1
        """, CHECK_LOOPS, """
        assert _bfloat16._finder not in sys.meta_path
        """)


def test_a_dtype_by_name_while_ml_dtypes_is_still_importing():
    """NumPy knows "bfloat16" from the moment ml_dtypes registers it, before
    its import (and the finder's loops) have finished in that thread; a call
    from another thread then waits for that import rather than computing
    in float32."""
    run("""
        import sys, threading, time
        import numpy as np
        import fastact as fa
        threading.Thread(target=lambda: __import__("ml_dtypes")).start()
        while True:
            try:
                dtype = np.dtype("bfloat16")
                break
            except TypeError:
                time.sleep(0.0005)
        y = fa.gelu(np.ones(2, dtype))
        assert y.dtype == dtype, y.dtype
        """)


def test_fastact_torch_imports_ml_dtypes_at_its_first_bfloat16_tensor():
    pytest.importorskip("torch")
    run("""
        import sys
        import torch
        import fastact.torch as fat
        assert "ml_dtypes" not in sys.modules
        x = torch.tensor([-1.0, 0.0, 1.0], dtype=torch.bfloat16, requires_grad=True)
        y = fat.gelu(x)
        y.sum().backward()
        assert y.dtype == x.grad.dtype == torch.bfloat16 and "ml_dtypes" in sys.modules
        assert torch.equal(y.detach().view(torch.int16), torch.tensor([-16862, 0, 16215], dtype=torch.int16)), y
        """)
