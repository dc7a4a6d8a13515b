/* Vector layer, AArch64 Advanced SIMD (NEON) flavour: 2 doubles / 4 floats
 * per register. Same interface as simd_scalar.h. AdvSIMD, its FMA and its
 * division are part of every AArch64 CPU, so this set needs no detection.
 * Masks are all-ones lanes. Every operation is the IEEE operation rounded
 * once that the x86 layers perform, so the bits are theirs; where NEON's own
 * instruction differs (min and max with a NaN operand), the x86 rule is
 * spelled out with a compare and a select. NEON has no masked loads and
 * stores: tails go through a register-sized buffer and touch only the n
 * elements asked for. */
#ifndef FA_SIMD_H
#define FA_SIMD_H
#include <arm_neon.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FA_ISA_SUFFIX neon
#define VD_W 2
#define VF_W 4

typedef float64x2_t vd;
typedef uint64x2_t md;
typedef float32x4_t vf;
typedef uint32x4_t mf;
typedef int32x4_t vi;
typedef int64x2_t vdi;

static inline vd vd_set(double c) { return vdupq_n_f64(c); }
static inline vd vd_load(const double *p) { return vld1q_f64(p); }
static inline vd vd_loadn(const double *p, ptrdiff_t n) {
    double lanes[VD_W] = {0};
    memcpy(lanes, p, (size_t)n * sizeof *p);
    return vld1q_f64(lanes);
}
static inline void vd_store(double *p, vd v) { vst1q_f64(p, v); }
static inline void vd_storen(double *p, vd v, ptrdiff_t n) {
    double lanes[VD_W];
    vst1q_f64(lanes, v);
    memcpy(p, lanes, (size_t)n * sizeof *p);
}
static inline vd vd_add(vd a, vd b) { return vaddq_f64(a, b); }
static inline vd vd_sub(vd a, vd b) { return vsubq_f64(a, b); }
static inline vd vd_mul(vd a, vd b) { return vmulq_f64(a, b); }
static inline vd vd_div(vd a, vd b) { return vdivq_f64(a, b); }
/* a b + c and c - a b, rounded once */
static inline vd vd_fma(vd a, vd b, vd c) { return vfmaq_f64(c, a, b); }
/* (FMLS negates a NaN a too: c - a b as x86's vfnmadd gives it keeps its sign) */
static inline vd vd_fnma(vd a, vd b, vd c) { /* NaN by integer compare: no flag, whatever the compiler makes of it */
    uint64x2_t nan = vcgtq_u64(vandq_u64(vreinterpretq_u64_f64(a), vdupq_n_u64(0x7fffffffffffffffULL)),
                               vdupq_n_u64(0x7ff0000000000000ULL));
    return vfmaq_f64(c, vbslq_f64(nan, a, vnegq_f64(a)), b);
}
/* a b - c as x86's vfmsub gives it: -c, except that a NaN c keeps its sign */
static inline vd vd_fms(vd a, vd b, vd c) { return vfmaq_f64(vbslq_f64(vceqq_f64(c, c), vnegq_f64(c), c), a, b); }
/* x86's min and max: b unless a is strictly smaller (larger); b where either is NaN */
static inline vd vd_min(vd a, vd b) { return vbslq_f64(vcltq_f64(a, b), a, b); }
static inline vd vd_max(vd a, vd b) { return vbslq_f64(vcgtq_f64(a, b), a, b); }
/* a rounded to float32's precision and range (to nearest, even) */
static inline vd vd_round_float(vd a) { return vcvt_f64_f32(vcvt_f32_f64(a)); }
static inline vd vd_copysign(vd mag, vd s) { return vbslq_f64(vdupq_n_u64(0x8000000000000000ull), s, mag); }
/* quiet compares: as vf_lt's */
static inline md fa_neon_not_nan_d_(vd a) {
    return vcleq_u64(vandq_u64(vreinterpretq_u64_f64(a), vdupq_n_u64(0x7fffffffffffffffull)),
                     vdupq_n_u64(0x7ff0000000000000ull));
}
static inline md fa_neon_ordered_d_(vd a, vd b) { return vandq_u64(fa_neon_not_nan_d_(a), fa_neon_not_nan_d_(b)); }
static inline vd fa_neon_keep_d_(vd a, md m) { return vreinterpretq_f64_u64(vandq_u64(vreinterpretq_u64_f64(a), m)); }
static inline md vd_gt_or_nan(vd a, vd b) {
    md both = fa_neon_ordered_d_(a, b);
    return vreinterpretq_u64_u32(vornq_u32(vreinterpretq_u32_u64(vcgtq_f64(fa_neon_keep_d_(a, both), fa_neon_keep_d_(b, both))),
                                           vreinterpretq_u32_u64(both)));
}
static inline int md_any(md m) { return vmaxvq_u32(vreinterpretq_u32_u64(m)) != 0; }
static inline vd vd_abs(vd a) { return vabsq_f64(a); }
static inline md vd_lt(vd a, vd b) {
    md both = fa_neon_ordered_d_(a, b);
    return vcltq_f64(fa_neon_keep_d_(a, both), fa_neon_keep_d_(b, both));
}
static inline md vd_gt(vd a, vd b) { return vd_lt(b, a); }
static inline md vd_isnan(vd a) { return vreinterpretq_u64_u32(vmvnq_u32(vreinterpretq_u32_u64(fa_neon_not_nan_d_(a)))); }
static inline md md_or(md a, md b) { return vorrq_u64(a, b); }
/* max(biased exponent of a - first, 0), for a >= 0 */
static inline vdi vd_binade_index(vd a, int first) {
    int64x2_t e = vsubq_s64(vreinterpretq_s64_u64(vshrq_n_u64(vreinterpretq_u64_f64(a), 52)), vdupq_n_s64(first));
    return vbslq_s64(vcgtq_s64(e, vdupq_n_s64(0)), e, vdupq_n_s64(0));
}
/* table[i] per lane, i in [0, 8): a byte shuffle over the table's 64 bytes,
 * bytes 8i .. 8i + 7 for each lane */
