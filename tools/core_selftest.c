/* A standalone test of the C core without Python, for targets this machine
 * can only emulate (tools/check_cross.sh builds it for aarch64 and runs it
 * under qemu-aarch64). It links src_c/ as is and checks, for every kernel
 * set the build has (scalar; also neon on AArch64, sse2 on x86-64, the
 * default there):
 *   - dispatch: the sets supported, and the best one current;
 *   - accuracy: every kernel (forward and backward, float64 and float32) on
 *     fixed points against values computed independently with mpmath at high
 *     precision (expected.h, written by check_cross.sh; never fastact output):
 *     forward within 2 ULP of the exact value, backward within 4 ULP of the
 *     derivative's largest term (the bounds in fastact/_registry.py; 1 and 2
 *     float32 ULP for the float32 kernels), relu exact; the fast tier within
 *     4 and 8 ULP in both precisions;
 *   - the NumPy inner loops (loops.c): strided and float16 data give the same
 *     bits as the kernel on contiguous data; float16 within 1 ULP of mpmath;
 *   - threads.c: a fixed split over 4 threads runs each chunk once, on 4
 *     threads, under the caller's rounding mode, and a flag raised by a
 *     worker reaches the caller; a large call split over 4 threads gives the
 *     same bits;
 *   - it prints an FNV-1a hash of every kernel's output (every op, gated
 *     and bias ones included, both directions, dtypes and tiers, and
 *     softmax's row passes) on a sweep,
 *     which must be the same for every set here and equal the hash of the
 *     same program built for the host (same bits on every architecture).
 * Exit status 0 when every check passes. */
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/fastact.h"
#include "runtime/fastact_loops.h"
#include "half/half.h"

/* struct expected { int op, exact; double x, fwd, bwd, scale; float fwd32, bwd32, scale32; uint16_t fwd16; } */
#include "expected.h"

#define FA_OP_NAME_(name, NAME) #name,
static const char *const op_names[FA_N_OPS] = {FA_OPS(FA_OP_NAME_)};

/* The kernel set under test (and current, for the NumPy loops): its
 * kernels of one tier, through the generic signature, with the op's default
 * parameters. The accuracy checks take the activations only: an op without
 * a backward (a derivative from the output) is left to the Python tests. */
static const fa_kernels *kernels = &fa_kernels_scalar;
static const int nparams[FA_N_OPS] = FA_OP_NPARAMS_INIT;
static const double default_params[FA_N_OPS][FA_MAX_PARAMS] = FA_OP_DEFAULT_PARAMS_INIT;
static int is_activation(int op) {
    return fa_op_arity[op][FA_FWD][0] == 1 && kernels->kernel[op][FA_BWD][FA_KF64][FA_ACCURATE] != NULL;
}
static int has_tier(int op, int tier) {
    return is_activation(op) && kernels->kernel[op][FA_FWD][FA_KF64][tier] != NULL;
}
static void fwd_tier(int tier, int op, int kdtype, const void *x, void *y, ptrdiff_t n) {
    const void *in[1] = {x};
    void *out[1] = {y};
    kernels->kernel[op][FA_FWD][kdtype][tier](in, out, n, default_params[op]);
}
static void bwd_tier(int tier, int op, int kdtype, const void *g, const void *x, void *y, ptrdiff_t n) {
    const void *in[2] = {g, x};
    void *out[1] = {y};
    kernels->kernel[op][FA_BWD][kdtype][tier](in, out, n, default_params[op]);
}
/* a NumPy inner loop call: the arrays, then the op's parameters as stride-0
 * float64 operands, then the output */
