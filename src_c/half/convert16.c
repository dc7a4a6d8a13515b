/* float16 and bfloat16 <-> float32 over contiguous blocks, per ISA: F16C
 * (with AVX2) and AVX-512F convert float16 in registers; bfloat16 is a shift
 * and an integer rounding, which the compiler vectorises. The portable set
 * converts element by element (half.h). Every set gives the same bits.
 * Widening is exact (a signaling NaN becomes quiet); narrowing rounds to
 * nearest even. The hardware conversions raise the usual flags (overflow,
 * underflow, inexact, invalid for a signaling NaN): the 16-bit loop, their one
 * caller, discards its flags once per call (loops.c), as saving and restoring
 * MXCSR around every block cost more than the conversions.
 *
 * AVX512-BF16's VCVTNEPS2BF16 is not used: it flushes subnormal inputs to
 * zero, and the integer rounding costs about as little. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "half/convert16.h"
#include "runtime/fastact.h"
#include "simd/fma_exact.h"
#include "half/half.h"
#include "half/table16.h"

#if defined(FA_HAVE_X86_KERNELS) && (defined(__x86_64__) || defined(_M_X64))
#include <immintrin.h>

#include "half/bf16_pairs_avx512.h"
#include "half/half_ties_x86.h"
#include "half/lookup_avx512.h"
#include "half/stream16_avx2.h"
#define FA_X86_CONVERT 1
#endif

#if defined(__GNUC__) && !defined(__clang__)
#define FA_VECTORIZE_ __attribute__((optimize("tree-vectorize")))
#else
#define FA_VECTORIZE_
#endif

/* mark element i's bit in the tie bitmap */
#define FA_MARK_TIES_(ties, i, lanes) ((ties)[(i) / 64] |= (uint64_t)(lanes) << ((i) % 64))

/* which elements are within `window` float32 ULPs of a tie (the portable
 * scans); nonzero if any */
static int half_ties_portable(const float *src, ptrdiff_t n, uint64_t *ties, uint32_t window) {
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    for (ptrdiff_t i = 0; i < n; i++)
        if (fa_is_half_near_tie(src[i], window)) FA_MARK_TIES_(ties, i, 1), any = 1;
    return any;
}
static int bf16_ties_portable(const float *src, ptrdiff_t n, uint64_t *ties, uint32_t window) {
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    for (ptrdiff_t i = 0; i < n; i++)
        if (fa_is_bf16_near_tie(src[i], window)) FA_MARK_TIES_(ties, i, 1), any = 1;
    return any;
}

#if defined(FA_X86_CONVERT)
/* The one-pass loops' scalar ends: element i of dst rounded from p, its tie
 * marked; nonzero if it is one */
static inline int narrow_one_f16(float p, uint16_t *dst, ptrdiff_t i, uint64_t *ties, uint32_t window) {
    dst[i] = fa_float_to_half(p);
    if (!fa_is_half_near_tie(p, window)) return 0;
    FA_MARK_TIES_(ties, i, 1);
    return 1;
}
static inline int narrow_one_bf16(float p, uint16_t *dst, ptrdiff_t i, uint64_t *ties, uint32_t window) {
    dst[i] = fa_float_to_bf16(p);
    if (!fa_is_bf16_near_tie(p, window)) return 0;
    FA_MARK_TIES_(ties, i, 1);
    return 1;
}
/* g·f'(y) from the forward's output y, as loops.c's scale_by_derivative
 * computes it: f'(y), the float32 kernel at g = 1, is y - y² (sigmoid) or
 * 1 - y² (tanh) rounded once, y's NaN where y is NaN; then
 * fa_times_derivative */
static inline float from_output_one(float g, float y, int tanh_form) {
    float d = y != y ? y : fa_fmaf(-y, y, tanh_form ? 1.0f : y);
    return fa_times_derivative(g, d);
}
#endif

/* The ISA-independent bodies, compiled once per target below: bfloat16's
 * conversions, and ReLU on the 16-bit values. */
#define FA_DEFINE_BF16_(suffix, attr, bf16_scan)                                                \
    attr FA_VECTORIZE_ static void widen_bf16_##suffix(const uint16_t *src, float *dst, ptrdiff_t n) { \
        for (ptrdiff_t i = 0; i < n; i++) {                                                    \
            uint32_t h = src[i];                                                               \
            uint32_t bits = ((h & 0x7fffu) > 0x7f80u ? h | 0x40u : h) << 16; /* NaN made quiet */ \
            memcpy(&dst[i], &bits, sizeof bits);                                               \
        }                                                                                      \
    }                                                                                          \
    attr FA_VECTORIZE_ static void round_bf16_##suffix(const float *src, uint16_t *dst, ptrdiff_t n) { \
        for (ptrdiff_t i = 0; i < n; i++) {                                                    \
            uint32_t x;                                                                        \
            memcpy(&x, &src[i], sizeof x);                                                     \
            uint32_t rounded = (x + 0x7fffu + (x >> 16 & 1u)) >> 16, quiet = x >> 16 | 0x40u;  \
            dst[i] = (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);            \
        }                                                                                      \
    }                                                                                          \
    attr static int narrow_bf16_##suffix(const float *src, uint16_t *dst, ptrdiff_t n, uint64_t *ties, \
                                         uint32_t window) {                                   \
        round_bf16_##suffix(src, dst, n);                                                      \
        return bf16_scan(src, n, ties, window);                                                \
    }
/* relu: x where x > 0 (sign clear, not zero), NaN made quiet, else +0 */
#define FA_DEFINE_RELU16_FWD_(suffix, attr)                                                         \
    attr FA_VECTORIZE_ static void relu_fwd_##suffix(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, \
                                                     int bf16) {                              \
        const uint16_t *x = in[0];                                                             \
        const uint16_t inf = bf16 ? 0x7f80 : 0x7c00, quiet = bf16 ? 0x40 : 0x200;              \
        for (ptrdiff_t i = 0; i < n; i++) {                                                    \
            uint16_t v = x[i], nan = (v & 0x7fff) > inf;                                       \
            out[i] = nan ? (uint16_t)(v | quiet) : (v & 0x8000) ? 0 : v;                       \
        }                                                                                      \
    }
#define FA_DEFINE_RELU16_BWD_(suffix, attr)                                                     \
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
FA_DEFINE_BF16_(portable, , bf16_ties_portable)
FA_DEFINE_RELU16_FWD_(portable, )
FA_DEFINE_RELU16_BWD_(portable, )

static void widen_f16_portable(const uint16_t *src, float *dst, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) dst[i] = fa_half_to_float(src[i]);
}
static void round_f16_portable(const float *src, uint16_t *dst, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) dst[i] = fa_float_to_half(src[i]);
}
static int narrow_f16_portable(const float *src, uint16_t *dst, ptrdiff_t n, uint64_t *ties, uint32_t window) {
    round_f16_portable(src, dst, n);
    return half_ties_portable(src, n, ties, window);
}

static const fa_convert16_set portable = {
    .f16 = {
        .widen = widen_f16_portable,
        .narrow = narrow_f16_portable,
        .round = round_f16_portable,
    },
    .bf16 = {
        .widen = widen_bf16_portable,
        .narrow = narrow_bf16_portable,
        .round = round_bf16_portable,
    },
    .relu_fwd = relu_fwd_portable,
    .relu_bwd = relu_bwd_portable,
};

#if defined(FA_X86_CONVERT)
/* ---- AVX2 + F16C ---- */
#define FA_AVX2_ __attribute__((target("avx2,fma,f16c")))
#define FA_INLINE_ALWAYS_ inline __attribute__((always_inline))
/* a from-output loop compiled once per form (tanh's or sigmoid's) and per
 * window its callers use (float16's FA_FROM_OUTPUT_WINDOW, bfloat16's 0),
 * the window a constant there: the tests stay out of the loop */
#define FA_FROM_OUTPUT_SPECIALISED_(name, attr)                                                              \
    attr static int name(const uint16_t *g, const uint16_t *y, uint16_t *dst, ptrdiff_t n, uint64_t *ties,   \
                         uint32_t window, int tanh_form) {                                                   \
        if (window == 0)                                                                                     \
            return tanh_form ? name##_body(g, y, dst, n, ties, 0, 1) : name##_body(g, y, dst, n, ties, 0, 0); \
        if (window == FA_FROM_OUTPUT_WINDOW)                                                                 \
            return tanh_form ? name##_body(g, y, dst, n, ties, FA_FROM_OUTPUT_WINDOW, 1)                     \
                             : name##_body(g, y, dst, n, ties, FA_FROM_OUTPUT_WINDOW, 0);                    \
        return tanh_form ? name##_body(g, y, dst, n, ties, window, 1) : name##_body(g, y, dst, n, ties, window, 0); \
    }

