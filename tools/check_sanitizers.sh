#!/usr/bin/env bash
# Build the extension with gcc's sanitizers and run part of the test suite
# under them:
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer: reads and writes out
#         of bounds (kernel tails, gather/scatter buffers, streaming stores),
#         use after free, undefined arithmetic. Every kernel set the CPU runs
#         (the `isa` fixture; on a CPU without AVX-512, avx512-emulated
#         too), forward and backward,
#         float16/32/64, contiguous and strided (gather) paths, the thread pool.
#   tsan  ThreadSanitizer: data races in the thread pool, and between the
#         threads that share one call (out= overlapping an input, d8c1cde).
#         Built with the portable kernels only (FASTACT_SCALAR_ONLY=1): how a
#         call is split and ordered across threads does not depend on the
#         kernel set, and the portable conversions are plain C that TSan sees
#         whole.
# Each check copies the working tree (tracked files and untracked ones git
# does not ignore, so uncommitted changes are checked) to a temporary folder
# and builds it there into its own virtual environment; the checkout is not
# touched. The two builds, then the two test runs, go side by side. Any
# sanitizer report fails the run, also one from a subprocess a test started
# (reports go to log files, checked after each run), as does a failing test.
# gcc does not instrument masked loads and stores (the AVX2 and AVX-512
# kernels' tails) or streaming stores (large ReLU outputs): both builds see
# them as lane loops of plain copies and plain stores instead, through a
# wrapper <immintrin.h> (below) that only these builds use.
#
#   tools/check_sanitizers.sh
#
# Environment:
#   FASTACT_SANITIZERS          which checks to run (default: "asan tsan")
#   FASTACT_SANITIZER_SELFTEST  asan, ubsan or tsan: put a known bug into the
#                               copied sources, to see the check fail (never
#                               set in CI):
#       asan  the contiguous loop passes the kernel one element too many
#             (reads and writes one past the end of the arrays)
#       ubsan a signed integer overflow in every call (the asan build)
#       tsan  out= running behind its input is split across threads again (the
#             race fixed in d8c1cde)
#
# Needs gcc with its sanitizer runtimes (libasan, libubsan, libtsan), python3
# >= 3.10 with venv, and the package index for the build and test requirements.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
checks=${FASTACT_SANITIZERS:-asan tsan}
selftest=${FASTACT_SANITIZER_SELFTEST:-}