static void loop(void (*fn)(char **, const ptrdiff_t *, const ptrdiff_t *, void *), int op, int direction,
                 int nin, char *const *arrays, const ptrdiff_t *array_steps, ptrdiff_t n) {
    char *args[FA_MAX_INPUTS + FA_MAX_PARAMS + FA_MAX_OUTPUTS];
    ptrdiff_t steps[FA_MAX_INPUTS + FA_MAX_PARAMS + FA_MAX_OUTPUTS];
    int a = 0;
    for (int i = 0; i < nin; i++) args[a] = arrays[i], steps[a++] = array_steps[i];
    for (int j = 0; j < nparams[op]; j++) args[a] = (char *)&default_params[op][j], steps[a++] = 0;
    args[a] = arrays[nin], steps[a] = array_steps[nin];
    ptrdiff_t dims[1] = {n};
    fn(args, dims, steps, (void *)fa_loop_data(op, direction, FA_ACCURATE));
}
static void fwd(int op, int kdtype, const void *x, void *y, ptrdiff_t n) { fwd_tier(FA_ACCURATE, op, kdtype, x, y, n); }
static void bwd(int op, int kdtype, const void *g, const void *x, void *y, ptrdiff_t n) {
    bwd_tier(FA_ACCURATE, op, kdtype, g, x, y, n);
}
static int failures;

static double ulp64(double v) {
    v = fabs(v);
    if (!isfinite(v)) return 0.0;
    return v < 0x1p-1022 ? 0x1p-1074 : nextafter(v, INFINITY) - v;
}
static double ulp32(float v) {
    v = fabsf(v);
    if (!isfinite(v)) return 0.0;
    return v < 0x1p-126f ? 0x1p-149 : (double)(nextafterf(v, INFINITY) - v);
}

/* got == want for NaN/inf/exact cases, else |got - want| <= tol */
static void check(const char *what, int op, double x, double got, double want, double tol) {
    int ok;
    if (isnan(want)) ok = isnan(got);
    else if (isinf(want) || tol == 0.0) ok = got == want && signbit(got) == signbit(want);
    else ok = fabs(got - want) <= tol;
    if (!ok) {
        failures++;
        printf("FAIL %s %s(%a): got %a want %a (diff %.3g, tolerance %.3g)\n", what, op_names[op], x, got, want,
               fabs(got - want), tol);
    }
}

static void check_accuracy(void) {
    size_t n = sizeof expected / sizeof expected[0];
    for (size_t i = 0; i < n; i++) {
        const struct expected *e = &expected[i];
        if (!is_activation(e->op)) continue;
        int exact = e->exact;
        double x = e->x, one = 1.0, y, d;
        fwd(e->op, FA_KF64, &x, &y, 1);
        bwd(e->op, FA_KF64, &one, &x, &d, 1);
        check("fwd_f64", e->op, x, y, e->fwd, exact ? 0.0 : 2 * ulp64(e->fwd));
        check("bwd_f64", e->op, x, d, e->bwd, exact ? 0.0 : 4 * ulp64(e->scale));

        float x32 = (float)e->x, one32 = 1.0f, y32, d32;
        if ((double)x32 != e->x && isfinite(e->x)) continue; /* the float32 rows use float32 points */
        fwd(e->op, FA_KF32, &x32, &y32, 1);
        bwd(e->op, FA_KF32, &one32, &x32, &d32, 1);
        check("fwd_f32", e->op, x, y32, e->fwd32, exact ? 0.0 : ulp32(e->fwd32));
        check("bwd_f32", e->op, x, d32, e->bwd32, exact ? 0.0 : 2 * ulp32(e->scale32));

        /* float16 through the NumPy loop: computed in float32, rounded once */
        uint16_t h = fa_float_to_half(x32), out;
        if (fa_half_to_float(h) != x32) continue;
        char *args[2] = {(char *)&h, (char *)&out};
        ptrdiff_t steps[2] = {2, 2};
        loop(fa_loop_f16, e->op, FA_FWD, 1, args, steps, 1);
        float got16 = fa_half_to_float(out), want16 = fa_half_to_float(e->fwd16);
        /* one float16 ULP: 2^-10 relative, 2^-24 in the subnormals */
        double tol16 = exact ? 0.0 : fmax(ldexp(fabs(want16), -10), 0x1p-24);
        check("fwd_f16", e->op, x, got16, want16, tol16);
    }
}

