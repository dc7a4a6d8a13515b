/* softmax and log_softmax along one axis, forward and backward: the loops of
 * NumPy generalized ufuncs with signature (n)->(n) and (n),(n)->(n). Each
 * row runs the passes of kernels_rows.inc over fixed stretches of
 * FA_ROW_STRETCH elements (a max, the exponentials and their sum, a scaling;
 * or a dot product and the backward's map), and the stretches' partial
 * results are combined in stretch order. The stretches are the same whatever
 * the thread count, so every thread count (and every ISA: the kernels round
 * alike) gives the same bits.
 *
 * Threads: many rows are split by rows; fewer rows than threads, each long
 * enough to pay for it, have each pass split by stretches. Rows that are not
 * contiguous, or float16, are gathered into a buffer of the kernel's type
 * first and scattered after.
 *
 * Special rows, as the limits say: a NaN anywhere makes the row NaN (written
 * as the one quiet NaN, the same bits on every ISA); a row
 * whose largest element is +inf puts 1/k on each of its k infinities and 0
 * elsewhere (log: -log k and -inf); a row of -inf only is 0/0 = NaN. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/fastact.h"
#include "runtime/fastact_loops.h"
#include "half/half.h"

#define FA_ROW_STRETCH 8192    /* elements per partial result */
#define FA_ROW_SMALL_STRETCHES 64 /* partial results on the stack */

typedef struct {
    int op, direction, tier; /* tier: FA_ACCURATE or FA_FAST, which kernels run the passes */
} fa_row_spec;

static fa_row_spec row_specs[FA_N_ROW_OPS][FA_N_DIRECTIONS][FA_N_TIERS];

const void *fa_row_loop_data(int op, int direction, int tier) {
    if (op < 0 || op >= FA_N_ROW_OPS || direction < 0 || direction >= FA_N_DIRECTIONS || tier < 0 ||
        tier >= FA_N_TIERS)
        return NULL;
    row_specs[op][direction][tier] = (fa_row_spec){op, direction, tier};
    return &row_specs[op][direction][tier];
}

/* measured cost per element: [op][direction][tier][kernel dtype][split by rows?][isa] */
static unsigned _Atomic row_cost_ps[FA_N_ROW_OPS][FA_N_DIRECTIONS][FA_N_TIERS][FA_N_KDTYPES][2][FA_N_ISAS];

enum { FA_STORED_F16, FA_STORED_F32, FA_STORED_F64, FA_STORED_BF16 };
#define FA_IS_16BIT_(stored) ((stored) == FA_STORED_F16 || (stored) == FA_STORED_BF16)

/* ---- one row, contiguous, of the kernel's type ---- */

typedef struct {
    const fa_row_kernels *k;
    const fa_row_spec *spec;
    ptrdiff_t size; /* bytes per element of the kernel's type */
    const char *a, *b; /* x (forward); grad_output, output (backward) */
    char *out;
    ptrdiff_t n;
    double (*part)[2]; /* each stretch's partial result */
    int pass;
    double m, s;      /* the max; the sum, or the log of the sum */
} fa_row;

enum { PASS_MAX, PASS_EXP_STORE, PASS_EXP_SUM, PASS_SCALE, PASS_LOG_SHIFT, PASS_DOT, PASS_SUM, PASS_BWD };

