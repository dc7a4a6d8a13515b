#!/usr/bin/env bash
# The C core on aarch64, without an aarch64 machine: cross-compile src_c/
# (the scalar and NEON kernel sets: FA_HAVE_X86_KERNELS undefined, so
# kernels_avx2.c and kernels_avx512*.c compile to empty units) with setup.py's
# flags plus -Werror, link it with tools/core_selftest.c into a static
# program and run that under qemu-aarch64: each set against mpmath, and every
# kernel's bits the same in both. Expected values come from mpmath (computed
# below, independently of fastact). The same program built for the host (its
# scalar set, and sse2 on x86-64) must print the same sweep hash: identical
# bits on both architectures. On an x86-64 host, also Windows: the program
# built by mingw-w64's gcc with the x86 kernels (dispatch through the
# compiler's CPUID, Windows' C runtime, calling convention and threads), run
# under wine, every set the CPU has: the same checks and the same hash; and
# the same built by clang for Windows (clang-cl builds the Windows wheels).
#
#   tools/check_cross.sh
#
# Needs (installed with apt-get when missing): gcc-aarch64-linux-gnu,
# qemu-user, and on x86-64 gcc-mingw-w64-x86-64-posix and wine64; python3
# with mpmath. FASTACT_CROSS_WINDOWS=0 leaves Windows out.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/fastact-check-cross.XXXXXX")
cleanup() {
    # wine's server outlives its programs and keeps writing to the prefix: stop it first
    if [[ -d $work/wineprefix ]]; then
        WINEPREFIX="$work/wineprefix" "$(command -v wineserver || echo /usr/lib/wine/wineserver)" -k 2>/dev/null || true
        sleep 1
    fi
    rm -rf "$work" 2>/dev/null || rm -rf "$work" || true
}
trap cleanup EXIT

missing=()
command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "== installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q "${missing[@]}" >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}" >/dev/null; }
fi
python3 -c "import mpmath" 2>/dev/null || { echo "python3 needs mpmath (pip install mpmath)" >&2; exit 1; }
echo "== $(aarch64-linux-gnu-gcc --version | head -n 1); $(qemu-aarch64 --version | head -n 1)"

echo "== expected values from mpmath (60 digits)"
python3 - "$work/expected.h" <<'EOF'
"""Exact values of every activation and derivative at fixed points, rounded
to float64 / float32 / float16 for tools/core_selftest.c."""
import importlib.util, math, pathlib, struct, sys
import mpmath as mp

def load(name, path):  # by path: the package itself is not built here
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

sys.path.insert(0, "tools")  # make_reference_data imports fit_coeffs (its thresholds) from there
manifest = load("fastact_manifest", "src/fastact/_manifest.py")
reference = load("fastact_reference", "src/fastact/_reference.py")       # exact ops (float64)
mpmath_formulas = load("make_reference_data", "tools/make_reference_data.py")  # smooth ops
mp.mp.dps = 60

def terms(op, x):
    """(f(x), f'(x), |gate| + |x gate'(x)|) for finite x."""
    return mpmath_formulas.exact(op, x)

def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]

def half_bits(v):
    try:
        return struct.unpack("<H", struct.pack("<e", v))[0]
    except OverflowError:  # beyond float16's range: rounds to infinity
        return 0xfc00 if v < 0 else 0x7c00

def c_double(v):
    if v != v:
        return "NAN"
    if v in (float("inf"), float("-inf")):
        return "INFINITY" if v > 0 else "-INFINITY"
    return v.hex()

def c_float(v):
    return c_double(v) + ("f" if v == v and abs(v) != float("inf") else "")

points = [0.0, -0.0, 1e-300, -1e-300, 5e-324, -5e-324, 2.0**-149, -2.0**-149, 2.0**-140, 2.0**-30,
          -2.0**-30, 1e-8, 0.1, -0.1, 0.5, -0.5, 0.75, -0.75, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0, 3.0,
          -3.0, 4.0, -4.0, 5.5, -5.5, 8.0, -8.0, 10.0, -10.0, 13.0, -13.0, 17.25, -17.25, 20.0,
          -20.0, 27.5, -27.5, 38.0, -38.0, 40.0, -40.0, 88.0, -88.0, 104.0, -104.0, 700.0, -700.0,
          745.0, -745.0, 1e5, -1e5, float("inf"), float("-inf"), float("nan")]
