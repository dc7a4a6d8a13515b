/* The AVX-512 kernels of kernels_avx512.c and simd_avx512.h, compiled against
 * SIMDe's portable definitions of the AVX-512F intrinsics (on AVX2 + FMA
 * hardware) instead of the real instructions. A CPU without AVX-512 thus
 * still runs and tests the exact AVX-512 source; on a CPU with AVX-512 the
 * tests check both give the same bits. Selected only by
 * set_isa("avx512-emulated"); never chosen by default.
 *
 * SIMDe's own masked loads and stores touch all 64 bytes (its masked store
 * writes zeros past the mask), so the four masked memory operations are
 * replaced here by lane loops that touch only the masked lanes. */
#if (defined(__x86_64__) || defined(_M_X64)) && defined(FA_HAVE_AVX512_EMULATION)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("avx2,fma")
#elif defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#endif
#if defined(__GNUC__)
/* only static inline functions pass 512-bit vectors here: no ABI is exposed */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#include <immintrin.h>
#include <simde/x86/avx512.h>

#define FA_AVX512_EMULATED 1
#define FA_ISA_SUFFIX avx512_emulated

#define __m512d simde__m512d
#define __m512 simde__m512
#define __m512i simde__m512i

static inline simde__m512d fa_emu_maskz_loadu_pd_(__mmask8 m, const double *p) {
    simde__m512d_private r = simde__m512d_to_private(simde_mm512_setzero_pd());
    for (int i = 0; i < 8; i++)
        if (m >> i & 1) r.f64[i] = p[i];
    return simde__m512d_from_private(r);
}
static inline void fa_emu_mask_storeu_pd_(double *p, __mmask8 m, simde__m512d v) {
    simde__m512d_private r = simde__m512d_to_private(v);
    for (int i = 0; i < 8; i++)
        if (m >> i & 1) p[i] = r.f64[i];
}
static inline simde__m512 fa_emu_maskz_loadu_ps_(__mmask16 m, const float *p) {
    simde__m512_private r = simde__m512_to_private(simde_mm512_setzero_ps());
    for (int i = 0; i < 16; i++)
        if (m >> i & 1) r.f32[i] = p[i];
    return simde__m512_from_private(r);
}
static inline void fa_emu_mask_storeu_ps_(float *p, __mmask16 m, simde__m512 v) {
    simde__m512_private r = simde__m512_to_private(v);
    for (int i = 0; i < 16; i++)
        if (m >> i & 1) p[i] = r.f32[i];
}

/* double <-> float conversions per 256-bit half (this SIMDe has none for
 * 512 bits); each rounds as the instruction does */
static inline __m256 fa_emu_cvtpd_ps_(simde__m512d a) {
    __m128 lo = _mm256_cvtpd_ps(simde_mm512_extractf64x4_pd(a, 0));
    return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), _mm256_cvtpd_ps(simde_mm512_extractf64x4_pd(a, 1)), 1);
}
static inline simde__m512d fa_emu_cvtps_pd_(__m256 a) {
    simde__m512d r = simde_mm512_castpd256_pd512(_mm256_cvtps_pd(_mm256_castps256_ps128(a)));
    return simde_mm512_insertf64x4(r, _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)), 1);
}

/* Fused multiply-add per 256-bit half: SIMDe fuses only when it detects FMA
 * at compile time (clang's target attributes do not tell it), and an unfused
 * a*b+c would give different bits from the real instruction. c - a*b the
 * same way, by the half-width instruction rather than a negated a: a NaN a
 * keeps its sign, as in the 512-bit instruction. */
#define FA_EMU_FMA_PD_(name, op256)                                                                            \
    static inline simde__m512d name(simde__m512d a, simde__m512d b, simde__m512d c) {                      \
        simde__m512d r = simde_mm512_castpd256_pd512(op256(                                                \
            simde_mm512_extractf64x4_pd(a, 0), simde_mm512_extractf64x4_pd(b, 0),                         \
            simde_mm512_extractf64x4_pd(c, 0)));                                                           \
        return simde_mm512_insertf64x4(r, op256(simde_mm512_extractf64x4_pd(a, 1),                         \
                                                simde_mm512_extractf64x4_pd(b, 1),                         \
                                                simde_mm512_extractf64x4_pd(c, 1)), 1);                    \
    }