static inline vd vd_lookup8(const double *table, vdi i) {
    uint8x16x4_t bytes = {{vld1q_u8((const uint8_t *)table), vld1q_u8((const uint8_t *)(table + 2)),
                           vld1q_u8((const uint8_t *)(table + 4)), vld1q_u8((const uint8_t *)(table + 6))}};
    static const uint8_t spread[16] = {0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8};
    static const uint8_t within[16] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7};
    uint8x16_t first = vqtbl1q_u8(vreinterpretq_u8_s64(vshlq_n_s64(i, 3)), vld1q_u8(spread));
    return vreinterpretq_f64_u8(vqtbl4q_u8(bytes, vaddq_u8(first, vld1q_u8(within))));
}
static inline vd vd_select(md m, vd if_true, vd if_false) { return vbslq_f64(m, if_true, if_false); }
/* 2^k for integer-valued k in [-1022, 1023]: k + 1.5 2^52 holds k in its low
 * mantissa bits; k + 1023 moves into the exponent */
static inline vd vd_pow2(vd k) {
    int64x2_t bits = vreinterpretq_s64_f64(vaddq_f64(k, vdupq_n_f64(0x1.8p52)));
    bits = vaddq_s64(bits, vdupq_n_s64(1023 - 0x4338000000000000LL));
    return vreinterpretq_f64_s64(vshlq_n_s64(bits, 52));
}

