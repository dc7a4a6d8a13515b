"""The NumPy ufunc objects behind fastact's functions, one per operation and
direction (the manifest's names: ``gelu_tanh`` is the tanh form of GELU that
``fastact.gelu(x, approximate="tanh")`` calls).

A function with parameters has two: ``fastact.ufuncs.elu(x)`` has the
defaults (``alpha=1.0``, as ``fastact.elu(x)``), and
``fastact.ufuncs.elu_with_params(x, alpha)`` takes them as float64 inputs,
broadcast like the arrays (unchecked).

Use these directly for the full ufunc protocol (``out=``, ``where=``,
``dtype=``, ``.at``, ``.accumulate``, ``__array_ufunc__`` dispatch by Dask,
xarray, ...).
"""
from ._ext import UFUNCS as _UFUNCS

globals().update(_UFUNCS)
__all__ = list(_UFUNCS)