/* The fast tier on the same points: 4 ULP forward, 8 of the largest term backward. */
static void check_fast_accuracy(void) {
    size_t n = sizeof expected / sizeof expected[0];
    for (size_t i = 0; i < n; i++) {
        const struct expected *e = &expected[i];
        if (!has_tier(e->op, FA_FAST)) continue;
        double x = e->x, one = 1.0, y, d;
        fwd_tier(FA_FAST, e->op, FA_KF64, &x, &y, 1);
        bwd_tier(FA_FAST, e->op, FA_KF64, &one, &x, &d, 1);
        check("fast fwd_f64", e->op, x, y, e->fwd, 4 * ulp64(e->fwd));
        check("fast bwd_f64", e->op, x, d, e->bwd, 8 * ulp64(e->scale));
        float x32 = (float)e->x, one32 = 1.0f, y32, d32;
        if ((double)x32 != e->x && isfinite(e->x)) continue;
        fwd_tier(FA_FAST, e->op, FA_KF32, &x32, &y32, 1);
        bwd_tier(FA_FAST, e->op, FA_KF32, &one32, &x32, &d32, 1);
        /* the float32 rows' reference is float32-rounded: half an ULP more */
        check("fast fwd_f32", e->op, x, y32, e->fwd32, 4.5 * ulp32(e->fwd32));
        check("fast bwd_f32", e->op, x, d32, e->bwd32, 8.5 * ulp32(e->scale32));
    }
}

static int same_bits(const void *a, const void *b, size_t bytes) { return memcmp(a, b, bytes) == 0; }

/* The pool itself: what each block saw, filled in by the thread that ran it.
 * Blocks are claimed, so which thread runs which is not fixed: each block
 * lasts 2 ms, long enough for the woken workers to claim some, and raises
 * overflow where a worker runs it (the flag must reach the caller). */
enum { POOL_CHUNKS = 4, POOL_GRAIN = 4096 };
static _Thread_local char thread_marker;
static const void *pool_caller;
static struct {
    const void *thread;      /* &thread_marker of the thread that ran it */
    int runs, rounded_up;
} pool_chunks[POOL_CHUNKS];

static void pool_chunk(void *ctx, ptrdiff_t begin, ptrdiff_t end) {
    (void)ctx;
    int i = (int)(begin / POOL_GRAIN);
    if (i < 0 || i >= POOL_CHUNKS || end - begin != POOL_GRAIN) {
        failures++, printf("FAIL pool: unexpected block [%ld, %ld)\n", (long)begin, (long)end);
        return;
    }
    volatile double one = 1.0, three = 3.0;
    pool_chunks[i].thread = &thread_marker;
    pool_chunks[i].runs++;
    pool_chunks[i].rounded_up = one / three > 0.3333333333333333; /* the nearest double is below 1/3 */
    if (&thread_marker != pool_caller) { /* on a worker, by arithmetic as a kernel raises it (not through x87) */
        volatile double huge = 1e308, product = huge * 10.0;
        (void)product;
    }
    for (double until = fa_now_ns() + 2e6; fa_now_ns() < until;) {
    }
}

