/* A 16-bit input has 65536 values: a unary function is, on float16 or
 * bfloat16 data and for given parameters, a table of its 65536 results. The
 * table is filled once by the computing path (widened, computed in float32,
 * rounded once), so looking results up gives the same bits for one load per
 * element instead of a polynomial. Backward, g·f'(x) has two inputs: a table
 * holds the float32 derivative d(x) (the float32 kernel at g = 1), which the
 * 16-bit backward multiplies by g in float32, table or not (table16.c). */
#ifndef FA_TABLE16_H
#define FA_TABLE16_H
#include <stddef.h>
#include <stdint.h>

#include "generated/fa_ops.h"

#define FA_TABLE16_SIZE 65536

/* Which table: one per kernel set (so that each set's own path is what fills
 * it, and what the tests check), op, direction, precision tier and 16-bit type. */
typedef struct {
    int isa, op, direction, tier, bf16;
} fa_table16_key;

typedef struct {
    double params[FA_MAX_PARAMS]; /* the op's parameters, as given; unused ones 0 */
    unsigned char entries[]; /* forward: uint16_t results; backward: float derivatives */
} fa_table16;

/* Bytes of a key's entries: uint16_t results forward, float derivatives backward */
size_t fa_table16_bytes(fa_table16_key key);
/* The key's entries for these parameters once a table of them is published;
 * NULL before, when tables are off, or (with *taken set) when the key's table
 * holds other parameters: the first to be filled keeps it. */
const void *fa_table16_get(fa_table16_key key, const double *params, int nparams, int *taken);
/* Counts a call's n elements; 1 once the key's count reaches
 * FA_TABLE16_SIZE, when filling a table costs no more than the work done so
 * far (so a thread making calls on small arrays never pays more than twice). */
int fa_table16_worth_filling(fa_table16_key key, ptrdiff_t n);
/* A table to fill, its parameters set; NULL when out of memory */
fa_table16 *fa_table16_new(fa_table16_key key, const double *params, int nparams);
/* Publishes a filled table; returns fa_table16_get's answer afterwards. If
 * another thread published first, `filled` is freed and that thread's
 * entries are returned (when its parameters are these). */
const void *fa_table16_publish(fa_table16_key key, fa_table16 *filled, int nparams);
/* out[i] = table[in[i]], in index order, reading at most `block` elements
 * ahead of what it has written (see fa_order in loops.c) */
void fa_table16_apply(const uint16_t *table, const char *in, ptrdiff_t in_step, char *out,
                      ptrdiff_t out_step, ptrdiff_t n, ptrdiff_t block);
/* g·d rounded to float32, and g itself where g is NaN (widened, so quiet):
 * x86 returns the first operand's NaN when both are, and a compiler may
 * order a product's operands either way */
static inline float fa_times_derivative(float g, float d) {
    return g != g ? g : g * d;
}
/* out[i] = fa_times_derivative(g[i], derivative[x[i]]) */
void fa_table16_scale(int isa, const float *derivative, const uint16_t *x, const float *g, float *out, ptrdiff_t n);
/* Tables on (the default) or off; off, every call computes. For tests. */
void fa_table16_enable(int on);
int fa_table16_enabled(void);
/* Forgets every table and count, as in a new process; the tables are not
 * freed (they leak), since a call in another thread may be reading one. For
 * tests. */
void fa_table16_forget(void);
/* Tables published since the process started: for tests. */
long fa_table16_published(void);
#endif
