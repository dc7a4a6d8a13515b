# The compiled core: NumPy ufunc objects over the C inner loops, and the
# dispatch / thread controls. The public API is in __init__.py.
cimport numpy as cnp
from numpy cimport PyUFuncGenericFunction
from libc.stdint cimport intptr_t

from fastact._capi cimport *

cnp.import_array()
cnp.import_ufunc()

# Loops in NumPy's type-resolution order: float16, float32, float64, which
# also gives integer and bool inputs the promotion np.exp gives them.
cdef PyUFuncGenericFunction fwd_loops[3]
cdef PyUFuncGenericFunction bwd_loops[3]
fwd_loops[0] = <PyUFuncGenericFunction>fa_loop_fwd_f16
fwd_loops[1] = <PyUFuncGenericFunction>fa_loop_fwd_f32
fwd_loops[2] = <PyUFuncGenericFunction>fa_loop_fwd_f64
bwd_loops[0] = <PyUFuncGenericFunction>fa_loop_bwd_f16
bwd_loops[1] = <PyUFuncGenericFunction>fa_loop_bwd_f32
bwd_loops[2] = <PyUFuncGenericFunction>fa_loop_bwd_f64

cdef char fwd_types[6]
cdef char bwd_types[9]
for _i, _t in enumerate((cnp.NPY_FLOAT16, cnp.NPY_FLOAT32, cnp.NPY_FLOAT64)):
    fwd_types[2 * _i] = fwd_types[2 * _i + 1] = _t
    bwd_types[3 * _i] = bwd_types[3 * _i + 1] = bwd_types[3 * _i + 2] = _t

# Per op, the loop data: the fa_op number, once per dtype.
cdef void *op_data[FA_N_OPS][3]
for _op in range(FA_N_OPS):
    for _i in range(3):
        op_data[_op][_i] = <void *><intptr_t>_op


cdef _make(int op, bint backward, bytes name, bytes doc):
    # NumPy keeps the name and doc pointers: keep the bytes alive in _keep.
    _keep.extend((name, doc))
    if backward:
        return cnp.PyUFunc_FromFuncAndData(bwd_loops, op_data[op], bwd_types, 3, 2, 1,
                                           cnp.PyUFunc_None, name, doc, 0)
    return cnp.PyUFunc_FromFuncAndData(fwd_loops, op_data[op], fwd_types, 3, 1, 1,
                                       cnp.PyUFunc_None, name, doc, 0)

_keep = []

relu = _make(FA_RELU, False, b"relu", b"relu(x, /, out=None, *, where=True, ...)\n\nmax(x, 0); NaN stays NaN.")
relu_backward = _make(FA_RELU, True, b"relu_backward",
                      b"relu_backward(grad_output, x, /, out=None, ...)\n\n"
                      b"grad_output where x > 0, 0 where x <= 0, NaN where x is NaN.")
gelu = _make(FA_GELU, False, b"gelu", b"gelu(x, /, out=None, ...)\n\nx * Phi(x), the exact GELU.")
gelu_backward = _make(FA_GELU, True, b"gelu_backward",
                      b"gelu_backward(grad_output, x, /, out=None, ...)\n\n"
                      b"grad_output * (Phi(x) + x * phi(x)).")
gelu_tanh = _make(FA_GELU_TANH, False, b"gelu_tanh",
                  b"gelu_tanh(x, /, out=None, ...)\n\n"
                  b"0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh approximation of GELU.")
gelu_tanh_backward = _make(FA_GELU_TANH, True, b"gelu_tanh_backward",
                           b"gelu_tanh_backward(grad_output, x, /, out=None, ...)\n\n"
                           b"grad_output times the derivative of gelu_tanh.")
silu = _make(FA_SILU, False, b"silu", b"silu(x, /, out=None, ...)\n\nx * sigmoid(x) (Swish).")
silu_backward = _make(FA_SILU, True, b"silu_backward",
                      b"silu_backward(grad_output, x, /, out=None, ...)\n\n"
                      b"grad_output * sigmoid(x) * (1 + x (1 - sigmoid(x))).")


