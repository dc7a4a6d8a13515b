/* Tables of a unary function's 65536 results on a 16-bit type (table16.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/fastact.h"
#include "half/table16.h"

/* 2 types x 2 tiers x 2 directions x the ops x 4 kernel sets; a table is 128
 * KiB forward and 256 KiB backward, made only for what a process calls on
 * enough 16-bit elements, and kept for its life */
static fa_table16 *_Atomic tables[FA_N_ISAS][FA_N_OPS][FA_N_DIRECTIONS][FA_N_TIERS][2];
static _Atomic ptrdiff_t computed[FA_N_ISAS][FA_N_OPS][FA_N_DIRECTIONS][FA_N_TIERS][2];
#define FA_SLOT_(array, key) array[key.isa][key.op][key.direction][key.tier][key.bf16]
static atomic_int enabled = 1;
static atomic_long published;

static int valid(fa_table16_key key) {
    return key.isa >= 0 && key.isa < FA_N_ISAS && key.op >= 0 && key.op < FA_N_OPS && key.direction >= 0 &&
           key.direction < FA_N_DIRECTIONS && key.tier >= 0 && key.tier < FA_N_TIERS && (key.bf16 == 0 || key.bf16 == 1);
}

size_t fa_table16_bytes(fa_table16_key key) {
    return FA_TABLE16_SIZE * (key.direction == FA_FWD ? sizeof(uint16_t) : sizeof(float));
}

/* bit for bit: -0.0 is not 0.0 to the kernels */
static int same_params(const fa_table16 *table, const double *params, int nparams) {
    return nparams == 0 || memcmp(table->params, params, (size_t)nparams * sizeof *params) == 0;
}

static const void *entries_for(const fa_table16 *table, const double *params, int nparams, int *taken) {
    if (!table) return NULL;
    if (same_params(table, params, nparams)) return table->entries;
    *taken = 1;
    return NULL;
}

const void *fa_table16_get(fa_table16_key key, const double *params, int nparams, int *taken) {
    *taken = 0;
    if (!valid(key) || !atomic_load_explicit(&enabled, memory_order_relaxed)) return NULL;
    const fa_table16 *table = atomic_load_explicit(&FA_SLOT_(tables, key), memory_order_acquire);
    return entries_for(table, params, nparams, taken);
}

int fa_table16_worth_filling(fa_table16_key key, ptrdiff_t n) {
    if (!valid(key) || !atomic_load_explicit(&enabled, memory_order_relaxed)) return 0;
    _Atomic ptrdiff_t *count = &FA_SLOT_(computed, key);
    if (n >= FA_TABLE16_SIZE || atomic_load_explicit(count, memory_order_relaxed) >= FA_TABLE16_SIZE) return 1;
    /* both below FA_TABLE16_SIZE: the sum cannot overflow */
    return atomic_fetch_add_explicit(count, n, memory_order_relaxed) + n >= FA_TABLE16_SIZE;
}

fa_table16 *fa_table16_new(fa_table16_key key, const double *params, int nparams) {
    fa_table16 *table = malloc(sizeof *table + fa_table16_bytes(key));
    if (!table) return NULL;
    memset(table->params, 0, sizeof table->params);
    if (nparams) memcpy(table->params, params, (size_t)nparams * sizeof *params);
    return table;
}

const void *fa_table16_publish(fa_table16_key key, fa_table16 *filled, int nparams) {
    fa_table16 *expected = NULL;
    fa_table16 *_Atomic *slot = &FA_SLOT_(tables, key);
    int taken;
    if (atomic_compare_exchange_strong_explicit(slot, &expected, filled, memory_order_acq_rel,
                                                memory_order_acquire)) {
        atomic_fetch_add_explicit(&published, 1, memory_order_relaxed);
        return filled->entries;
    }
    const void *theirs = entries_for(expected, filled->params, nparams, &taken);
    free(filled);
    return theirs;
}

/* four loads in flight before their stores: the table mostly sits in L1/L2,
 * so the loads' latency, not their number, is what limits */
static ptrdiff_t apply_portable(const uint16_t *table, const uint16_t *x, uint16_t *y, ptrdiff_t n) {
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        uint16_t a = table[x[i]], b = table[x[i + 1]], c = table[x[i + 2]], d = table[x[i + 3]];
        y[i] = a, y[i + 1] = b, y[i + 2] = c, y[i + 3] = d;
    }
    return i;
}

#if defined(FA_HAVE_X86_KERNELS) && (defined(__x86_64__) || defined(_M_X64))
#include <immintrin.h>

#include "half/lookup_avx512.h"
#define FA_X86_TABLE16 1
#define FA_AVX512_ __attribute__((target("avx512f")))
#endif

void fa_table16_apply(const uint16_t *table, const char *in, ptrdiff_t in_step, char *out,
                      ptrdiff_t out_step, ptrdiff_t n, ptrdiff_t block) {
    ptrdiff_t done = 0;
    if (in_step == 2 && out_step == 2) {
        const uint16_t *x = (const uint16_t *)in;
        uint16_t *y = (uint16_t *)out;
        if (block >= 4) done = apply_portable(table, x, y, n);
    }
    for (ptrdiff_t i = done; i < n; i++) {
        uint16_t v;
        memcpy(&v, in + i * in_step, sizeof v);
        memcpy(out + i * out_step, &table[v], sizeof v);
    }
}

static void scale_portable(const float *derivative, const uint16_t *x, const float *g, float *out, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) out[i] = fa_times_derivative(g[i], derivative[x[i]]);
}

#if defined(FA_X86_TABLE16)
FA_AVX512_ static ptrdiff_t scale_avx512(const float *derivative, const uint16_t *x, const float *g, float *out,
                                         ptrdiff_t n) {
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 d = fa_lookup16_ps_avx512(derivative, x + i), scale = _mm512_loadu_ps(g + i);
        __m512 product = _mm512_mul_ps(scale, d);
        _mm512_storeu_ps(out + i, _mm512_mask_mov_ps(product, _mm512_cmp_ps_mask(scale, scale, _CMP_UNORD_Q), scale));
    }
    return i;
}
#endif

void fa_table16_scale(int isa, const float *derivative, const uint16_t *x, const float *g, float *out, ptrdiff_t n) {
    ptrdiff_t done = 0;
#if defined(FA_X86_TABLE16)
    if (isa == FA_ISA_AVX512) done = scale_avx512(derivative, x, g, out, n);
#endif
    scale_portable(derivative, x + done, g + done, out + done, n - done);
}

void fa_table16_enable(int on) {
    atomic_store(&enabled, on != 0);
}

int fa_table16_enabled(void) {
    return atomic_load(&enabled);
}

void fa_table16_forget(void) {
    for (int isa = 0; isa < FA_N_ISAS; isa++)
        for (int op = 0; op < FA_N_OPS; op++)
            for (int direction = 0; direction < FA_N_DIRECTIONS; direction++)
                for (int tier = 0; tier < FA_N_TIERS; tier++)
                    for (int bf16 = 0; bf16 < 2; bf16++) {
                        atomic_store(&tables[isa][op][direction][tier][bf16], NULL);
                        atomic_store(&computed[isa][op][direction][tier][bf16], 0);
                    }
}

long fa_table16_published(void) {
    return atomic_load(&published);
}
