"""fastact: fast, accurate neural-network activations over NumPy arrays.

Every function is a NumPy ufunc underneath (see :mod:`fastact.ufuncs`):
any shape and strides, broadcasting, ``out=`` (in place too), float16/32/64.
Kernels are picked at import from what the CPU reports (AVX-512, AVX2+FMA
or scalar); ``FASTACT_ISA`` and :func:`set_isa` cap the choice.
"""
import os as _os
import re as _re
import warnings as _warnings
from importlib.metadata import PackageNotFoundError as _NotFound, version as _version

import numpy as _np

from . import _ext, ufuncs

try:
    __version__ = _version("fastact")
except _NotFound:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["gelu", "gelu_backward", "silu", "silu_backward", "relu", "relu_backward", "isa",
           "available_isas", "set_isa", "get_num_threads", "set_num_threads", "ufuncs",
           "__version__"]



def _bad_approximate(name, approximate):
    return ValueError(f"fastact.{name}: approximate must be 'none' or 'tanh', not {approximate!r}")


def _describe(arg):
    """The input's dtype, without converting containers (that may be what failed)."""
    dtype = getattr(arg, "dtype", None)
    if dtype is None and isinstance(arg, (int, float, complex, str, bytes)):
        dtype = _np.asarray(arg).dtype
    return str(dtype) if dtype is not None else type(arg).__name__


def _named(name, exc, args):
    """NumPy's TypeError/ValueError, prefixed with our function's name and the input dtypes."""
    kind = TypeError if isinstance(exc, TypeError) else ValueError
    inputs = ", ".join(_describe(a) for a in args)
    return kind(f"fastact.{name}: {exc} (inputs: {inputs})")


# The public functions: compiled bodies (_ext.make_*) over the ufuncs. On a
# 100-element array a call costs about as much as the kernel, so every
# Python-level step counts: flat bodies, no empty **kwargs expansion, out=
# passed only when given.
gelu = _ext.make_gelu(
    "gelu", _ext.make_unary("gelu", ufuncs.gelu, "", _named),
    _ext.make_unary("gelu", ufuncs.gelu_tanh, "", _named),
    "GELU: x·Φ(x), or with ``approximate=\"tanh\"`` 0.5x(1+tanh(√(2/π)(x+0.044715x³))).\n\n"
    "Extra keywords (``where=``, ``dtype=``, ``casting=``) go to the ufunc.", _bad_approximate)
gelu_backward = _ext.make_gelu_backward(
    "gelu_backward", _ext.make_binary("gelu_backward", ufuncs.gelu_backward, "", _named),
    _ext.make_binary("gelu_backward", ufuncs.gelu_tanh_backward, "", _named),
    "grad_output · gelu'(x) (the exact or the tanh form's derivative).", _bad_approximate)
silu = _ext.make_unary("silu", ufuncs.silu, "SiLU / Swish: x·σ(x).", _named)
silu_backward = _ext.make_binary("silu_backward", ufuncs.silu_backward,
                                 "grad_output · σ(x)(1 + x(1 - σ(x))).", _named)
relu = _ext.make_unary("relu", ufuncs.relu, "max(x, 0); NaN stays NaN and relu(-0.0) is +0.0.", _named)
relu_backward = _ext.make_binary("relu_backward", ufuncs.relu_backward,
                                 "grad_output where x > 0, 0 where x <= 0, NaN where x is NaN.", _named)


# ---- kernel sets -----------------------------------------------------------

_ISA_NAMES = _ext.isa_names()          # every set this build knows, lowest first
_REAL_ISAS = ("scalar", "avx2", "avx512")


def available_isas():
    """The kernel sets this CPU can run, best first (e.g. ['avx512', 'avx2', 'scalar'])."""
    return [n for n in reversed(_REAL_ISAS) if _ext.isa_supported(_ISA_NAMES.index(n))]


def isa():
    """The kernel set in use: 'avx512', 'avx2' or 'scalar' ('avx512-emulated' in tests)."""
    return _ISA_NAMES[_ext.isa_current()]


def set_isa(name):
    """Switch to kernel set ``name`` (one of available_isas()); returns the previous one.

    "avx512-emulated" runs the AVX-512 source through SIMDe on AVX2 hardware;
    it is slow and exists so that tests can check that source on any CPU.
    """
    if name not in _ISA_NAMES or not _ext.isa_supported(_ISA_NAMES.index(name)):
        raise ValueError(f"fastact.set_isa: {name!r} is not available on this CPU; "
                         f"choose one of {available_isas()}")
    previous = isa()
    _ext.isa_set(_ISA_NAMES.index(name))
    return previous


_MAX_THREADS = 256  # FA_MAX_THREADS in src_c/threads.c


def get_num_threads():
    """Threads a large call may use (default: the CPUs this process may run on)."""
    return _ext.num_threads()


def set_num_threads(n):
    """Use at most ``n`` threads (n >= 1) for large arrays; returns the previous value."""
    if isinstance(n, bool) or not isinstance(n, (int, _np.integer)) or not 1 <= n <= _MAX_THREADS:
        raise ValueError(f"fastact.set_num_threads: n must be an integer from 1 to {_MAX_THREADS}, "
                         f"not {n!r}")
    previous = get_num_threads()
    _ext.set_num_threads(int(n))
    return previous


def _check_environment():
    cap = _os.environ.get("FASTACT_ISA")
    if cap and cap not in _REAL_ISAS:
        _warnings.warn(f"fastact: FASTACT_ISA={cap!r} is not one of {list(_REAL_ISAS)}; ignored",
                       RuntimeWarning, stacklevel=3)
    threads = _os.environ.get("FASTACT_NUM_THREADS")
    # the C side reads it with the same rule: ASCII digits only, at least 1
    if threads and not (_re.fullmatch(r"[0-9]+", threads) and int(threads) >= 1):
        _warnings.warn(f"fastact: FASTACT_NUM_THREADS={threads!r} is not an integer >= 1; ignored",
                       RuntimeWarning, stacklevel=3)


_check_environment()
