"""fastact's functions as PyTorch operators and modules.

    import fastact.torch as fat
    y = fat.gelu(x)                      # like torch.nn.functional.gelu
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), fat.GELU(), torch.nn.Linear(256, 64))
    swapped = fat.replace_activations(other_model)   # torch's activation modules -> fastact's

Each function is a `torch.library.custom_op` ("fastact::gelu", ...): autograd
runs fastact's own backward kernels, `torch.compile` traces through it
without a graph break and `torch.export` keeps it as one node. CPU tensors
of float32, float64, float16 and bfloat16 are computed in place, with no
copy (bfloat16 needs ml_dtypes, as for NumPy); anything else (CUDA, other
dtypes, sparse) runs torch's own function, with a warning the first time.
Every function and module takes precision="fast" (the default) or
"accurate", fastact's two tiers. Second derivatives are not implemented: asking
for one raises an error that says so. PyTorch is an optional dependency:
pip install "fastact[torch]".
"""
import importlib.util
import warnings

try:
    import torch
    import torch.nn.functional as F
except ImportError as exc:  # pragma: no cover - exercised without torch only
    raise ImportError('fastact.torch needs PyTorch: pip install "fastact[torch]"') from exc

import fastact as fa
from fastact import _ext

_openmp_scope = _ext.openmp_scope  # calls inside it may split over PyTorch's OpenMP threads

# bfloat16 tensors become ml_dtypes' bfloat16 arrays; ml_dtypes is imported
# on the first one, not here (its import takes half as long as torch's)
_HAVE_ML_DTYPES = importlib.util.find_spec("ml_dtypes") is not None

__all__ = ["gelu", "silu", "quick_gelu", "relu", "sigmoid", "tanh", "softplus", "logsigmoid", "mish", "elu",
           "selu", "celu", "leaky_relu", "relu6", "hardtanh", "hardsigmoid", "hardswish", "softmax", "log_softmax",
           "glu", "swiglu", "geglu", "GELU", "SiLU", "QuickGELU", "ReLU", "Sigmoid", "Tanh", "Softplus", "LogSigmoid",
           "Mish", "ELU", "SELU", "CELU", "LeakyReLU", "ReLU6", "Hardtanh", "Hardsigmoid", "Hardswish", "Softmax",
           "LogSoftmax", "GLU", "replace_activations", "ReplacedActivations"]

_DTYPES = {torch.float32, torch.float64, torch.float16} | ({torch.bfloat16} if _HAVE_ML_DTYPES else set())


def _array(t):
    """A NumPy view of a CPU tensor (no copy; bfloat16 as ml_dtypes')."""
    t = t.detach()
    if t.dtype == torch.bfloat16:
        import ml_dtypes
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def _supported(*tensors):
    return all(t.device.type == "cpu" and t.dtype in _DTYPES and t.layout == torch.strided for t in tensors)


_warned = set()


def _warn(message, category, stacklevel):
    """warnings.warn, except while torch.compile traces (a warning there breaks the graph)."""
    if not torch.compiler.is_compiling():
        warnings.warn(message, category, stacklevel=stacklevel + 1)


def _warn_fallback(name, tensors):
    why = ", ".join(sorted({f"{t.device.type} {t.dtype}" for t in tensors}))
    if (name, why) not in _warned:
        _warned.add((name, why))
        _warn(f"fastact.torch.{name}: fastact computes CPU float32/float64/float16/bfloat16 tensors; "
              f"this call ({why}) runs torch's own {name}", RuntimeWarning, stacklevel=4)


