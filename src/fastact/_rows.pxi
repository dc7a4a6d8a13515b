# Included by _ext.pyx after _ops.pxi: the functions along an axis. softmax
# and log_softmax are generalized ufuncs over rows (signature (n)->(n)); the
# public functions pass axis= as the gufunc's axes=. glu splits its input in
# two halves along the axis (views, no copy) for the elementwise glu ufunc.
import numpy as _np
from operator import index as _index

_ROW_DOCS = {
    "softmax": (
        "softmax(x, axis=-1): exp(x - max) / sum(exp(x - max)) along axis.\n\n"
        "Every ISA and thread count gives the same bits (sums over fixed lanes, in a fixed order). "
        "precision='fast' (default): the plain algorithm, a short exponential, the sum in double "
        "(float32) or compensated (float64), one multiplication by 1/sum; within 4 ULP per element. "
        "precision='accurate': the exponential to about 2^-27 (float32), a compensated sum and a "
        "division rounded once; within 2.5 ULP (rows of any length, 2^20 and beyond). Special "
        "rows (both tiers): a NaN makes its row NaN; -inf entries give 0; k entries of +inf share "
        "the row (1/k each, 0 elsewhere); a row of -inf only gives NaN (0/0)."),
    "softmax_backward": (
        "softmax_backward(grad_output, output, axis=-1): output·(grad_output - sum(grad_output·"
        "output)) along axis, as PyTorch's _softmax_backward_data computes it from the forward's "
        "output.\n\nWithin 4 ULP of the largest term (|output·grad_output| or |output·sum|); "
        "precision='fast' forms the float32 formula in float32 (within 4 ULP of that term too), "
        "precision='accurate' in double."),
    "log_softmax": (
        "log_softmax(x, axis=-1): (x - max) - log(sum(exp(x - max))) along axis.\n\n"
        "precision='fast' (default): within 4 ULP per element; precision='accurate': within 2 ULP, "
        "the largest element's value near 0 included (both tiers take log(sum) as log1p of the "
        "sum less its leading 1). Special rows: a NaN makes its row NaN; -inf entries give -inf; k "
        "entries of +inf give -log(k) there and -inf elsewhere; a row of -inf only gives NaN."),
    "log_softmax_backward": (
        "log_softmax_backward(grad_output, output, axis=-1): grad_output - exp(output)·"
        "sum(grad_output) along axis, as PyTorch's _log_softmax_backward_data computes it from "
        "the forward's output.\n\nWithin 4 ULP of the largest term (|grad_output| or "
        "|exp(output)·sum|), in both tiers (precision='fast': the fast tier's exponential)."),
}

# the gufuncs, one per tier (in TIERS's order: accurate, fast); the default tier's keep the plain
# names, the accurate tier's get "_accurate" as the elementwise ufuncs do (gelu, gelu_accurate)
cdef dict _ROW_GUFUNCS = {}
for _name, _op in (("softmax", FA_ROW_SOFTMAX), ("log_softmax", FA_ROW_LOG_SOFTMAX)):
    for _t in range(len(TIERS)):  # UFUNCS in the elementwise ops' order: gelu_accurate, ..., gelu, ...
        for _direction, _f in enumerate((_name, _name + "_backward")):
            _key = _f if TIERS[_t] == 'fast' else f"{_f}_{TIERS[_t]}"
            UFUNCS[_key] = _make_row_gufunc(_op, _direction, _t, _key, _ROW_DOCS[_f])
for _f in ("softmax", "softmax_backward", "log_softmax", "log_softmax_backward"):
    _ROW_GUFUNCS[_f] = tuple(UFUNCS[_f if TIERS[_t] == 'fast' else f"{_f}_{TIERS[_t]}"] for _t in range(len(TIERS)))

_ROW_COMMON = (
    "\n\nprecision='fast' (default) or 'accurate': the tiers above, each its own kernels. axis: any axis, any strides. dtypes: float16 and bfloat16 (ml_dtypes; both "
    "computed in float32), float32, float64; integers and bools promote as for np.exp. out= may be any array NumPy's casting "
    "allows. The generalized ufunc (signature (n)->(n), for Dask's apply_gufunc and the like): "
    "fastact.ufuncs.{name} (precision='accurate': fastact.ufuncs.{name}_accurate).")


cdef object _axis_of(str function, object axis):
    if isinstance(axis, (bool, _np.bool_)):
        raise TypeError(f"fastact.{function}: axis must be an integer, not {axis!r}")
    try:
        return _index(axis)
    except TypeError:
        raise TypeError(f"fastact.{function}: axis must be an integer, not {axis!r}") from None


