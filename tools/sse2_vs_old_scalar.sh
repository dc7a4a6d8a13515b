#!/usr/bin/env bash
# The SSE2 set against the scalar set it replaced on CPUs without AVX2 + FMA
# (benchmarks/results_sse2_2026-12-02.md): commit e70203d's kernels_scalar.c
# (libm's fmaf/fma in its hot loops), built with the build's flags, its
# symbols renamed, called through ctypes; today's SSE2 set through the public
# functions; interleaved in one process, 1e6 float32, one thread, medians.
# glibc is told to ignore FMA, so libm's fmaf runs in software, as on such a
# CPU. Prints Markdown rows: function, direction, old ms, sse2 ms, ratio, and
# whether the two gave the same bits.
#
#   tools/sse2_vs_old_scalar.sh FUNCTION[,FUNCTION...] REPEATS
#
# Needs git history (a full clone), gcc, and fastact installed in python3.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/fastact-old-scalar.XXXXXX")
trap 'rm -rf "$work"' EXIT
git archive e70203d src_c | tar -x -C "$work"
numpy_include=$(python3 -c 'import numpy; print(numpy.get_include())')
gcc -c -fPIC -DNDEBUG -O3 -std=gnu11 -ffp-contract=off -fno-tree-vectorize -fno-math-errno -pthread -g0 \
    -I"$work/src_c" -I"$numpy_include" "$work/src_c/kernels_scalar.c" -o "$work/old.o"
nm --defined-only "$work/old.o" | awk '$2 ~ /[TDRB]/ {print $3 " old_" $3}' >"$work/rename"
objcopy --redefine-syms="$work/rename" "$work/old.o" "$work/old_renamed.o"
gcc -shared -o "$work/old_scalar.so" "$work/old_renamed.o" -lm
GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F python3 - "$work/old_scalar.so" "$@" <<'PY'
import ctypes, sys, time
import numpy as np
import fastact as fa
lib = ctypes.CDLL(sys.argv[1])
names, repeat = sys.argv[2].split(","), int(sys.argv[3])
fa.set_num_threads(1)
fa.set_isa("sse2")
n = 10**6
rng = np.random.default_rng(0)
x = (rng.standard_normal(n) * 3).astype(np.float32)
g = rng.standard_normal(n).astype(np.float32)
out = np.empty_like(x)
PARAMS = {"softplus": [1.0, 20.0], "elu": [1.0], "celu": [1.0], "leaky_relu": [0.01], "hardtanh": [-1.0, 1.0]}
pointer = lambda a: a.ctypes.data_as(ctypes.c_void_p)
for name in names:
    params = np.array(PARAMS.get(name, [0.0]))
    kw = {"negative_slope": 0.01} if name == "leaky_relu" else {"approximate": "tanh"} if name == "gelu_tanh" else {}
    api = "gelu" if name == "gelu_tanh" else name
    for direction in ("fwd", "bwd"):
        kernel = getattr(lib, f"old_fa_{name}_{direction}_f32_scalar")
        kernel.restype = None
        ins = (ctypes.c_void_p * 2)(*((pointer(x), None) if direction == "fwd" else (pointer(g), pointer(x))))
        outs = (ctypes.c_void_p * 1)(pointer(out))
        old = lambda: kernel(ins, outs, ctypes.c_ssize_t(n), pointer(params))
        new = ((lambda: getattr(fa, api)(x, out=out, **kw)) if direction == "fwd" else
               (lambda: getattr(fa, api + "_backward")(g, x, out=out, **kw)))
        old()
        want = out.copy()
        new()
        same = np.array_equal(want.view(np.int32), out.view(np.int32))
        times = {"old": [], "new": []}
        for _ in range(repeat):
            for key, call in (("old", old), ("new", new)):
                start = time.perf_counter()
                call()
                times[key].append(time.perf_counter() - start)
        old_ms, new_ms = (sorted(t)[len(t) // 2] * 1e3 for t in (times["old"], times["new"]))
        print(f"| {name} | {direction} | {old_ms:.3f} | {new_ms:.3f} | {old_ms / new_ms:.1f}× | "
              f"{'same bits' if same else 'DIFFERENT bits'} |", flush=True)
PY
