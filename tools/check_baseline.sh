#!/usr/bin/env bash
# Prove that no AVX / AVX2 / AVX-512 (or other post-x86-64-v2) instruction
# leaked into code that runs on a CPU without them, for a built Linux x86-64
# wheel.
#
#   tools/check_baseline.sh WHEEL
#
# 1. Static: disassemble the wheel's extension module. Every instruction that
#    is VEX/EVEX encoded (mnemonic v*), names a ymm/zmm/opmask register, or is
#    BMI1/BMI2/LZCNT/MOVBE must lie inside a function compiled from
#    kernels_avx2.c, kernels_avx512.c or kernels_avx512_emulated.c, or be one of
#    convert16.c's, piecewise16.c's or table16.c's functions named for their
#    ISA (_avx2, _avx512). A function's
#    file comes from the ELF symbol table: the linker keeps each object's local
#    symbols after an STT_FILE symbol naming its source (static helpers such as
#    fa_gelu_gate_ exist once per kernel file under the same name); global
#    functions are attributed by the _avx2/_avx512/_avx512_emulated suffix every
#    exported kernel of those files carries (FA_KERNEL in kernels.inc).
# 2. Dynamic: run Python under qemu-user emulating a Nehalem CPU (SSE4.2 and
#    POPCNT, no AVX, no XSAVE/OSXSAVE; NumPy 2.x needs x86-64-v2, so nothing
#    older can run it). qemu's translator raises SIGILL on any AVX instruction
#    for a CPU model without AVX, which a positive control below demonstrates.
#    Under it: available_isas() must be ['sse2', 'scalar'] (CPUID/XGETBV
#    dispatch); a smoke test of every function in every dtype, on the SSE2
#    kernels it picks, must give bit-for-bit the hash the host computes with
#    FASTACT_ISA=scalar; and the test suite runs (the SSE2 and scalar kernels
#    are testable there).
#    Also under an emulated Haswell (AVX2 + FMA, which qemu 7.2 implements):
#    available_isas() must be ['avx2', 'sse2', 'scalar'] and the smoke hash the same.
#
# Needs: qemu-user (installed with apt-get when missing), binutils, python3
# matching the wheel's tag. QEMU_TESTS=0 skips the tests under qemu (the
# slowest part, about three minutes), QEMU_TESTS=full runs the whole suite
# there (well over 15 minutes).
set -euo pipefail

