"""The manifest (fastact._manifest) is the one list of operations: the
generated files match it, and every layer offers exactly its rows."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastact as fa
from fastact import _ext, ufuncs
from fastact._manifest import DEFAULT_TIER, OPS, TIERS, directions, public_functions
from fastact._registry import ACTIVATIONS, VARIANTS

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT / "tools" / "gen_manifest.py"


def test_generated_files_are_current():
    if not GENERATOR.exists():
        pytest.skip("tests run without the source tree's tools/")
    done = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_every_op_has_a_ufunc_per_direction_and_tier_and_nothing_else():
    def suffix(op, tier):  # the default tier unsuffixed: gelu is the fast tier, gelu_accurate the other
        return "" if tier == op.default_tier else "_" + tier
    def names(op, direction, tier):  # an op with parameters: the ufunc taking them as operands, then the defaults'
        base = op.name + ("" if direction == "fwd" else "_backward")
        return [base + "_with_params" + suffix(op, tier), base + suffix(op, tier)] if op.params else \
            [base + suffix(op, tier)]
    expected = [name for op in OPS for tier in op.tiers for d in directions(op) for name in names(op, d, tier)]
    # then the generalized ufuncs along an axis (_rows.pxi)
    # (each tier's, the accurate tier's _accurate, in the elementwise ops' order)
    expected += [f + d + suffix for f in ("softmax", "log_softmax") for suffix in ("_accurate", "")
                 for d in ("", "_backward")]
    assert ufuncs.__all__ == expected
    assert [a.key for a in VARIANTS.values()] == [op.name + suffix(op, t) for op in OPS
                                                  if op.has_backward and op.kind == "elementwise"
                                                  for t in op.tiers]
    for op in OPS:
        codes = [np.dtype(t).char for t in op.dtypes]
        # the parameters: float64 inputs after the arrays
        params = "d" * len(op.params)
        for tier in op.tiers:
            shapes = [(op.name, len(op.inputs), len(op.outputs))]
            if op.has_backward:
                shapes.append((op.name + "_backward", len(op.backward_inputs), len(op.backward_outputs)))
            for name, nin, nout in shapes:
                u = getattr(ufuncs, name + ("_with_params" if op.params else "") + suffix(op, tier))
                assert (u.nin, u.nout) == (nin + len(op.params), nout)
                assert u.types == [f"{c * nin}{params}->{c * nout}" for c in codes]
                u = getattr(ufuncs, name + suffix(op, tier))  # with the defaults: the arrays alone
                assert (u.nin, u.nout) == (nin, nout)
                assert u.types == [f"{c * nin}->{c * nout}" for c in codes]


def test_the_default_call_is_the_fast_tier_and_accurate_the_opt_in():
    assert DEFAULT_TIER == "fast"
    for op in OPS:
        assert op.default_tier == ("fast" if "fast" in op.tiers else op.tiers[0])
    x = np.linspace(-10, 10, 2001, dtype=np.float32)
    assert np.array_equal(fa.gelu(x), ufuncs.gelu(x)) and np.array_equal(fa.gelu(x), fa.gelu(x, precision="fast"))
    assert np.array_equal(fa.gelu(x, precision="accurate"), ufuncs.gelu_accurate(x))
    assert not np.array_equal(fa.gelu(x), fa.gelu(x, precision="accurate"))


def test_every_smooth_op_has_both_tiers_and_exact_ops_one():
    for op in OPS:
        if op.name in ("hardsigmoid", "hardswish"):  # exact, and PyTorch's roundings in the fast tier
            assert op.tiers == TIERS and op.exact_in("accurate") and not op.exact_in("fast")
        elif op.has_backward:
            assert op.tiers == (("accurate",) if op.exact else TIERS)
        else:  # a derivative from the output: one formula, rounded once or twice
            assert op.tiers == ("accurate",)


def test_every_public_function_is_exported_and_named():
    for name, ops in public_functions().items():
        for public in (name,) + ops[0].aliases:
            for suffix in ("", "_backward")[:len(directions(ops[0]))]:
                f = getattr(fa, public + suffix)
                assert public + suffix in fa.__all__ and public + suffix in _ext.PUBLIC
                assert f.__name__ == public + suffix and f.__module__ == "fastact"


def test_one_text_documents_ufunc_and_function():
    for a in VARIANTS.values():
        op = a.op
        assert op.doc in getattr(ufuncs, a.ufunc_name("forward")).__doc__
        assert op.backward_doc in getattr(ufuncs, a.ufunc_name("backward")).__doc__
        if not a.exact:
            assert f"{a.tier.capitalize()} tier: within {a.forward_ulp:g} ULP" in \
                getattr(ufuncs, a.ufunc_name("forward")).__doc__
            assert f"precision={a.tier!r}: within {a.forward_ulp:g} ULP" in getattr(fa, op.public).__doc__
    for op in OPS:
        assert op.doc in getattr(ufuncs, op.name).__doc__
        if not op.generated_function:  # written by hand (glu splits its input): its own text
            continue
        assert op.doc in getattr(fa, op.public).__doc__
        if op.has_backward:
            assert op.backward_doc in getattr(ufuncs, op.name + "_backward").__doc__
            assert op.backward_doc in getattr(fa, op.public + "_backward").__doc__
        for p in op.params:
            assert p.doc in getattr(fa, op.public).__doc__ and p.doc in getattr(ufuncs, op.name + "_with_params").__doc__
            assert f"{p.name}={p.default!r}" in getattr(ufuncs, op.name).__doc__


def test_registry_has_every_op_with_a_reference():
    assert list(ACTIVATIONS) == [op.name for op in OPS if op.has_backward and op.kind == "elementwise"]
    x = np.linspace(-3, 3, 7)
    for a in VARIANTS.values():
        if a.exact:  # computed in the data's precision (leaky_relu's slope rounded to it)
            np.testing.assert_array_equal(a.forward(x), a.ref_forward(x))
            continue
        np.testing.assert_allclose(a.forward(x), a.ref_forward(x), rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(a.backward(np.ones(7), x), a.ref_backward(np.ones(7), x), rtol=1e-12,
                                   atol=1e-300)


def test_thread_cost_estimates_come_from_the_manifest():
    for op in OPS:
        assert _ext.cost_estimate_ns(op.name, "float32") == op.ns_per_element[0]
        assert _ext.cost_estimate_ns(op.name, "float64") == op.ns_per_element[1]
        assert op.cost in ("memory", "compute")