/* The tie scans in registers (the compiler does not vectorise them): which
 * lanes of x are within `window` float32 ULPs of a tie (all ones): a
 * superset of fa_is_half_near_tie's lanes, without a scan of the small
 * values. Below 2^-14, |x| + 2^-14 moves the ties (odd multiples of 2^-25)
 * onto the normal range's pattern, 0x1000 in the low 13 bits, in steps of
 * 2^-37, as half_exact_tie_lanes_avx2 does; a value within `window` float32
 * ULPs of a tie there (steps of at most 2^-38) lands within window + 1
 * steps of the pattern after the sum's rounding (the test takes a wider
 * power-of-two span, which one add and one mask check). Values past float16's
 * range and NaNs whose bits match are marked too: recomputed, they give
 * what they gave. */
FA_AVX2_ static inline __m256i half_tie_lanes_avx2(__m256 x, uint32_t window) {
    if (window == 0) return half_exact_tie_lanes_avx2(x); /* every backward's */
    const __m256 smallest_normal = _mm256_set1_ps(0x1p-14f);
    __m256 magnitude = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    __m256 shift = _mm256_and_ps(_mm256_cmp_ps(magnitude, smallest_normal, _CMP_LT_OQ), smallest_normal);
    /* within window + 1 steps of 0x1000: widened to the aligned span of
     * 2 half steps around it, which takes one add and one mask */
    uint32_t half = 1;
    while (half < window + 2) half <<= 1;
    __m256i bits = _mm256_add_epi32(_mm256_castps_si256(_mm256_add_ps(magnitude, shift)), _mm256_set1_epi32((int)half));
    __m256i span = _mm256_and_si256(bits, _mm256_set1_epi32((int)(0x1fffu & ~(2 * half - 1))));
    return _mm256_cmpeq_epi32(span, _mm256_set1_epi32(0x1000));
}

/* which lanes of x (float32 bits) are within `window` float32 ULPs of a bfloat16 tie (all ones) */
FA_AVX2_ static inline __m256i bf16_tie_lanes_avx2(__m256i x, uint32_t window) {
    const __m256i a = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
    const __m256i width = _mm256_set1_epi32((int)(2 * window));
    __m256i from_tie = _mm256_sub_epi32(_mm256_and_si256(a, _mm256_set1_epi32(0xffff)), _mm256_set1_epi32((int)(0x8000 - window)));
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000)),
                               _mm256_cmpeq_epi32(_mm256_max_epu32(from_tie, width), width));
}

FA_AVX2_ static int bf16_ties_avx2_(const float *src, ptrdiff_t n, uint64_t *ties, uint32_t window) {
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) {
        int lanes = _mm256_movemask_ps(_mm256_castsi256_ps(bf16_tie_lanes_avx2(_mm256_loadu_si256((const __m256i *)(src + i)), window)));
        if (lanes) FA_MARK_TIES_(ties, i, lanes), any = 1;
    }
    for (; i < n; i++)
        if (fa_is_bf16_near_tie(src[i], window)) FA_MARK_TIES_(ties, i, 1), any = 1;
    return any;
}

FA_DEFINE_BF16_(avx2, FA_AVX2_, bf16_ties_avx2_)

FA_AVX2_ static void widen_f16_avx2(const uint16_t *src, float *dst, ptrdiff_t n) {
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    for (; i < n; i++) dst[i] = fa_half_to_float(src[i]);
}
FA_AVX2_ static void round_f16_avx2(const float *src, uint16_t *dst, ptrdiff_t n) {
    ptrdiff_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) dst[i] = fa_float_to_half(src[i]);
}
FA_AVX2_ static int narrow_f16_avx2(const float *src, uint16_t *dst, ptrdiff_t n, uint64_t *ties, uint32_t window) {
    ptrdiff_t i = 0;
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(src + i);
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
        int lanes = _mm256_movemask_ps(_mm256_castsi256_ps(half_tie_lanes_avx2(x, window)));
        if (lanes) FA_MARK_TIES_(ties, i, lanes), any = 1;
    }
    for (; i < n; i++) {
        dst[i] = fa_float_to_half(src[i]);
        if (fa_is_half_near_tie(src[i], window)) FA_MARK_TIES_(ties, i, 1), any = 1;
    }
    return any;
}

/* relu in 16-bit lanes (the compiler's version of the backward widens
 * them), streamed past the caches (stream16_avx2.h). Forward: x where it is
 * positive as an int16 (sign clear, not zero), x's NaN made quiet, else +0. */
FA_AVX2_ static void relu_fwd_lanes_avx2(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16) {
    const __m256i magnitude = _mm256_set1_epi16(0x7fff), inf = _mm256_set1_epi16(bf16 ? 0x7f80 : 0x7c00);
    const __m256i quiet = _mm256_set1_epi16(bf16 ? 0x40 : 0x200);
#define FA_RELU16_AVX2_(at, to, store)                                                            \
    {                                                                                             \
        __m256i v = _mm256_loadu_si256((const __m256i *)at[0]);                                   \
        __m256i nan = _mm256_cmpgt_epi16(_mm256_and_si256(v, magnitude), inf);                    \
        __m256i kept = _mm256_and_si256(v, _mm256_cmpgt_epi16(v, _mm256_setzero_si256()));       \
        store((__m256i *)(to), _mm256_blendv_epi8(kept, _mm256_or_si256(v, quiet), nan));         \
    }
    FA_LOOP16_STREAMED_(1, FA_RELU16_AVX2_)
#undef FA_RELU16_AVX2_
}
FA_AVX2_ static void relu_bwd_lanes_avx2(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16) {
    const __m256i magnitude = _mm256_set1_epi16(0x7fff), inf = _mm256_set1_epi16(bf16 ? 0x7f80 : 0x7c00);
    const __m256i quiet = _mm256_set1_epi16(bf16 ? 0x40 : 0x200);
#define FA_RELU16_BWD_AVX2_(at, to, store)                                                        \
    {                                                                                             \
        __m256i w = _mm256_loadu_si256((const __m256i *)at[0]), v = _mm256_loadu_si256((const __m256i *)at[1]); \
        __m256i x_nan = _mm256_cmpgt_epi16(_mm256_and_si256(v, magnitude), inf);                  \
        __m256i g_nan = _mm256_cmpgt_epi16(_mm256_and_si256(w, magnitude), inf);                  \
        __m256i g_out = _mm256_or_si256(w, _mm256_and_si256(g_nan, quiet));                       \
        __m256i low = _mm256_and_si256(x_nan, _mm256_or_si256(v, quiet));                         \
        /* x > 0: positive as an int16 (sign clear, not zero) and not NaN */                      \
        __m256i positive = _mm256_andnot_si256(_mm256_cmpgt_epi16(v, inf), _mm256_cmpgt_epi16(v, _mm256_setzero_si256())); \
        store((__m256i *)(to), _mm256_blendv_epi8(low, g_out, positive));                         \
    }
    FA_LOOP16_STREAMED_(2, FA_RELU16_BWD_AVX2_)
#undef FA_RELU16_BWD_AVX2_
}

/* g·f'(x) as fa_times_derivative gives it (g's NaN where g is NaN), f'
 * looked up by x's bits with eight scalar loads: the loops ran 1.2-1.6x
 * faster than with vgatherdps on AMD Zen 3 */
FA_AVX2_ static inline __m256 times_derivative_avx2(__m256 g, const float *derivative, const uint16_t *x) {
    __m128 lo = _mm_setr_ps(derivative[x[0]], derivative[x[1]], derivative[x[2]], derivative[x[3]]);
    __m128 hi = _mm_setr_ps(derivative[x[4]], derivative[x[5]], derivative[x[6]], derivative[x[7]]);
    __m256 product = _mm256_mul_ps(g, _mm256_set_m128(hi, lo));
    return _mm256_blendv_ps(product, g, _mm256_cmp_ps(g, g, _CMP_UNORD_Q));
}
/* round_bf16's rounding of 8 float32 lanes */
FA_AVX2_ static inline __m128i bf16_round_ymm(__m256i x) {
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd)), 16);
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
    __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
    __m256i packed = _mm256_packus_epi32(_mm256_blendv_epi8(rounded, quiet, nan), _mm256_setzero_si256());
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08)); /* 64-bit lanes 0 and 2 */
}
/* 8 float32 lanes to bfloat16 rounded half up: for loops that find every
 * tie themselves (those lanes rounded again, or redone); a NaN's low 16 bits
 * must be 0, as a widened or arithmetic NaN's are */
