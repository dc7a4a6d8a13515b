/* bfloat16 on AVX-512 32 elements a vector, for the loops of convert16.c
 * and piecewise16.c: the even elements widened by a shift, the odd ones by a
 * mask, each half rounded where it lies and the two put back together, with
 * none of the widening and narrowing shuffles (vpmovzxwd, vpmovdw) that cost
 * Zen 4 as much as the arithmetic. */
#ifndef FA_BF16_PAIRS_AVX512_H
#define FA_BF16_PAIRS_AVX512_H
#include <immintrin.h>
#include <stdint.h>

#define FA_PAIRS_AVX512_ __attribute__((target("avx512f")))

FA_PAIRS_AVX512_ static inline __m512 bf16_even_avx512(__m512i pairs) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(pairs, 16));
}
FA_PAIRS_AVX512_ static inline __m512 bf16_odd_avx512(__m512i pairs) {
    return _mm512_castsi512_ps(_mm512_and_si512(pairs, _mm512_set1_epi32((int)0xffff0000u)));
}
/* x rounded to nearest even at bfloat16's last bit, the result in the
 * high half (the low half is garbage); for lanes that are not NaN */
FA_PAIRS_AVX512_ static inline __m512i bf16_round_number_avx512(__m512i x) {
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
    return _mm512_add_epi32(x, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), odd));
}
/* the halves' bfloat16 values put back in element order, rounded to
 * nearest even, a NaN made quiet; `numbers`: no lane of either is NaN */
FA_PAIRS_AVX512_ __attribute__((always_inline)) static inline __m512i bf16_pack_rounded_avx512(__m512 even, __m512 odd,
                                                                                            int numbers) {
    __m512i e = _mm512_castps_si512(even), o = _mm512_castps_si512(odd);
    __m512i re = bf16_round_number_avx512(e), ro = bf16_round_number_avx512(o);
    if (!numbers) { /* a NaN's top bits, made quiet */
        const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
        const __m512i quiet = _mm512_set1_epi32(0x400000);
        re = _mm512_mask_or_epi32(re, _mm512_cmpgt_epu32_mask(_mm512_and_si512(e, magnitude), inf), e, quiet);
        ro = _mm512_mask_or_epi32(ro, _mm512_cmpgt_epu32_mask(_mm512_and_si512(o, magnitude), inf), o, quiet);
    }
    return _mm512_or_si512(_mm512_srli_epi32(re, 16), _mm512_and_si512(ro, _mm512_set1_epi32((int)0xffff0000u)));
}
#undef FA_PAIRS_AVX512_
#endif
