/* Which kernel set runs: CPU detection (CPUID and XGETBV), the FASTACT_ISA
 * cap, and the current table. Each ISA name is a feature bundle defined here
 * and nowhere else:
 *   sse2   = SSE2, part of every x86-64 CPU (no detection)
 *   avx2   = AVX2 + FMA3 + F16C with YMM state enabled by the OS
 *   avx512 = AVX-512F (+ AVX2 + FMA3) with ZMM and opmask state enabled
 *            (on macOS: promised by sysctl hw.optional.avx512f)
 *   neon   = AArch64 Advanced SIMD, on every AArch64 CPU (no detection)
 * "avx512-emulated" (tests only) needs avx2 and a build with SIMDe. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/fastact.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define FA_X86_CPUID 1
#endif

static const char *const isa_names[FA_N_ISAS] = {"scalar", "avx2", "avx512", "avx512-emulated", "neon", "sse2"};
/* the sets a CPU of this architecture runs for real, lowest first: the best
 * supported one is the default; a FASTACT_ISA naming another architecture's
 * set caps nothing */
#if defined(__aarch64__)
static const int real_isas[] = {FA_ISA_SCALAR, FA_ISA_NEON};
#else
static const int real_isas[] = {FA_ISA_SCALAR, FA_ISA_SSE2, FA_ISA_AVX2, FA_ISA_AVX512};
#endif
#define FA_N_REAL_ISAS ((int)(sizeof real_isas / sizeof real_isas[0]))

static const fa_kernels *isa_table(int isa) {
    switch (isa) {
#if defined(FA_HAVE_X86_KERNELS)
    case FA_ISA_AVX2: return &fa_kernels_avx2;
    case FA_ISA_AVX512: return &fa_kernels_avx512;
#endif
#if defined(FA_HAVE_AVX512_EMULATION)
    case FA_ISA_AVX512_EMULATED: return &fa_kernels_avx512_emulated;
#endif
#if defined(FA_HAVE_NEON_KERNELS)
    case FA_ISA_NEON: return &fa_kernels_neon;
#endif
#if defined(FA_HAVE_SSE2_KERNELS)
    case FA_ISA_SSE2: return &fa_kernels_sse2;
#endif
    default: return &fa_kernels_scalar;
    }
}

#if defined(FA_X86_CPUID) && defined(FA_HAVE_X86_KERNELS)
static uint64_t read_xcr0(void) {
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}
#endif

#if defined(FA_X86_CPUID) && defined(FA_HAVE_X86_KERNELS) && defined(__APPLE__)
#include <sys/sysctl.h>
/* macOS turns on a thread's AVX-512 state at its first AVX-512 instruction,
 * so XCR0 reads it as off before; the kernel says whether it will (the
 * question NumPy asks there too) */
static int darwin_avx512_available(void) {
    int value = 0;
    size_t size = sizeof value;
    return sysctlbyname("hw.optional.avx512f", &value, &size, NULL, 0) == 0 && value != 0;
}
#endif

/* Bit i set if ISA i can run here; computed once. */
static unsigned detect(void) {
    unsigned ok = 1u << FA_ISA_SCALAR;
#if defined(FA_HAVE_NEON_KERNELS)
    ok |= 1u << FA_ISA_NEON;
#endif
#if defined(FA_HAVE_SSE2_KERNELS)
    ok |= 1u << FA_ISA_SSE2;
#endif
#if defined(FA_X86_CPUID) && defined(FA_HAVE_X86_KERNELS)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return ok;
    int fma = c >> 12 & 1, osxsave = c >> 27 & 1, avx = c >> 28 & 1, f16c = c >> 29 & 1;
    if (!(osxsave && avx)) return ok;
    uint64_t xcr0 = read_xcr0();
    int ymm_state = (xcr0 & 0x6) == 0x6;           /* XMM | YMM */
    int zmm_state = (xcr0 & 0xe6) == 0xe6;         /* XMM | YMM | opmask | ZMM_Hi256 | Hi16_ZMM */
#if defined(__APPLE__)
    if (ymm_state && !zmm_state) zmm_state = darwin_avx512_available();
#endif
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return ok;
    int avx2 = b >> 5 & 1, avx512f = b >> 16 & 1;
    if (avx2 && fma && f16c && ymm_state) {
        ok |= 1u << FA_ISA_AVX2;
#if defined(FA_HAVE_AVX512_EMULATION)
        ok |= 1u << FA_ISA_AVX512_EMULATED;
#endif
        if (avx512f && zmm_state) ok |= 1u << FA_ISA_AVX512;
    }
#endif
    return ok;
}

static unsigned supported_mask(void) {
    static atomic_uint cached; /* 0 = not yet detected; scalar is always set */
    unsigned m = atomic_load_explicit(&cached, memory_order_relaxed);
    if (!m) {
        m = detect();
        atomic_store_explicit(&cached, m, memory_order_relaxed);
    }
    return m;
}

const char *fa_isa_name(int isa) { return isa >= 0 && isa < FA_N_ISAS ? isa_names[isa] : NULL; }

int fa_isa_supported(int isa) { return isa >= 0 && isa < FA_N_ISAS && (supported_mask() >> isa & 1); }

/* The best real ISA, capped by FASTACT_ISA when that names a known ISA
 * (an unknown name is reported by the Python layer, which reads it too). */
int fa_isa_best(void) {
    int highest = FA_N_REAL_ISAS - 1, best = 0; /* indices into real_isas */
    const char *cap = getenv("FASTACT_ISA");
    if (cap && *cap)
        for (int r = 0; r < FA_N_REAL_ISAS; r++)
            if (strcmp(cap, isa_names[real_isas[r]]) == 0) highest = r;
    for (int r = 0; r <= highest; r++)
        if (fa_isa_supported(real_isas[r])) best = r;
    return real_isas[best];
}

static _Atomic(const fa_kernels *) current_table;
static atomic_int current_isa = -1;

int fa_isa_current(void) {
    int isa = atomic_load(&current_isa);
    if (isa < 0) {
        isa = fa_isa_best();
        fa_isa_set(isa);
    }
    return isa;
}

int fa_isa_set(int isa) {
    if (!fa_isa_supported(isa)) return -1;
    atomic_store(&current_table, isa_table(isa));
    atomic_store(&current_isa, isa);
    return 0;
}

const fa_kernels *fa_kernels_current(void) {
    const fa_kernels *t = atomic_load_explicit(&current_table, memory_order_acquire);
    if (!t) {
        fa_isa_current();
        t = atomic_load(&current_table);
    }
    return t;
}