/* no streaming stores here (FA_STREAM_ALIGN 1: the kernels never stream) */
#define FA_STREAM_ALIGN 1
static inline void vf_stream(float *p, vf v) { vst1q_f32(p, v); }
static inline void vd_stream(double *p, vd v) { vst1q_f64(p, v); }
static inline void fa_stream_fence(void) {}
static inline vf vf_set(float c) { return vdupq_n_f32(c); }
static inline vf vf_load(const float *p) { return vld1q_f32(p); }
static inline vf vf_loadn(const float *p, ptrdiff_t n) {
    float lanes[VF_W] = {0};
    memcpy(lanes, p, (size_t)n * sizeof *p);
    return vld1q_f32(lanes);
}
static inline void vf_store(float *p, vf v) { vst1q_f32(p, v); }
static inline void vf_storen(float *p, vf v, ptrdiff_t n) {
    float lanes[VF_W];
    vst1q_f32(lanes, v);
    memcpy(p, lanes, (size_t)n * sizeof *p);
}
static inline vf vf_add(vf a, vf b) { return vaddq_f32(a, b); }
static inline vf vf_sub(vf a, vf b) { return vsubq_f32(a, b); }
static inline vf vf_mul(vf a, vf b) { return vmulq_f32(a, b); }
static inline vf vf_div(vf a, vf b) { return vdivq_f32(a, b); }
static inline vf vf_fma(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); }
static inline vf vf_fnma(vf a, vf b, vf c) {
    uint32x4_t nan = vcgtq_u32(vandq_u32(vreinterpretq_u32_f32(a), vdupq_n_u32(0x7fffffffu)), vdupq_n_u32(0x7f800000u));
    return vfmaq_f32(c, vbslq_f32(nan, a, vnegq_f32(a)), b);
}
static inline vf vf_fms(vf a, vf b, vf c) { return vfmaq_f32(vbslq_f32(vceqq_f32(c, c), vnegq_f32(c), c), a, b); }
static inline vf vf_min(vf a, vf b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
static inline vf vf_max(vf a, vf b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
static inline vf vf_abs(vf a) { return vabsq_f32(a); }
/* min(|a|, c) for a positive finite c; a NaN passes (as |NaN|), and a quiet
 * one raises no flag */
static inline vf vf_abs_clamp_quiet(vf a, vf c) {
    /* FMIN propagates a NaN and signals only a signaling one */
    return vminq_f32(vabsq_f32(a), c);
}
static inline vf vf_copysign(vf mag, vf s) { return vbslq_f32(vdupq_n_u32(0x80000000u), s, mag); }
/* Quiet compares, as the x86 layers': AArch64's FCMGT/FCMGE raise 'invalid' on
 * a quiet NaN, so NaN lanes are zeroed first. Which lanes are NaN is asked of
 * the bits, as integers: clang (before its AArch64 strict floating point)
 * turns FCMEQ's a == a into the ordered compares it has to avoid. */
static inline mf fa_neon_not_nan_f_(vf a) {
    return vcleq_u32(vandq_u32(vreinterpretq_u32_f32(a), vdupq_n_u32(0x7fffffffu)), vdupq_n_u32(0x7f800000u));
}
static inline mf fa_neon_ordered_f_(vf a, vf b) { return vandq_u32(fa_neon_not_nan_f_(a), fa_neon_not_nan_f_(b)); }
static inline vf fa_neon_keep_f_(vf a, mf m) { return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(a), m)); }
static inline mf vf_lt(vf a, vf b) {
    mf both = fa_neon_ordered_f_(a, b);
    return vcltq_f32(fa_neon_keep_f_(a, both), fa_neon_keep_f_(b, both));
}
static inline mf vf_gt(vf a, vf b) { return vf_lt(b, a); }
static inline mf vf_gt_or_nan(vf a, vf b) {
    mf both = fa_neon_ordered_f_(a, b);
    return vornq_u32(vcgtq_f32(fa_neon_keep_f_(a, both), fa_neon_keep_f_(b, both)), both);
}
static inline mf vf_isnan(vf a) { return vmvnq_u32(fa_neon_not_nan_f_(a)); }
static inline mf mf_or(mf a, mf b) { return vorrq_u32(a, b); }
static inline int mf_any(mf m) { return vmaxvq_u32(m) != 0; }
/* 2^k for integer-valued k in [-126, 127] */
static inline vf vf_pow2(vf k) {
    int32x4_t e = vaddq_s32(vcvtq_s32_f32(k), vdupq_n_s32(127));
    return vreinterpretq_f32_s32(vshlq_n_s32(e, 23));
}
static inline vi vf_binade_index(vf a, int first) {
    int32x4_t e = vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_f32(a), 23));
    return vmaxq_s32(vsubq_s32(e, vdupq_n_s32(first)), vdupq_n_s32(0));
}
static inline vi vf_half_binade_index(vf a, int first) {
    int32x4_t e = vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_f32(a), 22));
    return vmaxq_s32(vsubq_s32(e, vdupq_n_s32(first)), vdupq_n_s32(0));
}
/* table[i] per lane, i in [0, 8): bytes 4i .. 4i + 3 of the table's 32 */
static inline vf vf_lookup8(const float *table, vi i) {
    uint8x16x2_t bytes = {{vld1q_u8((const uint8_t *)table), vld1q_u8((const uint8_t *)(table + 4))}};
    static const uint8_t spread[16] = {0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12};
    static const uint8_t within[16] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
    uint8x16_t first = vqtbl1q_u8(vreinterpretq_u8_s32(vshlq_n_s32(i, 2)), vld1q_u8(spread));
    return vreinterpretq_f32_u8(vqtbl2q_u8(bytes, vaddq_u8(first, vld1q_u8(within))));
}
static inline vf vf_select(mf m, vf if_true, vf if_false) { return vbslq_f32(m, if_true, if_false); }

