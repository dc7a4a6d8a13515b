"""The errors the public functions raise: each names the function."""
import numpy as np


def bad_choice(function, keyword, value, choices):
    allowed = " or ".join(repr(c) for c in choices)
    return ValueError(f"fastact.{function}: {keyword} must be {allowed}, not {value!r}")


_CHECKS = {  # as in _manifest.PARAM_CHECKS
    "finite": ("a finite number", lambda v: v == v and abs(v) != float("inf")),
    "positive": ("a finite number > 0", lambda v: 0 < v < float("inf")),
    "positive_or_inf": ("a number > 0", lambda v: v > 0),
}


def check_param(function, name, value, check):
    """value as a float, if it is a real number that passes `check`."""
    what, ok = _CHECKS[check]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"fastact.{function}: {name} must be {what}, not {value!r}")
    number = float(value)
    if not ok(number):
        raise ValueError(f"fastact.{function}: {name} must be {what}, not {value!r}")
    return number


def bad_order(function, low_name, low, high_name, high):
    return ValueError(f"fastact.{function}: {low_name} must be <= {high_name}, "
                      f"not {low_name}={low!r} > {high_name}={high!r}")


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
