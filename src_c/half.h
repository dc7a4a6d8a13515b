/* IEEE binary16 <-> binary32, round to nearest even, NaN kept quiet; the
 * portable path for float16 arrays, which are computed in float32. */
#ifndef FA_HALF_H
#define FA_HALF_H
#include <stdint.h>
#include <string.h>

static inline float fa_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exponent = h >> 10 & 0x1fu, mantissa = h & 0x3ffu;
    uint32_t bits;
    float f;
    if (exponent == 0x1f) {
        bits = sign | 0x7f800000u | mantissa << 13;
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
#endif
