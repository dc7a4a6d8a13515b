/* Vector layer, SSE2 flavour: 2 doubles / 4 floats per register, for x86-64
 * CPUs without AVX2 + FMA (SSE2 is part of every x86-64 CPU). Same interface
 * as simd_scalar.h, and the same bits: every operation is the IEEE operation
 * rounded once that the other layers perform.
 *
 * SSE2 has no fused multiply-add; the kernels need it rounded once (their
 * exact error terms depend on it), so it is computed exactly:
 *   float:  a·b is exact in double; a·b + c rounded to double, then to
 *           float, rounds twice, which differs from rounding once only where
 *           the double sits on a float midpoint (1 in 2^29 of random sums):
 *           those vectors go through fa_fmaf lane by lane.
 *   double: Dekker's exact product and Boldo and Melquiond's round-to-odd sum
 *           (fma_exact.h's algorithm, two lanes at once); lanes near the
 *           ends of the range, zeros, infinities and NaN go through fa_fma.
 * Comparisons are the quiet ones of the other layers: SSE2's cmplt/cmpgt
 * raise 'invalid' on a quiet NaN, so NaN lanes are zeroed before them. No
 * masked loads and stores: tails go through a register-sized buffer and
 * touch only the n elements asked for. */
#ifndef FA_SIMD_H
#define FA_SIMD_H
#include <emmintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "simd/fma_exact.h"
/* kernels.inc takes its no-FMA variants: vf_fma is emulated here */
#define FA_FLOAT_FMA_IS_EMULATED 1

#define FA_ISA_SUFFIX sse2
#define VD_W 2
#define VF_W 4

typedef __m128d vd;
typedef __m128d md;
typedef __m128 vf;
typedef __m128 mf;
typedef __m128i vi;
typedef __m128i vdi;

static inline vd vd_set(double c) { return _mm_set1_pd(c); }
static inline vd vd_load(const double *p) { return _mm_loadu_pd(p); }
static inline vd vd_loadn(const double *p, ptrdiff_t n) {
    double lanes[VD_W] = {0};
    memcpy(lanes, p, (size_t)n * sizeof *p);
    return _mm_loadu_pd(lanes);
}
static inline void vd_store(double *p, vd v) { _mm_storeu_pd(p, v); }
static inline void vd_storen(double *p, vd v, ptrdiff_t n) {
    double lanes[VD_W];
    _mm_storeu_pd(lanes, v);
    memcpy(p, lanes, (size_t)n * sizeof *p);
}
static inline vd vd_add(vd a, vd b) { return _mm_add_pd(a, b); }
static inline vd vd_sub(vd a, vd b) { return _mm_sub_pd(a, b); }
static inline vd vd_mul(vd a, vd b) { return _mm_mul_pd(a, b); }
static inline vd vd_div(vd a, vd b) { return _mm_div_pd(a, b); }

/* the biased exponent field of each double, in its upper 32-bit half */
static inline __m128i fa_sse2_exponent_d_(vd a) {
    return _mm_and_si128(_mm_castpd_si128(a), _mm_set_epi32(0x7ff00000, 0, 0x7ff00000, 0));
}
/* The emulated FMAs are long: inlined whatever the compiler's size
 * heuristics say (a call spills every vector register); their rare lane by
 * lane fallback is kept out of the way. */
#if defined(_MSC_VER) && !defined(__clang__)
#define FA_SSE2_RARELY_(condition) (condition)
#define FA_SSE2_ALWAYS_INLINE_ static __forceinline
#define FA_SSE2_OUT_OF_LINE_ static __declspec(noinline)
#else
#define FA_SSE2_RARELY_(condition) __builtin_expect((condition) != 0, 0)
#define FA_SSE2_ALWAYS_INLINE_ static inline __attribute__((always_inline))
#define FA_SSE2_OUT_OF_LINE_ static __attribute__((noinline))
#endif
/* upper halves of a 32-bit-lane mask: bits 1 and 3 of movemask */
#define FA_SSE2_UPPER_HALVES_ 0xa

