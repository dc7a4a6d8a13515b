"""One table of every activation, shared by the tests, the benchmarks and the
CLI, so adding a function means adding one entry here (plus its kernel)."""
from dataclasses import dataclass
from functools import partial
from typing import Callable, Optional

from . import _reference as ref
from . import gelu, gelu_backward, relu, relu_backward, silu, silu_backward


@dataclass(frozen=True)
class Activation:
    name: str                       # registry key, e.g. "gelu_tanh"
    forward: Callable               # fastact: f(x, out=None)
    backward: Callable              # fastact: f(grad_output, x, out=None)
    ref_forward: Callable           # float64 NumPy/SciPy reference
    ref_backward: Callable
    ref_backward_scale: Optional[Callable]  # |largest term| of f'(x); None: exact function
    torch_forward: Optional[str]    # expression on torch.nn.functional / torch.ops.aten
    torch_backward: Optional[str]
    exact: bool = False             # relu: results must be bit-exact
    forward_ulp: float = 2.0        # accuracy bounds (float32 and float64)
    backward_ulp: float = 4.0       # in ULPs of the derivative's largest term


ACTIVATIONS = {
    a.name: a for a in (
        Activation("relu", relu, relu_backward, ref.relu, ref.relu_backward, None,
                   "relu", "threshold_backward", exact=True, forward_ulp=0, backward_ulp=0),
        Activation("gelu", gelu, gelu_backward, ref.gelu, ref.gelu_backward,
                   ref.gelu_backward_scale, "gelu", "gelu_backward"),
        Activation("gelu_tanh", partial(gelu, approximate="tanh"),
                   partial(gelu_backward, approximate="tanh"),
                   partial(ref.gelu, approximate="tanh"),
                   partial(ref.gelu_backward, approximate="tanh"),
                   partial(ref.gelu_backward_scale, approximate="tanh"),
                   "gelu_tanh", "gelu_tanh_backward"),
        Activation("silu", silu, silu_backward, ref.silu, ref.silu_backward,
                   ref.silu_backward_scale, "silu", "silu_backward"),
    )
}