FA_AVX2_ static inline __m128i bf16_round_half_up_avx2(__m256i x) {
    __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x8000)), 16);
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(rounded, _mm256_setzero_si256()), 0x08));
}
/* bfloat16 widened in registers, NaN made quiet (widen_bf16) */
FA_AVX2_ static inline __m256 widen_bf16_lanes_avx2(const uint16_t *src) {
    __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)src));
    h = _mm256_or_si256(h, _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_and_si256(h, _mm256_set1_epi32(0x7fff)),
                                                               _mm256_set1_epi32(0x7f80)), _mm256_set1_epi32(0x40)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
}
FA_AVX2_ static int scale_narrow_f16_avx2(const float *derivative, const uint16_t *x, const uint16_t *g,
                                          uint16_t *dst, ptrdiff_t n, uint64_t *ties, uint32_t window) {
    ptrdiff_t i = 0;
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    for (; i + 8 <= n; i += 8) {
        __m256 p = times_derivative_avx2(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + i))), derivative, x + i);
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(p, _MM_FROUND_TO_NEAREST_INT));
        int lanes = _mm256_movemask_ps(_mm256_castsi256_ps(half_tie_lanes_avx2(p, window)));
        if (lanes) FA_MARK_TIES_(ties, i, lanes), any = 1;
    }
    for (; i < n; i++) any |= narrow_one_f16(fa_times_derivative(fa_half_to_float(g[i]), derivative[x[i]]), dst, i, ties, window);
    return any;
}
FA_AVX2_ static int scale_narrow_bf16_avx2(const float *derivative, const uint16_t *x, const uint16_t *g,
                                           uint16_t *dst, ptrdiff_t n, uint64_t *ties, uint32_t window) {
    ptrdiff_t i = 0;
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    for (; i + 8 <= n; i += 8) {
        __m256 p = times_derivative_avx2(widen_bf16_lanes_avx2(g + i), derivative, x + i);
        __m256i bits = _mm256_castps_si256(p), tied;
        if (window == 0) {
            /* every call's (backward): the tied lanes, recomputed after the
             * block, are the only ones rounding half up gets wrong (p's NaN,
             * g's quieted or the table's, has low bits 0: loops.c clears
             * them in a bfloat16 table's NaN entries) */
            _mm_storeu_si128((__m128i *)(dst + i), bf16_round_half_up_avx2(bits));
            tied = _mm256_cmpeq_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0xffff)), _mm256_set1_epi32(0x8000));
        } else {
            _mm_storeu_si128((__m128i *)(dst + i), bf16_round_ymm(bits));
            tied = bf16_tie_lanes_avx2(bits, window);
        }
        int lanes = _mm256_movemask_ps(_mm256_castsi256_ps(tied));
        if (lanes) FA_MARK_TIES_(ties, i, lanes), any = 1;
    }
    for (; i < n; i++) any |= narrow_one_bf16(fa_times_derivative(fa_bf16_to_float(g[i]), derivative[x[i]]), dst, i, ties, window);
    return any;
}

/* bfloat16 widened in registers, a signaling NaN left signaling (see bf16_lanes_avx512) */
FA_AVX2_ static inline __m256 bf16_lanes_avx2(const uint16_t *src) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)src)), 16));
}
/* from_output_one on 8 lanes; *d_out: y - y² or 1 - y², for
 * exact_from_output_avx2. A NaN y is the FMA's only NaN operand, so d is y's
 * NaN made quiet without a select; the product's NaN is g's where both are */
FA_AVX2_ static inline __m256 from_output_avx2(__m256 g, __m256 y, int tanh_form, __m256 *d_out) {
    __m256 d = _mm256_fnmadd_ps(y, y, tanh_form ? _mm256_set1_ps(1.0f) : y);
    *d_out = d;
    return _mm256_blendv_ps(_mm256_mul_ps(g, d), g, _mm256_cmp_ps(g, g, _CMP_UNORD_Q));
}
/* The lanes where p = g (c - y²) exactly (c: 1 or y, d = c - y² rounded):
 * a 16-bit tie there is the exact value's, which rounding to nearest even
 * settles as the float64 recomputation would, so it needs none. Exact when
 * y² is (y has at most 11 significant bits: its square is exact unless it
 * is subnormal), d is (Fast2Sum's error, c - d - y², is 0; valid as y² <=
 * |c|) and the product is (fma's error 0, with p far from underflow, where
 * that error could vanish). Conservative: any other lane is recomputed. */
FA_AVX2_ static inline __m256i exact_from_output_avx2(__m256 g, __m256 y, __m256 c, __m256 d, __m256 p) {
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 yy = _mm256_mul_ps(y, y);
    __m256 square = _mm256_or_ps(_mm256_cmp_ps(yy, _mm256_set1_ps(0x1p-126f), _CMP_GE_OQ),
                                 _mm256_cmp_ps(y, _mm256_setzero_ps(), _CMP_EQ_OQ));
    __m256 difference = _mm256_and_ps(_mm256_cmp_ps(yy, _mm256_and_ps(c, magnitude), _CMP_LE_OQ),
                                      _mm256_cmp_ps(_mm256_sub_ps(c, d), yy, _CMP_EQ_OQ));
    __m256 product = _mm256_and_ps(_mm256_cmp_ps(_mm256_fmsub_ps(g, d, p), _mm256_setzero_ps(), _CMP_EQ_OQ),
                                   _mm256_cmp_ps(_mm256_and_ps(p, magnitude), _mm256_set1_ps(0x1p-90f), _CMP_GE_OQ));
    return _mm256_castps_si256(_mm256_and_ps(_mm256_and_ps(square, difference), product));
}
/* float16's g·f'(y) settled in registers for the `near` lanes (near a
 * tie in float32), as fix_ties would: in float64, where f'(y) = c - y² is
 * exact for float16's y, the product rounded once as the float64 kernel
 * rounds it; then to odd in float32 (the float conversion's error, exact in
 * float64, gives the side) and to float16, which rounds the float64 value
 * once. Returns the results with those lanes replaced, and the lanes still
 * to recompute: non-finite ones, and those whose float64 value is on a tie
 * (for the TieSide rules). */
