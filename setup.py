"""Build of the fastact extension: one Cython module over the C kernels.

Baseline flags only (no -march): the AVX2 and AVX-512 kernels are compiled
with per-file target pragmas (gcc, clang, and clang-cl on Windows) and
chosen at run time. -ffp-contract=off keeps
the compiler from fusing a*b+c differently per ISA, and -fno-tree-vectorize
keeps the scalar fallback scalar.
"""
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# src_c/: runtime/ (dispatch, ufunc loops, threads), kernels/ (one source per
# kernel set), half/ (float16 and bfloat16), simd/ (the vector layers),
# generated/ (tools/gen_manifest.py, tools/fit_coeffs.py); includes are
# written from src_c/ ("simd/simd_avx2.h")
C_SOURCES = ["runtime/dispatch.c", "runtime/threads.c", "runtime/openmp_team.c", "runtime/loops.c", "runtime/rows.c", "adapters/xla_ffi.c",
             "half/convert16.c", "half/piecewise16.c", "half/table16.c",
             "kernels/kernels_scalar.c", "kernels/kernels_avx2.c", "kernels/kernels_avx512.c",
             "kernels/kernels_avx512_emulated.c", "kernels/kernels_neon.c", "kernels/kernels_sse2.c"]
IS_MSVC = sys.platform == "win32"


# The x86 kernels need x86-64 and a compiler that takes per-function target
# attributes (gcc and clang both do; the kernel files use gcc's and clang's
# pragmas, the 16-bit converters the attribute itself).
# tools/check_compilers.sh checks that gcc and clang accept it.
X86_PROBE = """
#if !defined(__x86_64__) && !defined(_M_X64)
#error not x86-64
#endif
#include <immintrin.h>
__attribute__((target("avx512f,avx2,fma,f16c"))) float probe(const double *p, const unsigned short *h) {
    __m512d a = _mm512_loadu_pd(p);
    __m128 f = _mm_cvtph_ps(_mm_loadu_si128((const __m128i *)h));
    return (float)_mm512_reduce_add_pd(_mm512_fmadd_pd(a, a, a)) + _mm_cvtss_f32(f);
}
"""

# clang (not gcc, which has neither flag and keeps the flags' semantics by
# default): -fno-slp-vectorize keeps the scalar set scalar, as gcc's
# -fno-tree-vectorize does (clang's SLP vectorizer put signalling vector
# compares on NaN lanes); maytrap keeps it from transformations that raise
# floating-point flags the source does not (a compare moved ahead of its NaN
# guard, min/max instructions for selects), which NumPy would report as
# RuntimeWarnings: clang's default model ignores the flags. maytrap is
# probed: clang 14 does not support it for AArch64 (the NEON layer's own
# compares do not need it). One unroll hint it defeats is a warning only.
# They go after the -O level, which would turn SLP vectorization back on.
# tools/core_selftest.c checks that no kernel raises 'invalid' on a quiet NaN.
CLANG_PROBE = "#ifndef __clang__\n#error not clang\n#endif\nint probe(float a, float b) { return a < b; }\n"
CLANG_ARGS = ["-fno-slp-vectorize", "-Wno-pass-failed"]
CLANG_FP_EXCEPTIONS = "-ffp-exception-behavior=maytrap"


def simde_include():
    try:
        import simde_py
    except ImportError:
        return None
    return simde_py.get_include()


