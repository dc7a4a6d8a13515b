/* relu6, hardtanh, hardsigmoid and leaky_relu on contiguous 16-bit arrays,
 * one pass per ISA (see piecewise16.h). The block path of loops.c widens a
 * block into a float32 buffer, runs the float32 kernel over it and rounds it
 * back: three passes through memory for a function that is a compare, a
 * select and at most a product. Here each vector takes all three in registers. The results are the block
 * path's bits (the tests compare the two on every 16-bit input):
 *  - the selects return an input, zero or a limit, exactly;
 *  - hardsigmoid's t/6 (t = x + 3, or g) is q = t c corrected once by the
 *    exact remainder t - 6q (c = 1/6 rounded; q itself where that is zero,
 *    which keeps -0): within a float32 ULP of t/6 and exactly t/6 where that
 *    is a float32. t/6 is either a 16-bit tie itself or farther from one
 *    than 2^-21 of it (loops.c), so it rounds to the 16-bit type as the
 *    correctly rounded quotient does. (x + 3 is inexact in float32 only for
 *    |x| below about 2^-12, where the result is 0.5 + x/6, far from a tie.)
 *  - leaky_relu's product p = x s (or g s) is rounded as it is, and the
 *    lanes that rounding may get wrong are redone in float64 (exact: at most
 *    11 + 24 bits): a 16-bit tie is a float32, so p rounds as x s does
 *    unless p lies on (float16) or within 2 float32 ULPs of (bfloat16) a
 *    tie; and bfloat16's products below 2^-100, where float32 is coarse or
 *    flushed (store_product_avx2; AVX-512 likewise for bfloat16, while its
 *    float16 loops round the product to odd first: product_to_odd_avx512).
 * NaN: a NaN x gives x, made quiet by the rounding to 16 bits, as there. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/fastact.h"
#include "simd/fma_exact.h"
#include "half/half.h"
#include "half/piecewise16.h"

#if defined(FA_HAVE_X86_KERNELS) && (defined(__x86_64__) || defined(_M_X64))
#include <immintrin.h>

#include "half/bf16_pairs_avx512.h"
#include "half/half_ties_x86.h"
#include "half/stream16_avx2.h"
#define FA_X86_PIECEWISE16 1
#endif

#define FA_SIXTH_ ((float)(1.0 / 6))

/* ---- portable: element by element ---- */

static float widen_portable(uint16_t h, int bf16) {
    return bf16 ? fa_bf16_to_float(h) : fa_half_to_float(h);
}
static uint16_t narrow_portable(float v, int bf16) {
    return bf16 ? fa_float_to_bf16(v) : fa_float_to_half(v);
}
/* q corrected where its remainder is nonzero: not for t = -0 (the sum would
 * be +0) nor an infinite t (NaN) */
static float sixth_portable(float t) {
    float q = t * FA_SIXTH_;
    float remainder = fa_fmaf(-q, 6.0f, t);
    return remainder < 0 || remainder > 0 ? fa_fmaf(remainder, FA_SIXTH_, q) : q;
}
static float pass_between_portable(float g, float x, float lo, float hi) {
    return x != x ? x + 0.0f : x > lo && x < hi ? g : 0.0f;
}

static void clamp_portable(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16, const float *limits) {
    for (ptrdiff_t i = 0; i < n; i++) {
        float x = widen_portable(in[0][i], bf16);
        out[i] = narrow_portable(x < limits[0] ? limits[0] : x > limits[1] ? limits[1] : x, bf16);
    }
}
static void pass_between_16_portable(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                     const float *limits) {
    for (ptrdiff_t i = 0; i < n; i++) {
        float g = widen_portable(in[0][i], bf16), x = widen_portable(in[1][i], bf16);
        out[i] = narrow_portable(pass_between_portable(g, x, limits[0], limits[1]), bf16);
    }
}
static void hardsigmoid_portable(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                 const float *limits) {
    (void)limits;
    for (ptrdiff_t i = 0; i < n; i++) {
        float x = widen_portable(in[0][i], bf16);
        float y = x != x ? x : x > -3.0f ? (x < 3.0f ? sixth_portable(x + 3.0f) : 1.0f) : 0.0f;
        out[i] = narrow_portable(y, bf16);
    }
}
static void hardsigmoid_bwd_portable(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                     const float *limits) {
    (void)limits;
    for (ptrdiff_t i = 0; i < n; i++) {
        float g = widen_portable(in[0][i], bf16), x = widen_portable(in[1][i], bf16);
        out[i] = narrow_portable(pass_between_portable(sixth_portable(g), x, -3.0f, 3.0f), bf16);
    }
}

/* v s rounded once to the 16-bit type: exact in float64 (at most 11 + 24 bits) */
static uint16_t scaled_portable(float v, float s, int bf16) {
    double product = (double)v * s;
    return bf16 ? fa_double_to_bf16(product) : fa_double_to_half(product);
}
static void leaky_relu_portable(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16, const float *limits) {
    for (ptrdiff_t i = 0; i < n; i++) {
        float x = widen_portable(in[0][i], bf16);
        out[i] = x != x || x > 0 ? narrow_portable(x, bf16) : scaled_portable(x, limits[0], bf16);
    }
}
static void leaky_relu_bwd_portable(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                    const float *limits) {
    for (ptrdiff_t i = 0; i < n; i++) {
        float g = widen_portable(in[0][i], bf16), x = widen_portable(in[1][i], bf16);
        out[i] = x != x ? narrow_portable(x + 0.0f, bf16)
                 : x > 0 ? narrow_portable(g, bf16)
                         : scaled_portable(g, limits[0], bf16);
    }
}

