"""Two builds of fastact side by side, with torch: Gelem/s before and after a change.

    python tools/ab_speed.py BEFORE_SRC AFTER_SRC --functions tanh,gelu \\
        --directions backward --dtypes float16,bfloat16 --sizes 1e5,1e6

BEFORE_SRC and AFTER_SRC are folders holding a built `fastact` package (a
worktree's `src`). Each build is timed in a process of its own, the two
alternated --rounds times, so that a shared machine's drift falls on both;
a cell is the median over rounds of each round's median of --repeat calls,
on --threads threads (default 1), through the same callables as `python -m fastact bench`
(fastact._peers). torch's column pools both builds' processes. Markdown on
stdout.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
from ab_paths import same_length_paths

CHILD = r"""
import json, sys, time
import numpy as np
import fastact
from fastact import _peers
spec = json.loads(sys.argv[1])
if not fastact.__file__.startswith(spec["source"]):
    sys.exit(f"fastact comes from {fastact.__file__}, not {spec['source']}")
out = {}


# sigmoid's or tanh's derivative from the forward's output, as torch's autograd takes it
def from_output(impl, name, g, x, y):
    import fastact as fa
    saved = getattr(fa, name)(x)
    if impl == "fastact":
        fn = getattr(fa, name + "_backward_from_output")
        return lambda: fn(g, saved, out=y)
    import torch
    fn = getattr(torch.ops.aten, name + "_backward")
    tg, tsaved = _peers._torch_view(g), _peers._torch_view(saved)
    return lambda: fn(tg, tsaved)
with _peers.using_threads(spec["threads"]):
    for name in spec["functions"]:
        for direction in spec["directions"]:
            for dtype in spec["dtypes"]:
                for size in spec["sizes"]:
                    g, x, y = _peers.make_inputs(size, dtype)
                    for impl in ("fastact", "torch"):
                        if impl == "torch" and not _peers.available("torch"):
                            continue
                        if direction == "from_output":
                            fn = from_output(impl, name, g, x, y)
                        else:
                            fn = _peers.build(impl, name, direction, g, x, y, spec["threads"])
                        for _ in range(3):  # 16-bit tables fill on the first calls
                            fn()
                        times = []
                        for _ in range(spec["repeat"]):
                            start = time.perf_counter()
                            fn()
                            times.append(time.perf_counter() - start)
                        out[f"{name}|{direction}|{dtype}|{size}|{impl}"] = size / np.median(times) / 1e9
print(json.dumps(out))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--functions", required=True)
    parser.add_argument("--directions", default="forward,backward",
                        help="also from_output: sigmoid's and tanh's derivative from the forward's output")
    parser.add_argument("--dtypes", default="float16,bfloat16")
    parser.add_argument("--sizes", default="1e5,1e6")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--threads", type=int, default=1, help="threads of both libraries (default 1)")
    args = parser.parse_args()
    spec = {"functions": args.functions.split(","), "directions": args.directions.split(","),
            "dtypes": args.dtypes.split(","), "sizes": [int(float(s)) for s in args.sizes.split(",")],
            "repeat": args.repeat, "threads": args.threads}
    paths = dict(zip(("before", "after"), same_length_paths(args.before, args.after)))
    runs = {"before": [], "after": []}
    for _ in range(args.rounds):
        for label in ("before", "after"):
            source = paths[label]
            env = dict(os.environ, PYTHONPATH=source)
            done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(dict(spec, source=source + os.sep))],
                                  env=env, capture_output=True, text=True, cwd="/")
            if done.returncode:
                sys.exit(f"{label} ({source}): {done.stderr.strip()}")
            runs[label].append(json.loads(done.stdout))

    def cell(label, key):
        return float(np.median([run[key] for run in runs[label] if key in run]))

    print("| function | dir | dtype | size | before | after | after ÷ before | torch | before ÷ torch | after ÷ torch |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for key in runs["after"][0]:
        name, direction, dtype, size, impl = key.split("|")
        if impl != "fastact":
            continue
        before, after = cell("before", key), cell("after", key)
        torch_key = key[: -len("fastact")] + "torch"
        torch_values = [run[torch_key] for label in runs for run in runs[label] if torch_key in run]
        row = [name, direction[:3], dtype, f"{float(size):.0e}".replace("e+0", "e"), f"{before:.2f}",
               f"{after:.2f}", f"{after / before:.2f}×"]
        if torch_values:
            torch = float(np.median(torch_values))
            row += [f"{torch:.2f}", f"{before / torch:.2f}×", f"{after / torch:.2f}×"]
        else:
            row += ["—"] * 3
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