# each row function's loop data per tier, for the direct call
cdef const void *_ROW_SPECS[2][2][2]  # [op][direction][tier]
for _op in (FA_ROW_SOFTMAX, FA_ROW_LOG_SOFTMAX):
    for _direction in range(2):
        for _t in range(len(TIERS)):
            _ROW_SPECS[_op][_direction][_t] = fa_row_loop_data(_op, _direction, _t)


cdef Py_ssize_t _row_direct_calls = 0  # how many calls took the direct path (the tests look)


def _row_direct_count():
    return _row_direct_calls


cdef object _row_direct(object gufunc, const void *spec, int nin, object a0, object a1, object axis, object out):
    """The gufunc's result along the last axis for C-contiguous float32 or float64 arrays of one
    shape, by calling its loop directly (as _direct does for the elementwise ufuncs); None
    otherwise, for the caller to use the gufunc."""
    if _give_fpe_errors is NULL or type(a0) is not cnp.ndarray or type(axis) is not int:
        return None
    cdef cnp.ndarray first = <cnp.ndarray>a0, result
    cdef int typenum = cnp.PyArray_TYPE(first), ndim = cnp.PyArray_NDIM(first), i
    cdef _loop_t loop
    if typenum == cnp.NPY_FLOAT32:
        loop = <_loop_t>fa_row_loop_f32
    elif typenum == cnp.NPY_FLOAT64:
        loop = <_loop_t>fa_row_loop_f64
    else:
        return None
    if ndim == 0 or (axis != -1 and axis != ndim - 1):  # Python ints: any size compares
        return None
    cdef cnp.npy_intp *dims = cnp.PyArray_DIMS(first)
    cdef cnp.npy_intp n = dims[ndim - 1], size = cnp.PyArray_SIZE(first)
    if n == 0 or size == 0 or not _matches(first, typenum, ndim, dims):
        return None
    if nin == 2 and (type(a1) is not cnp.ndarray or not _matches(<cnp.ndarray>a1, typenum, ndim, dims)):
        return None
    cdef Py_ssize_t itemsize = cnp.PyArray_ITEMSIZE(first), nbytes = size * itemsize
    if out is None:
        result = cnp.PyArray_EMPTY(ndim, dims, typenum, 0)
    else:
        if type(out) is not cnp.ndarray:
            return None
        result = <cnp.ndarray>out
        if not _matches(result, typenum, ndim, dims) or not cnp.PyArray_ISWRITEABLE(result):
            return None
        if not _apart(first, result, nbytes) or (nin == 2 and not _apart(<cnp.ndarray>a1, result, nbytes)):
            return None
    cdef char *args[3]
    cdef cnp.npy_intp shape[2]
    cdef cnp.npy_intp steps[6]
    shape[0], shape[1] = size // n, n
    args[0] = <char *>cnp.PyArray_DATA(first)
    if nin == 2:
        args[1] = <char *>cnp.PyArray_DATA(<cnp.ndarray>a1)
    args[nin] = <char *>cnp.PyArray_DATA(result)
    for i in range(nin + 1):  # steps between rows, then between a row's elements
        steps[i], steps[nin + 1 + i] = n * itemsize, itemsize
    feclearexcept(_ALL_FE)
    if size >= _NOGIL_FROM:
        with nogil:
            loop(args, shape, steps, <void *>spec)
    else:
        loop(args, shape, steps, <void *>spec)
    global _row_direct_calls
    _row_direct_calls += 1
    _report_flags(gufunc)
    return result


cdef bint _same_float_arrays(tuple args):
    """Every argument an ndarray of one shape and one float dtype (no broadcasting, no casting)."""
    first = args[0]
    if type(first) is not _np.ndarray or first.dtype.char not in "efd":
        return False
    return all(type(a) is _np.ndarray and a.shape == first.shape and a.dtype == first.dtype for a in args)


cdef object _row_call(str function, tuple args, object axis, object precision, object out):
    _bfloat16_if_imported()
    if _any_tensor(args, out):
        return _on_tensors(function, globals()[function], args, out, dict(axis=axis, precision=precision))
    cdef object gufunc = _ROW_GUFUNCS[function][_tier_index(function, precision)]
    cdef object ax = _axis_of(function, axis)
    # a 0-d input is a row of one element (as in PyTorch), if axis names it
    if all(_np.ndim(a) == 0 for a in args) and ax in (0, -1):
        result = gufunc(*[_np.reshape(a, (1,)) for a in args])
        result = result.reshape(())
        if out is None:
            return result
        try:
            _np.copyto(out, result, casting="same_kind")
        except (TypeError, ValueError) as exc:
            raise _named(function, exc, args) from exc
        return out
    try:
        axes = [(ax,)] * (len(args) + 1)
        if out is None and ax not in (-1, _np.ndim(args[0]) - 1) and _same_float_arrays(args):
            # the result laid out as the input (the gufunc's own would put the axis last in
            # memory), so that the rows side by side stay so for the kernels and the backward
            out = _np.empty_like(args[0])
        if out is None:
            return gufunc(*args, axes=axes)
        return gufunc(*args, out=out, axes=axes)
    except (TypeError, ValueError) as exc:
        raise _named(function, exc, args) from exc