class _Op:
    """One fastact function as a custom op, with its backward as a second one.

    inputs: the tensor arguments' names; params: (name, schema type) pairs.
    forward(arrays, params, out) and backward(grad, saved, params, outs) write
    fastact's results into the NumPy views of the outputs; shape(tensors,
    params) is the result's shape. Backward gets the inputs, or the output
    (saves="output", softmax), and gives each input's gradient at the
    broadcast shape, which autograd sums back to the input's own."""

    def __init__(self, name, inputs, params, forward, backward, shape=None, saves="inputs"):
        params = tuple(params) + (("precision", "str"),)  # the last value: fastact's precision tier
        n = len(inputs)
        saved = inputs if saves == "inputs" else ("output",)
        shape = shape or (lambda tensors, values: torch.broadcast_shapes(*(t.shape for t in tensors)))

        def dtype(tensors):  # mixed inputs (a float32 gate, a float64 up) promote as torch promotes
            result = tensors[0].dtype
            for t in tensors[1:]:
                result = torch.promote_types(result, t.dtype)
            return result

        def grad_shapes(grad, tensors):  # the full-size gradient of each input
            return [grad.shape] * n if n > 1 else [tensors[0].shape]

        def run_forward(*args):
            tensors, values = args[:n], args[n:]
            out = torch.empty(shape(tensors, values), dtype=dtype(tensors))
            before = _openmp_scope(1)  # PyTorch's threads may take part
            try:
                forward([_array(t) for t in tensors], values, _array(out))
            finally:
                _openmp_scope(before)
            return out

        def fake_forward(*args):
            return args[0].new_empty(shape(args[:n], args[n:]), dtype=dtype(args[:n]))

        def run_backward(grad, *args):
            tensors, values = args[:len(saved)], args[len(saved):]
            outs = [torch.empty(s, dtype=dtype((grad,) + tensors)) for s in grad_shapes(grad, tensors)]
            before = _openmp_scope(1)
            try:
                backward(_array(grad), [_array(t) for t in tensors], values, [_array(o) for o in outs])
            finally:
                _openmp_scope(before)
            return outs[0] if n == 1 else tuple(outs)

        def fake_backward(grad, *args):
            tensors = args[:len(saved)]
            outs = [grad.new_empty(s, dtype=dtype((grad,) + tensors)) for s in grad_shapes(grad, tensors)]
            return outs[0] if n == 1 else tuple(outs)

        def schema(*parts):
            return ", ".join(parts + tuple(f"{kind} {p}" for p, kind in params))

        returns = "Tensor" if n == 1 else "(" + ", ".join(["Tensor"] * n) + ")"
        self.op = torch.library.custom_op(f"fastact::{name}", run_forward, mutates_args=(), device_types="cpu",
                                          schema=f"({schema(*(f'Tensor {i}' for i in inputs))}) -> Tensor")
        self.op.register_fake(fake_forward)
        self.backward_op = torch.library.custom_op(
            f"fastact::{name}_backward", run_backward, mutates_args=(), device_types="cpu",
            schema=f"({schema('Tensor grad_output', *(f'Tensor {s}' for s in saved))}) -> {returns}")
        self.backward_op.register_fake(fake_backward)

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*(inputs[:n] if saves == "inputs" else (output,)))
            ctx.values = inputs[n:]
            ctx.shapes = [(t.shape, t.dtype) for t in inputs[:n]]

        def autograd_backward(ctx, grad):
            grads = self.backward_op(grad, *ctx.saved_tensors, *ctx.values)
            grads = (grads,) if n == 1 else grads
            # each input's gradient in its own shape (summed over broadcasting) and dtype
            grads = tuple(g.sum_to_size(s).to(d) for g, (s, d) in zip(grads, ctx.shapes))
            return grads + (None,) * len(params)

        self.op.register_autograd(autograd_backward, setup_context=setup_context)

        def no_double_backward(ctx, *grads):
            raise RuntimeError(f"fastact.torch.{name}: second derivatives are not implemented; "
                               f"use torch's own {name} where a double backward is needed")

        self.backward_op.register_autograd(no_double_backward, setup_context=lambda ctx, inputs, output: None)


def _elementwise(name, fa_forward, fa_backward, params=()):
    """A function of one tensor: fa_forward(x, *params, precision=, out=), fa_backward(g, x, ...)."""
    return _Op(name, ("x",), params,
               lambda arrays, values, out: fa_forward(arrays[0], *values[:-1], precision=values[-1], out=out),
               lambda grad, saved, values, outs: fa_backward(grad, saved[0], *values[:-1], precision=values[-1],
                                                             out=outs[0]))


def _gated(name, fa_forward, fa_backward):
    """act(gate)·up: gate and up broadcast together."""
    return _Op(name, ("gate", "up"), (),
               lambda arrays, values, out: fa_forward(*arrays, precision=values[-1], out=out),
               lambda grad, saved, values, outs: fa_backward(grad, *saved, precision=values[-1], out=tuple(outs)))


def _rows(name, fa_forward, fa_backward, shape=None, saves="output"):
    """Along one dimension (softmax, glu): the dim is the parameter."""
    return _Op(name, ("x",), (("dim", "int"),),
               lambda arrays, values, out: fa_forward(arrays[0], values[0], precision=values[1], out=out),
               lambda grad, saved, values, outs: fa_backward(grad, saved[0], values[0], precision=values[1],
                                                             out=outs[0]),
               shape=shape, saves=saves)


def _glu_shape(tensors, values):
    shape = list(tensors[0].shape)
    torch._check(shape[values[0]] % 2 == 0,
                 lambda: f"fastact.torch.glu: the length of dim {values[0]} must be even, not {shape[values[0]]}")
    shape[values[0]] //= 2
    return shape


