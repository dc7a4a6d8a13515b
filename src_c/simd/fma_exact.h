/* fma(a, b, c) rounded once, where the compiler has no FMA instruction.
 *
 * x86-64's baseline has none: built without -mfma (as wheels are), fma()
 * and fmaf() are calls into libm, which on a CPU without FMA computes them
 * in software, about a microsecond each (glibc 2.36 told to ignore FMA:
 * the scalar kernel set's silu took 1.5 s per 10^6 float32 elements).
 * fa_fmaf and fa_fma give the same bits from ordinary IEEE operations
 * instead, tens of nanoseconds at most (fa_fma's rare extremes in integer
 * arithmetic, never the library's). Where the compiler has the
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

#if FA_EMULATE_FMA
/* a·b + c rounded once, for finite a, b, c with a·b nonzero, in integer
 * arithmetic: the few operands beyond the fast path's range (products below
 * 2^-900 or operands near overflow). Not the C library's fma(): mingw-w64's
 * is not correctly rounded there, and every platform must give the same
 * bits. Both terms go into one fixed-point integer spanning every bit a
 * product or a double can have (2^-2148 up to 2^2048, 32-bit limbs), are
 * added or subtracted exactly, and the sum is rounded to nearest-even at
 * 53 bits or at the subnormal grid; the flags are raised as the
 * instruction raises them (inexact; underflow when tiny after rounding;
 * overflow). Hundreds of nanoseconds, on inputs a kernel rarely meets. */
enum { FA_WIDE_BASE_ = -2150, FA_WIDE_LIMBS_ = 136 }; /* bit i weighs 2^(i + BASE) */

static void fa_wide_add_(uint32_t *acc, uint64_t value, int bit) {
    int limb = bit >> 5, shift = bit & 31;
    uint64_t carry = 0; /* value << shift, as three limbs */
    uint32_t parts[3] = {(uint32_t)(value << shift), (uint32_t)(value >> (32 - shift)),
                         shift ? (uint32_t)(value >> (64 - shift)) : 0};
    for (int k = 0; limb + k < FA_WIDE_LIMBS_ && (k < 3 || carry); k++) {
        uint64_t sum = (uint64_t)acc[limb + k] + (k < 3 ? parts[k] : 0) + carry;
        acc[limb + k] = (uint32_t)sum;
        carry = sum >> 32;
    }
}

static void fa_wide_load_(uint32_t *acc, uint64_t lo, uint64_t hi, int exponent) {
    memset(acc, 0, FA_WIDE_LIMBS_ * sizeof *acc);
    fa_wide_add_(acc, lo, exponent - FA_WIDE_BASE_);
    if (hi) fa_wide_add_(acc, hi, exponent - FA_WIDE_BASE_ + 64);
}

static uint64_t fa_mantissa_(double x, int *exponent) { /* |x| = m 2^exponent, m < 2^53 */
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int field = (int)(bits >> 52 & 0x7ff);
    uint64_t m = bits & 0xfffffffffffffull;
    *exponent = field ? field - 1075 : -1074;
    return field ? m | 1ull << 52 : m;
}

static int fa_wide_bit_(const uint32_t *acc, int bit) { return bit < 0 ? 0 : (int)(acc[bit >> 5] >> (bit & 31) & 1); }

