#!/usr/bin/env bash
# Test a built wheel the way a user gets it: installed into a fresh virtual
# environment with the test extras (and, for --full-per-isa, the CPU torch
# build the comparison tests need), no compiler on PATH, and no source tree
# beside the tests, so `import fastact` can only find the installed package.
#
#   tools/check_wheel.sh WHEEL [--full-per-isa]
#
# Steps: print the ISAs the installed build detects; for every ISA this CPU
# has, run with FASTACT_ISA=<isa> an import check (the cap is what isa()
# reports), `python -m fastact`, and a smoke test that computes every function
# in every dtype, compares with fastact._reference and hashes the result bits
# (every ISA must give the same hash); then the full test suite once with the
# default ISA. The suite already sweeps every ISA through set_isa, so running
# it again per FASTACT_ISA value adds little; --full-per-isa does so anyway.
#
# Environment: PYTHON (default python3) makes the venv; it must match the
# wheel's Python tag.
set -euo pipefail

usage() { echo "usage: $0 WHEEL [--full-per-isa]" >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 ]] || usage
wheel=$(realpath "$1")
full_per_isa=0
if [[ $# -eq 2 ]]; then [[ $2 == --full-per-isa ]] || usage; full_per_isa=1; fi
[[ -f $wheel && $wheel == *.whl ]] || { echo "not a wheel file: $1" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
started=$SECONDS

work=$(mktemp -d "${TMPDIR:-/tmp}/fastact-check-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
venv=$work/venv
run=$work/run                 # the tests and a pytest config, nothing else

echo "== wheel: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"
"${PYTHON:-python3}" -m venv "$venv"
# torch only for the whole suite: the API tests run by default compare with
# it in three tests (test_rows; the main suite runs them), and unpacking it
# took over a minute
extra=(); [[ $full_per_isa == 1 ]] && extra=("torch==2.13.0")
echo "== install into a fresh venv: the wheel with [test]${extra:+, and ${extra[*]}}"
t0=$SECONDS
# torch: exactly this spelling (the local CPU build); a looser one can pull CUDA wheels
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${wheel}[test]" ${extra[@]+"${extra[@]}"}
echo "   installed in $((SECONDS - t0)) s"

# The tests without the source tree, and pytest's settings from pyproject.toml
# as a standalone pytest.ini (plus no cache folder).
mkdir -p "$run"
cp -r "$repo/tests" "$run/tests"
cp -r "$repo/examples" "$run/examples"   # test_demos runs them
find "$run/tests" \( -name __pycache__ -o -name .hypothesis -o -name .pytest_cache \) -prune -exec rm -rf {} +
"$venv/bin/python" - "$repo/pyproject.toml" "$run/pytest.ini" <<'EOF'
import sys, tomllib
opts = tomllib.load(open(sys.argv[1], "rb"))["tool"]["pytest"]["ini_options"]
opts["addopts"] = list(opts.get("addopts", [])) + ["-p", "no:cacheprovider"]
def ini(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "".join("\n    " + str(v) for v in value)
    return str(value)
with open(sys.argv[2], "w") as f:
    f.write("[pytest]\n" + "".join(f"{k} = {ini(v)}\n" for k, v in opts.items()))
EOF

# No compiler anywhere the tests could look: PATH is the venv's bin only.
clean_env=(env -u PYTHONPATH -u PYTHONHOME -u CC -u CXX -u LDSHARED -u CFLAGS -u FASTACT_ISA
           -u FASTACT_NUM_THREADS "PATH=$venv/bin" "HOME=$work")
# shellcheck disable=SC2016
found=$("${clean_env[@]}" /bin/bash -c 'for c in cc gcc clang c99 g++ c++ x86_64-linux-gnu-gcc; do command -v "$c"; done; true')
if [[ -n $found ]]; then
    echo "a compiler is reachable on the test PATH: $found" >&2
    exit 1
fi
echo "== no compiler on the test PATH ($venv/bin)"
# py [VAR=value...]: run the venv's python with "${pyargs[@]}" from $run in that environment
py() { (cd "$run" && "${clean_env[@]}" "$@" "$venv/bin/python" "${pyargs[@]}"); }

cp "$repo/tools/smoke_test.py" "$run/smoke.py"

echo "== detected ISAs (python -m fastact, default ISA)"
pyargs=(-W error -m fastact); py
isas=$(pyargs=(-W error -c "import fastact; print(' '.join(fastact.available_isas()))"); py)
echo "== ISAs to check: $isas"

hashes=()
for isa in $isas; do
    echo "== FASTACT_ISA=$isa"
    pyargs=(-W error -m fastact); py "FASTACT_ISA=$isa" | sed -n '1,4p'
    pyargs=(-W error smoke.py "$isa" "$venv")
    out=$(py "FASTACT_ISA=$isa")
    echo "   $out"
    hashes+=("${out##* }")
done
if [[ $(printf '%s\n' "${hashes[@]}" | sort -u | wc -l) -ne 1 ]]; then
    echo "ISAs disagree on the result bits: ${hashes[*]}" >&2
    exit 1
fi
echo "== every ISA gave the same bits"

pytest_args=(-m pytest -c "$run/pytest.ini" --rootdir "$run" -q "$run/tests")
if [[ $full_per_isa == 1 ]]; then
    for isa in $isas; do
        echo "== test suite, FASTACT_ISA=$isa"
        t0=$SECONDS
        pyargs=("${pytest_args[@]}"); py "FASTACT_ISA=$isa" | tail -n 5
        echo "   took $((SECONDS - t0)) s"
    done
else
    # CI has just run the whole suite on the same sources installed from the
    # checkout: here, the tests of what the wheel itself could get wrong (its
    # files, the ufuncs and public API, the kernels' seed values on every ISA,
    # threads, softmax's rows), not every accuracy sweep a second time
    echo "== tests of the installed API, default ISA (each sweeps every ISA itself)"
    t0=$SECONDS
    pyargs=(-m pytest -c "$run/pytest.ini" --rootdir "$run" -q "$run/tests/test_api.py"
            "$run/tests/test_manifest.py" "$run/tests/test_seeds.py" "$run/tests/test_threads.py"
            "$run/tests/test_rows.py" -n 2)  # two processes, as the README's test command
    py | tail -n 5
    echo "   took $((SECONDS - t0)) s"
fi
echo "== check_wheel.sh passed in $((SECONDS - started)) s"