typedef struct {
    __m128i rounded; /* the 8 results, settled lanes replaced */
    __m256i left;    /* the lanes still to recompute */
} fa_settled_avx2;
/* out of line: inlined, its float64 constants spilled the loop's registers */
FA_AVX2_ __attribute__((noinline, cold)) static fa_settled_avx2
settle_from_output_f16_avx2(__m256 g, __m256 y, __m256 p, int tanh_form, __m256i near, __m128i results) {
    __m128 rounded[2], error[2];
    for (int h = 0; h < 2; h++) {
        __m256d gd = _mm256_cvtps_pd(h ? _mm256_extractf128_ps(g, 1) : _mm256_castps256_ps128(g));
        __m256d yd = _mm256_cvtps_pd(h ? _mm256_extractf128_ps(y, 1) : _mm256_castps256_ps128(y));
        __m256d v = _mm256_mul_pd(gd, _mm256_fnmadd_pd(yd, yd, tanh_form ? _mm256_set1_pd(1.0) : yd));
        rounded[h] = _mm256_cvtpd_ps(v);
        error[h] = _mm256_cvtpd_ps(_mm256_sub_pd(v, _mm256_cvtps_pd(rounded[h]))); /* nonzero where inexact */
    }
    __m256i bits = _mm256_castps_si256(_mm256_set_m128(rounded[1], rounded[0]));
    __m256 residual = _mm256_set_m128(error[1], error[0]);
    __m256i inexact = _mm256_castps_si256(_mm256_cmp_ps(residual, _mm256_setzero_ps(), _CMP_NEQ_OQ));
    __m256i away = _mm256_srai_epi32(_mm256_xor_si256(_mm256_castps_si256(residual), bits), 31); /* rounded past v */
    bits = _mm256_add_epi32(bits, _mm256_and_si256(inexact, away)); /* toward zero: one ULP less */
    bits = _mm256_or_si256(bits, _mm256_and_si256(inexact, _mm256_set1_epi32(1)));
    __m256 magnitude = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), p);
    __m256i finite = _mm256_castps_si256(_mm256_cmp_ps(magnitude, _mm256_set1_ps(0x1p127f), _CMP_LE_OQ));
    __m256i settled = _mm256_and_si256(near, _mm256_andnot_si256(half_exact_tie_lanes_avx2(_mm256_castsi256_ps(bits)), finite));
    __m128i mask = _mm_packs_epi32(_mm256_castsi256_si128(settled), _mm256_extracti128_si256(settled, 1));
    fa_settled_avx2 result = {_mm_blendv_epi8(results, _mm256_cvtps_ph(_mm256_castsi256_ps(bits), _MM_FROUND_TO_NEAREST_INT), mask),
                              _mm256_andnot_si256(settled, near)};
    return result;
}
FA_AVX2_ FA_INLINE_ALWAYS_ static int from_output_f16_avx2_body(const uint16_t *g, const uint16_t *y, uint16_t *dst, ptrdiff_t n,
                                         uint64_t *ties, uint32_t window, int tanh_form) {
    ptrdiff_t i = 0;
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    for (; i + 8 <= n; i += 8) {
        __m256 gw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(g + i)));
        __m256 yw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(y + i))), d;
        __m256 p = from_output_avx2(gw, yw, tanh_form, &d);
        __m128i rounded = _mm256_cvtps_ph(p, _MM_FROUND_TO_NEAREST_INT);
        __m256i tied = half_tie_lanes_avx2(p, window);
        if (!_mm256_testz_si256(tied, tied)) {
            __m256 c = tanh_form ? _mm256_set1_ps(1.0f) : yw;
            tied = _mm256_andnot_si256(exact_from_output_avx2(gw, yw, c, d, p), tied);
            if (window != 0) {
                fa_settled_avx2 settled = settle_from_output_f16_avx2(gw, yw, p, tanh_form, tied, rounded);
                rounded = settled.rounded, tied = settled.left;
            }
            int lanes = _mm256_movemask_ps(_mm256_castsi256_ps(tied));
            if (lanes) FA_MARK_TIES_(ties, i, lanes), any = 1;
        }
        _mm_storeu_si128((__m128i *)(dst + i), rounded);
    }
    for (; i < n; i++) any |= narrow_one_f16(from_output_one(fa_half_to_float(g[i]), fa_half_to_float(y[i]), tanh_form), dst, i, ties, window);
    return any;
}
FA_AVX2_ FA_INLINE_ALWAYS_ static int from_output_bf16_avx2_body(const uint16_t *g, const uint16_t *y, uint16_t *dst, ptrdiff_t n,
                                          uint64_t *ties, uint32_t window, int tanh_form) {
    const __m256 one = _mm256_set1_ps(fa_quieting_one);
    ptrdiff_t i = 0;
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    for (; i + 8 <= n; i += 8) {
        __m256 gw = bf16_lanes_avx2(g + i), yw = bf16_lanes_avx2(y + i), d;
        if (window == 0) {
            /* every call but a forward's: p's low 16 bits at 0x8000 are a tie
             * (a NaN's are 0, g's quieted by the product with 1), so p rounds
             * half up, and to even where a tie makes the branch below */
            gw = _mm256_mul_ps(gw, one);
            __m256 p = from_output_avx2(gw, yw, tanh_form, &d);
            __m256i bits = _mm256_castps_si256(p);
            _mm_storeu_si128((__m128i *)(dst + i), bf16_round_half_up_avx2(bits));
            __m256i tied = _mm256_cmpeq_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0xffff)), _mm256_set1_epi32(0x8000));
            if (!_mm256_testz_si256(tied, tied)) {
                _mm_storeu_si128((__m128i *)(dst + i), bf16_round_ymm(bits));
                __m256 c = tanh_form ? _mm256_set1_ps(1.0f) : yw;
                tied = _mm256_andnot_si256(exact_from_output_avx2(gw, yw, c, d, p), tied);
                int lanes = _mm256_movemask_ps(_mm256_castsi256_ps(tied));
                if (lanes) FA_MARK_TIES_(ties, i, lanes), any = 1;
            }
            continue;
        }
        __m256 p = from_output_avx2(gw, yw, tanh_form, &d);
        _mm_storeu_si128((__m128i *)(dst + i), bf16_round_ymm(_mm256_castps_si256(p)));
        __m256i tied = bf16_tie_lanes_avx2(_mm256_castps_si256(p), window);
        if (!_mm256_testz_si256(tied, tied)) {
            __m256 c = tanh_form ? _mm256_set1_ps(1.0f) : yw;
            tied = _mm256_andnot_si256(exact_from_output_avx2(gw, yw, c, d, p), tied);
            int lanes = _mm256_movemask_ps(_mm256_castsi256_ps(tied));
            if (lanes) FA_MARK_TIES_(ties, i, lanes), any = 1;
        }
    }
    for (; i < n; i++) any |= narrow_one_bf16(from_output_one(fa_bf16_to_float(g[i]), fa_bf16_to_float(y[i]), tanh_form), dst, i, ties, window);
    return any;
}

FA_FROM_OUTPUT_SPECIALISED_(from_output_f16_avx2, FA_AVX2_)
FA_FROM_OUTPUT_SPECIALISED_(from_output_bf16_avx2, FA_AVX2_)

/* hardswish in one pass, forward x (x + 3)/6 and backward g (2x + 3)/6:
 * a s/6 with s = b x + 3 (b: 1 or 2, a: x or g) by three float32 roundings
 * instead of the float32 kernel's exact division: s rounds only where it is
 * above 1.5, so the result y is within 4 float32 ULPs, 2^-21 of itself, of
 * the value (16-bit inputs put no step but the last below 2^-126, where its
 * error is half an ULP). Rounded to the 16-bit type, y(1 - 2^-20) and
 * y(1 + 2^-20) bracket the value: where they round alike, so does the
 * value (rounding is monotonic), and that is the result. Elsewhere a 16-bit
 * tie is near: those lanes are marked and settled after the loop
 * (hardswish_settle_avx2), which leaves the float64 recomputation only the
 * few it cannot. bfloat16 brackets its ties by the float32 bits instead
 * (within `window` ULPs), and rounds half up, the marked ties aside. Outside
 * (-3, 3) the float32 kernel's selects, bit for bit. */
FA_AVX2_ static inline __m256 hardswish_inside_avx2(__m256 a, __m256 x, int backward) {
    __m256 s = _mm256_fmadd_ps(x, _mm256_set1_ps(backward ? 2.0f : 1.0f), _mm256_set1_ps(3.0f));
    return _mm256_mul_ps(a, _mm256_mul_ps(s, _mm256_set1_ps((float)(1.0 / 6))));
}
/* the kernels' sides: forward -0 from -3 down and x from 3 up; backward +0
 * and g; a NaN x itself (quiet: the forward's inside value is x's NaN);
 * backward's exact zeros +0; a selected signaling NaN g quieted (times one,
 * fa_quieting_one) */