static void run_pass(fa_row *r, ptrdiff_t first, ptrdiff_t last) {
    for (ptrdiff_t c = first; c < last; c++) {
        ptrdiff_t start = c * FA_ROW_STRETCH, len = r->n - start < FA_ROW_STRETCH ? r->n - start : FA_ROW_STRETCH;
        ptrdiff_t off = start * r->size;
        switch (r->pass) {
        case PASS_MAX: r->part[c][0] = r->k->max(r->a + off, len); break;
        case PASS_EXP_STORE: r->k->exp_sum(r->a + off, r->out + off, len, r->m, r->part[c]); break;
        case PASS_EXP_SUM: r->k->exp_sum(r->a + off, NULL, len, r->m, r->part[c]); break;
        case PASS_SCALE: r->k->scale(r->out + off, r->out + off, len, r->s); break;
        case PASS_LOG_SHIFT: r->k->log_shift(r->a + off, r->out + off, len, r->m, r->s); break;
        case PASS_DOT: r->k->dot(r->a + off, r->b + off, len, r->part[c]); break;
        case PASS_SUM: r->k->dot(r->a + off, NULL, len, r->part[c]); break;
        case PASS_BWD:
            if (r->spec->op == FA_ROW_SOFTMAX) r->k->softmax_bwd(r->a + off, r->b + off, r->out + off, len, r->s);
            else r->k->log_softmax_bwd(r->a + off, r->b + off, r->out + off, len, r->s);
            break;
        }
    }
}

/* fa_parallel_for's body: the stretches that begin in [begin, end) */
static void pass_range(void *ctx, ptrdiff_t begin, ptrdiff_t end) {
    ptrdiff_t first = (begin + FA_ROW_STRETCH - 1) / FA_ROW_STRETCH, last = (end + FA_ROW_STRETCH - 1) / FA_ROW_STRETCH;
    run_pass(ctx, first, last);
}

static void pass(fa_row *r, int which, const fa_cost *split) {
    r->pass = which;
    if (split) fa_parallel_for(r->n, split, FA_ROW_STRETCH, pass_range, r);
    else run_pass(r, 0, (r->n + FA_ROW_STRETCH - 1) / FA_ROW_STRETCH);
}

/* the stretches' sums added in order, as hi + lo */
static void fold_sums(const fa_row *r, double sum[2]) {
    double s = 0, c = 0;
    for (ptrdiff_t i = 0; i < (r->n + FA_ROW_STRETCH - 1) / FA_ROW_STRETCH; i++) {
        double t = s + r->part[i][0], bp = t - s;
        c += ((s - (t - bp)) + (r->part[i][0] - bp)) + r->part[i][1];
        s = t;
    }
    sum[0] = s, sum[1] = c;
}

static double get(const fa_row *r, const char *p, ptrdiff_t i) {
    return r->size == 4 ? ((const float *)p)[i] : ((const double *)p)[i];
}
static void set(const fa_row *r, char *p, ptrdiff_t i, double v) {
    if (r->size == 4) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
}

/* a row whose largest element is infinite (its NaNs are found here too) */
static void special_row(fa_row *r) {
    ptrdiff_t infinities = 0;
    int nan = 0;
    for (ptrdiff_t i = 0; i < r->n; i++) {
        double v = get(r, r->a, i);
        nan |= v != v;
        infinities += v == INFINITY;
    }
    int log_form = r->spec->op == FA_ROW_LOG_SOFTMAX;
    for (ptrdiff_t i = 0; i < r->n; i++) {
        double v = get(r, r->a, i), y;
        if (nan || r->m < 0) y = NAN; /* NaN, or -inf everywhere: 0/0 */
        else if (v == INFINITY) y = log_form ? -log((double)infinities) : 1.0 / (double)infinities;
        else y = log_form ? -INFINITY : 0.0;
        set(r, r->out, i, y);
    }
}

/* a row whose sum is NaN (a NaN in it): NaN throughout, the one quiet NaN
 * (which NaN arithmetic returns when two meet depends on operand order) */
static void nan_row(fa_row *r) {
    for (ptrdiff_t i = 0; i < r->n; i++) set(r, r->out, i, NAN);
}

