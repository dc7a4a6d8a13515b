/* fa_fmaf and fa_fma's emulation (src_c/simd/fma_exact.h), and on x86-64 the
 * SSE2 vector layer's (src_c/simd/simd_sse2.h: vf_fma and vd_fma, every lane),
 * against the C library's fmaf and fma, bit for bit (NaN: any NaN) and, built by gcc,
 * in the invalid flag (raised by inf - inf, not by a quiet NaN), on edge cases and
 * random operands: all bit patterns, near-cancellations (c close to -a·b),
 * tiny and huge operands.
 *
 *   cc -O2 -std=gnu11 -ffp-contract=off -Isrc_c tools/check_fma.c -lm -o check_fma && ./check_fma [millions]
 *
 * Exits 1 on the first disagreements (up to 10 printed). */
#define FA_EMULATE_FMA 1
#define FA_EMULATE_FMAF 1
#include "simd/fma_exact.h"

#if defined(__x86_64__) || defined(_M_X64)
#include "simd/simd_sse2.h"
#define CHECK_SSE2 1
#endif

#include <fenv.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t state = 0x9e3779b97f4a7c15u;
static uint64_t next64(void) { /* splitmix64 */
    uint64_t z = (state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}
static float f32(uint32_t bits) { float f; memcpy(&f, &bits, 4); return f; }
static double f64(uint64_t bits) { double d; memcpy(&d, &bits, 8); return d; }
static uint32_t bits32(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static uint64_t bits64(double d) { uint64_t b; memcpy(&b, &d, 8); return b; }

/* a float of random sign and significand, exponent in [lo, hi] (biased) */
static float random_float(int lo, int hi) {
    uint64_t r = next64();
    uint32_t exponent = (uint32_t)(lo + (int)(r % (uint64_t)(hi - lo + 1)));
    return f32((uint32_t)(r >> 32 & 0x807fffffu) | exponent << 23);
}
static double random_double(int lo, int hi) {
    uint64_t r = next64(), e = next64();
    uint64_t exponent = (uint64_t)(lo + (int)(e % (uint64_t)(hi - lo + 1)));
    return f64((r & 0x800fffffffffffffu) | exponent << 52);
}

static long failures;
/* flags compared on the random operands, with gcc: on the constant edge
 * cases gcc may fold the emulation at compile time, and clang speculates
 * floating-point operations (its default ignores their flags) */
static int compare_flags;
/* the invalid flag too: a quiet NaN operand raises none, inf - inf does */
static int invalid_after_f(float (*fn)(float, float, float), float a, float b, float c, float *r) {
    feclearexcept(FE_ALL_EXCEPT);
    *(volatile float *)r = fn(a, b, c);
    return fetestexcept(FE_INVALID) != 0;
}
static int invalid_after_d(double (*fn)(double, double, double), double a, double b, double c, double *r) {
    feclearexcept(FE_ALL_EXCEPT);
    *(volatile double *)r = fn(a, b, c);
    return fetestexcept(FE_INVALID) != 0;
}
static float emulated_f(float a, float b, float c) { return fa_fmaf(a, b, c); }
static double emulated_d(double a, double b, double c) { return fa_fma(a, b, c); }
static float library_f(float a, float b, float c) { return fmaf(a, b, c); }
static double library_d(double a, double b, double c) { return fma(a, b, c); }

#if defined(CHECK_SSE2)
/* the operands in every lane; a lane that disagrees with the others (NaN:
 * any NaN, the compiler may order a product's operands per half) gives
 * NaN's opposite, a failure whatever the library says */
static float sse2_f(float a, float b, float c) {
    float lanes[4];
    _mm_storeu_ps(lanes, vf_fma(_mm_set1_ps(a), _mm_set1_ps(b), _mm_set1_ps(c)));
    for (int i = 1; i < 4; i++)
        if (bits32(lanes[i]) != bits32(lanes[0]) && !(lanes[i] != lanes[i] && lanes[0] != lanes[0]))
            return lanes[0] == lanes[0] ? NAN : 0.0f;
    return lanes[0];
}
static double sse2_d(double a, double b, double c) {
    double lanes[2];
    _mm_storeu_pd(lanes, vd_fma(_mm_set1_pd(a), _mm_set1_pd(b), _mm_set1_pd(c)));
    if (bits64(lanes[1]) != bits64(lanes[0]) && !(lanes[1] != lanes[1] && lanes[0] != lanes[0]))
        return lanes[0] == lanes[0] ? NAN : 0.0;
    return lanes[0];
}
#endif

/* a signaling NaN operand: the instruction raises 'invalid', C libraries
 * differ (glibc's fmaf does not), so flags are not compared then */
static int signaling_f(float x) { return (bits32(x) & 0x7fc00000u) == 0x7f800000u && (bits32(x) & 0x3fffffu); }
static int signaling_d(double x) {
    return (bits64(x) & 0x7ff8000000000000u) == 0x7ff0000000000000u && (bits64(x) & 0x7ffffffffffffu);
}

static void check_float_by(const char *name, float (*emulation)(float, float, float), float a, float b, float c) {
    float want, got;
    int want_invalid = invalid_after_f(library_f, a, b, c, &want), got_invalid = invalid_after_f(emulation, a, b, c, &got);
    int flags = compare_flags && !signaling_f(a) && !signaling_f(b) && !signaling_f(c);
    if ((bits32(want) == bits32(got) || (want != want && got != got)) && (!flags || want_invalid == got_invalid)) return;
    if (failures++ < 10)
        printf("fmaf(%a, %a, %a): library %a (invalid %d), %s %a (invalid %d)\n", (double)a, (double)b,
               (double)c, (double)want, want_invalid, name, (double)got, got_invalid);
}
static void check_double_by(const char *name, double (*emulation)(double, double, double), double a, double b,
                            double c) {
    double want, got;
    int want_invalid = invalid_after_d(library_d, a, b, c, &want), got_invalid = invalid_after_d(emulation, a, b, c, &got);
    int flags = compare_flags && !signaling_d(a) && !signaling_d(b) && !signaling_d(c);
    if ((bits64(want) == bits64(got) || (want != want && got != got)) && (!flags || want_invalid == got_invalid)) return;
    if (failures++ < 10)
        printf("fma(%a, %a, %a): library %a (invalid %d), %s %a (invalid %d)\n", a, b, c, want, want_invalid, name,
               got, got_invalid);
}
static void check_float(float a, float b, float c) {
    check_float_by("fa_fmaf", emulated_f, a, b, c);
#if defined(CHECK_SSE2)
    check_float_by("SSE2 vf_fma", sse2_f, a, b, c);
#endif
}
static void check_double(double a, double b, double c) {
    check_double_by("fa_fma", emulated_d, a, b, c);
#if defined(CHECK_SSE2)
    check_double_by("SSE2 vd_fma", sse2_d, a, b, c);
#endif
}

int main(int argc, char **argv) {
    long millions = argc > 1 ? atol(argv[1]) : 4;
    const float specials32[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-149f,
                                0x1p-126f, 0x1.fffffep127f, -0x1.fffffep127f, 0x1p-75f, 3.0f};
    const double specials64[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 0x1p-1074, -0x1p-1074,
                                 0x1p-1022, 0x1.fffffffffffffp1023, -0x1.fffffffffffffp1023, 0x1p-537, 0x1p-900,
                                 0x1p995, 0x1p1000, 3.0};
    size_t n32 = sizeof specials32 / sizeof *specials32, n64 = sizeof specials64 / sizeof *specials64;
    for (size_t i = 0; i < n32; i++)
        for (size_t j = 0; j < n32; j++)
            for (size_t k = 0; k < n32; k++) check_float(specials32[i], specials32[j], specials32[k]);
    for (size_t i = 0; i < n64; i++)
        for (size_t j = 0; j < n64; j++)
            for (size_t k = 0; k < n64; k++) check_double(specials64[i], specials64[j], specials64[k]);
#if !defined(__clang__)
    compare_flags = 1;
#endif
    for (long t = 0; t < millions * 1000000; t++) {
        /* float: any bits; ordinary magnitudes near a cancellation; c far below a·b */
        check_float(f32((uint32_t)next64()), f32((uint32_t)next64()), f32((uint32_t)next64()));
        float a = random_float(100, 154), b = random_float(100, 154);
        float p = a * b, step = f32((uint32_t)(next64() & 0xff)); /* a few subnormal ULPs */
        check_float(a, b, -p);
        check_float(a, b, -p * (1 + 0x1p-23f * (float)(int)(next64() % 7 - 3)));
        check_float(a, b, random_float(1, 254) * step + random_float(0, 30));
        check_float(random_float(1, 60), random_float(1, 60), random_float(0, 254)); /* subnormal products */
        /* a·b = ±2^k (1 - j²·2^-46), c with half its ULP near 2^k: c + a·b is
         * a hair off a float tie, where rounding twice goes wrong */
        int j = (int)(next64() % 64) + 1, k = (int)(next64() % 40) - 20;
        float near = random_float(127 + k + 24, 127 + k + 24);
        check_float(ldexpf(1 + (float)j * 0x1p-23f, k / 2), ldexpf(1 - (float)j * 0x1p-23f, k - k / 2) *
                    (next64() & 1 ? 1 : -1), near);
        /* double: the same, and the ranges the library handles */
        double near64 = random_double(1023 + k + 53, 1023 + k + 53);
        check_double(ldexp(1 + j * 0x1p-52, k / 2), ldexp(1 - j * 0x1p-52, k - k / 2) * (next64() & 1 ? 1 : -1),
                     near64);
        check_double(f64(next64()), f64(next64()), f64(next64()));
        double x = random_double(900, 1150), y = random_double(900, 1150), q = x * y;
        check_double(x, y, -q);
        check_double(x, y, -q * (1 + 0x1p-52 * (double)(int)(next64() % 7 - 3)));
        check_double(x, y, random_double(0, 2046));
        check_double(random_double(1, 200), random_double(1, 200), random_double(0, 300));
        check_double(random_double(1900, 2046), random_double(0, 300), random_double(1500, 2046));
    }
    printf("check_fma: %ld disagreements in %ld million random triples per type (and edge cases)\n", failures,
           millions);
    return failures != 0;
}
