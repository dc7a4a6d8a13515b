/* Tables of a unary function's 65536 results on a 16-bit type (table16.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fastact.h"
#include "table16.h"

/* 2 types x 2 tiers x the ops x 4 kernel sets; a table is 128 KiB, made only
 * for what a process calls on enough 16-bit elements, and kept for its life */
static fa_table16 *_Atomic tables[FA_N_ISAS][FA_N_OPS][FA_N_TIERS][2];
static _Atomic ptrdiff_t computed[FA_N_ISAS][FA_N_OPS][FA_N_TIERS][2];
static atomic_int enabled = 1;

static int valid(fa_table16_key key) {
    return key.isa >= 0 && key.isa < FA_N_ISAS && key.op >= 0 && key.op < FA_N_OPS && key.tier >= 0 &&
           key.tier < FA_N_TIERS && (key.bf16 == 0 || key.bf16 == 1);
}

/* bit for bit: -0.0 is not 0.0 to the kernels */
static int same_params(const fa_table16 *table, const double *params, int nparams) {
    return nparams == 0 || memcmp(table->params, params, (size_t)nparams * sizeof *params) == 0;
}

static const uint16_t *results_for(const fa_table16 *table, const double *params, int nparams, int *taken) {
    if (!table) return NULL;
    if (same_params(table, params, nparams)) return table->result;
    *taken = 1;
    return NULL;
}

const uint16_t *fa_table16_get(fa_table16_key key, const double *params, int nparams, int *taken) {
    *taken = 0;
    if (!valid(key) || !atomic_load_explicit(&enabled, memory_order_relaxed)) return NULL;
    const fa_table16 *table = atomic_load_explicit(&tables[key.isa][key.op][key.tier][key.bf16], memory_order_acquire);
    return results_for(table, params, nparams, taken);
}

int fa_table16_worth_filling(fa_table16_key key, ptrdiff_t n) {
    if (!valid(key) || !atomic_load_explicit(&enabled, memory_order_relaxed)) return 0;
    _Atomic ptrdiff_t *count = &computed[key.isa][key.op][key.tier][key.bf16];
    ptrdiff_t before = atomic_fetch_add_explicit(count, n, memory_order_relaxed);
    return before + n >= FA_TABLE16_SIZE;
}

fa_table16 *fa_table16_new(const double *params, int nparams) {
    fa_table16 *table = malloc(sizeof *table);
    if (!table) return NULL;
    memset(table->params, 0, sizeof table->params);
    if (nparams) memcpy(table->params, params, (size_t)nparams * sizeof *params);
    return table;
}

const uint16_t *fa_table16_publish(fa_table16_key key, fa_table16 *filled, int nparams) {
    fa_table16 *expected = NULL;
    fa_table16 *_Atomic *slot = &tables[key.isa][key.op][key.tier][key.bf16];
    int taken;
    if (atomic_compare_exchange_strong_explicit(slot, &expected, filled, memory_order_acq_rel,
                                                memory_order_acquire))
        return filled->result;
    const uint16_t *theirs = results_for(expected, filled->params, nparams, &taken);
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
#define FA_X86_TABLE16 1
#define FA_AVX512_ __attribute__((target("avx512f")))
/* two 16-lane gathers of 32 bits at 2-byte steps (the entry and the next,
 * dropped), about 1.2x the portable loop on an Intel Xeon */
#define FA_GATHER_AHEAD 32
FA_AVX512_ static ptrdiff_t apply_avx512(const uint16_t *table, const uint16_t *x, uint16_t *y, ptrdiff_t n) {
    ptrdiff_t i = 0;
    for (; i + FA_GATHER_AHEAD <= n; i += FA_GATHER_AHEAD) {
        __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(x + i)));
        __m512i hi = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(x + i + 16)));
        __m512i got_lo = _mm512_i32gather_epi32(lo, (const void *)table, 2);
        __m512i got_hi = _mm512_i32gather_epi32(hi, (const void *)table, 2);
        _mm256_storeu_si256((__m256i *)(y + i), _mm512_cvtepi32_epi16(got_lo));
        _mm256_storeu_si256((__m256i *)(y + i + 16), _mm512_cvtepi32_epi16(got_hi));
    }
    return i;
}
#endif

void fa_table16_apply(int isa, const uint16_t *table, const char *in, ptrdiff_t in_step, char *out,
                      ptrdiff_t out_step, ptrdiff_t n, ptrdiff_t block) {
    ptrdiff_t done = 0;
    if (in_step == 2 && out_step == 2) {
        const uint16_t *x = (const uint16_t *)in;
        uint16_t *y = (uint16_t *)out;
#if defined(FA_X86_TABLE16)
        if (isa == FA_ISA_AVX512 && block >= FA_GATHER_AHEAD) done = apply_avx512(table, x, y, n);
#endif
        if (block >= 4) done += apply_portable(table, x + done, y + done, n - done);
    }
    for (ptrdiff_t i = done; i < n; i++) {
        uint16_t v;
        memcpy(&v, in + i * in_step, sizeof v);
        memcpy(out + i * out_step, &table[v], sizeof v);
    }
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
            for (int tier = 0; tier < FA_N_TIERS; tier++)
                for (int bf16 = 0; bf16 < 2; bf16++) {
                    atomic_store(&tables[isa][op][tier][bf16], NULL);
                    atomic_store(&computed[isa][op][tier][bf16], 0);
                }
}
