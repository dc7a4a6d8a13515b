/* The NumPy inner loops (loops.c), one per storage dtype for every operation;
 * `data` is fa_loop_data(op, direction, tier). The signature is NumPy's
 * PyUFuncGenericFunction with npy_intp == ptrdiff_t. */
#ifndef FASTACT_LOOPS_H
#define FASTACT_LOOPS_H
#include <stddef.h>

void fa_loop_f16(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data);
void fa_loop_f32(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data);
void fa_loop_f64(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data);
void fa_loop_bf16(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data);
const void *fa_loop_data(int op, int direction, int tier); /* NULL when out of range */
/* the same for a ufunc without the parameter operands: `params` (the op's
 * count) stand for them */
const void *fa_loop_data_fixed(int op, int direction, int tier, const double *params);
/* a loop's operands: nin arrays, nparams float64 parameters, nout results */
void fa_loop_arity(const void *data, int *nin, int *nparams, int *nout);
enum { FA_LOOP_MAX_ARGS = 8 }; /* nin + nparams + nout, at most */

/* Elements per thread below which a contiguous forward call stays on one
 * thread, per fa_op and kernel dtype (f64 = 0: float32 and float16; 1:
 * float64): from the measured cost model (workers parked, the conservative
 * case), or the fixed value set by fa_set_thread_threshold (n > 0; n <= 0
 * returns to the cost model). */
ptrdiff_t fa_thread_threshold(int op, int tier, int f64);
void fa_set_thread_threshold(int op, int f64, ptrdiff_t n);
/* The cost per element (ns) the model uses for a kernel under the current
 * ISA, contiguous (gathered = 0) or through buffers: measured, or 0 when not
 * yet measured; and the manifest's estimate. dtype: 0 float16, 1 float32, 2 float64,
 * 3 bfloat16. */
double fa_cost_ns(int op, int direction, int tier, int dtype, int gathered);
double fa_cost_estimate_ns(int op, int f64);

/* Round to nearest for the kernels whatever mode the caller set, keeping its
 * other floating-point state; returns what fa_restore_rounding puts back. */
long fa_round_to_nearest(void);
void fa_restore_rounding(long saved);

/* rows.c: the generalized-ufunc loops (signature (n)->(n), and (n),(n)->(n)
 * backward) of softmax and log_softmax; `data` is fa_row_loop_data(op, direction) */
enum { FA_ROW_SOFTMAX, FA_ROW_LOG_SOFTMAX, FA_N_ROW_OPS };
void fa_row_loop_f16(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data);
void fa_row_loop_f32(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data);
void fa_row_loop_f64(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data);
void fa_row_loop_bf16(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data);
const void *fa_row_loop_data(int op, int direction, int tier); /* NULL when out of range */
#endif
