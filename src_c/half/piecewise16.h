/* relu6, hardtanh, hardsigmoid and leaky_relu, forward and backward, on
 * contiguous float16 and bfloat16 arrays in one pass: each vector widened in
 * registers, computed in float32 and rounded back, once (piecewise16.c). */
#ifndef FA_PIECEWISE16_H
#define FA_PIECEWISE16_H
#include <stddef.h>
#include <stdint.h>

/* in: x (forward) or grad_output, x (backward); limits: the interval
 * (hardtanh's min_val, max_val rounded to float32; relu6's 0, 6; -3, 3), or
 * leaky_relu's slope */
typedef void (*fa_piecewise16_fn)(const uint16_t *const *in, uint16_t *out, ptrdiff_t n, int bf16,
                                  const float *limits);

typedef struct {
    fa_piecewise16_fn clamp;           /* relu6, hardtanh */
    fa_piecewise16_fn pass_between;    /* their backward: g inside the interval, else +0 */
    fa_piecewise16_fn hardsigmoid;     /* (x + 3)/6 inside (-3, 3) */
    fa_piecewise16_fn hardsigmoid_bwd; /* g/6 inside (-3, 3) */
    fa_piecewise16_fn leaky_relu;      /* limits[0]: the slope, rounded to float32 */
    fa_piecewise16_fn leaky_relu_bwd;
} fa_piecewise16_set;

const fa_piecewise16_set *fa_piecewise16_for(int isa);
#endif
