#!/usr/bin/env bash
# The Python test suite on an aarch64 build of fastact, without an aarch64
# machine: Debian's arm64 Python 3.11 (unpacked by debootstrap's first stage,
# never configured), PyPI's aarch64 wheels of NumPy and the test dependencies,
# and the extension cross-compiled by aarch64-linux-gnu-gcc; pytest then runs
# under qemu-aarch64. Slow (every Python instruction is emulated), so it is
# not part of .ci/run; tools/check_cross.sh is the quick aarch64 check there.
#
#   bash tools/check_aarch64_pytest.sh [WORKDIR] [-- PYTEST ARGS...]
#
# WORKDIR (default /tmp/fastact-aarch64) keeps the Python and the wheels
# between runs. Without pytest arguments the whole suite runs on two
# processes. Needs network access to Debian and PyPI on the first run, and
# debootstrap, qemu-user, gcc-aarch64-linux-gnu (apt-get installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=${1:-/tmp/fastact-aarch64}
[[ $# == 0 ]] || shift
[[ $# == 0 || $1 != -- ]] || shift
mkdir -p "$work"
root=$work/root build=$work/build
# where Debian's Python looks for packages itself: the tests' subprocesses
# (which set PYTHONPATH to the package alone) find them too
site=$root/usr/local/lib/python3.11/dist-packages

missing=()
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
if (( ${#missing[@]} )); then
    echo "== installing ${missing[*]}"
    apt-get install -y -q "${missing[@]}" >/dev/null
fi

if [[ ! -x $root/usr/bin/python3.11 ]]; then
    echo "== Debian bookworm's arm64 Python 3.11 into $root"
    debootstrap --foreign --arch=arm64 --variant=minbase --include=python3.11,libpython3.11-dev \
        bookworm "$root" http://deb.debian.org/debian >"$work/debootstrap.log"
    # the first stage only downloads the included packages: unpack them all
    for deb in "$root"/var/cache/apt/archives/*.deb; do dpkg -x "$deb" "$root"; done
fi
# the emulated Python behind a host script, which is its sys.executable too:
# an emulated process cannot exec an aarch64 binary (no binfmt_misc here),
# but it can exec this script, so subprocesses and xdist's workers run
mkdir -p "$work/bin"
printf '#!/bin/sh\nexec qemu-aarch64 -L "%s" -0 "%s" "%s" "$@"\n' "$root" "$work/bin/python3" \
    "$root/usr/bin/python3.11" >"$work/bin/python3"
chmod +x "$work/bin/python3"
python=("$work/bin/python3")

if [[ ! -d $site/numpy ]]; then
    echo "== PyPI's aarch64 wheels into $site"
    python3 -m pip install -q --target "$site" --only-binary=:all: --python-version 3.11 \
        --implementation cp --abi cp311 --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 \
        "numpy>=2.0" ml_dtypes pytest hypothesis mpmath scipy pytest-xdist threadpoolctl matplotlib
fi

echo "== cross-compiling the extension ($(aarch64-linux-gnu-gcc --version | head -n 1))"
rm -rf "$build" && mkdir -p "$build/obj" "$build/pkg"
cp -r src/fastact "$build/pkg/"
rm -f "$build"/pkg/fastact/_ext.*.so "$build"/pkg/fastact/_ext.c
python3 -m cython -3 --directive boundscheck=False,wraparound=False,cdivision=True -I src \
    -o "$build/_ext.c" src/fastact/_ext.pyx
# setup.py's flags, and Python's own (-fPIC -DNDEBUG -fwrapv) for an extension
numpy_include=$(find "$site/numpy" -path '*/include/numpy/ndarrayobject.h' | head -n 1)
flags=(-fPIC -DNDEBUG -fwrapv -O3 -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-psabi
       -ffp-contract=off -fno-tree-vectorize -fno-math-errno -pthread -g0 -Werror
       -DNPY_NO_DEPRECATED_API=NPY_1_25_API_VERSION -I"$repo/src_c" -I"$(dirname "$(dirname "$numpy_include")")"
       -isystem "$root/usr/include/python3.11" -isystem "$root/usr/include")
sources=("$build/_ext.c" src_c/*/*.c)
printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -I{} sh -c \
    'aarch64-linux-gnu-gcc "$@" -c "{}" -o "'"$build"'/obj/$(basename "{}" .c).o"' _ "${flags[@]}"
extension=$build/pkg/fastact/_ext.cpython-311-aarch64-linux-gnu.so
aarch64-linux-gnu-gcc -shared -pthread "$build"/obj/*.o -lm -o "$extension"
echo "   $(file -b "$extension" | cut -d, -f1-2)"

export PYTHONPATH=$build/pkg PYTHONDONTWRITEBYTECODE=1
echo "== under qemu-aarch64: $("${python[@]}" -c 'import platform, numpy, fastact as fa
print(platform.machine(), "Python", platform.python_version(), "NumPy", numpy.__version__,
      "fastact", fa.__version__, "sets", fa.available_isas())')"
if (( $# )); then
    exec "${python[@]}" -m pytest -p no:cacheprovider "$@"
fi
# the suite as the README runs it, on two processes; fuzz examples cut to a
# quarter, as for the sanitizer builds
export FASTACT_FUZZ_SCALE=${FASTACT_FUZZ_SCALE:-0.25}
started=$SECONDS
status=0
# qemu-user 7.2 itself aborts in a forked child that starts threads (an
# assertion in its TCG loop), so that one test is left out here
"${python[@]}" -m pytest -p no:cacheprovider -q -n 2 \
    --deselect tests/test_layout.py::test_pool_works_in_forked_child || status=$?
echo "== the suite under qemu-aarch64 took $((SECONDS - started)) s: $([[ $status == 0 ]] && echo passed || echo FAILED)"
exit $status