static const fa_piecewise16_set portable = {
    .clamp = clamp_portable,
    .pass_between = pass_between_16_portable,
    .hardsigmoid = hardsigmoid_portable,
    .hardsigmoid_bwd = hardsigmoid_bwd_portable,
    .leaky_relu = leaky_relu_portable,
    .leaky_relu_bwd = leaky_relu_bwd_portable,
};

#if defined(FA_X86_PIECEWISE16)
/* Each body is compiled twice, for float16 and for bfloat16 as a constant:
 * with the type a run-time flag the loops kept both conversions' branches
 * and reloaded their constants (bfloat16 leaky_relu ran at half float16's
 * speed). */
#define FA_BODY_ inline __attribute__((always_inline))
#define FA_BF16_CONSTANT_(name, attr)                                                               \
    attr static void name(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16, const float *limits) { \
        if (bf16) body_##name(in, out, n, 1, limits);                                            \
        else body_##name(in, out, n, 0, limits);                                                 \
    }

/* Full vectors in place; the last few elements through a zeroed buffer of
 * one vector (a masked 16-bit load needs AVX512BW, which "avx512" does not
 * assume). W: lanes; NIN: inputs; BODY(in, out): one vector. */
#define FA_PIECEWISE16_LOOP_(W, NIN, BODY)                                     \
    ptrdiff_t i = 0;                                                           \
    for (; i + W <= n; i += W) {                                               \
        const uint16_t *at[2] = {in[0] + i, NIN > 1 ? in[1] + i : NULL};       \
        BODY(at, out + i);                                                     \
    }                                                                          \
    if (i < n) {                                                               \
        uint16_t rest[2][W], result[W];                                        \
        memset(rest, 0, sizeof rest);                                          \
        for (int k = 0; k < NIN; k++) memcpy(rest[k], in[k] + i, (size_t)(n - i) * 2); \
        const uint16_t *at[2] = {rest[0], rest[1]};                            \
        BODY(at, result);                                                      \
        memcpy(out + i, result, (size_t)(n - i) * 2);                          \
    }

/* ---- AVX2 + F16C ---- */
#define FA_AVX2_ __attribute__((target("avx2,fma,f16c")))

FA_AVX2_ static inline __m256 load_avx2(const uint16_t *p, int bf16) {
    __m128i h = _mm_loadu_si128((const __m128i *)p);
    return bf16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)) : _mm256_cvtph_ps(h);
}
/* rounded to nearest even; a NaN made quiet (bfloat16: as convert16.c) */
FA_AVX2_ static inline void store_avx2(uint16_t *p, __m256 v, int bf16) {
    __m128i h;
    if (bf16) {
        __m256i x = _mm256_castps_si256(v);
        __m256i odd = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
        __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd)), 16);
        __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
        __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
        __m256i bits = _mm256_blendv_epi8(rounded, quiet, nan);
        h = _mm_packus_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
    }
    else
        h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128((__m128i *)p, h);
}
/* store_avx2 for results whose NaNs are quiet with their low 16 bits zero
 * (widened, then made quiet by arithmetic): bfloat16's rounding to nearest
 * even cannot carry out of such a NaN's low bits, so it needs no NaN case */