/* max(m, v) where v is not NaN, else m (m is never NaN); no flag */
static inline vf vf_max_skip_nan(vf m, vf v) { return vf_max(m, vf_select(vf_isnan(v), vf_set(-INFINITY), v)); }
static inline vd vd_max_skip_nan(vd m, vd v) { return vd_max(m, vd_select(vd_isnan(v), vd_set(-INFINITY), v)); }
/* v's lanes, widened to double, added in order to acc[0] and acc[1] */
static inline void vf_add_widened(vd *acc, vf v) {
    acc[0] = vaddq_f64(acc[0], vcvt_f64_f32(vget_low_f32(v)));
    acc[1] = vaddq_f64(acc[1], vcvt_high_f64_f32(v));
}
/* a b lane by lane for the floats at a and b, the products exact in double,
 * added in order to acc[0] and acc[1] by one FMA (the same bits as the add
 * of the exact product) */
static inline void vf_add_widened_product_at(vd *acc, const float *a, const float *b) {
    vf va = vf_load(a), vb = vf_load(b);
    acc[0] = vfmaq_f64(acc[0], vcvt_f64_f32(vget_low_f32(va)), vcvt_f64_f32(vget_low_f32(vb)));
    acc[1] = vfmaq_f64(acc[1], vcvt_high_f64_f32(va), vcvt_high_f64_f32(vb));
}

/* v 2^k for integer-valued k, exact where the result is normal */
static inline vd vd_scale_normal(vd v, vd k) { return vd_mul(v, vd_pow2(k)); }
static inline vf vf_scale_normal(vf v, vf k) { return vf_mul(v, vf_pow2(k)); }

/* the fast GELU's lookups: bits(a) >> 22 (exponent and first mantissa bit), no
 * offset and no clamp; a 16-entry table whose halves are equal, read at i mod 8 */
static inline vi vf_half_binade_bits(vf a) { return vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_f32(a), 22)); }
/* bits(max(a, floor)) >> 22 for a >= 0, the maximum taken on the integers (no flag) */
static inline vi vf_half_binade_bits_above(vf a, vf floor) {
    int32x4_t bits = vmaxq_s32(vreinterpretq_s32_f32(a), vreinterpretq_s32_f32(floor));
    return vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_s32(bits), 22));
}
static inline vf vf_lookup8_wrap(const float *table16, vi i) { return vf_lookup8(table16, vandq_s32(i, vdupq_n_s32(7))); }
/* table16[i mod 16] per lane: bytes 4i .. 4i + 3 of the table's 64 */
static inline vf vf_lookup16(const float *table16, vi i) {
    const uint8_t *t = (const uint8_t *)table16;
    uint8x16x4_t bytes = {{vld1q_u8(t), vld1q_u8(t + 16), vld1q_u8(t + 32), vld1q_u8(t + 48)}};
    static const uint8_t spread[16] = {0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12};
    static const uint8_t within[16] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
    int32x4_t offsets = vshlq_n_s32(vandq_s32(i, vdupq_n_s32(15)), 2);
    uint8x16_t first = vqtbl1q_u8(vreinterpretq_u8_s32(offsets), vld1q_u8(spread));
    return vreinterpretq_f32_u8(vqtbl4q_u8(bytes, vaddq_u8(first, vld1q_u8(within))));
}
/* v 2^k with ks = 0x1.8p23 + k (the shifter's sum, k integer, |k| < 256), by
 * adding k to v's exponent field: exact where v 2^k is normal, or k = 0 */
static inline vf vf_scale_shifted(vf v, vf ks) {
    uint32x4_t k = vshlq_n_u32(vreinterpretq_u32_f32(ks), 23);
    return vreinterpretq_f32_u32(vaddq_u32(vreinterpretq_u32_f32(v), k));
}
/* with ks = 0x1.8p23 + k as above (|k| < 2^21): the bits of ks, whose low
 * bits are k mod 2^n (a table's index: vf_lookup16 reads the low four) */
static inline vi vf_shifter_bits(vf ks) { return vreinterpretq_s32_f32(ks); }

#endif