FA_AVX2_ static inline __m256 hardswish_select_avx2(__m256 a, __m256 x, __m256 inside, int backward, __m256 one) {
    __m256 below_three = _mm256_cmp_ps(x, _mm256_set1_ps(3.0f), _CMP_NGE_UQ);     /* x < 3 or NaN */
    __m256 above_minus = _mm256_cmp_ps(x, _mm256_set1_ps(-3.0f), _CMP_NLE_UQ);    /* x > -3 or NaN */
    if (!backward)
        return _mm256_blendv_ps(_mm256_set1_ps(-0.0f), _mm256_blendv_ps(x, inside, below_three), above_minus);
    inside = _mm256_add_ps(inside, _mm256_setzero_ps()); /* -0 + 0 = +0 */
    __m256 y = _mm256_and_ps(_mm256_blendv_ps(_mm256_mul_ps(a, one), inside, below_three), above_minus);
    return _mm256_blendv_ps(y, _mm256_add_ps(x, _mm256_setzero_ps()), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
/* float16: y rounded, lanes whose bracket rounds apart returned */
FA_AVX2_ static inline int hardswish_round_f16_avx2(__m256 y, uint16_t *to) {
    __m128i lo = _mm256_cvtps_ph(_mm256_mul_ps(y, _mm256_set1_ps(1 - 0x1p-20f)), _MM_FROUND_TO_NEAREST_INT);
    __m128i hi = _mm256_cvtps_ph(_mm256_mul_ps(y, _mm256_set1_ps(1 + 0x1p-20f)), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128((__m128i *)to, lo);
    __m128i apart = _mm_xor_si128(_mm_cmpeq_epi16(lo, hi), _mm_set1_epi32(-1));
    return _mm_movemask_epi8(_mm_packs_epi16(apart, _mm_setzero_si128()));
}
/* bfloat16: y rounded half up, lanes within `window` ULPs of a tie returned
 * (NaNs here have their low 16 bits zero: widened, or the default NaN) */
FA_AVX2_ static inline int hardswish_round_bf16_avx2(__m256 y, uint16_t *to, uint32_t window) {
    __m256i bits = _mm256_castps_si256(y);
    _mm_storeu_si128((__m128i *)to, bf16_round_half_up_avx2(bits));
    const __m256i width = _mm256_set1_epi32((int)(2 * window));
    __m256i from_tie = _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0xffff)), _mm256_set1_epi32((int)(0x8000 - window)));
    return _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_max_epu32(from_tie, width), width)));
}
/* A marked element's 16-bit result from its value in float64, where that is
 * exact: a s is for |x| >= 2^-37 (at most 11 + 26 bits for float16, 8 + 46
 * for bfloat16), and a s/6 rounded to float64 is then either exact or too
 * far from any 16-bit tie for its rounding to matter (a s/3 is a binary
 * fraction or has a period of 2 bits). Returns 0 where it is not (tiny
 * bfloat16 x, outside (-3, 3), a NaN or infinite operand): fix_ties' float64
 * kernel and its tie rules then decide. float16 through F16C. */
FA_AVX2_ static inline float hardswish_widen_one_avx2(uint16_t h, int bf16) {
    return bf16 ? fa_bf16_to_float(h) : _cvtsh_ss(h);
}
FA_AVX2_ static int hardswish_settle_one_avx2(uint16_t g16, uint16_t x16, int bf16, int backward, uint16_t *out) {
    double x = hardswish_widen_one_avx2(x16, bf16);
    double a = backward ? hardswish_widen_one_avx2(g16, bf16) : x;
    if (!(x > -3 && x < 3 && fabs(x) >= 0x1p-37 && fabs(a) <= 0x1p128)) return 0;
    double value = a * (x * (backward ? 2 : 1) + 3) / 6;
    if (value == 0) return 0;
    float f = (float)value;
    if (bf16) *out = fa_float_to_bf16(fa_is_bf16_tie(f) ? fa_toward_(value, f) : f);
    else *out = (uint16_t)_cvtss_sh(fa_is_half_tie(f) ? fa_toward_(value, f) : f, _MM_FROUND_TO_NEAREST_INT);
    return 1;
}
FA_AVX2_ static void hardswish_settle_avx2(const uint16_t *g, const uint16_t *x, uint16_t *dst, ptrdiff_t n,
                                      uint64_t *ties, int bf16, int backward) {
    for (ptrdiff_t word = 0; word < (n + 63) / 64; word++)
        for (uint64_t left = ties[word]; left; left &= left - 1) {
            int bit = __builtin_ctzll(left);
            ptrdiff_t i = word * 64 + bit;
            if (hardswish_settle_one_avx2(backward ? g[i] : 0, x[i], bf16, backward, &dst[i]))
                ties[word] &= ~((uint64_t)1 << bit);
        }
}
/* one vector: 8 results into to[], the lanes near a tie returned (the
 * loop does not sort them out: on N(0, 9) inputs 5% of float16's vectors
 * and 15% of bfloat16's have one, mostly exact ties, and a branch on them
 * cost more in mispredictions than settling them) */
FA_AVX2_ FA_INLINE_ALWAYS_ static int hardswish_vector_avx2(const uint16_t *g, const uint16_t *x, uint16_t *to,
                                                            uint32_t window, int bf16, int backward, __m256 one) {
    /* bfloat16's signaling NaNs are quieted by the arithmetic or the selects */
    __m256 xw = bf16 ? bf16_lanes_avx2(x) : _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)x));
    __m256 a = !backward ? xw : bf16 ? bf16_lanes_avx2(g) : _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)g));
    __m256 y = hardswish_select_avx2(a, xw, hardswish_inside_avx2(a, xw, backward), backward, one);
    return bf16 ? hardswish_round_bf16_avx2(y, to, window) : hardswish_round_f16_avx2(y, to);
}
/* The body of hardswish's one-pass loops: W lanes a vector, VECTOR(g, x,
 * to) one vector's results stored and its lanes near a tie returned; marked
 * without a branch, a word of the bitmap at a time in a register; the last
 * few through a zeroed vector (0 gives 0, no tie); then the marked settled */
#define FA_HARDSWISH_LOOP_(W, VECTOR)                                                          \
    ptrdiff_t i = 0;                                                                           \
    int any = 0;                                                                               \
    for (; i + 64 <= n; i += 64) {                                                             \
        uint64_t word = 0;                                                                     \
        for (int k = 0; k < 64; k += (W)) word |= (uint64_t)VECTOR(g + i + k, x + i + k, dst + i + k) << k; \
        ties[i / 64] = word;                                                                   \
        any |= word != 0;                                                                      \
    }                                                                                          \
    if (i < n) ties[i / 64] = 0;                                                               \
    for (; i + (W) <= n; i += (W)) {                                                           \
        uint32_t lanes = VECTOR(g + i, x + i, dst + i);                                        \
        FA_MARK_TIES_(ties, i, lanes);                                                         \
        any |= lanes != 0;                                                                     \
    }                                                                                          \
    if (i < n) {                                                                               \
        uint16_t g_rest[W] = {0}, x_rest[W] = {0}, result[W];                                  \
        memcpy(x_rest, x + i, (size_t)(n - i) * 2);                                            \
        if (backward) memcpy(g_rest, g + i, (size_t)(n - i) * 2);                              \
        uint32_t lanes = VECTOR(g_rest, x_rest, result) & ((1u << (n - i)) - 1);               \
        memcpy(dst + i, result, (size_t)(n - i) * 2);                                          \
        FA_MARK_TIES_(ties, i, lanes);                                                         \
        any |= lanes != 0;                                                                     \
    }                                                                                          \
    if (!any) return 0;                                                                        \
    hardswish_settle_avx2(g, x, dst, n, ties, bf16, backward);                                 \
    for (ptrdiff_t word = 0; word < (n + 63) / 64; word++)                                     \
        if (ties[word]) return 1;                                                              \
    return 0;

FA_AVX2_ FA_INLINE_ALWAYS_ static int hardswish_body_avx2(const uint16_t *g, const uint16_t *x, uint16_t *dst, ptrdiff_t n,
                                                          uint64_t *ties, uint32_t window, int bf16, int backward) {
    const __m256 one = _mm256_set1_ps(fa_quieting_one);
#define FA_HARDSWISH_VECTOR_AVX2_(g_at, x_at, to) \
    (uint32_t)hardswish_vector_avx2(g_at, x_at, to, window, bf16, backward, one)
    FA_HARDSWISH_LOOP_(8, FA_HARDSWISH_VECTOR_AVX2_)
#undef FA_HARDSWISH_VECTOR_AVX2_
}
/* g NULL: the forward */
FA_AVX2_ static int hardswish_f16_avx2(const uint16_t *g, const uint16_t *x, uint16_t *dst, ptrdiff_t n, uint64_t *ties,
                                       uint32_t window) {
    return g ? hardswish_body_avx2(g, x, dst, n, ties, window, 0, 1) : hardswish_body_avx2(g, x, dst, n, ties, window, 0, 0);
}
FA_AVX2_ static int hardswish_bf16_avx2(const uint16_t *g, const uint16_t *x, uint16_t *dst, ptrdiff_t n, uint64_t *ties,
                                        uint32_t window) {
    return g ? hardswish_body_avx2(g, x, dst, n, ties, window, 1, 1) : hardswish_body_avx2(g, x, dst, n, ties, window, 1, 0);
}