work=$(mktemp -d "${TMPDIR:-/tmp}/fastact-sanitizers.XXXXXX")
bg_pids=()
cleanup() {
    for pid in "${bg_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

runtime() {  # the absolute path of one of gcc's sanitizer runtimes
    local path
    path=$(gcc -print-file-name="$1")
    [[ $path == /* && -e $path ]] || { echo "gcc has no $1 (install gcc's sanitizer runtimes)" >&2; exit 1; }
    echo "$path"
}

# ---- build --------------------------------------------------------------------------

# Both builds leave the kernels' helpers to gcc's inlining (-DFA_INLINE, which
# kernels.inc takes as given): forced, as in the release build, the
# instrumented kernel files took minutes each; the checks are the same.
# -O1, not setup.py's -O3, for ASan+UBSan (it comes last on the command line,
# so it wins): the same checks, but the kernels compile in ~1 minute instead
# of ~3 (UBSan at -O3 is slow on the SIMDe-emulated AVX-512 kernels), and -O1
# is what the sanitizers' own documentation recommends. TSan keeps -O3.
cat >"$work/gcc-O1" <<'EOF'
#!/bin/sh
exec gcc "$@" -O1
EOF
chmod +x "$work/gcc-O1"

# Found before the compiler's own <immintrin.h> (-I comes first), which it
# includes (and <emmintrin.h> likewise); then the masked loads and stores
# become lane loops of plain, instrumented copies, and the streaming stores
# plain stores, so ASan and TSan see what the kernels' tails read and
# write. Same bits: masked-off lanes are not touched, and load as zero. (The
# SIMDe-emulated AVX-512 kernels have lane loops of their own already.)
mkdir -p "$work/shim"
cat >"$work/shim/immintrin.h" <<'SHIM'
/* tools/check_sanitizers.sh: the compiler's <immintrin.h>, with its masked
 * loads and stores replaced by lane loops that the sanitizers instrument. */
#include_next <immintrin.h>
#if !defined(FA_SANITIZER_SHIM)
#define FA_SANITIZER_SHIM 1

#define FA_SAN_LOAD_(T, E, W, keep)                                      \
    E lanes_[W] = {0};                                                     \
    for (int i_ = 0; i_ < W; i_++)                                         \
        if (keep) __builtin_memcpy(&lanes_[i_], p + i_, sizeof(E));        \
    T r_;                                                                  \
    __builtin_memcpy(&r_, lanes_, sizeof r_);                              \
    return r_;
#define FA_SAN_STORE_(E, W, keep)                                        \
    E lanes_[W];                                                           \
    __builtin_memcpy(lanes_, &v, sizeof lanes_);                           \
    for (int i_ = 0; i_ < W; i_++)                                         \
        if (keep) __builtin_memcpy(p + i_, &lanes_[i_], sizeof(E));

#define FA_SAN_AVX2_ static inline __attribute__((target("avx2")))
FA_SAN_AVX2_ __m256 fa_san_maskload_ps(const float *p, __m256i m) {
    int k[8]; __builtin_memcpy(k, &m, sizeof k); FA_SAN_LOAD_(__m256, float, 8, k[i_] < 0) }
FA_SAN_AVX2_ __m256d fa_san_maskload_pd(const double *p, __m256i m) {
    long long k[4]; __builtin_memcpy(k, &m, sizeof k); FA_SAN_LOAD_(__m256d, double, 4, k[i_] < 0) }
FA_SAN_AVX2_ void fa_san_maskstore_ps(float *p, __m256i m, __m256 v) {
    int k[8]; __builtin_memcpy(k, &m, sizeof k); FA_SAN_STORE_(float, 8, k[i_] < 0) }
FA_SAN_AVX2_ void fa_san_maskstore_pd(double *p, __m256i m, __m256d v) {
    long long k[4]; __builtin_memcpy(k, &m, sizeof k); FA_SAN_STORE_(double, 4, k[i_] < 0) }
#define _mm256_maskload_ps(p, m) fa_san_maskload_ps((p), (m))
#define _mm256_maskload_pd(p, m) fa_san_maskload_pd((p), (m))
#define _mm256_maskstore_ps(p, m, v) fa_san_maskstore_ps((p), (m), (v))
#define _mm256_maskstore_pd(p, m, v) fa_san_maskstore_pd((p), (m), (v))

#define FA_SAN_AVX512_ static inline __attribute__((target("avx512f")))
FA_SAN_AVX512_ __m512 fa_san_maskz_loadu_ps(__mmask16 m, const float *p) { FA_SAN_LOAD_(__m512, float, 16, m >> i_ & 1) }
FA_SAN_AVX512_ __m512d fa_san_maskz_loadu_pd(__mmask8 m, const double *p) { FA_SAN_LOAD_(__m512d, double, 8, m >> i_ & 1) }
FA_SAN_AVX512_ void fa_san_mask_storeu_ps(float *p, __mmask16 m, __m512 v) { FA_SAN_STORE_(float, 16, m >> i_ & 1) }
FA_SAN_AVX512_ void fa_san_mask_storeu_pd(double *p, __mmask8 m, __m512d v) { FA_SAN_STORE_(double, 8, m >> i_ & 1) }
#define _mm512_maskz_loadu_ps(m, p) fa_san_maskz_loadu_ps((m), (p))
#define _mm512_maskz_loadu_pd(m, p) fa_san_maskz_loadu_pd((m), (p))
#define _mm512_mask_storeu_ps(p, m, v) fa_san_mask_storeu_ps((p), (m), (v))
#define _mm512_mask_storeu_pd(p, m, v) fa_san_mask_storeu_pd((p), (m), (v))

/* streaming stores (large ReLU outputs) as plain ones, which are
 * instrumented (SSE2's: in the emmintrin.h below, which this one includes) */
#define _mm256_stream_ps(p, v) _mm256_storeu_ps((p), (v))
#define _mm256_stream_pd(p, v) _mm256_storeu_pd((p), (v))
#define _mm256_stream_si256(p, v) _mm256_storeu_si256((p), (v))
#define _mm512_stream_ps(p, v) _mm512_storeu_ps((p), (v))
#define _mm512_stream_pd(p, v) _mm512_storeu_pd((p), (v))
#endif
SHIM
# SSE2's kernels include only <emmintrin.h> (simd_sse2.h)
cat >"$work/shim/emmintrin.h" <<'SHIM'
/* tools/check_sanitizers.sh: the compiler's <emmintrin.h>, with SSE's
 * streaming stores as plain ones, which the sanitizers instrument. Its
 * <xmmintrin.h> includes <emmintrin.h> again, which comes back here: the
 * macros only once the outermost inclusion has declared the functions. */
#if !defined(FA_SANITIZER_SHIM_SSE2)
#define FA_SANITIZER_SHIM_SSE2 1
#include_next <emmintrin.h>
#define _mm_stream_ps(p, v) _mm_storeu_ps((p), (v))
#define _mm_stream_pd(p, v) _mm_storeu_pd((p), (v))
#else
#include_next <emmintrin.h>
#endif
SHIM

copy_tree() {  # the working tree as git sees it, minus ignored files (build/, *.so, ...)
    mkdir -p "$1"
    git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do
        [[ -e $f ]] && printf '%s\0' "$f"  # a tracked file deleted in the tree is gone
    done | xargs -0 cp --parents -t "$1"
}

inject_bug() {  # name src: the self-test's known bug, in the copy only
    local file=$2/src_c/runtime/loops.c before after
    case $1 in
        # the first kernel call in loops.c is run_contiguous's
        asan) before='job->kernel(in, out, n, NULL);'; after='job->kernel(in, out, n + 1, NULL);' ;;
        # a signed overflow on every call
        ubsan) before='ptrdiff_t n = dims[0];'
               after='ptrdiff_t n = dims[0]; { volatile int big_ = 2147483647; big_ = big_ + (int)(n >= 0); }' ;;
        tsan) before='if (d > 0) return (fa_order){PTRDIFF_MAX, 0};'
              after='if (d > 0) return (fa_order){PTRDIFF_MAX, 1};' ;;
        *) echo "FASTACT_SANITIZER_SELFTEST: asan, ubsan or tsan, not '$1'" >&2; return 1 ;;
    esac
    grep -qF "$before" "$file" || { echo "self-test: '$before' not in loops.c (update inject_bug)" >&2; return 1; }
    python3 - "$file" "$before" "$after" <<'PY'
import sys
path, before, after = sys.argv[1:]
text = open(path).read()
open(path, "w").write(text.replace(before, after, 1))
PY
    echo "self-test: injected into the copy of src_c/runtime/loops.c: $after"
}

