/* Vector layer, AVX-512F flavour: 8 doubles / 16 floats per register, k-masks.
 * Same interface as simd_scalar.h. Only AVX-512F instructions are used. */
#ifndef FA_SIMD_H
#define FA_SIMD_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#ifndef FA_AVX512_EMULATED
#include <immintrin.h>
#endif

#define VD_W 8
#define VF_W 16

typedef __m512d vd;
typedef __mmask8 md;
typedef __m512 vf;
typedef __mmask16 mf;
typedef __m512i vi;
typedef __m512i vdi;

static inline vd vd_set(double c) { return _mm512_set1_pd(c); }
static inline vd vd_load(const double *p) { return _mm512_loadu_pd(p); }
static inline vd vd_loadn(const double *p, ptrdiff_t n) { return _mm512_maskz_loadu_pd((__mmask8)((1u << n) - 1), p); }
static inline void vd_store(double *p, vd v) { _mm512_storeu_pd(p, v); }
static inline void vd_storen(double *p, vd v, ptrdiff_t n) { _mm512_mask_storeu_pd(p, (__mmask8)((1u << n) - 1), v); }
static inline vd vd_add(vd a, vd b) { return _mm512_add_pd(a, b); }
static inline vd vd_sub(vd a, vd b) { return _mm512_sub_pd(a, b); }
static inline vd vd_mul(vd a, vd b) { return _mm512_mul_pd(a, b); }
static inline vd vd_div(vd a, vd b) { return _mm512_div_pd(a, b); }
static inline vd vd_fma(vd a, vd b, vd c) { return _mm512_fmadd_pd(a, b, c); }
static inline vd vd_fnma(vd a, vd b, vd c) { return _mm512_fnmadd_pd(a, b, c); }
static inline vd vd_fms(vd a, vd b, vd c) { return _mm512_fmsub_pd(a, b, c); }
static inline vd vd_max(vd a, vd b) { return _mm512_max_pd(a, b); }
/* a rounded to float32's precision and range (to nearest, even) */
static inline vd vd_round_float(vd a) { return _mm512_cvtps_pd(_mm512_cvtpd_ps(a)); }
/* one vpternlogq: each bit from s where the mask (the sign bit) is set, else from mag */
static inline vd vd_copysign(vd mag, vd s) {
    return _mm512_castsi512_pd(_mm512_ternarylogic_epi64(_mm512_castpd_si512(mag), _mm512_castpd_si512(s),
                                                         _mm512_set1_epi64((long long)0x8000000000000000ULL), 0xd8));
}
static inline md vd_gt_or_nan(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_NLE_UQ); }
static inline int md_any(md m) { return m != 0; }
static inline vd vd_min(vd a, vd b) { return _mm512_min_pd(a, b); }
static inline vd vd_abs(vd a) {
    return _mm512_castsi512_pd(_mm512_and_epi64(_mm512_castpd_si512(a), _mm512_set1_epi64(0x7fffffffffffffffLL)));
}
static inline md vd_lt(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
static inline md vd_gt(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
static inline md vd_isnan(vd a) { return _mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q); }
static inline md md_or(md a, md b) { return (md)(a | b); }
static inline vdi vd_binade_index(vd a, int first) {
    __m512i e = _mm512_srli_epi64(_mm512_castpd_si512(a), 52);
    return _mm512_max_epi64(_mm512_sub_epi64(e, _mm512_set1_epi64(first)), _mm512_setzero_si512());
}
static inline vd vd_lookup8(const double *table, vdi i) { return _mm512_permutexvar_pd(i, _mm512_loadu_pd(table)); }
static inline vd vd_select(md m, vd if_true, vd if_false) { return _mm512_mask_blend_pd(m, if_false, if_true); }
static inline vd vd_pow2(vd k) {
    __m512i bits = _mm512_castpd_si512(_mm512_add_pd(k, _mm512_set1_pd(0x1.8p52)));
    bits = _mm512_add_epi64(bits, _mm512_set1_epi64(1023 - 0x4338000000000000LL));
    return _mm512_castsi512_pd(_mm512_slli_epi64(bits, 52));
}

/* stores that bypass the caches (p aligned to FA_STREAM_ALIGN), then a fence */
#define FA_STREAM_ALIGN 64
static inline void vf_stream(float *p, vf v) { _mm512_stream_ps(p, v); }
static inline void vd_stream(double *p, vd v) { _mm512_stream_pd(p, v); }
static inline void fa_stream_fence(void) { _mm_sfence(); }
static inline vf vf_set(float c) { return _mm512_set1_ps(c); }
static inline vf vf_load(const float *p) { return _mm512_loadu_ps(p); }
static inline vf vf_loadn(const float *p, ptrdiff_t n) { return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), p); }
static inline void vf_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
static inline void vf_storen(float *p, vf v, ptrdiff_t n) { _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1), v); }
static inline vf vf_add(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm512_div_ps(a, b); }
static inline vf vf_fma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf vf_fnma(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }
static inline vf vf_fms(vf a, vf b, vf c) { return _mm512_fmsub_ps(a, b, c); }
static inline vf vf_min(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline vf vf_max(vf a, vf b) { return _mm512_max_ps(a, b); }
static inline vf vf_abs(vf a) {
    return _mm512_castsi512_ps(_mm512_and_epi32(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff)));
}
/* min(|a|, c) for a positive finite c; a NaN passes (as |NaN|), and a quiet
 * one raises no flag */
