/* The 16-bit types <-> binary32, round to nearest even, NaN kept quiet:
 * IEEE binary16 (float16) and bfloat16, both computed in float32. */
#ifndef FA_HALF_H
#define FA_HALF_H
#include <stdint.h>
#include <math.h>
#include <string.h>

/* 1.0 read where the compiler cannot see it: a product with it makes a
 * signaling NaN quiet, which gcc, assuming there are none, folds away when
 * it knows the factor is 1 */
static volatile float fa_quieting_one = 1.0f;

static inline float fa_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exponent = h >> 10 & 0x1fu, mantissa = h & 0x3ffu;
    uint32_t bits;
    float f;
    if (exponent == 0x1f) {
        bits = sign | 0x7f800000u | mantissa << 13 | (mantissa ? 0x400000u : 0); /* NaN made quiet, as F16C does */
    } else if (exponent == 0) {
        f = (float)mantissa * 0x1p-24f; /* exact: subnormal or zero */
        memcpy(&bits, &f, sizeof bits);
        bits |= sign;
    } else {
        bits = sign | (exponent + 112) << 23 | mantissa << 13;
    }
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t fa_float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)(x >> 16 & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return sign | 0x7e00u | (uint16_t)(ax >> 13 & 0x3ffu); /* NaN, quiet */
    if (ax >= 0x477ff000u) return sign | 0x7c00u;                                /* >= 65520: inf */
    if (ax < 0x38800000u) {
        /* |f| < 2^-14: adding 0.5 rounds at 2^-24, the binary16 subnormal step */
        float af, r;
        uint32_t rb;
        memcpy(&af, &ax, sizeof af);
        r = af + 0.5f;
        memcpy(&rb, &r, sizeof rb);
        return sign | (uint16_t)(rb - 0x3f000000u);
    }
    /* normal: rebias the exponent by -112 and round the 13 dropped bits to even */
    ax += 0xc8000fffu + (ax >> 13 & 1u);
    return sign | (uint16_t)(ax >> 13);
}

/* bfloat16: the top half of a binary32, rounded to nearest even, NaN kept quiet */
static inline float fa_bf16_to_float(uint16_t h) {
    uint32_t bits = (uint32_t)((h & 0x7fffu) > 0x7f80u ? h | 0x40u : h) << 16; /* NaN made quiet */
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t fa_float_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(x >> 16 | 0x40u);
    return (uint16_t)((x + 0x7fffu + (x >> 16 & 1u)) >> 16);
}

/* Is the binary32 value f within `window` binary32 ULPs of a tie of the
 * 16-bit type (a value exactly halfway between two of its neighbours)? With
 * window 0, is it a tie: then rounding it to nearest may go the wrong way, as
 * f is itself a rounding of the true result, which lies on one side. With the
 * window of a kernel's error bound, the true result may lie on either side of
 * the tie, so rounding f may go the wrong way. */
static inline int fa_is_half_near_tie(float f, uint32_t window) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    x &= 0x7fffffffu;
    if (x >= 0x47800000u) return 0; /* beyond 2^16: no tie is that close (65520 is the last); or NaN */
    if (x >= 0x38800000u) return (x & 0x1fffu) - (0x1000u - window) <= 2 * window;
    /* below 2^-14 the ties are the odd multiples of 2^-25, and a binary32 ULP
     * is at most 2^-38, 2^-13 of a multiple of 2^-25: the window allows 2^-12
     * per ULP, twice that (a few more recomputed, never fewer) */
    float scaled = fabsf(f) * 0x1p25f;
    float nearest = (float)(int32_t)(scaled + 0.5f);
    return ((int32_t)nearest & 1) && fabsf(scaled - nearest) <= (float)window * 0x1p-12f;
}
static inline int fa_is_half_tie(float f) {
    return fa_is_half_near_tie(f, 0);
}

static inline int fa_is_bf16_near_tie(float f, uint32_t window) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    x &= 0x7fffffffu;
    return x < 0x7f800000u && (x & 0xffffu) - (0x8000u - window) <= 2 * window;
}
static inline int fa_is_bf16_tie(float f) {
    return fa_is_bf16_near_tie(f, 0);
}

/* A binary64 value rounded once to the 16-bit type: through binary32, whose
 * rounding can only mislead when it lands on a tie of the 16-bit type, and is
 * then nudged one step towards d (round to odd). */
static inline float fa_toward_(double d, float f) {
    if ((double)f == d) return f;
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    x += ((double)f < d) == (f > 0) ? 1 : -1; /* away from zero, or towards it */
    memcpy(&f, &x, sizeof f);
    return f;
}
static inline uint16_t fa_double_to_half(double d) {
    float f = (float)d;
    return fa_float_to_half(fa_is_half_tie(f) ? fa_toward_(d, f) : f);
}
static inline uint16_t fa_double_to_bf16(double d) {
    float f = (float)d;
    return fa_float_to_bf16(fa_is_bf16_tie(f) ? fa_toward_(d, f) : f);
}
#endif
