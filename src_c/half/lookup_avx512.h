/* float32 entries of a table indexed by 16-bit values (table16.h), sixteen
 * at a time, by scalar loads: AVX-512's gathers ran 1.2x them on an Intel
 * Xeon and 0.7x on AMD Zen 4, too little and too CPU-bound a gain for a
 * second path. */
#ifndef FA_LOOKUP_AVX512_H
#define FA_LOOKUP_AVX512_H
#include <immintrin.h>
#include <stdint.h>

__attribute__((target("avx512f"), always_inline)) static inline __m512 fa_lookup16_ps_avx512(const float *table,
                                                                                         const uint16_t *at) {
    __m256 lo = _mm256_setr_ps(table[at[0]], table[at[1]], table[at[2]], table[at[3]], table[at[4]], table[at[5]],
                               table[at[6]], table[at[7]]);
    __m256 hi = _mm256_setr_ps(table[at[8]], table[at[9]], table[at[10]], table[at[11]], table[at[12]], table[at[13]],
                               table[at[14]], table[at[15]]);
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
}

/* the entries of at[0..31]'s even elements (at[0], at[2], ...) and odd ones */
__attribute__((target("avx512f"), always_inline)) static inline void fa_lookup16_pairs_avx512(const float *table,
                                                                                          const uint16_t *at,
                                                                                          __m512 *even, __m512 *odd) {
    __m256 a = _mm256_setr_ps(table[at[0]], table[at[2]], table[at[4]], table[at[6]], table[at[8]], table[at[10]],
                              table[at[12]], table[at[14]]);
    __m256 b = _mm256_setr_ps(table[at[16]], table[at[18]], table[at[20]], table[at[22]], table[at[24]],
                              table[at[26]], table[at[28]], table[at[30]]);
    __m256 c = _mm256_setr_ps(table[at[1]], table[at[3]], table[at[5]], table[at[7]], table[at[9]], table[at[11]],
                              table[at[13]], table[at[15]]);
    __m256 d = _mm256_setr_ps(table[at[17]], table[at[19]], table[at[21]], table[at[23]], table[at[25]],
                              table[at[27]], table[at[29]], table[at[31]]);
    *even = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(a)), _mm256_castps_pd(b), 1));
    *odd = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(c)), _mm256_castps_pd(d), 1));
}
#endif
