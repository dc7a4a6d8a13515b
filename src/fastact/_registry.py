"""Every operation as the tests, benchmarks and CLI use it: the manifest's
rows (_manifest.py) joined with the public functions and the float64
references (_reference.py, found by name: NAME, NAME_backward and, for
smooth functions, NAME_backward_scale), once per precision tier."""
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
    tier: str                       # its precision tier, e.g. "fast"
    forward: Callable               # fastact: f(x, out=None), as users call it
    backward: Callable              # fastact: f(grad_output, x, out=None)
    ref_forward: Callable           # float64 NumPy/SciPy reference
    ref_backward: Callable
    ref_backward_scale: Optional[Callable]  # |largest term| of f'(x); None: exact function

    @property
    def key(self):
        """The op's name, with the tier after it but for the default tier: gelu_tanh_accurate."""
        return self.name if self.tier == self.op.default_tier else f"{self.name}_{self.tier}"

    def ufunc_name(self, direction, defaults=False):
        """fastact.ufuncs' name for direction "forward" or "backward": gelu_backward_accurate. With
        parameters, the ufunc taking them as operands (elu_with_params), or with defaults=True the one
        that has the defaults (elu)."""
        base = self.name if direction == "forward" else f"{self.name}_backward"
        if self.op.params and not defaults:
            base += "_with_params"
        return base if self.tier == self.op.default_tier else f"{base}_{self.tier}"

    @property
    def may_overflow(self):
        """Whether a finite x can give an infinite result (selu: f = 1.05 x for large x),
        which rightly raises the overflow flag."""
        return abs(self.op.limits[4]) > 1 or abs(self.op.limits[3]) > 1

    @property
    def params(self):
        """The parameters' defaults: the ufuncs take them as inputs after the arrays."""
        return tuple(p.default for p in self.op.params)

    @property
    def exact(self):
        return self.op.exact_in(self.tier)

    @property
    def forward_ulp(self):
        return self.op.bound(self.tier, "fwd")

    @property
    def backward_ulp(self):
        return self.op.bound(self.tier, "bwd")


def _activation(op, tier):
    forward = getattr(fastact, op.public)
    backward = getattr(fastact, op.public + "_backward")
    keywords = {} if tier == op.default_tier else {"precision": tier}  # the default as users get it
    if op.form and not op.form.is_default:
        keywords[op.form.keyword] = op.form.value
    if keywords:
        forward, backward = partial(forward, **keywords), partial(backward, **keywords)
    return Activation(op.name, op, tier, forward, backward, getattr(ref, op.name),
                      getattr(ref, op.name + "_backward"),
                      None if op.exact_in(tier) else getattr(ref, op.name + "_backward_scale"))


# the default tier of every elementwise activation (one array in, with a backward), by op name
ACTIVATIONS = {op.name: _activation(op, op.default_tier) for op in OPS if op.has_backward and op.kind == "elementwise"}
# every tier of every activation, by key (gelu, gelu_accurate, ...), op by op
VARIANTS = {a.key: a for a in (_activation(op, tier) for op in OPS
                                if op.has_backward and op.kind == "elementwise" for tier in op.tiers)}
