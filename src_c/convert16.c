/* float16 and bfloat16 <-> float32 over contiguous blocks, per ISA: F16C
 * (with AVX2) and AVX-512F convert float16 in registers; bfloat16 is a shift
 * and an integer rounding, which the compiler vectorises. The portable set
 * converts element by element (half.h). Every set gives the same bits, and
 * none raises a floating-point flag: widening is exact (a signaling NaN
 * becomes quiet without a fuss) and a result that overflows the 16-bit type
 * becomes infinite silently, as the portable conversions do.
 *
 * AVX512-BF16's VCVTNEPS2BF16 is not used: it flushes subnormal inputs to
 * zero, and the integer rounding costs about as little. */
#include <stdint.h>

#include "convert16.h"
#include "fastact.h"
#include "half.h"

#if defined(FA_HAVE_X86_KERNELS) && (defined(__x86_64__) || defined(_M_X64))
#include <immintrin.h>
#define FA_X86_CONVERT 1
#endif

#if defined(__GNUC__) && !defined(__clang__)
#define FA_VECTORIZE_ __attribute__((optimize("tree-vectorize")))
#else
#define FA_VECTORIZE_
#endif

/* Might some element be a tie of float16 (a superset of fa_is_half_tie)?
 * Normal range: the 13 dropped bits are exactly one half; below 2^-14 (not
 * zero), any value, left to the exact test. */
#define FA_HALF_MAYBE_TIE_(a) (((a) & 0x1fffu) == 0x1000u || (uint32_t)((a) - 1u) < 0x387fffffu)
#define FA_BF16_TIE_(a) (((a) & 0xffffu) == 0x8000u && (a) < 0x7f800000u)

/* The ISA-independent bodies, compiled once per target below. */
#define FA_DEFINE_COMMON_(suffix, attr)                                                         \
    attr FA_VECTORIZE_ static int half_ties_##suffix(const float *src, ptrdiff_t n) {          \
        const uint32_t *bits = (const uint32_t *)src;                                          \
        uint32_t any = 0;                                                                      \
        for (ptrdiff_t i = 0; i < n; i++) {                                                    \
            uint32_t a = bits[i] & 0x7fffffffu;                                                \
            any |= FA_HALF_MAYBE_TIE_(a);                                                      \
        }                                                                                      \
        return any != 0;                                                                       \
    }                                                                                          \
    attr FA_VECTORIZE_ static void widen_bf16_##suffix(const uint16_t *src, float *dst, ptrdiff_t n) { \
        uint32_t *bits = (uint32_t *)dst;                                                      \
        for (ptrdiff_t i = 0; i < n; i++) {                                                    \
            uint32_t h = src[i];                                                               \
            bits[i] = ((h & 0x7fffu) > 0x7f80u ? h | 0x40u : h) << 16; /* NaN made quiet */    \
        }                                                                                      \
    }                                                                                          \
    attr FA_VECTORIZE_ static int narrow_bf16_##suffix(const float *src, uint16_t *dst, ptrdiff_t n) { \
        const uint32_t *bits = (const uint32_t *)src;                                          \
        uint32_t any = 0;                                                                      \
        for (ptrdiff_t i = 0; i < n; i++) {                                                    \
            uint32_t x = bits[i], a = x & 0x7fffffffu;                                         \
            uint32_t rounded = (x + 0x7fffu + (x >> 16 & 1u)) >> 16, quiet = x >> 16 | 0x40u;  \
            dst[i] = (uint16_t)(a > 0x7f800000u ? quiet : rounded);                            \
            any |= FA_BF16_TIE_(a);                                                            \
        }                                                                                      \
        return any != 0;                                                                       \
    }                                                                                          \
    /* relu: x where x > 0 (sign clear, not zero), NaN made quiet, else +0 */                 \
    attr FA_VECTORIZE_ static void relu_fwd_##suffix(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, \
                                                     int bf16) {                              \
        const uint16_t *x = in[0];                                                             \
        const uint16_t inf = bf16 ? 0x7f80 : 0x7c00, quiet = bf16 ? 0x40 : 0x200;              \
        for (ptrdiff_t i = 0; i < n; i++) {                                                    \
            uint16_t v = x[i], nan = (v & 0x7fff) > inf;                                       \
            out[i] = nan ? (uint16_t)(v | quiet) : (v & 0x8000) ? 0 : v;                       \
        }                                                                                      \
    }                                                                                          \
    attr FA_VECTORIZE_ static void relu_bwd_##suffix(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, \
                                                     int bf16) {                              \
        const uint16_t *g = in[0], *x = in[1];                                                 \
        const uint16_t inf = bf16 ? 0x7f80 : 0x7c00, quiet = bf16 ? 0x40 : 0x200;              \
        for (ptrdiff_t i = 0; i < n; i++) {                                                    \
            uint16_t v = x[i], w = g[i], ax = v & 0x7fff;                                      \
            uint16_t g_out = (w & 0x7fff) > inf ? (uint16_t)(w | quiet) : w;                   \
            uint16_t low = ax > inf ? (uint16_t)(v | quiet) : 0;                               \
            out[i] = (v & 0x8000) == 0 && ax != 0 && ax <= inf ? g_out : low;                  \
        }                                                                                      \
    }