static void check_pool(void) {
    int before = failures;
    fa_set_num_threads(POOL_CHUNKS);
    fa_cost fixed = {NULL, POOL_GRAIN};
    pool_caller = &thread_marker;
    fesetround(FE_UPWARD);
    feclearexcept(FE_ALL_EXCEPT);
    fa_parallel_for(POOL_CHUNKS * POOL_GRAIN, &fixed, POOL_GRAIN, pool_chunk, NULL);
    int overflow = fetestexcept(FE_OVERFLOW) != 0;
    fesetround(FE_TONEAREST);
    feclearexcept(FE_ALL_EXCEPT);
    fa_set_num_threads(1);
    int threads = 0, on_workers = 0;
    for (int i = 0; i < POOL_CHUNKS; i++) {
        int new_thread = 1;
        for (int j = 0; j < i; j++) new_thread &= pool_chunks[j].thread != pool_chunks[i].thread;
        threads += new_thread;
        on_workers += pool_chunks[i].thread != pool_caller;
        if (pool_chunks[i].runs != 1) failures++, printf("FAIL pool: block %d ran %d times\n", i, pool_chunks[i].runs);
        if (!pool_chunks[i].rounded_up) failures++, printf("FAIL pool: block %d ignored the caller's rounding\n", i);
    }
    if (on_workers == 0) failures++, printf("FAIL pool: the caller ran all %d blocks\n", POOL_CHUNKS);
    if (on_workers > 0 && !overflow) failures++, printf("FAIL pool: a worker's overflow flag did not reach the caller\n");
    printf("thread pool: %d blocks on %d threads, the caller's rounding, a worker's flag raised here: %s\n",
           POOL_CHUNKS, threads, failures == before ? "ok" : "FAILED");
}

/* Loops and threads: strided, float16 and threaded calls give the kernel's bits. */
static void check_loops_and_threads(void) {
    enum { N = 1 << 18 };
    int before = failures;
    double *x = malloc(2 * N * sizeof *x), *y = malloc(N * sizeof *y), *ref = malloc(N * sizeof *ref);
    double *g = malloc(N * sizeof *g), *d = malloc(N * sizeof *d), *dref = malloc(N * sizeof *dref);
    if (!x || !y || !ref || !g || !d || !dref) abort();
    for (int i = 0; i < N; i++) {
        x[i] = -30.0 + 60.0 * i / (N - 1);
        g[i] = 1.0 + (i % 7) * 0.25;
    }
    for (int op = 0; op < FA_N_OPS; op++) {
        if (!is_activation(op)) continue;
        fwd(op, FA_KF64, x, ref, N);
        bwd(op, FA_KF64, g, x, dref, N);
        /* contiguous, over up to 4 threads */
        fa_set_num_threads(4);
        char *args[2] = {(char *)x, (char *)y};
        ptrdiff_t steps[3] = {8, 8, 8};
        loop(fa_loop_f64, op, FA_FWD, 1, args, steps, N);
        if (!same_bits(y, ref, N * sizeof *y)) { failures++; printf("FAIL threaded fwd_f64 %s\n", op_names[op]); }
        char *bargs[3] = {(char *)g, (char *)x, (char *)d};
        loop(fa_loop_f64, op, FA_BWD, 2, bargs, steps, N);
        if (!same_bits(d, dref, N * sizeof *d)) { failures++; printf("FAIL threaded bwd_f64 %s\n", op_names[op]); }
        fa_set_num_threads(1);
        /* strided input: every other element of a copy spread out */
        for (int i = N - 1; i >= 0; i--) x[2 * i] = x[i], x[2 * i + 1] = NAN;
        ptrdiff_t ssteps[2] = {16, 8};
        char *sargs[2] = {(char *)x, (char *)y};
        loop(fa_loop_f64, op, FA_FWD, 1, sargs, ssteps, N);
        if (!same_bits(y, ref, N * sizeof *y)) { failures++; printf("FAIL strided fwd_f64 %s\n", op_names[op]); }
        for (int i = 0; i < N; i++) x[i] = x[2 * i];
    }
    printf("loops and threads: %d elements, 4 threads, strided and contiguous: %s\n", N,
           failures == before ? "same bits" : "FAILED");
    free(x), free(y), free(ref), free(g), free(d), free(dref);
}

