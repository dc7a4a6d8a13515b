"""fastact's bfloat16 loops, added when ml_dtypes is imported.

A bfloat16 array needs ml_dtypes' dtype, so ml_dtypes is always imported
before fastact sees one: by the caller, by JAX, or by fastact itself for a
torch bfloat16 tensor. Importing it costs more than the rest of fastact
(0.8 s on a 2-vCPU Zen 4 with NumPy 2.4, for its own ufunc loops), so
fastact does not import it: if it is already imported, the loops are added
at once; otherwise a finder on sys.meta_path adds them right after ml_dtypes
has run, before its import returns to whoever asked.
"""
import importlib.abc
import sys
import threading

from . import _ext

_lock = threading.Lock()


def _add_loops():
    import ml_dtypes
    import numpy
    with _lock:
        _ext.add_bfloat16_loops(numpy.dtype(ml_dtypes.bfloat16))


class _AfterMlDtypes(importlib.abc.MetaPathFinder):
    """Finds nothing itself: gives ml_dtypes' spec as the other finders do,
    its loader wrapped so that _add_loops runs after the module has."""

    def find_spec(self, name, path=None, target=None):
        if name != "ml_dtypes":
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _ThenAddLoops(spec.loader)
        return spec


class _ThenAddLoops(importlib.abc.Loader):
    """ml_dtypes' loader, then _add_loops; the module keeps its own loader."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _remove_finder()
        _add_loops()

    def __getattr__(self, name):
        return getattr(self._loader, name)


_finder = _AfterMlDtypes()


def _remove_finder():
    try:
        sys.meta_path.remove(_finder)
    except ValueError:
        pass


def install():
    """Adds the loops now if ml_dtypes is imported, else when it is. The
    finder goes in first, so an import that starts meanwhile is not missed."""
    sys.meta_path.insert(0, _finder)
    if "ml_dtypes" in sys.modules:
        _remove_finder()
        _add_loops()
