# Included by _ext.pyx: the public functions' direct call. For the common
# case (NumPy arrays of one native float dtype, C-contiguous, the same shape,
# no keywords for the ufunc), calling the inner loop directly gives what the
# ufunc would give, bit for bit, at a fraction of NumPy's fixed cost per call
# (type resolution, iterator set-up, scalar conversion of the parameters).
# Anything else returns None and goes through the ufunc.
from cpython.object cimport PyObject

ctypedef void (*_loop_t)(char **args, const cnp.npy_intp *dims, const cnp.npy_intp *steps, void *data) noexcept nogil

cdef extern from "<fenv.h>" nogil:
    int feclearexcept(int excepts)
    int fetestexcept(int excepts)
    int FE_DIVBYZERO, FE_OVERFLOW, FE_UNDERFLOW, FE_INVALID

cdef extern from "numpy/ufuncobject.h":
    int UFUNC_FPE_DIVIDEBYZERO, UFUNC_FPE_OVERFLOW, UFUNC_FPE_UNDERFLOW, UFUNC_FPE_INVALID
    void **PyUFunc_API

cdef extern from "numpy/arrayobject.h":
    unsigned int PyArray_GetNDArrayCFeatureVersion()

ctypedef int (*_give_fpe_errors_t)(const char *name, int fpe_errors) except -1

# NumPy's own report of floating-point exceptions (np.errstate: warn, raise,
# call, ...): PyUFunc_GiveFloatingpointErrors, in NumPy 2's C API. The build
# targets NumPy 1.25's, where it is absent: under an older NumPy at run time
# the direct call is off and every call takes the ufunc.
cdef _give_fpe_errors_t _give_fpe_errors = NULL
if PyArray_GetNDArrayCFeatureVersion() >= 0x12:  # NPY_2_0_API_VERSION
    _give_fpe_errors = <_give_fpe_errors_t>PyUFunc_API[46]
cdef int _ALL_FE = FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID
cdef Py_ssize_t _NOGIL_FROM = 500  # NumPy's threshold for releasing the GIL around a loop


cdef inline bint _matches(cnp.ndarray a, int typenum, int ndim, cnp.npy_intp *dims):
    """a is a C-contiguous, aligned, native array of typenum and this shape."""
    if cnp.PyArray_TYPE(a) != typenum or cnp.PyArray_NDIM(a) != ndim:
        return False
    if not cnp.PyArray_ISCARRAY_RO(a) or not cnp.PyArray_ISNOTSWAPPED(a):
        return False
    cdef cnp.npy_intp *a_dims = cnp.PyArray_DIMS(a)
    for d in range(ndim):
        if a_dims[d] != dims[d]:
            return False
    return True


cdef inline bint _apart(cnp.ndarray a, cnp.ndarray b, Py_ssize_t nbytes):
    """b is a, element for element, or shares no byte with it (both contiguous)."""
    cdef char *pa = <char *>cnp.PyArray_DATA(a)
    cdef char *pb = <char *>cnp.PyArray_DATA(b)
    return pa == pb or pa + nbytes <= pb or pb + nbytes <= pa


