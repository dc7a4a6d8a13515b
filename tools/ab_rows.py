"""Two builds of fastact side by side on softmax and log_softmax: Gelem/s before and after a change.

    python tools/ab_rows.py BEFORE_SRC AFTER_SRC --shapes 64x1024,1x1000000 \\
        --functions softmax,log_softmax,softmax_backward --axis -1 --rounds 7

BEFORE_SRC and AFTER_SRC are folders holding a built `fastact` package (a
worktree's `src`). Each build runs in a process of its own, the two
alternated --rounds times, so that a shared machine's drift falls on both; a
round's figure is the best of --repeat timings of about 2 ms of calls with
`out=` (a backward from the forward's output), a cell the median over rounds
with the range of the per-round ratios. float32 inputs N(0, 9), the default
tier. Markdown on stdout.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

from ab_paths import same_length_paths

CHILD = r'''
import json, os, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
os.environ.setdefault("OMP_NUM_THREADS", "1")
import fastact as fa
assert fa.__file__.startswith(sys.argv[1]), fa.__file__
spec = json.loads(sys.argv[2])
fa.set_num_threads(spec["threads"])
axis = spec["axis"]
rng = np.random.default_rng(0)
speeds = {}
for shape in spec["shapes"]:
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    y = np.empty_like(x)
    for name in spec["functions"]:
        f = getattr(fa, name)
        if name.endswith("_backward"):
            forward = getattr(fa, name[:-len("_backward")])(x, axis=axis)
            call = lambda: f(g, forward, out=y, axis=axis)
        else:
            call = lambda: f(x, out=y, axis=axis)
        t0 = time.perf_counter()
        call()
        calls = max(1, int(2e-3 / max(1e-7, time.perf_counter() - t0)))
        best = float("inf")
        for _ in range(spec["repeat"]):
            t0 = time.perf_counter()
            for _ in range(calls):
                call()
            best = min(best, (time.perf_counter() - t0) / calls)
        speeds[f"{name} {shape}"] = x.size / best / 1e9
print(json.dumps(speeds))
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--shapes", default="4096x1024,64x32000,1x1000000")
    parser.add_argument("--functions", default="softmax,log_softmax")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--axis", type=int, default=-1)
    args = parser.parse_args()
    spec = json.dumps({"shapes": [[int(v) for v in s.split("x")] for s in args.shapes.split(",")],
                       "functions": args.functions.split(","), "threads": args.threads,
                       "repeat": args.repeat, "axis": args.axis})
    paths = dict(zip(("before", "after"), same_length_paths(args.before, args.after)))
    runs = {"before": [], "after": []}
    for r in range(args.rounds):
        for side in (("before", "after") if r % 2 == 0 else ("after", "before")):
            done = subprocess.run([sys.executable, "-c", CHILD, paths[side], spec],
                                  capture_output=True, text=True)
            if done.returncode:
                sys.exit(done.stderr)
            runs[side].append(json.loads(done.stdout))
    print("| cell | before Gelem/s | after Gelem/s | after/before | per-round ratios min-max |")
    print("|---|---:|---:|---:|---|")
    for cell in runs["before"][0]:
        before = statistics.median(run[cell] for run in runs["before"])
        after = statistics.median(run[cell] for run in runs["after"])
        ratios = [b[cell] / a[cell] for a, b in zip(runs["before"], runs["after"])]
        print(f"| {cell} | {before:.3f} | {after:.3f} | {after / before:.3f} | {min(ratios):.2f}-{max(ratios):.2f} |")


if __name__ == "__main__":
    main()