requirements() {  # build requirements and the test extra, from pyproject.toml
    "$1" - <<'PY'
try:
    import tomllib
except ImportError:  # Python 3.10: what pyproject.toml said when this was written
    print("setuptools>=77\nCython>=3.0\nnumpy>=2.0\nsimde-py==0.8.2.post1\npytest>=8\nhypothesis>=6\nmpmath\nscipy\npytest-xdist")
else:
    meta = tomllib.load(open("pyproject.toml", "rb"))
    print("\n".join(meta["build-system"]["requires"] + meta["project"]["optional-dependencies"]["test"]))
PY
}

build() {  # name cc cflags ldflags scalar_only: venv + install, in $work/name; output to $work/name/build.log
    local name=$1 cc=$2 cflags=$3 ldflags=$4 scalar_only=$5
    local dir=$work/$name
    {
        python3 -m venv "$dir/venv"
        cd "$dir/src"
        mapfile -t reqs < <(requirements "$dir/venv/bin/python")
        "$dir/venv/bin/python" -m pip install -q --no-compile "${reqs[@]}"
        CC=$cc CFLAGS=$cflags LDFLAGS=$ldflags FASTACT_SCALAR_ONLY=$scalar_only \
            FASTACT_AVX512_EMULATION=$emulation \
            "$dir/venv/bin/python" -m pip install -q --no-compile --no-build-isolation --no-deps .
    } >"$dir/build.log" 2>&1
}

