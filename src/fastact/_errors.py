"""The errors the public functions raise: each names the function."""
import numpy as np


def bad_choice(function, keyword, value, choices):
    allowed = " or ".join(repr(c) for c in choices)
    return ValueError(f"fastact.{function}: {keyword} must be {allowed}, not {value!r}")


def _describe(arg):
    """The input's dtype, without converting containers (that may be what failed)."""
    dtype = getattr(arg, "dtype", None)
    if dtype is None and isinstance(arg, (int, float, complex, str, bytes)):
        dtype = np.asarray(arg).dtype
    return str(dtype) if dtype is not None else type(arg).__name__


def named(function, exc, args):
    """NumPy's TypeError/ValueError, prefixed with our function's name and the input dtypes."""
    kind = TypeError if isinstance(exc, TypeError) else ValueError
    inputs = ", ".join(_describe(a) for a in args)
    return kind(f"fastact.{function}: {exc} (inputs: {inputs})")