[[ $# -eq 1 && -f $1 && $1 == *.whl ]] || { echo "usage: $0 WHEEL" >&2; exit 2; }
wheel=$(realpath "$1")
repo=$(cd "$(dirname "$0")/.." && pwd)
started=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/fastact-check-baseline.XXXXXX")
trap 'rm -rf "$work"' EXIT

if ! command -v qemu-x86_64 >/dev/null; then
    echo "== installing qemu-user"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q qemu-user >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q qemu-user >/dev/null; }
fi
for tool in qemu-x86_64 objdump readelf unzip; do
    command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
echo "== $(qemu-x86_64 --version | head -n 1)"

# ---------------------------------------------------------------- static ----
mkdir -p "$work/wheel"
unzip -q "$wheel" -d "$work/wheel"
so=$(find "$work/wheel" -name '_ext*.so')
[[ -n $so ]] || { echo "no extension module in $wheel" >&2; exit 1; }
echo "== static check of $(basename "$so")"
python3 - "$so" <<'EOF'
import bisect, collections, re, subprocess, sys

so = sys.argv[1]
KERNEL_FILES = {"kernels_avx2.c", "kernels_avx512.c", "kernels_avx512_emulated.c"}
# files with baseline functions beside per-ISA ones, which carry the ISA's suffix
MIXED_FILES = {"convert16.c", "piecewise16.c", "table16.c"}
KERNEL_SUFFIX = re.compile(r"_(avx2|avx512|avx512_emulated)$")
VMX = {"vmcall", "vmlaunch", "vmresume", "vmptrld", "vmptrst", "vmread", "vmwrite", "vmxoff",
       "vmxon", "vmclear", "vmfunc", "vmload", "vmsave", "vmrun", "vmmcall", "verr", "verw"}
NON_VEX_V3 = {"andn", "bextr", "blsi", "blsmsk", "blsr", "bzhi", "mulx", "pdep", "pext", "rorx",
              "sarx", "shlx", "shrx", "tzcnt", "lzcnt", "movbe"}
PREFIXES = {"rep", "repz", "repe", "repnz", "repne", "lock", "notrack", "bnd", "data16",
            "addr32", "cs", "ds", "es", "fs", "gs", "ss", "rex", "rex.w", "xacquire", "xrelease"}
OPMASK = re.compile(r"^k(mov|and|andn|or|xor|xnor|not|ortest|test|shiftl|shiftr|add|unpck)[bwdq]*$")
WIDE_REG = re.compile(r"%(ymm|zmm)\d+|%k[0-7]\b")

def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

# Functions from .symtab, with the source file of the local ones.
symtab = run("readelf", "-sW", so).split("Symbol table '.symtab'")
if len(symtab) < 2:
    sys.exit("FAIL: the module has no .symtab (stripped); this check needs its local symbols")
funcs, current_file = [], None
for line in symtab[1].splitlines()[2:]:
    f = line.split()
    if len(f) >= 7 and f[3] == "FILE":
        current_file = f[7] if len(f) > 7 else ""
    elif len(f) >= 8 and f[3] in ("FUNC", "IFUNC") and f[6] != "UND" and int(f[2], 0) > 0:
        local = f[4] == "LOCAL"
        funcs.append((int(f[1], 16), int(f[2], 0), f[7], current_file if local else None))  # readelf: hex past 99999
funcs.sort()
starts = [fn[0] for fn in funcs]

def owner(address):
    i = bisect.bisect_right(starts, address) - 1
    if i >= 0 and address < funcs[i][0] + funcs[i][1]:
        return funcs[i]
    return None

def is_kernel(fn):
    start, size, name, file = fn
    if file in MIXED_FILES:
        return bool(re.search(r"_(avx2|avx512)(\.|$)", name))  # compiler clones: name.constprop.0
    return file in KERNEL_FILES if file is not None else bool(KERNEL_SUFFIX.search(name))

instructions = collections.Counter()      # per source: all instructions
flagged = collections.Counter()           # per source: AVX+ instructions
leaks = []
insn = re.compile(r"^\s*([0-9a-f]+):\t(.*)$")
for line in run("objdump", "-d", "-w", "--no-show-raw-insn", so).splitlines():
    m = insn.match(line)
    if not m:
        continue
    address, text = int(m.group(1), 16), m.group(2).strip()
    words = text.split()
    while len(words) > 1 and words[0] in PREFIXES:
        words = words[1:]
    mnemonic = words[0] if words else ""
    wide = ((mnemonic.startswith("v") and mnemonic not in VMX) or OPMASK.match(mnemonic)
            or WIDE_REG.search(text) or mnemonic in NON_VEX_V3)
    fn = owner(address)
    where = ("(outside any function: PLT, init)" if fn is None else
             (fn[3] or "(linker-generated)") if fn[3] is not None else
             "(global *_avx2, *_avx512, *_avx512_emulated)" if is_kernel(fn) else
             "(global *_scalar)" if fn[2].endswith("_scalar") else "(global, other)")
    instructions[where] += 1
    if wide:
        flagged[where] += 1
        if fn is None or not is_kernel(fn):
            leaks.append(f"  {address:#x} {'?' if fn is None else fn[2]} [{where}]: {text}")

print(f"  {len(funcs)} functions; instructions per source (AVX/AVX2/AVX-512/BMI among them):")
for where in sorted(instructions):
    mark = "kernel" if where in KERNEL_FILES or where.startswith("(global *_avx2") else "baseline"
    print(f"  {mark:8} {where:52} {instructions[where]:7d} {flagged[where]:7d}")
if leaks:
    print(f"FAIL: {len(leaks)} instruction(s) beyond x86-64-v2 outside the x86 kernel objects:")
    print("\n".join(leaks[:40]))
    sys.exit(1)
if not any(flagged[w] for w in flagged):
    print("  note: no AVX at all (a build without FA_HAVE_X86_KERNELS?)")
print("  ok: every AVX/AVX-512 instruction is inside the per-ISA kernel objects")
EOF

# --------------------------------------------------------------- dynamic ----
echo "== venv with the wheel and its test extras (no torch)"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${wheel}[test]"
py=$work/venv/bin/python
mkdir -p "$work/run"
cp -r "$repo/tests" "$work/run/tests"
find "$work/run/tests" \( -name __pycache__ -o -name .hypothesis -o -name .pytest_cache \) -prune -exec rm -rf {} +

cp "$repo/tools/smoke_test.py" "$work/run/smoke.py"

# Positive control: an AVX2 kernel called directly through ctypes, bypassing
# the dispatch; under an emulated CPU without AVX it must die of SIGILL.
cat >"$work/run/call_avx2.py" <<'EOF'
import ctypes, numpy as np, fastact
lib = ctypes.CDLL(fastact._ext.__file__)
x = np.linspace(-3, 3, 16); y = np.empty_like(x)
# every kernel: (const void *const *in, void *const *out, ptrdiff_t n, const void *params)
inputs, outputs = (ctypes.c_void_p * 1)(x.ctypes.data), (ctypes.c_void_p * 1)(y.ctypes.data)
lib.fa_gelu_fwd_f64_avx2(inputs, outputs, ctypes.c_ssize_t(x.size), None)
print("ran the AVX2 kernel:", y[:2])
EOF

# qemu-user prints warnings for host-only CPUID bits of some models: drop them.
# OPENBLAS_CORETYPE, when the host sets it, names the host's CPU: NumPy's
# OpenBLAS would then run that CPU's kernels on the emulated one (AVX2 on a
# Nehalem dies at `import numpy`), so the emulated runs name their own.
qemu() {
    local cpu=$1; shift
    (cd "$work/run" && OPENBLAS_CORETYPE=$cpu qemu-x86_64 -cpu "$cpu" "$py" -W error "$@") \
        2> >(grep -v "TCG doesn't support requested feature" >&2)
}

host=$(cd "$work/run" && FASTACT_ISA=scalar "$py" -W error smoke.py)
echo "== host, FASTACT_ISA=scalar: $host"
host_hash=${host##* }

echo "== qemu -cpu Nehalem (no AVX): positive control"
set +e
qemu Nehalem call_avx2.py >"$work/control.out" 2>&1
rc=$?
set -e
if [[ $rc -ne 132 ]] && ! grep -q "Illegal instruction\|signal 4" "$work/control.out"; then
    echo "FAIL: an AVX2 kernel did not trap under the emulated Nehalem (exit $rc):" >&2
    cat "$work/control.out" >&2
    exit 1
fi
echo "   calling fa_gelu_fwd_f64_avx2 directly died of SIGILL (exit $rc): qemu traps AVX here"

echo "== qemu -cpu Nehalem: dispatch, CLI and smoke test"
qemu Nehalem -c "import fastact as fa; assert fa.available_isas() == ['sse2', 'scalar'], fa.available_isas(); assert fa.isa() == 'sse2'; print('   available_isas() =', fa.available_isas())"
qemu Nehalem -m fastact | sed -n '2,4p;7,9p' | sed 's/^/   /'
t0=$SECONDS
out=$(qemu Nehalem smoke.py)
echo "   $out  ($((SECONDS - t0)) s)"
[[ ${out##* } == "$host_hash" ]] || { echo "FAIL: bits differ from the host's scalar run ($host_hash)" >&2; exit 1; }
echo "   the SSE2 kernels (the default here): same bits as the host's scalar kernels"

echo "== qemu -cpu Haswell (AVX2 + FMA): dispatch and smoke test"
qemu Haswell -c "import fastact as fa; assert fa.available_isas() == ['avx2', 'sse2', 'scalar'], fa.available_isas(); print('   available_isas() =', fa.available_isas())"
out=$(qemu Haswell smoke.py)
echo "   $out"
[[ ${out##* } == "$host_hash" ]] || { echo "FAIL: bits differ from the host's scalar run ($host_hash)" >&2; exit 1; }

if [[ ${QEMU_TESTS:-1} != 0 ]]; then
    echo "== qemu -cpu Nehalem: test suite, FASTACT_ISA=scalar"
    # pytest settings from pyproject.toml, and a hypothesis profile without
    # deadlines: an emulated CPU is 10-50x slower than the one they were set for
    "$py" - "$repo/pyproject.toml" "$work/run/pytest.ini" <<'EOF'
import sys, tomllib
opts = tomllib.load(open(sys.argv[1], "rb"))["tool"]["pytest"]["ini_options"]
opts["addopts"] = list(opts.get("addopts", [])) + ["-p", "no:cacheprovider", "-p", "qemu_profile",
                                                   "--hypothesis-profile=qemu"]
ini = lambda v: ("true" if v else "false") if isinstance(v, bool) else (
    "".join("\n    " + str(x) for x in v) if isinstance(v, list) else str(v))
open(sys.argv[2], "w").write("[pytest]\n" + "".join(f"{k} = {ini(v)}\n" for k, v in opts.items()))
EOF
    cat >"$work/run/qemu_profile.py" <<'EOF'
from hypothesis import HealthCheck, settings
settings.register_profile("qemu", deadline=None, suppress_health_check=list(HealthCheck))
EOF
    # The emulated CPU runs Python some 20-50x slower: by default the API,
    # seed-article and layout tests (the layout tests of thread splits,
    # Python threads and fork, which exercise the pool rather than the
    # kernels, left out);
    # QEMU_TESTS=full runs everything (test_accuracy's float32 sweeps alone
    # take well over 15 minutes there).
    # Of the elementwise family and the fused functions, those whose kernels add
    # no code path of their own are left out, as in check_sanitizers.sh.
    same_paths="softplus or log_sigmoid or logsigmoid or mish or selu or celu or relu6 or hardtanh or geglu or bias_gelu or bias_relu"
    # Two qemu processes side by side (each runs one CPU's worth of Python),
    # each with its share of the test files.
    keep="not test_concurrent_calls_from_python_threads and not test_pool_works_in_forked_child and not test_thread_count_does_not_change_bits and not ($same_paths)"
    shares=("test_api.py" "test_seeds.py test_layout.py")
    [[ ${QEMU_TESTS:-1} == full ]] && shares=("$(cd "$work/run/tests" && ls test_*.py | tr '\n' ' ')") && keep=""
    t0=$SECONDS
    pids=()
    for i in "${!shares[@]}"; do
        files=(); for f in ${shares[$i]}; do files+=("$work/run/tests/$f"); done
        (cd "$work/run" && FASTACT_ISA=scalar OPENBLAS_CORETYPE=Nehalem PYTHONPATH="$work/run" \
            qemu-x86_64 -cpu Nehalem "$py" -m pytest \
            -c "$work/run/pytest.ini" --rootdir "$work/run" -q "${files[@]}" ${keep:+-k "$keep"}) \
            >"$work/share$i.log" 2>&1 &
        pids+=($!)
    done
    failed=0
    for i in "${!shares[@]}"; do
        wait "${pids[$i]}" || failed=1
        echo "   ${shares[$i]}:"
        grep -v "TCG doesn't support requested feature" "$work/share$i.log" | tail -n 8 | sed 's/^/   /'
    done
    [[ $failed == 0 ]] || { echo "FAIL: the test suite under qemu (above)" >&2; exit 1; }
    echo "   took $((SECONDS - t0)) s"
fi
echo "== check_baseline.sh passed in $((SECONDS - started)) s"
