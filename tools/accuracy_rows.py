#!/usr/bin/env python3
"""Worst errors of the functions along an axis (softmax, log_softmax and
their backwards) and of the fused ones (SwiGLU, GEGLU, GLU, bias + activation),
on every kernel set this CPU runs, as a Markdown table.

    python tools/accuracy_rows.py [--rows 2000] [--isas avx2 scalar ...]

Forward errors are in ULPs of each result; backward ones in ULPs of the
largest term of each result's formula (softmax_backward: |y·g| or |y·Σgy|;
log_softmax_backward: |g| or |e^y·Σg|; a gated unit's grad_gate: |g·up| times
the activation derivative's largest term). Subnormal results are measured at
the subnormal spacing. References: float32 data in float64 (x − max exact,
sums by math.fsum); float64 data with mpmath at 40 digits.
"""
import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
import fastact as fa  # noqa: E402
from fastact import _reference as ref  # noqa: E402


def ulp_of(v, dtype):
    """The spacing at |v| in dtype (never below its least subnormal)."""
    info = np.finfo(dtype)
    tiny = float(info.smallest_subnormal)
    v = np.abs(np.asarray(v, np.float64))
    exponent = np.floor(np.log2(np.maximum(v, float(info.smallest_normal))))
    return np.maximum(np.exp2(exponent - info.nmant), tiny)


def worst(got, want, scale, dtype):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    err = np.where(same, 0.0, np.abs(got - want) / ulp_of(scale, dtype))
    return float(np.max(np.where(np.isnan(err), np.inf, err))) if err.size else 0.0


# ---- softmax family: references per row ----

def rows_float32(count, length, rng):
    """Rows of several kinds: normal, wide ranges, one dominant element."""
    kinds = [rng.standard_normal((count, length)) * 3,
             rng.uniform(-200, 200, (count, length)),
             np.concatenate([np.zeros((count, 1)), rng.uniform(-40, -20, (count, length - 1))], axis=1)]
    return np.concatenate(kinds).astype(np.float32)


def softmax_ref64(x):
    """float64 data from float32 inputs: x − max exact, exp within 2^-52."""
    x = x.astype(np.float64)
    d = x - x.max(axis=-1, keepdims=True)
    e = np.exp(d)
    s = np.array([math.fsum(r) for r in e])[:, None]
    return e / s, d - np.log(s)


def softmax_ref_mp(x):
    import mpmath as mp
    mp.mp.dps = 40
    soft, logs = np.empty_like(x), np.empty_like(x)
    for i, row in enumerate(x):
        m = max(row)
        e = [mp.exp(mp.mpf(v) - mp.mpf(m)) for v in row]
        s = mp.fsum(e)
        soft[i] = [float(v / s) for v in e]
        logs[i] = [float(mp.mpf(v) - mp.mpf(m) - mp.log(s)) for v in row]
    return soft, logs


