/* Vector layer, scalar flavour: one lane. The kernels (kernels_lanes.inc for
 * the activations, kernels.inc for ReLU) are written against this interface;
 * simd_avx2.h and simd_avx512.h provide the same names for wider registers.
 * Every operation is an IEEE-754 operation rounded once (or a bit operation),
 * so all ISAs give the same result for each element. */
#ifndef FA_SIMD_H
#define FA_SIMD_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "simd/fma_exact.h"
/* kernels.inc takes its no-FMA variants where fa_fmaf is emulated */
#define FA_FLOAT_FMA_IS_EMULATED FA_EMULATE_FMAF

#define FA_ISA_SUFFIX scalar
#define VD_W 1 /* doubles per vd */
#define VF_W 1 /* floats per vf */

typedef double vd;
typedef int md;
typedef float vf;
typedef int mf;
typedef int32_t vi; /* int32 lanes: table indices */
typedef int64_t vdi; /* int64 lanes: table indices for vd */

static inline vd vd_set(double c) { return c; }
static inline vd vd_load(const double *p) { return *p; }
static inline vd vd_loadn(const double *p, ptrdiff_t n) { (void)n; return *p; }
static inline void vd_store(double *p, vd v) { *p = v; }
static inline void vd_storen(double *p, vd v, ptrdiff_t n) { (void)n; *p = v; }
static inline vd vd_add(vd a, vd b) { return a + b; }
static inline vd vd_sub(vd a, vd b) { return a - b; }
static inline vd vd_mul(vd a, vd b) { return a * b; }
static inline vd vd_div(vd a, vd b) { return a / b; }
static inline vd vd_fma(vd a, vd b, vd c) { return fa_fma(a, b, c); }
/* c - a b, rounded once; a NaN a keeps its sign, as x86's vfnmadd gives it */
static inline vd vd_fnma(vd a, vd b, vd c) { return fa_fma(a != a ? a : -a, b, c); }
/* a b - c as x86's vfmsub gives it: -c, except that a NaN c keeps its sign */
static inline vd vd_fms(vd a, vd b, vd c) { return fa_fma(a, b, c != c ? c : -c); }
/* min/max as the x86 instructions compute them, b when either is NaN, so
 * that every layer agrees */
static inline vd vd_min(vd a, vd b) { return a < b ? a : b; }
static inline vd vd_max(vd a, vd b) { return a > b ? a : b; }
/* a rounded to float32's precision and range (to nearest, even) */
static inline vd vd_round_float(vd a) { return (double)(float)a; }
static inline vd vd_copysign(vd mag, vd s) { return copysign(mag, s); }
static inline md vd_gt_or_nan(vd a, vd b) { return !islessequal(a, b); }
static inline int md_any(md m) { return m; }
static inline vd vd_abs(vd a) { return fabs(a); }
static inline md vd_lt(vd a, vd b) { return isless(a, b); }
static inline md vd_gt(vd a, vd b) { return isgreater(a, b); }
static inline md vd_isnan(vd a) { return isunordered(a, a); }
static inline md md_or(md a, md b) { return a | b; }
static inline vdi vd_binade_index(vd a, int first) {
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int64_t i = (int64_t)(bits >> 52) - first;
    return i > 0 ? i : 0;
}
static inline vd vd_lookup8(const double *table, vdi i) { return table[i]; }
static inline vd vd_select(md m, vd if_true, vd if_false) { return m ? if_true : if_false; }
/* 2^k for integer-valued k in [-1022, 1023] */
static inline vd vd_pow2(vd k) {
    int64_t bits = (int64_t)(k + 1023.0) << 52;
    double r;
    memcpy(&r, &bits, sizeof r);
    return r;
}

/* stores that bypass the caches (aligned p); the scalar layer has none */
#define FA_STREAM_ALIGN 1
static inline void vf_stream(float *p, vf v) { *p = v; }
static inline void vd_stream(double *p, vd v) { *p = v; }
static inline void fa_stream_fence(void) {}
static inline vf vf_set(float c) { return c; }
static inline vf vf_load(const float *p) { return *p; }
static inline vf vf_loadn(const float *p, ptrdiff_t n) { (void)n; return *p; }
static inline void vf_store(float *p, vf v) { *p = v; }
static inline void vf_storen(float *p, vf v, ptrdiff_t n) { (void)n; *p = v; }
static inline vf vf_add(vf a, vf b) { return a + b; }
static inline vf vf_sub(vf a, vf b) { return a - b; }
static inline vf vf_mul(vf a, vf b) { return a * b; }
static inline vf vf_div(vf a, vf b) { return a / b; }
static inline vf vf_fma(vf a, vf b, vf c) { return fa_fmaf(a, b, c); }
/* c - a b, rounded once; a NaN a keeps its sign, as x86's vfnmadd gives it */
static inline vf vf_fnma(vf a, vf b, vf c) { return fa_fmaf(a != a ? a : -a, b, c); }
static inline vf vf_fms(vf a, vf b, vf c) { return fa_fmaf(a, b, c != c ? c : -c); }
/* min/max as the x86 instructions compute them (b when either is NaN) */
static inline vf vf_min(vf a, vf b) { return a < b ? a : b; }
static inline vf vf_max(vf a, vf b) { return a > b ? a : b; }
static inline vf vf_abs(vf a) { return fabsf(a); }
/* min(|a|, c) for a positive finite c; a NaN passes (as |NaN|), and a quiet
 * one raises no flag */