/* Knuth's TwoSum: a + b = *sum + return value, exactly */
FA_SSE2_ALWAYS_INLINE_ vd fa_sse2_two_sum_(vd a, vd b, vd *sum) {
    vd s = _mm_add_pd(a, b), back = _mm_sub_pd(s, a);
    *sum = s;
    return _mm_add_pd(_mm_sub_pd(a, _mm_sub_pd(s, back)), _mm_sub_pd(b, back));
}
/* s made round-to-odd where s + err is inexact (fa_round_to_odd_ per lane);
 * err is finite here */
FA_SSE2_ALWAYS_INLINE_ vd fa_sse2_round_to_odd_(vd s, vd err) {
    __m128i inexact = _mm_srli_epi64(_mm_castpd_si128(_mm_cmpneq_pd(err, _mm_setzero_pd())), 63);
    __m128i beyond = _mm_and_si128(inexact, _mm_srli_epi64(_mm_castpd_si128(_mm_xor_pd(err, s)), 63));
    __m128i bits = _mm_sub_epi64(_mm_castpd_si128(s), beyond);
    return _mm_castsi128_pd(_mm_or_si128(bits, inexact));
}

FA_SSE2_OUT_OF_LINE_ vd fa_sse2_fma_by_lane_(vd a, vd b, vd c) {
    double x[2], y[2], z[2];
    _mm_storeu_pd(x, a), _mm_storeu_pd(y, b), _mm_storeu_pd(z, c);
    return _mm_setr_pd(fa_fma(x[0], y[0], z[0]), fa_fma(x[1], y[1], z[1]));
}

FA_SSE2_ALWAYS_INLINE_ vd vd_fma(vd a, vd b, vd c) {
    vd p = _mm_mul_pd(a, b);
    /* fa_fma's range, by exponent fields (upper halves): 2^-900 <= |p| <
     * 2^1000, |a|, |b| < 2^995, |c| < 2^1000; zeros, infinities and NaN fail */
    __m128i ep = fa_sse2_exponent_d_(p);
    __m128i in_range = _mm_and_si128(_mm_cmpgt_epi32(ep, _mm_set1_epi32(122 << 20)),
                                     _mm_cmpgt_epi32(_mm_set1_epi32(2023 << 20), ep));
    __m128i small_ab = _mm_and_si128(_mm_cmpgt_epi32(_mm_set1_epi32(2018 << 20), fa_sse2_exponent_d_(a)),
                                     _mm_cmpgt_epi32(_mm_set1_epi32(2018 << 20), fa_sse2_exponent_d_(b)));
    /* a or b zero (common: a reduced argument of 0) with the other finite:
     * the product is an exact zero and the result p + c */
    vd zero_product = _mm_or_pd(_mm_cmpeq_pd(a, _mm_setzero_pd()), _mm_cmpeq_pd(b, _mm_setzero_pd()));
    in_range = _mm_or_si128(in_range, _mm_castpd_si128(zero_product));
    in_range = _mm_and_si128(in_range, small_ab);
    in_range = _mm_and_si128(in_range, _mm_cmpgt_epi32(_mm_set1_epi32(2023 << 20), fa_sse2_exponent_d_(c)));
    if ((_mm_movemask_ps(_mm_castsi128_ps(in_range)) & FA_SSE2_UPPER_HALVES_) != FA_SSE2_UPPER_HALVES_)
        return fa_sse2_fma_by_lane_(a, b, c);
    const vd split = _mm_set1_pd(0x1p27 + 1);
    vd ta = _mm_mul_pd(a, split), a_hi = _mm_sub_pd(ta, _mm_sub_pd(ta, a)), a_lo = _mm_sub_pd(a, a_hi);
    vd tb = _mm_mul_pd(b, split), b_hi = _mm_sub_pd(tb, _mm_sub_pd(tb, b)), b_lo = _mm_sub_pd(b, b_hi);
    vd e = _mm_add_pd(_mm_sub_pd(_mm_mul_pd(a_hi, b_hi), p), _mm_mul_pd(a_hi, b_lo));
    e = _mm_add_pd(_mm_add_pd(e, _mm_mul_pd(a_lo, b_hi)), _mm_mul_pd(a_lo, b_lo));
    vd th, tl = fa_sse2_two_sum_(c, p, &th);
    vd v, v_err = fa_sse2_two_sum_(tl, e, &v);
    vd fused = _mm_add_pd(th, fa_sse2_round_to_odd_(v, v_err));
    /* (zeros' signs: -0 + -0 is -0, which the sums above lose) */
    return _mm_or_pd(_mm_and_pd(zero_product, _mm_add_pd(p, c)), _mm_andnot_pd(zero_product, fused));
}
/* c - a b, rounded once; a NaN a keeps its sign, as x86's vfnmadd gives it
 * (negated, it would meet b's NaN with the other sign, and which of two NaNs
 * the emulation's mulpd returns is the compiler's operand order) */