command -v gcc >/dev/null || { echo "gcc not found" >&2; exit 1; }
# The SIMDe-emulated AVX-512 kernels run the AVX-512 kernels' code on AVX2
# CPUs; on a CPU with AVX-512 the real ones run under ASan instead, and the
# emulated file (most of the build's time under ASan) is left out.
emulation=1
grep -qw avx512f /proc/cpuinfo 2>/dev/null && emulation=0
echo "== sanitizer builds ($checks), in $work: $(gcc --version | head -n 1)"
declare -A build_pid
unforced="-DFA_INLINE=static\ inline"
for name in $checks; do
    case $name in
        asan) cc=$work/gcc-O1
              cflags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g -I$work/shim $unforced"
              ldflags="-fsanitize=address,undefined"; scalar_only=0 ;;
        tsan) cc=gcc; cflags="-fsanitize=thread -fno-omit-frame-pointer -g -I$work/shim $unforced"; ldflags="-fsanitize=thread"
              scalar_only=1 ;;
        *) echo "FASTACT_SANITIZERS: asan and/or tsan, not '$name'" >&2; exit 1 ;;
    esac
    copy_tree "$work/$name/src"
    [[ ${selftest/ubsan/asan} != "$name" ]] || inject_bug "$selftest" "$work/$name/src"
    # the two builds run side by side (each compiles its files side by side too)
    build "$name" "$cc" "$cflags" "$ldflags" "$scalar_only" &
    build_pid[$name]=$!
    bg_pids+=($!)
done
for name in $checks; do
    if ! wait "${build_pid[$name]}"; then
        echo "== $name build FAILED:" >&2
        tail -n 60 "$work/$name/build.log" >&2
        exit 1
    fi
done
bg_pids=()
echo "   built in $((SECONDS - started)) s"

# ---- test ---------------------------------------------------------------------------

# The test files, among those named, that exist in the copy of the tree.
present() { local f; for f in "$@"; do [[ -e $work/$name/src/$f ]] && echo "$f"; done; true; }