static void compute_row(fa_row *r, const fa_cost *split) {
    ptrdiff_t stretches = (r->n + FA_ROW_STRETCH - 1) / FA_ROW_STRETCH;
    double small[FA_ROW_SMALL_STRETCHES][2];
    r->part = stretches <= FA_ROW_SMALL_STRETCHES ? small : malloc(sizeof(double[2]) * (size_t)stretches);
    if (!r->part) { /* no memory for the partial results: the same order, one stretch at a time */
        r->part = small;
        split = NULL;
    }
    if (r->spec->direction == FA_FWD) {
        pass(r, PASS_MAX, split);
        double m = r->part[0][0];
        for (ptrdiff_t c = 1; c < stretches; c++) m = r->part[c][0] > m ? r->part[c][0] : m; /* never NaN */
        r->m = m;
        if (isinf(m)) {
            special_row(r);
        } else if (r->spec->op == FA_ROW_SOFTMAX) {
            double sum[2];
            pass(r, PASS_EXP_STORE, split);
            fold_sums(r, sum);
            r->s = sum[0] + sum[1];
            if (r->s != r->s) nan_row(r);
            else pass(r, PASS_SCALE, split);
        } else {
            pass(r, PASS_EXP_SUM, split);
            double sum[2];
            fold_sums(r, sum);
            /* log(sum) = log1p(sum - 1) with hi - 1 exact (hi >= 1: the max's own term is 1) */
            r->s = log1p((sum[0] - 1.0) + sum[1]);
            if (r->s != r->s) nan_row(r);
            else pass(r, PASS_LOG_SHIFT, split);
        }
    } else {
        pass(r, r->spec->op == FA_ROW_SOFTMAX ? PASS_DOT : PASS_SUM, split);
        double sum[2];
        fold_sums(r, sum);
        r->s = sum[0] + sum[1];
        if (r->s != r->s) nan_row(r);
        else pass(r, PASS_BWD, split);
    }
    if (r->part != small) free(r->part);
}

/* Rows of one stretch, FA_ROW_GROUP at a time, each pass run on every row
 * of the group before the next: a row's passes are a chain (the max, then
 * the exponentials and their sum, then the scaling), and a short row spends
 * much of its time waiting on it; the rows' chains interleave instead. The
 * same kernels in the same order per row as compute_row (one stretch's
 * partial result is its own fold), so the same bits. */
#define FA_ROW_GROUP 4
#define FA_ROW_GROUP_BYTES (16 << 10) /* a group's rows in L1, its inputs and outputs */
static void short_rows(const fa_row_kernels *k, const fa_row_spec *spec, fa_row *rows, int count) {
    int done[FA_ROW_GROUP] = {0};
    double part[FA_ROW_GROUP][2];
    int forward = spec->direction == FA_FWD, softmax = spec->op == FA_ROW_SOFTMAX;
    for (int t = 0; t < count; t++) {
        fa_row *r = &rows[t];
        if (forward) r->m = k->max(r->a, r->n);
        else k->dot(r->a, softmax ? r->b : NULL, r->n, part[t]);
    }
    for (int t = 0; t < count; t++) {
        fa_row *r = &rows[t];
        if (!forward) continue;
        if (isinf(r->m)) special_row(r), done[t] = 1;
        else k->exp_sum(r->a, softmax ? r->out : NULL, r->n, r->m, part[t]);
    }
    for (int t = 0; t < count; t++) {
        fa_row *r = &rows[t];
        if (done[t]) continue;
        r->s = forward && !softmax ? log1p((part[t][0] - 1.0) + part[t][1]) : part[t][0] + part[t][1];
        if (r->s != r->s) nan_row(r);
        else if (!forward && softmax) k->softmax_bwd(r->a, r->b, r->out, r->n, r->s);
        else if (!forward) k->log_softmax_bwd(r->a, r->b, r->out, r->n, r->s);
        else if (softmax) k->scale(r->out, r->out, r->n, r->s);
        else k->log_shift(r->a, r->out, r->n, r->m, r->s);
    }
}

/* ---- the gufunc loop: rows of any layout and dtype ---- */