FA_AVX2_ static inline void store_quiet_avx2(uint16_t *p, __m256 v, int bf16) {
    if (!bf16) {
        store_avx2(p, v, bf16);
        return;
    }
    __m256i bits = _mm256_castps_si256(v);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd)), 16);
    __m256i packed = _mm256_packus_epi32(rounded, _mm256_setzero_si256());
    _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08)));
}
FA_AVX2_ static inline __m256 sixth_avx2(__m256 t) {
    const __m256 c = _mm256_set1_ps(FA_SIXTH_);
    __m256 q = _mm256_mul_ps(t, c);
    __m256 remainder = _mm256_fnmadd_ps(q, _mm256_set1_ps(6.0f), t);
    return _mm256_blendv_ps(q, _mm256_fmadd_ps(remainder, c, q), _mm256_cmp_ps(remainder, _mm256_setzero_ps(), _CMP_NEQ_OQ));
}
FA_AVX2_ static inline __m256 pass_between_avx2(__m256 g, __m256 x, __m256 lo, __m256 hi) {
    __m256 inside = _mm256_and_ps(_mm256_cmp_ps(x, lo, _CMP_GT_OQ), _mm256_cmp_ps(x, hi, _CMP_LT_OQ));
    __m256 y = _mm256_and_ps(inside, g);
    return _mm256_blendv_ps(y, _mm256_add_ps(x, _mm256_setzero_ps()), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/* relu6 and hardtanh on the 16-bit values themselves, 16 lanes at a time:
 * their results are x, g, 0 or a limit, so only the comparisons need
 * values, and the integer key sign(h)·(h & 0x7fff) orders 16-bit floats as
 * their values (±0 equal). A float32 limit L that is no 16-bit value falls
 * between two that are, so x < L is key(x) < key(L rounded up), x > L is
 * key(x) > key(L rounded down). */
typedef struct {
    int16_t lo_up, lo_down, hi_up, hi_down; /* the limits' keys, rounded either way */
    uint16_t lo, hi;                        /* the limits rounded to nearest */
} limits16;
static int16_t order_key(uint16_t h) {
    int16_t magnitude = (int16_t)(h & 0x7fff);
    return h & 0x8000 ? (int16_t)-magnitude : magnitude;
}
/* 0 for a NaN limit, which the float32 loops handle */
static int limits16_for(const float *limits, int bf16, limits16 *keys) {
    if (limits[0] != limits[0] || limits[1] != limits[1]) return 0;
    int16_t up[2], down[2];
    uint16_t nearest[2];
    for (int k = 0; k < 2; k++) {
        nearest[k] = narrow_portable(limits[k], bf16);
        float value = widen_portable(nearest[k], bf16);
        int16_t key = order_key(nearest[k]);
        up[k] = (int16_t)(key + (value < limits[k])), down[k] = (int16_t)(key - (value > limits[k]));
    }
    *keys = (limits16){.lo_up = up[0], .lo_down = down[0], .hi_up = up[1], .hi_down = down[1],
                       .lo = nearest[0], .hi = nearest[1]};
    return 1;
}
/* the caller's denormals-are-zero: the float32 compares then take a
 * subnormal input or limit as zero, the keys would not (the float32 loops
 * below honour it) */
static int denormals_are_zero(void) {
    return (_mm_getcsr() & 0x0040u) != 0;
}
FA_AVX2_ static inline __m256i order_key_avx2(__m256i h) {
    return _mm256_sign_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)), h);
}
/* a NaN's lanes (all ones), and the NaN made quiet as the rounding makes it */
FA_AVX2_ static inline __m256i nan16_avx2(__m256i h, int bf16, __m256i *quieted) {
    *quieted = _mm256_or_si256(h, _mm256_set1_epi16(bf16 ? 0x40 : 0x200));
    return _mm256_cmpgt_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)), _mm256_set1_epi16(bf16 ? 0x7f80 : 0x7c00));
}
FA_AVX2_ static FA_BODY_ void body_clamp16_avx2(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                                const limits16 *keys) {
    const __m256i lo = _mm256_set1_epi16((short)keys->lo), hi = _mm256_set1_epi16((short)keys->hi);
    const __m256i lo_up = _mm256_set1_epi16(keys->lo_up), hi_down = _mm256_set1_epi16(keys->hi_down);
#define FA_CLAMP16_AVX2_(at, to, store)                                                         \
    {                                                                                           \
        __m256i x = _mm256_loadu_si256((const __m256i *)at[0]), key = order_key_avx2(x), quiet;  \
        __m256i nan = nan16_avx2(x, bf16, &quiet);                                              \
        __m256i y = _mm256_blendv_epi8(x, hi, _mm256_cmpgt_epi16(key, hi_down));                \
        y = _mm256_blendv_epi8(y, lo, _mm256_cmpgt_epi16(lo_up, key));                          \
        store((__m256i *)(to), _mm256_blendv_epi8(y, quiet, nan));                              \
    }
    FA_LOOP16_STREAMED_(1, FA_CLAMP16_AVX2_)
#undef FA_CLAMP16_AVX2_
}
/* g where lo < x < hi, +0 elsewhere, x's NaN (quiet) where x is NaN */
FA_AVX2_ static FA_BODY_ void body_pass_between16_lanes_avx2(const uint16_t *const *in, uint16_t *out, ptrdiff_t n,
                                                             int bf16, const limits16 *keys) {
    const __m256i lo_down = _mm256_set1_epi16(keys->lo_down), hi_up = _mm256_set1_epi16(keys->hi_up);
#define FA_BETWEEN16_AVX2_(at, to, store)                                                       \
    {                                                                                           \
        __m256i g = _mm256_loadu_si256((const __m256i *)at[0]), g_quiet;                        \
        __m256i x = _mm256_loadu_si256((const __m256i *)at[1]), key = order_key_avx2(x), x_quiet; \
        __m256i g_nan = nan16_avx2(g, bf16, &g_quiet), x_nan = nan16_avx2(x, bf16, &x_quiet);   \
        __m256i inside = _mm256_and_si256(_mm256_cmpgt_epi16(key, lo_down), _mm256_cmpgt_epi16(hi_up, key)); \
        __m256i y = _mm256_and_si256(inside, _mm256_blendv_epi8(g, g_quiet, g_nan));            \
        store((__m256i *)(to), _mm256_blendv_epi8(y, x_quiet, x_nan));                          \
    }
    FA_LOOP16_STREAMED_(2, FA_BETWEEN16_AVX2_)
#undef FA_BETWEEN16_AVX2_
}
FA_AVX2_ static FA_BODY_ void body_clamp_avx2(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16, const float *limits) {
    limits16 keys;
    if (!denormals_are_zero() && limits16_for(limits, bf16, &keys)) {
        body_clamp16_avx2(in, out, n, bf16, &keys);
        return;
    }
    const __m256 lo = _mm256_set1_ps(limits[0]), hi = _mm256_set1_ps(limits[1]);
#define FA_CLAMP_AVX2_(at, to)                                                               \
    {                                                                                        \
        __m256 x = load_avx2(at[0], bf16);                                                   \
        __m256 y = _mm256_blendv_ps(x, hi, _mm256_cmp_ps(x, hi, _CMP_GT_OQ));                \
        store_avx2(to, _mm256_blendv_ps(y, lo, _mm256_cmp_ps(x, lo, _CMP_LT_OQ)), bf16);     \
    }
    FA_PIECEWISE16_LOOP_(8, 1, FA_CLAMP_AVX2_)
#undef FA_CLAMP_AVX2_
}
FA_AVX2_ static FA_BODY_ void body_pass_between16_avx2(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                          const float *limits) {
    limits16 keys;
    if (!denormals_are_zero() && limits16_for(limits, bf16, &keys)) {
        body_pass_between16_lanes_avx2(in, out, n, bf16, &keys);
        return;
    }
    const __m256 lo = _mm256_set1_ps(limits[0]), hi = _mm256_set1_ps(limits[1]);
#define FA_BETWEEN_AVX2_(at, to) \
    store_avx2(to, pass_between_avx2(load_avx2(at[0], bf16), load_avx2(at[1], bf16), lo, hi), bf16);
    FA_PIECEWISE16_LOOP_(8, 2, FA_BETWEEN_AVX2_)
#undef FA_BETWEEN_AVX2_
}
FA_AVX2_ static FA_BODY_ void body_hardsigmoid_avx2(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                      const float *limits) {
    (void)limits;
    const __m256 three = _mm256_set1_ps(3.0f), minus_three = _mm256_set1_ps(-3.0f);
#define FA_HARDSIGMOID_AVX2_(at, to)                                                              \
    {                                                                                             \
        __m256 x = load_avx2(at[0], bf16);                                                        \
        __m256 t = sixth_avx2(_mm256_add_ps(x, three));                                           \
        __m256 y = _mm256_blendv_ps(_mm256_set1_ps(1.0f), t, _mm256_cmp_ps(x, three, _CMP_LT_OQ)); \
        y = _mm256_and_ps(y, _mm256_cmp_ps(x, minus_three, _CMP_GT_OQ));                         \
        __m256 quieted = bf16 ? _mm256_add_ps(x, _mm256_setzero_ps()) : x; /* signaling made quiet */ \
        store_quiet_avx2(to, _mm256_blendv_ps(y, quieted, _mm256_cmp_ps(x, x, _CMP_UNORD_Q)), bf16); \
    }
    FA_PIECEWISE16_LOOP_(8, 1, FA_HARDSIGMOID_AVX2_)
#undef FA_HARDSIGMOID_AVX2_
}
FA_AVX2_ static FA_BODY_ void body_hardsigmoid_bwd_avx2(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                          const float *limits) {
    (void)limits;
    const __m256 lo = _mm256_set1_ps(-3.0f), hi = _mm256_set1_ps(3.0f);
#define FA_HARDSIGMOID_BWD_AVX2_(at, to) \
    store_quiet_avx2(to, pass_between_avx2(sixth_avx2(load_avx2(at[0], bf16)), load_avx2(at[1], bf16), lo, hi), bf16);
    FA_PIECEWISE16_LOOP_(8, 2, FA_HARDSIGMOID_BWD_AVX2_)
#undef FA_HARDSIGMOID_BWD_AVX2_
}

