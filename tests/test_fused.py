"""Fused elementwise ops: swiglu, geglu (both forms), glu, bias_gelu / bias_silu / bias_relu,
forward and backward. Accuracy against fastact._reference (float64) for float16/float32,
bit identity with the unfused computation in the same dtype and tier (float64's accuracy
rests on that and on test_accuracy's mpmath checks of the activations), every ISA against
scalar, PyTorch agreement, and the errors. Run with -s for the worst errors measured."""
import numpy as np
import pytest

import fastact as fa
from fastact import _reference as ref
from fastact import ufuncs

from conftest import forced_isa, forced_threads, fixed_split

TIERS = ["accurate", "fast"]
BOUND = {("accurate", "fwd"): 2.0, ("fast", "fwd"): 4.5, ("accurate", "bwd"): 4.0, ("fast", "bwd"): 8.0}
EXP_BITS = np.uint64(0x7FF0000000000000)
MEASURED = {}

GATED = {  # name: (public call, backward call, activation, its reference, reference derivative, scale)
    "swiglu": (lambda a, b, **k: fa.swiglu(a, b, **k), lambda g, a, b, **k: fa.swiglu_backward(g, a, b, **k),
               fa.silu, ref.silu, ref.silu_backward, ref.silu_backward_scale),
    "geglu": (lambda a, b, **k: fa.geglu(a, b, **k), lambda g, a, b, **k: fa.geglu_backward(g, a, b, **k),
              fa.gelu, ref.gelu, ref.gelu_backward, ref.gelu_backward_scale),
    "geglu_tanh": (lambda a, b, **k: fa.geglu(a, b, approximate="tanh", **k),
                   lambda g, a, b, **k: fa.geglu_backward(g, a, b, approximate="tanh", **k),
                   lambda v, **k: fa.gelu(v, approximate="tanh", **k), ref.gelu_tanh, ref.gelu_tanh_backward,
                   ref.gelu_tanh_backward_scale),
    # glu as (gate=b, up=a): a·σ(b)
    "glu": (lambda b, a, **k: ufuncs.glu_accurate(a, b) if k.get("precision") == "accurate" else ufuncs.glu(a, b),
            lambda g, b, a, **k: (lambda r: (r[1], r[0]))(
                (ufuncs.glu_backward_accurate if k.get("precision") == "accurate" else ufuncs.glu_backward)(g, a, b)),
            fa.sigmoid, ref.sigmoid, ref.sigmoid_backward, ref.sigmoid_backward_scale),
}
BIAS = {"bias_gelu": (fa.bias_gelu, fa.bias_gelu_backward, fa.gelu, fa.gelu_backward, {}),
        "bias_gelu_tanh": (fa.bias_gelu, fa.bias_gelu_backward, fa.gelu, fa.gelu_backward, {"approximate": "tanh"}),
        "bias_silu": (fa.bias_silu, fa.bias_silu_backward, fa.silu, fa.silu_backward, {}),
        "bias_relu": (fa.bias_relu, fa.bias_relu_backward, fa.relu, fa.relu_backward, {})}


@pytest.fixture(scope="module", autouse=True)
def report_measured():
    yield
    if MEASURED:
        print("\n\nworst measured errors (ULP; backward: ULP of the largest term):")
        for key in sorted(MEASURED):
            print("  " + " ".join(f"{k:<16}" for k in key) + f"{MEASURED[key]:.3f}")


def ulp(v, dtype):
    info = np.finfo(dtype)
    v = np.asarray(v, dtype=np.float64)
    power = (np.ascontiguousarray(v).view(np.uint64) & EXP_BITS).view(np.float64).reshape(v.shape)
    return np.maximum(power * 2.0**-info.nmant, float(info.smallest_subnormal))


def ulp_error(got, want, unit, dtype):
    got = got.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(got - want) / ulp(unit, dtype)
    err = np.where(got == want, 0.0, err)
    return np.where(np.isnan(err), np.inf, err)


def accuracy_inputs(dtype, n=200_001):
    rng = np.random.default_rng(0)
    lim = 12.0 if dtype == np.float16 else 30.0
    gate = np.concatenate([np.linspace(-lim, lim, n), rng.normal(0, 3, n),
                           np.ldexp(rng.uniform(-1, 1, n), rng.integers(-30, 8, n))]).astype(dtype)
    up = np.ldexp(rng.normal(0, 1, gate.size), rng.integers(-4, 5, gate.size)).astype(dtype)
    g = rng.normal(0, 1, gate.size).astype(dtype)
    return g, gate, up


