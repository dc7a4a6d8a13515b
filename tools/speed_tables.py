#!/usr/bin/env python3
"""README speed tables from `python -m fastact bench --json PATH`: per dtype, a
row per function and direction, a column per size and thread count, each
cell "accurate → fast Gelem/s (fast tier × the fastest peer)"; the exact functions
(one tier, memory-bound) against the memory reference instead.

    python -m fastact bench --sizes 1e5,1e6,1e7 --threads 1,2 --dtypes float32,float64 --json bench.json
    python tools/speed_tables.py bench.json

16-bit (`--dtypes float32,float16,bfloat16`, then `--half`): per 16-bit dtype, a
row per function and direction, each cell "Gelem/s (× fastact float32, × torch
in that dtype)". `--half-summary`: the README's table, a row per function with
the ranges over every 16-bit cell (both types, every size and thread count),
and how many cells are ahead of torch and at or above fastact's float32.

The structured functions (`python -m fastact bench --structured --json PATH`):
a row per function, direction and shape, a column per thread count, each cell
"accurate → fast Gelem/s (the fast tier × the fastest peer)".
"""
import argparse
import json
from collections import defaultdict

from fastact._manifest import OPS

EXACT = {op.name for op in OPS if len(op.tiers) == 1}  # one tier, compared with the memory reference

PEER_SHORT = {"onnxruntime": "onnxr", "numexpr": "numexpr", "torch": "torch", "jax": "jax", "numpy": "numpy"}


def label(n):
    exponent = len(str(n)) - 1
    return f"1e{exponent}" if 10 ** exponent == n else str(n)


def tables(data):
    kinds = {"fastact": "ours", "fastact-accurate": "ours", "memory": "memory"}
    cells = defaultdict(dict)
    for r in data["results"]:
        cells[r["dtype"], r["function"], r["direction"], r["size"], r["threads"]][r["impl"]] = r
    columns = sorted({(k[3], k[4]) for k in cells})
    out = []
    for dtype in dict.fromkeys(k[0] for k in cells):
        rows = dict.fromkeys((k[1], k[2]) for k in cells if k[0] == dtype)
        out += [f"{dtype}: fastact Gelem/s, accurate → fast (the default), and (the default × the fastest peer; "
                "exact functions: × the memory reference)", "",
                "| function | direction | " + " | ".join(f"{label(s)} ×{t}" for s, t in columns) + " |",
                "|---|---|" + "---:|" * len(columns)]
        for function, direction in rows:
            line = []
            for size, threads in columns:
                impls = cells.get((dtype, function, direction, size, threads), {})
                ours = impls.get("fastact")
                if ours is None:
                    line.append("—")
                    continue
                gelem = {i: r["size"] / r["seconds"] / 1e9 for i, r in impls.items()}
                peers = {i: r for i, r in impls.items() if i not in kinds}
                text = (f"{gelem['fastact-accurate']:.2f} → {gelem['fastact']:.2f}" if "fastact-accurate" in impls
                        else f"{gelem['fastact']:.2f}")
                if function in EXACT and "memory" in impls:
                    text += f" ({impls['memory']['seconds'] / ours['seconds']:.2f}× mem)"
                elif peers:
                    best = min(peers.values(), key=lambda r: r["seconds"])
                    text += f" ({best['seconds'] / ours['seconds']:.2f}× {PEER_SHORT.get(best['impl'], best['impl'])})"
                line.append(text)
            out.append(f"| {function} | {direction} | " + " | ".join(line) + " |")
        out.append("")
    return "\n".join(out)


def half_tables(data):
    """For float16 and bfloat16 (when timed beside float32): a row per function
    and direction, a column per size and thread count, each cell "Gelem/s
    (× fastact's float32, × torch in the same dtype)", accurate tier."""
    seconds = {(r["dtype"], r["function"], r["direction"], r["size"], r["threads"], r["impl"]): r["seconds"]
               for r in data["results"]}
    columns = sorted({(k[3], k[4]) for k in seconds})
    out = []
    for dtype in ("float16", "bfloat16"):
        if not any(k[0] == dtype for k in seconds):
            continue
        out += [f"{dtype}: fastact Gelem/s (× fastact float32, × torch {dtype})", "",
                "| function | direction | " + " | ".join(f"{label(n)} ×{t}" for n, t in columns) + " |",
                "|---|---|" + "---:|" * len(columns)]
        for function, direction in dict.fromkeys(k[1:3] for k in seconds if k[0] == dtype):
            line = []
            for n, t in columns:
                ours = seconds.get((dtype, function, direction, n, t, "fastact"))
                if ours is None:
                    line.append("—")
                    continue
                ratios = [f"{seconds[key] / ours:.2f}×" if key in seconds else "—"
                          for key in ((("float32", function, direction, n, t, "fastact")),
                                      (dtype, function, direction, n, t, "torch"))]
                line.append(f"{n / ours / 1e9:.2f} ({', '.join(ratios)})")
            out.append(f"| {function} | {direction} | " + " | ".join(line) + " |")
        out.append("")
    return "\n".join(out)