FA_SSE2_ALWAYS_INLINE_ vd vd_fnma(vd a, vd b, vd c) {
    vd nan = _mm_cmpunord_pd(a, a);
    return vd_fma(_mm_or_pd(_mm_and_pd(nan, a), _mm_andnot_pd(nan, _mm_xor_pd(a, _mm_set1_pd(-0.0)))), b, c);
}
/* a b - c as x86's vfmsub gives it: -c, except that a NaN c keeps its sign */
FA_SSE2_ALWAYS_INLINE_ vd vd_fms(vd a, vd b, vd c) {
    vd nan = _mm_cmpunord_pd(c, c);
    return vd_fma(a, b, _mm_or_pd(_mm_and_pd(nan, c), _mm_andnot_pd(nan, _mm_xor_pd(c, _mm_set1_pd(-0.0)))));
}

/* NaN lanes of a and b zeroed where either is NaN: SSE2's ordered compares
 * then raise no flag */
static inline vd fa_sse2_ordered_d_(vd a, vd both) { return _mm_and_pd(a, both); }
static inline md vd_lt(vd a, vd b) {
    vd both = _mm_cmpord_pd(a, b);
    return _mm_cmplt_pd(fa_sse2_ordered_d_(a, both), fa_sse2_ordered_d_(b, both));
}
static inline md vd_gt(vd a, vd b) { return vd_lt(b, a); }
static inline md vd_gt_or_nan(vd a, vd b) { return _mm_or_pd(_mm_cmpunord_pd(a, b), vd_gt(a, b)); }
static inline md vd_isnan(vd a) { return _mm_cmpunord_pd(a, a); }
static inline md md_or(md a, md b) { return _mm_or_pd(a, b); }
static inline int md_any(md m) { return _mm_movemask_pd(m) != 0; }
/* x86's min and max: b unless a is strictly smaller (larger); b where either is NaN */
static inline vd vd_min(vd a, vd b) { return _mm_min_pd(a, b); }
static inline vd vd_max(vd a, vd b) { return _mm_max_pd(a, b); }
static inline vd vd_abs(vd a) { return _mm_andnot_pd(_mm_set1_pd(-0.0), a); }
/* a rounded to float32's precision and range (to nearest, even) */
static inline vd vd_round_float(vd a) { return _mm_cvtps_pd(_mm_cvtpd_ps(a)); }
static inline vd vd_copysign(vd mag, vd s) {
    return _mm_or_pd(_mm_andnot_pd(_mm_set1_pd(-0.0), mag), _mm_and_pd(_mm_set1_pd(-0.0), s));
}
/* max(biased exponent of a - first, 0), for a >= 0: e is small, so each
 * 32-bit half cleared where negative clears the 64-bit lane */
static inline vdi vd_binade_index(vd a, int first) {
    __m128i e = _mm_sub_epi64(_mm_srli_epi64(_mm_castpd_si128(a), 52), _mm_set1_epi64x(first));
    return _mm_andnot_si128(_mm_cmpgt_epi32(_mm_setzero_si128(), e), e);
}
static inline vd vd_lookup8(const double *table, vdi i) {
    int i0 = _mm_cvtsi128_si32(i), i1 = _mm_cvtsi128_si32(_mm_unpackhi_epi64(i, i));
    return _mm_loadh_pd(_mm_load_sd(table + i0), table + i1);
}
static inline vd vd_select(md m, vd if_true, vd if_false) {
    return _mm_or_pd(_mm_and_pd(m, if_true), _mm_andnot_pd(m, if_false));
}
/* 2^k for integer-valued k in [-1022, 1023]: k + 1.5 2^52 holds k in its low
 * mantissa bits; k + 1023 moves into the exponent */
