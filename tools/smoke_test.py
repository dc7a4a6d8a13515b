"""Every activation, forward and backward, in every dtype: close to the
float64 reference; prints the ISA and a hash of the result bits, which must be
the same for every ISA and machine (tools/check_wheel.sh, check_baseline.sh).

    python smoke_test.py [EXPECTED_ISA INSTALL_PREFIX]
"""
import hashlib
import os
import sys

import numpy as np

import fastact as fa
from fastact._registry import ACTIVATIONS

if len(sys.argv) == 3:  # the installed package, capped as asked
    want_isa, prefix = sys.argv[1:]
    assert os.path.realpath(fa.__file__).startswith(os.path.realpath(prefix)), fa.__file__
    assert fa.isa() == want_isa, (fa.isa(), want_isa)

rng = np.random.default_rng(20240601)
x64 = np.concatenate([np.linspace(-12, 12, 2401), 4 * rng.standard_normal(3000),
                      [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 5e-324, 40.0, -40.0,
                       700.0, -700.0, 1e5, -1e5]])
g64 = rng.standard_normal(x64.size)
digest = hashlib.sha256()
for name, act in ACTIVATIONS.items():
    for dtype, tol in ((np.float16, 2e-3), (np.float32, 2e-6), (np.float64, 1e-13)):
        with np.errstate(over="ignore"):
            x, g = x64.astype(dtype), g64.astype(dtype)
        y, d = act.forward(x), act.backward(g, x)
        assert y.dtype == d.dtype == dtype, (name, dtype, y.dtype, d.dtype)
        digest.update(y.tobytes() + d.tobytes())
        for got, want in ((y, act.ref_forward(x)), (d, act.ref_backward(g, x))):
            np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol,
                                       err_msg=f"{name} {np.dtype(dtype)}")
print(f"isa={fa.isa()} available={fa.available_isas()} bits sha256 {digest.hexdigest()[:16]}")