static const fa_convert16_set avx2 = {
    .f16 = {
        .widen = widen_f16_avx2,
        .narrow = narrow_f16_avx2,
        .round = round_f16_avx2,
        .scale_narrow = scale_narrow_f16_avx2,
        .from_output_narrow = from_output_f16_avx2,
        .hardswish_narrow = hardswish_f16_avx2,
    },
    .bf16 = {
        .widen = widen_bf16_avx2,
        .narrow = narrow_bf16_avx2,
        .round = round_bf16_avx2,
        .scale_narrow = scale_narrow_bf16_avx2,
        .from_output_narrow = from_output_bf16_avx2,
        .hardswish_narrow = hardswish_bf16_avx2,
    },
    .relu_fwd = relu_fwd_lanes_avx2,
    .relu_bwd = relu_bwd_lanes_avx2,
};

/* ---- AVX-512F ---- */
#define FA_AVX512_ __attribute__((target("avx512f,avx2,fma,f16c")))

/* which lanes of x are within `window` float32 ULPs of a tie (a superset
 * of AVX2's lanes, without its scan of the small values): below 2^-14,
 * |x| + 2^-14 moves the ties (odd multiples of 2^-25) onto the normal
 * range's pattern, 0x1000 in the low 13 bits, in steps of 2^-37, as
 * half_exact_tie_lanes_avx512 does. A value within `window` float32 ULPs
 * of a tie there (steps of at most 2^-38) lands within window + 1 steps of
 * the pattern after the sum's rounding. Values past float16's range and NaNs
 * whose bits match are marked too: recomputed, they give what they gave. */
FA_AVX512_ static inline __mmask16 half_tie_lanes_avx512(__m512 x, uint32_t window) {
    if (window == 0) return half_exact_tie_lanes_avx512(x); /* every backward's, as AVX2's */
    const __m512 smallest_normal = _mm512_set1_ps(0x1p-14f);
    __m512 magnitude = _mm512_abs_ps(x);
    __m512 shift = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(magnitude, smallest_normal, _CMP_LT_OQ), smallest_normal);
    __m512i low = _mm512_and_si512(_mm512_castps_si512(_mm512_add_ps(magnitude, shift)), _mm512_set1_epi32(0x1fff));
    __m512i from_tie = _mm512_sub_epi32(low, _mm512_set1_epi32((int)(0x1000 - (window + 1))));
    return _mm512_cmple_epu32_mask(from_tie, _mm512_set1_epi32((int)(2 * (window + 1))));
}

FA_AVX512_ static inline __mmask16 bf16_tie_lanes_avx512(__m512i x, uint32_t window) {
    const __m512i a = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
    __m512i from_tie = _mm512_sub_epi32(_mm512_and_si512(a, _mm512_set1_epi32(0xffff)), _mm512_set1_epi32((int)(0x8000 - window)));
    return _mm512_cmple_epu32_mask(from_tie, _mm512_set1_epi32((int)(2 * window))) &
           _mm512_cmplt_epu32_mask(a, _mm512_set1_epi32(0x7f800000));
}

FA_DEFINE_RELU16_FWD_(avx512, FA_AVX512_)

FA_AVX512_ static void widen_f16_avx512(const uint16_t *src, float *dst, ptrdiff_t n) {
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
    for (; i < n; i++) dst[i] = fa_half_to_float(src[i]);
}
FA_AVX512_ static void round_f16_avx512(const float *src, uint16_t *dst, ptrdiff_t n) {
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) dst[i] = fa_float_to_half(src[i]);
}
FA_AVX512_ static int narrow_f16_avx512(const float *src, uint16_t *dst, ptrdiff_t n, uint64_t *ties, uint32_t window) {
    ptrdiff_t i = 0;
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(src + i);
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
        __mmask16 lanes = half_tie_lanes_avx512(x, window);
        if (lanes) FA_MARK_TIES_(ties, i, lanes), any = 1;
    }
    for (; i < n; i++) {
        dst[i] = fa_float_to_half(src[i]);
        if (fa_is_half_near_tie(src[i], window)) FA_MARK_TIES_(ties, i, 1), any = 1;
    }
    return any;
}

/* bfloat16 in registers: the compiler's vectorisation of the loops above
 * leaves half the speed on the table here */
FA_AVX512_ static void widen_bf16_zmm_avx512(const uint16_t *src, float *dst, ptrdiff_t n) {
    const __m512i magnitude = _mm512_set1_epi32(0x7fff), inf = _mm512_set1_epi32(0x7f80);
    const __m512i quiet = _mm512_set1_epi32(0x40);
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(src + i)));
        __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(h, magnitude), inf);
        h = _mm512_mask_or_epi32(h, nan, h, quiet);
        _mm512_storeu_si512(dst + i, _mm512_slli_epi32(h, 16));
    }
    for (; i < n; i++) dst[i] = fa_bf16_to_float(src[i]);
}
FA_AVX512_ static inline __m256i bf16_round_zmm(__m512i x) {
    const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(x, 16), one);
    __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(x, _mm512_add_epi32(bias, odd)), 16);
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, magnitude), inf);
    return _mm512_cvtepi32_epi16(_mm512_mask_or_epi32(rounded, nan, _mm512_srli_epi32(x, 16), quiet));
}
FA_AVX512_ static void round_bf16_zmm_avx512(const float *src, uint16_t *dst, ptrdiff_t n) {
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) _mm256_storeu_si256((__m256i *)(dst + i), bf16_round_zmm(_mm512_loadu_si512(src + i)));
    for (; i < n; i++) dst[i] = fa_float_to_bf16(src[i]);
}
FA_AVX512_ static int narrow_bf16_zmm_avx512(const float *src, uint16_t *dst, ptrdiff_t n, uint64_t *ties,
                                             uint32_t window) {
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i x = _mm512_loadu_si512(src + i);
        _mm256_storeu_si256((__m256i *)(dst + i), bf16_round_zmm(x));
        __mmask16 lanes = bf16_tie_lanes_avx512(x, window);
        if (lanes) FA_MARK_TIES_(ties, i, lanes), any = 1;
    }
    for (; i < n; i++) {
        dst[i] = fa_float_to_bf16(src[i]);
        if (fa_is_bf16_near_tie(src[i], window)) FA_MARK_TIES_(ties, i, 1), any = 1;
    }
    return any;
}

