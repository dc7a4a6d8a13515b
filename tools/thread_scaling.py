#!/usr/bin/env python3
"""Thread scaling, fastact beside its peers, 1 and N threads interleaved.

Unlike `python -m fastact bench`, which times each thread count as its own
cell, every round here times every (implementation, thread count) pair once,
in a rotated order, so 1 and N threads share the machine's noise and their
ratio is fair on a shared machine. Thread counts are switched between
samples, never inside one. Markdown on stdout (Gelem/s, medians, and the
N-thread/1-thread ratio of fastact and torch), progress on stderr.

    python tools/thread_scaling.py [--threads 1,2] [--min-log2 12] [--max-log2 26]
        [--functions relu,gelu,silu] [--directions forward,backward] [--repeat 11]
"""
import argparse
import statistics
import sys

import numpy as np

import fastact as fa
from fastact._bench import calibrate, machine_facts, time_per_call
from fastact._peers import IMPLS, Unsupported, available, build, make_inputs, using_threads


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default=f"1,{fa._ext.cpus_available()}")
    parser.add_argument("--min-log2", type=int, default=12)
    parser.add_argument("--max-log2", type=int, default=26)
    parser.add_argument("--step", type=int, default=1)
    parser.add_argument("--functions", default="relu,gelu,silu")
    parser.add_argument("--directions", default="forward,backward")
    parser.add_argument("--impls", default="fastact,torch,onnxruntime,memory")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--sample-time", type=float, default=5e-4)
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    if max(threads) > fa._ext.cpus_available():
        sys.exit(f"thread counts above the {fa._ext.cpus_available()} usable CPUs time the scheduler; refused")
    impls = [i for i in args.impls.split(",") if available(i)]
    top = max(threads)
    facts = machine_facts()
    print(f"fastact {facts['fastact']}, ISA {facts['isa']}, {facts['cpu']}, {facts['usable_cpus']} usable "
          f"CPUs, load average before {facts['load_average']}; "
          + ", ".join(v for k, v in facts["versions"].items() if k in impls))
    print(f"Gelem/s, {args.dtype}, median of {args.repeat} rounds; each round times every implementation "
          f"at {' and '.join(map(str, threads))} threads in rotated order (memory: np.copyto / np.multiply, "
          f"1 thread). {top}/1: the {top}-thread/1-thread speedup of the same library.\n")
    for name in args.functions.split(","):
        for direction in args.directions.split(","):
            head = ["size"] + [f"{i} ×{t}" for i in impls for t in (threads if i != "memory" else [1])]
            head += [f"fastact {top}/1", f"torch {top}/1"] if "torch" in impls else [f"fastact {top}/1"]
            print(f"**{name} {direction}**\n")
            print("| " + " | ".join(head) + " |")
            print("|" + "---:|" * len(head))
            for k in range(args.min_log2, args.max_log2 + 1, args.step):
                print(f"{name} {direction} 2^{k}", file=sys.stderr, flush=True)
                inputs = make_inputs(1 << k, np.dtype(args.dtype))
                calls = {}
                for impl in impls:
                    for t in (threads if impl != "memory" else [1]):
                        try:
                            calls[(impl, t)] = build(impl, name, direction, *inputs, t)
                        except Unsupported:
                            pass
                loops = {}
                for key, fn in calls.items():
                    with using_threads(key[1]):
                        loops[key] = calibrate(fn, args.sample_time)
                samples = {key: [] for key in calls}
                keys = list(calls)
                for r in range(args.repeat):
                    for key in keys[r % len(keys):] + keys[:r % len(keys)]:
                        with using_threads(key[1]):
                            samples[key].append(time_per_call(calls[key], loops[key]))
                med = {key: statistics.median(s) for key, s in samples.items()}
                rate = {key: (1 << k) / s / 1e9 for key, s in med.items()}
                row = [f"2^{k}"] + [f"{rate[(i, t)]:.3f}" if (i, t) in rate else "–"
                                    for i in impls for t in (threads if i != "memory" else [1])]
                for impl in (["fastact", "torch"] if "torch" in impls else ["fastact"]):
                    one, many = med.get((impl, 1)), med.get((impl, top))
                    row.append(f"{one / many:.2f}" if one and many else "–")
                print("| " + " | ".join(row) + " |", flush=True)
                del calls, inputs
            print()


if __name__ == "__main__":
    main()
