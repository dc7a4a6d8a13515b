/* float16 and bfloat16 arrays: conversion to and from float32 blocks, and
 * ReLU computed on the 16-bit values themselves, per ISA (convert16.c). The
 * conversions may raise floating-point flags; their caller discards them. */
#ifndef FA_CONVERT16_H
#define FA_CONVERT16_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    void (*widen)(const uint16_t *src, float *dst, ptrdiff_t n); /* exact; NaN made quiet */
    /* rounded to nearest even; ties[i / 64] bit i % 64 set where element i is
     * within `window` float32 ULPs of a tie of the 16-bit type (window 0: on
     * one; fa_is_half_near_tie, fa_is_bf16_near_tie), (n + 63) / 64 words
     * written; returns nonzero if any is */
    int (*narrow)(const float *src, uint16_t *dst, ptrdiff_t n, uint64_t *ties, uint32_t window);
    /* the same rounding without the scan, for results that cannot mislead it */
    void (*round)(const float *src, uint16_t *dst, ptrdiff_t n);
    /* narrow(g·f'(x)) in one pass, from 16-bit g and x and a table of f' for
     * all 65536 x: the bits of widen, fa_table16_scale and narrow (whose
     * ties it marks), without their float32 buffers; NULL where the ISA has
     * no such loop */
    int (*scale_narrow)(const float *derivative, const uint16_t *x, const uint16_t *g, uint16_t *dst, ptrdiff_t n,
                        uint64_t *ties, uint32_t window);
    /* narrow(g·f'(y)) in one pass for the derivatives from the forward's
     * output y: f'(y) = y - y² (sigmoid) or 1 - y² (tanh_form), rounded once,
     * y's NaN where y is NaN, then g's NaN where g is NaN; the bits of
     * widen, that computation and narrow. NULL where the ISA has no such loop
     * (float16's is called with FA_FROM_OUTPUT_WINDOW, bfloat16's with 0:
     * the loops are built for those windows) */
    int (*from_output_narrow)(const uint16_t *g, const uint16_t *y, uint16_t *dst, ptrdiff_t n, uint64_t *ties,
                              uint32_t window, int tanh_form);
    /* hardswish in one pass, forward (g NULL) or backward: rounded as
     * narrow rounds the float32 kernel's results, elements within `window`
     * float32 ULPs of a tie marked unless their value is exact; NULL where
     * the ISA has no such loop */
    int (*hardswish_narrow)(const uint16_t *g, const uint16_t *x, uint16_t *dst, ptrdiff_t n, uint64_t *ties,
                            uint32_t window);
} fa_convert16;

/* ReLU and its backward on 16-bit values (float16 and bfloat16 share the
 * sign bit and order): the same bits as computing in float32 and rounding. */
typedef void (*fa_relu16_fn)(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16);

typedef struct {
    fa_convert16 f16, bf16;
    fa_relu16_fn relu_fwd, relu_bwd;
} fa_convert16_set;

/* float16's derivatives from the output: their float32 value g·f'(y) is
 * within ulp/2 + g·ulp(f'(y))/2 < 2.01 float32 ULPs of the exact one
 * (ulp(f'(y))/f'(y) is at most twice ulp(p)/p), so results within 3 of a
 * tie are recomputed, which makes them correctly rounded (loops.c) */
enum { FA_FROM_OUTPUT_WINDOW = 3 };

const fa_convert16_set *fa_convert16_for(int isa);
#endif
