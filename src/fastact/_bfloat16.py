"""fastact's bfloat16 loops, added when ml_dtypes is imported.

A bfloat16 array needs ml_dtypes' dtype, so ml_dtypes is imported before
fastact sees one: by the caller, by JAX, or by fastact itself for a torch
bfloat16 tensor. Importing it costs more than the rest of fastact (0.8 s on
a 2-vCPU Zen 4 with NumPy 2.4, for its own ufunc loops), so fastact does not
import it. If it is already imported, the loops are added at once; otherwise
a finder on sys.meta_path adds them right after ml_dtypes has run, before its
import returns to whoever asked. An import the finder does not see (another
finder ahead of it that answers for ml_dtypes, or one already under way in
another thread when fastact was imported) is caught by the public
functions, which look for ml_dtypes in sys.modules until the loops are in
and wait for one still running (_ext._bfloat16_if_imported). fastact.ufuncs'
objects rely on the finder alone.
"""
import importlib.abc
import sys
import threading
import warnings

import numpy

from . import _ext

_lock = threading.Lock()


def add_loops(bfloat16):
    """Registers every ufunc's loop for ml_dtypes' bfloat16 (its scalar
    type); once, whoever calls first."""
    with _lock:
        _ext.add_bfloat16_loops(numpy.dtype(bfloat16))


class _AfterMlDtypes(importlib.abc.MetaPathFinder):
    """Finds nothing itself: gives ml_dtypes' spec as the other finders do,
    its loader wrapped so that the loops are added after the module has run
    (so importlib.util.find_spec("ml_dtypes").loader is the wrapper)."""

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
    """ml_dtypes' loader, then the loops; the module keeps its own loader."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        _remove_finder()
        try:
            add_loops(module.bfloat16)
        except Exception as exc:  # ml_dtypes' import (and JAX's) must not fail for fastact
            warnings.warn(f"fastact: no bfloat16 loops ({exc!r}); fastact's functions try again when called",
                          RuntimeWarning, stacklevel=2)

    def __getattr__(self, name):
        return getattr(self._loader, name)


_finder = _AfterMlDtypes()


def _remove_finder():
    try:
        sys.meta_path.remove(_finder)
    except ValueError:
        pass


def add_loops_if_imported():
    """The loops, if ml_dtypes is in sys.modules (an import of it still
    running in another thread is waited for); nothing where it is blocked
    there (None) or a stub."""
    if "ml_dtypes" not in sys.modules:
        return
    try:
        import ml_dtypes
        bfloat16 = ml_dtypes.bfloat16
    except (ImportError, AttributeError):
        return
    _remove_finder()
    add_loops(bfloat16)


def install():
    """The loops now if ml_dtypes is imported, else the finder that adds
    them when it is. The finder goes in first, so that an import starting
    meanwhile goes through it."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    add_loops_if_imported()