typedef struct {
    const fa_row_kernels *k;
    const fa_row_spec *spec;
    int stored;         /* FA_STORED_* */
    ptrdiff_t size;     /* kernel type's bytes */
    int nin;
    char *args[3];
    ptrdiff_t outer[3], core[3]; /* steps between rows, and between a row's elements */
    ptrdiff_t rows, n;
    const fa_cost *split;        /* within a row (NULL: not split) */
} fa_rows_job;

static void gather(const fa_rows_job *job, const char *src, ptrdiff_t step, char *dst) {
    for (ptrdiff_t i = 0; i < job->n; i++, src += step) {
        switch (job->stored) {
        case FA_STORED_F16: ((float *)dst)[i] = fa_half_to_float(*(const uint16_t *)src); break;
        case FA_STORED_BF16: ((float *)dst)[i] = fa_bf16_to_float(*(const uint16_t *)src); break;
        case FA_STORED_F32: ((float *)dst)[i] = *(const float *)src; break;
        default: ((double *)dst)[i] = *(const double *)src; break;
        }
    }
}

static void scatter(const fa_rows_job *job, const char *src, char *dst, ptrdiff_t step) {
    for (ptrdiff_t i = 0; i < job->n; i++, dst += step) {
        switch (job->stored) {
        case FA_STORED_F16: *(uint16_t *)dst = fa_float_to_half(((const float *)src)[i]); break;
        case FA_STORED_BF16: *(uint16_t *)dst = fa_float_to_bf16(((const float *)src)[i]); break;
        case FA_STORED_F32: *(float *)dst = ((const float *)src)[i]; break;
        default: *(double *)dst = ((const double *)src)[i]; break;
        }
    }
}

static void one_row(const fa_rows_job *job, ptrdiff_t row, const fa_cost *split) {
    int nargs = job->nin + 1, direct = !FA_IS_16BIT_(job->stored);
    for (int a = 0; a < nargs; a++) direct &= job->core[a] == job->size;
    char *p[3];
    for (int a = 0; a < nargs; a++) p[a] = job->args[a] + row * job->outer[a];
    char *buffer = NULL;
    if (!direct) {
        buffer = malloc((size_t)(nargs * job->n * job->size));
        if (!buffer) { /* no memory: NaN is the honest answer */
            for (ptrdiff_t i = 0; i < job->n; i++) {
                char *dst = p[job->nin] + i * job->core[job->nin];
                if (job->stored == FA_STORED_F16) *(uint16_t *)dst = 0x7e00;
                else if (job->stored == FA_STORED_BF16) *(uint16_t *)dst = 0x7fc0;
                else if (job->stored == FA_STORED_F32) *(float *)dst = NAN;
                else *(double *)dst = NAN;
            }
            return;
        }
        for (int a = 0; a < job->nin; a++) gather(job, p[a], job->core[a], buffer + a * job->n * job->size);
    }
    fa_row r = {.k = job->k, .spec = job->spec, .size = job->size, .n = job->n,
                .a = direct ? p[0] : buffer,
                .b = job->nin > 1 ? (direct ? p[1] : buffer + job->n * job->size) : NULL,
                .out = direct ? p[job->nin] : buffer + job->nin * job->n * job->size};
    compute_row(&r, split);
    if (!direct) {
        scatter(job, r.out, p[job->nin], job->core[job->nin]);
        free(buffer);
    }
}

/* Rows that are not contiguous (softmax along axis 0 of a C-ordered array:
 * each row's elements a row of the array apart) are gathered FA_ROW_TILE at
 * a time, element i of every row of the tile together: neighbouring rows
 * usually share cache lines, which row-by-row gathering would read once per
 * row, and the lines of element i + 8 are prefetched (a column walk defeats
 * the hardware prefetchers). The buffer holds the tile's rows contiguous,
 * for compute_row. */
#define FA_ROW_TILE 64
#if defined(__GNUC__) || defined(__clang__)
#define FA_PREFETCH(p) __builtin_prefetch(p)
#else
#define FA_PREFETCH(p) ((void)(p))
#endif
#define FA_ROW_TILE_BYTES (4 << 20) /* beyond it, row by row */