/* redo the given lanes of one vector in float64: bfloat16's tiny products,
 * and AVX2's lanes near a tie */
static void redo_tiny(uint16_t *to, const float *v, float s, int lanes, int bf16) {
    for (int k = 0; lanes; k++, lanes >>= 1)
        if (lanes & 1) to[k] = scaled_portable(v[k], s, bf16);
}
/* AVX2's leaky_relu rounds the product p = RN(v s) as it is (no round to
 * odd, which cost more than the rest of the loop). A 16-bit tie t is a
 * float32, so RN keeps v s and p on the same side of it unless p = t:
 * float16 rounds p as v s wherever p is no tie (half_ties_x86.h). p is
 * within 2^-24 of v s, so where its bits are more than 2 ULPs from a
 * bfloat16 tie, p rounds as v s does there too. The other lanes (over every
 * negative 16-bit x: 0.13% of float16's at slope 0.01, 0.65% at 0.1 and
 * 0.3, 3% at 0.5, all of them below 2^-14, and 6% at 0.7; 0.02-0.4% of
 * bfloat16's) and
 * bfloat16's products below 2^-100 (a coarse float32 ULP, or flushed) are
 * redone in float64 (scaled_portable). bfloat16 rounds half up, its ties
 * being redone. Returns the lanes to redo. */
FA_AVX2_ static inline int store_product_avx2(uint16_t *to, __m256 y, int bf16) {
    if (!bf16) {
        _mm_storeu_si128((__m128i *)to, _mm256_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT));
        return _mm256_movemask_ps(_mm256_castsi256_ps(half_exact_tie_lanes_avx2(y)));
    }
    /* NaNs here have their low 16 bits zero (widened, or quieted by arithmetic) */
    __m256i bits = _mm256_castps_si256(y);
    __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x8000)), 16);
    __m256i packed = _mm256_packus_epi32(rounded, _mm256_setzero_si256());
    _mm_storeu_si128((__m128i *)to, _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08)));
    __m256i from_tie = _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0xffff)), _mm256_set1_epi32(0x8000 - 2));
    __m256i width = _mm256_set1_epi32(4);
    return _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_max_epu32(from_tie, width), width)));
}
/* bfloat16's lanes with 0 < |v| < tiny_v, tiny_v = 2^-100/|s| (products below 2^-100) */
FA_AVX2_ static inline int tiny_lanes_avx2(__m256 v, __m256 tiny_v) {
    __m256 magnitude = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
    return _mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(magnitude, tiny_v, _CMP_LT_OQ),
                                            _mm256_cmp_ps(magnitude, _mm256_setzero_ps(), _CMP_GT_OQ)));
}
FA_AVX2_ static void redo_lanes(uint16_t *to, __m256 v, float s, int lanes, int bf16) {
    float lanes_v[8];
    _mm256_storeu_ps(lanes_v, v);
    redo_tiny(to, lanes_v, s, lanes, bf16);
}
FA_AVX2_ static FA_BODY_ void body_leaky_relu_avx2(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                     const float *limits) {
    /* a NaN slope (the ufuncs take one): x s would be either NaN when x is
     * one too, and its payload may not survive the rounding half up */
    if (limits[0] != limits[0]) {
        leaky_relu_portable(in, out, n, bf16, limits);
        return;
    }
    const __m256 s = _mm256_set1_ps(limits[0]), zero = _mm256_setzero_ps();
    const __m256 tiny_x = _mm256_set1_ps(limits[0] == 0 ? 0.0f : (float)fmin(0x1p-100 / fabs(limits[0]), 0x1p127));
    /* x where x > 0, else x s: a NaN x gives x s, x's NaN made quiet */
#define FA_LEAKY_VECTOR_AVX2_(from, to)                                                              \
    {                                                                                                \
        __m256 x = load_avx2(from, bf16), positive = _mm256_cmp_ps(x, zero, _CMP_GT_OQ);             \
        int redo = store_product_avx2(to, _mm256_blendv_ps(_mm256_mul_ps(x, s), x, positive), bf16); \
        if (bf16) redo |= tiny_lanes_avx2(x, tiny_x) & ~_mm256_movemask_ps(positive);               \
        if (redo) redo_lanes(to, x, limits[0], redo, bf16);                                         \
    }
    /* two vectors a step: the loop's own instructions weighed on one */
#define FA_LEAKY_AVX2_(at, to) FA_LEAKY_VECTOR_AVX2_(at[0], to) FA_LEAKY_VECTOR_AVX2_(at[0] + 8, (to) + 8)
    FA_PIECEWISE16_LOOP_(16, 1, FA_LEAKY_AVX2_)
#undef FA_LEAKY_AVX2_
#undef FA_LEAKY_VECTOR_AVX2_
}
FA_AVX2_ static FA_BODY_ void body_leaky_relu_bwd_avx2(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                         const float *limits) {
    if (limits[0] != limits[0]) { /* as the forward */
        leaky_relu_bwd_portable(in, out, n, bf16, limits);
        return;
    }
    const __m256 s = _mm256_set1_ps(limits[0]), zero = _mm256_setzero_ps(), one = _mm256_set1_ps(fa_quieting_one);
    const __m256 tiny_g = _mm256_set1_ps(limits[0] == 0 ? 0.0f : (float)fmin(0x1p-100 / fabs(limits[0]), 0x1p127));
#define FA_LEAKY_BWD_VECTOR_AVX2_(g_at, x_at, to)                                                    \
    {                                                                                                \
        __m256 g = load_avx2(g_at, bf16), x = load_avx2(x_at, bf16);                                 \
        __m256 positive = _mm256_cmp_ps(x, zero, _CMP_GT_OQ);                                        \
        __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);                                              \
        __m256 kept = bf16 ? _mm256_mul_ps(g, one) : g; /* a signaling NaN quieted, -0 kept */       \
        __m256 y = _mm256_blendv_ps(_mm256_blendv_ps(_mm256_mul_ps(g, s), kept, positive), _mm256_add_ps(x, zero), nan); \
        int redo = store_product_avx2(to, y, bf16);                                               \
        if (bf16) redo |= tiny_lanes_avx2(g, tiny_g) & ~_mm256_movemask_ps(_mm256_or_ps(positive, nan)); \
        if (redo) redo_lanes(to, g, limits[0], redo, bf16);                                         \
    }