from fractions import Fraction

def rounded(q, single):
    """A Fraction correctly rounded to float64, or to float32 (through a
    round-to-odd float64, which makes the second rounding exact)."""
    d = float(q)
    if single and Fraction(d) != q and struct.unpack("<Q", struct.pack("<d", d))[0] % 2 == 0:
        d = math.nextafter(d, math.inf if q > Fraction(d) else -math.inf)
    return f32(d) if single else d

def exact_values(op, x, single):
    """(f(x), f'(x)) of an exact op at a finite x, correctly rounded, its
    parameters rounded to the precision first (as the kernels round them); a
    zero takes the float64 reference's sign."""
    slope = Fraction(f32(0.01) if single else 0.01)
    X = Fraction(x)
    f, d = {"relu": lambda: (max(X, 0), Fraction(int(X > 0))),
            "leaky_relu": lambda: (X if X > 0 else X * slope, 1 if X > 0 else slope),
            "relu6": lambda: (min(max(X, 0), 6), Fraction(int(0 < X < 6))),
            "hardtanh": lambda: (min(max(X, -1), 1), Fraction(int(-1 < X < 1))),
            "hardsigmoid": lambda: (min(max(X + 3, 0), 6) / 6, Fraction(1, 6) if -3 < X < 3 else 0),
            "hardswish": lambda: (X * min(max(X + 3, 0), 6) / 6,
                                  0 if X <= -3 else 1 if X >= 3 else (2 * X + 3) / 6)}[op]()
    f, d = rounded(Fraction(f), single), rounded(Fraction(d), single)
    if f == 0:
        f = math.copysign(0.0, float(getattr(reference, op)(x)))
    return f, d

rows = []
for op_index, row in enumerate(manifest.OPS):
    op = row.name
    if not row.has_backward or row.kind != "elementwise":  # derivatives from the output, fused
        continue                                                # kernels: the Python tests check them
    for x in points:
        fwd32 = bwd32 = None
        if x != x:
            fwd = bwd = float("nan"); scale = 0.0
        elif row.exact and x not in (float("inf"), float("-inf")):
            fwd, bwd = exact_values(op, x, single=False)
            fwd32, bwd32 = exact_values(op, x, single=True)
            scale = abs(bwd)
        elif row.exact:
            fwd = float(getattr(reference, op)(x))
            bwd = float(getattr(reference, op + "_backward")(1.0, x)); scale = abs(bwd)
        elif x in (float("inf"), float("-inf")):  # the manifest's limits (x g(x): inf, 1 / -0, 0)
            f_minus, _, f_plus, d_minus, d_plus = row.limits
            fwd, bwd = (f_plus, d_plus) if x > 0 else (f_minus, d_minus)
            scale = abs(bwd)
        else:
            exact = terms(op, mp.mpf(x))
            fwd, bwd, scale = (float(v) for v in exact)  # nearest double
        if fwd32 is None:
            fwd32, bwd32 = f32(fwd), f32(bwd)
        scale32 = f32(scale)
        rows.append(f"    {{{op_index}, {int(row.exact)}, {c_double(x)}, {c_double(fwd)}, {c_double(bwd)}, "
                    f"{c_double(scale)}, {c_float(fwd32)}, {c_float(bwd32)}, {c_float(scale32)}, "
                    f"0x{half_bits(fwd32 if row.exact else fwd):04x}}},")
with open(sys.argv[1], "w") as f:
    f.write("/* written by tools/check_cross.sh from mpmath; op, x, f(x), f'(x), scale in\n"
            " * float64, then float32, then f(x) as float16 bits */\n"
            "struct expected { int op, exact; double x, fwd, bwd, scale; float fwd32, bwd32, scale32;"
            " uint16_t fwd16; };\n"
            "static const struct expected expected[] = {\n" + "\n".join(rows) + "\n};\n")
print(f"   {len(rows)} rows ({len(points)} points x {len(rows) // len(points)} activations)")
EOF