cdef object _direct(const void *spec, object ufunc, int nin, object a0, object a1, object a2,
                    int nparams, double p0, double p1, object out):
    """The ufunc's result for nin arrays (a0, a1, a2; unused ones None) and
    nparams float64 parameters, computed by calling the inner loop; None when
    the arrays are not the common case, for the caller to use the ufunc."""
    if _give_fpe_errors is NULL or type(a0) is not cnp.ndarray:
        return None
    cdef cnp.ndarray first = <cnp.ndarray>a0, result
    cdef int typenum = cnp.PyArray_TYPE(first), ndim = cnp.PyArray_NDIM(first), i
    cdef _loop_t loop
    if typenum == cnp.NPY_FLOAT32:
        loop = <_loop_t>fa_loop_f32
    elif typenum == cnp.NPY_FLOAT64:
        loop = <_loop_t>fa_loop_f64
    else:
        return None
    if ndim == 0:  # the ufunc returns a NumPy scalar there
        return None
    cdef cnp.npy_intp *dims = cnp.PyArray_DIMS(first)
    cdef cnp.npy_intp n = cnp.PyArray_SIZE(first)
    cdef Py_ssize_t itemsize = cnp.PyArray_ITEMSIZE(first), nbytes = n * itemsize
    cdef PyObject *inputs[3]  # borrowed: the caller holds them
    inputs[0], inputs[1], inputs[2] = <PyObject *>a0, <PyObject *>a1, <PyObject *>a2
    for i in range(1, nin):
        if type(<object>inputs[i]) is not cnp.ndarray or not _matches(<cnp.ndarray>inputs[i], typenum, ndim, dims):
            return None
    if not _matches(first, typenum, ndim, dims):
        return None
    if n == 0:
        return None
    if out is None:
        result = cnp.PyArray_EMPTY(ndim, dims, typenum, 0)
    else:
        if type(out) is not cnp.ndarray:
            return None
        result = <cnp.ndarray>out
        if not _matches(result, typenum, ndim, dims) or not cnp.PyArray_ISWRITEABLE(result):
            return None
        for i in range(nin):
            if not _apart(<cnp.ndarray>inputs[i], result, nbytes):
                return None
    cdef double params[2]
    params[0], params[1] = p0, p1
    cdef char *args[6]
    cdef cnp.npy_intp steps[6]
    for i in range(nin):
        args[i], steps[i] = <char *>cnp.PyArray_DATA(<cnp.ndarray>inputs[i]), itemsize
    for i in range(nparams):
        args[nin + i], steps[nin + i] = <char *>&params[i], 0
    args[nin + nparams], steps[nin + nparams] = <char *>cnp.PyArray_DATA(result), itemsize
    feclearexcept(_ALL_FE)
    if n >= _NOGIL_FROM:
        with nogil:
            loop(args, &n, steps, <void *>spec)
    else:
        loop(args, &n, steps, <void *>spec)
    _report_flags(ufunc)
    return result


cdef inline int _report_flags(object ufunc) except -1:
    """The flags the loop raised, reported as the ufunc would: "overflow encountered in selu"."""
    cdef int raised = fetestexcept(_ALL_FE)
    if raised:
        _give_fpe_errors(ufunc.__name__.encode(), (UFUNC_FPE_DIVIDEBYZERO if raised & FE_DIVBYZERO else 0)
                         | (UFUNC_FPE_OVERFLOW if raised & FE_OVERFLOW else 0)
                         | (UFUNC_FPE_UNDERFLOW if raised & FE_UNDERFLOW else 0)
                         | (UFUNC_FPE_INVALID if raised & FE_INVALID else 0))
    return 0


cdef double _INF = float("inf")


cdef inline double _param(str function, str name, object value, str check) except? -1.0:
    """The checked parameter as a double: a Python float that passes `check`
    (a _manifest.PARAM_CHECKS key) at once; anything else through
    _errors.check_param, which converts it or raises the clear error."""
    cdef double v
    if type(value) is float:
        v = <double>value
        if check == "finite":
            if v == v and -_INF < v < _INF:
                return v
        elif check == "positive":
            if 0 < v < _INF:
                return v
        elif v > 0:  # positive_or_inf
            return v
    return _check_param(function, name, value, check)



cdef int _MEMORY_TYPENUMS[3]
_MEMORY_TYPENUMS[:] = [cnp.NPY_FLOAT16, cnp.NPY_FLOAT32, cnp.NPY_FLOAT64]
cdef enum:
    _MEMORY_MAX_DIMS = 64  # NumPy 2's limit (the path needs NumPy 2's report of flags anyway)


cdef object _from_numpy = None  # torch.from_numpy, once fastact.torch has asked for it


cdef inline bint _memory_ready():
    """NumPy 2's report of flags is there, and torch.from_numpy is bound."""
    global _from_numpy
    if _give_fpe_errors is NULL:
        return False
    if _from_numpy is None:
        import torch
        _from_numpy = torch.from_numpy
    return True


cdef cnp.ndarray _empty_like_tensor(object x, int typenum):
    """A new C-contiguous array of x's shape; None past NumPy's dimensions."""
    shape = x.shape
    cdef int ndim = len(shape), d
    if ndim > _MEMORY_MAX_DIMS:
        return None
    cdef cnp.npy_intp dims[_MEMORY_MAX_DIMS]
    for d in range(ndim):
        dims[d] = shape[d]
    return cnp.PyArray_EMPTY(ndim, dims, typenum, 0)


