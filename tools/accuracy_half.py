"""Accuracy of every elementwise function in float16 and bfloat16, over all
65536 values of each type: the worst error in ULPs of the type (backward:
grad_output = 1, in ULPs of the result) and how many finite results differ
from the correctly rounded value, per tier, under the current kernel set.

    python tools/accuracy_half.py [--isa NAME]

The correctly rounded value is the float64 reference of fastact._reference
rounded to the type by a direct float64 -> 16-bit rounding (NumPy's for
float16; for bfloat16, through float32 with a tie check). Where the float64
reference is itself exactly a tie (bfloat16 inputs below 2^-125 for gelu,
gelu_tanh, silu and hardswish, whose x^2 term is past float64's precision)
it cannot decide, and those are not counted; tests/test_half_ties.py decides
them with mpmath."""
import argparse

import numpy as np

import fastact as fa
from fastact._registry import VARIANTS

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None


def types():
    found = {"float16": (np.dtype(np.float16), 11, -14)}
    if ml_dtypes is not None:
        found["bfloat16"] = (np.dtype(ml_dtypes.bfloat16), 8, -126)
    return found


def spacing(v, bits, emin):
    exponent = np.frexp(np.where(np.isfinite(v) & (v != 0), np.abs(v), 2.0**emin))[1] - 1
    return np.ldexp(1.0, np.maximum(exponent, emin) - (bits - 1))


def round_to(v, dtype, bits, emin):
    """float64 -> the 16-bit type, rounded once."""
    if dtype == np.float16:
        return v.astype(np.float16)
    f = v.astype(np.float32)
    bits32 = f.view(np.uint32)
    tie = ((bits32 & 0xFFFF) == 0x8000) & np.isfinite(f)
    nudge = np.where(np.abs(v) > np.abs(f.astype(np.float64)), 1, -1).astype(np.int64)
    bits32 = np.where(tie & (v != f), (bits32.astype(np.int64) + nudge).astype(np.uint32), bits32)
    return bits32.view(np.float32).astype(dtype)


def measure(variant, direction, dtype, bits, emin):
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)
    with np.errstate(all="ignore"):
        wide = x.astype(np.float64)
        if direction == "forward":
            got, ref = variant.forward(x), variant.ref_forward(wide)
        else:
            got, ref = variant.backward(np.ones_like(x), x), variant.ref_backward(np.ones_like(wide), wide)
        got64 = got.astype(np.float64)
        finite = np.isfinite(ref) & np.isfinite(got64)
        err = np.abs(got64 - ref)[finite] / spacing(ref[finite], bits, emin)
        rounded = round_to(ref, dtype, bits, emin).astype(np.float64)
        # float64 exactly on a tie cannot say which neighbour is right (tests/test_half_ties.py
        # asks mpmath); an exact function's ties away from 0 are true ties
        on_tie = np.abs(ref) / spacing(ref, bits, emin) % 1 == 0.5
        undecided = on_tie & (~variant.op.exact | (np.abs(wide) < 2.0**-30))
    wrong = finite & ~undecided & (got64 != rounded)
    return float(err.max()), int(wrong.sum()), int(finite.sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--isa", help="kernel set (default: the best this CPU has)")
    args = parser.parse_args()
    if args.isa:
        fa.set_isa(args.isa)
    found = types()
    print(f"kernels: {fa.isa()}")
    print("| function | direction | " + " | ".join(f"{t} worst ULP | {t} not correctly rounded" for t in found)
          + " |")
    print("|---|---|" + "---|---|" * len(found))
    for key, variant in VARIANTS.items():
        for direction in ("forward", "backward"):
            cells = []
            for dtype, bits, emin in found.values():
                worst, wrong, total = measure(variant, direction, dtype, bits, emin)
                cells += [f"{worst:.5f}", f"{wrong} of {total}"]
            print(f"| {key} | {direction} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