#define FA_EMU_FMA_PS_(name, op256)                                                                            \
    static inline simde__m512 name(simde__m512 a, simde__m512 b, simde__m512 c) {                          \
        simde__m512d a2 = simde_mm512_castps_pd(a), b2 = simde_mm512_castps_pd(b),                         \
                     c2 = simde_mm512_castps_pd(c);                                                        \
        simde__m512d r = simde_mm512_castpd256_pd512(_mm256_castps_pd(op256(                               \
            _mm256_castpd_ps(simde_mm512_extractf64x4_pd(a2, 0)),                                          \
            _mm256_castpd_ps(simde_mm512_extractf64x4_pd(b2, 0)),                                          \
            _mm256_castpd_ps(simde_mm512_extractf64x4_pd(c2, 0)))));                                       \
        r = simde_mm512_insertf64x4(r, _mm256_castps_pd(op256(                                             \
            _mm256_castpd_ps(simde_mm512_extractf64x4_pd(a2, 1)),                                          \
            _mm256_castpd_ps(simde_mm512_extractf64x4_pd(b2, 1)),                                          \
            _mm256_castpd_ps(simde_mm512_extractf64x4_pd(c2, 1)))), 1);                                    \
        return simde_mm512_castpd_ps(r);                                                                   \
    }
FA_EMU_FMA_PD_(fa_emu_fmadd_pd_, _mm256_fmadd_pd)
FA_EMU_FMA_PS_(fa_emu_fmadd_ps_, _mm256_fmadd_ps)
FA_EMU_FMA_PD_(fa_emu_fnmadd_pd_, _mm256_fnmadd_pd)
FA_EMU_FMA_PS_(fa_emu_fnmadd_ps_, _mm256_fnmadd_ps)
#undef FA_EMU_FMA_PD_
#undef FA_EMU_FMA_PS_

/* vscalef for integer-valued b and a normal result: a times 2^b built from
 * its exponent bits, exact, as the instruction is (SIMDe's portable version
 * goes through a floating-point exp2) */
static inline simde__m512 fa_emu_scalef_ps_(simde__m512 a, simde__m512 b) {
    simde__m512i e = simde_mm512_add_epi32(simde_mm512_cvttps_epi32(b), simde_mm512_set1_epi32(127));
    return simde_mm512_mul_ps(a, simde_mm512_castsi512_ps(simde_mm512_slli_epi32(e, 23)));
}
static inline simde__m512d fa_emu_scalef_pd_(simde__m512d a, simde__m512d b) {
    simde__m512i bits = simde_mm512_castpd_si512(simde_mm512_add_pd(b, simde_mm512_set1_pd(0x1.8p52)));
    bits = simde_mm512_add_epi64(bits, simde_mm512_set1_epi64(1023 - 0x4338000000000000LL));
    return simde_mm512_mul_pd(a, simde_mm512_castsi512_pd(simde_mm512_slli_epi64(bits, 52)));
}

/* vfmsub: a b - c, where a NaN c keeps its sign (the instruction does not
 * negate a NaN) */
static inline simde__m512 fa_emu_fmsub_ps_(simde__m512 a, simde__m512 b, simde__m512 c) {
    simde__m512 minus_c = simde_mm512_castsi512_ps(
        simde_mm512_xor_si512(simde_mm512_castps_si512(c), simde_mm512_set1_epi32((int)0x80000000u)));
    simde__mmask16 nan = simde_mm512_cmp_ps_mask(c, c, SIMDE_CMP_UNORD_Q);
    return fa_emu_fmadd_ps_(a, b, simde_mm512_mask_mov_ps(minus_c, nan, c));
}
static inline simde__m512d fa_emu_fmsub_pd_(simde__m512d a, simde__m512d b, simde__m512d c) {
    simde__m512i sign = simde_mm512_set1_epi64((long long)0x8000000000000000ULL);
    simde__m512d minus_c = simde_mm512_castsi512_pd(simde_mm512_xor_si512(simde_mm512_castpd_si512(c), sign));
    simde__mmask8 nan = simde_mm512_cmp_pd_mask(c, c, SIMDE_CMP_UNORD_Q);
    return fa_emu_fmadd_pd_(a, b, simde_mm512_mask_mov_pd(minus_c, nan, c));
}

/* vminps with {sae}: the second operand where either is NaN, no flag (an
 * ordered quiet comparison and a blend; SIMDe's min would signal) */
static inline simde__m512 fa_emu_min_round_ps_(simde__m512 a, simde__m512 b, int sae) {
    (void)sae;
    return simde_mm512_mask_blend_ps(simde_mm512_cmp_ps_mask(a, b, SIMDE_CMP_LT_OQ), b, a);
}