static inline vf vf_abs_clamp_quiet(vf a, vf c) {
    a = fabsf(a);
    return isless(c, a) ? c : a;
}
/* |mag| with the sign bit of s */
static inline vf vf_copysign(vf mag, vf s) { return copysignf(mag, s); }
static inline mf vf_lt(vf a, vf b) { return isless(a, b); }
static inline mf vf_gt(vf a, vf b) { return isgreater(a, b); }
/* x > b or x is NaN */
static inline mf vf_gt_or_nan(vf a, vf b) { return !islessequal(a, b); }
static inline mf vf_isnan(vf a) { return isunordered(a, a); }
static inline mf mf_or(mf a, mf b) { return a | b; }
static inline int mf_any(mf m) { return m; }
/* 2^k for integer-valued k in [-126, 127] */
static inline vf vf_pow2(vf k) {
    int32_t bits = ((int32_t)k + 127) << 23;
    float r;
    memcpy(&r, &bits, sizeof r);
    return r;
}
/* max(biased exponent of a - first, 0), for a >= 0 */
static inline vi vf_binade_index(vf a, int first) {
    uint32_t bits;
    memcpy(&bits, &a, sizeof bits);
    int32_t i = (int32_t)(bits >> 23) - first;
    return i > 0 ? i : 0;
}
/* max(exponent and first mantissa bit of a - first, 0), for a >= 0 */
static inline vi vf_half_binade_index(vf a, int first) {
    uint32_t bits;
    memcpy(&bits, &a, sizeof bits);
    int32_t i = (int32_t)(bits >> 22) - first;
    return i > 0 ? i : 0;
}
/* table[i] per lane, i in [0, 8) */
static inline vf vf_lookup8(const float *table, vi i) { return table[i]; }
static inline vf vf_select(mf m, vf if_true, vf if_false) { return m ? if_true : if_false; }

/* max(m, v) where v is not NaN, else m (m is never NaN); no flag */
static inline vf vf_max_skip_nan(vf m, vf v) { return vf_max(m, vf_select(vf_isnan(v), vf_set(-INFINITY), v)); }
static inline vd vd_max_skip_nan(vd m, vd v) { return vd_max(m, vd_select(vd_isnan(v), vd_set(-INFINITY), v)); }
/* v widened to double, added to acc[0] (one float per vector here) */
static inline void vf_add_widened(vd *acc, vf v) { acc[0] += (double)v; }
/* a[0] b[0] in double (exact), added to acc[0] */
static inline void vf_add_widened_product_at(vd *acc, const float *a, const float *b) { acc[0] += (double)*a * (double)*b; }

/* v 2^k for integer-valued k, exact where the result is normal */
static inline vd vd_scale_normal(vd v, vd k) { return vd_mul(v, vd_pow2(k)); }
static inline vf vf_scale_normal(vf v, vf k) { return vf_mul(v, vf_pow2(k)); }

/* the fast GELU's lookups: bits(a) >> 22 (exponent and first mantissa bit), no
 * offset and no clamp; a 16-entry table whose halves are equal, read at i mod 8 */
static inline vi vf_half_binade_bits(vf a) {
    uint32_t bits;
    memcpy(&bits, &a, sizeof bits);
    return (vi)(bits >> 22);
}
/* bits(max(a, floor)) >> 22 for a >= 0, the maximum taken on the integers (no flag) */
static inline vi vf_half_binade_bits_above(vf a, vf floor) {
    int32_t bits, low;
    memcpy(&bits, &a, sizeof bits);
    memcpy(&low, &floor, sizeof low);
    return (vi)((uint32_t)(bits > low ? bits : low) >> 22);
}
static inline vf vf_lookup8_wrap(const float *table16, vi i) { return table16[i & 7]; }
/* table16[i mod 16] */
static inline vf vf_lookup16(const float *table16, vi i) { return table16[i & 15]; }
/* v 2^k with ks = 0x1.8p23 + k (the shifter's sum, k integer, |k| < 256), by
 * adding k to v's exponent field: exact where v 2^k is normal, or k = 0 */
static inline vf vf_scale_shifted(vf v, vf ks) {
    uint32_t bits, k;
    memcpy(&bits, &v, sizeof bits);
    memcpy(&k, &ks, sizeof k);
    bits += k << 23;
    memcpy(&v, &bits, sizeof v);
    return v;
}
/* with ks = 0x1.8p23 + k as above (|k| < 2^21): the bits of ks, whose low
 * bits are k mod 2^n (a table's index: vf_lookup16 reads the low four) */
static inline vi vf_shifter_bits(vf ks) {
    int32_t bits;
    memcpy(&bits, &ks, sizeof bits);
    return bits;
}

#endif
