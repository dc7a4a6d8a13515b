# The compiled core: NumPy ufunc objects over the C inner loops, and the
# dispatch / thread controls. The public API is in __init__.py.
cimport numpy as cnp
from numpy cimport PyUFuncGenericFunction
from libc.stdint cimport intptr_t

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.pycapsule cimport PyCapsule_New

from fastact._capi cimport *
from fastact._errors import (bad_choice as _bad_choice, bad_order as _bad_order,
                             check_param as _check_param, named as _named)

cnp.import_array()
cnp.import_ufunc()

# Loops in NumPy's type-resolution order: float16, float32, float64, which
# also gives integer and bool inputs the promotion np.exp gives them.
cdef PyUFuncGenericFunction dtype_loops[3]
dtype_loops[0] = <PyUFuncGenericFunction>fa_loop_f16
dtype_loops[1] = <PyUFuncGenericFunction>fa_loop_f32
dtype_loops[2] = <PyUFuncGenericFunction>fa_loop_f64
cdef char dtype_codes[3]
dtype_codes[0], dtype_codes[1], dtype_codes[2] = cnp.NPY_FLOAT16, cnp.NPY_FLOAT32, cnp.NPY_FLOAT64

_keep = []  # NumPy keeps the name and doc pointers: the bytes must live as long

# bfloat16 is ml_dtypes' dtype (the one JAX and the NumPy ecosystem use), a
# NumPy user dtype: once ml_dtypes is imported, every ufunc gets a bfloat16
# loop too; without it, nothing changes. Importing ml_dtypes costs more than
# the rest of fastact (0.8 s against 0.15 s on a 2-vCPU Zen 4, NumPy 2.4), so
# fastact does not import it: _bfloat16.py adds the loops when something does.
BFLOAT16 = None
cdef bint _bfloat16_added = False
cdef list _bfloat16_loops = []  # (ufunc, loop, data, nin, nparams, nout)


cdef _register_bfloat16(object ufunc, PyUFuncGenericFunction loop, void *data, int nin, int nparams, int nout):
    """Keeps a bfloat16 loop (float64 parameters) for add_bfloat16_loops."""
    _bfloat16_loops.append((ufunc, <intptr_t>loop, <intptr_t>data, nin, nparams, nout))


def add_bfloat16_loops(dtype):
    """Registers every ufunc's bfloat16 loop for `dtype` (ml_dtypes.bfloat16's);
    once: later calls do nothing. The caller holds _bfloat16's lock."""
    global BFLOAT16, _bfloat16_added
    if _bfloat16_added:
        return
    cdef int nargs, num = dtype.num
    cdef int *types
    for ufunc, loop, data, nin, nparams, nout in _bfloat16_loops:
        nargs = nin + nparams + nout
        types = <int *>PyMem_Malloc(nargs * sizeof(int))
        if not types:
            raise MemoryError()
        for a in range(nargs):
            types[a] = cnp.NPY_FLOAT64 if nin <= a < nin + nparams else num
        try:
            cnp.PyUFunc_RegisterLoopForType(<cnp.ufunc>ufunc, num, <PyUFuncGenericFunction><intptr_t>loop, types,
                                            <void *><intptr_t>data)
        finally:
            PyMem_Free(types)  # NumPy keeps its own copy
    BFLOAT16 = dtype
    _bfloat16_added = True


import sys as _sys
cdef dict _modules = _sys.modules


cdef inline int _bfloat16_if_imported() except -1:
    """Each public function's first step: the loops, if ml_dtypes has been
    imported in a way _bfloat16's finder did not see (another finder ahead
    of it; a thread importing it while fastact was imported), or is being
    imported in another thread. Costs a flag test once they are added, a
    dict lookup before (more while sys.modules holds a stub for it)."""
    if _bfloat16_added or _modules.get("ml_dtypes") is None:
        return 0
    from fastact import _bfloat16
    _bfloat16.add_loops_if_imported()
    return 0


# each elementwise ufunc's (op, direction, tier, nin, nparams, nout): what the
# XLA handler takes as its attributes (fastact.jax)
ufunc_operations = {}


def xla_ffi_capsule():
    """The XLA FFI handler of the elementwise ufuncs, for jax.ffi.register_ffi_target."""
    return PyCapsule_New(fa_xla_ffi_activation_address(), NULL, NULL)


cdef extern from "<fenv.h>" nogil:
    ctypedef struct fenv_t:
        pass
    int fegetenv(fenv_t *envp)
    int fesetenv(const fenv_t *envp)
    const fenv_t *FE_DFL_ENV