def build_jobs():
    """Compiler processes at once: FASTACT_BUILD_JOBS, else the CPUs this process may use."""
    if os.environ.get("FASTACT_BUILD_JOBS"):
        return max(1, int(os.environ["FASTACT_BUILD_JOBS"]))
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class ProbingBuildExt(build_ext):
    """Enable the x86 kernels only if the compiler passes X86_PROBE (on
    Windows: clang-cl, when found) and FASTACT_SCALAR_ONLY is not 1 (a build
    of the portable kernels alone, as on other CPUs); the SIMDe-emulated
    AVX-512 test kernels unless FASTACT_AVX512_EMULATION is 0 or the compiler
    is clang; compile the sources side by side."""

    def build_extension(self, ext):
        # setuptools compiles one file after another; the kernel files take
        # minutes each, so they go to a pool, the slowest first
        compile_one = self.compiler.compile
        jobs = build_jobs()

        def compile_all(sources, output_dir=None, **kwargs):
            if jobs <= 1 or len(sources) <= 1:
                return compile_one(sources, output_dir=output_dir, **kwargs)
            for obj in self.compiler.object_filenames(sources, output_dir=output_dir):
                os.makedirs(os.path.dirname(obj) or ".", exist_ok=True)
            order = sorted(sources, key=lambda src: ("emulated" not in src, -os.path.getsize(src)))
            with ThreadPoolExecutor(jobs) as pool:
                built = dict(zip(order, pool.map(
                    lambda src: compile_one([src], output_dir=output_dir, **kwargs)[0], order)))
            return [built[src] for src in sources]

        self.compiler.compile = compile_all
        try:
            super().build_extension(ext)
        finally:
            self.compiler.compile = compile_one

    def build_extensions(self):
        clang_cl = IS_MSVC and self._switch_to_clang_cl()
        # The probe, not platform.machine(), tells the target: a macOS x86_64
        # wheel may be cross-compiled on arm64 (and vice versa) via ARCHFLAGS.
        scalar_only = os.environ.get("FASTACT_SCALAR_ONLY") == "1"
        x86_ok = (clang_cl or not IS_MSVC) and not scalar_only and self._compiles(X86_PROBE)
        if not x86_ok and os.environ.get("FASTACT_REQUIRE_X86_KERNELS") == "1":
            sys.exit("fastact: FASTACT_REQUIRE_X86_KERNELS=1, but this compiler or target cannot build the "
                     "x86 kernels (they need x86-64 and gcc, clang or, on Windows, clang-cl)")
        clang_args = []
        if not IS_MSVC and self._compiles(CLANG_PROBE):
            clang_args = CLANG_ARGS + ([CLANG_FP_EXCEPTIONS] if self._compiles(
                CLANG_PROBE, [CLANG_FP_EXCEPTIONS, "-Werror"]) else [])
            print(f"fastact: clang: {' '.join(clang_args)}", file=sys.stderr)
        for ext in self.extensions:
            if clang_cl:
                ext.extra_compile_args = CLANG_CL_ARGS
            ext.extra_compile_args = ext.extra_compile_args + clang_args
            if scalar_only:  # not even x86-64's baseline SSE2 set
                ext.define_macros.append(("FA_NO_SSE2", "1"))
            if x86_ok:
                ext.define_macros.append(("FA_HAVE_X86_KERNELS", "1"))
                # a test vehicle for the AVX-512 source on CPUs without it; built by
                # clang, SIMDe's emulated compares raise flags the real ones do not
                if simde_include() and os.environ.get("FASTACT_AVX512_EMULATION") != "0" and not (
                        clang_args or clang_cl):
                    ext.define_macros.append(("FA_HAVE_AVX512_EMULATION", "1"))
                    ext.include_dirs.append(simde_include())
            else:
                print("fastact: building the portable kernels only (no AVX2, no AVX-512)", file=sys.stderr)
        super().build_extensions()

    def _switch_to_clang_cl(self):
        """On Windows, compile with clang-cl (LLVM's MSVC-compatible driver,
        linking with MSVC's tools) when it is found and builds the x86 probe:
        MSVC itself has no per-function target attributes, so its builds get
        the portable sets only. FASTACT_WINDOWS_COMPILER=msvc keeps cl.exe;
        FASTACT_CLANG_CL names a clang-cl.exe not on PATH."""
        if os.environ.get("FASTACT_WINDOWS_COMPILER", "clang-cl") == "msvc":
            return False
        if not self.compiler.initialized:
            self.compiler.initialize()
        cl, options = self.compiler.cc, self.compiler.compile_options
        # cl.exe is VC\Tools\MSVC\<version>\bin\Host<arch>\<arch>\cl.exe; Visual Studio's
        # "C++ Clang tools" put clang-cl in VC\Tools\Llvm\x64\bin
        bundled = os.path.join(os.path.dirname(cl), *[os.pardir] * 5, "Llvm", "x64", "bin", "clang-cl.exe")
        clang_cl = (os.environ.get("FASTACT_CLANG_CL") or shutil.which("clang-cl")
                    or shutil.which("clang-cl", path=getattr(self.compiler, "_paths", None) or "")
                    or (bundled if os.path.isfile(bundled) else None))
        if not clang_cl:
            print("fastact: clang-cl not found; MSVC builds the portable kernels only", file=sys.stderr)
            return False
        self.compiler.cc = clang_cl
        # /GL is MSVC's link-time code generation, which clang-cl's objects do not take part in
        self.compiler.compile_options = [option for option in options if option != "/GL"]
        if self._compiles(X86_PROBE):
            print(f"fastact: compiling with {clang_cl}", file=sys.stderr)
            return True
        print(f"fastact: {clang_cl} failed the x86 probe; MSVC builds the portable kernels only", file=sys.stderr)
        self.compiler.cc, self.compiler.compile_options = cl, options
        return False

    def _compiles(self, source, args=()):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "probe.c")
            with open(path, "w") as f:
                f.write(source)
            try:
                self.compiler.compile([path], output_dir=tmp, extra_postargs=list(args))
            except Exception:
                return False
        return True


# MSVC: C11 for _Alignas, and <stdatomic.h> (dispatch.c, threads.c), which MSVC
# offers only behind /experimental:c11atomics (Visual Studio 2022 17.5 or later).
# clang-cl takes the flags that matter for the results (no contraction of
# a*b+c, no errno) in clang's spelling, behind /clang:.
CLANG_CL_ARGS = ["/std:c11", "/clang:-O3", "/clang:-ffp-contract=off", "/clang:-fno-math-errno",
                 "/clang:-fno-vectorize", "/clang:-fno-slp-vectorize", "/clang:-Wno-unused-parameter",
                 "/clang:" + CLANG_FP_EXCEPTIONS, "/clang:-Wno-pass-failed"]
extra_compile_args = ["/std:c11", "/experimental:c11atomics"] if IS_MSVC else [
    "-O3", "-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-psabi",
    "-ffp-contract=off", "-fno-tree-vectorize", "-fno-math-errno", "-pthread"]
if os.environ.get("FASTACT_WERROR") == "1" and not IS_MSVC:
    extra_compile_args.append("-Werror")
# Python's own CFLAGS carry -g: debug information for the kernel files (their
# helpers inlined many times over) tripled their compile time and made most of
# the extension's size. Left out unless CFLAGS asks for it (the sanitizer builds).
if not IS_MSVC and not any(flag.startswith("-g") for flag in os.environ.get("CFLAGS", "").split()):
    extra_compile_args.append("-g0")

extension = Extension(
    "fastact._ext",
    sources=["src/fastact/_ext.pyx"] + [os.path.join("src_c", s) for s in C_SOURCES],
    include_dirs=[numpy.get_include(), "src_c"],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_25_API_VERSION")],
    extra_compile_args=extra_compile_args,
    extra_link_args=[] if IS_MSVC else ["-pthread", "-lm"],
)

setup(
    ext_modules=cythonize([extension], language_level=3, include_path=["src"], compiler_directives={
        "boundscheck": False, "wraparound": False, "cdivision": True}),
    cmdclass={"build_ext": ProbingBuildExt},
)
