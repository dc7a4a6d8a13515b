"""The NumPy ufunc objects behind fastact's functions, one per operation and
direction (the manifest's names: ``gelu_tanh`` is the tanh form of GELU that
``fastact.gelu(x, approximate="tanh")`` calls).

Use these directly for the full ufunc protocol (``out=``, ``where=``,
``dtype=``, ``.at``, ``.accumulate``, ``__array_ufunc__`` dispatch by Dask,
xarray, ...).
"""
from ._ext import UFUNCS as _UFUNCS

globals().update(_UFUNCS)
__all__ = list(_UFUNCS)