def softmax(x, axis=-1, *, precision='fast', out=None):
    cdef int tier = _tier_index('softmax', precision)
    result = _row_direct(_ROW_GUFUNCS['softmax'][tier], _ROW_SPECS[FA_ROW_SOFTMAX][0][tier], 1, x, None, axis, out)
    if result is not None:
        return result
    return _row_call('softmax', (x,), axis, precision, out)


def log_softmax(x, axis=-1, *, precision='fast', out=None):
    cdef int tier = _tier_index('log_softmax', precision)
    result = _row_direct(_ROW_GUFUNCS['log_softmax'][tier], _ROW_SPECS[FA_ROW_LOG_SOFTMAX][0][tier], 1, x, None,
                         axis, out)
    if result is not None:
        return result
    return _row_call('log_softmax', (x,), axis, precision, out)


def softmax_backward(grad_output, output, axis=-1, *, precision='fast', out=None):
    cdef int tier = _tier_index('softmax_backward', precision)
    result = _row_direct(_ROW_GUFUNCS['softmax_backward'][tier], _ROW_SPECS[FA_ROW_SOFTMAX][1][tier], 2,
                         grad_output, output, axis, out)
    if result is not None:
        return result
    return _row_call('softmax_backward', (grad_output, output), axis, precision, out)


def log_softmax_backward(grad_output, output, axis=-1, *, precision='fast', out=None):
    cdef int tier = _tier_index('log_softmax_backward', precision)
    result = _row_direct(_ROW_GUFUNCS['log_softmax_backward'][tier], _ROW_SPECS[FA_ROW_LOG_SOFTMAX][1][tier], 2,
                         grad_output, output, axis, out)
    if result is not None:
        return result
    return _row_call('log_softmax_backward', (grad_output, output), axis,
                     precision, out)


for _f in (softmax, log_softmax, softmax_backward, log_softmax_backward):
    _f.__doc__ = _ROW_DOCS[_f.__name__] + _ROW_COMMON.format(name=_f.__name__)


