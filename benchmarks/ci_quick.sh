#!/usr/bin/env bash
# A short benchmark pass for CI: proves that the suite and the report run and
# prints a small table (float32; 1e3 and 1e5 elements; 1 thread; gelu at 1e3 in
# float16 and, with ml_dtypes, bfloat16). It never
# judges timings: it fails only if something errors.
set -euo pipefail
cd "$(dirname "$0")/.."

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# -p no:cacheprovider: leave no .pytest_cache behind in the checkout
python -m pytest benchmarks -m quick --bench-time 0.02 -q -p no:cacheprovider \
    --benchmark-json "$out/bench.json" --benchmark-columns=median,iqr,rounds,iterations
python benchmarks/report.py "$out/bench.json"