#define FA_LEAKY_BWD_AVX2_(at, to) \
    FA_LEAKY_BWD_VECTOR_AVX2_(at[0], at[1], to) FA_LEAKY_BWD_VECTOR_AVX2_(at[0] + 8, at[1] + 8, (to) + 8)
    FA_PIECEWISE16_LOOP_(16, 2, FA_LEAKY_BWD_AVX2_)
#undef FA_LEAKY_BWD_AVX2_
#undef FA_LEAKY_BWD_VECTOR_AVX2_
}

FA_BF16_CONSTANT_(clamp_avx2, FA_AVX2_)
FA_BF16_CONSTANT_(pass_between16_avx2, FA_AVX2_)
FA_BF16_CONSTANT_(hardsigmoid_avx2, FA_AVX2_)
FA_BF16_CONSTANT_(hardsigmoid_bwd_avx2, FA_AVX2_)
FA_BF16_CONSTANT_(leaky_relu_avx2, FA_AVX2_)
FA_BF16_CONSTANT_(leaky_relu_bwd_avx2, FA_AVX2_)

static const fa_piecewise16_set avx2 = {
    .clamp = clamp_avx2,
    .pass_between = pass_between16_avx2,
    .hardsigmoid = hardsigmoid_avx2,
    .hardsigmoid_bwd = hardsigmoid_bwd_avx2,
    .leaky_relu = leaky_relu_avx2,
    .leaky_relu_bwd = leaky_relu_bwd_avx2,
};

/* ---- AVX-512F ---- */
#define FA_AVX512_ __attribute__((target("avx512f,avx2,fma,f16c")))

FA_AVX512_ static inline __m512 load_avx512(const uint16_t *p, int bf16) {
    __m256i h = _mm256_loadu_si256((const __m256i *)p);
    return bf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)) : _mm512_cvtph_ps(h);
}
FA_AVX512_ static inline void store_avx512(uint16_t *p, __m512 v, int bf16) {
    __m256i h;
    if (bf16) {
        __m512i x = _mm512_castps_si512(v);
        __m512i odd = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
        __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(x, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), odd)), 16);
        __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
        rounded = _mm512_mask_or_epi32(rounded, nan, _mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
        h = _mm512_cvtepi32_epi16(rounded);
    }
    else
        h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256((__m256i *)p, h);
}
FA_AVX512_ static inline __m512 sixth_avx512(__m512 t) {
    const __m512 c = _mm512_set1_ps(FA_SIXTH_);
    __m512 q = _mm512_mul_ps(t, c);
    __m512 remainder = _mm512_fnmadd_ps(q, _mm512_set1_ps(6.0f), t);
    return _mm512_mask_mov_ps(q, _mm512_cmp_ps_mask(remainder, _mm512_setzero_ps(), _CMP_NEQ_OQ),
                              _mm512_fmadd_ps(remainder, c, q));
}
FA_AVX512_ static inline __m512 pass_between_avx512(__m512 g, __m512 x, __m512 lo, __m512 hi) {
    __mmask16 inside = _mm512_cmp_ps_mask(x, lo, _CMP_GT_OQ) & _mm512_cmp_ps_mask(x, hi, _CMP_LT_OQ);
    __m512 y = _mm512_maskz_mov_ps(inside, g);
    return _mm512_mask_add_ps(y, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x, _mm512_setzero_ps());
}