def specials(dtype):
    info = np.finfo(dtype)
    v = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, info.smallest_subnormal, -info.smallest_subnormal,
                  info.tiny, info.max, -info.max, 1.0, -1.0, 20.0, -20.0, 88.7, -88.7, 1e-5, -3.0], dtype=dtype)
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2**info.bits - 1, 20_000, dtype=np.uint64).astype(f"u{info.bits // 8}")
    return np.concatenate([v, bits.view(dtype), rng.normal(0, 5, 20_000).astype(dtype)])


def special_triples(dtype):
    v = specials(dtype)
    grid_a, grid_b = np.meshgrid(v[:18], v[:18])
    rng = np.random.default_rng(2)
    a = np.concatenate([grid_a.ravel(), v])
    b = np.concatenate([grid_b.ravel(), rng.permutation(v)])
    g = np.concatenate([np.ones(324, dtype), rng.permutation(v)])
    return g, a, b


def record(key, err):
    MEASURED[key] = max(MEASURED.get(key, 0.0), float(np.max(err)))


def assert_within(what, err, bound, *inputs):
    i = int(np.argmax(err))
    assert err[i] <= bound, f"{what}: {err[i]:.3g} ULP > {bound} at inputs {[a[i] for a in inputs]}"


def assert_same(got, want, what):
    same = (got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")) | (np.isnan(got) & np.isnan(want))
    i = int(np.argmin(same))
    assert same.all(), f"{what}: {int((~same).sum())} differ, e.g. got {got[i]!r} expected {want[i]!r}"


# ---- accuracy (float16, float32 against float64 references) ------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("name", list(GATED))
def test_gated_accuracy(isa, name, tier, dtype):
    """Forward within 2 ULP of act(gate)·up (fast: 4.5), grad_gate within 4 ULP (fast: 8) of
    |g·up|·backward_scale(gate), grad_up within the forward's bound of g·act(gate)."""
    fwd, bwd, _, r, r_bwd, r_scale = GATED[name]
    g, gate, up = accuracy_inputs(dtype)
    gw, aw, uw = (v.astype(np.float64) for v in (g, gate, up))
    # where act(gate) itself is subnormal its rounding is no longer relative: see
    # test_subnormal_activation_times_up
    keep = (np.abs(r(aw)) >= np.finfo(dtype).tiny) & (r_scale(aw) >= np.finfo(dtype).tiny)
    g, gate, up, gw, aw, uw = (v[keep] for v in (g, gate, up, gw, aw, uw))
    y = fwd(gate, up, precision=tier)
    want = r(aw) * uw
    err = ulp_error(y, want, want, dtype)
    record((name, "fwd", np.dtype(dtype).name, tier, isa), err)
    assert_within(f"{name} {tier}", err, BOUND[tier, "fwd"], gate, up)
    d_gate, d_up = bwd(g, gate, up, precision=tier)
    want_gate, scale = r_bwd(gw * uw, aw), np.abs(gw * uw) * r_scale(aw)
    err = ulp_error(d_gate, want_gate, scale, dtype)
    record((name, "bwd gate", np.dtype(dtype).name, tier, isa), err)
    assert_within(f"{name}_backward grad_gate {tier}", err, BOUND[tier, "bwd"], g, gate, up)
    want_up = gw * r(aw)
    err = ulp_error(d_up, want_up, want_up, dtype)
    record((name, "bwd up", np.dtype(dtype).name, tier, isa), err)
    assert_within(f"{name}_backward grad_up {tier}", err, BOUND[tier, "fwd"], g, gate, up)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("name", list(GATED))
def test_gated_equals_unfused(isa, name, tier, dtype):
    """act(gate)·up and grad_up = g·act(gate) are one rounding of the same activation value:
    the same bits as the unfused computation in the dtype (NaNs as NaNs)."""
    fwd, bwd, act = GATED[name][:3]
    g, gate, up = special_triples(dtype)
    with np.errstate(all="ignore"):
        a = act(gate, precision=tier)
        assert_same(fwd(gate, up, precision=tier), a * up, f"{name} vs unfused [{isa}]")
        assert_same(bwd(g, gate, up, precision=tier)[1], g * a, f"{name} grad_up vs unfused [{isa}]")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("name", list(BIAS))
def test_bias_equals_unfused(isa, name, tier, dtype):
    """bias_act(x, bias) == act(x + bias) and its backward == act_backward(g, x + bias), bit for
    bit, the sum rounded to the dtype first; special values included."""
    f, fb, act, act_b, kw = BIAS[name]
    kw = dict(kw) if name == "bias_relu" else dict(kw, precision=tier)
    g, x, b = special_triples(dtype)
    with np.errstate(all="ignore"):
        s = x + b
        assert_same(f(x, b, **kw), act(s, **kw), f"{name} {tier} [{isa}]")
        assert_same(fb(g, x, b, **kw), act_b(g, s, **kw), f"{name}_backward {tier} [{isa}]")
        # broadcasting a bias along the last axis
        xs = x[:1000].reshape(10, 100)
        assert_same(f(xs, b[:100], **kw), act(xs + b[:100], **kw), f"{name} broadcast")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_every_isa_gives_the_same_bits(isa, dtype):
    """Every fused ufunc, both tiers, on random bit patterns and special values: scalar's bits."""
    g, a, b = special_triples(dtype)
    names = [n for n in ufuncs.__all__ if n.split("_accurate")[0].replace("_backward", "") in
             ("swiglu", "geglu", "geglu_tanh", "glu", "bias_gelu", "bias_gelu_tanh", "bias_silu", "bias_relu")]
    assert len(names) == 30
    with np.errstate(all="ignore"):
        for n in names:
            u = getattr(ufuncs, n)
            args = (a, b) if u.nin == 2 else (g, a, b)
            with forced_isa("scalar"):
                want = u(*args)
            got = u(*args)
            for x, w in zip(got if u.nout == 2 else [got], want if u.nout == 2 else [want]):
                assert_same(x, w, f"{n} {np.dtype(dtype)} [{isa}] vs scalar")


def test_threads_do_not_change_bits():
    rng = np.random.default_rng(3)
    a, b, g = (rng.normal(0, 3, 300_001).astype(np.float32) for _ in range(3))
    with forced_threads(1):
        want = [fa.swiglu(a, b), *fa.geglu_backward(g, a, b), fa.bias_gelu(a, b), fa.glu_backward(g[:150_000], a[:-1])]
    with forced_threads(2), fixed_split(4096):
        got = [fa.swiglu(a, b), *fa.geglu_backward(g, a, b), fa.bias_gelu(a, b), fa.glu_backward(g[:150_000], a[:-1])]
    for x, w in zip(got, want):
        assert_same(x, w, "2 threads vs 1")


def test_subnormal_activation_times_up():
    """Where act(gate) underflows into the subnormals, its absolute error (a subnormal step at
    most) is multiplied by up, as in the unfused computation: the documented bound there is 2 ULP
    of the product plus |up| subnormal steps. silu(-107) ≈ -3.6e-45 is a few subnormal steps."""
    rng = np.random.default_rng(12)
    gate = np.concatenate([np.float32([-107.036896]), rng.uniform(-110, -95, 4000)]).astype(np.float32)
    up = np.concatenate([np.float32([-22.057163]), rng.uniform(-1e6, 1e6, 4000)]).astype(np.float32)
    want = ref.silu(gate.astype(np.float64)) * up.astype(np.float64)
    got = fa.swiglu(gate, up).astype(np.float64)
    ulp = np.maximum(np.spacing(np.abs(want).astype(np.float32)).astype(np.float64), 2.0**-149)
    allowed = 2 * ulp + np.abs(up) * 2.0**-149
    assert (np.abs(got - want) <= allowed).all()
    plain = ulp_error(fa.swiglu(gate[:1], up[:1]), want[:1], want[:1], np.float32)
    record(("swiglu", "fwd subnormal act", "float32", "accurate", "default"), plain)
    assert plain.max() > 2, "the case this test documents: beyond 2 ULP of the product alone"


# ---- glu along an axis -----------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, -1])
def test_glu_splits_along_axis(axis):
    """fa.glu(x, axis) is the ufunc of the two halves; glu_backward is shaped like x, first
    half g·σ(b) (bit-identical to the unfused product), second from the ufunc."""
    x = np.random.default_rng(4).normal(0, 3, (6, 8)).astype(np.float32)
    a, b = np.split(x, 2, axis=axis)
    assert_same(fa.glu(x, axis=axis), ufuncs.glu(a, b), "glu")
    assert_same(fa.glu(x, axis=axis), a * fa.sigmoid(b), "glu vs a·sigmoid(b)")
    g = np.random.default_rng(5).normal(size=a.shape).astype(np.float32)
    gx = fa.glu_backward(g, x, axis=axis)
    assert gx.shape == x.shape
    ga, gb = np.split(gx, 2, axis=axis)
    assert_same(ga, g * fa.sigmoid(b), "glu grad first half")
    assert_same(gb, ufuncs.glu_backward(g, a, b)[1], "glu grad second half")


# ---- PyTorch ---------------------------------------------------------------------

def test_agrees_with_torch():
    """torch's glu and its autograd gradient, silu(g)·u's gradients and gelu(x + b) (both
    forms), float32, within our bound plus theirs (taken as the same)."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(6)
    x = rng.normal(0, 4, (64, 256)).astype(np.float32)
    go = rng.normal(0, 1, (64, 128)).astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_()
    ty = F.glu(tx, -1)
    ty.backward(torch.from_numpy(go))
    a, b = np.split(x, 2, axis=-1)
    ours = fa.glu(x)
    err = ulp_error(ours, ty.detach().numpy().astype(np.float64), ours, np.float32)
    record(("glu", "fwd", "float32", "vs torch", "-"), err)
    assert err.max() <= 4
    gx = fa.glu_backward(go, x)
    scale = np.concatenate([np.abs(go) * ref.sigmoid(b), np.abs(go * a) * ref.sigmoid_backward_scale(b)], axis=-1)
    want = np.concatenate([go * ref.sigmoid(b), ref.sigmoid_backward(go * a, b)], axis=-1)
    # PyTorch's σ(b)(1 - σ(b)) loses accuracy where σ(b) is near 1: allow its own error
    err = ulp_error(gx, tx.grad.numpy().astype(np.float64), scale, np.float32) - ulp_error(
        tx.grad.numpy(), want, scale, np.float32)
    record(("glu", "bwd", "float32", "vs torch", "-"), err)
    assert err.max() <= 8
    tg, tu = (torch.from_numpy(v).requires_grad_() for v in (a, b))
    (F.silu(tg) * tu).backward(torch.from_numpy(go))
    d_gate, d_up = fa.swiglu_backward(go, a, b)
    scale = np.abs(go * b) * ref.silu_backward_scale(a)
    err = ulp_error(d_gate, tg.grad.numpy().astype(np.float64), scale, np.float32) - ulp_error(
        tg.grad.numpy(), ref.silu_backward(go.astype(np.float64) * b, a), scale, np.float32)
    record(("swiglu", "bwd gate", "float32", "vs torch", "-"), err)
    assert err.max() <= 8
    err = ulp_error(d_up, tu.grad.numpy().astype(np.float64), d_up, np.float32)
    record(("swiglu", "bwd up", "float32", "vs torch", "-"), err)
    assert err.max() <= 4
    for approx in ("none", "tanh"):
        t = F.gelu(torch.from_numpy(a) + torch.from_numpy(b[0]), approximate=approx).numpy()
        ours = fa.bias_gelu(a, b[0], approximate=approx)
        s64 = (a + b[0]).astype(np.float64)  # the rounded sum, as both compute it
        want = ref.gelu(s64) if approx == "none" else ref.gelu_tanh(s64)
        # PyTorch's float32 GELU loses every digit in the negative tail: allow its own error
        err = ulp_error(ours, t.astype(np.float64), want, np.float32) - ulp_error(t, want, want, np.float32)
        record((f"bias_gelu {approx}", "fwd", "float32", "vs torch", "-"), err)
        assert err.max() <= 4


# ---- errors ------------------------------------------------------------------------

def test_bad_inputs_are_refused_and_out_untouched():
    out = np.full(3, 7.0)
    with pytest.raises(ValueError, match=r"^fastact\.glu:"):
        fa.glu(np.zeros(3), out=out)
    with pytest.raises(ValueError, match=r"^fastact\.glu:"):
        fa.glu(np.float64(1.0))
    with pytest.raises(ValueError, match=r"^fastact\.glu_backward:"):
        fa.glu_backward(np.zeros(2), np.zeros(4), out=np.full(3, 7.0))
    with pytest.raises(ValueError, match=r"^fastact\.swiglu:"):
        fa.swiglu(np.zeros(3), np.zeros(4), out=out)
    with pytest.raises(ValueError, match=r"^fastact\.geglu:"):
        fa.geglu(np.zeros(3), np.zeros(3), approximate="erf", out=out)
    with pytest.raises(ValueError, match=r"^fastact\.bias_gelu_backward:"):
        fa.bias_gelu_backward(np.zeros(3), np.zeros(3), np.zeros(3), approximate="x", out=out)
    with pytest.raises(ValueError, match=r"^fastact\.swiglu_backward:"):
        fa.swiglu_backward(np.zeros(3), np.zeros(3), np.zeros(3), precision="exact")
    with pytest.raises(TypeError, match=r"^fastact\.swiglu:"):
        fa.swiglu(np.zeros(3, complex), np.zeros(3))
    np.testing.assert_array_equal(out, 7.0)
