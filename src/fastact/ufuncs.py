"""The NumPy ufunc objects behind fastact's functions.

Use these directly for the full ufunc protocol (``out=``, ``where=``,
``dtype=``, ``.at``, ``__array_ufunc__`` dispatch by Dask, xarray, ...).
``gelu`` is the exact GELU and ``gelu_tanh`` the tanh approximation;
``fastact.gelu(x, approximate=...)`` picks between them.
"""
from ._ext import (gelu, gelu_backward, gelu_tanh, gelu_tanh_backward, relu, relu_backward, silu,
                   silu_backward)

__all__ = ["gelu", "gelu_backward", "gelu_tanh", "gelu_tanh_backward", "relu", "relu_backward",
           "silu", "silu_backward"]
