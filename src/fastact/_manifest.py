"""The one list of fastact's operations.

Each row is one kernel family: its name, its inputs and outputs in each
direction, its parameters, dtypes, precision tiers, thread-cost class, public
function, accuracy bound and documentation. tools/gen_manifest.py turns it
into the C enum and per-ISA kernel tables (src_c/fa_ops.h) and the Cython
ufuncs and public functions (src/fastact/_ops.pxi); the registry behind the
tests, benchmarks and CLI reads it at run time (fastact._registry).

A Python table rather than a C X-macro list: the Python side (public
signatures, docstrings, tests, references) needs as much from each row as C
does, and Cython cannot read C macros. Plain data only: this module is
imported by the generator without building fastact.
"""
from dataclasses import dataclass
from typing import Optional, Tuple

DTYPES = ("float16", "float32", "float64")  # storage types, NumPy's promotion order
KERNEL_DTYPES = ("f32", "f64")              # what the kernels compute in; float16 uses f32
TIERS = ("accurate", "fast")               # precision tiers, the default first
# the fast tier's bounds, for every op that has one: forward ULPs of the
# result, backward ULPs of the derivative's largest term
FAST_FORWARD_ULP, FAST_BACKWARD_ULP = 4.0, 8.0
DIRECTIONS = ("fwd", "bwd")


@dataclass(frozen=True)
class Param:
    """A float parameter of an operation, passed to its kernels in a struct."""
    name: str
    default: float
    doc: str


@dataclass(frozen=True)
class Form:
    """This operation is one form of public function `function`, picked by
    keyword `keyword` = `value` (gelu_tanh is gelu(x, approximate="tanh"))."""
    function: str
    keyword: str
    value: str
    is_default: bool = False


@dataclass(frozen=True)
class Op:
    name: str                         # ufunc and kernel name
    doc: str                          # forward: formula and special values
    backward_doc: str
    algorithm: str                    # "lanes": kernels_lanes.inc; "relu": kernels.inc
    cost: str                         # "memory" or "compute": how the work scales across threads
    ns_per_element: Tuple[float, float]  # estimated cost (f32, f64), one AVX2 core; see below
    inputs: Tuple[str, ...] = ("x",)
    outputs: Tuple[str, ...] = ("out",)
    backward_inputs: Tuple[str, ...] = ("grad_output", "x")
    backward_outputs: Tuple[str, ...] = ("grad_input",)
    params: Tuple[Param, ...] = ()
    dtypes: Tuple[str, ...] = DTYPES
    tiers: Tuple[str, ...] = TIERS
    form: Optional[Form] = None       # None: its own public function, named like the op
    exact: bool = False               # bit-exact (piecewise linear)
    forward_ulp: float = 2.0          # bound, in ULPs of the result
    backward_ulp: float = 4.0         # bound, in ULPs of the derivative's largest term
    torch: Tuple[str, str] = ("", "")  # the same operation in PyTorch, as expressions in x, g
    # f(-inf), f(0), f(+inf), f'(-inf), f'(+inf): the limits the special-value tests
    # check. The default is the x·g(x) family (relu, GELU, SiLU), which grows like x:
    # f(huge) = huge, f'(huge) = 1, and f(±tiny) is ±tiny/2 rounded (tiny or -0).
    # A bounded function (sigmoid) saturates at its limits, and f(±tiny) = f(0).
    limits: Tuple[float, float, float, float, float] = (-0.0, 0.0, float("inf"), 0.0, 1.0)

    @property
    def public(self):
        return self.form.function if self.form else self.name

    def bound(self, tier, direction):
        """The accuracy bound of this op's `tier` kernels in `direction` ("fwd"/"bwd")."""
        if self.exact:
            return 0.0
        if tier == TIERS[0]:
            return self.forward_ulp if direction == "fwd" else self.backward_ulp
        return FAST_FORWARD_ULP if direction == "fwd" else FAST_BACKWARD_ULP


# ns_per_element: a forward call's cost per element on one core of a 2-core AMD
# EPYC (Zen 3) with AVX2, measured with tools/thread_threshold.py --costs. It
# is only an estimate: the thread split uses each kernel's own measured cost
# (src_c/threads.c), and this answers fastact._ext.thread_threshold until then.
OPS = (
    Op("relu",
       doc="max(x, 0): x where x > 0 or x is NaN, else +0.0 (relu(-0.0) is +0.0). Exact.",
       backward_doc="grad_output where x > 0, 0 where x <= 0, NaN where x is NaN. Exact.",
       algorithm="relu", cost="memory", ns_per_element=(0.24, 0.42),
       exact=True, forward_ulp=0, backward_ulp=0, tiers=("accurate",),  # exact: one tier serves both
       torch=("F.relu(x)", "aten.threshold_backward(g, x, 0)")),
    Op("gelu",
       doc="x·Φ(x), the exact GELU (Φ: the standard normal CDF). gelu(-inf) = -0.0, "
           "gelu(+inf) = +inf, NaN gives NaN.",
       backward_doc="grad_output·(Φ(x) + x·φ(x)), the exact GELU's derivative; 1 at +inf, -0.0 at -inf.",
       algorithm="lanes", cost="compute", ns_per_element=(3.0, 16.0),
       form=Form("gelu", "approximate", "none", is_default=True),
       torch=("F.gelu(x)", "aten.gelu_backward(g, x)")),
    Op("gelu_tanh",
       doc="0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), the tanh approximation of GELU. "
           "-0.0 at -inf, +inf at +inf, NaN gives NaN.",
       backward_doc="grad_output times the derivative of the tanh form; 1 at +inf, -0.0 at -inf.",
       algorithm="lanes", cost="compute", ns_per_element=(2.3, 5.7),
       form=Form("gelu", "approximate", "tanh"),
       torch=("F.gelu(x, approximate='tanh')", "aten.gelu_backward(g, x, approximate='tanh')")),
    Op("silu",
       doc="x·σ(x), SiLU or Swish (σ: the logistic sigmoid). -0.0 at -inf, +inf at +inf, "
           "NaN gives NaN.",
       backward_doc="grad_output·σ(x)·(1 + x·(1 - σ(x))); 1 at +inf, -0.0 at -inf.",
       algorithm="lanes", cost="compute", ns_per_element=(1.6, 3.8),
       torch=("F.silu(x)", "aten.silu_backward(g, x)")),
    Op("sigmoid",
       doc="σ(x) = 1/(1 + exp(-x)), the logistic sigmoid. +0.0 at -inf, 1 at +inf, 0.5 at "
           "0, NaN gives NaN.",
       backward_doc="grad_output·σ(x)·(1 - σ(x)); 0 at -inf and +inf.",
       algorithm="lanes", cost="compute", ns_per_element=(1.6, 3.8),  # as silu's; not yet measured
       limits=(0.0, 0.5, 1.0, 0.0, 0.0),
       torch=("aten.sigmoid(x)", "aten.sigmoid_backward(g, aten.sigmoid(x))")),
)

OPS_BY_NAME = {op.name: op for op in OPS}


def public_functions():
    """{public name: [ops]}: each public function and the ops behind it (its forms)."""
    functions = {}
    for op in OPS:
        functions.setdefault(op.public, []).append(op)
    return functions