static inline vd vd_pow2(vd k) {
    __m128i bits = _mm_castpd_si128(_mm_add_pd(k, _mm_set1_pd(0x1.8p52)));
    bits = _mm_add_epi64(bits, _mm_set1_epi64x(1023 - 0x4338000000000000LL));
    return _mm_castsi128_pd(_mm_slli_epi64(bits, 52));
}

/* stores that bypass the caches (p aligned to FA_STREAM_ALIGN), then a fence */
#define FA_STREAM_ALIGN 16
static inline void vf_stream(float *p, vf v) { _mm_stream_ps(p, v); }
static inline void vd_stream(double *p, vd v) { _mm_stream_pd(p, v); }
static inline void fa_stream_fence(void) { _mm_sfence(); }
static inline vf vf_set(float c) { return _mm_set1_ps(c); }
static inline vf vf_load(const float *p) { return _mm_loadu_ps(p); }
static inline vf vf_loadn(const float *p, ptrdiff_t n) {
    float lanes[VF_W] = {0};
    memcpy(lanes, p, (size_t)n * sizeof *p);
    return _mm_loadu_ps(lanes);
}
static inline void vf_store(float *p, vf v) { _mm_storeu_ps(p, v); }
static inline void vf_storen(float *p, vf v, ptrdiff_t n) {
    float lanes[VF_W];
    _mm_storeu_ps(lanes, v);
    memcpy(p, lanes, (size_t)n * sizeof *p);
}
static inline vf vf_add(vf a, vf b) { return _mm_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm_div_ps(a, b); }

/* Lanes of s = a·b + c (exact product, sum rounded to double) whose
 * rounding to float may differ from a·b + c rounded once: s inexact on a
 * float midpoint. For a normal float result the midpoint has low 29 bits
 * 0x10000000; below 2^-126 the float step is coarser and the midpoint's
 * low 29 bits are 0 (zero itself is exact). Bits 0 and 2 of movemask. */
FA_SSE2_ALWAYS_INLINE_ int fa_sse2_may_round_twice_(vd s) {
    __m128i bits = _mm_castpd_si128(s);
    __m128i low29 = _mm_and_si128(bits, _mm_set_epi32(0, 0x1fffffff, 0, 0x1fffffff));
    __m128i midpoint = _mm_cmpeq_epi32(low29, _mm_set1_epi32(0x10000000));
    __m128i exponent = fa_sse2_exponent_d_(s);
    __m128i tiny = _mm_andnot_si128(_mm_cmpeq_epi32(exponent, _mm_setzero_si128()),
                                    _mm_cmpgt_epi32(_mm_set1_epi32((1023 - 126) << 20), exponent));
    __m128i tiny_midpoint = _mm_and_si128(_mm_cmpeq_epi32(low29, _mm_setzero_si128()), _mm_srli_epi64(tiny, 32));
    return _mm_movemask_ps(_mm_castsi128_ps(_mm_or_si128(midpoint, tiny_midpoint))) & 0x5;
}
FA_SSE2_OUT_OF_LINE_ vf fa_sse2_fmaf_by_lane_(vf a, vf b, vf c) {
    float x[4], y[4], z[4];
    _mm_storeu_ps(x, a), _mm_storeu_ps(y, b), _mm_storeu_ps(z, c);
    return _mm_setr_ps(fa_fmaf(x[0], y[0], z[0]), fa_fmaf(x[1], y[1], z[1]), fa_fmaf(x[2], y[2], z[2]),
                       fa_fmaf(x[3], y[3], z[3]));
}
FA_SSE2_ALWAYS_INLINE_ vf vf_fma(vf a, vf b, vf c) {
    vd low = _mm_add_pd(_mm_mul_pd(_mm_cvtps_pd(a), _mm_cvtps_pd(b)), _mm_cvtps_pd(c));
    vd high = _mm_add_pd(_mm_mul_pd(_mm_cvtps_pd(_mm_movehl_ps(a, a)), _mm_cvtps_pd(_mm_movehl_ps(b, b))),
                         _mm_cvtps_pd(_mm_movehl_ps(c, c)));
    if (FA_SSE2_RARELY_(fa_sse2_may_round_twice_(low) | fa_sse2_may_round_twice_(high)))
        return fa_sse2_fmaf_by_lane_(a, b, c);
    return _mm_movelh_ps(_mm_cvtpd_ps(low), _mm_cvtpd_ps(high));
}
/* c - a b as vf_fma computes a b + c, the exact product subtracted rather
 * than a negated: a NaN a keeps its sign, as vd_fnma */
