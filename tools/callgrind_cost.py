#!/usr/bin/env python3
"""Instructions per element spent in each fastact kernel, and their mix, under callgrind.

For every function × direction × dtype × ISA, one valgrind process runs the
public call (fastact.gelu(x, out=y) ...) --reps times on a contiguous array of
--size elements (x ~ N(0, 3²) as in the benchmarks), 1 thread, collecting
only inside the kernel symbol (fa_gelu_fwd_f32_avx2 ...) and what it calls.
Instruction counts do not depend on machine load, unlike timings. The mix
comes from callgrind's per-instruction counts (--dump-instr=yes) weighted
onto objdump's mnemonics.

    python tools/callgrind_cost.py                          # 3-5 min on 2 cores
    python tools/callgrind_cost.py --isa scalar --function gelu,silu --dtype float32
    python tools/callgrind_cost.py --isa avx512-emulated    # SIMDe: not representative

Needs valgrind and objdump. Valgrind has no AVX-512: the avx512 set cannot
run under it (its rows say so). Progress to stderr, Markdown to stdout.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

import fastact as fa
from fastact import _ext
from fastact._registry import VARIANTS

DIRECTIONS = ("forward", "backward")
DTYPES = ("float32", "float64")
UNAVAILABLE = 3     # the child's exit status when its ISA cannot run under valgrind

# Runs inside valgrind: only the kernel is collected, so the rest is free.
CHILD = """
import sys
import fastact as fa
from fastact._peers import make_inputs
from fastact._registry import VARIANTS
name, direction, dtype, isa, size, reps = sys.argv[1:]
fa.set_num_threads(1)
try:
    fa.set_isa(isa)        # valgrind's CPUID decides, not the host's
except ValueError as exc:
    print(exc, file=sys.stderr)
    sys.exit(%d)
g, x, y = make_inputs(int(size), dtype)
act = VARIANTS[name]
for _ in range(int(reps)):
    act.forward(x, out=y) if direction == "forward" else act.backward(g, x, out=y)
""" % UNAVAILABLE

# Instruction groups, first match wins; mnemonics as objdump -M intel prints them.
GROUPS = [
    ("FMA", r"v?f(n)?m(add|sub)"),
    ("mul", r"v?mul(ss|sd|ps|pd)$"),
    ("add/sub", r"v?(add|sub|addsub|hadd|hsub)(ss|sd|ps|pd)$"),
    ("div", r"v?(div(ss|sd|ps|pd)|rcp)"),
    ("sqrt", r"v?(r?sqrt)"),
    ("min/max/cmp/blend/logic",
     r"v?((min|max)(ss|sd|ps|pd)|p(min|max)|u?comis|cmp\w*(ss|sd|ps|pd)$|pcmp|p?blend|"
     r"(and|andn|or|xor)(ps|pd)$|p(and|andn|or|xor)|ptest|testp|p?movmsk|pternlog|fixupimm)"),
    ("convert", r"v?(cvt|round)"),
    ("shuffle/permute", r"v?(shuf|perm|unpck|punpck|pshuf|insert|extract|pinsr|pextr|palignr|"
                        r"ps[lr]ldq|movddup|movs[lh]dup|mov[lh]lps|mov[lh]hps|pack|p?broadcast)"),
    ("load/store", r"v?(p?maskmov|p?gather|p?scatter)"),
]
COLUMNS = [name for name, _ in GROUPS] + ["integer/other"]
# vector/scalar moves are load/store when they touch memory; register copies are "other"
MOVE = re.compile(r"v?(mov\w*|lddqu)$")
PREFIXES = {"rep", "repz", "repnz", "repe", "repne", "lock", "bnd", "notrack", "data16", "cs", "ds"}


def classify(mnemonic, operands):
    if MOVE.match(mnemonic) and "[" in operands and not mnemonic.startswith(("vmovmsk", "movmsk")):
        return "load/store"
    if mnemonic.startswith(("vbroadcast", "vpbroadcast")) and "[" in operands:
        return "load/store"
    for name, pattern in GROUPS:
        if re.match(pattern, mnemonic):
            return name
    return "integer/other"


def kernel_symbol(key, direction, dtype, isa):
    """fa_gelu_fwd_f32_avx2; a tier other than the default after the dtype: fa_gelu_fwd_f32_fast_avx2."""
    act = VARIANTS[key]
    short = {"float32": "f32", "float64": "f64"}[dtype]
    tier = "" if act.key == act.name else f"_{act.tier}"
    return f"fa_{act.name}_{'fwd' if direction == 'forward' else 'bwd'}_{short}{tier}_{isa.replace('-', '_')}"


def defined_symbols(path):
    """Symbol names in the extension (.symtab, else the dynamic table of a stripped build)."""
    for flags in (["--defined-only"], ["-D", "--defined-only"]):
        out = subprocess.run(["nm", *flags, path], capture_output=True, text=True).stdout
        if out:
            return {line.split()[-1] for line in out.splitlines() if line.strip()}
    return set()


def run_cell(cell, size, reps, workdir):
    """One cell under callgrind: (cell, build's mtime, {"Ir": n, group: n, ..., "outside": n}
    or a reason).
    Retried when the extension is rebuilt meanwhile (src_c/ may be in flux):
    callgrind's addresses only fit the build it ran."""
    for _ in range(3):
        built = os.stat(_ext.__file__).st_mtime_ns
        result = measure(cell, size, reps, workdir)
        if os.stat(_ext.__file__).st_mtime_ns == built:
            return cell, built, result
    return cell, built, "the extension kept being rebuilt"