/* g·f'(x) as fa_times_derivative gives it (g's NaN where g is NaN), f' looked up by x's bits */
FA_AVX512_ FA_INLINE_ALWAYS_ static __m512 times_derivative_avx512(__m512 g, const float *derivative,
                                                                  const uint16_t *x) {
    __m512 product = _mm512_mul_ps(g, fa_lookup16_ps_avx512(derivative, x));
    return _mm512_mask_mov_ps(product, _mm512_cmp_ps_mask(g, g, _CMP_UNORD_Q), g);
}
/* bf16_tie_lanes_avx512 for lanes that are not NaN */
FA_AVX512_ static inline __mmask16 bf16_tie_lanes_number_avx512(__m512i x, uint32_t window) {
    __m512i from_tie = _mm512_sub_epi32(_mm512_and_si512(x, _mm512_set1_epi32(0xffff)), _mm512_set1_epi32((int)(0x8000 - window)));
    return _mm512_cmple_epu32_mask(from_tie, _mm512_set1_epi32((int)(2 * window)));
}
/* a signaling NaN made quiet, as widen_bf16 does */
FA_AVX512_ static inline __m512 bf16_quieted_avx512(__m512 x) {
    __m512i bits = _mm512_castps_si512(x);
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
    return _mm512_castsi512_ps(_mm512_mask_or_epi32(bits, nan, bits, _mm512_set1_epi32(0x400000)));
}
/* the 32 elements' bits from the halves' 16 lanes: even lane k is element 2k */
static inline uint32_t interleave_lanes(uint32_t even, uint32_t odd) {
    uint32_t spread[2] = {even, odd};
    for (int h = 0; h < 2; h++) {
        uint32_t v = spread[h];
        v = (v | v << 8) & 0x00ff00ffu;
        v = (v | v << 4) & 0x0f0f0f0fu;
        v = (v | v << 2) & 0x33333333u;
        spread[h] = (v | v << 1) & 0x55555555u;
    }
    return spread[0] | spread[1] << 1;
}
FA_AVX512_ static inline __m512 widen_bf16_lanes_avx512(const uint16_t *src) {
    __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)src));
    __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(h, _mm512_set1_epi32(0x7fff)), _mm512_set1_epi32(0x7f80));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_mask_or_epi32(h, nan, h, _mm512_set1_epi32(0x40)), 16));
}
FA_AVX512_ static int scale_narrow_f16_avx512(const float *derivative, const uint16_t *x, const uint16_t *g,
                                              uint16_t *dst, ptrdiff_t n, uint64_t *ties, uint32_t window) {
    ptrdiff_t i = 0;
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    for (; i + 16 <= n; i += 16) {
        __m512 gw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(g + i)));
        __m512 p = times_derivative_avx512(gw, derivative, x + i);
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtps_ph(p, _MM_FROUND_TO_NEAREST_INT));
        __mmask16 lanes = half_tie_lanes_avx512(p, window);
        if (lanes) FA_MARK_TIES_(ties, i, lanes), any = 1;
    }
    for (; i < n; i++) any |= narrow_one_f16(fa_times_derivative(fa_half_to_float(g[i]), derivative[x[i]]), dst, i, ties, window);
    return any;
}
FA_AVX512_ static int scale_narrow_bf16_avx512(const float *derivative, const uint16_t *x, const uint16_t *g,
                                               uint16_t *dst, ptrdiff_t n, uint64_t *ties, uint32_t window) {
    ptrdiff_t i = 0;
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    for (; i + 32 <= n; i += 32) {
        __m512i g_pairs = _mm512_loadu_si512(g + i), p[2];
        __m512 d[2], g_half[2] = {bf16_quieted_avx512(bf16_even_avx512(g_pairs)), bf16_quieted_avx512(bf16_odd_avx512(g_pairs))};
        fa_lookup16_pairs_avx512(derivative, x + i, &d[0], &d[1]);
        __mmask16 lanes[2];
        for (int h = 0; h < 2; h++) {
            __m512 product = _mm512_mul_ps(g_half[h], d[h]);
            p[h] = _mm512_castps_si512(_mm512_mask_mov_ps(product, _mm512_cmp_ps_mask(g_half[h], g_half[h], _CMP_UNORD_Q), g_half[h]));
            lanes[h] = bf16_tie_lanes_avx512(p[h], window);
        }
        _mm512_storeu_si512(dst + i, bf16_pack_rounded_avx512(_mm512_castsi512_ps(p[0]), _mm512_castsi512_ps(p[1]), 0));
        if (lanes[0] | lanes[1]) FA_MARK_TIES_(ties, i, interleave_lanes(lanes[0], lanes[1])), any = 1;
    }
    for (; i + 16 <= n; i += 16) {
        __m512 gw = widen_bf16_lanes_avx512(g + i);
        __m512i p = _mm512_castps_si512(times_derivative_avx512(gw, derivative, x + i));
        _mm256_storeu_si256((__m256i *)(dst + i), bf16_round_zmm(p));
        __mmask16 lanes = bf16_tie_lanes_avx512(p, window);
        if (lanes) FA_MARK_TIES_(ties, i, lanes), any = 1;
    }
    for (; i < n; i++) any |= narrow_one_bf16(fa_times_derivative(fa_bf16_to_float(g[i]), derivative[x[i]]), dst, i, ties, window);
    return any;
}
/* bfloat16 widened in registers, a signaling NaN left signaling: where the
 * lane's result is that NaN, the rounding back quiets it (bf16_round_zmm) as
 * widen_bf16 would have; where it is an operand, the arithmetic does */
FA_AVX512_ static inline __m512 bf16_lanes_avx512(const uint16_t *src) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)src)), 16));
}
/* from_output_avx2 and exact_from_output_avx2 on 16 lanes */
FA_AVX512_ static inline __m512 from_output_avx512(__m512 g, __m512 y, int tanh_form, __m512 *d_out) {
    __m512 d = _mm512_fnmadd_ps(y, y, tanh_form ? _mm512_set1_ps(1.0f) : y);
    *d_out = d;
    d = _mm512_mask_mov_ps(d, _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q), y);
    return _mm512_mask_mov_ps(_mm512_mul_ps(g, d), _mm512_cmp_ps_mask(g, g, _CMP_UNORD_Q), g);
}
FA_AVX512_ static inline __mmask16 exact_from_output_avx512(__m512 g, __m512 y, __m512 c, __m512 d, __m512 p) {
    __m512 yy = _mm512_mul_ps(y, y);
    __mmask16 square = _mm512_cmp_ps_mask(yy, _mm512_set1_ps(0x1p-126f), _CMP_GE_OQ) |
                       _mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_EQ_OQ);
    __mmask16 difference = _mm512_cmp_ps_mask(yy, _mm512_abs_ps(c), _CMP_LE_OQ) &
                           _mm512_cmp_ps_mask(_mm512_sub_ps(c, d), yy, _CMP_EQ_OQ);
    __mmask16 product = _mm512_cmp_ps_mask(_mm512_fmsub_ps(g, d, p), _mm512_setzero_ps(), _CMP_EQ_OQ) &
                        _mm512_cmp_ps_mask(_mm512_abs_ps(p), _mm512_set1_ps(0x1p-90f), _CMP_GE_OQ);
    return square & difference & product;
}
/* float16's g·f'(y) from the exact value, rounded to odd: with 11-bit
 * significands g·y is exact in float32, so one fma takes g - g·y·y (tanh)
 * or g·y - g·y·y (sigmoid) exactly and rounds it once. Rounded up and down,
 * the result with an odd last bit is the one rounded to odd (both are the
 * same where the value is exact); 24 bits are more than float16's 11 + 2,
 * so rounding that to nearest rounds the exact value. The sign is the
 * float32 product's, g's times f'(y)'s, zeros included (an exact zero sum
 * takes its sign from the rounding direction). A NaN result (a NaN or
 * infinite operand) is left to from_output_avx512, whose rules give it. */
