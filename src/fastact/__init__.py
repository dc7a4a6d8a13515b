"""fastact: fast, accurate neural-network activations over NumPy arrays.

Every function is a NumPy ufunc underneath (see :mod:`fastact.ufuncs`):
any shape and strides, broadcasting, ``out=`` (in place too), float16/32/64.
Kernels are picked at import from what the CPU reports (AVX-512, AVX2+FMA,
NEON on AArch64, or scalar); ``FASTACT_ISA`` and :func:`set_isa` cap the choice.
"""
import os as _os
import re as _re
import warnings as _warnings
from importlib.metadata import PackageNotFoundError as _NotFound, version as _version

import numpy as _np

from . import _bfloat16, _ext, ufuncs

_bfloat16.install()

try:
    __version__ = _version("fastact")
except _NotFound:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = list(_ext.PUBLIC) + ["isa", "available_isas", "set_isa", "get_num_threads",
                              "set_num_threads", "ufuncs", "__version__"]



# The public functions, compiled from the manifest (_manifest.py, _ops.pxi).
for _name in _ext.PUBLIC:
    globals()[_name] = getattr(_ext, _name)
    globals()[_name].__module__ = "fastact"
del _name


# ---- kernel sets -----------------------------------------------------------

_ISA_NAMES = _ext.isa_names()          # every set this build knows, in the C enum's numbering (not a ranking)
_REAL_ISAS = ("scalar", "sse2", "avx2", "avx512", "neon")  # lowest first
# the sets of this machine's architecture (dispatch.c's real_isas): a FASTACT_ISA
# naming another architecture's set caps nothing
_ARCH_ISAS = ("scalar", "neon") if _ext.isa_supported(_ISA_NAMES.index("neon")) else ("scalar", "sse2", "avx2", "avx512")


def available_isas():
    """The kernel sets this CPU can run, best first (e.g. ['avx512', 'avx2', 'sse2', 'scalar'])."""
    return [n for n in reversed(_REAL_ISAS) if _ext.isa_supported(_ISA_NAMES.index(n))]


def isa():
    """The kernel set in use: 'avx512', 'avx2', 'sse2', 'neon' or 'scalar' ('avx512-emulated' in tests)."""
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


_MAX_THREADS = 256  # FA_MAX_THREADS in src_c/runtime/threads.c


def get_num_threads():
    """Threads a large call may use: FASTACT_NUM_THREADS, else OMP_NUM_THREADS
    (capped at the CPUs), else the CPUs this process may run on; or what
    set_num_threads or threadpoolctl's threadpool_limits set. A call uses
    fewer when its work would not pay for waking them (a measured cost model)."""
    return _ext.num_threads()


def _num_threads_source():
    """Where get_num_threads() came from, in words (for ``python -m fastact``)."""
    return _ext.num_threads_source()


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
    if cap and cap not in _ARCH_ISAS:
        _warnings.warn(f"fastact: FASTACT_ISA={cap!r} is not one of {list(_ARCH_ISAS)}; ignored",
                       RuntimeWarning, stacklevel=3)
    threads = _os.environ.get("FASTACT_NUM_THREADS")
    # the C side reads it with the same rule: ASCII digits only, at least 1
    if threads and not (_re.fullmatch(r"[0-9]+", threads) and int(threads) >= 1):
        _warnings.warn(f"fastact: FASTACT_NUM_THREADS={threads!r} is not an integer >= 1; ignored",
                       RuntimeWarning, stacklevel=3)


_check_environment()

# threadpoolctl, when installed: threadpool_limits(1) limits fastact too
from . import _threadpoolctl  # noqa: E402
_threadpoolctl.register()