_OPS = {
    "gelu": _elementwise("gelu", fa.gelu, fa.gelu_backward),
    "gelu_tanh": _elementwise("gelu_tanh", lambda x, precision, out: fa.gelu(x, "tanh", precision=precision, out=out),
                              lambda g, x, precision, out: fa.gelu_backward(g, x, "tanh", precision=precision,
                                                                            out=out)),
    "silu": _elementwise("silu", fa.silu, fa.silu_backward),
    "quick_gelu": _elementwise("quick_gelu", fa.quick_gelu, fa.quick_gelu_backward),
    "relu": _elementwise("relu", fa.relu, fa.relu_backward),
    "sigmoid": _elementwise("sigmoid", fa.sigmoid, fa.sigmoid_backward),
    "tanh": _elementwise("tanh", fa.tanh, fa.tanh_backward),
    "softplus": _elementwise("softplus", fa.softplus, fa.softplus_backward,
                             (("beta", "float"), ("threshold", "float"))),
    "logsigmoid": _elementwise("logsigmoid", fa.log_sigmoid, fa.log_sigmoid_backward),
    "mish": _elementwise("mish", fa.mish, fa.mish_backward),
    "elu": _elementwise("elu", fa.elu, fa.elu_backward, (("alpha", "float"),)),
    "selu": _elementwise("selu", fa.selu, fa.selu_backward),
    "celu": _elementwise("celu", fa.celu, fa.celu_backward, (("alpha", "float"),)),
    "leaky_relu": _elementwise("leaky_relu", fa.leaky_relu, fa.leaky_relu_backward,
                               (("negative_slope", "float"),)),
    "relu6": _elementwise("relu6", fa.relu6, fa.relu6_backward),
    "hardtanh": _elementwise("hardtanh", fa.hardtanh, fa.hardtanh_backward,
                             (("min_val", "float"), ("max_val", "float"))),
    "hardsigmoid": _elementwise("hardsigmoid", fa.hardsigmoid, fa.hardsigmoid_backward),
    "hardswish": _elementwise("hardswish", fa.hardswish, fa.hardswish_backward),
    "softmax": _rows("softmax", fa.softmax, fa.softmax_backward),
    "log_softmax": _rows("log_softmax", fa.log_softmax, fa.log_softmax_backward),
    "glu": _rows("glu", fa.glu, fa.glu_backward, shape=_glu_shape, saves="inputs"),
    "swiglu": _gated("swiglu", fa.swiglu, fa.swiglu_backward),
    "geglu": _gated("geglu", fa.geglu, fa.geglu_backward),
    "geglu_tanh": _gated("geglu_tanh",
                         lambda gate, up, precision, out: fa.geglu(gate, up, "tanh", precision=precision, out=out),
                         lambda g, gate, up, precision, out: fa.geglu_backward(g, gate, up, "tanh",
                                                                              precision=precision, out=out)),
}

# For inference: fastact's NumPy function of one tensor, straight on its memory
_UNTRACKED = {
    "gelu": fa.gelu, "gelu_tanh": lambda x, precision: fa.gelu(x, "tanh", precision=precision),
    "silu": fa.silu, "quick_gelu": fa.quick_gelu, "relu": fa.relu, "sigmoid": fa.sigmoid, "tanh": fa.tanh,
    "softplus": fa.softplus, "logsigmoid": fa.log_sigmoid, "mish": fa.mish, "elu": fa.elu, "selu": fa.selu,
    "celu": fa.celu, "leaky_relu": fa.leaky_relu, "relu6": fa.relu6, "hardtanh": fa.hardtanh, "hardsigmoid": fa.hardsigmoid,
    "hardswish": fa.hardswish, "softmax": fa.softmax, "log_softmax": fa.log_softmax, "glu": fa.glu,
}
# for inplace=True without autograd: fastact straight into the tensor's memory
_FORWARD_ARRAYS = {key: _UNTRACKED[key] for key in ("silu", "relu", "mish", "elu", "selu", "celu", "leaky_relu",
                                                    "relu6", "hardtanh", "hardsigmoid", "hardswish")}


def _run(name, key, tensors, values, fallback, inplace=False, precision="fast"):
    # (the functions of one tensor try _run_untracked first themselves)
    if precision not in ("fast", "accurate"):
        raise ValueError(f"fastact.torch.{name}: precision must be 'fast' or 'accurate', not {precision!r}")
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"fastact.torch.{name}: expected a torch.Tensor, not {type(t).__name__} "
                            f"(fastact.{name} takes NumPy arrays)")
    if not _supported(*tensors):
        _warn_fallback(name, tensors)
        return fallback()
    if inplace:
        x = tensors[0]
        if (torch.compiler.is_compiling() or (torch.is_grad_enabled() and x.requires_grad)
                or any(step == 0 and size > 1 for step, size in zip(x.stride(), x.shape))):
            return fallback()  # torch's in-place op: autograd's and overlap checks, tracing
        array = _array(x)
        _FORWARD_ARRAYS[key](array, *values, precision=precision, out=array)
        torch.autograd.graph.increment_version(x)  # a tensor saved for backward was overwritten
        return x
    return _OPS[key].op(*tensors, *values, precision)


# the inference path's tests, bound once: each lookup counts in a 1000-element call
_TENSOR, _STRIDED, _grad_enabled = torch.Tensor, torch.strided, torch.is_grad_enabled
_compiling = torch.compiler.is_compiling
_tracing = getattr(torch._C, "_is_tracing", torch.jit.is_tracing)  # what torch.jit.is_tracing asks, less a call
_DTYPE_CODES = {torch.float16: 0, torch.float32: 1, torch.float64: 2}  # run_on_memory's, and the dtypes served
_ROWS_ON_MEMORY = {"softmax": 0, "log_softmax": 1}  # along the last axis, float32 and float64 (codes 1, 2)
_TIERS = ("fast", "accurate")
_ext.bind_torch(_TENSOR, _STRIDED, _DTYPE_CODES, _grad_enabled, _tracing)


_OPENMP_RUNTIMES = ("libgomp", "libomp", "libiomp5")


def _openmp_runtime_path(mapped, torch_dir):
    """The OpenMP runtime PyTorch calls, among the mapped files' paths (in
    /proc/self/maps order); None where there is none, or two and neither in
    torch's own folder (scikit-learn, for one, carries its own libgomp)."""
    import os

    paths = list(dict.fromkeys(p for p in mapped if os.path.basename(p).startswith(_OPENMP_RUNTIMES)))
    if len(paths) > 1:
        paths = [p for p in paths if p.startswith(os.path.join(torch_dir, ""))]
    return paths[0] if len(paths) == 1 else None


