/* Vector layer, AVX2 + FMA flavour: 4 doubles / 8 floats per register.
 * Same interface as simd_scalar.h. Masks are all-ones lanes. */
#ifndef FA_SIMD_H
#define FA_SIMD_H
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define FA_ISA_SUFFIX avx2
#define VD_W 4
#define VF_W 8

typedef __m256d vd;
typedef __m256d md;
typedef __m256 vf;
typedef __m256 mf;
typedef __m256i vi;
typedef __m256i vdi;

static inline __m256i fa_lanes_below_d_(ptrdiff_t n) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
}
static inline __m256i fa_lanes_below_f_(ptrdiff_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline vd vd_set(double c) { return _mm256_set1_pd(c); }
static inline vd vd_load(const double *p) { return _mm256_loadu_pd(p); }
static inline vd vd_loadn(const double *p, ptrdiff_t n) { return _mm256_maskload_pd(p, fa_lanes_below_d_(n)); }
static inline void vd_store(double *p, vd v) { _mm256_storeu_pd(p, v); }
static inline void vd_storen(double *p, vd v, ptrdiff_t n) { _mm256_maskstore_pd(p, fa_lanes_below_d_(n), v); }
static inline vd vd_add(vd a, vd b) { return _mm256_add_pd(a, b); }
static inline vd vd_sub(vd a, vd b) { return _mm256_sub_pd(a, b); }
static inline vd vd_mul(vd a, vd b) { return _mm256_mul_pd(a, b); }
static inline vd vd_div(vd a, vd b) { return _mm256_div_pd(a, b); }
static inline vd vd_fma(vd a, vd b, vd c) { return _mm256_fmadd_pd(a, b, c); }
static inline vd vd_fnma(vd a, vd b, vd c) { return _mm256_fnmadd_pd(a, b, c); }
static inline vd vd_fms(vd a, vd b, vd c) { return _mm256_fmsub_pd(a, b, c); }
static inline vd vd_max(vd a, vd b) { return _mm256_max_pd(a, b); }
/* a rounded to float32's precision and range (to nearest, even) */
static inline vd vd_round_float(vd a) { return _mm256_cvtps_pd(_mm256_cvtpd_ps(a)); }
static inline vd vd_copysign(vd mag, vd s) {
    return _mm256_or_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), mag), _mm256_and_pd(_mm256_set1_pd(-0.0), s));
}
static inline md vd_gt_or_nan(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_NLE_UQ); }
static inline int md_any(md m) { return _mm256_movemask_pd(m) != 0; }
static inline vd vd_min(vd a, vd b) { return _mm256_min_pd(a, b); }
static inline vd vd_abs(vd a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a); }
static inline md vd_lt(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
static inline md vd_gt(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
static inline md vd_isnan(vd a) { return _mm256_cmp_pd(a, a, _CMP_UNORD_Q); }
static inline md md_or(md a, md b) { return _mm256_or_pd(a, b); }
static inline vdi vd_binade_index(vd a, int first) {
    __m256i e = _mm256_sub_epi64(_mm256_srli_epi64(_mm256_castpd_si256(a), 52), _mm256_set1_epi64x(first));
    /* max(e, 0) per 64-bit lane: e is small, so each 32-bit half max'ed with 0 does it */
    return _mm256_max_epi32(e, _mm256_setzero_si256());
}
/* 8 doubles are two registers: permute float pairs (2j, 2j+1) of j = i mod 4
 * in both, then pick by i >= 4 */
static inline vd vd_lookup8(const double *table, vdi i) {
    __m256i j2 = _mm256_slli_epi64(_mm256_and_si256(i, _mm256_set1_epi64x(3)), 1);
    __m256i pair = _mm256_or_si256(j2, _mm256_slli_epi64(_mm256_add_epi64(j2, _mm256_set1_epi64x(1)), 32));
    __m256 low = _mm256_permutevar8x32_ps(_mm256_castpd_ps(_mm256_loadu_pd(table)), pair);
    __m256 high = _mm256_permutevar8x32_ps(_mm256_castpd_ps(_mm256_loadu_pd(table + 4)), pair);
    __m256d upper = _mm256_castsi256_pd(_mm256_cmpgt_epi64(i, _mm256_set1_epi64x(3)));
    return _mm256_blendv_pd(_mm256_castps_pd(low), _mm256_castps_pd(high), upper);
}
static inline vd vd_select(md m, vd if_true, vd if_false) { return _mm256_blendv_pd(if_false, if_true, m); }
static inline vd vd_pow2(vd k) {
    /* k + 1.5*2^52 holds k in its low mantissa bits; move k + 1023 into the exponent. */
    __m256i bits = _mm256_castpd_si256(_mm256_add_pd(k, _mm256_set1_pd(0x1.8p52)));
    bits = _mm256_add_epi64(bits, _mm256_set1_epi64x(1023 - 0x4338000000000000LL));
    return _mm256_castsi256_pd(_mm256_slli_epi64(bits, 52));
}

/* stores that bypass the caches (p aligned to FA_STREAM_ALIGN), then a fence */
#define FA_STREAM_ALIGN 32
static inline void vf_stream(float *p, vf v) { _mm256_stream_ps(p, v); }
static inline void vd_stream(double *p, vd v) { _mm256_stream_pd(p, v); }
static inline void fa_stream_fence(void) { _mm_sfence(); }
static inline vf vf_set(float c) { return _mm256_set1_ps(c); }
static inline vf vf_load(const float *p) { return _mm256_loadu_ps(p); }
static inline vf vf_loadn(const float *p, ptrdiff_t n) { return _mm256_maskload_ps(p, fa_lanes_below_f_(n)); }
static inline void vf_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline void vf_storen(float *p, vf v, ptrdiff_t n) { _mm256_maskstore_ps(p, fa_lanes_below_f_(n), v); }
static inline vf vf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf vf_fma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf vf_fnma(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }
static inline vf vf_fms(vf a, vf b, vf c) { return _mm256_fmsub_ps(a, b, c); }
static inline vf vf_min(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf vf_abs(vf a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
/* min(|a|, c) for a positive finite c; a NaN passes (as |NaN|), and a quiet
 * one raises no flag */
static inline vf vf_abs_clamp_quiet(vf a, vf c) {
    vf m = vf_abs(a);
    return _mm256_blendv_ps(m, c, _mm256_cmp_ps(c, m, _CMP_LT_OQ));
}
static inline vf vf_copysign(vf mag, vf s) {
    return _mm256_or_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), mag), _mm256_and_ps(_mm256_set1_ps(-0.0f), s));
}
static inline mf vf_lt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline mf vf_gt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline mf vf_gt_or_nan(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_NLE_UQ); }
static inline mf vf_isnan(vf a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
static inline mf mf_or(mf a, mf b) { return _mm256_or_ps(a, b); }
static inline int mf_any(mf m) { return _mm256_movemask_ps(m) != 0; }
static inline vf vf_pow2(vf k) {
    __m256i e = _mm256_add_epi32(_mm256_cvttps_epi32(k), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}
static inline vi vf_binade_index(vf a, int first) {
    __m256i e = _mm256_srli_epi32(_mm256_castps_si256(a), 23);
    return _mm256_max_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(first)), _mm256_setzero_si256());
}
static inline vi vf_half_binade_index(vf a, int first) {
    __m256i e = _mm256_srli_epi32(_mm256_castps_si256(a), 22);
    return _mm256_max_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(first)), _mm256_setzero_si256());
}
static inline vf vf_lookup8(const float *table, vi i) { return _mm256_permutevar8x32_ps(_mm256_loadu_ps(table), i); }
static inline vf vf_select(mf m, vf if_true, vf if_false) { return _mm256_blendv_ps(if_false, if_true, m); }