def tensor_on_memory(tuple operation, bint accurate, int dtype_code, object x):
    """The ufunc (op, direction, tier) of one input and no parameter on a
    contiguous CPU tensor x that fastact.torch has checked, straight on its
    memory into a new array, as a tensor (torch.from_numpy): a NumPy view of
    x costs more than a small kernel. operation: (op, direction, (fast tier,
    accurate tier), (fast ufunc, accurate ufunc)); dtype_code: 0 float16, 1
    float32, 2 float64. Floating-point flags are reported as the ufunc
    reports them (np.errstate). None where this does not apply (no NumPy 2
    report, an address not aligned to the item, too many dimensions), for
    the caller to take the NumPy function."""
    if not 0 <= dtype_code <= 2:
        raise ValueError(f"fastact: dtype code {dtype_code}")
    return _tensor_on_memory(operation, accurate, dtype_code, x)


cdef object _tensor_on_memory(tuple operation, bint accurate, int dtype_code, object x):
    if not _memory_ready():
        return None
    cdef size_t address = x.data_ptr(), itemsize = 2 << dtype_code
    if address % itemsize:
        return None
    cdef cnp.ndarray result = _empty_like_tensor(x, _MEMORY_TYPENUMS[dtype_code])
    if result is None:
        return None
    cdef int t = 1 if accurate else 0
    cdef const void *spec = fa_loop_data(operation[0], operation[1], operation[2][t])
    cdef _loop_t loop = <_loop_t>(fa_loop_f16 if dtype_code == 0 else fa_loop_f32 if dtype_code == 1
                                  else fa_loop_f64)
    cdef cnp.npy_intp n = cnp.PyArray_SIZE(result)
    cdef char *args[2]
    cdef cnp.npy_intp steps[2]
    args[0], args[1] = <char *>address, <char *>cnp.PyArray_DATA(result)
    steps[0] = steps[1] = itemsize
    feclearexcept(_ALL_FE)
    if n >= _NOGIL_FROM:
        with nogil:
            fa_openmp_scope(1)  # a PyTorch program's call: PyTorch's threads may take part
            loop(args, &n, steps, <void *>spec)
            fa_openmp_scope(0)
    elif n > 0:
        loop(args, &n, steps, <void *>spec)
    _report_flags(operation[3][t])
    return _from_numpy(result)


# fastact.torch's inference checks in one call: bound once by bind_torch
cdef object _TorchTensor = None, _torch_strided = None
cdef object _grad_enabled = None, _tracing = None
cdef dict _torch_dtype_codes = {}


def bind_torch(tensor_type, strided, dict dtype_codes, grad_enabled, tracing):
    """torch's objects that _untracked_code asks about (fastact.torch binds them at import)."""
    global _TorchTensor, _torch_strided, _torch_dtype_codes, _grad_enabled, _tracing
    _TorchTensor, _torch_strided, _torch_dtype_codes = tensor_type, strided, dtype_codes
    _grad_enabled, _tracing = grad_enabled, tracing


cdef inline int _tier(object precision):
    """0 fast, 1 accurate, -1 neither; the literals' identity first (interned
    strings, as a call's keyword literal is), then their equality"""
    if precision is "fast":
        return 0
    if precision is "accurate":
        return 1
    return 0 if precision == "fast" else 1 if precision == "accurate" else -1


cdef int _untracked_code(object x) except -2:
    """x's dtype code (0 float16, 1 float32, 2 float64) where the kernel may run
    straight on its memory: a plain, C-contiguous, strided CPU tensor, not a
    lazily negated view, that no autograd graph or tracer sees; -1 otherwise
    (fastact.torch then asks again, slowly, and says what is wrong). The
    caller has asked whether torch.compile traces it: dynamo sees that
    question in Python, not in here."""
    if _TorchTensor is None or type(x) is not _TorchTensor:
        return -1
    code = _torch_dtype_codes.get(x.dtype)
    if code is None or not x.is_cpu or x.layout is not _torch_strided:
        return -1
    if (x.requires_grad and _grad_enabled()) or _tracing() or x.is_neg() or not x.is_contiguous():
        return -1
    return code


def tensor_untracked(tuple operation, object precision, object x):
    """tensor_on_memory after fastact.torch's checks, all in one call; None
    where they do not all pass."""
    cdef int tier = _tier(precision)
    cdef int code = _untracked_code(x) if tier >= 0 else -1
    if code < 0:
        return None
    return _tensor_on_memory(operation, tier, code, x)