static inline simde__m512 fa_emu_max_round_ps_(simde__m512 a, simde__m512 b, int sae) {
    (void)sae;
    return simde_mm512_mask_blend_ps(simde_mm512_cmp_ps_mask(a, b, SIMDE_CMP_GT_OQ), b, a);
}
static inline simde__m512d fa_emu_max_round_pd_(simde__m512d a, simde__m512d b, int sae) {
    (void)sae;
    return simde_mm512_mask_blend_pd(simde_mm512_cmp_pd_mask(a, b, SIMDE_CMP_GT_OQ), b, a);
}

/* Some of these are macros in the compiler's own headers: replace them all. */
#undef _mm512_maskz_loadu_pd
#define _mm512_maskz_loadu_pd fa_emu_maskz_loadu_pd_
#undef _mm512_mask_storeu_pd
#define _mm512_mask_storeu_pd fa_emu_mask_storeu_pd_
#undef _mm512_maskz_loadu_ps
#define _mm512_maskz_loadu_ps fa_emu_maskz_loadu_ps_
#undef _mm512_mask_storeu_ps
#define _mm512_mask_storeu_ps fa_emu_mask_storeu_ps_
#undef _mm512_set1_pd
#define _mm512_set1_pd simde_mm512_set1_pd
#undef _mm512_loadu_pd
#define _mm512_loadu_pd simde_mm512_loadu_pd
#undef _mm512_storeu_pd
#define _mm512_storeu_pd simde_mm512_storeu_pd
#undef _mm512_add_pd
#define _mm512_add_pd simde_mm512_add_pd
#undef _mm512_sub_pd
#define _mm512_sub_pd simde_mm512_sub_pd
#undef _mm512_mul_pd
#define _mm512_mul_pd simde_mm512_mul_pd
#undef _mm512_div_pd
#define _mm512_div_pd simde_mm512_div_pd
#undef _mm512_fmadd_pd
#define _mm512_fmadd_pd fa_emu_fmadd_pd_
#undef _mm512_fmsub_pd
#define _mm512_fmsub_pd fa_emu_fmsub_pd_
#undef _mm512_min_pd
#define _mm512_min_pd simde_mm512_min_pd
#undef _mm512_castsi512_pd
#define _mm512_castsi512_pd simde_mm512_castsi512_pd
#undef _mm512_castpd_si512
#define _mm512_castpd_si512 simde_mm512_castpd_si512
#undef _mm512_and_epi64
#define _mm512_and_epi64 simde_mm512_and_epi64
#undef _mm512_set1_epi64
#define _mm512_set1_epi64 simde_mm512_set1_epi64
#undef _mm512_cmp_pd_mask
#define _mm512_cmp_pd_mask simde_mm512_cmp_pd_mask
#undef _mm512_mask_blend_pd
#define _mm512_mask_blend_pd simde_mm512_mask_blend_pd
#undef _mm512_add_epi64
#define _mm512_add_epi64 simde_mm512_add_epi64
#undef _mm512_slli_epi64
#define _mm512_slli_epi64 simde_mm512_slli_epi64
#undef _mm512_loadu_ps
#define _mm512_loadu_ps simde_mm512_loadu_ps
#undef _mm512_storeu_ps
#define _mm512_storeu_ps simde_mm512_storeu_ps
#undef _mm512_set1_ps
#define _mm512_set1_ps simde_mm512_set1_ps
#undef _mm512_cmp_ps_mask
#define _mm512_cmp_ps_mask simde_mm512_cmp_ps_mask
#undef _mm512_mask_blend_ps
#define _mm512_mask_blend_ps simde_mm512_mask_blend_ps
#undef _mm512_add_ps
#define _mm512_add_ps simde_mm512_add_ps
#undef _mm512_sub_ps
#define _mm512_sub_ps simde_mm512_sub_ps
#undef _mm512_mul_ps
#define _mm512_mul_ps simde_mm512_mul_ps
#undef _mm512_div_ps
#define _mm512_div_ps simde_mm512_div_ps
#undef _mm512_min_ps
#define _mm512_min_ps simde_mm512_min_ps
#undef _mm512_max_ps
#define _mm512_max_ps simde_mm512_max_ps
#undef _mm512_castps_si512
#define _mm512_castps_si512 simde_mm512_castps_si512
#undef _mm512_castsi512_ps
#define _mm512_castsi512_ps simde_mm512_castsi512_ps
#undef _mm512_and_epi32
#define _mm512_and_epi32 simde_mm512_and_epi32
#undef _mm512_or_epi32
#define _mm512_or_epi32 simde_mm512_or_epi32
#undef _mm512_set1_epi32
#define _mm512_set1_epi32 simde_mm512_set1_epi32
#undef _mm512_add_epi32
#define _mm512_add_epi32 simde_mm512_add_epi32
#undef _mm512_slli_epi32
#define _mm512_slli_epi32 simde_mm512_slli_epi32
#undef _mm512_cvttps_epi32
#define _mm512_cvttps_epi32 simde_mm512_cvttps_epi32
#define _mm512_cvtpd_ps fa_emu_cvtpd_ps_
#define _mm512_cvtps_pd fa_emu_cvtps_pd_
#undef _mm512_fmadd_ps
#define _mm512_fmadd_ps fa_emu_fmadd_ps_
#undef _mm512_fnmadd_ps
#define _mm512_fnmadd_ps fa_emu_fnmadd_ps_
#undef _mm512_fmsub_ps
#define _mm512_fmsub_ps fa_emu_fmsub_ps_
#undef _mm512_scalef_ps
#define _mm512_scalef_ps fa_emu_scalef_ps_
#undef _mm512_scalef_pd
#define _mm512_scalef_pd fa_emu_scalef_pd_
#undef _mm512_srli_epi32
#define _mm512_srli_epi32 simde_mm512_srli_epi32
#undef _mm512_sub_epi32
#define _mm512_sub_epi32 simde_mm512_sub_epi32
#undef _mm512_max_epi32
#define _mm512_max_epi32 simde_mm512_max_epi32
#undef _mm512_setzero_si512
#define _mm512_setzero_si512 simde_mm512_setzero_si512
#undef _mm512_permutexvar_ps
#define _mm512_permutexvar_ps simde_mm512_permutexvar_ps
#undef _mm512_fnmadd_pd
#define _mm512_fnmadd_pd fa_emu_fnmadd_pd_
#undef _mm512_max_pd
#define _mm512_max_pd simde_mm512_max_pd
#undef _mm512_or_epi64
#define _mm512_or_epi64 simde_mm512_or_epi64
#undef _mm512_srli_epi64
#define _mm512_srli_epi64 simde_mm512_srli_epi64
#undef _mm512_sub_epi64
#define _mm512_sub_epi64 simde_mm512_sub_epi64
#undef _mm512_max_epi64
#define _mm512_max_epi64 simde_mm512_max_epi64
#undef _mm512_permutexvar_pd
#define _mm512_permutexvar_pd simde_mm512_permutexvar_pd
#undef _mm512_ternarylogic_epi32
#define _mm512_ternarylogic_epi32 simde_mm512_ternarylogic_epi32
#undef _mm512_ternarylogic_epi64
#define _mm512_ternarylogic_epi64 simde_mm512_ternarylogic_epi64
#undef _mm512_min_round_ps
#define _mm512_min_round_ps fa_emu_min_round_ps_
#undef _mm512_max_round_ps
#define _mm512_max_round_ps fa_emu_max_round_ps_
#undef _mm512_max_round_pd
#define _mm512_max_round_pd fa_emu_max_round_pd_
#undef _mm512_castps512_ps256
#define _mm512_castps512_ps256 simde_mm512_castps512_ps256
#undef _mm512_castps_pd
#define _mm512_castps_pd simde_mm512_castps_pd
#undef _mm512_extractf64x4_pd
#define _mm512_extractf64x4_pd simde_mm512_extractf64x4_pd
/* no streaming stores in SIMDe: plain stores (same values) */
#undef _mm512_stream_ps
#define _mm512_stream_ps simde_mm512_storeu_ps
#undef _mm512_stream_pd
#define _mm512_stream_pd simde_mm512_storeu_pd

/* The algorithms' helpers are inlined where gcc finds it worth it, not
 * always (kernels.inc's default): with SIMDe's operations (each a pair of
 * AVX2 ones or a lane loop) expanded in place, forced inlining made this the
 * build's slowest file by far (4 minutes at -O3, 18 seconds this way). The
 * kernels run about 1.7x slower; only the tests run them. */
#if !defined(FA_INLINE)
#define FA_INLINE static inline
#endif
#include "simd/simd_avx512.h"
#include "kernels/kernels.inc"
#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
