/* fastact C API: kernel signatures, the per-ISA kernel tables, dispatch,
 * threads and the NumPy inner loops. */
#ifndef FASTACT_H
#define FASTACT_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The operations, precision tiers and parameter structs come from the
 * manifest (src/fastact/_manifest.py) through the generated fa_ops.h. */
#include "generated/fa_ops.h"

#define FA_ENUM_ENTRY_(name, NAME) FA_##NAME,
typedef enum { FA_OPS(FA_ENUM_ENTRY_) FA_N_OPS } fa_op;
typedef enum { FA_TIERS(FA_ENUM_ENTRY_) FA_N_TIERS } fa_tier;
#undef FA_ENUM_ENTRY_
typedef enum { FA_FWD, FA_BWD, FA_N_DIRECTIONS } fa_direction;
/* What the kernels compute in: float16 data is computed in float32. */
typedef enum { FA_KF32, FA_KF64, FA_N_KDTYPES } fa_kdtype;

/* Kernel sets. FA_ISA_AVX512_EMULATED runs the AVX-512 source through SIMDe
 * on AVX2 hardware, so CPUs without AVX-512 still test it. FA_ISA_NEON:
 * AArch64's Advanced SIMD. FA_ISA_SSE2: x86-64's baseline vectors, for CPUs
 * without AVX2 + FMA. (The order is the build's numbering, not a ranking:
 * dispatch.c ranks them.) */
typedef enum {
    FA_ISA_SCALAR, FA_ISA_AVX2, FA_ISA_AVX512, FA_ISA_AVX512_EMULATED, FA_ISA_NEON, FA_ISA_SSE2, FA_N_ISAS
} fa_isa;
/* AArch64 builds have the NEON kernels unless FA_NO_NEON is defined */
#if defined(__aarch64__) && !defined(FA_NO_NEON)
#define FA_HAVE_NEON_KERNELS 1
#endif
/* x86-64 builds have the SSE2 kernels unless FA_NO_SSE2 is defined */
#if (defined(__x86_64__) || defined(_M_X64)) && !defined(FA_NO_SSE2)
#define FA_HAVE_SSE2_KERNELS 1
#endif

/* Every kernel: n elements of each contiguous input in[i] to each output
 * out[j] (as many as the op's arity in that direction), with the op's
 * parameter struct (NULL for ops without parameters). */
typedef void (*fa_kernel)(const void *const *in, void *const *out, ptrdiff_t n, const void *params);

/* The passes of softmax and log_softmax over one contiguous stretch of a row
 * (kernels_rows.inc; rows.c strings them together), for one kernel dtype.
 * Sums come back as s + c, added in a fixed order. */
typedef struct {
    double (*max)(const void *x, ptrdiff_t n);  /* NaN ignored; -inf if none */
    /* e_i = exp(x_i - m) (stored unless e is NULL; e may be x), their sum */
    void (*exp_sum)(const void *x, void *e, ptrdiff_t n, double m, double sum[2]);
    void (*dot)(const void *a, const void *b, ptrdiff_t n, double sum[2]); /* b NULL: sum of a */
    void (*scale)(const void *e, void *y, ptrdiff_t n, double s);           /* y_i = e_i / s */
    void (*log_shift)(const void *x, void *y, ptrdiff_t n, double m, double log_sum); /* (x_i - m) - log_sum */
    void (*softmax_bwd)(const void *g, const void *y, void *out, ptrdiff_t n, double dot); /* y_i (g_i - dot) */
    void (*log_softmax_bwd)(const void *g, const void *y, void *out, ptrdiff_t n, double sum_g); /* g_i - e^y_i sum_g */
    /* [FA_ROW_SOFTMAX or FA_ROW_LOG_SOFTMAX] over `columns` rows side by side (element i of each at
     * p + i step, in bytes; rows of at most one stretch), the same bits as each row alone; returns
     * 1 where a row needs the general path (columns 0: none) */
    int columns;
    int (*fwd_columns[2])(const void *x, ptrdiff_t x_step, void *y, ptrdiff_t y_step, ptrdiff_t n);
    int (*bwd_columns[2])(const void *g, ptrdiff_t g_step, const void *y, ptrdiff_t y_step, void *out,
                          ptrdiff_t out_step, ptrdiff_t n);
} fa_row_kernels;