def measure(cell, size, reps, workdir):
    symbol = kernel_symbol(*cell)
    if symbol not in defined_symbols(_ext.__file__):
        return f"no symbol {symbol}"
    out = os.path.join(workdir, symbol + ".out")
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--toggle-collect={symbol}",
           "--dump-instr=yes", "--compress-strings=no", "--compress-pos=no",
           f"--callgrind-out-file={out}", sys.executable, "-c", CHILD, *cell, str(size), str(reps)]
    env = {**os.environ, "FASTACT_NUM_THREADS": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode == UNAVAILABLE:
        return "not runnable under valgrind"
    if proc.returncode != 0:
        return f"valgrind failed ({proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}"
    costs = parse_callgrind(out)
    if not costs:
        return f"nothing collected in {symbol}"
    by_object = collections.defaultdict(set)
    for obj, address in costs:
        by_object[obj].add(address)
    groups = {obj: disassemble(obj, addresses) for obj, addresses in by_object.items()}
    mix = collections.Counter()
    ext = os.path.realpath(_ext.__file__)
    for (obj, address), ir in costs.items():
        mix["Ir"] += ir
        mix[groups[obj].get(address, "integer/other")] += ir
        mix["outside"] += ir if os.path.realpath(obj) != ext else 0
    return mix


def parse_callgrind(path):
    """Self cost per (object, instruction address). A cost line right after
    calls= is the call's inclusive cost: its instructions are counted where
    they execute, so it is skipped. Needs --compress-pos=no and
    --compress-strings=no (absolute addresses, plain names)."""
    costs = collections.Counter()
    obj, skip_next, positions, summary = "???", False, 1, None
    with open(path) as f:
        for line in f:
            if line.startswith("positions:"):
                positions = len(line.split()) - 1
            elif line.startswith("summary:"):
                summary = int(line.split()[1])
            elif line.startswith("ob="):
                obj = line[3:].strip()
            elif line.startswith("calls="):
                skip_next = True
            elif line[:2] == "0x":
                fields = line.split()
                if not skip_next and len(fields) > positions:
                    costs[obj, int(fields[0], 16)] += int(fields[positions])
                skip_next = False
    if summary is not None and summary != sum(costs.values()):
        raise RuntimeError(f"{path}: self costs add up to {sum(costs.values())}, "
                           f"summary says {summary}")
    return costs


def disassemble(obj, addresses):
    """{address: group} for the given addresses of one object file."""
    if not os.path.exists(obj):          # "???": code valgrind could not name
        return {}
    lo, hi = min(addresses), max(addresses) + 16
    out = subprocess.run(["objdump", "-d", "-M", "intel", "--no-show-raw-insn",
                          f"--start-address={lo:#x}", f"--stop-address={hi:#x}", obj],
                         capture_output=True, text=True, check=True).stdout
    groups = {}
    for m in re.finditer(r"^\s*([0-9a-f]+):\s+(.*)$", out, re.M):
        address = int(m[1], 16)
        if address in addresses:
            words = m[2].split()
            while len(words) > 1 and words[0] in PREFIXES:
                words.pop(0)
            groups[address] = classify(words[0], " ".join(words[1:])) if words else "integer/other"
    return groups


def csv_list(choices):
    def parse(text):
        items = [item for item in text.split(",") if item]
        bad = [i for i in items if i not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"{text!r}: choose from {', '.join(choices)}")
        return items
    return parse


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--isa", type=csv_list(list(_ext.isa_names())), default=fa.available_isas(),
                        help=f"default: {','.join(fa.available_isas())} (the real sets this "
                             "CPU has; avx512-emulated only when asked)")
    parser.add_argument("--function", type=csv_list(list(VARIANTS)), default=list(VARIANTS),
                        help="ops, a tier other than the default as NAME_TIER (default: every op and tier)")
    parser.add_argument("--direction", type=csv_list(DIRECTIONS), default=list(DIRECTIONS))
    parser.add_argument("--dtype", type=csv_list(DTYPES), default=list(DTYPES))
    parser.add_argument("--size", type=int, default=1 << 14, help="elements per call (2^14)")
    parser.add_argument("--reps", type=int, default=3, help="calls per cell (3)")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                        help="valgrind processes at once (default: usable CPUs)")
    args = parser.parse_args()
    missing = [tool for tool in ("valgrind", "objdump", "nm") if shutil.which(tool) is None]
    if missing:
        sys.exit(f"callgrind_cost.py needs {', '.join(missing)} "
                 "(apt-get install valgrind binutils)")

    cells = [(name, direction, dtype, isa) for name in args.function for direction in args.direction
             for dtype in args.dtype for isa in args.isa]
    results, builds = {}, set()
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = [pool.submit(run_cell, cell, args.size, args.reps, workdir) for cell in cells]
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            cell, built, results[cell] = future.result()
            builds.add(built)
            print(f"[{done}/{len(cells)}] {' '.join(cell)}", file=sys.stderr, flush=True)

    elements = args.size * args.reps
    print(f"fastact {fa.__version__}: instructions per element inside each kernel (callgrind "
          f"Ir, callees included), {args.reps} calls of {args.size} contiguous elements, "
          "x ~ N(0, 3²), 1 thread. The groups split Ir/elem by objdump mnemonic; load/store "
          "counts moves touching memory (a load folded into arithmetic counts as that "
          "arithmetic); outside _ext: the part spent in other libraries (libm's fmaf ...)."
          + (f" The extension was rebuilt during the run: rows come from {len(builds)} builds."
             if len(builds) > 1 else "") + "\n")
    print("| function | direction | dtype | ISA | Ir/elem | " + " | ".join(COLUMNS)
          + " | outside _ext |")
    print("|---|---|---|---|---:|" + "---:|" * (len(COLUMNS) + 1))
    for cell in cells:
        mix = results[cell]
        if isinstance(mix, str):
            print(f"| {' | '.join(cell)} | — | {mix} |" + " |" * len(COLUMNS))
        else:
            values = [f"{mix[c] / elements:.2f}" for c in ["Ir", *COLUMNS, "outside"]]
            print(f"| {' | '.join(cell)} | " + " | ".join(values) + " |")


if __name__ == "__main__":
    main()