/* FNV-1a over every kernel's output on a fixed sweep (plus specials). */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
/* every kernel of the set (each op, direction, tier and dtype) on n elements
 * of the rows in64/in32 (a backward takes g, row 1, first, then the forward's
 * inputs, row 0 first), into the rows out64/out32; after each, visit() */
typedef struct {
    int op, direction, tier, kdtype, nout;
    void *out[FA_MAX_OUTPUTS];
} kernel_run;
static void run_every_kernel(ptrdiff_t n, const double *in64, const float *in32, double *out64, float *out32,
                             ptrdiff_t row, void (*visit)(const kernel_run *run, void *ctx), void *ctx) {
    for (int op = 0; op < FA_N_OPS; op++)
        for (int direction = 0; direction < FA_N_DIRECTIONS; direction++)
            for (int tier = 0; tier < FA_N_TIERS; tier++)
                for (int kdtype = 0; kdtype < FA_N_KDTYPES; kdtype++) {
                    fa_kernel kernel = kernels->kernel[op][direction][kdtype][tier];
                    if (!kernel) continue;
                    int nin = fa_op_arity[op][direction][0];
                    kernel_run run = {op, direction, tier, kdtype, fa_op_arity[op][direction][1], {NULL}};
                    const void *in[FA_MAX_INPUTS];
                    for (int k = 0; k < nin; k++) {
                        int which = direction == FA_BWD ? (k == 0 ? 1 : k == 1 ? 0 : k) : k;
                        in[k] = kdtype == FA_KF64 ? (const void *)(in64 + which * row) : (const void *)(in32 + which * row);
                    }
                    for (int o = 0; o < run.nout; o++)
                        run.out[o] = kdtype == FA_KF64 ? (void *)(out64 + o * row) : (void *)(out32 + o * row);
                    kernel(in, run.out, n, default_params[op]);
                    visit(&run, ctx);
                }
}

/* every kernel of the set: ops of any arity (their inputs the sweep and two
 * other sequences), each direction, dtype and tier */