FA_AVX512_ static FA_BODY_ void body_clamp_avx512(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                   const float *limits) {
    /* AVX2's loop on the 16-bit values: AVX-512F has no 16-bit compares,
     * and widening to compare took twice as long (Zen 4, bfloat16) */
    limits16 keys;
    if (!denormals_are_zero() && limits16_for(limits, bf16, &keys)) {
        body_clamp16_avx2(in, out, n, bf16, &keys);
        return;
    }
    const __m512 lo = _mm512_set1_ps(limits[0]), hi = _mm512_set1_ps(limits[1]);
#define FA_CLAMP_AVX512_(at, to)                                                        \
    {                                                                                   \
        __m512 x = load_avx512(at[0], bf16);                                            \
        __m512 y = _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ), hi);    \
        store_avx512(to, _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ), lo), bf16); \
    }
    FA_PIECEWISE16_LOOP_(16, 1, FA_CLAMP_AVX512_)
#undef FA_CLAMP_AVX512_
}
FA_AVX512_ static FA_BODY_ void body_pass_between16_avx512(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                              const float *limits) {
    limits16 keys; /* as the clamp */
    if (!denormals_are_zero() && limits16_for(limits, bf16, &keys)) {
        body_pass_between16_lanes_avx2(in, out, n, bf16, &keys);
        return;
    }
    const __m512 lo = _mm512_set1_ps(limits[0]), hi = _mm512_set1_ps(limits[1]);
#define FA_BETWEEN_AVX512_(at, to) \
    store_avx512(to, pass_between_avx512(load_avx512(at[0], bf16), load_avx512(at[1], bf16), lo, hi), bf16);
    FA_PIECEWISE16_LOOP_(16, 2, FA_BETWEEN_AVX512_)
#undef FA_BETWEEN_AVX512_
}
/* hardsigmoid of 16 float32 lanes */
FA_AVX512_ static inline __m512 hardsigmoid_lanes_avx512(__m512 x) {
    const __m512 three = _mm512_set1_ps(3.0f);
    __m512 t = sixth_avx512(_mm512_add_ps(x, three));
    __m512 y = _mm512_mask_mov_ps(_mm512_set1_ps(1.0f), _mm512_cmp_ps_mask(x, three, _CMP_LT_OQ), t);
    y = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-3.0f), _CMP_GT_OQ), y);
    return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}
/* bfloat16 32 elements a vector (bf16_pairs_avx512.h): 1.05-1.22x the
 * widening loop on Zen 4 */
FA_AVX512_ static FA_BODY_ void body_hardsigmoid_avx512(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                          const float *limits) {
    (void)limits;
#define FA_HARDSIGMOID_AVX512_(at, to) store_avx512(to, hardsigmoid_lanes_avx512(load_avx512(at[0], bf16)), bf16);
#define FA_HARDSIGMOID_BF16_AVX512_(at, to)                                                           \
    {                                                                                                 \
        __m512i x = _mm512_loadu_si512(at[0]);                                                        \
        _mm512_storeu_si512(to, bf16_pack_rounded_avx512(hardsigmoid_lanes_avx512(bf16_even_avx512(x)), \
                                                         hardsigmoid_lanes_avx512(bf16_odd_avx512(x)), 0)); \
    }
    if (bf16) {
        FA_PIECEWISE16_LOOP_(32, 1, FA_HARDSIGMOID_BF16_AVX512_)
    } else {
        FA_PIECEWISE16_LOOP_(16, 1, FA_HARDSIGMOID_AVX512_)
    }
#undef FA_HARDSIGMOID_BF16_AVX512_
#undef FA_HARDSIGMOID_AVX512_
}
FA_AVX512_ static FA_BODY_ void body_hardsigmoid_bwd_avx512(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                              const float *limits) {
    (void)limits;
    const __m512 lo = _mm512_set1_ps(-3.0f), hi = _mm512_set1_ps(3.0f);
#define FA_HARDSIGMOID_BWD_AVX512_(at, to) \
    store_avx512(to, pass_between_avx512(sixth_avx512(load_avx512(at[0], bf16)), load_avx512(at[1], bf16), lo, hi), bf16);
#define FA_HARDSIGMOID_BWD_BF16_AVX512_(at, to)                                                              \
    {                                                                                                        \
        __m512i g = _mm512_loadu_si512(at[0]), x = _mm512_loadu_si512(at[1]);                                \
        __m512 even = pass_between_avx512(sixth_avx512(bf16_even_avx512(g)), bf16_even_avx512(x), lo, hi);   \
        __m512 odd = pass_between_avx512(sixth_avx512(bf16_odd_avx512(g)), bf16_odd_avx512(x), lo, hi);      \
        _mm512_storeu_si512(to, bf16_pack_rounded_avx512(even, odd, 0));                                     \
    }
    if (bf16) {
        FA_PIECEWISE16_LOOP_(32, 2, FA_HARDSIGMOID_BWD_BF16_AVX512_)
    } else {
        FA_PIECEWISE16_LOOP_(16, 2, FA_HARDSIGMOID_BWD_AVX512_)
    }
#undef FA_HARDSIGMOID_BWD_BF16_AVX512_
#undef FA_HARDSIGMOID_BWD_AVX512_
}

/* leaky_relu. bfloat16 as AVX2 computes it (store_product_avx2): the plain
 * product rounded, the lanes that rounding may get wrong redone in float64,
 * 32 elements a vector (the even ones widened by a shift, the odd ones by a
 * mask, the results put back the same way, no shuffles between). float16
 * rounds the product to odd first, by AVX-512's embedded rounding (the
 * float64 redo's tie scan cost as much as the rest of the loop). */