# setup.py's flags (non-MSVC) with -Werror (clang_flags: its clang ones); no
# FA_HAVE_* macro: the scalar build
# shellcheck source=tools/clang_flags.sh
. tools/clang_flags.sh
flags=(-O3 -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-psabi
       -ffp-contract=off -fno-tree-vectorize -fno-math-errno -pthread -Werror -Isrc_c "-I$work")
build() {  # build "CC [ARGS]" OUT_DIR LINKER [LDFLAGS...]: the files side by side; ARGS after
    # the flags (clang: an -O level after -fno-slp-vectorize turns it back on)
    local cc out=$2 linker=$3 src pids=()
    read -r -a cc <<<"$1"
    shift 3
    mkdir -p "$out"
    for src in src_c/*/*.c tools/core_selftest.c; do
        "${cc[0]}" "${flags[@]}" "${cc[@]:1}" -c "$src" -o "$out/$(basename "$src" .c).o" &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
    "$linker" -pthread "$@" -o "$out/selftest" "$out"/*.o -lm
}

echo "== cross-compiling for aarch64 (-static, -Werror)"
t0=$SECONDS
build aarch64-linux-gnu-gcc "$work/aarch64" aarch64-linux-gnu-gcc -static
echo "   $(file -b "$work/aarch64/selftest" | cut -d, -f1-2), built in $((SECONDS - t0)) s"
for unit in kernels_avx2 kernels_avx512 kernels_avx512_emulated; do
    symbols=$(aarch64-linux-gnu-nm "$work/aarch64/$unit.o" | wc -l)
    [[ $symbols == 0 ]] || { echo "FAIL: $unit.o is not empty on aarch64" >&2; exit 1; }
done
echo "   kernels_avx2.o, kernels_avx512.o, kernels_avx512_emulated.o: empty units, as intended"
neon_symbols=$(aarch64-linux-gnu-nm --defined-only "$work/aarch64/kernels_neon.o")
[[ $'\n'$neon_symbols$'\n' == *" fa_kernels_neon"$'\n'* ]] \
    || { echo "FAIL: kernels_neon.o has no NEON kernel table" >&2; exit 1; }
echo "   kernels_neon.o: the NEON kernel set ($(grep -c ' T ' <<<"$neon_symbols") functions)"

echo "== running under qemu-aarch64"
t0=$SECONDS
qemu-aarch64 -L /usr/aarch64-linux-gnu "$work/aarch64/selftest" | tee "$work/aarch64.out" | sed 's/^/   /'
echo "   ran in $((SECONDS - t0)) s"

# clang compiles macOS arm64 builds: its NEON kernels, cross-compiled (and
# linked by the gcc cross toolchain), must give gcc's bits
if command -v clang >/dev/null; then
    aarch64_clang_flags=$(clang_flags clang --target=aarch64-linux-gnu)
    echo "== the same with clang for aarch64 ($(clang --version | head -n 1); $aarch64_clang_flags)"
    build "clang --target=aarch64-linux-gnu -isystem /usr/aarch64-linux-gnu/include $aarch64_clang_flags" "$work/clang" \
        aarch64-linux-gnu-gcc -static
    qemu-aarch64 -L /usr/aarch64-linux-gnu "$work/clang/selftest" >"$work/clang.out" \
        || { cat "$work/clang.out"; echo "FAIL: the clang build's self-test" >&2; exit 1; }
    grep -E "sweep hash|selftest" "$work/clang.out" | sed 's/^/   /'
    [[ $(grep '^sweep hash' "$work/clang.out") == $(grep '^sweep hash' "$work/aarch64.out") ]] \
        || { echo "FAIL: clang's and gcc's aarch64 bits differ" >&2; exit 1; }
else
    echo "== clang not installed: the clang build for aarch64 is skipped"
fi

echo "== the same program built for the host ($(uname -m): no FA_HAVE_* macro, the portable sets)"
build "${CC:-gcc}" "$work/host" "${CC:-gcc}"
"$work/host/selftest" | tee "$work/host.out" | sed 's/^/   /'
aarch64_hash=$(grep '^sweep hash' "$work/aarch64.out")
host_hash=$(grep '^sweep hash' "$work/host.out")
[[ $aarch64_hash == "$host_hash" ]] || { echo "FAIL: aarch64 and host bits differ" >&2; exit 1; }
echo "== same sweep hash on aarch64 and $(uname -m): $host_hash"

if [[ $(uname -m) == x86_64 && ${FASTACT_CROSS_WINDOWS:-1} != 0 ]]; then
    missing=()
    command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(gcc-mingw-w64-x86-64-posix)
    command -v wine64 >/dev/null || [[ -x /usr/lib/wine/wine64 ]] || missing+=(wine64)
    if [[ ${#missing[@]} -gt 0 ]]; then
        echo "== installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
            || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
    fi
    wine=$(command -v wine64 || echo /usr/lib/wine/wine64)
    echo "== Windows x86-64: $(x86_64-w64-mingw32-gcc --version | head -n 1), the x86 kernels; under $("$wine" --version)"
    t0=$SECONDS
    # -muse-unaligned-vector-move: gcc assumes a 64-byte aligned stack for its
    # spills of 512-bit registers, which Windows' ABI does not give (gcc bug
    # 54412: the AVX-512 kernels faulted on an aligned vmovaps under wine on
    # an AVX-512 CPU); the assembler makes every aligned vector move an
    # unaligned one, no slower on aligned data. clang (clang-cl builds the
    # Windows wheels) realigns its stack instead.
    build "x86_64-w64-mingw32-gcc -DFA_HAVE_X86_KERNELS=1 -Wa,-muse-unaligned-vector-move" "$work/windows" \
        x86_64-w64-mingw32-gcc -static
    # wine's first start creates its prefix (a minute at most); its own messages go to a log
    (cd "$work" && WINEPREFIX="$work/wineprefix" WINEDEBUG=-all "$wine" "$work/windows/selftest.exe" \
        2>"$work/wine.log" | tr -d '\r' | tee "$work/windows.out" | sed 's/^/   /') \
        || { cat "$work/wine.log"; echo "FAIL: the Windows self-test under wine" >&2; exit 1; }
    grep -qx "selftest passed" "$work/windows.out" || { echo "FAIL: the Windows self-test did not pass" >&2; exit 1; }
    windows_hash=$(grep '^sweep hash' "$work/windows.out")
    [[ $windows_hash == "$host_hash" ]] || { echo "FAIL: Windows and Linux bits differ" >&2; exit 1; }
    echo "== same sweep hash on Windows x86-64 (built and run in $((SECONDS - t0)) s): $windows_hash"
    # clang compiles Windows wheels (as clang-cl): its x86 kernels for Windows' ABI must give gcc's bits
    if command -v clang >/dev/null; then
        t0=$SECONDS
        build "clang --target=x86_64-w64-mingw32 -DFA_HAVE_X86_KERNELS=1 $(clang_flags clang --target=x86_64-w64-mingw32)" \
            "$work/windows-clang" \
            x86_64-w64-mingw32-gcc -static
        (cd "$work" && WINEPREFIX="$work/wineprefix" WINEDEBUG=-all "$wine" "$work/windows-clang/selftest.exe" \
            2>>"$work/wine.log" | tr -d '\r' >"$work/windows-clang.out") \
            || { cat "$work/windows-clang.out" "$work/wine.log"; echo "FAIL: clang's Windows self-test" >&2; exit 1; }
        grep -qx "selftest passed" "$work/windows-clang.out" \
            || { cat "$work/windows-clang.out"; echo "FAIL: clang's Windows self-test did not pass" >&2; exit 1; }
        [[ $(grep '^sweep hash' "$work/windows-clang.out") == "$host_hash" ]] \
            || { echo "FAIL: clang's Windows bits differ from Linux's" >&2; exit 1; }
        echo "== clang for Windows x86-64 ($(grep -c ': every kernel' "$work/windows-clang.out") sets): same checks" \
            "passed, same sweep hash (built and run in $((SECONDS - t0)) s)"
    fi
fi
echo "== check_cross.sh passed in $((SECONDS - started)) s"