enum { SWEEP = 40001 + 8 };
static void hash_outputs(const kernel_run *run, void *ctx) {
    uint64_t *h = ctx;
    for (int o = 0; o < run->nout; o++)
        *h = fnv(*h, run->out[o], SWEEP * (run->kdtype == FA_KF64 ? sizeof(double) : sizeof(float)));
}
static uint64_t sweep_hash(void) {
    enum { M = SWEEP };
    static double in64[FA_MAX_INPUTS][M], out64[FA_MAX_OUTPUTS][M];
    static float in32[FA_MAX_INPUTS][M], out32[FA_MAX_OUTPUTS][M];
    const double specials[8] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0x1p-1074, -0x1p-1060, 1e300};
    for (int i = 0; i < M; i++) {
        double x = i < 40001 ? -40.0 + i * 0.002 : specials[i - 40001];
        double others[FA_MAX_INPUTS] = {x, 0.5 + (i % 5) * 0.375, -3.0 + (i % 13) * 0.5};
        for (int k = 0; k < FA_MAX_INPUTS; k++) in64[k][i] = others[k], in32[k][i] = (float)others[k];
    }
    uint64_t h = 0xcbf29ce484222325ull;
    run_every_kernel(M, in64[0], in32[0], out64[0], out32[0], M, hash_outputs, &h);
    /* softmax's and log_softmax's passes over a stretch of a row */
    for (int kdtype = 0; kdtype < FA_N_KDTYPES; kdtype++)
    for (int tier = 0; tier < FA_N_TIERS; tier++) {
        const fa_row_kernels *row = &kernels->rows[kdtype][tier];
        const void *x = kdtype == FA_KF64 ? (const void *)in64[0] : (const void *)in32[0];
        const void *g = kdtype == FA_KF64 ? (const void *)in64[1] : (const void *)in32[1];
        void *e = kdtype == FA_KF64 ? (void *)out64[0] : (void *)out32[0];
        void *y = kdtype == FA_KF64 ? (void *)out64[1] : (void *)out32[1];
        size_t bytes = kdtype == FA_KF64 ? sizeof out64[0] : sizeof out32[0];
        /* the sweep without the special values: inf - inf would make a NaN,
         * whose bits are the architecture's default NaN (x86's has the sign set) */
        ptrdiff_t finite = 40001;
        double all_max = row->max(x, M), m = row->max(x, finite), sums[4][2];
        row->exp_sum(x, e, finite, m, sums[0]);
        h = fnv(h, e, bytes);
        row->dot(e, g, finite, sums[1]);
        row->dot(e, NULL, finite, sums[2]);
        row->scale(e, y, finite, sums[0][0] + sums[0][1]);
        h = fnv(h, y, bytes);
        row->log_shift(x, y, finite, m, 0.75);
        h = fnv(h, y, bytes);
        row->softmax_bwd(g, e, y, finite, 0.25);
        h = fnv(h, y, bytes);
        row->log_softmax_bwd(g, x, y, finite, 1.5);
        h = fnv(h, y, bytes);
        row->exp_sum(x, NULL, finite, m - 1.0, sums[3]);
        h = fnv(h, &all_max, sizeof all_max);
        h = fnv(h, &m, sizeof m);
        h = fnv(h, sums, sizeof sums);
        if (row->columns > 0) { /* 16 rows of 600 side by side, the kernels' column form in groups of
                                 * row->columns: the same layout and bits whatever the width */
            enum { ROWS = 16, LENGTH = 600 };
            static float xs[LENGTH][ROWS], gs[LENGTH][ROWS], ys[LENGTH][ROWS], outs[LENGTH][ROWS];
            for (int i = 0; i < LENGTH; i++)
                for (int j = 0; j < ROWS; j++)
                    xs[i][j] = in32[0][(i * 61 + j * 2503) % finite], gs[i][j] = in32[1][(i + j) % finite];
            int declined = 0;
            for (int op = 0; op < 2; op++) {
                for (int j = 0; j < ROWS; j += row->columns) {
                    declined += row->fwd_columns[op](&xs[0][j], sizeof xs[0], &ys[0][j], sizeof ys[0], LENGTH);
                    declined += row->bwd_columns[op](&gs[0][j], sizeof gs[0], &ys[0][j], sizeof ys[0], &outs[0][j],
                                                     sizeof outs[0], LENGTH);
                }
                h = fnv(h, ys, sizeof ys);
                h = fnv(h, outs, sizeof outs);
            }
            h = fnv(h, &declined, sizeof declined);
        }
    }
    return h;
}

/* a quiet NaN is no invalid operation: NumPy would warn on the flag. Every
 * kernel of the set, its inputs quiet NaNs among ordinary values (AArch64's
 * ordered compares, like SSE2's, raise the flag unless NaN lanes are
 * zeroed first). */
struct flag_count {
    const char *set;
    int flagged;
};
static void count_invalid(const kernel_run *run, void *ctx) {
    struct flag_count *counted = ctx;
    if (fetestexcept(FE_INVALID) && counted->flagged++ < 5)
        printf("FAIL %s: %s %s (%s, tier %d) raised invalid on quiet NaNs\n", counted->set, op_names[run->op],
               run->direction == FA_FWD ? "fwd" : "bwd", run->kdtype == FA_KF64 ? "float64" : "float32", run->tier);
    feclearexcept(FE_ALL_EXCEPT);
}
static void check_quiet_nan(const char *name) {
    enum { M = 37 };
    static double in64[FA_MAX_INPUTS][M], out64[FA_MAX_OUTPUTS][M];
    static float in32[FA_MAX_INPUTS][M], out32[FA_MAX_OUTPUTS][M];
    const double values[7] = {NAN, 1.5, -2.0, 0.0, -NAN, 0.25, -7.5};
    for (int k = 0; k < FA_MAX_INPUTS; k++)
        for (int i = 0; i < M; i++) {
            double v = values[(i + 3 * k) % 7];
            in64[k][i] = v, in32[k][i] = (float)v;
        }
    struct flag_count counted = {name, 0};
    feclearexcept(FE_ALL_EXCEPT);
    run_every_kernel(M, in64[0], in32[0], out64[0], out32[0], M, count_invalid, &counted);
    failures += counted.flagged;
    printf("%s: quiet NaNs raise no flag in any kernel: %s\n", name, counted.flagged ? "FAILED" : "ok");
}