FA_SSE2_ALWAYS_INLINE_ vf vf_fnma(vf a, vf b, vf c) {
    vd low = _mm_sub_pd(_mm_cvtps_pd(c), _mm_mul_pd(_mm_cvtps_pd(a), _mm_cvtps_pd(b)));
    vd high = _mm_sub_pd(_mm_cvtps_pd(_mm_movehl_ps(c, c)),
                         _mm_mul_pd(_mm_cvtps_pd(_mm_movehl_ps(a, a)), _mm_cvtps_pd(_mm_movehl_ps(b, b))));
    vf fast = _mm_movelh_ps(_mm_cvtpd_ps(low), _mm_cvtpd_ps(high));
    if (FA_SSE2_RARELY_(fa_sse2_may_round_twice_(low) | fa_sse2_may_round_twice_(high))) {
        vf nan = _mm_cmpunord_ps(a, a), minus_a = _mm_xor_ps(a, _mm_set1_ps(-0.0f));
        vf by_lane = fa_sse2_fmaf_by_lane_(_mm_or_ps(_mm_and_ps(nan, a), _mm_andnot_ps(nan, minus_a)), b, c);
        /* NaN lanes as the vector path gives them (which of two NaNs fa_fmaf
         * returns is its own choice): the same bits whichever path a vector takes */
        vf nan_result = _mm_cmpunord_ps(fast, fast);
        return _mm_or_ps(_mm_and_ps(nan_result, fast), _mm_andnot_ps(nan_result, by_lane));
    }
    return fast;
}
FA_SSE2_ALWAYS_INLINE_ vf vf_fms(vf a, vf b, vf c) {
    vf nan = _mm_cmpunord_ps(c, c);
    return vf_fma(a, b, _mm_or_ps(_mm_and_ps(nan, c), _mm_andnot_ps(nan, _mm_xor_ps(c, _mm_set1_ps(-0.0f)))));
}
static inline vf vf_min(vf a, vf b) { return _mm_min_ps(a, b); }
static inline vf vf_max(vf a, vf b) { return _mm_max_ps(a, b); }
static inline vf vf_abs(vf a) { return _mm_andnot_ps(_mm_set1_ps(-0.0f), a); }
/* min(|a|, c) for a positive finite c; a NaN passes (as |NaN|), and a quiet
 * one raises no flag */