def _span(values, unit=""):
    def fmt(v):
        return f"{v:.2f}" if v < 10 else f"{v:.1f}"
    low, high = min(values), max(values)
    return f"{fmt(low)}{unit}" if fmt(low) == fmt(high) else f"{fmt(low)}–{fmt(high)}{unit}"


def half_summary(data):
    """A row per function: forward and backward Gelem/s and × torch, each the
    range over every float16 and bfloat16 cell of the run; the derivative
    from the output (--directions from_output) in rows of its own. Then the
    cells ahead of torch and at or above fastact's float32."""
    seconds = {(r["dtype"], r["function"], r["direction"], r["size"], r["threads"], r["impl"]): r["seconds"]
               for r in data["results"]}
    half = [k for k in seconds if k[0] in ("float16", "bfloat16") and k[5] == "fastact"]
    rows = defaultdict(lambda: {"forward": ([], []), "backward": ([], [])})
    ahead = above = counted = compared = 0
    for dtype, function, direction, n, t, _ in half:
        ours = seconds[dtype, function, direction, n, t, "fastact"]
        row = rows[function if direction != "from_output" else f"{function} (from the output)"]
        gelem, versus = row["backward" if direction == "from_output" else direction]
        gelem.append(n / ours / 1e9)
        torch = seconds.get((dtype, function, direction, n, t, "torch"))
        f32 = seconds.get(("float32", function, direction, n, t, "fastact"))
        if torch is not None:
            versus.append(torch / ours)
            compared += 1
            ahead += torch > ours
        if f32 is not None:
            counted += 1
            above += f32 >= ours
    out = ["| function | forward, Gelem/s | forward, × torch | backward, Gelem/s | backward, × torch |",
           "|---|---:|---:|---:|---:|"]
    for function, row in rows.items():
        cells = []
        for direction in ("forward", "backward"):
            gelem, versus = row[direction]
            cells += [_span(gelem) if gelem else "—", _span(versus, "×") if versus else "—"]
        out.append(f"| {function} | " + " | ".join(cells) + " |")
    out += ["", f"{ahead} of {compared} cells ahead of torch; {above} of {counted} at or above "
            "fastact's float32 in the same cell."]
    return "\n".join(out) + "\n"


def structured_tables(records):
    cells = defaultdict(dict)
    for r in records:
        cells[r["function"], r["direction"], tuple(r["shape"]), r["axis"], r["threads"]][r["impl"]] = r
    threads = sorted({k[4] for k in cells})
    out = ["float32 structured functions: fastact Gelem/s (output elements), accurate → fast (the default), and "
           "(the default × the fastest peer)", "",
           "| function | direction | shape | " + " | ".join(f"×{t}" for t in threads) + " |",
           "|---|---|---|" + "---:|" * len(threads)]
    for function, direction, shape, axis in dict.fromkeys(k[:4] for k in cells):
        line = []
        for t in threads:
            impls = cells.get((function, direction, shape, axis, t), {})
            ours = impls.get("fastact")
            if ours is None:
                line.append("—")
                continue
            gelem = {i: r["size"] / r["seconds"] / 1e9 for i, r in impls.items()}
            text = (f"{gelem['fastact-accurate']:.2f} → {gelem['fastact']:.2f}" if "fastact-accurate" in impls
                    else f"{gelem['fastact']:.2f}")
            peers = {i: r for i, r in impls.items() if i not in ("fastact", "fastact-accurate", "memory")}
            if peers:
                best = min(peers.values(), key=lambda r: r["seconds"])
                text += f" ({best['seconds'] / ours['seconds']:.2f}× {PEER_SHORT.get(best['impl'], best['impl'])})"
            line.append(text)
        where = "x".join(map(str, shape)) + (f" axis={axis}" if axis != -1 else "")
        out.append(f"| {function} | {direction} | {where} | " + " | ".join(line) + " |")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="python -m fastact bench --json output")
    parser.add_argument("--half", action="store_true",
                        help="the float16/bfloat16 tables (a run with --dtypes float32,float16,bfloat16)")
    parser.add_argument("--half-summary", action="store_true",
                        help="the README's 16-bit table: ranges over every 16-bit cell")
    args = parser.parse_args()
    with open(args.json) as f:
        data = json.load(f)
    if "structured" in data:
        print(structured_tables(data["structured"]))
    elif args.half_summary:
        print(half_summary(data))
    elif args.half:
        print(half_tables(data))
    else:
        print(tables(data))


if __name__ == "__main__":
    main()