def softmax_rows(dtype, count, rng):
    x = rows_float32(count, 256, rng).astype(dtype)
    if dtype == np.float32:
        soft, logs = softmax_ref64(x)
    else:
        x = x[: max(30, count // 20)]  # mpmath is slow: a sample of the rows
        x = x + rng.standard_normal(x.shape) * 1e-9
        soft, logs = softmax_ref_mp(x)
    g = rng.standard_normal(x.shape).astype(dtype)
    y, ly = soft.astype(dtype), logs.astype(dtype)  # the backward's given outputs
    y64, ly64, g64 = (a.astype(np.float64) for a in (y, ly, g))
    if dtype == np.float32:
        dot = np.array([math.fsum(r) for r in g64 * y64])[:, None]
        sum_g = np.array([math.fsum(r) for r in g64])[:, None]
        soft_b = y64 * (g64 - dot)
        log_b = g64 - np.exp(ly64) * sum_g
    else:
        import mpmath as mp
        soft_b, log_b = np.empty_like(y64), np.empty_like(y64)
        dot = np.empty((len(x), 1))
        sum_g = np.empty((len(x), 1))
        for i in range(len(x)):
            d = mp.fsum(mp.mpf(a) * mp.mpf(b) for a, b in zip(g64[i], y64[i]))
            sg = mp.fsum(mp.mpf(a) for a in g64[i])
            dot[i], sum_g[i] = float(d), float(sg)
            soft_b[i] = [float(mp.mpf(b) * (mp.mpf(a) - d)) for a, b in zip(g64[i], y64[i])]
            log_b[i] = [float(mp.mpf(a) - mp.exp(mp.mpf(b)) * sg) for a, b in zip(g64[i], ly64[i])]
    return {
        "softmax": (lambda: fa.softmax(x), soft, soft),
        "log_softmax": (lambda: fa.log_softmax(x), logs, logs),
        "softmax_backward": (lambda: fa.softmax_backward(g, y), soft_b,
                             np.maximum(np.abs(y64 * g64), np.abs(y64 * dot))),
        "log_softmax_backward": (lambda: fa.log_softmax_backward(g, ly), log_b,
                                 np.maximum(np.abs(g64), np.abs(np.exp(ly64) * sum_g))),
    }


# ---- fused functions (float32: references in float64) ----

ACT = {"swiglu": "silu", "geglu": "gelu", "geglu_tanh": "gelu_tanh", "glu": "sigmoid",
       "bias_gelu": "gelu", "bias_gelu_tanh": "gelu_tanh", "bias_silu": "silu"}


def fused_rows(tier, count, rng):
    n = count * 256
    gate = np.concatenate([rng.uniform(-20, 20, n // 2), rng.standard_normal(n - n // 2) * 3]).astype(np.float32)
    up = rng.uniform(-4, 4, n).astype(np.float32)
    g = rng.standard_normal(n).astype(np.float32)
    gate64, up64, g64 = (a.astype(np.float64) for a in (gate, up, g))
    kw = {"precision": tier}
    cases = {}
    for name, act in ACT.items():
        f, df, scale = getattr(ref, act), getattr(ref, act + "_backward"), getattr(ref, act + "_backward_scale")
        with np.errstate(all="ignore"):
            if name.startswith("bias_"):
                public = "bias_gelu" if name.startswith("bias_gelu") else name
                approx = {"approximate": "tanh"} if name.endswith("tanh") else {}
                s64 = (gate + up).astype(np.float64)  # the rounded sum
                cases[name] = (lambda public=public, approx=approx: getattr(fa, public)(gate, up, **approx, **kw),
                               f(s64), f(s64))
                cases[name + "_backward"] = (
                    lambda public=public, approx=approx: getattr(fa, public + "_backward")(g, gate, up, **approx, **kw),
                    df(g64, s64), np.abs(g64) * scale(s64))
                continue
            public = "geglu" if name.startswith("geglu") else name
            approx = {"approximate": "tanh"} if name.endswith("tanh") else {}
            if name == "glu":
                call = lambda: fa.ufuncs.glu(up, gate) if tier == "fast" else fa.ufuncs.glu_accurate(up, gate)  # noqa: E731
                back = lambda: (fa.ufuncs.glu_backward if tier == "fast" else fa.ufuncs.glu_backward_accurate)(g, up, gate)[::-1]  # noqa: E731,E501
            else:
                call = lambda public=public, approx=approx: getattr(fa, public)(gate, up, **approx, **kw)  # noqa: E731
                back = lambda public=public, approx=approx: getattr(fa, public + "_backward")(g, gate, up, **approx, **kw)  # noqa: E731,E501
            act64 = f(gate64)
            cases[name] = (call, act64 * up64, act64 * up64)
            cases[name + "_backward (grad_gate)"] = (lambda back=back: back()[0], df(g64 * up64, gate64),
                                                     np.abs(g64 * up64) * scale(gate64))
            cases[name + "_backward (grad_up)"] = (lambda back=back: back()[1], g64 * act64, g64 * act64)
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=600, help="rows of 256 per kind (three kinds)")
    parser.add_argument("--isas", nargs="*", default=None)
    args = parser.parse_args()
    isas = args.isas or fa.available_isas() + ["avx512-emulated"] * (
        fa._ext.isa_supported(fa._ISA_NAMES.index("avx512-emulated")))
    rng = np.random.default_rng(2026)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"CPU: {cpu}; kernel sets {isas}\n")
    results = {}

    def measure(cases, tier, dtype):
        """The worst error of each case over every kernel set, into results."""
        for isa in isas:
            previous = fa.set_isa(isa)
            try:
                with np.errstate(all="ignore"):
                    for name, (call, want, scale) in cases.items():
                        key = (name, tier, np.dtype(dtype).name)
                        results[key] = max(results.get(key, 0.0), worst(call(), want, scale, dtype))
            finally:
                fa.set_isa(previous)

    for dtype in (np.float32, np.float64):
        measure(softmax_rows(dtype, args.rows, rng), "both", dtype)
    for tier in ("accurate", "fast"):
        measure(fused_rows(tier, args.rows, rng), tier, np.float32)
    print("| function | precision | dtype | worst ULP (every kernel set) |")
    print("|---|---|---|---:|")
    for (name, tier, dtype), err in results.items():
        print(f"| {name} | {tier} | {dtype} | {err:.3f} |")


if __name__ == "__main__":
    main()