def call_in_default_fpenv(function, *args):
    """function(*args) in the default floating-point environment (subnormals
    kept: no flush-to-zero or denormals-are-zero), the caller's put back after:
    for fastact.jax's host callback, which XLA runs with subnormals flushed,
    as its XLA handler does for itself."""
    cdef fenv_t saved
    fegetenv(&saved)
    fesetenv(FE_DFL_ENV)
    try:
        return function(*args)
    finally:
        fesetenv(&saved)


cdef object _make_ufunc(int op, int direction, int tier, int nin, int nparams, int nout, tuple dtypes,
                        str name, str doc, tuple defaults=None):
    """A ufunc over the inner loops of `dtypes` (indices into dtype_loops): nin
    arrays of the loop's dtype, then nparams float64 parameters, then nout
    outputs of the loop's dtype; with `defaults`, no parameter operands: those
    values stand for them. Its tables live as long as the process, like the
    ufunc."""
    cdef double fixed[FA_LOOP_MAX_ARGS]
    if defaults is not None:
        assert len(defaults) == nparams
        for j, value in enumerate(defaults):
            fixed[j] = value
        nparams = 0
    cdef int ntypes = len(dtypes), nargs = nin + nparams + nout
    cdef PyUFuncGenericFunction *funcs = <PyUFuncGenericFunction *>PyMem_Malloc(ntypes * sizeof(PyUFuncGenericFunction))
    cdef void **data = <void **>PyMem_Malloc(ntypes * sizeof(void *))
    cdef char *types = <char *>PyMem_Malloc(ntypes * nargs)
    if not funcs or not data or not types:
        raise MemoryError()
    cdef const void *spec = fa_loop_data(op, direction, tier) if defaults is None else \
        fa_loop_data_fixed(op, direction, tier, fixed)
    if defaults is None:
        ufunc_operations[name] = (op, direction, tier, nin, nparams, nout)
    for i, d in enumerate(dtypes):
        funcs[i] = dtype_loops[d]
        data[i] = <void *>spec
        for a in range(nargs):
            types[i * nargs + a] = cnp.NPY_FLOAT64 if nin <= a < nin + nparams else dtype_codes[d]
    name_bytes, doc_bytes = name.encode(), doc.encode()
    _keep.extend((name_bytes, doc_bytes))
    ufunc = cnp.PyUFunc_FromFuncAndData(funcs, data, types, ntypes, nin + nparams, nout, cnp.PyUFunc_None,
                                        name_bytes, doc_bytes, 0)
    _register_bfloat16(ufunc, <PyUFuncGenericFunction>fa_loop_bf16, <void *>spec, nin, nparams, nout)
    return ufunc


cdef PyUFuncGenericFunction row_loops[3]
row_loops[0] = <PyUFuncGenericFunction>fa_row_loop_f16
row_loops[1] = <PyUFuncGenericFunction>fa_row_loop_f32
row_loops[2] = <PyUFuncGenericFunction>fa_row_loop_f64


cdef object _make_row_gufunc(int op, int direction, int tier, str name, str doc):
    """A generalized ufunc over rows: (n)->(n) forward, (n),(n)->(n) backward,
    with a loop per dtype (float16, float32, float64); tier: the index in TIERS."""
    cdef int nin = 1 if direction == 0 else 2, nargs = nin + 1
    cdef PyUFuncGenericFunction *funcs = <PyUFuncGenericFunction *>PyMem_Malloc(3 * sizeof(PyUFuncGenericFunction))
    cdef void **data = <void **>PyMem_Malloc(3 * sizeof(void *))
    cdef char *types = <char *>PyMem_Malloc(3 * nargs)
    if not funcs or not data or not types:
        raise MemoryError()
    for d in range(3):
        funcs[d] = row_loops[d]
        data[d] = <void *>fa_row_loop_data(op, direction, tier)
        for a in range(nargs):
            types[d * nargs + a] = dtype_codes[d]
    signature = "(n)->(n)" if direction == 0 else "(n),(n)->(n)"
    name_bytes, doc_bytes, signature_bytes = name.encode(), doc.encode(), signature.encode()
    _keep.extend((name_bytes, doc_bytes, signature_bytes))
    gufunc = cnp.PyUFunc_FromFuncAndDataAndSignature(funcs, data, types, 3, nin, 1, cnp.PyUFunc_None, name_bytes,
                                                     doc_bytes, 0, signature_bytes)
    _register_bfloat16(gufunc, <PyUFuncGenericFunction>fa_row_loop_bf16, <void *>fa_row_loop_data(op, direction, tier),
                       nin, 0, 1)
    return gufunc


# torch tensors: NumPy would call their __array_wrap__, which still has the
# pre-NumPy-2 signature (a DeprecationWarning on every call). The public
# functions hand them to _interop instead, which computes on NumPy views of
# them and returns tensors. torch.Tensor once torch has been imported.
cdef object _tensor_type = None

