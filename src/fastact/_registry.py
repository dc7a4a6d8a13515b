"""Every operation as the tests, benchmarks and CLI use it: the manifest's
rows (_manifest.py) joined with the public functions and the float64
references (_reference.py, found by name: NAME, NAME_backward and, for
smooth functions, NAME_backward_scale)."""
from dataclasses import dataclass
from functools import partial
from typing import Callable, Optional

import fastact

from . import _reference as ref
from ._manifest import OPS, Op


@dataclass(frozen=True)
class Activation:
    name: str                       # the op's name, e.g. "gelu_tanh"
    op: Op                          # its manifest row
    forward: Callable               # fastact: f(x, out=None), as users call it
    backward: Callable              # fastact: f(grad_output, x, out=None)
    ref_forward: Callable           # float64 NumPy/SciPy reference
    ref_backward: Callable
    ref_backward_scale: Optional[Callable]  # |largest term| of f'(x); None: exact function

    @property
    def exact(self):
        return self.op.exact

    @property
    def forward_ulp(self):
        return self.op.forward_ulp

    @property
    def backward_ulp(self):
        return self.op.backward_ulp


def _activation(op):
    forward = getattr(fastact, op.public)
    backward = getattr(fastact, op.public + "_backward")
    if op.form and not op.form.is_default:
        forward = partial(forward, **{op.form.keyword: op.form.value})
        backward = partial(backward, **{op.form.keyword: op.form.value})
    return Activation(op.name, op, forward, backward, getattr(ref, op.name), getattr(ref, op.name + "_backward"),
                      None if op.exact else getattr(ref, op.name + "_backward_scale"))


ACTIVATIONS = {op.name: _activation(op) for op in OPS}
