/* The loop of the AVX2 loops that select among 16-bit values 16 lanes at a
 * time (relu, relu6 and hardtanh in float16 and bfloat16: convert16.c and
 * piecewise16.c). They move memory and little else, so beyond
 * FA_STREAM_MIN_BYTES of output (fastact.h) they stream their stores, as the
 * float32 ReLU does: on AMD Zen 3, one thread, a standalone 1e7-element
 * float16 select of one input ran 1.35x faster so, and one of two inputs
 * (as a backward reads) 1.26x. */
#ifndef FA_STREAM16_AVX2_H
#define FA_STREAM16_AVX2_H
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "runtime/fastact.h"

/* BODY(at, to, store): the 16 results from at[0][0..15] (and at[1]) stored
 * to `to` by `store` (_mm256_storeu_si256 or _mm256_stream_si256). Elements
 * [from, to_) of fewer than 16 go through a zeroed vector. */
#define FA_LOOP16_PART_(NIN, BODY, from, to_)                                              \
    {                                                                                      \
        uint16_t rest_[2][16], result_[16];                                                \
        memset(rest_, 0, sizeof rest_);                                                    \
        for (int k_ = 0; k_ < (NIN); k_++) memcpy(rest_[k_], in[k_] + (from), (size_t)((to_) - (from)) * 2); \
        const uint16_t *at[2] = {rest_[0], rest_[1]};                                      \
        BODY(at, result_, _mm256_storeu_si256);                                            \
        memcpy(out + (from), result_, (size_t)((to_) - (from)) * 2);                       \
    }
/* the loop over in[0..NIN-1] and out, n elements: past FA_STREAM_MIN_BYTES of
 * output, the elements before out's first 32-byte boundary stored, whole
 * vectors from there streamed (then a fence, before the call returns and
 * another thread may read them), the rest stored */
#define FA_LOOP16_STREAMED_(NIN, BODY)                                                     \
    ptrdiff_t i = 0;                                                                       \
    if ((size_t)n * 2 >= FA_STREAM_MIN_BYTES && (uintptr_t)out % 2 == 0) {                \
        ptrdiff_t head = (ptrdiff_t)((32 - (uintptr_t)out % 32) % 32 / 2);                \
        if (head > n) head = n; /* only with a threshold lowered below 32 bytes */         \
        if (head > 0) FA_LOOP16_PART_(NIN, BODY, 0, head)                                  \
        for (i = head; i + 16 <= n; i += 16) {                                             \
            const uint16_t *at[2] = {in[0] + i, (NIN) > 1 ? in[1] + i : NULL};             \
            BODY(at, out + i, _mm256_stream_si256);                                        \
        }                                                                                  \
        _mm_sfence();                                                                      \
    }                                                                                      \
    for (; i + 16 <= n; i += 16) {                                                         \
        const uint16_t *at[2] = {in[0] + i, (NIN) > 1 ? in[1] + i : NULL};                 \
        BODY(at, out + i, _mm256_storeu_si256);                                            \
    }                                                                                      \
    if (i < n) FA_LOOP16_PART_(NIN, BODY, i, n)
#endif