cdef bint _any_tensor(tuple args, object out):
    global _tensor_type
    if _tensor_type is None:
        torch = _sys.modules.get("torch")
        if torch is None:
            return False
        _tensor_type = torch.Tensor
    for a in args:
        if isinstance(a, _tensor_type):
            return True
    if type(out) is tuple:
        return any(isinstance(o, _tensor_type) for o in out)
    return isinstance(out, _tensor_type)


def _on_tensors(str name, object function, tuple args, object out, dict kwargs):
    from fastact import _interop
    return _interop.on_tensors(name, function, args, out, kwargs)


# The ufunc objects and the public functions, generated from the manifest.
# The public functions are compiled: a 100-element call costs little more
# than the ufunc itself. A TypeError/ValueError from NumPy is re-raised naming
# the function; the ufunc's out= is passed only when given.
include "_direct.pxi"
include "_ops.pxi"
# softmax, log_softmax (generalized ufuncs over rows) and glu (over two halves)
include "_rows.pxi"


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


def set_num_threads(int n, int source=3):
    """source: 3 fastact.set_num_threads(), 4 threadpoolctl (fa_thread_source in fastact.h)."""
    fa_set_num_threads_from(n, source)


def cpus_available():
    """The CPUs this process may run on (its affinity mask)."""
    return fa_cpus_available()


def num_threads_source():
    """Where num_threads() came from, in words."""
    return fa_thread_source_name(fa_thread_source()).decode()


def wake_ns():
    """The pool's measured wake cost in ns, (workers parked, workers spinning); zeros before it starts."""
    return fa_wake_ns(0), fa_wake_ns(1)


def use_openmp(size_t gomp_parallel, size_t omp_get_max_threads):
    """Split the calls on tensor memory over the team of the OpenMP runtime
    with these entry points (fastact.torch passes PyTorch's); zeros: the pool."""
    if (gomp_parallel == 0) != (omp_get_max_threads == 0):
        raise ValueError("fastact: use_openmp needs both entry points or neither")
    fa_use_openmp(<void *>gomp_parallel, <void *>omp_get_max_threads)


def openmp_scope(int on):
    """Whether this thread's calls may split over the OpenMP team (fastact.torch's
    custom ops set it around their kernels); returns the setting before."""
    return fa_openmp_scope(on)


def openmp_team_calls():
    """How many calls have split over the OpenMP team so far."""
    return fa_openmp_team_calls()


_DTYPE_INDEX = {"float16": 0, "float32": 1, "float64": 2, "bfloat16": 3}


cdef int _cost_tier(str name, object precision) except -1:
    """The kernel tables' tier index of `precision`; None: what the default call runs."""
    from ._manifest import OPS_BY_NAME
    return TIERS.index(precision or OPS_BY_NAME[name].default_tier)


def cost_ns(str name, str direction="fwd", dtype="float32", bint gathered=False, precision=None):
    """The measured cost per element (ns) of a kernel under the current ISA; 0 if not measured yet."""
    return fa_cost_ns(OPS[name], ("fwd", "bwd").index(direction), _cost_tier(name, precision),
                      _DTYPE_INDEX[str(dtype)], gathered)


def cost_estimate_ns(str name, dtype="float32"):
    """The manifest's estimated cost per element (ns) of a forward call."""
    return fa_cost_estimate_ns(OPS[name], str(dtype) == "float64")


def thread_threshold(str name, dtype="float32", precision=None):
    """Elements per thread below which a contiguous forward call of `name` stays
    on one thread: from the cost model (its measured or estimated cost per
    element and the pool's wake cost with the workers parked), or the value
    fixed by set_thread_threshold."""
    return fa_thread_threshold(OPS[name], _cost_tier(name, precision), str(dtype) == "float64")


def table16(on=None):
    """Whether calls on 16-bit data may use tables over all 65536 inputs (the
    unary forward results, the backward derivatives; filled once by the
    computing path, so the same bits); `on` switches that, for tests
    comparing the two. Returns the previous state."""
    previous = bool(fa_table16_enabled())
    if on is not None:
        fa_table16_enable(1 if on else 0)
    return previous


def table16_forget():
    """Forget every 16-bit table and count, as in a new process (the tables
    are not freed: another thread may be reading one). For tests."""
    fa_table16_forget()


def table16_published():
    """How many 16-bit tables this process has published. For tests."""
    return fa_table16_published()


def set_thread_threshold(str name, Py_ssize_t n, dtype="float32"):
    """Fix the elements per thread of `name` (n > 0), or return it to the cost
    model (n = 0). For tests and measuring tools; not thread-safe."""
    fa_set_thread_threshold(OPS[name], str(dtype) == "float64", n)
