/* Sixteen float32 entries of a table indexed by 16-bit values (table16.h),
 * for sixteen consecutive indices: one gather, or sixteen scalar loads, as
 * fa_table16_gathers() chooses for the CPU. `gather` is a constant where
 * the loops inline this, so each loop is built both ways. */
#ifndef FA_LOOKUP_AVX512_H
#define FA_LOOKUP_AVX512_H
#include <immintrin.h>
#include <stdint.h>

__attribute__((target("avx512f"), always_inline)) static inline __m512 fa_lookup16_ps_avx512(const float *table,
                                                                                         const uint16_t *at,
                                                                                         int gather) {
    if (gather) return _mm512_i32gather_ps(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)at)), table, 4);
    __m256 lo = _mm256_setr_ps(table[at[0]], table[at[1]], table[at[2]], table[at[3]], table[at[4]], table[at[5]],
                               table[at[6]], table[at[7]]);
    __m256 hi = _mm256_setr_ps(table[at[8]], table[at[9]], table[at[10]], table[at[11]], table[at[12]], table[at[13]],
                               table[at[14]], table[at[15]]);
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
}
#endif
