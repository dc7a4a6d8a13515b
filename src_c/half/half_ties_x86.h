/* Which float32 lanes lie exactly on a float16 tie, for the AVX2 (8 lanes,
 * all ones) and AVX-512 (16 lanes, a mask) loops of convert16.c and
 * piecewise16.c that recompute those lanes. */
#ifndef FA_HALF_TIES_X86_H
#define FA_HALF_TIES_X86_H
#include <immintrin.h>

/* A tie is 0x1000 in the low 13 bits in float16's normal range. Below 2^-14
 * the ties, odd multiples of 2^-25, are those of [2^-14, 2^-13) moved down
 * by 2^-14: |x| + 2^-14 keeps them exactly, with those low bits. The sum may
 * round a value within 2^-38 of a tie onto one, which is then marked too, as
 * may be a value past float16's range (recomputed to the same infinity) or a
 * NaN whose low payload bits match (recomputed to the same NaN): a caller
 * recomputes a marked lane, so marking more costs only time. */
__attribute__((target("avx2,fma,f16c"))) static inline __m256i half_exact_tie_lanes_avx2(__m256 x) {
    const __m256 smallest_normal = _mm256_set1_ps(0x1p-14f);
    __m256 magnitude = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    __m256 shift = _mm256_and_ps(_mm256_cmp_ps(magnitude, smallest_normal, _CMP_LT_OQ), smallest_normal);
    __m256i low = _mm256_and_si256(_mm256_castps_si256(_mm256_add_ps(magnitude, shift)), _mm256_set1_epi32(0x1fff));
    return _mm256_cmpeq_epi32(low, _mm256_set1_epi32(0x1000));
}
__attribute__((target("avx512f"))) static inline __mmask16 half_exact_tie_lanes_avx512(__m512 x) {
    const __m512 smallest_normal = _mm512_set1_ps(0x1p-14f);
    __m512 magnitude = _mm512_abs_ps(x);
    __m512 shift = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(magnitude, smallest_normal, _CMP_LT_OQ), smallest_normal);
    __m512i low = _mm512_and_si512(_mm512_castps_si512(_mm512_add_ps(magnitude, shift)), _mm512_set1_epi32(0x1fff));
    return _mm512_cmpeq_epi32_mask(low, _mm512_set1_epi32(0x1000));
}
#endif
