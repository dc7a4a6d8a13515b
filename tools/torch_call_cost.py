#!/usr/bin/env python3
"""Per-call cost of fastact.torch's inference path against torch.nn.functional.

One call on a small float32 tensor under torch.no_grad() is mostly fixed
cost: this times each function's torch call and fastact.torch's, samples
interleaved, and prints a Markdown table of the best sample's µs per call and
the ratio (fastact.torch's time over torch's: < 1, fastact.torch is cheaper).

    python tools/torch_call_cost.py [--size 1000] [--repeat 7] [--calls 3000] [--threads 1]
"""
import argparse
import timeit

import torch

import fastact as fa
import fastact.torch as fat
from fastact._bench import cpu_model

F = torch.nn.functional
CASES = {
    "gelu": ("F.gelu(x)", "fat.gelu(x)"),
    "gelu tanh": ("F.gelu(x, approximate='tanh')", "fat.gelu(x, approximate='tanh')"),
    "silu": ("F.silu(x)", "fat.silu(x)"),
    "quick_gelu": ("x * torch.sigmoid(1.702 * x)", "fat.quick_gelu(x)"),
    "sigmoid": ("torch.sigmoid(x)", "fat.sigmoid(x)"),
    "tanh": ("torch.tanh(x)", "fat.tanh(x)"),
    "mish": ("F.mish(x)", "fat.mish(x)"),
    "softmax": ("F.softmax(rows, -1)", "fat.softmax(rows, -1)"),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    fa.set_num_threads(args.threads)
    x = torch.randn(args.size)
    names = {"F": F, "fat": fat, "torch": torch, "x": x, "rows": x.view(1, -1)}
    print(f"{cpu_model()}; torch {torch.__version__}; {args.size} float32 elements, torch.no_grad(), "
          f"{args.threads} thread(s); best of {args.repeat} samples of {args.calls} calls, interleaved\n")
    print("| function | torch.nn.functional µs | fastact.torch µs (no_grad) | ratio |")
    print("|---|---:|---:|---:|")
    with torch.no_grad():
        for name, (theirs, ours) in CASES.items():
            timers = [timeit.Timer(s, globals=names) for s in (theirs, ours)]
            best = [float("inf"), float("inf")]
            for _ in range(args.repeat):
                for i, timer in enumerate(timers):
                    best[i] = min(best[i], timer.timeit(args.calls) / args.calls * 1e6)
            print(f"| {name} | {best[0]:.2f} | {best[1]:.2f} | {best[1] / best[0]:.2f}× |")


if __name__ == "__main__":
    main()
