/* fma(a, b, c) rounded once, where the compiler has no FMA instruction.
 *
 * x86-64's baseline has none: built without -mfma (as wheels are), fma()
 * and fmaf() are calls into libm, which on a CPU without FMA computes them
 * in software, about a microsecond each (glibc 2.36 told to ignore FMA:
 * the scalar kernel set's silu took 1.5 s per 10^6 float32 elements).
 * fa_fmaf and fa_fma give the same bits from ordinary IEEE operations
 * instead, tens of nanoseconds at most. Where the compiler has the
 * instruction (FP_FAST_FMA: AArch64, x86 with -mfma) they are fma() itself.
 * tools/check_fma.c compares them with the library's on edge cases and
 * random operands. */
#ifndef FA_FMA_EXACT_H
#define FA_FMA_EXACT_H
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* The emulation needs operations rounded to their own type (not x87's
 * extended registers); FA_EMULATE_FMA=1 forces it, for tools/check_fma.c. */
#if !defined(FA_EMULATE_FMA)
#if (defined(FP_FAST_FMA) || defined(__FP_FAST_FMA)) || FLT_EVAL_METHOD != 0
#define FA_EMULATE_FMA 0
#else
#define FA_EMULATE_FMA 1
#endif
#endif
#if !defined(FA_EMULATE_FMAF)
#if (defined(FP_FAST_FMAF) || defined(__FP_FAST_FMAF)) || FLT_EVAL_METHOD != 0
#define FA_EMULATE_FMAF 0
#else
#define FA_EMULATE_FMAF 1
#endif
#endif

/* The emulations are called, not inlined: inlined at every FMA of every
 * kernel (the scalar set has hundreds), they made gcc -O3 spend minutes on
 * kernels_scalar.c, while a call costs little beside their 10-30 operations. */
#if defined(_MSC_VER) && !defined(__clang__)
#define FA_FMA_EMULATION_ static __declspec(noinline)
#else
#define FA_FMA_EMULATION_ static __attribute__((noinline, unused))
#endif
#if FA_EMULATE_FMAF
#define FA_FMAF_DEF_ FA_FMA_EMULATION_
#else
#define FA_FMAF_DEF_ static inline
#endif
#if FA_EMULATE_FMA
#define FA_FMA_DEF_ FA_FMA_EMULATION_
#else
#define FA_FMA_DEF_ static inline
#endif

/* s = round-to-nearest(x) with x = s + err exactly, made round-to-odd: where
 * inexact, x truncated toward zero with its last bit set. Rounded again to
 * a precision at least 2 bits narrower, that is x rounded once (Boldo and
 * Melquiond, "Emulation of FMA and correctly rounded sums: proved
 * algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008). */
static inline double fa_round_to_odd_(double s, double err) {
    /* without branches (inexact or not is a coin toss, mispredicted), and
     * with quiet tests only: err may be NaN, and no flag may be raised */
    uint64_t inexact = (uint64_t)((err != 0) & (err == err));
    /* s lies beyond x: a step back toward zero */
    uint64_t beyond = inexact & (uint64_t)((signbit(err) != 0) ^ (signbit(s) != 0));
    uint64_t bits;
    memcpy(&bits, &s, sizeof bits);
    bits = (bits - beyond) | inexact;
    memcpy(&s, &bits, sizeof s);
    return s;
}

/* Knuth's TwoSum: a + b = *sum + return value, exactly (no overflow) */
static inline double fa_two_sum_error_(double a, double b, double *sum) {
    double s = a + b, back = s - a;
    *sum = s;
    return (a - (s - back)) + (b - back);
}

/* c is NaN: a NaN, with the invalid flag only for a signaling operand (the
 * instruction does not raise it for 0·inf + a quiet NaN, a product would) */
#define FA_NAN_ADDEND_(a, b, c) ((c) + (isnan(a) ? (a) : isnan(b) ? (b) : (c)))

FA_FMAF_DEF_ float fa_fmaf(float a, float b, float c) {
#if FA_EMULATE_FMAF
    /* a·b is exact in double (24 + 24 bits, no under- or overflow); its sum
     * with c rounded to odd in double (53 >= 24 + 2 bits), then to float */
    if (isnan(c)) return FA_NAN_ADDEND_(a, b, c);
    double p = (double)a * b, sum = p + c;
    if (!isfinite(sum)) return (float)sum; /* TwoSum's inf - inf would raise a flag fmaf does not */
    double err = fa_two_sum_error_(p, c, &sum);
    return (float)fa_round_to_odd_(sum, err);
#else
    return fmaf(a, b, c);
#endif
}

FA_FMA_DEF_ double fa_fma(double a, double b, double c) {
#if FA_EMULATE_FMA
    if (isnan(c)) return FA_NAN_ADDEND_(a, b, c);
    double p = a * b, magnitude = fabs(p);
    /* far from overflow (Veltkamp's split multiplies by 2^27) and from
     * underflow (the product's error must stay exact) */
    /* quiet comparisons: NaN fails them without raising a flag */
    if (isgreaterequal(magnitude, 0x1p-900) && islessequal(magnitude, 0x1p1000) && islessequal(fabs(a), 0x1p995) &&
        islessequal(fabs(b), 0x1p995) && islessequal(fabs(c), 0x1p1000)) {
        /* Dekker's product: a·b = p + e exactly, from 26-bit halves */
        const double split = 0x1p27 + 1;
        double ta = a * split, a_hi = ta - (ta - a), a_lo = a - a_hi;
        double tb = b * split, b_hi = tb - (tb - b), b_lo = b - b_hi;
        double e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo;
        /* Boldo and Melquiond: c + p = th + tl; a·b + c = th + tl + e,
         * and th + round-to-odd(tl + e) rounds once to the result */
        double th, tl = fa_two_sum_error_(c, p, &th);
        double v, v_err = fa_two_sum_error_(tl, e, &v);
        return th + fa_round_to_odd_(v, v_err);
    }
    if (a == 0 || b == 0) return p + c; /* the product is exactly a zero (or NaN, with an infinity) */
    return fma(a, b, c);                /* infinities, NaN and the extremes: the library's */
#else
    return fma(a, b, c);
#endif
}
#endif