def _openmp_entry_points():
    """GOMP_parallel and omp_get_max_threads of the OpenMP runtime PyTorch
    loaded (GCC's libgomp or LLVM's libomp, which both export the first), as
    addresses; (0, 0) where there is none to find. Its workers spin after
    each of PyTorch's operations: calls on tensors split over them instead
    of waking fastact's own pool on the cores they hold."""
    import ctypes
    import os
    import sys

    if not torch.backends.openmp.is_available():
        return 0, 0
    torch_dir = os.path.dirname(torch.__file__)
    try:
        if sys.platform.startswith("linux"):
            with open("/proc/self/maps") as maps:  # address, perms, offset, dev, inode, path
                mapped = [fields[5].strip() for fields in (line.split(maxsplit=5) for line in maps)
                          if len(fields) == 6]
        elif sys.platform == "darwin":
            lib = os.path.join(torch_dir, "lib")
            mapped = [os.path.join(lib, name) for name in sorted(os.listdir(lib))]
        else:
            return 0, 0
    except OSError:
        return 0, 0
    path = _openmp_runtime_path(mapped, torch_dir)
    if path is None:
        return 0, 0
    try:
        runtime = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_LOCAL)
        parallel, max_threads = runtime.GOMP_parallel, runtime.omp_get_max_threads
    except (OSError, AttributeError):  # not loaded after all, or not an OpenMP runtime
        return 0, 0
    return ctypes.cast(parallel, ctypes.c_void_p).value, ctypes.cast(max_threads, ctypes.c_void_p).value


_ext.use_openmp(*_openmp_entry_points())
_dynamo_compiling = torch.compiler.is_dynamo_compiling  # True where dynamo traces: it takes the custom op
_tensor_untracked, _rows_untracked = _ext.tensor_untracked, _ext.rows_untracked  # every check in one C call


def _run_untracked(key, x, values, precision):
    """The result when no autograd graph, tracer or tensor subclass sees this
    call (inference_mode, no_grad, or an input that needs no gradient): the
    kernel on the tensor's memory, without the custom op's dispatch, which
    costs more than a 1000-element kernel. None when that does not apply."""
    if type(x) is not _TENSOR:
        return None
    code = _DTYPE_CODES.get(x.dtype)
    if (code is None or not x.is_cpu or x.layout is not _STRIDED or precision not in _TIERS
            or (x.requires_grad and _grad_enabled()) or _compiling() or _tracing()):
        return None
    if x.is_neg():  # a lazily negated view (torch._neg_view): its memory holds -x
        x = x.resolve_neg()
    operation = _ON_MEMORY.get(key) if not values else None
    if operation is not None and x.is_contiguous():
        result = _ext.tensor_on_memory(operation, precision == "accurate", code, x)
        if result is not None:
            return result
    row_op = _ROWS_ON_MEMORY.get(key)
    if (row_op is not None and code and values[0] in (-1, x.ndim - 1) and x.ndim and x.numel()
            and x.is_contiguous()):
        result = _ext.rows_on_memory(row_op, precision == "accurate", code, x)
        if result is not None:
            return result
    if x.ndim == 0:  # NumPy's functions return a scalar there
        return None
    array = x.detach().numpy() if x.requires_grad else x.numpy()
    return torch.from_numpy(_UNTRACKED[key](array, *values, precision=precision))


def _on_memory(name):
    """(op, direction, (fast tier, accurate tier), (fast ufunc, accurate ufunc))
    of the ufunc `name`, for _ext.tensor_on_memory: the same loop, and bits,
    as fastact's NumPy call."""
    op, direction, fast, *_ = _ext.ufunc_operations[name]
    accurate_name = name + "_accurate" if name + "_accurate" in _ext.UFUNCS else name
    accurate = _ext.ufunc_operations[accurate_name]
    if accurate[:2] != (op, direction):
        raise RuntimeError(f"fastact.torch: {accurate_name} is not {name}'s other tier")
    return op, direction, (fast, accurate[2]), (_ext.UFUNCS[name], _ext.UFUNCS[accurate_name])


# The one-input ops without parameters, straight on a contiguous tensor's memory
_ON_MEMORY = {key: _on_memory(name) for key, name in (
    ("gelu", "gelu"), ("gelu_tanh", "gelu_tanh"), ("silu", "silu"), ("quick_gelu", "quick_gelu"),
    ("relu", "relu"), ("sigmoid", "sigmoid"), ("tanh", "tanh"), ("logsigmoid", "log_sigmoid"),
    ("mish", "mish"), ("selu", "selu"), ("relu6", "relu6"), ("hardsigmoid", "hardsigmoid"),
    ("hardswish", "hardswish"))}