typedef struct {
    fa_kernel kernel[FA_N_OPS][FA_N_DIRECTIONS][FA_N_KDTYPES][FA_N_TIERS];
    fa_row_kernels rows[FA_N_KDTYPES][FA_N_TIERS]; /* the tiers in the manifest's order, as kernel[] */
} fa_kernels;

extern const fa_kernels fa_kernels_scalar;
#if defined(FA_HAVE_X86_KERNELS)
extern const fa_kernels fa_kernels_avx2;
extern const fa_kernels fa_kernels_avx512;
#endif
#if defined(FA_HAVE_AVX512_EMULATION)
extern const fa_kernels fa_kernels_avx512_emulated;
#endif
#if defined(FA_HAVE_NEON_KERNELS)
extern const fa_kernels fa_kernels_neon;
#endif
#if defined(FA_HAVE_SSE2_KERNELS)
extern const fa_kernels fa_kernels_sse2;
#endif

/* {inputs, outputs} per op and direction, from the manifest */
extern const int fa_op_arity[FA_N_OPS][FA_N_DIRECTIONS][2];

/* dispatch.c */
const char *fa_isa_name(int isa);           /* NULL when out of range */
int fa_isa_supported(int isa);              /* 1 if this CPU (and build) can run it */
int fa_isa_best(void);                      /* best supported, capped by FASTACT_ISA */
int fa_isa_current(void);
int fa_isa_set(int isa);                    /* returns 0, or -1 if unsupported */
const fa_kernels *fa_kernels_current(void);

/* threads.c: run body(ctx, begin, end) over [0, n) in chunks that are
 * multiples of grain, on up to fa_num_threads() threads (caller included),
 * as many as the cost model finds worth their wake-up. */
typedef void (*fa_range_fn)(void *ctx, ptrdiff_t begin, ptrdiff_t end);
typedef struct {
    unsigned _Atomic *ps_per_element; /* measured cost (picoseconds per element; 0: not yet), updated */
    ptrdiff_t min_per_thread;         /* > 0: a fixed split instead (tests and measuring tools) */
} fa_cost;
void fa_parallel_for(ptrdiff_t n, const fa_cost *cost, ptrdiff_t grain, fa_range_fn body, void *ctx);
int fa_num_threads(void);
void fa_set_num_threads(int n);             /* n >= 1 */
void fa_set_num_threads_from(int n, int source);
int fa_default_num_threads(void);           /* FASTACT_NUM_THREADS, or 0 */
int fa_cpus_available(void);
enum {
    FA_THREADS_FROM_CPUS, FA_THREADS_FROM_FASTACT_ENV, FA_THREADS_FROM_OMP_ENV, FA_THREADS_FROM_CALL,
    FA_THREADS_FROM_THREADPOOLCTL
};
int fa_thread_source(void);                 /* where fa_num_threads() came from */
const char *fa_thread_source_name(int source);
double fa_wake_ns(int hot);                 /* measured wake cost (0 before the pool starts) */
/* openmp_team.c: calls made in the OpenMP scope (on this thread) split over
 * the team of the OpenMP runtime whose GOMP_parallel and
 * omp_get_max_threads fa_use_openmp was given (PyTorch's), where that pays;
 * fa_team_parallel_for returns 0 where it left the call to the pool */
void fa_use_openmp(void *gomp_parallel, void *omp_get_max_threads);
int fa_openmp_scope(int on);                /* returns the scope before */
int fa_in_openmp_scope(void);
long fa_openmp_team_calls(void);            /* how many calls split over the team so far */
int fa_team_parallel_for(ptrdiff_t n, double ns_per_element, int limit, ptrdiff_t grain, fa_range_fn body,
                         void *ctx);
double fa_now_ns(void);
/* elements per thread below which a call of this cost per element stays on
 * one thread, with the workers parked (the conservative case) */
ptrdiff_t fa_min_per_thread(double ns_per_element);

/* Outputs of the memory-bound loops (ReLU's, and the 16-bit clamps') beyond
 * this many bytes per call, well past the caches, are stored with streaming
 * stores: they skip the caches and do not first read each destination line,
 * which otherwise costs a third of a forward's traffic. */
#ifndef FA_STREAM_MIN_BYTES
#define FA_STREAM_MIN_BYTES (16 << 20) /* Zen 3: half an L3 slice; measured */
#endif

#ifdef __cplusplus
}
#endif
#endif