/* the sets this build has, lowest first */
static const int isas_built[] = {FA_ISA_SCALAR,
#if defined(FA_HAVE_SSE2_KERNELS)
                                 FA_ISA_SSE2,
#endif
#if defined(FA_HAVE_NEON_KERNELS)
                                 FA_ISA_NEON,
#endif
};
#define FA_N_BUILT ((int)(sizeof isas_built / sizeof isas_built[0]))

int main(void) {
    /* dispatch: without the x86 kernels, exactly the sets built, the best current */
#if !defined(FA_HAVE_X86_KERNELS)
    {
        int ok = fa_isa_best() == isas_built[FA_N_BUILT - 1] && fa_isa_current() == fa_isa_best() &&
                 fa_isa_set(FA_ISA_AVX2) == -1 && strcmp(fa_isa_name(FA_ISA_SCALAR), "scalar") == 0;
        for (int isa = 0; isa < FA_N_ISAS; isa++) {
            int built = 0;
            for (int b = 0; b < FA_N_BUILT; b++) built |= isas_built[b] == isa;
            ok &= fa_isa_supported(isa) == built;
        }
        if (!ok) failures++;
        printf("dispatch: %d set(s) supported, current %s: %s\n", FA_N_BUILT, fa_isa_name(fa_isa_current()),
               ok ? "ok" : "FAILED");
    }
#endif
    /* the sets to run: those built, and with the x86 kernels (the Windows
     * build, under wine) those the CPU has among AVX2 and AVX-512 */
    int isas[FA_N_BUILT + 2], n_isas = 0;
    for (int b = 0; b < FA_N_BUILT; b++) isas[n_isas++] = isas_built[b];
#if defined(FA_HAVE_X86_KERNELS)
    if (fa_isa_supported(FA_ISA_AVX2)) isas[n_isas++] = FA_ISA_AVX2;
    if (fa_isa_supported(FA_ISA_AVX512)) isas[n_isas++] = FA_ISA_AVX512;
#endif
    check_pool();
    uint64_t first_hash = 0;
    for (int b = 0; b < n_isas; b++) {
        fa_isa_set(isas[b]);
        kernels = fa_kernels_current();
        const char *name = fa_isa_name(isas[b]);
        int before = failures;
        check_accuracy();
        printf("%s: accuracy: %zu points x %d operations, fwd/bwd in float64, float32, float16: %s\n", name,
               sizeof expected / sizeof expected[0] / FA_N_OPS, FA_N_OPS, failures == before ? "ok" : "FAILED");
        before = failures;
        check_fast_accuracy();
        printf("%s: accuracy, fast tier: fwd/bwd in float64, float32: %s\n", name, failures == before ? "ok" : "FAILED");
        printf("%s: ", name);
        check_loops_and_threads();
        check_quiet_nan(name);
        uint64_t h = sweep_hash();
        printf("%s: every kernel's sweep hash %016llx\n", name, (unsigned long long)h);
        if (b == 0) first_hash = h;
        else if (h != first_hash) failures++, printf("FAIL %s's bits differ from %s's\n", name, fa_isa_name(isas[0]));
    }
    printf("sweep hash %016llx\n", (unsigned long long)first_hash);
    printf("%s\n", failures ? "selftest FAILED" : "selftest passed");
    return failures ? 1 : 0;
}
