/* NumPy ufunc inner loops. Contiguous float32/float64 blocks go straight to
 * the current kernel; anything else (strides, broadcasting, float16) is
 * gathered into a small buffer, computed by the same kernel and scattered, so
 * every layout gives the same bits. Large calls are split across threads. */
#include <fenv.h>
#include <stdint.h>
#include <stdlib.h>
#if defined(__SSE2__) || defined(_M_X64)
#include <xmmintrin.h> /* _mm_getcsr: SSE, part of the x86-64 baseline */
#endif

#include "fastact.h"
#include "fastact_loops.h"
#include "half.h"

enum { FA_F16, FA_F32, FA_F64 };
#define FA_BLOCK 1024      /* elements per gather buffer */
#define FA_SMALL_BLOCK 128 /* per stack buffer, for small calls */
#define FA_GRAIN 64   /* thread chunks are multiples of this */

/* Elements per thread below which a second thread costs more than it saves,
 * for float32 (float16 too) and float64, measured with
 * tools/thread_threshold.py on a 2-core AMD EPYC with AVX2 (where 2 threads
 * first beat 1 by >= 1.1x; waking the second thread costs tens of
 * microseconds on this VM). ReLU is memory-bound; the others compute. */
static ptrdiff_t min_per_thread[FA_N_OPS][2] = {
    [FA_RELU] = {1 << 20, 1 << 19},
    [FA_GELU] = {1 << 15, 1 << 12},
    [FA_GELU_TANH] = {1 << 16, 1 << 13},
    [FA_SILU] = {1 << 16, 1 << 14},
};

/* For tools/thread_threshold.py, which measures the table above. */
ptrdiff_t fa_thread_threshold(int op, int f64) {
    return op >= 0 && op < FA_N_OPS ? min_per_thread[op][f64 != 0] : -1;
}
void fa_set_thread_threshold(int op, int f64, ptrdiff_t n) {
    if (op >= 0 && op < FA_N_OPS && n > 0) min_per_thread[op][f64 != 0] = n;
}

typedef struct {
    const fa_kernels *kernels;
    int op, dtype, backward;
    char *in[2], *out;
    ptrdiff_t in_step[2], out_step;
    ptrdiff_t block; /* elements per kernel call, at most (see fa_order) */
} fa_job;

static void run_kernel(const fa_job *job, const void *in0, const void *in1, void *out, ptrdiff_t n) {
    const fa_kernels *k = job->kernels;
    if (job->dtype == FA_F64) {
        if (job->backward) k->bwd_f64[job->op](in0, in1, out, n);
        else k->fwd_f64[job->op](in0, out, n);
    } else {
        if (job->backward) k->bwd_f32[job->op](in0, in1, out, n);
        else k->fwd_f32[job->op](in0, out, n);
    }
}

/* Copy n strided elements into a contiguous buffer of the kernel's type. */
static void gather(int dtype, const char *src, ptrdiff_t step, void *dst, ptrdiff_t n) {
    if (dtype == FA_F64) {
        double *d = dst;
        for (ptrdiff_t i = 0; i < n; i++) d[i] = *(const double *)(src + i * step);
    } else if (dtype == FA_F32) {
        float *d = dst;
        for (ptrdiff_t i = 0; i < n; i++) d[i] = *(const float *)(src + i * step);
    } else {
        float *d = dst;
        for (ptrdiff_t i = 0; i < n; i++) d[i] = fa_half_to_float(*(const uint16_t *)(src + i * step));
    }
}

static void scatter(int dtype, const void *src, char *dst, ptrdiff_t step, ptrdiff_t n) {
    if (dtype == FA_F64) {
        const double *s = src;
        for (ptrdiff_t i = 0; i < n; i++) *(double *)(dst + i * step) = s[i];
    } else if (dtype == FA_F32) {
        const float *s = src;
        for (ptrdiff_t i = 0; i < n; i++) *(float *)(dst + i * step) = s[i];
    } else {
        const float *s = src;
        for (ptrdiff_t i = 0; i < n; i++) *(uint16_t *)(dst + i * step) = fa_float_to_half(s[i]);
    }
}

