"""The one list of fastact's operations.

Each row is one kernel family: its name, its inputs and outputs in each
direction, its parameters, dtypes, precision tiers, thread-cost class, public
function, accuracy bound and documentation. tools/gen_manifest.py turns it
into the C enum and per-ISA kernel tables (src_c/generated/fa_ops.h) and the Cython
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
TIERS = ("accurate", "fast")               # precision tiers, in the kernel tables' order
DEFAULT_TIER = "fast"                      # what a call without precision= computes
# the fast tier's bounds, for every op that has one: forward ULPs of the
# result, backward ULPs of the derivative's largest term
FAST_FORWARD_ULP, FAST_BACKWARD_ULP = 4.0, 8.0
DIRECTIONS = ("fwd", "bwd")


# what a parameter's value must be; the public functions check it
PARAM_CHECKS = {
    "finite": "a finite number",
    "positive": "a finite number > 0",
    "positive_or_inf": "a number > 0",
}


@dataclass(frozen=True)
class Param:
    """A float parameter of an operation. Its ufuncs take it as an extra
    float64 input after the arrays (so NumPy broadcasts it), and its kernels
    get it in a struct of doubles (fa_params_<op>, in manifest order)."""
    name: str
    default: float
    doc: str
    check: str = "finite"  # a PARAM_CHECKS key


@dataclass(frozen=True)
class Form:
    """This operation is one form of public function `function`, picked by
    keyword `keyword` = `value` (gelu_tanh is gelu(x, approximate="tanh"))."""
    function: str
    keyword: str
    value: str
    is_default: bool = False


@dataclass(frozen=True)
class TieSide:
    """A 16-bit tie that even float64 cannot decide. In a region of its
    argument an output is t + d: t = coefficient · the product of inputs
    `leading` (· parameter `param` too, if param_in_leading): x/2,
    grad_output/2, up·gate, -alpha; d a term of known sign (x²/6, g·x/4,
    -up·gate·e^-gate) that float64 can lose (bfloat16's inputs reach
    2^-133). Where the float64 result is exactly t and t is a tie, the true
    value lies on d's side: sign · the signs of inputs `times` · the sign of
    parameter `param`. Indices are the direction's inputs (forward: inputs;
    backward: backward_inputs), its outputs and the op's params.

    region "zero": 0 < |arg| < 2^-10 (|arg · param| if scaled_by_param, as
    softplus' beta·x; arg < 0 only if negative_only); "positive": arg > 8;
    "negative": arg < 0."""
    arg: int                          # the input the output is expanded in
    leading: Tuple[int, ...] = (0,)   # t's inputs
    coefficient: float = 0.5
    times: Tuple[int, ...] = ()       # inputs whose signs multiply d's
    sign: int = 1
    param: int = -1                   # a parameter whose sign multiplies d's; -1: none
    param_in_leading: bool = False    # t has the parameter as a factor too (elu: alpha·x)
    scaled_by_param: bool = False     # the expansion is in arg · param (softplus: beta·x)
    negative_only: bool = False       # region "zero" holds for arg < 0 only (elu)
    region: str = "zero"
    output: int = 0


# the x·g(x) family (g(0) = 1/2, g'(0) > 0): x/2 + c·x², and its derivative
# grad_output·(1/2 + 2c·x)
_HALF_X_FORWARD = (TieSide(arg=0),)
_HALF_X_BACKWARD = (TieSide(arg=1, times=(0, 1)),)
# act(gate)·up with act from that family: near 0, up·gate/2 + up·c·gate²; for
# large gate, up·gate minus a little (act(x) < x); its (grad_gate, grad_up):
# near 0 g·up/2 + g·up·2c·gate and g·gate/2 + g·c·gate², for large gate
# g·up plus a little (act'(x) > 1 there) and g·gate minus a little
_GATED_FORWARD = (TieSide(arg=0, leading=(0, 1), times=(1,)),
                  TieSide(arg=0, leading=(0, 1), coefficient=1.0, times=(1,), sign=-1, region="positive"))
_GATED_BACKWARD = (TieSide(arg=1, leading=(0, 2), times=(0, 1, 2)),
                   TieSide(arg=1, leading=(0, 2), coefficient=1.0, times=(0, 2), region="positive"),
                   TieSide(arg=1, leading=(0, 1), times=(0,), output=1),
                   TieSide(arg=1, leading=(0, 1), coefficient=1.0, times=(0,), sign=-1, region="positive",
                           output=1))
# -alpha + alpha·e^x (elu; celu's e^(x/alpha)): saturation where alpha is itself a tie
_SATURATION = TieSide(arg=0, leading=(), coefficient=-1.0, param=0, param_in_leading=True, region="negative")


@dataclass(frozen=True)
class Op:
    name: str                         # ufunc and kernel name
    doc: str                          # forward: formula and special values
    backward_doc: str
    # "lanes": kernels_lanes.inc; "relu": kernels.inc; "family": kernels_family.inc;
    # "piecewise" and "from_output": kernels_piecewise.inc
    # "gated" and "bias": kernels_fused.inc
    algorithm: str
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
    ordered: Tuple[str, ...] = ()     # parameters that must not decrease in this order
    aliases: Tuple[str, ...] = ()     # other public names of the same function (torch's spelling)
    has_backward: bool = True         # False: a derivative itself (sigmoid_backward_from_output)
    exact: bool = False               # bit-exact (piecewise linear): every tier, or the accurate one
                                      # where the op has a fast tier too (exact_in)
    fast_ulp: Tuple[float, float] = (FAST_FORWARD_ULP, FAST_BACKWARD_ULP)  # the fast tier's bounds
    # "elementwise": one array in (and grad_output, x back); "gated": act(gate)·up
    # (kernels_fused.inc); "bias": act(x + bias) (kernels_fused.inc)
    kind: str = "elementwise"
    activation: str = ""              # gated and bias ops: the op whose lane functions they fuse
    gate_input: int = 0               # gated ops: which input is the gate (glu's is its second)
    generated_function: bool = True   # False: the public function is written by hand (glu)
    forward_ulp: float = 2.0          # bound, in ULPs of the result
    backward_ulp: float = 4.0         # bound, in ULPs of the derivative's largest term
    torch: Tuple[str, str] = ("", "")  # the same operation in PyTorch, as expressions in x, g
    # f(-inf), f(0), f(+inf), f'(-inf), f'(+inf): the limits the special-value tests
    # check. The default is the x·g(x) family (relu, GELU, SiLU), which grows like x:
    # f(huge) = huge, f'(huge) = 1, and f(±tiny) is ±tiny/2 rounded (tiny or -0).
    # A bounded function (sigmoid) saturates at its limits, and f(±tiny) = f(0).
    limits: Tuple[float, float, float, float, float] = (-0.0, 0.0, float("inf"), 0.0, 1.0)
    # per output: how a 16-bit tie of the float64 result is decided (TieSide);
    # empty where none can arise (t is not a tie, or is exact)
    forward_tie_sides: Tuple[TieSide, ...] = ()
    backward_tie_sides: Tuple[TieSide, ...] = ()

    @property
    def default_tier(self):
        """The tier a call without precision= gets: an exact op's one tier serves both."""
        return DEFAULT_TIER if DEFAULT_TIER in self.tiers else self.tiers[0]

    @property
    def public(self):
        return self.form.function if self.form else self.name

    def exact_in(self, tier):
        """Whether the op's `tier` kernels are bit-exact: an exact op's one tier, or its
        accurate tier beside a fast one (hardswish's PyTorch-like products)."""
        return self.exact and (len(self.tiers) == 1 or tier == "accurate")

    def bound(self, tier, direction):
        """The accuracy bound of this op's `tier` kernels in `direction` ("fwd"/"bwd")."""
        if self.exact_in(tier):
            return 0.0
        if tier == "accurate":
            return self.forward_ulp if direction == "fwd" else self.backward_ulp
        return self.fast_ulp[0] if direction == "fwd" else self.fast_ulp[1]


# ns_per_element: a forward call's cost per element on one core of a 2-core AMD
# EPYC (Zen 3) with AVX2, measured with tools/thread_threshold.py --costs. It
# is only an estimate: the thread split uses each kernel's own measured cost
# (src_c/runtime/threads.c), and this answers fastact._ext.thread_threshold until then.
# what the gated units' docs say of an activation value that underflows
_GATED_SUBNORMAL = (" Where act(gate) is subnormal, its error (up to a subnormal step) is "
                    "multiplied by |up|, as in the unfused product.")

OPS = (
    Op("relu",
       doc="max(x, 0): x where x > 0 or x is NaN, else +0.0 (relu(-0.0) is +0.0). Exact.",
       backward_doc="grad_output where x > 0, 0 where x <= 0, NaN where x is NaN. Exact.",
       algorithm="relu", cost="memory", ns_per_element=(0.24, 0.42),
       exact=True, forward_ulp=0, backward_ulp=0, tiers=("accurate",),  # exact: one tier serves both
       torch=("F.relu(x)", "aten.threshold_backward(g, x, 0)")),
    Op("gelu",
       forward_tie_sides=_HALF_X_FORWARD, backward_tie_sides=_HALF_X_BACKWARD,
       doc="x·Φ(x), the exact GELU (Φ: the standard normal CDF). gelu(-inf) = -0.0, "
           "gelu(+inf) = +inf, NaN gives NaN.",
       backward_doc="grad_output·(Φ(x) + x·φ(x)), the exact GELU's derivative; 1 at +inf, -0.0 at -inf.",
       algorithm="lanes", cost="compute", ns_per_element=(3.0, 16.0),
       form=Form("gelu", "approximate", "none", is_default=True),
       torch=("F.gelu(x)", "aten.gelu_backward(g, x)")),
    Op("gelu_tanh",
       forward_tie_sides=_HALF_X_FORWARD, backward_tie_sides=_HALF_X_BACKWARD,
       doc="0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), the tanh approximation of GELU. "
           "-0.0 at -inf, +inf at +inf, NaN gives NaN.",
       backward_doc="grad_output times the derivative of the tanh form; 1 at +inf, -0.0 at -inf.",
       algorithm="lanes", cost="compute", ns_per_element=(2.3, 5.7),
       form=Form("gelu", "approximate", "tanh"),
       torch=("F.gelu(x, approximate='tanh')", "aten.gelu_backward(g, x, approximate='tanh')")),
    Op("silu",
       forward_tie_sides=_HALF_X_FORWARD, backward_tie_sides=_HALF_X_BACKWARD,
       doc="x·σ(x), SiLU or Swish (σ: the logistic sigmoid). -0.0 at -inf, +inf at +inf, "
           "NaN gives NaN.",
       backward_doc="grad_output·σ(x)·(1 + x·(1 - σ(x))); 1 at +inf, -0.0 at -inf.",
       algorithm="lanes", cost="compute", ns_per_element=(1.6, 3.8),
       torch=("F.silu(x)", "aten.silu_backward(g, x)")),
    Op("quick_gelu",
       forward_tie_sides=_HALF_X_FORWARD, backward_tie_sides=_HALF_X_BACKWARD,
       doc="x·σ(1.702·x), the sigmoid approximation of GELU (CLIP's QuickGELU; 1.702 the decimal). "
           "-0.0 at -inf, +inf at +inf, NaN gives NaN.",
       backward_doc="grad_output·σ(1.702·x)·(1 + 1.702·x·(1 - σ(1.702·x))); 1 at +inf, -0.0 at -inf.",
       algorithm="lanes", cost="compute", ns_per_element=(1.6, 3.8),  # as silu's; not yet measured
       torch=("x * aten.sigmoid(1.702 * x)",
              "g * aten.sigmoid(1.702 * x) * (1 + 1.702 * x * (1 - aten.sigmoid(1.702 * x)))")),
    Op("sigmoid",
       backward_tie_sides=(TieSide(arg=1, coefficient=0.25, times=(0,), sign=-1),),  # g·(1/4 - x²/16)
       doc="σ(x) = 1/(1 + exp(-x)), the logistic sigmoid. +0.0 at -inf, 1 at +inf, 0.5 at "
           "0, NaN gives NaN.",
       backward_doc="grad_output·σ(x)·(1 - σ(x)); 0 at -inf and +inf.",
       algorithm="lanes", cost="compute", ns_per_element=(1.6, 3.8),  # as silu's; not yet measured
       limits=(0.0, 0.5, 1.0, 0.0, 0.0),
       torch=("aten.sigmoid(x)", "aten.sigmoid_backward(g, aten.sigmoid(x))")),
    # ---- smooth functions of kernels_family.inc: the accurate tier computes
    # in float64 with compensated steps (float32 data too, rounded once at
    # the end); the fast tier evaluates the formula in the data's precision.
    # Their ns_per_element (and the piecewise rows') are estimates from the
    # Zen 5 benchmark, not tools/thread_threshold.py measurements; the cost
    # model replaces them with each kernel's own timings after its first calls.
    Op("tanh",
       doc="tanh(x), the hyperbolic tangent. -1 at -inf, 1 at +inf, tanh(x) = x (rounded) for "
           "tiny x, NaN gives NaN.",
       backward_doc="grad_output·(1 - tanh(x)²); 0 at -inf and +inf.",
       algorithm="family", cost="compute", ns_per_element=(2.0, 5.0),
       limits=(-1.0, 0.0, 1.0, 0.0, 0.0),
       torch=("torch.tanh(x)", "aten.tanh_backward(g, torch.tanh(x))")),
    Op("softplus",
       backward_tie_sides=(TieSide(arg=1, times=(0, 1), param=0, scaled_by_param=True),),  # g·(1/2 + beta·x/4)
       doc="log(1 + exp(beta·x))/beta, and x where beta·x > threshold (PyTorch's rule). "
           "+0.0 at -inf, +inf at +inf, NaN gives NaN.",
       backward_doc="grad_output·σ(beta·x), and grad_output where beta·x > threshold.",
       algorithm="family", cost="compute", ns_per_element=(4.0, 8.0),
       params=(Param("beta", 1.0, "the sharpness; a finite number > 0", "positive"),
               Param("threshold", 20.0, "beta·x above which the result is x; > 0", "positive_or_inf")),
       limits=(0.0, 0.6931471805599453, float("inf"), 0.0, 1.0),
       torch=("F.softplus(x)", "aten.softplus_backward(g, x, 1.0, 20.0)")),
    Op("log_sigmoid",
       backward_tie_sides=(TieSide(arg=1, times=(0, 1), sign=-1),),  # g·(1/2 - x/4)
       doc="log σ(x) = -softplus(-x) = min(x, 0) - log(1 + exp(-|x|)): no log(0) anywhere. "
           "-inf at -inf, -0.0 at +inf, NaN gives NaN.",
       backward_doc="grad_output·σ(-x) = grad_output·(1 - σ(x)); 1 at -inf, 0 at +inf.",
       algorithm="family", cost="compute", ns_per_element=(4.0, 8.0),
       aliases=("logsigmoid",), limits=(float("-inf"), -0.6931471805599453, -0.0, 1.0, 0.0),
       torch=("F.logsigmoid(x)", "aten.log_sigmoid_backward(g, x, aten.log_sigmoid_forward(x)[1])")),
    Op("mish",
       doc="x·tanh(softplus(x)). -0.0 at -inf, +inf at +inf, NaN gives NaN.",
       backward_doc="grad_output·(tanh(sp) + x·σ(x)·(1 - tanh(sp)²)), sp = softplus(x); "
                    "1 at +inf, -0.0 at -inf.",
       algorithm="family", cost="compute", ns_per_element=(4.0, 8.0),
       torch=("F.mish(x)", "aten.mish_backward(g, x)")),
    Op("elu",
       # alpha·(x + x²/2) and g·alpha·(1 + x) for x < 0
       forward_tie_sides=(TieSide(arg=0, coefficient=1.0, param=0, param_in_leading=True, negative_only=True),
                          _SATURATION),
       backward_tie_sides=(TieSide(arg=1, coefficient=1.0, times=(0, 1), param=0, param_in_leading=True,
                                   negative_only=True),),
       doc="x for x > 0, alpha·(exp(x) - 1) for x <= 0. -alpha at -inf, +inf at +inf, "
           "elu(-0.0) = -0.0, NaN gives NaN.",
       backward_doc="grad_output for x > 0, grad_output·alpha·exp(x) for x <= 0 (PyTorch's "
                    "side at the kink: alpha at 0).",
       algorithm="family", cost="compute", ns_per_element=(2.0, 5.0),
       params=(Param("alpha", 1.0, "the negative saturation value's size; finite"),),
       limits=(-1.0, 0.0, float("inf"), 0.0, 1.0),
       torch=("F.elu(x)", "aten.elu_backward(g, 1.0, 1.0, 1.0, False, x)")),
    Op("selu",
       doc="scale·x for x > 0, scale·alpha·(exp(x) - 1) for x <= 0, with PyTorch's "
           "constants alpha = 1.6732632423543772, scale = 1.0507009873554805 (the product "
           "taken exactly). -scale·alpha at -inf, +inf at +inf, NaN gives NaN.",
       backward_doc="grad_output·scale for x > 0, grad_output·scale·alpha·exp(x) for x <= 0.",
       algorithm="family", cost="compute", ns_per_element=(2.0, 5.0),
       limits=(-1.7580993408473766, 0.0, float("inf"), 0.0, 1.0507009873554805),
       torch=("F.selu(x)", "aten.elu_backward(g, 1.6732632423543772848170429916717, "
                            "1.0507009873554804934193349852946, 1.0, False, x)")),
    Op("celu",
       forward_tie_sides=(_SATURATION,),  # -alpha + alpha·e^(x/alpha)
       doc="x for x > 0, alpha·(exp(x/alpha) - 1) for x <= 0 (x/alpha taken exactly). "
           "-alpha at -inf, +inf at +inf, NaN gives NaN.",
       backward_doc="grad_output for x > 0, grad_output·exp(x/alpha) for x <= 0 (1 at 0).",
       algorithm="family", cost="compute", ns_per_element=(2.0, 5.0),
       params=(Param("alpha", 1.0, "the negative saturation value's size; a finite number > 0",
                     "positive"),),
       limits=(-1.0, 0.0, float("inf"), 0.0, 1.0),
       torch=("F.celu(x)", "aten.elu_backward(g, 1.0, 1.0, 1.0, False, x)")),
    # ---- piecewise-linear functions of kernels_piecewise.inc, exact: each
    # result is the correctly rounded value of the formula, with the
    # parameters rounded to the data's precision first (as PyTorch does)
    Op("leaky_relu",
       doc="x for x > 0, negative_slope·x otherwise (one rounding). -inf at -inf, NaN "
           "gives NaN. Exact.",
       backward_doc="grad_output for x > 0, grad_output·negative_slope for x <= 0 (PyTorch's "
                    "side at the kink), NaN where x is NaN. Exact.",
       algorithm="piecewise", cost="memory", ns_per_element=(0.3, 0.5),
       exact=True, forward_ulp=0, backward_ulp=0, tiers=("accurate",),
       params=(Param("negative_slope", 0.01, "the slope for x <= 0; finite"),),
       limits=(float("-inf"), 0.0, float("inf"), 0.01, 1.0),
       torch=("F.leaky_relu(x)", "aten.leaky_relu_backward(g, x, 0.01, False)")),
    Op("relu6",
       doc="min(max(x, 0), 6), PyTorch's clamp: relu6(-0.0) is -0.0 as there. NaN gives NaN. Exact.",
       backward_doc="grad_output for 0 < x < 6, 0 elsewhere (PyTorch's choice at both kinks), "
                    "NaN where x is NaN. Exact.",
       algorithm="piecewise", cost="memory", ns_per_element=(0.3, 0.5),
       exact=True, forward_ulp=0, backward_ulp=0, tiers=("accurate",),
       limits=(0.0, -0.0, 6.0, 0.0, 0.0),
       torch=("F.relu6(x)", "aten.hardtanh_backward(g, x, 0.0, 6.0)")),
    Op("hardtanh",
       doc="min(max(x, min_val), max_val). NaN gives NaN. Exact.",
       backward_doc="grad_output for min_val < x < max_val, 0 elsewhere (PyTorch's choice at "
                    "both kinks), NaN where x is NaN. Exact.",
       algorithm="piecewise", cost="memory", ns_per_element=(0.3, 0.5),
       exact=True, forward_ulp=0, backward_ulp=0, tiers=("accurate",),
       params=(Param("min_val", -1.0, "the lower bound; finite"),
               Param("max_val", 1.0, "the upper bound; finite, >= min_val")),
       ordered=("min_val", "max_val"),
       limits=(-1.0, 0.0, 1.0, 0.0, 0.0),
       torch=("F.hardtanh(x)", "aten.hardtanh_backward(g, x, -1.0, 1.0)")),
    # hardsigmoid and hardswish: correctly rounded in the accurate tier; the
    # fast tier rounds each step of PyTorch's formula, as PyTorch does
    Op("hardsigmoid",
       doc="min(max(x + 3, 0), 6)/6. 0 at -inf, 1 at +inf, NaN gives NaN.",
       backward_doc="grad_output/6 for -3 < x < 3, 0 elsewhere (PyTorch's choice at both "
                    "kinks), correctly rounded in both tiers; NaN where x is NaN.",
       algorithm="piecewise", cost="memory", ns_per_element=(0.3, 0.5),
       exact=True, forward_ulp=0, backward_ulp=0, fast_ulp=(1.5, 0.5),
       limits=(0.0, 0.5, 1.0, 0.0, 0.0),
       torch=("F.hardsigmoid(x)", "aten.hardsigmoid_backward(g, x)")),
    Op("hardswish",
       forward_tie_sides=_HALF_X_FORWARD, backward_tie_sides=_HALF_X_BACKWARD,  # x/2 + x²/6
       doc="x·min(max(x + 3, 0), 6)/6: 0 for x <= -3 (-0.0 for negative x, -inf included), "
           "x for x >= 3. NaN gives NaN.",
       backward_doc="0 for x <= -3, grad_output·(2x + 3)/6 for -3 < x < 3, grad_output for "
                    "x >= 3 (PyTorch's sides at the kinks); NaN where x is NaN.",
       algorithm="piecewise", cost="memory", ns_per_element=(0.3, 0.5),
       exact=True, forward_ulp=0, backward_ulp=0, fast_ulp=(2.0, 2.0),
       limits=(-0.0, 0.0, float("inf"), 0.0, 1.0),
       torch=("F.hardswish(x)", "aten.hardswish_backward(g, x)")),
    # ---- derivatives from the forward's output, as PyTorch's backward ops take them
    Op("sigmoid_backward_from_output",
       doc="grad_output·y·(1 - y), y = sigmoid(x) kept from the forward pass: "
           "y - y² rounded once, then the product.",
       backward_doc="", algorithm="from_output", cost="memory", ns_per_element=(0.4, 0.6),
       inputs=("grad_output", "output"), has_backward=False, tiers=("accurate",),
       forward_ulp=1.5, limits=(0.0, 0.0, 0.0, 0.0, 0.0),
       forward_tie_sides=(TieSide(arg=1, leading=(0, 1), coefficient=1.0, times=(0,), sign=-1),),  # g·y - g·y²
       torch=("aten.sigmoid_backward(g, y)", "")),
    Op("tanh_backward_from_output",
       doc="grad_output·(1 - y²), y = tanh(x) kept from the forward pass: 1 - y² rounded "
           "once, then the product.",
       backward_doc="", algorithm="from_output", cost="memory", ns_per_element=(0.4, 0.6),
       inputs=("grad_output", "output"), has_backward=False, tiers=("accurate",),
       forward_ulp=1.5, limits=(0.0, 0.0, 0.0, 0.0, 0.0),
       torch=("aten.tanh_backward(g, y)", "")),
    # ---- fused kernels of kernels_fused.inc: a gated unit's activation and
    # product, or a bias's sum and the activation, in one pass over memory;
    # forward and backward in the fused activation's tiers
    Op("swiglu",
       forward_tie_sides=_GATED_FORWARD, backward_tie_sides=_GATED_BACKWARD,
       doc="silu(gate)·up, the SwiGLU feed-forward gate; gate and up broadcast together. "
           "The product of the rounded SiLU and up." + _GATED_SUBNORMAL,
       backward_doc="(grad_gate, grad_up) = (grad_output·up·silu'(gate), grad_output·silu(gate)).",
       algorithm="gated", kind="gated", activation="silu", cost="compute", ns_per_element=(1.8, 4.2),
       inputs=("gate", "up"), backward_inputs=("grad_output", "gate", "up"),
       backward_outputs=("grad_gate", "grad_up"), forward_ulp=2.0, backward_ulp=4.0,
       torch=("F.silu(gate) * up", "")),
    Op("geglu",
       forward_tie_sides=_GATED_FORWARD, backward_tie_sides=_GATED_BACKWARD,
       doc="gelu(gate)·up, GEGLU with the exact GELU; gate and up broadcast together." + _GATED_SUBNORMAL,
       backward_doc="(grad_gate, grad_up) = (grad_output·up·gelu'(gate), grad_output·gelu(gate)).",
       algorithm="gated", kind="gated", activation="gelu", cost="compute", ns_per_element=(3.2, 16.5),
       inputs=("gate", "up"), backward_inputs=("grad_output", "gate", "up"),
       backward_outputs=("grad_gate", "grad_up"), form=Form("geglu", "approximate", "none", is_default=True),
       torch=("F.gelu(gate) * up", "")),
    Op("geglu_tanh",
       forward_tie_sides=_GATED_FORWARD, backward_tie_sides=_GATED_BACKWARD,
       doc="gelu(gate, approximate='tanh')·up, GEGLU with the tanh form of GELU." + _GATED_SUBNORMAL,
       backward_doc="(grad_gate, grad_up) with the tanh form's derivative.",
       algorithm="gated", kind="gated", activation="gelu_tanh", cost="compute", ns_per_element=(2.5, 6.0),
       inputs=("gate", "up"), backward_inputs=("grad_output", "gate", "up"),
       backward_outputs=("grad_gate", "grad_up"), form=Form("geglu", "approximate", "tanh"),
       torch=("F.gelu(gate, approximate='tanh') * up", "")),
    Op("glu",
       # a·(1/2 + b/4); (g·(1/2 + b/4), g·a·(1/4 - b²/16))
       forward_tie_sides=(TieSide(arg=1, times=(0, 1)),),
       backward_tie_sides=(TieSide(arg=2, times=(0, 2)),
                           TieSide(arg=2, leading=(0, 1), coefficient=0.25, times=(0, 1), sign=-1, output=1)),
       doc="a·σ(b): the gated linear unit of the two halves a, b of glu's input "
           "(fastact.glu splits along an axis; this ufunc takes the halves)." + _GATED_SUBNORMAL,
       backward_doc="(grad_a, grad_b) = (grad_output·σ(b), grad_output·a·σ'(b)).",
       algorithm="gated", kind="gated", activation="sigmoid", gate_input=1, generated_function=False,
       cost="compute", ns_per_element=(1.8, 4.0),
       inputs=("a", "b"), backward_inputs=("grad_output", "a", "b"), backward_outputs=("grad_a", "grad_b"),
       torch=("F.glu(x)", "")),
    Op("bias_gelu",
       forward_tie_sides=_HALF_X_FORWARD, backward_tie_sides=_HALF_X_BACKWARD,  # of the rounded sum
       doc="gelu(x + bias) with the exact GELU, of the rounded sum (what an unfused "
           "x + bias then gelu gives); bias broadcasts like any operand (a Linear layer's bias "
           "along the last axis).",
       backward_doc="grad_output·gelu'(x + bias): the gradient with respect to x (and, summed "
                    "over the broadcast axes, to bias).",
       algorithm="bias", kind="bias", activation="gelu", cost="compute", ns_per_element=(3.1, 16.2),
       inputs=("x", "bias"), backward_inputs=("grad_output", "x", "bias"),
       form=Form("bias_gelu", "approximate", "none", is_default=True),
       torch=("F.gelu(x + bias)", "")),
    Op("bias_gelu_tanh",
       forward_tie_sides=_HALF_X_FORWARD, backward_tie_sides=_HALF_X_BACKWARD,
       doc="gelu(x + bias, approximate='tanh'), of the rounded sum.",
       backward_doc="grad_output times the tanh form's derivative at x + bias.",
       algorithm="bias", kind="bias", activation="gelu_tanh", cost="compute", ns_per_element=(2.4, 5.8),
       inputs=("x", "bias"), backward_inputs=("grad_output", "x", "bias"),
       form=Form("bias_gelu", "approximate", "tanh"),
       torch=("F.gelu(x + bias, approximate='tanh')", "")),
    Op("bias_silu",
       forward_tie_sides=_HALF_X_FORWARD, backward_tie_sides=_HALF_X_BACKWARD,
       doc="silu(x + bias), of the rounded sum.",
       backward_doc="grad_output·silu'(x + bias).",
       algorithm="bias", kind="bias", activation="silu", cost="compute", ns_per_element=(1.7, 3.9),
       inputs=("x", "bias"), backward_inputs=("grad_output", "x", "bias"),
       torch=("F.silu(x + bias)", "")),
    Op("bias_relu",
       doc="relu(x + bias) = max(x + bias, 0), of the rounded sum. Exact.",
       backward_doc="grad_output where x + bias > 0, 0 where it is <= 0, NaN where it is NaN. Exact.",
       algorithm="bias", kind="bias", activation="relu", cost="memory", ns_per_element=(0.3, 0.5),
       inputs=("x", "bias"), backward_inputs=("grad_output", "x", "bias"),
       exact=True, forward_ulp=0, backward_ulp=0, tiers=("accurate",),
       torch=("F.relu(x + bias)", "")),
)

OPS_BY_NAME = {op.name: op for op in OPS}


def public_functions():
    """{public name: [ops]}: each public function and the ops behind it (its forms)."""
    functions = {}
    for op in OPS:
        if op.generated_function:
            functions.setdefault(op.public, []).append(op)
    return functions


def directions(op):
    """The directions op has kernels for."""
    return DIRECTIONS if op.has_backward else DIRECTIONS[:1]