static inline vf vf_abs_clamp_quiet(vf a, vf c) {
    /* SSE2's ordered "less than" signals on NaN: compare the bits as integers, NaN excluded */
    vf m = vf_abs(a);
    __m128 above = _mm_castsi128_ps(_mm_cmpgt_epi32(_mm_castps_si128(m), _mm_castps_si128(c)));
    above = _mm_andnot_ps(_mm_cmpunord_ps(m, m), above);
    return _mm_or_ps(_mm_and_ps(above, c), _mm_andnot_ps(above, m));
}
static inline vf vf_copysign(vf mag, vf s) {
    return _mm_or_ps(_mm_andnot_ps(_mm_set1_ps(-0.0f), mag), _mm_and_ps(_mm_set1_ps(-0.0f), s));
}
static inline mf vf_lt(vf a, vf b) {
    vf both = _mm_cmpord_ps(a, b);
    return _mm_cmplt_ps(_mm_and_ps(a, both), _mm_and_ps(b, both));
}
static inline mf vf_gt(vf a, vf b) { return vf_lt(b, a); }
static inline mf vf_gt_or_nan(vf a, vf b) { return _mm_or_ps(_mm_cmpunord_ps(a, b), vf_gt(a, b)); }
static inline mf vf_isnan(vf a) { return _mm_cmpunord_ps(a, a); }
static inline mf mf_or(mf a, mf b) { return _mm_or_ps(a, b); }
static inline int mf_any(mf m) { return _mm_movemask_ps(m) != 0; }
/* 2^k for integer-valued k in [-126, 127] */
static inline vf vf_pow2(vf k) {
    __m128i e = _mm_add_epi32(_mm_cvttps_epi32(k), _mm_set1_epi32(127));
    return _mm_castsi128_ps(_mm_slli_epi32(e, 23));
}
static inline vi fa_sse2_max0_(__m128i e) { return _mm_andnot_si128(_mm_cmpgt_epi32(_mm_setzero_si128(), e), e); }
static inline vi vf_binade_index(vf a, int first) {
    return fa_sse2_max0_(_mm_sub_epi32(_mm_srli_epi32(_mm_castps_si128(a), 23), _mm_set1_epi32(first)));
}
static inline vi vf_half_binade_index(vf a, int first) {
    return fa_sse2_max0_(_mm_sub_epi32(_mm_srli_epi32(_mm_castps_si128(a), 22), _mm_set1_epi32(first)));
}
/* table[i] per lane, i in [0, 8) */
static inline vf vf_lookup8(const float *table, vi i) {
    int i0 = _mm_cvtsi128_si32(i), i1 = _mm_cvtsi128_si32(_mm_shuffle_epi32(i, 1));
    int i2 = _mm_cvtsi128_si32(_mm_shuffle_epi32(i, 2)), i3 = _mm_cvtsi128_si32(_mm_shuffle_epi32(i, 3));
    return _mm_setr_ps(table[i0], table[i1], table[i2], table[i3]);
}
static inline vf vf_select(mf m, vf if_true, vf if_false) {
    return _mm_or_ps(_mm_and_ps(m, if_true), _mm_andnot_ps(m, if_false));
}

/* max(m, v) where v is not NaN, else m (m is never NaN); no flag */
static inline vf vf_max_skip_nan(vf m, vf v) { return vf_max(m, vf_select(vf_isnan(v), vf_set(-INFINITY), v)); }
static inline vd vd_max_skip_nan(vd m, vd v) { return vd_max(m, vd_select(vd_isnan(v), vd_set(-INFINITY), v)); }
/* v's lanes, widened to double, added in order to acc[0] and acc[1] */
static inline void vf_add_widened(vd *acc, vf v) {
    acc[0] = _mm_add_pd(acc[0], _mm_cvtps_pd(v));
    acc[1] = _mm_add_pd(acc[1], _mm_cvtps_pd(_mm_movehl_ps(v, v)));
}
/* a b lane by lane for the floats at a and b, the products exact in double,
 * added in order to acc[0] and acc[1] */
static inline void vf_add_widened_product_at(vd *acc, const float *a, const float *b) {
    vf va = vf_load(a), vb = vf_load(b);
    acc[0] = _mm_add_pd(acc[0], _mm_mul_pd(_mm_cvtps_pd(va), _mm_cvtps_pd(vb)));
    acc[1] = _mm_add_pd(acc[1], _mm_mul_pd(_mm_cvtps_pd(_mm_movehl_ps(va, va)), _mm_cvtps_pd(_mm_movehl_ps(vb, vb))));
}

/* The pass-through backwards (ReLU6, hardtanh, hard-sigmoid) in half the
 * instructions of two quiet compares and their selects: a float's bits, the
 * negative ones reflected, are integers in the floats' order, and SSE2's
 * integer compare raises no flag. lo, hi: constants (their keys are hoisted);
 * a zero bound is taken with both signs excluded, as the float compare does;
 * NaN keys fall outside every finite or infinite range; a NaN bound passes
 * nothing, as the float compare would. */