/* count rows' element i, for i < n, from the stored dtype into count
 * contiguous rows of the kernel's type at dst, ld elements apart (and back,
 * scatter_tile) */
#define FA_TILE_LOOPS_(tag, stored_t, kernel_t, load, store)                                          \
    static void gather_tile_##tag(const char *src, ptrdiff_t outer, ptrdiff_t core, ptrdiff_t n, \
                                       ptrdiff_t count, char *dst, ptrdiff_t ld) {               \
        for (ptrdiff_t i = 0; i < n; i++) {                                                     \
            if (i + 8 < n) /* the memory a column walk reads is far apart: ask early */          \
                for (ptrdiff_t t = 0; t < count; t += 64 / (ptrdiff_t)sizeof(stored_t))          \
                    FA_PREFETCH(src + t * outer + (i + 8) * core);                               \
            for (ptrdiff_t t = 0; t < count; t++)                                               \
                ((kernel_t *)dst)[t * ld + i] = load(*(const stored_t *)(src + t * outer + i * core)); \
        }                                                                                       \
    }                                                                                           \
    static void scatter_tile_##tag(const char *src, char *dst, ptrdiff_t outer, ptrdiff_t core, \
                                        ptrdiff_t n, ptrdiff_t count, ptrdiff_t ld) {            \
        for (ptrdiff_t i = 0; i < n; i++)                                                       \
            for (ptrdiff_t t = 0; t < count; t++)                                               \
                *(stored_t *)(dst + t * outer + i * core) = store(((const kernel_t *)src)[t * ld + i]); \
    }
#define FA_AS_IS_(v) (v)
FA_TILE_LOOPS_(f16, uint16_t, float, fa_half_to_float, fa_float_to_half)
FA_TILE_LOOPS_(bf16, uint16_t, float, fa_bf16_to_float, fa_float_to_bf16)
FA_TILE_LOOPS_(f32, float, float, FA_AS_IS_, FA_AS_IS_)
FA_TILE_LOOPS_(f64, double, double, FA_AS_IS_, FA_AS_IS_)

static void gather_tile(const fa_rows_job *job, const char *src, ptrdiff_t outer, ptrdiff_t core, ptrdiff_t count,
                        char *dst, ptrdiff_t ld) {
    if (job->stored == FA_STORED_F16) gather_tile_f16(src, outer, core, job->n, count, dst, ld);
    else if (job->stored == FA_STORED_BF16) gather_tile_bf16(src, outer, core, job->n, count, dst, ld);
    else if (job->stored == FA_STORED_F32) gather_tile_f32(src, outer, core, job->n, count, dst, ld);
    else gather_tile_f64(src, outer, core, job->n, count, dst, ld);
}

static void scatter_tile(const fa_rows_job *job, const char *src, char *dst, ptrdiff_t outer, ptrdiff_t core,
                         ptrdiff_t count, ptrdiff_t ld) {
    if (job->stored == FA_STORED_F16) scatter_tile_f16(src, dst, outer, core, job->n, count, ld);
    else if (job->stored == FA_STORED_BF16) scatter_tile_bf16(src, dst, outer, core, job->n, count, ld);
    else if (job->stored == FA_STORED_F32) scatter_tile_f32(src, dst, outer, core, job->n, count, ld);
    else scatter_tile_f64(src, dst, outer, core, job->n, count, ld);
}