def gelu(input, approximate="none", *, precision="fast"):
    """torch.nn.functional.gelu, computed by fastact (exact or tanh form)."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"fastact.torch.gelu: approximate must be 'none' or 'tanh', not {approximate!r}")
    key = "gelu_tanh" if approximate == "tanh" else "gelu"
    result = None if _dynamo_compiling() else _tensor_untracked(_ON_MEMORY[key], precision, input)
    if result is None:
        result = _run_untracked(key, input, (), precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("gelu", key, (input,), (), lambda: F.gelu(input, approximate=approximate), precision=precision)


def silu(input, inplace=False, *, precision="fast"):
    """torch.nn.functional.silu, computed by fastact."""
    result = None if inplace or _dynamo_compiling() else _tensor_untracked(_ON_MEMORY["silu"], precision, input)
    if result is None and not inplace:
        result = _run_untracked("silu", input, (), precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("silu", "silu", (input,), (), lambda: F.silu(input, inplace=inplace), inplace, precision=precision)


def quick_gelu(input, *, precision="fast"):
    """input·sigmoid(1.702·input), CLIP's QuickGELU, computed by fastact."""
    result = None if _dynamo_compiling() else _tensor_untracked(_ON_MEMORY["quick_gelu"], precision, input)
    if result is None:
        result = _run_untracked("quick_gelu", input, (), precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("quick_gelu", "quick_gelu", (input,), (), lambda: input * torch.sigmoid(1.702 * input),
                precision=precision)


def relu(input, inplace=False, *, precision="fast"):
    """torch.nn.functional.relu, computed by fastact."""
    result = None if inplace or _dynamo_compiling() else _tensor_untracked(_ON_MEMORY["relu"], precision, input)
    if result is None and not inplace:
        result = _run_untracked("relu", input, (), precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("relu", "relu", (input,), (), lambda: F.relu(input, inplace=inplace), inplace, precision=precision)


def sigmoid(input, *, precision="fast"):
    """torch.sigmoid, computed by fastact."""
    result = None if _dynamo_compiling() else _tensor_untracked(_ON_MEMORY["sigmoid"], precision, input)
    if result is None:
        result = _run_untracked("sigmoid", input, (), precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("sigmoid", "sigmoid", (input,), (), lambda: torch.sigmoid(input), precision=precision)


def tanh(input, *, precision="fast"):
    """torch.tanh, computed by fastact."""
    result = None if _dynamo_compiling() else _tensor_untracked(_ON_MEMORY["tanh"], precision, input)
    if result is None:
        result = _run_untracked("tanh", input, (), precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("tanh", "tanh", (input,), (), lambda: torch.tanh(input), precision=precision)


def softplus(input, beta=1.0, threshold=20.0, *, precision="fast"):
    """torch.nn.functional.softplus, computed by fastact (beta > 0)."""
    values = (float(beta), float(threshold))
    result = _run_untracked("softplus", input, values, precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("softplus", "softplus", (input,), values,
                lambda: F.softplus(input, beta=beta, threshold=threshold), precision=precision)


def logsigmoid(input, *, precision="fast"):
    """torch.nn.functional.logsigmoid, computed by fastact."""
    result = None if _dynamo_compiling() else _tensor_untracked(_ON_MEMORY["logsigmoid"], precision, input)
    if result is None:
        result = _run_untracked("logsigmoid", input, (), precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("logsigmoid", "logsigmoid", (input,), (), lambda: F.logsigmoid(input), precision=precision)


def mish(input, inplace=False, *, precision="fast"):
    """torch.nn.functional.mish, computed by fastact."""
    result = None if inplace or _dynamo_compiling() else _tensor_untracked(_ON_MEMORY["mish"], precision, input)
    if result is None and not inplace:
        result = _run_untracked("mish", input, (), precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("mish", "mish", (input,), (), lambda: F.mish(input, inplace=inplace), inplace, precision=precision)


def elu(input, alpha=1.0, inplace=False, *, precision="fast"):
    """torch.nn.functional.elu, computed by fastact."""
    values = (float(alpha),)
    result = None if inplace else _run_untracked("elu", input, values, precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("elu", "elu", (input,), values,
                lambda: F.elu(input, alpha, inplace=inplace), inplace, precision=precision)


def selu(input, inplace=False, *, precision="fast"):
    """torch.nn.functional.selu, computed by fastact."""
    result = None if inplace or _dynamo_compiling() else _tensor_untracked(_ON_MEMORY["selu"], precision, input)
    if result is None and not inplace:
        result = _run_untracked("selu", input, (), precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("selu", "selu", (input,), (), lambda: F.selu(input, inplace=inplace), inplace, precision=precision)


def celu(input, alpha=1.0, inplace=False, *, precision="fast"):
    """torch.nn.functional.celu, computed by fastact (alpha > 0)."""
    values = (float(alpha),)
    result = None if inplace else _run_untracked("celu", input, values, precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("celu", "celu", (input,), values,
                lambda: F.celu(input, alpha, inplace=inplace), inplace, precision=precision)


def leaky_relu(input, negative_slope=0.01, inplace=False, *, precision="fast"):
    """torch.nn.functional.leaky_relu, computed by fastact."""
    values = (float(negative_slope),)
    result = None if inplace else _run_untracked("leaky_relu", input, values, precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("leaky_relu", "leaky_relu", (input,), values,
                lambda: F.leaky_relu(input, negative_slope, inplace=inplace), inplace, precision=precision)


def relu6(input, inplace=False, *, precision="fast"):
    """torch.nn.functional.relu6, computed by fastact."""
    result = None if inplace or _dynamo_compiling() else _tensor_untracked(_ON_MEMORY["relu6"], precision, input)
    if result is None and not inplace:
        result = _run_untracked("relu6", input, (), precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("relu6", "relu6", (input,), (), lambda: F.relu6(input, inplace=inplace), inplace, precision=precision)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False, *, precision="fast"):
    """torch.nn.functional.hardtanh, computed by fastact."""
    values = (float(min_val), float(max_val))
    result = None if inplace else _run_untracked("hardtanh", input, values, precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("hardtanh", "hardtanh", (input,), values,
                lambda: F.hardtanh(input, min_val, max_val, inplace=inplace), inplace, precision=precision)


def hardsigmoid(input, inplace=False, *, precision="fast"):
    """torch.nn.functional.hardsigmoid, computed by fastact."""
    result = None if inplace or _dynamo_compiling() else _tensor_untracked(_ON_MEMORY["hardsigmoid"], precision, input)
    if result is None and not inplace:
        result = _run_untracked("hardsigmoid", input, (), precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("hardsigmoid", "hardsigmoid", (input,), (),
                lambda: F.hardsigmoid(input, inplace=inplace), inplace, precision=precision)


def hardswish(input, inplace=False, *, precision="fast"):
    """torch.nn.functional.hardswish, computed by fastact."""
    result = None if inplace or _dynamo_compiling() else _tensor_untracked(_ON_MEMORY["hardswish"], precision, input)
    if result is None and not inplace:
        result = _run_untracked("hardswish", input, (), precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("hardswish", "hardswish", (input,), (),
                lambda: F.hardswish(input, inplace=inplace), inplace, precision=precision)


def _softmax_dim(name, input, dim):
    if dim is None:  # torch's deprecated implicit choice, with its warning
        _warn(f"Implicit dimension choice for {name} has been deprecated. "
              "Change the call to include dim=X as an argument.", UserWarning, stacklevel=3)
        return 0 if input.dim() in (0, 1, 3) else 1
    return int(dim)


def softmax(input, dim=None, dtype=None, *, precision="fast"):
    """torch.nn.functional.softmax along dim, computed by fastact."""
    if dtype is None and not _dynamo_compiling():  # every check in one C call
        result = _rows_untracked(0, precision, dim, input)
        if result is not None:
            return result
    dim = _softmax_dim("softmax", input, dim)
    if dtype is not None:
        input = input.to(dtype)
    result = _run_untracked("softmax", input, (dim,), precision)
    if result is not None:  # no autograd: the row loop on the tensor's memory
        return result
    return _run("softmax", "softmax", (input,), (dim,), lambda: F.softmax(input, dim), precision=precision)


def log_softmax(input, dim=None, dtype=None, *, precision="fast"):
    """torch.nn.functional.log_softmax along dim, computed by fastact."""
    if dtype is None and not _dynamo_compiling():  # every check in one C call
        result = _rows_untracked(1, precision, dim, input)
        if result is not None:
            return result
    dim = _softmax_dim("log_softmax", input, dim)
    if dtype is not None:
        input = input.to(dtype)
    result = _run_untracked("log_softmax", input, (dim,), precision)
    if result is not None:  # no autograd: the row loop on the tensor's memory
        return result
    return _run("log_softmax", "log_softmax", (input,), (dim,),
                lambda: F.log_softmax(input, dim), precision=precision)


def glu(input, dim=-1, *, precision="fast"):
    """torch.nn.functional.glu: a·σ(b) of input's two halves along dim, computed by fastact."""
    values = (int(dim),)
    result = _run_untracked("glu", input, values, precision)
    if result is not None:  # no autograd: the kernel on the tensor's memory
        return result
    return _run("glu", "glu", (input,), values, lambda: F.glu(input, dim), precision=precision)


def swiglu(gate, up, *, precision="fast"):
    """silu(gate)·up in one pass (gate and up broadcast together)."""
    return _run("swiglu", "swiglu", (gate, up), (), lambda: F.silu(gate) * up, precision=precision)


def geglu(gate, up, approximate="none", *, precision="fast"):
    """gelu(gate, approximate)·up in one pass (gate and up broadcast together)."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"fastact.torch.geglu: approximate must be 'none' or 'tanh', not {approximate!r}")
    key = "geglu_tanh" if approximate == "tanh" else "geglu"
    return _run("geglu", key, (gate, up), (), lambda: F.gelu(gate, approximate=approximate) * up, precision=precision)


# ---- modules: torch's own classes, with forward computed by fastact --------

class _Tier:
    """precision="fast" (default) or "accurate": fastact's tier, after torch's own arguments."""
    precision = "fast"

    def __init__(self, *args, precision="fast", **kwargs):
        super().__init__(*args, **kwargs)
        if precision not in ("fast", "accurate"):
            raise ValueError(f"fastact.torch.{type(self).__name__}: precision must be 'fast' or 'accurate', "
                             f"not {precision!r}")
        self.precision = precision

    def extra_repr(self):
        base = super().extra_repr()
        return base if self.precision == "fast" else ", ".join(filter(None, (base, "precision='accurate'")))


class GELU(_Tier, torch.nn.GELU):
    def forward(self, input):
        return gelu(input, approximate=self.approximate, precision=self.precision)


class SiLU(_Tier, torch.nn.SiLU):
    def forward(self, input):
        return silu(input, inplace=self.inplace, precision=self.precision)


class QuickGELU(_Tier, torch.nn.Module):
    """input·sigmoid(1.702·input) (torch has no module of its own for it)."""

    def forward(self, input):
        return quick_gelu(input, precision=self.precision)


class ReLU(_Tier, torch.nn.ReLU):
    def forward(self, input):
        return relu(input, inplace=self.inplace, precision=self.precision)


class Sigmoid(_Tier, torch.nn.Sigmoid):
    def forward(self, input):
        return sigmoid(input, precision=self.precision)


class Tanh(_Tier, torch.nn.Tanh):
    def forward(self, input):
        return tanh(input, precision=self.precision)


class Softplus(_Tier, torch.nn.Softplus):
    def forward(self, input):
        return softplus(input, self.beta, self.threshold, precision=self.precision)


class LogSigmoid(_Tier, torch.nn.LogSigmoid):
    def forward(self, input):
        return logsigmoid(input, precision=self.precision)


class Mish(_Tier, torch.nn.Mish):
    def forward(self, input):
        return mish(input, inplace=self.inplace, precision=self.precision)


class ELU(_Tier, torch.nn.ELU):
    def forward(self, input):
        return elu(input, self.alpha, inplace=self.inplace, precision=self.precision)


class SELU(_Tier, torch.nn.SELU):
    def forward(self, input):
        return selu(input, inplace=self.inplace, precision=self.precision)


class CELU(_Tier, torch.nn.CELU):
    def forward(self, input):
        return celu(input, self.alpha, inplace=self.inplace, precision=self.precision)


class LeakyReLU(_Tier, torch.nn.LeakyReLU):
    def forward(self, input):
        return leaky_relu(input, self.negative_slope, inplace=self.inplace, precision=self.precision)


class ReLU6(_Tier, torch.nn.ReLU6):
    def forward(self, input):
        return relu6(input, inplace=self.inplace, precision=self.precision)


class Hardtanh(_Tier, torch.nn.Hardtanh):
    def forward(self, input):
        return hardtanh(input, self.min_val, self.max_val, inplace=self.inplace, precision=self.precision)


class Hardsigmoid(_Tier, torch.nn.Hardsigmoid):
    def forward(self, input):
        return hardsigmoid(input, inplace=self.inplace, precision=self.precision)


class Hardswish(_Tier, torch.nn.Hardswish):
    def forward(self, input):
        return hardswish(input, inplace=self.inplace, precision=self.precision)


class Softmax(_Tier, torch.nn.Softmax):
    def forward(self, input):
        return softmax(input, self.dim, precision=self.precision)


class LogSoftmax(_Tier, torch.nn.LogSoftmax):
    def forward(self, input):
        return log_softmax(input, self.dim, precision=self.precision)


class GLU(_Tier, torch.nn.GLU):
    def forward(self, input):
        return glu(input, self.dim, precision=self.precision)


# torch's class -> fastact's (looked up by exact type: torch's ReLU6 is a Hardtanh too)
_DROP_INS = {cls.__bases__[-1]: cls for cls in (GELU, SiLU, ReLU, Sigmoid, Tanh, Softplus, LogSigmoid, Mish, ELU,
                                                 SELU, CELU, LeakyReLU, ReLU6, Hardtanh, Hardsigmoid, Hardswish,
                                                 Softmax, LogSoftmax, GLU)}


# Other libraries' activation classes, by qualified name (never imported
# here): the drop-in that computes the same function, with its arguments.
# Each is checked on a probe before it is swapped (_probe_differs).
_FOREIGN = {
    # transformers.activations (PytorchGELUTanh is GELUTanh)
    "transformers.activations.GELUActivation": (GELU, {}),
    "transformers.activations.NewGELUActivation": (GELU, {"approximate": "tanh"}),
    "transformers.activations.GELUTanh": (GELU, {"approximate": "tanh"}),
    "transformers.activations.FastGELUActivation": (GELU, {"approximate": "tanh"}),
    "transformers.activations.AccurateGELUActivation": (GELU, {"approximate": "tanh"}),
    "transformers.activations.SiLUActivation": (SiLU, {}),
    "transformers.activations.QuickGELUActivation": (QuickGELU, {}),
    "transformers.activations.MishActivation": (Mish, {}),
    # timm.layers (activations.py, and activations_me.py's memory-efficient forms)
    "timm.layers.activations.GELU": (GELU, {}),
    "timm.layers.activations.GELUTanh": (GELU, {"approximate": "tanh"}),
    "timm.layers.activations.Swish": (SiLU, {}),
    "timm.layers.activations.QuickGELU": (QuickGELU, {}),
    "timm.layers.activations.Sigmoid": (Sigmoid, {}),
    "timm.layers.activations.Tanh": (Tanh, {}),
    "timm.layers.activations.HardSigmoid": (Hardsigmoid, {}),
    "timm.layers.activations.HardSwish": (Hardswish, {}),
    "timm.layers.activations.Mish": (Mish, {}),
    "timm.layers.activations_me.SwishMe": (SiLU, {}),
    "timm.layers.activations_me.MishMe": (Mish, {}),
    "timm.layers.activations_me.HardSigmoidMe": (Hardsigmoid, {}),
    "timm.layers.activations_me.HardSwishMe": (Hardswish, {}),
}
# Known classes that compute something fastact does not: reported, left alone.
_FOREIGN_OTHER = {
    "transformers.activations.ClippedGELUActivation": "GELU clipped to [min, max], which fastact does not compute",
    "transformers.activations.LinearActivation": "the identity",
    "transformers.activations.ReLUSquaredActivation": "relu(x)², which fastact does not compute",
    "transformers.activations.LaplaceActivation": "a Laplace-CDF activation, which fastact does not compute",
    "transformers.activations.SqrtSoftplusActivation": "sqrt(softplus(x)), which fastact does not compute",
    "transformers.activations.XIELUActivation": "xIELU (learned), which fastact does not compute",
    "timm.layers.activations.PReLU": "PReLU (learned slopes), which fastact does not compute",
    "timm.layers.activations.HardMish": "hard-Mish, which fastact does not compute",
    "timm.layers.activations_me.HardMishMe": "hard-Mish, which fastact does not compute",
}


class ReplacedActivations(dict):
    """replace_activations' result: {qualified name: class name} of what was
    swapped, and `skipped`, {qualified name: why} of the activation modules
    recognised but left as they were."""

    def __init__(self):
        super().__init__()
        self.skipped = {}


def _qualified(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def _model_dtype(model):
    for p in model.parameters():
        if p.is_floating_point():
            return p.dtype
    return torch.get_default_dtype()


def _probe_differs(original, replacement, dtype):
    """Why replacement is not original's function on a probe of dtype (None
    when it is): both run on the same inputs, from tiny to past the clamps,
    and must agree within a tolerance far above either's rounding and far
    below any other function's distance (QuickGELU and GELU differ by 2e-2, a clip at
    10 by more)."""
    if dtype not in _DTYPES:
        return f"the model's dtype {dtype} is not one fastact computes"
    grid = torch.linspace(-30.0, 30.0, 2401, dtype=torch.float64)
    tiny = torch.tensor([0.0, -0.0, 1e-30, -1e-30, 1e-7, -1e-7, 0.1, -0.1], dtype=torch.float64)
    probe = torch.cat([grid, tiny]).to(dtype)
    with torch.no_grad():  # forward itself: the modules' hooks are not the probe's business
        try:
            theirs = original.forward(probe.clone()).to(torch.float64)
        except Exception as exc:  # a module that cannot run alone (needs other inputs, state)
            return f"it could not be run on a probe ({type(exc).__name__}: {exc})"
        ours = replacement.forward(probe.clone()).to(torch.float64)
    tolerance = 1e-4 if dtype in (torch.float32, torch.float64) else 2e-2
    excess = (ours - theirs).abs() - tolerance * (1 + theirs.abs())
    if theirs.shape != ours.shape or not bool((excess <= 0).all()):
        at = int(excess.argmax()) if theirs.shape == ours.shape else 0
        return (f"its output differs from fastact's {type(replacement).__name__} on a probe "
                f"(at x = {float(probe[at]):g}: {float(theirs[at]):g} against {float(ours[at]):g})")
    return None


def _replacement(child, precision):
    """(drop-in module for child, None) or (None, why not) or (None, None) when
    child is no activation fastact knows."""
    drop_in = _DROP_INS.get(type(child))
    if drop_in is not None:  # torch's own: the same settings, no probe needed
        replacement = drop_in.__new__(drop_in)
        replacement.__dict__.update(child.__dict__)
        replacement.precision = precision
        return replacement, None
    name = _qualified(type(child))
    if name in _FOREIGN_OTHER:
        return None, _FOREIGN_OTHER[name]
    if name not in _FOREIGN:
        return None, None
    drop_in, kwargs = _FOREIGN[name]
    if getattr(child, "inplace", False) and drop_in not in (GELU, QuickGELU, Sigmoid, Tanh):
        kwargs = dict(kwargs, inplace=True)
    replacement = drop_in(**kwargs, precision=precision)
    for key in ("training", "_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_backward_hooks",
                "_backward_pre_hooks", "_is_full_backward_hook"):
        if key in child.__dict__:
            replacement.__dict__[key] = child.__dict__[key]
    return replacement, None


def replace_activations(model, *, precision="fast"):
    """Swap the activation modules inside model for fastact's, in place,
    keeping their settings, hooks and training mode, in fastact's `precision`
    tier: torch's own classes (exactly, not subclasses), and those of
    transformers and timm that compute one of fastact's functions (known by
    qualified name; neither package is imported), each after a probe in the
    model's dtype shows the replacement computes the same function. model
    itself is left as it is. Returns {qualified name: class name} of what was
    swapped; its `skipped` is {qualified name: why} of the activations it
    recognised and left alone (clipped GELU, ReLU², a probe that
    disagreed, ...)."""
    if precision not in ("fast", "accurate"):
        raise ValueError(f"fastact.torch.replace_activations: precision must be 'fast' or 'accurate', "
                         f"not {precision!r}")
    result, dtype, checked = ReplacedActivations(), None, {}
    for parent_name, parent in list(model.named_modules()):
        for child_name, child in list(parent.named_children()):
            where = f"{parent_name}.{child_name}" if parent_name else child_name
            replacement, why = _replacement(child, precision)
            if replacement is not None and type(child) not in _DROP_INS:
                dtype = dtype or _model_dtype(model)
                key = (type(child), repr(child), dtype)  # one probe per kind of module
                if key not in checked:
                    checked[key] = _probe_differs(child, replacement, dtype)
                why = checked[key]
                replacement = None if why else replacement
            if replacement is None:
                if why:
                    result.skipped[where] = f"{_qualified(type(child))}: {why}"
                continue
            setattr(parent, child_name, replacement)
            result[where] = type(child).__name__
    return result
