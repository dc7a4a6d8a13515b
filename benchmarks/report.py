#!/usr/bin/env python3
"""pytest-benchmark JSON -> Markdown report of fastact against its peers, on stdout.

    pytest benchmarks --benchmark-json=bench.json
    python benchmarks/report.py bench.json [--plot throughput.png]

Per (function, direction, dtype, threads): Gelem/s per size and implementation
from the median time, fastact's speedup over each peer, and its throughput
over the memory reference's. Needs fastact importable (the helpers are
fastact._bench's, the implementations fastact._peers's); --plot also needs
matplotlib.
"""
import argparse
import json
import statistics
from collections import defaultdict

from fastact._bench import ACCURACY_SAMPLE, accuracy_rows, accuracy_table, gelem_per_s, plot_throughput, size_label
from fastact._peers import IMPLS

ORDER = list(IMPLS)
NOT_PEERS = {name for name, impl in IMPLS.items() if impl.kind != "peer"}
OURS = [name for name, impl in IMPLS.items() if impl.kind == "fastact"]   # a column set per tier
TIER_LABEL = {"fastact": "", "fastact-accurate": "accurate "}
FIELDS = ("function", "direction", "dtype", "size", "threads", "impl")


def load(path):
    with open(path) as f:
        data = json.load(f)
    # stats are per call: pytest-benchmark divides each round by its iterations
    records = [{**{k: b["extra_info"][k] for k in FIELDS + ("isa",)},
                "seconds": b["stats"]["median"]}
               for b in data["benchmarks"] if "impl" in b.get("extra_info", {})]
    if not records:
        raise SystemExit(f"{path}: no fastact benchmarks in it (made by pytest benchmarks "
                         "--benchmark-json=PATH?)")
    return data, records


def ordered(names):
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def header(data, records):
    info = data.get("machine_info", {})
    facts = info.get("fastact", {})
    cpu = facts.get("cpu") or info.get("cpu", {}).get("brand_raw", "unknown CPU")
    isas = sorted({r["isa"] for r in records})
    versions = ", ".join(facts.get("versions", {}).get(i, i) for i in ordered(
        {r["impl"] for r in records}) if i != "memory")
    commit = data.get("commit_info", {})
    return "\n".join([
        "# fastact benchmarks",
        "",
        f"- machine: {cpu}; {facts.get('usable_cpus', '?')} usable of "
        f"{facts.get('logical_cpus', '?')} logical CPUs; load average at start "
        f"{facts.get('load_average', '?')}",
        f"- fastact ISA {', '.join(isas)}; timed: {versions}; OMP_WAIT_POLICY="
        f"{facts.get('OMP_WAIT_POLICY', '?')}",
        f"- run {data.get('datetime', '?')}, commit {commit.get('id', '?')[:10]}"
        f"{' (dirty)' if commit.get('dirty') else ''}, pytest-benchmark {data.get('version', '?')}",
        "- Gelem/s: 10^9 elements per second from the median time. `vs X`: fastact's speedup "
        "over X (X's time / fastact's; > 1 is faster). `÷ memory`: fastact's throughput over "
        "the memory reference's (np.copyto forward, np.multiply backward: same bytes, no "
        "arithmetic; 1 would be memory-bound). numpy and memory run on 1 thread at any setting; "
        "jax only at the thread count its CPU pool started with (PJRT_NPROC; 1 by default).",
    ])


def section(rows):
    """One table: a row per size; rows maps size -> {impl: record}."""
    impls = ordered({i for by_impl in rows.values() for i in by_impl})
    peers = [i for i in impls if i not in NOT_PEERS]
    tiers = [i for i in OURS if i in impls]
    columns = impls + [f"{TIER_LABEL[t]}vs {p}" for t in tiers for p in peers + ["memory"] * ("memory" in impls)]
    lines = ["| size | " + " | ".join(columns) + " |", "|---:|" + "---:|" * len(columns)]
    for size in sorted(rows):
        by_impl = rows[size]
        cells = [f"{gelem_per_s(by_impl[i]):.3g}" if i in by_impl else "—" for i in impls]
        for ours in (by_impl.get(t) for t in tiers):
            for other in peers + ["memory"] * ("memory" in impls):
                if ours is None or other not in by_impl:
                    cells.append("—")
                elif other == "memory":
                    cells.append(f"{gelem_per_s(ours) / gelem_per_s(by_impl[other]):.2f}")
                else:
                    cells.append(f"{by_impl[other]['seconds'] / ours['seconds']:.2f}×")
        lines.append(f"| {size_label(size)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(records):
    """Geometric mean of each fastact tier's speedup over each peer, across sizes and threads."""
    ratios = defaultdict(list)
    cells = defaultdict(dict)
    for r in records:
        cells[(r["function"], r["direction"], r["dtype"], r["size"], r["threads"])][r["impl"]] = r
    for key, by_impl in cells.items():
        for peer, r in by_impl.items():
            for ours in OURS:
                if peer not in NOT_PEERS and ours in by_impl:
                    ratios[key[:3], ours, peer].append(r["seconds"] / by_impl[ours]["seconds"])
    peers = [(ours, peer) for ours in OURS for peer in ordered({p for _, o, p in ratios if o == ours})]
    if not peers:
        return "(no cases with both fastact and a peer)"
    lines = ["| function | direction | dtype | " + " | ".join(f"{TIER_LABEL[o]}vs {p}" for o, p in peers) + " |",
             "|---|---|---|" + "---:|" * len(peers)]
    for group in dict.fromkeys(k for k, _, _ in ratios):
        values = [ratios.get((group, o, p)) for o, p in peers]
        lines.append("| " + " | ".join(group) + " | " + " | ".join(
            f"{statistics.geometric_mean(v):.2f}×" if v else "—" for v in values) + " |")
    return "\n".join(lines)


def report(data, records):
    sections = defaultdict(lambda: defaultdict(dict))
    for r in records:
        sections[r["function"], r["direction"], r["dtype"], r["threads"]][r["size"]][r["impl"]] = r
    parts = [header(data, records), "",
             "## Summary: geometric mean of fastact's speedup over all sizes and thread counts",
             "", summary(records)]
    functions = list(dict.fromkeys(r["function"] for r in records))   # the registry's order
    accuracy = accuracy_rows(functions)   # on this machine, now: what each tier's speed costs
    if accuracy:
        parts += ["", f"## Accuracy of each tier (worst float32 error on {ACCURACY_SAMPLE} inputs spread "
                  "over every bit pattern; tools/accuracy_report.py sweeps all 2^32)", "", accuracy_table(accuracy)]
    directions = {"forward": 0, "backward": 1}   # then the rest (the MLP blocks' "fwd+bwd")
    for (name, direction, dtype, threads), rows in sorted(sections.items(), key=lambda kv: (
            functions.index(kv[0][0]), directions.get(kv[0][1], len(directions)), *kv[0][2:])):
        parts += ["", f"## {name} {direction} {dtype}, {threads} thread{'s' * (threads > 1)}",
                  "", section(rows)]
    return "\n".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="pytest-benchmark --benchmark-json output")
    parser.add_argument("--plot", metavar="PNG",
                        help="throughput vs size per function (needs matplotlib)")
    args = parser.parse_args()
    data, records = load(args.json)
    print(report(data, records))
    if args.plot:
        plot_throughput(records, args.plot)   # shared with `python -m fastact bench --plot`


if __name__ == "__main__":
    main()