static void tile_of_rows(const fa_rows_job *job, ptrdiff_t row0, ptrdiff_t count) {
    int nargs = job->nin + 1;
    /* the buffer's rows 64 bytes more than a row apart: rows a multiple of 4 KiB
     * apart share cache sets, and the gather writes to every row in turn */
    ptrdiff_t ld = job->n + 64 / job->size;
    size_t row_bytes = (size_t)(ld * job->size);
    char *buffer = count > 1 && (size_t)nargs * (size_t)count * row_bytes <= FA_ROW_TILE_BYTES
                       ? malloc((size_t)nargs * (size_t)count * row_bytes)
                       : NULL;
    if (!buffer) {
        for (ptrdiff_t t = 0; t < count; t++) one_row(job, row0 + t, NULL);
        return;
    }
    for (int a = 0; a < job->nin; a++)
        gather_tile(job, job->args[a] + row0 * job->outer[a], job->outer[a], job->core[a], count,
                    buffer + (size_t)a * (size_t)count * row_bytes, ld);
    char *outs = buffer + (size_t)job->nin * (size_t)count * row_bytes;
    for (ptrdiff_t t = 0; t < count; t++) {
        fa_row r = {.k = job->k, .spec = job->spec, .size = job->size, .n = job->n,
                    .a = buffer + (size_t)t * row_bytes,
                    .b = job->nin > 1 ? buffer + ((size_t)count + (size_t)t) * row_bytes : NULL,
                    .out = outs + (size_t)t * row_bytes};
        compute_row(&r, NULL);
    }
    int o = job->nin;
    scatter_tile(job, outs, job->args[o] + row0 * job->outer[o], job->outer[o], job->core[o], count, ld);
    free(buffer);
}

/* float32 rows side by side (neighbouring rows' elements adjacent, as
 * along axis 0 of a C-ordered array): the kernels' column form, a vector
 * across rows. Up to FA_ROW_TILE rows at a time are copied to a dense
 * buffer (element i of each together, the lines of element i + 8
 * prefetched, as the tiles gather) and the results back: an array's rows a
 * power of two apart share cache sets, and each pass over a group reads it
 * again. A group of k->columns rows the kernel declines goes to the tiles
 * after the copy back. Whole groups only; returns the first row left. */
static ptrdiff_t columns_of_rows(const fa_rows_job *job, ptrdiff_t row, ptrdiff_t last) {
    const fa_row_kernels *k = job->k;
    int side_by_side = k->columns > 0 && job->stored == FA_STORED_F32 && job->n <= FA_ROW_STRETCH &&
                       last - row >= k->columns;
    for (int a = 0; a <= job->nin; a++) side_by_side &= job->outer[a] == job->size;
    if (!side_by_side) return row;
    ptrdiff_t n = job->n, most = FA_ROW_TILE / k->columns * k->columns;
    char *buffer = malloc((size_t)((job->nin + 1) * n * most * job->size));
    if (!buffer) return row;
    while (last - row >= k->columns) {
        ptrdiff_t count = (last - row < most ? last - row : most) / k->columns * k->columns;
        ptrdiff_t width = count * job->size; /* bytes of element i of the rows */
        char *p[3], *b[3];
        for (int a = 0; a <= job->nin; a++) {
            p[a] = job->args[a] + row * job->outer[a], b[a] = buffer + a * n * width;
            if (a == job->nin) break;
            for (ptrdiff_t i = 0; i < n; i++) {
                if (i + 8 < n)
                    for (ptrdiff_t at = 0; at < width; at += 64) FA_PREFETCH(p[a] + (i + 8) * job->core[a] + at);
                memcpy(b[a] + i * width, p[a] + i * job->core[a], (size_t)width);
            }
        }
        int declined[FA_ROW_TILE];
        for (ptrdiff_t g = 0; g < count; g += k->columns) {
            ptrdiff_t at = g * job->size;
            int op = job->spec->op;
            declined[g] = job->spec->direction == FA_FWD
                              ? k->fwd_columns[op](b[0] + at, width, b[1] + at, width, n)
                              : k->bwd_columns[op](b[0] + at, width, b[1] + at, width, b[2] + at, width, n);
        }
        char *out = p[job->nin], *done = b[job->nin];
        for (ptrdiff_t i = 0; i < n; i++) memcpy(out + i * job->core[job->nin], done + i * width, (size_t)width);
        for (ptrdiff_t g = 0; g < count; g += k->columns)
            if (declined[g]) tile_of_rows(job, row + g, k->columns);
        row += count;
    }
    free(buffer);
    return row;
}