static double fa_fma_wide_(double a, double b, double c) {
    int ea, eb, ec;
    uint64_t ma = fa_mantissa_(a, &ea), mb = fa_mantissa_(b, &eb), mc = fa_mantissa_(c, &ec);
    /* the 106-bit product from 32-bit halves */
    uint64_t a0 = ma & 0xffffffffu, a1 = ma >> 32, b0 = mb & 0xffffffffu, b1 = mb >> 32;
    uint64_t low = a0 * b0, mid1 = a0 * b1, mid2 = a1 * b0, high = a1 * b1;
    uint64_t mid = (low >> 32) + (mid1 & 0xffffffffu) + (mid2 & 0xffffffffu);
    uint64_t prod_lo = (low & 0xffffffffu) | mid << 32;
    uint64_t prod_hi = high + (mid1 >> 32) + (mid2 >> 32) + (mid >> 32);
    uint32_t p[FA_WIDE_LIMBS_], q[FA_WIDE_LIMBS_];
    fa_wide_load_(p, prod_lo, prod_hi, ea + eb);
    fa_wide_load_(q, mc, 0, ec);
    int p_negative = signbit(a) != signbit(b), c_negative = signbit(c) != 0, negative = p_negative;
    if (p_negative == c_negative) { /* magnitudes add */
        uint64_t carry = 0;
        for (int k = 0; k < FA_WIDE_LIMBS_; k++) {
            uint64_t sum = (uint64_t)p[k] + q[k] + carry;
            p[k] = (uint32_t)sum, carry = sum >> 32;
        }
    } else { /* the larger magnitude minus the smaller, with its sign */
        int k = FA_WIDE_LIMBS_ - 1;
        while (k > 0 && p[k] == q[k]) k--;
        uint32_t *big = p, *small = q;
        if (q[k] > p[k]) big = q, small = p, negative = c_negative;
        else if (q[k] == p[k]) return 0.0; /* exact cancellation: +0 when rounding to nearest */
        uint64_t borrow = 0;
        for (k = 0; k < FA_WIDE_LIMBS_; k++) {
            uint64_t diff = (uint64_t)big[k] - small[k] - borrow;
            p[k] = (uint32_t)diff, borrow = diff >> 63;
        }
    }
    int limb = FA_WIDE_LIMBS_ - 1, top;
    while (p[limb] == 0) limb--; /* the sum is nonzero */
    for (top = limb * 32 + 31; !fa_wide_bit_(p, top); top--) {}
    /* the last kept bit: 53 bits down from the top, never below 2^-1074 */
    int last = top - 52 < -1074 - FA_WIDE_BASE_ ? -1074 - FA_WIDE_BASE_ : top - 52;
    uint64_t m = 0;
    for (int bit = top; bit >= last; bit--) m = m << 1 | (uint64_t)fa_wide_bit_(p, bit);
    int round = fa_wide_bit_(p, last - 1), sticky = 0;
    for (int bit = last - 2; bit >= 0 && !sticky; bit--) {
        if ((bit & 31) == 31 && p[bit >> 5] == 0) { bit -= 31; continue; }
        sticky = fa_wide_bit_(p, bit);
    }
    /* tiny after rounding: below 2^-1022 even rounded at 53 bits with an unbounded exponent */
    int tiny = top + FA_WIDE_BASE_ < -1022;
    if (top + FA_WIDE_BASE_ == -1023) {
        int all_ones = 1; /* 54 ones from the top: rounding at 53 bits carries up to 2^-1022 */
        for (int bit = top; bit >= top - 53 && all_ones; bit--) all_ones = fa_wide_bit_(p, bit);
        tiny = !all_ones;
    }
    if (round && (sticky || (m & 1))) m++;
    int exponent = last + FA_WIDE_BASE_;          /* result = m 2^exponent */
    if (m >> 53) m >>= 1, exponent++;             /* rounding carried into a new bit */
    volatile double flag;
    if (round || sticky) {
        flag = 1.0, flag += 0x1p-80; /* inexact */
        if (tiny) flag = 0x1p-1022, flag *= 0x1.0000000000001p-60; /* underflow */
    }
    uint64_t bits;
    if (m >> 52) { /* normal */
        int field = exponent + 1075; /* the biased exponent of m 2^exponent, 2^52 <= m < 2^53 */
        if (field >= 2047) {
            flag = 0x1p1023, flag *= 4.0; /* overflow */
            return negative ? -INFINITY : INFINITY;
        }
        bits = (uint64_t)field << 52 | (m & 0xfffffffffffffull);
    } else { /* subnormal (or zero): exponent is -1074 */
        bits = m;
    }
    bits |= (uint64_t)negative << 63;
    double result;
    memcpy(&result, &bits, sizeof result);
    return result;
}
#endif

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
    if (!isfinite(a) || !isfinite(b)) return p + c; /* an infinite or NaN product: no rounding */
    if (isinf(c)) return c;                          /* a finite product beside it */
    return fa_fma_wide_(a, b, c);                    /* the extremes */
#else
    return fma(a, b, c);
#endif
}
#endif
