#!/usr/bin/env bash
# Compile every C source (and the Cython-generated module) with gcc and with
# clang, -Wall -Wextra -Werror, with setup.py's flags, in the two
# configurations a build can take:
#   x86     FA_HAVE_X86_KERNELS + FA_HAVE_AVX512_EMULATION (x86-64 with SIMDe)
#   scalar  neither macro: what aarch64, other non-x86 and MSVC builds compile
# (on x86-64, first setup.py's probe, which gives a build the x86 kernels,
# must pass with each compiler); then link the C objects of each
# configuration into a shared library with -z defs, so a kernel table declared but not built shows up as an undefined
# symbol; and check the emulated FMA (tools/check_fma.c) built by each.
# Objects go to a temporary folder; the tree is not touched.
#
#   tools/check_compilers.sh [COMPILER...]     (default: gcc clang)
#
# FASTACT_COMPILERS_DONE: configurations, as COMPILER-CONFIG (e.g. "gcc-x86"),
# to leave out because the caller has built them with these flags already
# (.ci/run's install builds gcc-x86 with FASTACT_WERROR=1; the import of the
# extension, resolving every symbol at load, stands in for -z defs there).
#
# Needs the build requirements importable by python3 (Cython, numpy,
# simde-py); `pip install cython numpy simde-py==0.8.2.post1`.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
compilers=("$@")
[[ ${#compilers[@]} -gt 0 ]] || compilers=(gcc clang)

work=$(mktemp -d "${TMPDIR:-/tmp}/fastact-check-compilers.XXXXXX")
trap 'rm -rf "$work"' EXIT

# setup.py's extra_compile_args (non-MSVC), plus what setuptools adds for an
# extension module (-fPIC -DNDEBUG), and -Werror; clang_flags adds clang's.
flags=(-O3 -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-psabi
       -ffp-contract=off -fno-tree-vectorize -fno-math-errno -pthread -fPIC -DNDEBUG -Werror
       -DNPY_NO_DEPRECATED_API=NPY_1_25_API_VERSION -Isrc_c)
# SIMDe's headers and Cython are build requirements (pyproject.toml), so they
# live only in pip's isolated build environment: bring them here too.
python3 -c 'import simde_py, Cython' 2>/dev/null || python3 -m pip install -q "simde-py==0.8.2.post1" "Cython>=3.0"
read -r simde numpy_inc py_inc < <(python3 -c '
import sysconfig, numpy, simde_py
print(simde_py.get_include(), numpy.get_include(), sysconfig.get_paths()["include"])')
x86_flags=(-DFA_HAVE_X86_KERNELS=1 -DFA_HAVE_AVX512_EMULATION=1 "-I$simde")
configs=(scalar)
case $(uname -m) in x86_64|amd64) configs=(x86 scalar) ;; esac

# The Cython module, generated as setup.py generates it.
python3 -m cython -3 --directive boundscheck=False,wraparound=False,cdivision=True -I src \
    -o "$work/_ext.c" src/fastact/_ext.pyx

done_already() { [[ " ${FASTACT_COMPILERS_DONE:-} " == *" $1 "* ]]; }

# shellcheck source=tools/clang_flags.sh
. tools/clang_flags.sh

jobs_file=$work/jobs
: >"$jobs_file"
for cc in "${compilers[@]}"; do
    if ! command -v "$cc" >/dev/null && [[ $cc == clang ]] && command -v apt-get >/dev/null; then
        echo "== installing clang"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q clang >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q clang >/dev/null; }
    fi
    command -v "$cc" >/dev/null || { echo "compiler not found: $cc" >&2; exit 1; }
    for config in "${configs[@]}"; do
        done_already "$cc-$config" && continue
        mkdir -p "$work/$cc-$config"
        read -r -a extra <<<"$(clang_flags "$cc")"
        [[ $config == x86 ]] && extra+=("${x86_flags[@]}")
        for src in src_c/*/*.c "$work/_ext.c"; do
            inc=(); [[ $src == */_ext.c ]] && inc=("-I$numpy_inc" "-I$py_inc")
            printf '%s\0' "$cc ${flags[*]} ${extra[*]} ${inc[*]} -c $src -o $work/$cc-$config/$(basename "$src" .c).o" >>"$jobs_file"
        done
    done
done

if [[ " ${configs[*]} " == *" x86 "* ]]; then
    # setup.py builds the x86 kernels only for a compiler that passes its probe
    python3 -c 'import ast
tree = ast.parse(open("setup.py").read())
print(next(node.value.value for node in tree.body
           if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "X86_PROBE"))' >"$work/x86_probe.c"
    for cc in "${compilers[@]}"; do
        read -r -a extra <<<"$(clang_flags "$cc")"
        "$cc" "${flags[@]}" "${extra[@]}" -c "$work/x86_probe.c" -o "$work/x86_probe-$cc.o" \
            || { echo "FAIL: $cc rejects setup.py's X86_PROBE: pip would build the scalar kernels only" >&2; exit 1; }
    done
    echo "== setup.py's x86 probe passes with ${compilers[*]}"
fi

echo "== compiling: ${compilers[*]} x ${configs[*]} ($(tr -cd '\0' <"$jobs_file" | wc -c) files, -Werror)"
for cc in "${compilers[@]}"; do echo "   $cc: $("$cc" --version | head -n 1)"; done
status=0
# each job logs to its own file; xargs exits non-zero if any failed
# shellcheck disable=SC2016
xargs -0 -P "$(nproc)" -I{} bash -c 'cmd=$1; log=${cmd##* -o }; log=${log%.o}.log
    if ! $cmd >"$log" 2>&1; then echo "FAIL: $cmd" >&2; cat "$log" >&2; exit 1; fi
    [[ -s $log ]] && { echo "output from: $cmd"; cat "$log"; }; true' _ {} <"$jobs_file" || status=1
[[ $status == 0 ]] || { echo "== compile errors (above)" >&2; exit 1; }

echo "== linking the C objects of each configuration with -z defs"
for cc in "${compilers[@]}"; do
    for config in "${configs[@]}"; do
        if done_already "$cc-$config"; then echo "   $cc $config: built with -Werror by the caller"; continue; fi
        objs=("$work/$cc-$config"/*.o)
        objs=("${objs[@]/*\/_ext.o/}")
        # shellcheck disable=SC2068
        "$cc" -shared -pthread -Wl,-z,defs -o "$work/$cc-$config/libfastact_c.so" ${objs[@]} -lm
        tables=$(nm -D --defined-only "$work/$cc-$config/libfastact_c.so" | awk '/ fa_kernels_/ {print $3}' | sort | tr '\n' ' ')
        echo "   $cc $config: ok, kernel tables: $tables"
    done
done
echo "== the emulated FMA (src_c/simd/fma_exact.h) against the C library's, per compiler"
for cc in "${compilers[@]}"; do
    "$cc" -O3 -std=gnu11 -Wall -Wextra -Werror -ffp-contract=off -fno-math-errno -Isrc_c tools/check_fma.c -lm \
        -o "$work/check_fma-$cc"
    result=$("$work/check_fma-$cc" 4) || { echo "$result" >&2; exit 1; }
    echo "   $cc: $result"
done
echo "== check_compilers.sh passed in $((SECONDS - started)) s"