static inline vf vf_abs_clamp_quiet(vf a, vf c) {
    /* vminps returns its second operand where either is NaN; {sae} keeps it quiet */
    return _mm512_min_round_ps(c, vf_abs(a), _MM_FROUND_NO_EXC);
}
/* one vpternlogd: each bit from s where the mask (the sign bit) is set, else from mag */
static inline vf vf_copysign(vf mag, vf s) {
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(mag), _mm512_castps_si512(s),
                                                         _mm512_set1_epi32((int)0x80000000u), 0xd8));
}
static inline mf vf_lt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
static inline mf vf_gt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
static inline mf vf_gt_or_nan(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_NLE_UQ); }
static inline mf vf_isnan(vf a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
static inline mf mf_or(mf a, mf b) { return (mf)(a | b); }
static inline int mf_any(mf m) { return m != 0; }
static inline vf vf_pow2(vf k) {
    __m512i e = _mm512_add_epi32(_mm512_cvttps_epi32(k), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
}
static inline vi vf_binade_index(vf a, int first) {
    __m512i e = _mm512_srli_epi32(_mm512_castps_si512(a), 23);
    return _mm512_max_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(first)), _mm512_setzero_si512());
}
static inline vi vf_half_binade_index(vf a, int first) {
    __m512i e = _mm512_srli_epi32(_mm512_castps_si512(a), 22);
    return _mm512_max_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(first)), _mm512_setzero_si512());
}
/* indices stay below 8: the upper half of the table register is zero */
static inline vf vf_lookup8(const float *table, vi i) {
    return _mm512_permutexvar_ps(i, _mm512_maskz_loadu_ps((__mmask16)0xff, table));
}
static inline vf vf_select(mf m, vf if_true, vf if_false) { return _mm512_mask_blend_ps(m, if_false, if_true); }

/* max(m, v) where v is not NaN, else m (m is never NaN); no flag ({sae}: vmaxps
 * returns its second operand where either is NaN) */
static inline vf vf_max_skip_nan(vf m, vf v) { return _mm512_max_round_ps(v, m, _MM_FROUND_NO_EXC); }
static inline vd vd_max_skip_nan(vd m, vd v) { return _mm512_max_round_pd(v, m, _MM_FROUND_NO_EXC); }
/* v's lanes, widened to double, added in order to acc[0] and acc[1] */
static inline void vf_add_widened(vd *acc, vf v) {
    acc[0] = _mm512_add_pd(acc[0], _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    acc[1] = _mm512_add_pd(acc[1], _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}
/* a b lane by lane for the floats at a and b, each half loaded and widened
 * in one step, the products exact in double, added in order to acc[0] and
 * acc[1] by one FMA (the same bits as the add of the exact product) */
static inline void vf_add_widened_product_at(vd *acc, const float *a, const float *b) {
    acc[0] = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_loadu_ps(a)), _mm512_cvtps_pd(_mm256_loadu_ps(b)), acc[0]);
    acc[1] = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_loadu_ps(a + 8)), _mm512_cvtps_pd(_mm256_loadu_ps(b + 8)), acc[1]);
}

/* v 2^k for integer-valued k, exact where the result is normal: one vscalef,
 * the same bits as the other layers' product by 2^k, without building 2^k
 * from integer operations */
static inline vd vd_scale_normal(vd v, vd k) { return _mm512_scalef_pd(v, k); }
static inline vf vf_scale_normal(vf v, vf k) { return _mm512_scalef_ps(v, k); }

/* the fast GELU's lookups: bits(a) >> 22 (exponent and first mantissa bit), no
 * offset and no clamp; a 16-entry table whose halves are equal, read at i mod 8
 * (vpermps reads the low 4 bits of each index) */
static inline vi vf_half_binade_bits(vf a) { return _mm512_srli_epi32(_mm512_castps_si512(a), 22); }
/* bits(max(a, floor)) >> 22 for a >= 0, the maximum taken on the integers (no flag) */
static inline vi vf_half_binade_bits_above(vf a, vf floor) {
    return _mm512_srli_epi32(_mm512_max_epi32(_mm512_castps_si512(a), _mm512_castps_si512(floor)), 22);
}
static inline vf vf_lookup8_wrap(const float *table16, vi i) { return _mm512_permutexvar_ps(i, _mm512_loadu_ps(table16)); }
/* table16[i mod 16] per lane: one vpermps */
static inline vf vf_lookup16(const float *table16, vi i) { return _mm512_permutexvar_ps(i, _mm512_loadu_ps(table16)); }
/* v 2^k with ks = 0x1.8p23 + k (the shifter's sum, k integer, |k| < 256), by
 * adding k to v's exponent field: exact where v 2^k is normal, or k = 0 */
static inline vf vf_scale_shifted(vf v, vf ks) {
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(v), _mm512_slli_epi32(_mm512_castps_si512(ks), 23)));
}
/* with ks = 0x1.8p23 + k as above (|k| < 2^21): the bits of ks, whose low
 * bits are k mod 2^n (a table's index: vf_lookup16 reads the low four) */
static inline vi vf_shifter_bits(vf ks) { return _mm512_castps_si512(ks); }

#endif
