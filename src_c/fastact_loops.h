/* The NumPy inner loops (loops.c); `data` is the fa_op as an integer. The
 * signature is NumPy's PyUFuncGenericFunction with npy_intp == ptrdiff_t. */
#ifndef FASTACT_LOOPS_H
#define FASTACT_LOOPS_H
#include <stddef.h>

#define FA_LOOP_DECL(name) void name(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data)
FA_LOOP_DECL(fa_loop_fwd_f16);
FA_LOOP_DECL(fa_loop_fwd_f32);
FA_LOOP_DECL(fa_loop_fwd_f64);
FA_LOOP_DECL(fa_loop_bwd_f16);
FA_LOOP_DECL(fa_loop_bwd_f32);
FA_LOOP_DECL(fa_loop_bwd_f64);
#undef FA_LOOP_DECL

/* elements per thread below which a call stays on one thread, per fa_op and
 * dtype (f64 = 0: float32 and float16; 1: float64) */
ptrdiff_t fa_thread_threshold(int op, int f64);
void fa_set_thread_threshold(int op, int f64, ptrdiff_t n);
#endif