/* How far the kernel may read ahead of what it has written, when out= aliases
 * an input. NumPy passes an overlap to the loop without copying only when an
 * element-by-element loop in index order gives the right answer, and the ufunc
 * methods rely on that order: accumulate reads each output as the next input,
 * reduce reads and writes one accumulator throughout. The loop must then
 * behave like that element-by-element loop:
 *  - disjoint, or every element read and written in the same place: any
 *    block size, any split across threads;
 *  - the input a fixed d >= 1 elements ahead of the output (out = x[:-d],
 *    x[d:]): each element is read before it is overwritten, so blocks in
 *    order are safe, but a thread running a later chunk is not;
 *  - an input d elements behind the output (accumulate: d = 1): blocks of at
 *    most d elements, in order;
 *  - anything else (stride 0 accumulators, different strides, elements that
 *    overlap partly): one element at a time. */
typedef struct {
    ptrdiff_t block;    /* elements per kernel call, at most */
    int split_ok;       /* chunks may run on other threads */
} fa_order;

static void extent(const char *p, ptrdiff_t step, ptrdiff_t n, ptrdiff_t size, const char **lo, const char **hi) {
    ptrdiff_t span = (n - 1) * step;
    *lo = span < 0 ? p + span : p;
    *hi = (span < 0 ? p : p + span) + size;
}

static fa_order order_for(const char *in, ptrdiff_t in_step, const char *out, ptrdiff_t out_step,
                          ptrdiff_t n, ptrdiff_t size) {
    const fa_order free_order = {PTRDIFF_MAX, 1}, one_by_one = {1, 0};
    const char *in_lo, *in_hi, *out_lo, *out_hi;
    extent(in, in_step, n, size, &in_lo, &in_hi);
    extent(out, out_step, n, size, &out_lo, &out_hi);
    if (n <= 1 || in_hi <= out_lo || out_hi <= in_lo) return free_order;
    ptrdiff_t step = out_step, abs_step = step < 0 ? -step : step;
    if (in_step != step || abs_step < size || (in - out) % step != 0) return one_by_one;
    ptrdiff_t d = (in - out) / step; /* in[i] is out[i + d] */
    if (d == 0) return free_order;
    if (d > 0) return (fa_order){PTRDIFF_MAX, 0};
    return (fa_order){-d, 0};
}

static fa_order job_order(const fa_job *job, int nin, ptrdiff_t n, ptrdiff_t size) {
    fa_order order = {PTRDIFF_MAX, 1};
    for (int i = 0; i < nin; i++) {
        fa_order o = order_for(job->in[i], job->in_step[i], job->out, job->out_step, n, size);
        if (o.block < order.block) order.block = o.block;
        order.split_ok &= o.split_ok;
    }
    return order;
}