/* fa_parallel_for's body over rows * n elements: the rows that begin in [begin, end) */
static void rows_range(void *ctx, ptrdiff_t begin, ptrdiff_t end) {
    const fa_rows_job *job = ctx;
    ptrdiff_t row = (begin + job->n - 1) / job->n, last = (end + job->n - 1) / job->n;
    int direct = !FA_IS_16BIT_(job->stored);
    for (int a = 0; a <= job->nin; a++) direct &= job->core[a] == job->size;
    if (direct && job->n <= FA_ROW_STRETCH) {
        ptrdiff_t fit = FA_ROW_GROUP_BYTES / (job->n * job->size * (job->nin + 1));
        ptrdiff_t most = fit < 1 ? 1 : fit > FA_ROW_GROUP ? FA_ROW_GROUP : fit;
        for (ptrdiff_t count; row < last; row += count) {
            count = last - row < most ? last - row : most;
            fa_row group[FA_ROW_GROUP];
            for (ptrdiff_t t = 0; t < count; t++) {
                ptrdiff_t at = row + t;
                group[t] = (fa_row){.k = job->k, .spec = job->spec, .size = job->size, .n = job->n,
                                    .a = job->args[0] + at * job->outer[0],
                                    .b = job->nin > 1 ? job->args[1] + at * job->outer[1] : NULL,
                                    .out = job->args[job->nin] + at * job->outer[job->nin]};
            }
            short_rows(job->k, job->spec, group, (int)count);
        }
        return;
    }
    if (direct) {
        for (; row < last; row++) one_row(job, row, NULL);
        return;
    }
    row = columns_of_rows(job, row, last);
    for (ptrdiff_t count; row < last; row += count) {
        count = last - row < FA_ROW_TILE ? last - row : FA_ROW_TILE;
        tile_of_rows(job, row, count);
    }
}

static void run(int stored, char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, const void *data) {
    const fa_row_spec *spec = data;
    int kd = stored == FA_STORED_F64 ? FA_KF64 : FA_KF32, nin = spec->direction == FA_FWD ? 1 : 2;
    fa_rows_job job = {.k = &fa_kernels_current()->rows[kd][spec->tier], .spec = spec, .stored = stored,
                       .size = kd == FA_KF64 ? 8 : 4, .nin = nin, .rows = dims[0], .n = dims[1]};
    for (int a = 0; a <= nin; a++) {
        job.args[a] = args[a];
        job.outer[a] = steps[a];
        job.core[a] = steps[nin + 1 + a];
    }
    if (job.rows <= 0 || job.n <= 0) return;
    long saved = fa_round_to_nearest();
    int isa = fa_isa_current();
    fa_cost by_rows = {&row_cost_ps[spec->op][spec->direction][spec->tier][kd][1][isa], 0};
    fa_cost by_stretch = {&row_cost_ps[spec->op][spec->direction][spec->tier][kd][0][isa], 0};
    if (job.rows >= fa_num_threads() || job.n < 2 * FA_ROW_STRETCH) {
        fa_parallel_for(job.rows * job.n, &by_rows, job.n, rows_range, &job);
    } else {
        for (ptrdiff_t row = 0; row < job.rows; row++) one_row(&job, row, &by_stretch);
    }
    fa_restore_rounding(saved);
}

void fa_row_loop_f16(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data) {
    run(FA_STORED_F16, args, dims, steps, data);
}
void fa_row_loop_f32(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data) {
    run(FA_STORED_F32, args, dims, steps, data);
}
void fa_row_loop_f64(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data) {
    run(FA_STORED_F64, args, dims, steps, data);
}
void fa_row_loop_bf16(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data) {
    run(FA_STORED_BF16, args, dims, steps, data);
}