/* max(m, v) where v is not NaN, else m (m is never NaN); no flag */
static inline vf vf_max_skip_nan(vf m, vf v) { return vf_max(m, vf_select(vf_isnan(v), vf_set(-INFINITY), v)); }
static inline vd vd_max_skip_nan(vd m, vd v) { return vd_max(m, vd_select(vd_isnan(v), vd_set(-INFINITY), v)); }
/* v's lanes, widened to double, added in order to acc[0] and acc[1] */
static inline void vf_add_widened(vd *acc, vf v) {
    acc[0] = _mm256_add_pd(acc[0], _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    acc[1] = _mm256_add_pd(acc[1], _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}
/* a b lane by lane for the floats at a and b, each half loaded and widened
 * in one step, the products exact in double, added in order to acc[0] and
 * acc[1] by one FMA (the same bits as the add of the exact product) */
static inline void vf_add_widened_product_at(vd *acc, const float *a, const float *b) {
    acc[0] = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(a)), _mm256_cvtps_pd(_mm_loadu_ps(b)), acc[0]);
    acc[1] = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(a + 4)), _mm256_cvtps_pd(_mm_loadu_ps(b + 4)), acc[1]);
}

/* v 2^k for integer-valued k, exact where the result is normal (AVX-512 has
 * an instruction for it: vscalef) */
static inline vd vd_scale_normal(vd v, vd k) { return vd_mul(v, vd_pow2(k)); }
static inline vf vf_scale_normal(vf v, vf k) { return vf_mul(v, vf_pow2(k)); }

/* the fast GELU's lookups: bits(a) >> 22 (exponent and first mantissa bit), no
 * offset and no clamp; a 16-entry table whose halves are equal, read at i mod 8
 * (vpermps reads the low 3 bits of each index) */
static inline vi vf_half_binade_bits(vf a) { return _mm256_srli_epi32(_mm256_castps_si256(a), 22); }
/* bits(max(a, floor)) >> 22 for a >= 0, the maximum taken on the integers (no flag) */
static inline vi vf_half_binade_bits_above(vf a, vf floor) {
    return _mm256_srli_epi32(_mm256_max_epi32(_mm256_castps_si256(a), _mm256_castps_si256(floor)), 22);
}
static inline vf vf_lookup8_wrap(const float *table16, vi i) { return _mm256_permutevar8x32_ps(_mm256_loadu_ps(table16), i); }
/* table16[i mod 16] per lane: both halves permuted (vpermps reads i mod 8), bit 3
 * of i, moved to the sign, picks one */
static inline vf vf_lookup16(const float *table16, vi i) {
    __m256 low = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table16), i);
    __m256 high = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table16 + 8), i);
    return _mm256_blendv_ps(low, high, _mm256_castsi256_ps(_mm256_slli_epi32(i, 28)));
}
/* v 2^k with ks = 0x1.8p23 + k (the shifter's sum, k integer, |k| < 256), by
 * adding k to v's exponent field: exact where v 2^k is normal, or k = 0 */
static inline vf vf_scale_shifted(vf v, vf ks) {
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(v), _mm256_slli_epi32(_mm256_castps_si256(ks), 23)));
}
/* with ks = 0x1.8p23 + k as above (|k| < 2^21): the bits of ks, whose low
 * bits are k mod 2^n (a table's index: vf_lookup16 reads the low four) */
static inline vi vf_shifter_bits(vf ks) { return _mm256_castps_si256(ks); }

#endif