static void run_range(void *ctx, ptrdiff_t begin, ptrdiff_t end) {
    const fa_job *job = ctx;
    int nin = job->backward ? 2 : 1;
    ptrdiff_t size = job->dtype == FA_F64 ? 8 : job->dtype == FA_F32 ? 4 : 2;
    ptrdiff_t block = job->block;
    int contiguous = job->dtype != FA_F16 && job->out_step == size && job->in_step[0] == size &&
                     (nin == 1 || job->in_step[1] == size);
    if (contiguous) {
        for (ptrdiff_t start = begin, n; start < end; start += n) {
            n = end - start < block ? end - start : block;
            run_kernel(job, job->in[0] + start * size, nin == 2 ? job->in[1] + start * size : NULL,
                       job->out + start * size, n);
        }
        return;
    }
    /* Gather buffers (in0, in1, out; float data uses the first half of each)
     * live on the heap: a Python thread may have as little as 32 KiB of
     * stack. Small calls, and a failed allocation, use a small stack buffer. */
    _Alignas(64) double small[3][FA_SMALL_BLOCK];
    double (*buffers)[FA_BLOCK] = NULL;
    ptrdiff_t capacity = FA_SMALL_BLOCK;
    if (end - begin > FA_SMALL_BLOCK && block > FA_SMALL_BLOCK) {
        buffers = aligned_alloc(64, sizeof(double[3][FA_BLOCK]));
        if (buffers) capacity = FA_BLOCK;
    }
    double *in0 = buffers ? buffers[0] : small[0], *in1 = buffers ? buffers[1] : small[1];
    double *out = buffers ? buffers[2] : small[2];
    if (block > capacity) block = capacity;
    for (ptrdiff_t start = begin, n; start < end; start += n) {
        n = end - start < block ? end - start : block;
        gather(job->dtype, job->in[0] + start * job->in_step[0], job->in_step[0], in0, n);
        if (nin == 2) gather(job->dtype, job->in[1] + start * job->in_step[1], job->in_step[1], in1, n);
        run_kernel(job, in0, in1, out, n);
        scatter(job->dtype, out, job->out + start * job->out_step, job->out_step, n);
    }
    free(buffers);
}

/* The kernels' bounds (and their bit identity across ISAs) assume rounding to
 * nearest; under a directed mode they lose thousands of ULPs. Like glibc's
 * libm, compute in round-to-nearest whatever mode the caller set, keeping its
 * flush-to-zero and denormals-are-zero bits and the flags the kernels raise. */
#if defined(__SSE2__) || defined(_M_X64)
#define FA_MXCSR_ROUNDING 0x6000u
#define FA_MXCSR_FLAGS 0x3fu
typedef unsigned fa_rounding;
static fa_rounding round_to_nearest(void) {
    unsigned csr = _mm_getcsr();
    if (csr & FA_MXCSR_ROUNDING) _mm_setcsr(csr & ~FA_MXCSR_ROUNDING);
    return csr;
}
static void restore_rounding(fa_rounding saved) {
    if (saved & FA_MXCSR_ROUNDING) _mm_setcsr(saved | (_mm_getcsr() & FA_MXCSR_FLAGS));
}
#else
typedef int fa_rounding;
static fa_rounding round_to_nearest(void) {
    int mode = fegetround();
    if (mode != FE_TONEAREST) fesetround(FE_TONEAREST);
    return mode;
}
static void restore_rounding(fa_rounding saved) {
    if (saved != FE_TONEAREST) fesetround(saved);
}
#endif

static void run(int op, int dtype, int backward, char **args, const ptrdiff_t *dims, const ptrdiff_t *steps) {
    fa_job job = {fa_kernels_current(), op, dtype, backward, {args[0], backward ? args[1] : NULL},
                  args[backward ? 2 : 1], {steps[0], backward ? steps[1] : 0}, steps[backward ? 2 : 1], 0};
    ptrdiff_t n = dims[0], size = dtype == FA_F64 ? 8 : dtype == FA_F32 ? 4 : 2;
    fa_order order = job_order(&job, backward ? 2 : 1, n, size);
    job.block = order.block;
    fa_rounding saved = round_to_nearest();
    if (order.split_ok)
        fa_parallel_for(n, min_per_thread[op][dtype == FA_F64], FA_GRAIN, run_range, &job);
    else if (n > 0)
        run_range(&job, 0, n);
    restore_rounding(saved);
}

#define FA_LOOP(direction, dtype_tag, dtype, backward)                                        \
    void fa_loop_##direction##_##dtype_tag(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, \
                                            void *data) {                                      \
        run((int)(intptr_t)data, dtype, backward, args, dims, steps);                          \
    }
FA_LOOP(fwd, f16, FA_F16, 0)
FA_LOOP(fwd, f32, FA_F32, 0)
FA_LOOP(fwd, f64, FA_F64, 0)
FA_LOOP(bwd, f16, FA_F16, 1)
FA_LOOP(bwd, f32, FA_F32, 1)
FA_LOOP(bwd, f64, FA_F64, 1)