def isa_names():
    """Every kernel set this build knows, lowest first (supported or not)."""
    return [fa_isa_name(i).decode() for i in range(FA_N_ISAS)]


def isa_supported(int isa):
    return bool(fa_isa_supported(isa))


def isa_best():
    return fa_isa_best()


def isa_current():
    return fa_isa_current()


def isa_set(int isa):
    return fa_isa_set(isa) == 0


def num_threads():
    return fa_num_threads()


def set_num_threads(int n):
    fa_set_num_threads(n)


OPS = {"relu": FA_RELU, "gelu": FA_GELU, "gelu_tanh": FA_GELU_TANH, "silu": FA_SILU}


def thread_threshold(str name, dtype="float32"):
    """Elements per thread below which a call of `name` stays on one thread."""
    return fa_thread_threshold(OPS[name], str(dtype) == "float64")


def set_thread_threshold(str name, Py_ssize_t n, dtype="float32"):
    """Override thread_threshold (measurement tools only; not thread-safe)."""
    fa_set_thread_threshold(OPS[name], str(dtype) == "float64", n)


# ---- the public functions' bodies ---------------------------------------------
# Compiled: a 100-element call costs little more than the ufunc itself. On a
# TypeError/ValueError, `named(name, exc, args)` (in __init__.py) builds the
# error that names the function; the ufunc's out= is passed only when given.

def make_unary(str name, object ufunc, str doc, object named):
    def function(x, *, out=None, **kwargs):
        try:
            if kwargs:
                return ufunc(x, out=out, **kwargs)
            return ufunc(x) if out is None else ufunc(x, out=out)
        except (TypeError, ValueError) as exc:
            raise named(name, exc, (x,)) from exc
    function.__name__ = function.__qualname__ = name
    function.__doc__, function.__module__ = doc, "fastact"
    return function


def make_binary(str name, object ufunc, str doc, object named):
    def function(grad_output, x, *, out=None, **kwargs):
        try:
            if kwargs:
                return ufunc(grad_output, x, out=out, **kwargs)
            return ufunc(grad_output, x) if out is None else ufunc(grad_output, x, out=out)
        except (TypeError, ValueError) as exc:
            raise named(name, exc, (grad_output, x)) from exc
    function.__name__ = function.__qualname__ = name
    function.__doc__, function.__module__ = doc, "fastact"
    return function


def make_gelu(str name, object exact, object tanh, str doc, object bad_approximate):
    """gelu(x, approximate) over the make_unary functions of its two forms."""
    def function(x, approximate="none", *, out=None, **kwargs):
        f = _pick_form(name, approximate, exact, tanh, bad_approximate)
        if kwargs:
            return f(x, out=out, **kwargs)
        return f(x) if out is None else f(x, out=out)
    function.__name__ = function.__qualname__ = name
    function.__doc__, function.__module__ = doc, "fastact"
    return function


def make_gelu_backward(str name, object exact, object tanh, str doc, object bad_approximate):
    """gelu_backward(grad_output, x, approximate) over make_binary functions."""
    def function(grad_output, x, approximate="none", *, out=None, **kwargs):
        f = _pick_form(name, approximate, exact, tanh, bad_approximate)
        if kwargs:
            return f(grad_output, x, out=out, **kwargs)
        return f(grad_output, x) if out is None else f(grad_output, x, out=out)
    function.__name__ = function.__qualname__ = name
    function.__doc__, function.__module__ = doc, "fastact"
    return function


cdef object _pick_form(str name, object approximate, object exact, object tanh, object bad_approximate):
    if isinstance(approximate, str):
        if approximate == "none":
            return exact
        if approximate == "tanh":
            return tanh
    raise bad_approximate(name, approximate)