/* ---- portable ---- */
FA_DEFINE_COMMON_(portable, )

static void widen_f16_portable(const uint16_t *src, float *dst, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) dst[i] = fa_half_to_float(src[i]);
}
static int narrow_f16_portable(const float *src, uint16_t *dst, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) dst[i] = fa_float_to_half(src[i]);
    return half_ties_portable(src, n);
}

static const fa_convert16_set portable = {
    {widen_f16_portable, narrow_f16_portable},
    {widen_bf16_portable, narrow_bf16_portable},
    relu_fwd_portable,
    relu_bwd_portable,
};

#if defined(FA_X86_CONVERT)
/* ---- AVX2 + F16C ---- */
#define FA_AVX2_ __attribute__((target("avx2,fma,f16c")))
FA_DEFINE_COMMON_(avx2, FA_AVX2_)

FA_AVX2_ static void widen_f16_avx2(const uint16_t *src, float *dst, ptrdiff_t n) {
    unsigned flags = _mm_getcsr();
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    for (; i < n; i++) dst[i] = fa_half_to_float(src[i]);
    _mm_setcsr(flags);
}
FA_AVX2_ static int narrow_f16_avx2(const float *src, uint16_t *dst, ptrdiff_t n) {
    unsigned flags = _mm_getcsr();
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) dst[i] = fa_float_to_half(src[i]);
    _mm_setcsr(flags);
    return half_ties_avx2(src, n);
}

static const fa_convert16_set avx2 = {
    {widen_f16_avx2, narrow_f16_avx2},
    {widen_bf16_avx2, narrow_bf16_avx2},
    relu_fwd_avx2,
    relu_bwd_avx2,
};

/* ---- AVX-512F ---- */
#define FA_AVX512_ __attribute__((target("avx512f,avx2,fma,f16c")))
FA_DEFINE_COMMON_(avx512, FA_AVX512_)

FA_AVX512_ static void widen_f16_avx512(const uint16_t *src, float *dst, ptrdiff_t n) {
    unsigned flags = _mm_getcsr();
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
    for (; i < n; i++) dst[i] = fa_half_to_float(src[i]);
    _mm_setcsr(flags);
}
FA_AVX512_ static int narrow_f16_avx512(const float *src, uint16_t *dst, ptrdiff_t n) {
    unsigned flags = _mm_getcsr();
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) dst[i] = fa_float_to_half(src[i]);
    _mm_setcsr(flags);
    return half_ties_avx512(src, n);
}

static const fa_convert16_set avx512 = {
    {widen_f16_avx512, narrow_f16_avx512},
    {widen_bf16_avx512, narrow_bf16_avx512},
    relu_fwd_avx512,
    relu_bwd_avx512,
};
#endif

/* avx512-emulated runs on AVX2 hardware: its conversions are AVX2's */
const fa_convert16_set *fa_convert16_for(int isa) {
#if defined(FA_X86_CONVERT)
    if (isa == FA_ISA_AVX512) return &avx512;
    if (isa == FA_ISA_AVX2 || isa == FA_ISA_AVX512_EMULATED) return &avx2;
#endif
    return &portable;
}
