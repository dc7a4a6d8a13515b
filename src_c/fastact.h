/* fastact C API: kernel signatures, the per-ISA kernel tables, dispatch,
 * threads and the NumPy inner loops. */
#ifndef FASTACT_H
#define FASTACT_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Activations, in the order of every kernel table. */
typedef enum { FA_RELU, FA_GELU, FA_GELU_TANH, FA_SILU, FA_N_OPS } fa_op;

/* Kernel sets, lowest first. FA_ISA_AVX512_EMULATED runs the AVX-512 source
 * through SIMDe on AVX2 hardware, so CPUs without AVX-512 still test it. */
typedef enum { FA_ISA_SCALAR, FA_ISA_AVX2, FA_ISA_AVX512, FA_ISA_AVX512_EMULATED, FA_N_ISAS } fa_isa;

typedef void (*fa_fwd_f32)(const float *x, float *y, ptrdiff_t n);
typedef void (*fa_fwd_f64)(const double *x, double *y, ptrdiff_t n);
typedef void (*fa_bwd_f32)(const float *grad, const float *x, float *y, ptrdiff_t n);
typedef void (*fa_bwd_f64)(const double *grad, const double *x, double *y, ptrdiff_t n);

typedef struct {
    fa_fwd_f32 fwd_f32[FA_N_OPS];
    fa_fwd_f64 fwd_f64[FA_N_OPS];
    fa_bwd_f32 bwd_f32[FA_N_OPS];
    fa_bwd_f64 bwd_f64[FA_N_OPS];
} fa_kernels;

extern const fa_kernels fa_kernels_scalar;
#if defined(FA_HAVE_X86_KERNELS)
extern const fa_kernels fa_kernels_avx2;
extern const fa_kernels fa_kernels_avx512;
#endif
#if defined(FA_HAVE_AVX512_EMULATION)
extern const fa_kernels fa_kernels_avx512_emulated;
#endif

/* dispatch.c */
const char *fa_isa_name(int isa);           /* NULL when out of range */
int fa_isa_supported(int isa);              /* 1 if this CPU (and build) can run it */
int fa_isa_best(void);                      /* best supported, capped by FASTACT_ISA */
int fa_isa_current(void);
int fa_isa_set(int isa);                    /* returns 0, or -1 if unsupported */
const fa_kernels *fa_kernels_current(void);

/* threads.c: run body(ctx, begin, end) over [0, n) in chunks that are
 * multiples of grain, on up to fa_num_threads() threads (caller included). */
typedef void (*fa_range_fn)(void *ctx, ptrdiff_t begin, ptrdiff_t end);
void fa_parallel_for(ptrdiff_t n, ptrdiff_t min_per_thread, ptrdiff_t grain, fa_range_fn body, void *ctx);
int fa_num_threads(void);
void fa_set_num_threads(int n);             /* n >= 1 */
int fa_default_num_threads(void);

#ifdef __cplusplus
}
#endif
#endif