#define FA_HAVE_VF_PASS_BETWEEN 1
static inline __m128i fa_sse2_order_key_(vf a) {
    __m128i bits = _mm_castps_si128(a);
    return _mm_xor_si128(bits, _mm_srli_epi32(_mm_srai_epi32(bits, 31), 1));
}
/* g where lo < x < hi, +0 elsewhere, x quieted where x is NaN */
static inline vf vf_pass_between(vf g, vf x, vf lo, vf hi) {
    const vf zero = _mm_setzero_ps();
    /* x + 0: under denormals-are-zero a subnormal x is then 0, as the float
     * compare takes it (-0 turned +0 is inside no range either); a NaN quiet */
    x = _mm_add_ps(x, zero);
    __m128i lo_key = _mm_andnot_si128(_mm_castps_si128(_mm_cmpeq_ps(lo, zero)), fa_sse2_order_key_(lo)); /* ±0: key(+0) */
    __m128i hi_key = _mm_or_si128(_mm_castps_si128(_mm_cmpeq_ps(hi, zero)), fa_sse2_order_key_(hi));     /* ±0: key(-0) */
    __m128i no_range = _mm_castps_si128(_mm_cmpunord_ps(lo, hi));
    lo_key = _mm_or_si128(_mm_andnot_si128(no_range, lo_key), _mm_srli_epi32(no_range, 1)); /* a NaN bound: INT32_MAX */
    __m128i bits = _mm_castps_si128(x), inside_bits;
    if (_mm_cvtsi128_si32(lo_key) >= 0) /* ReLU6: a negative x's bits are below lo's as they are */
        inside_bits = _mm_and_si128(_mm_cmpgt_epi32(bits, lo_key), _mm_cmpgt_epi32(hi_key, bits));
    else if (_mm_cvtsi128_si32(_mm_add_epi32(lo_key, hi_key)) == -1) /* lo = -hi: |x| < hi, NaN above */
        inside_bits = _mm_cmpgt_epi32(hi_key, _mm_and_si128(bits, _mm_set1_epi32(0x7fffffff)));
    else {
        __m128i key = fa_sse2_order_key_(x);
        inside_bits = _mm_and_si128(_mm_cmpgt_epi32(key, lo_key), _mm_cmpgt_epi32(hi_key, key));
    }
    vf inside = _mm_castsi128_ps(inside_bits);
    vf nan = _mm_cmpunord_ps(x, x);
    return _mm_or_ps(_mm_and_ps(inside, g), _mm_and_ps(nan, x));
}

/* v 2^k for integer-valued k, exact where the result is normal */
FA_SSE2_ALWAYS_INLINE_ vd vd_scale_normal(vd v, vd k) { return vd_mul(v, vd_pow2(k)); }
FA_SSE2_ALWAYS_INLINE_ vf vf_scale_normal(vf v, vf k) { return vf_mul(v, vf_pow2(k)); }

/* the fast GELU's lookups: bits(a) >> 22 (exponent and first mantissa bit), no
 * offset and no clamp; a 16-entry table whose halves are equal, read at i mod 8 */
static inline vi vf_half_binade_bits(vf a) { return _mm_srli_epi32(_mm_castps_si128(a), 22); }
/* bits(max(a, floor)) >> 22 for a >= 0, the maximum taken on the integers (no flag) */
static inline vi vf_half_binade_bits_above(vf a, vf floor) {
    __m128i bits = _mm_castps_si128(a), low = _mm_castps_si128(floor), below = _mm_cmpgt_epi32(low, bits);
    return _mm_srli_epi32(_mm_or_si128(_mm_and_si128(below, low), _mm_andnot_si128(below, bits)), 22);
}
static inline vf vf_lookup8_wrap(const float *table16, vi i) { return vf_lookup8(table16, _mm_and_si128(i, _mm_set1_epi32(7))); }
/* table16[i mod 16] per lane */
static inline vf vf_lookup16(const float *table16, vi i) { return vf_lookup8(table16, _mm_and_si128(i, _mm_set1_epi32(15))); }
/* v 2^k with ks = 0x1.8p23 + k (the shifter's sum, k integer, |k| < 256), by
 * adding k to v's exponent field: exact where v 2^k is normal, or k = 0 */
static inline vf vf_scale_shifted(vf v, vf ks) {
    return _mm_castsi128_ps(_mm_add_epi32(_mm_castps_si128(v), _mm_slli_epi32(_mm_castps_si128(ks), 23)));
}
/* with ks = 0x1.8p23 + k as above (|k| < 2^21): the bits of ks, whose low
 * bits are k mod 2^n (a table's index: vf_lookup16 reads the low four) */
static inline vi vf_shifter_bits(vf ks) { return _mm_castps_si128(ks); }

#endif