FA_AVX512_ static inline __m512 from_output_to_odd_avx512(__m512 g, __m512 y, int tanh_form) {
    __m512 gy = _mm512_mul_ps(g, y), addend = tanh_form ? g : gy;
    __m512 up = _mm512_fnmadd_round_ps(gy, y, addend, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    __m512 down = _mm512_fnmadd_round_ps(gy, y, addend, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512 odd = _mm512_mask_mov_ps(up, _mm512_test_epi32_mask(_mm512_castps_si512(down), _mm512_set1_epi32(1)), down);
    __m512 derivative = _mm512_fnmadd_ps(y, y, tanh_form ? _mm512_set1_ps(1.0f) : y);
    __m512i sign = _mm512_xor_si512(_mm512_castps_si512(g), _mm512_castps_si512(derivative));
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(odd), sign, _mm512_set1_epi32(INT32_MIN),
                                                         0xd8)); /* sign's sign bit, odd's other bits */
}
/* correctly rounded: no ties to mark but the scalar tail's */
FA_AVX512_ FA_INLINE_ALWAYS_ static int from_output_f16_avx512_body(const uint16_t *g, const uint16_t *y, uint16_t *dst, ptrdiff_t n,
                                             uint64_t *ties, uint32_t window, int tanh_form) {
    ptrdiff_t i = 0;
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    for (; i + 16 <= n; i += 16) {
        __m512 gw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(g + i)));
        __m512 yw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(y + i)));
        __m512 r = from_output_to_odd_avx512(gw, yw, tanh_form);
        __mmask16 special = _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q);
        if (special) {
            __m512 d;
            r = _mm512_mask_mov_ps(r, special, from_output_avx512(gw, yw, tanh_form, &d));
        }
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++) any |= narrow_one_f16(from_output_one(fa_half_to_float(g[i]), fa_half_to_float(y[i]), tanh_form), dst, i, ties, window);
    return any;
}
FA_AVX512_ FA_INLINE_ALWAYS_ static int from_output_bf16_avx512_body(const uint16_t *g, const uint16_t *y, uint16_t *dst, ptrdiff_t n,
                                              uint64_t *ties, uint32_t window, int tanh_form) {
    const __m512 one = _mm512_set1_ps(1.0f);
    ptrdiff_t i = 0;
    int any = 0;
    memset(ties, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    for (; i + 32 <= n; i += 32) {
        __m512i g_pairs = _mm512_loadu_si512(g + i), y_pairs = _mm512_loadu_si512(y + i);
        __m512 gw[2] = {bf16_even_avx512(g_pairs), bf16_odd_avx512(g_pairs)};
        __m512 yw[2] = {bf16_even_avx512(y_pairs), bf16_odd_avx512(y_pairs)}, p[2], d[2];
        __mmask16 lanes[2], nan = 0;
        for (int h = 0; h < 2; h++) {
            d[h] = _mm512_fnmadd_ps(yw[h], yw[h], tanh_form ? one : yw[h]);
            p[h] = _mm512_mul_ps(gw[h], d[h]);
            nan |= _mm512_cmp_ps_mask(p[h], p[h], _CMP_UNORD_Q);
        }
        if (nan) { /* rare: from_output_avx512's NaN rules, and rounding's */
            for (int h = 0; h < 2; h++) {
                p[h] = from_output_avx512(gw[h], yw[h], tanh_form, &d[h]);
                lanes[h] = bf16_tie_lanes_avx512(_mm512_castps_si512(p[h]), window);
            }
            _mm512_storeu_si512(dst + i, bf16_pack_rounded_avx512(p[0], p[1], 0));
        } else {
            for (int h = 0; h < 2; h++) lanes[h] = bf16_tie_lanes_number_avx512(_mm512_castps_si512(p[h]), window);
            _mm512_storeu_si512(dst + i, bf16_pack_rounded_avx512(p[0], p[1], 1));
        }
        for (int h = 0; h < 2; h++)
            if (lanes[h]) lanes[h] &= ~exact_from_output_avx512(gw[h], yw[h], tanh_form ? one : yw[h], d[h], p[h]);
        if (lanes[0] | lanes[1]) FA_MARK_TIES_(ties, i, interleave_lanes(lanes[0], lanes[1])), any = 1;
    }
    for (; i + 16 <= n; i += 16) {
        __m512 gw = bf16_lanes_avx512(g + i), yw = bf16_lanes_avx512(y + i), d;
        __m512 p = from_output_avx512(gw, yw, tanh_form, &d);
        _mm256_storeu_si256((__m256i *)(dst + i), bf16_round_zmm(_mm512_castps_si512(p)));
        __mmask16 lanes = bf16_tie_lanes_avx512(_mm512_castps_si512(p), window);
        if (lanes) lanes &= ~exact_from_output_avx512(gw, yw, tanh_form ? _mm512_set1_ps(1.0f) : yw, d, p);
        if (lanes) FA_MARK_TIES_(ties, i, lanes), any = 1;
    }
    for (; i < n; i++) any |= narrow_one_bf16(from_output_one(fa_bf16_to_float(g[i]), fa_bf16_to_float(y[i]), tanh_form), dst, i, ties, window);
    return any;
}

FA_FROM_OUTPUT_SPECIALISED_(from_output_f16_avx512, FA_AVX512_)
FA_FROM_OUTPUT_SPECIALISED_(from_output_bf16_avx512, FA_AVX512_)

/* hardswish in one pass, as hardswish_body_avx2 (the same three roundings,
 * brackets, marks and settling), 16 lanes a vector */
FA_AVX512_ static inline __m512 hardswish_select_avx512(__m512 a, __m512 x, int backward, __m512 one) {
    __m512 s = _mm512_fmadd_ps(x, _mm512_set1_ps(backward ? 2.0f : 1.0f), _mm512_set1_ps(3.0f));
    __m512 inside = _mm512_mul_ps(a, _mm512_mul_ps(s, _mm512_set1_ps((float)(1.0 / 6))));
    __mmask16 below_three = _mm512_cmp_ps_mask(x, _mm512_set1_ps(3.0f), _CMP_NGE_UQ);  /* x < 3 or NaN */
    __mmask16 above_minus = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-3.0f), _CMP_NLE_UQ); /* x > -3 or NaN */
    if (!backward)
        return _mm512_mask_mov_ps(_mm512_set1_ps(-0.0f), above_minus, _mm512_mask_mov_ps(x, below_three, inside));
    inside = _mm512_add_ps(inside, _mm512_setzero_ps()); /* -0 + 0 = +0 */
    __m512 y = _mm512_maskz_mov_ps(above_minus, _mm512_mask_mov_ps(_mm512_mul_ps(a, one), below_three, inside));
    return _mm512_mask_add_ps(y, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x, _mm512_setzero_ps());
}
FA_AVX512_ FA_INLINE_ALWAYS_ static __mmask16 hardswish_vector_avx512(const uint16_t *g, const uint16_t *x, uint16_t *to,
                                                                     uint32_t window, int bf16, int backward,
                                                                     __m512 one) {
    __m512 xw = bf16 ? bf16_lanes_avx512(x) : _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)x));
    __m512 a = !backward ? xw : bf16 ? bf16_lanes_avx512(g) : _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)g));
    __m512 y = hardswish_select_avx512(a, xw, backward, one);
    if (!bf16) { /* y rounded; the lanes whose bracket rounds apart */
        __m256i lo = _mm512_cvtps_ph(_mm512_mul_ps(y, _mm512_set1_ps(1 - 0x1p-20f)), _MM_FROUND_TO_NEAREST_INT);
        __m256i hi = _mm512_cvtps_ph(_mm512_mul_ps(y, _mm512_set1_ps(1 + 0x1p-20f)), _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_si256((__m256i *)to, lo);
        __m512i apart = _mm512_cvtepu16_epi32(_mm256_xor_si256(lo, hi));
        return _mm512_test_epi32_mask(apart, apart);
    }
    /* rounded half up; the lanes within `window` ULPs of a tie (NaNs here
     * have their low 16 bits zero: widened, or the default NaN) */
    __m512i bits = _mm512_castps_si512(y);
    __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x8000)), 16);
    _mm256_storeu_si256((__m256i *)to, _mm512_cvtepi32_epi16(rounded));
    __m512i from_tie = _mm512_sub_epi32(_mm512_and_si512(bits, _mm512_set1_epi32(0xffff)),
                                        _mm512_set1_epi32((int)(0x8000 - window)));
    return _mm512_cmple_epu32_mask(from_tie, _mm512_set1_epi32((int)(2 * window)));
}
FA_AVX512_ FA_INLINE_ALWAYS_ static int hardswish_body_avx512(const uint16_t *g, const uint16_t *x, uint16_t *dst,
                                                              ptrdiff_t n, uint64_t *ties, uint32_t window, int bf16,
                                                              int backward) {
    const __m512 one = _mm512_set1_ps(fa_quieting_one);
#define FA_HARDSWISH_VECTOR_AVX512_(g_at, x_at, to) \
    (uint32_t)hardswish_vector_avx512(g_at, x_at, to, window, bf16, backward, one)
    FA_HARDSWISH_LOOP_(16, FA_HARDSWISH_VECTOR_AVX512_)
#undef FA_HARDSWISH_VECTOR_AVX512_
}
/* g NULL: the forward */
FA_AVX512_ static int hardswish_f16_avx512(const uint16_t *g, const uint16_t *x, uint16_t *dst, ptrdiff_t n,
                                          uint64_t *ties, uint32_t window) {
    return g ? hardswish_body_avx512(g, x, dst, n, ties, window, 0, 1) : hardswish_body_avx512(g, x, dst, n, ties, window, 0, 0);
}
FA_AVX512_ static int hardswish_bf16_avx512(const uint16_t *g, const uint16_t *x, uint16_t *dst, ptrdiff_t n,
                                           uint64_t *ties, uint32_t window) {
    return g ? hardswish_body_avx512(g, x, dst, n, ties, window, 1, 1) : hardswish_body_avx512(g, x, dst, n, ties, window, 1, 0);
}

static const fa_convert16_set avx512 = {
    .f16 = {
        .widen = widen_f16_avx512,
        .narrow = narrow_f16_avx512,
        .round = round_f16_avx512,
        .scale_narrow = scale_narrow_f16_avx512,
        .from_output_narrow = from_output_f16_avx512,
        .hardswish_narrow = hardswish_f16_avx512,
    },
    .bf16 = {
        .widen = widen_bf16_zmm_avx512,
        .narrow = narrow_bf16_zmm_avx512,
        .round = round_bf16_zmm_avx512,
        .scale_narrow = scale_narrow_bf16_avx512,
        .from_output_narrow = from_output_bf16_avx512,
        .hardswish_narrow = hardswish_bf16_avx512,
    },
    .relu_fwd = relu_fwd_avx512,
    .relu_bwd = relu_bwd_lanes_avx2,
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