cdef tuple _halves(str function, object x, object axis):
    """x's two halves along axis, as views."""
    cdef object ax = _axis_of(function, axis)
    x = _np.asarray(x)
    if x.ndim == 0:
        raise ValueError(f"fastact.{function}: x must have at least one dimension, not a 0-d array")
    if not -x.ndim <= ax < x.ndim:
        raise ValueError(f"fastact.{function}: axis {axis} is out of bounds for an array of "
                         f"dimension {x.ndim}")
    ax %= x.ndim
    n = x.shape[ax]
    if n % 2:
        raise ValueError(f"fastact.{function}: the length of axis {axis} must be even to split it "
                         f"in halves, not {n}")
    head = (slice(None),) * ax
    return x, ax, x[head + (slice(0, n // 2),)], x[head + (slice(n // 2, n),)]


def glu(x, axis=-1, *, precision='fast', out=None):
    """glu(x, axis=-1): a·σ(b), where a and b are the first and second halves of x along axis
    (torch.nn.functional.glu). The length of axis must be even.

    Within 4 ULP (precision='accurate': 2). dtypes: float16, bfloat16 (ml_dtypes), float32, float64; integers and bools promote
    as for np.exp. out= has the halves' shape. The elementwise ufunc of the halves:
    fastact.ufuncs.glu(a, b)."""
    _bfloat16_if_imported()
    if _any_tensor((x,), out):
        return _on_tensors('glu', glu, (x,), out, dict(axis=axis, precision=precision))
    cdef int tier = _tier_index('glu', precision)
    x, ax, a, b = _halves('glu', x, axis)
    ufunc = (_u_glu_accurate, _u_glu)[tier]
    try:
        return ufunc(a, b) if out is None else ufunc(a, b, out=out)
    except (TypeError, ValueError) as exc:
        raise _named('glu', exc, (x,)) from exc


def glu_backward(grad_output, x, axis=-1, *, precision='fast', out=None):
    """glu_backward(grad_output, x, axis=-1): the gradient of glu with respect to x, shaped like
    x: grad_output·σ(b) for the first half and grad_output·a·σ(b)(1 - σ(b)) for the second.

    Within 8 ULP of each part's largest term (precision='accurate': 4). out= has x's shape."""
    _bfloat16_if_imported()
    if _any_tensor((grad_output, x), out):
        return _on_tensors('glu_backward', glu_backward, (grad_output, x), out, dict(axis=axis, precision=precision))
    cdef int tier = _tier_index('glu_backward', precision)
    x, ax, a, b = _halves('glu_backward', x, axis)
    ufunc = (_u_glu_backward_accurate, _u_glu_backward)[tier]
    try:
        if out is None:
            # the output dtype the ufunc's own type resolution picks (TypeError if none)
            dtype = ufunc.resolve_dtypes((_np.asarray(grad_output).dtype, x.dtype, x.dtype, None, None))[3]
            out = _np.empty(x.shape, dtype)
        elif not isinstance(out, _np.ndarray) or out.shape != x.shape:
            raise ValueError(f"out must be an array of x's shape {x.shape}")
        n = x.shape[ax]
        head = (slice(None),) * ax
        ufunc(grad_output, a, b, out=(out[head + (slice(0, n // 2),)], out[head + (slice(n // 2, n),)]))
        return out
    except (TypeError, ValueError) as exc:
        raise _named('glu_backward', exc, (grad_output, x)) from exc


PUBLIC = PUBLIC + ('softmax', 'softmax_backward', 'log_softmax', 'log_softmax_backward', 'glu', 'glu_backward')


def rows_on_memory(int op, bint accurate, int dtype_code, object x):
    """softmax (op 0) or log_softmax (op 1) along the last axis of x, a checked,
    C-contiguous CPU torch tensor of float32 (dtype_code 1) or float64 (2) with
    at least one element, as a new torch tensor: the row loop straight on its
    memory, as tensor_on_memory does for the elementwise functions (None
    where that does not apply, for the caller to take the NumPy function)."""
    if dtype_code != 1 and dtype_code != 2:
        raise ValueError(f"fastact: dtype code {dtype_code} for a row function")
    return _rows_on_memory(op, accurate, dtype_code, x)


cdef object _rows_on_memory(int op, bint accurate, int dtype_code, object x):
    if not _memory_ready():
        return None
    cdef size_t address = x.data_ptr(), itemsize = 4 if dtype_code == 1 else 8
    if address % itemsize:
        return None
    cdef cnp.ndarray result = _empty_like_tensor(x, cnp.NPY_FLOAT32 if dtype_code == 1 else cnp.NPY_FLOAT64)
    if result is None or cnp.PyArray_NDIM(result) == 0 or cnp.PyArray_SIZE(result) == 0:
        return None
    cdef cnp.npy_intp size = cnp.PyArray_SIZE(result)
    cdef cnp.npy_intp rows[2]
    cdef cnp.npy_intp steps[4]
    cdef _loop_t loop = <_loop_t>(fa_row_loop_f32 if dtype_code == 1 else fa_row_loop_f64)
    cdef int row_op = FA_ROW_SOFTMAX if op == 0 else FA_ROW_LOG_SOFTMAX
    cdef const void *spec = _ROW_SPECS[row_op][0][0 if accurate else 1]  # TIERS: accurate, fast
    cdef char *args[2]
    rows[1] = cnp.PyArray_DIMS(result)[cnp.PyArray_NDIM(result) - 1]
    rows[0] = size // rows[1]
    args[0], args[1] = <char *>address, <char *>cnp.PyArray_DATA(result)
    steps[0] = steps[1] = rows[1] * itemsize  # between rows, then between a row's elements
    steps[2] = steps[3] = itemsize
    feclearexcept(_ALL_FE)
    if size >= _NOGIL_FROM:
        with nogil:
            fa_openmp_scope(1)  # a PyTorch program's call: PyTorch's threads may take part
            loop(args, rows, steps, <void *>spec)
            fa_openmp_scope(0)
    else:
        loop(args, rows, steps, <void *>spec)
    _report_flags(_ROW_GUFUNCS['softmax' if op == 0 else 'log_softmax'][0 if accurate else 1])
    return _from_numpy(result)


def rows_untracked(int op, object precision, object dim, object x):
    """rows_on_memory after fastact.torch's checks (dim the last axis, float32
    or float64, at least one element), all in one call; None where they do
    not all pass."""
    cdef int tier = _tier(precision)
    cdef int code = _untracked_code(x) if tier >= 0 and type(dim) is int else -1
    if code < 1:
        return None
    cdef Py_ssize_t ndim = x.ndim
    if ndim == 0 or (dim != -1 and dim != ndim - 1):
        return None
    return _rows_on_memory(op, tier, code, x)