# pytest in the copy, with the sanitizer runtime preloaded; then any report
# in $work/name/logs fails the check. Writes $work/name/result: "ok ..." or
# "FAILED ...". Runs in a background subshell: exports stay local to it.
run_check() {  # preload pytest-args...   (name, launcher: set by the caller)
    local preload=$1; shift
    local dir=$work/$name t0=$SECONDS status=0 reports result
    mkdir -p "$dir/logs"
    # The kernel sets the tests will run under (conftest.py's list): on
    # x86-64 the ASan build must have its x86 kernels, AVX-512 real or
    # emulated (setup.py leaves them out, quietly, if its compiler probe
    # fails under these flags).
    local isas
    isas=$(cd "$dir" && "${launcher[@]}" env LD_PRELOAD="$preload" "$dir/venv/bin/python" -c '
import fastact as fa
emulated = fa._ext.isa_supported(fa._ISA_NAMES.index("avx512-emulated"))
print(" ".join(fa.available_isas() + ["avx512-emulated"] * bool(emulated)))' 2>&1) || true
    echo "== $name: kernel sets under test: $isas"
    if [[ $name == asan && $(uname -m) == x86_64 && " $isas " != *" avx512"* ]]; then
        echo "FAILED: the $name build has no x86 kernels" >"$dir/result"
        return
    fi
    echo "== $name: pytest $*"
    # From the copy, for its conftest.py and pyproject.toml settings; with the
    # src layout the package imported is the sanitized one in the venv.
    # OPENBLAS_NUM_THREADS=1: no idle BLAS threads. FASTACT_NUM_THREADS
    # unset: the tests choose their thread counts. LD_PRELOAD reaches python
    # (and the subprocesses tests start), not the launcher. --capture=sys:
    # pytest captures Python's output only, so what a sanitizer writes to
    # stderr as it stops the process is not lost with pytest's capture file.
    # FASTACT_FUZZ_SCALE: test_fuzz runs the first quarter of its examples
    # (the same derandomized sequence, cut short), a tenth under TSan
    # ($fuzz_scale): they were most of the time under both sanitizers.
    (cd "$dir/src" && "${launcher[@]}" env -u FASTACT_NUM_THREADS OPENBLAS_NUM_THREADS=1 FASTACT_FUZZ_SCALE="${fuzz_scale:-0.25}" \
        LD_PRELOAD="$preload" "$dir/venv/bin/python" -m pytest -q -p no:cacheprovider --capture=sys --durations=10 "$@") \
        || status=$?
    reports=$(find "$dir/logs" -type f -size +0c | sort)
    result=$(grep -E ' in [0-9.]+s' "$dir/run.log" | tail -n 1 | tr -d '=' | sed 's/^ *//; s/ *$//' || true)
    if [[ -n $reports ]]; then
        echo "== $name: SANITIZER REPORTS:"
        local r; for r in $reports; do echo "--- $r"; cat "$r"; done
        echo "FAILED: $(echo "$reports" | wc -l) sanitizer report(s); pytest: ${result:-no summary} [$((SECONDS - t0)) s]" >"$dir/result"
    elif grep -qE '^==[0-9]+==ERROR: AddressSanitizer|WARNING: ThreadSanitizer|: runtime error: ' "$dir/run.log"; then
        # UBSan beside ASan ignores log_path and reports on stderr (above)
        echo "FAILED: a sanitizer report in the output above; pytest: ${result:-no summary} [$((SECONDS - t0)) s]" >"$dir/result"
    elif [[ $status != 0 ]]; then
        echo "FAILED: pytest exit $status: ${result:-no summary} [$((SECONDS - t0)) s]" >"$dir/result"
    else
        echo "ok, no sanitizer reports: $result [$((SECONDS - t0)) s]" >"$dir/result"
    fi
}

# test ids of functions whose kernels run no code path the others do not (see check_asan):
# geglu runs swiglu's loops, bias_gelu and bias_relu bias_silu's, relu6 hardtanh's
SAME_PATHS="softplus or log_sigmoid or logsigmoid or mish or selu or celu or relu6 or geglu or bias_gelu or bias_relu"

check_asan() {
    # libasan first in the process (python itself is not instrumented), and
    # libubsan for the UBSan half of the build.
    local preload files
    preload="$(runtime libasan.so):$(runtime libubsan.so)"
    # detect_leaks=0: CPython and NumPy keep allocations until exit by design;
    #   leak reports would be theirs, not ours.
    # allocator_may_return_null=1: an impossible allocation gives NULL (and
    #   MemoryError), as without ASan, instead of aborting the test run.
    # PYTHONMALLOC=malloc: Python objects from malloc rather than pymalloc's
    #   arenas, so ASan also sees misuse of the objects _ext.pyx handles.
    # UBSan: -fno-sanitize-recover makes every report fatal as well. (Beside
    #   ASan, gcc 12's UBSan writes to stderr whatever its log_path says.)
    export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:halt_on_error=1:log_path=$work/asan/logs/asan"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$work/asan/logs/ubsan"
    export PYTHONMALLOC=malloc
    # Every kernel path: the `isa` fixture runs tests under every kernel set
    # the CPU has plus avx512-emulated; test_layout every length and offset
    # within a register (the tails), large streaming ReLU, thread splits with
    # float16/32/64 on the direct and gather paths; test_api every layout,
    # dtype, broadcast and out= case; test_accuracy's special values and
    # float64 sets; test_fuzz/test_robustness overlaps, ufunc methods, small
    # stacks; test_threads the pool's wake paths and exit. Left out:
    # test_accuracy's 2^24-element float32 sweep and test_hypothesis (the
    # same kernel paths again, for accuracy), the rounding-mode subprocesses
    # (each repeats every kernel over 50k elements), test_fused's accuracy
    # sweep of the gated functions (their loops run in test_gated_equals_unfused
    # and test_every_isa_gives_the_same_bits), test_manifest (no kernels) and
    # test_torch (torch not installed).
    # Of the elementwise family, the functions whose kernels add no code path
    # of their own are left to the plain test run: softplus, log_sigmoid and
    # mish share tanh's and elu's loops, exponential and double-word helpers,
    # selu and celu elu's, relu6 hardtanh's clamp (in float32 and in the
    # 16-bit one-pass code alike), and test_family runs every one of them,
    # parameters included.
    # Also left to the plain run, as they check Python-level rules on the
    # NumPy side of the loops (casting, promotion, errors raised before any
    # kernel runs, scalars) or the environment (thread-count variables read
    # in subprocesses, dask's chunking): the kernels and buffers they reach
    # are those test_api's layout, out= and in-place tests run.
    local python_side="test_out_casting_follows_numpy or test_integers_and_bools_promote_like_exp or test_unsupported_dtypes_raise_type_error or test_unknown_precision or test_scalars_give_numpy_scalars or test_dask or omp_num_threads or fastact_num_threads_wins"
    mapfile -t files < <(present tests/test_api.py tests/test_layout.py tests/test_seeds.py \
        tests/test_accuracy.py tests/test_robustness.py tests/test_fuzz.py tests/test_threads.py \
        tests/test_family.py tests/test_rows.py tests/test_fused.py tests/test_half.py)
    # Two processes (pytest-xdist): once the shorter TSan run ends, the second
    # core is this run's.
    run_check "$preload" -n 2 "${files[@]}" \
        -k "not float32_sweep and not rounding_mode and not test_gated_accuracy and not ($SAME_PATHS) and not ($python_side)"
}

check_tsan() {
    local preload files probe
    preload=$(runtime libtsan.so)
    # die_after_fork=0: test_pool_works_in_forked_child forks a process that
    #   has threads, and the child starts a new pool, which fastact supports
    #   (pthread_atfork); by default TSan kills such a child.
    # No suppressions file: nothing in CPython or NumPy needed one (they are
    #   not instrumented; TSan sees their locks through its interceptors).
    export TSAN_OPTIONS="halt_on_error=1:die_after_fork=0:second_deadlock_stack=1:log_path=$work/tsan/logs/tsan"
    # On kernels with many mmap randomisation bits TSan's fixed shadow layout
    # fails ("FATAL: ThreadSanitizer: unexpected memory mapping"): then run
    # without address space randomisation.
    if ! probe=$(cd "$work" && env LD_PRELOAD="$preload" TSAN_OPTIONS=halt_on_error=1 \
            "$work/tsan/venv/bin/python" -c "import fastact" 2>&1); then
        if [[ $probe == *"unexpected memory mapping"* ]] && setarch "$(uname -m)" -R true 2>/dev/null; then
            echo "== tsan: unexpected memory mapping; running under setarch -R (no ASLR)"
            launcher=(setarch "$(uname -m)" -R)
        else
            echo "== tsan: the TSan build does not import:"; echo "$probe"
            echo "FAILED: the TSan build does not import" >"$work/tsan/result"
            return
        fi
    fi
    # Every test that starts the pool or splits a call, overlaps of out= and
    # the inputs, and all of test_threads, test_fuzz and test_robustness
    # (module names match -k) but the rounding-mode subprocesses (each runs
    # every kernel over 50k elements, for no thread path the other tests
    # lack); softmax's rows and the fused ops' thread tests.
    # test_out_behind_the_input_matches_a_copy on two threads only (ids
    # ending -1]: one thread, nothing to race), and for relu, gelu and
    # leaky_relu alone: the portable kernels split and order a call across
    # threads the same way whatever they compute. Left out: test_fuzz's
    # ufunc methods on short operands, in one thread or barely two (at,
    # outer, reduce, reduceat, accumulate; the long ones with threads stay;
    # broadcast operands on two threads run in the elementwise fuzz test),
    # and the thread-count
    # variables read in subprocesses (no thread runs there but the pool's
    # start, which the other test_threads tests cover).
    local one_thread="test_at_applies or test_outer_is or test_reduce_is or test_reduceat_is or test_accumulate_is or test_unary_ufuncs_have_no_reductions or omp_num_threads or fastact_num_threads_wins"
    local other_functions="test_out_behind_the_input_matches_a_copy and not (relu- or gelu- or leaky_relu-)"
    mapfile -t files < <(present tests/test_layout.py tests/test_api.py tests/test_threads.py \
        tests/test_robustness.py tests/test_fuzz.py tests/test_rows.py tests/test_fused.py)
    local fuzz_scale=0.1
    run_check "$preload" "${files[@]}" \
        -k "(thread or overlap or concurren or pool or fork or test_robustness or test_fuzz) and not rounding_mode and not ($SAME_PATHS) and not (test_out_behind_the_input_matches_a_copy and (float32-1 or float64-1)) and not ($one_thread) and not ($other_functions)"
}

# The checks run side by side (pytest runs on one core, but for the thread
# tests), each into its own log, shown when it ends.
echo "== running the tests: $checks (side by side)"
declare -A test_pid
for name in $checks; do
    launcher=()
    "check_$name" >"$work/$name/run.log" 2>&1 &
    test_pid[$name]=$!
    bg_pids+=($!)
done
failed=()
for name in $checks; do
    wait "${test_pid[$name]}" || true
    cat "$work/$name/run.log"
    [[ -s $work/$name/result ]] || echo "FAILED: the check stopped early" >"$work/$name/result"
    [[ $(<"$work/$name/result") == ok* ]] || failed+=("$name")
done
bg_pids=()

echo "== summary"
for name in $checks; do echo "   $name: $(<"$work/$name/result")"; done
[[ -z $selftest ]] || echo "   (self-test: a bug for $selftest was injected; the ${selftest/ubsan/asan} check must have FAILED)"
echo "== check_sanitizers.sh took $((SECONDS - started)) s"
[[ ${#failed[@]} == 0 ]] || { echo "== sanitizer check FAILED: ${failed[*]}" >&2; exit 1; }