/* v s rounded to odd in float32: rounded toward zero, the last bit set
 * where the product is inexact (rounded up and down differ). Rounding that
 * to float16 is rounding v s once: float32 has more than two bits to spare,
 * and a product too small to be a normal float32 rounds to zero in float16
 * either way. NaN v: v's NaN, made quiet. Embedded rounding, no MXCSR
 * change: on Zen 4, 1.2x the loop that redid the ties in float64. */
FA_AVX512_ static inline __m512 product_to_odd_avx512(__m512 v, __m512 s) {
    __m512 toward_zero = _mm512_mul_round_ps(v, s, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m512 up = _mm512_mul_round_ps(v, s, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    __m512 down = _mm512_mul_round_ps(v, s, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512i bits = _mm512_castps_si512(toward_zero);
    return _mm512_castsi512_ps(_mm512_mask_or_epi32(bits, _mm512_cmp_ps_mask(up, down, _CMP_NEQ_OQ), bits,
                                                    _mm512_set1_epi32(1)));
}
/* lanes within 2 float32 ULPs of a bfloat16 tie, as store_product_avx2 */
FA_AVX512_ static inline __mmask16 bf16_near_tie_lanes_avx512(__m512 y) {
    __m512i low = _mm512_and_si512(_mm512_castps_si512(y), _mm512_set1_epi32(0xffff));
    return _mm512_cmple_epu32_mask(_mm512_sub_epi32(low, _mm512_set1_epi32(0x8000 - 2)), _mm512_set1_epi32(4));
}
/* lanes with 0 < |v| < tiny (bfloat16's products below 2^-100) */
FA_AVX512_ static inline __mmask16 tiny_lanes_avx512(__m512 v, __m512 tiny) {
    __m512 magnitude = _mm512_abs_ps(v);
    return _mm512_cmp_ps_mask(magnitude, tiny, _CMP_LT_OQ) & _mm512_cmp_ps_mask(magnitude, _mm512_setzero_ps(), _CMP_GT_OQ);
}
/* the two halves' results, rounded half up (the ties are redone), packed back */
FA_AVX512_ static inline __m512i bf16_pack_halves_avx512(__m512 even, __m512 odd) {
    const __m512i half = _mm512_set1_epi32(0x8000);
    __m512i low = _mm512_srli_epi32(_mm512_add_epi32(_mm512_castps_si512(even), half), 16);
    __m512i high = _mm512_and_si512(_mm512_add_epi32(_mm512_castps_si512(odd), half), _mm512_set1_epi32((int)0xffff0000u));
    return _mm512_or_si512(low, high);
}
/* element 2k of `to` (even) or 2k + 1 (odd) redone from lanes[0][k] or
 * lanes[1][k], the widened inputs (`to` may be where they were read from) */
static void redo_halves(uint16_t *to, const float lanes[2][16], float s, unsigned even, unsigned odd) {
    for (int k = 0; even | odd; k++, even >>= 1, odd >>= 1) {
        if (even & 1) to[2 * k] = scaled_portable(lanes[0][k], s, 1);
        if (odd & 1) to[2 * k + 1] = scaled_portable(lanes[1][k], s, 1);
    }
}
FA_AVX512_ static FA_BODY_ void body_leaky_relu_avx512(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                         const float *limits) {
    if (limits[0] != limits[0]) { /* a NaN slope: as AVX2 */
        leaky_relu_portable(in, out, n, bf16, limits);
        return;
    }
    const __m512 s = _mm512_set1_ps(limits[0]), zero = _mm512_setzero_ps();
    const __m512 tiny_x = _mm512_set1_ps(limits[0] == 0 ? 0.0f : (float)fmin(0x1p-100 / fabs(limits[0]), 0x1p127));
    /* x where x > 0, else x s (a NaN x: x s, x's NaN made quiet) */
#define FA_LEAKY_HALF_AVX512_(x, positive)                                                          \
    _mm512_mask_mov_ps(_mm512_mul_ps(x, s), positive = _mm512_cmp_ps_mask(x, zero, _CMP_GT_OQ), x)
#define FA_LEAKY_BF16_AVX512_(at, to)                                                               \
    {                                                                                               \
        __m512i v = _mm512_loadu_si512(at[0]);                                                      \
        __m512 x0 = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));                                  \
        __m512 x1 = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32((int)0xffff0000u)));  \
        __mmask16 positive0, positive1;                                                             \
        __m512 y0 = FA_LEAKY_HALF_AVX512_(x0, positive0), y1 = FA_LEAKY_HALF_AVX512_(x1, positive1); \
        _mm512_storeu_si512(to, bf16_pack_halves_avx512(y0, y1));                                   \
        __mmask16 redo0 = bf16_near_tie_lanes_avx512(y0) | (tiny_lanes_avx512(x0, tiny_x) & ~positive0); \
        __mmask16 redo1 = bf16_near_tie_lanes_avx512(y1) | (tiny_lanes_avx512(x1, tiny_x) & ~positive1); \
        if (redo0 | redo1) {                                                                        \
            float lanes[2][16];                                                                     \
            _mm512_storeu_ps(lanes[0], x0);                                                         \
            _mm512_storeu_ps(lanes[1], x1);                                                         \
            redo_halves(to, (const float(*)[16])lanes, limits[0], redo0, redo1);                    \
        }                                                                                           \
    }
    /* float16: v s rounded to odd, then once to float16 (product_to_odd_avx512) */
#define FA_LEAKY_F16_AVX512_(at, to)                                                                \
    {                                                                                               \
        __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at[0]));                     \
        __m512 y = _mm512_mask_mov_ps(product_to_odd_avx512(x, s), _mm512_cmp_ps_mask(x, zero, _CMP_GT_OQ), x); \
        _mm256_storeu_si256((__m256i *)(to), _mm512_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT));        \
    }
    if (bf16) {
        FA_PIECEWISE16_LOOP_(32, 1, FA_LEAKY_BF16_AVX512_)
    } else {
        FA_PIECEWISE16_LOOP_(16, 1, FA_LEAKY_F16_AVX512_)
    }
