"""fastact's NumPy functions called with torch tensors: computed on NumPy
views of the tensors (no copy), returned as tensors, as NumPy's ufuncs return
them but without the DeprecationWarning that torch's old __array_wrap__
signature costs there. A tensor that requires grad, or lives off the CPU,
raises: fastact.torch has the autograd-aware ops and torch's fallback."""
import numpy as np


def _to_array(name, tensor):
    import torch
    if tensor.device.type != "cpu":
        raise TypeError(f"fastact.{name}: a {tensor.device.type} tensor; fastact computes CPU arrays "
                        "(fastact.torch runs torch's own op on other devices)")
    if tensor.requires_grad and torch.is_grad_enabled():
        raise TypeError(f"fastact.{name}: the tensor requires grad; fastact.torch computes it with autograd "
                        "(fastact's backward kernels), or pass tensor.detach()")
    if tensor.dtype == torch.bfloat16:
        try:
            import ml_dtypes
        except ImportError:
            raise TypeError(f"fastact.{name}: bfloat16 tensors need ml_dtypes "
                            '(pip install "fastact[bfloat16]")') from None
        return tensor.detach().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.detach().numpy()


def _to_tensor(array):
    import torch
    array = np.asarray(array)
    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def on_tensors(name, function, args, out, kwargs):
    import torch

    def convert(a):
        return _to_array(name, a) if isinstance(a, torch.Tensor) else a
    arrays = tuple(convert(a) for a in args)
    out_arrays = tuple(convert(o) for o in out) if isinstance(out, tuple) else convert(out)
    result = function(*arrays, out=out_arrays, **kwargs)
    if isinstance(result, tuple):  # an output given (tensor or array) is returned as itself
        given = out if isinstance(out, tuple) else (None,) * len(result)
        return tuple(_to_tensor(r) if o is None else o for o, r in zip(given, result))
    return _to_tensor(result) if out is None else out