#undef FA_LEAKY_F16_AVX512_
#undef FA_LEAKY_BF16_AVX512_
}
/* gs (g s, as the caller rounds it) where x <= 0, g where x > 0
 * (bfloat16: a signaling NaN made quiet, -0 kept), x's NaN made quiet where
 * x is NaN; *product: the lanes of g s */
FA_AVX512_ static inline __m512 leaky_bwd_lanes_avx512(__m512 g, __m512 gs, __m512 x, __m512 one, __mmask16 *product,
                                                       int bf16) {
    __mmask16 positive = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ), nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    *product = (__mmask16)~(positive | nan);
    __m512 y = _mm512_mask_mov_ps(gs, positive, bf16 ? _mm512_mul_ps(g, one) : g);
    return _mm512_mask_add_ps(y, nan, x, _mm512_setzero_ps());
}
FA_AVX512_ static FA_BODY_ void body_leaky_relu_bwd_avx512(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                             const float *limits) {
    if (limits[0] != limits[0]) { /* as the forward */
        leaky_relu_bwd_portable(in, out, n, bf16, limits);
        return;
    }
    const __m512 s = _mm512_set1_ps(limits[0]), one = _mm512_set1_ps(fa_quieting_one);
    const __m512 tiny_g = _mm512_set1_ps(limits[0] == 0 ? 0.0f : (float)fmin(0x1p-100 / fabs(limits[0]), 0x1p127));
#define FA_LEAKY_BWD_BF16_AVX512_(at, to)                                                           \
    {                                                                                               \
        const __m512i high = _mm512_set1_epi32((int)0xffff0000u);                                   \
        __m512i gv = _mm512_loadu_si512(at[0]), xv = _mm512_loadu_si512(at[1]);                     \
        __m512 g0 = _mm512_castsi512_ps(_mm512_slli_epi32(gv, 16));                                 \
        __m512 g1 = _mm512_castsi512_ps(_mm512_and_si512(gv, high));                                \
        __m512 x0 = _mm512_castsi512_ps(_mm512_slli_epi32(xv, 16));                                 \
        __m512 x1 = _mm512_castsi512_ps(_mm512_and_si512(xv, high));                                \
        __mmask16 product0, product1;                                                               \
        __m512 y0 = leaky_bwd_lanes_avx512(g0, _mm512_mul_ps(g0, s), x0, one, &product0, 1);                           \
        __m512 y1 = leaky_bwd_lanes_avx512(g1, _mm512_mul_ps(g1, s), x1, one, &product1, 1);                           \
        _mm512_storeu_si512(to, bf16_pack_halves_avx512(y0, y1));                                   \
        __mmask16 redo0 = bf16_near_tie_lanes_avx512(y0) | (tiny_lanes_avx512(g0, tiny_g) & product0); \
        __mmask16 redo1 = bf16_near_tie_lanes_avx512(y1) | (tiny_lanes_avx512(g1, tiny_g) & product1); \
        if (redo0 | redo1) {                                                                        \
            float lanes[2][16];                                                                     \
            _mm512_storeu_ps(lanes[0], g0);                                                         \
            _mm512_storeu_ps(lanes[1], g1);                                                         \
            redo_halves(to, (const float(*)[16])lanes, limits[0], redo0, redo1);                    \
        }                                                                                           \
    }
    /* float16 as the forward: g s rounded to odd, then once to float16 */
#define FA_LEAKY_BWD_F16_AVX512_(at, to)                                                            \
    {                                                                                               \
        __m512 g = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at[0]));                     \
        __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)at[1]));                     \
        __mmask16 product;                                                                          \
        __m512 y = leaky_bwd_lanes_avx512(g, product_to_odd_avx512(g, s), x, one, &product, 0);     \
        _mm256_storeu_si256((__m256i *)(to), _mm512_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT));        \
    }
    if (bf16) {
        FA_PIECEWISE16_LOOP_(32, 2, FA_LEAKY_BWD_BF16_AVX512_)
    } else {
        FA_PIECEWISE16_LOOP_(16, 2, FA_LEAKY_BWD_F16_AVX512_)
    }
#undef FA_LEAKY_BWD_F16_AVX512_
#undef FA_LEAKY_BWD_BF16_AVX512_
#undef FA_LEAKY_HALF_AVX512_
}

FA_BF16_CONSTANT_(clamp_avx512, FA_AVX512_)
FA_BF16_CONSTANT_(pass_between16_avx512, FA_AVX512_)
FA_BF16_CONSTANT_(hardsigmoid_avx512, FA_AVX512_)
FA_BF16_CONSTANT_(hardsigmoid_bwd_avx512, FA_AVX512_)
FA_BF16_CONSTANT_(leaky_relu_avx512, FA_AVX512_)
FA_BF16_CONSTANT_(leaky_relu_bwd_avx512, FA_AVX512_)

static const fa_piecewise16_set avx512 = {
    .clamp = clamp_avx512,
    .pass_between = pass_between16_avx512,
    .hardsigmoid = hardsigmoid_avx512,
    .hardsigmoid_bwd = hardsigmoid_bwd_avx512,
    .leaky_relu = leaky_relu_avx512,
    .leaky_relu_bwd = leaky_relu_bwd_avx512,
};
#endif

/* avx512-emulated runs on AVX2 hardware: AVX2's */
const fa_piecewise16_set *fa_piecewise16_for(int isa) {
#if defined(FA_X86_PIECEWISE16)
    if (isa == FA_ISA_AVX512) return &avx512;
    if (isa == FA_ISA_AVX2 || isa == FA_ISA_AVX512_EMULATED) return &avx2;
#endif
    return &portable;
}
