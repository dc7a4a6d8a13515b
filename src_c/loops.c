/* NumPy ufunc inner loops. Contiguous float32/float64 blocks go straight to
 * the current kernel; anything else (strides, broadcasting, float16) is
 * gathered into a small buffer, computed by the same kernel and scattered, so
 * every layout gives the same bits. Large calls are split across threads. */
#include <stdint.h>

#include "fastact.h"
#include "fastact_loops.h"
#include "half.h"

enum { FA_F16, FA_F32, FA_F64 };
#define FA_BLOCK 1024 /* elements per gather buffer */
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

static void run_range(void *ctx, ptrdiff_t begin, ptrdiff_t end) {
    const fa_job *job = ctx;
    int nin = job->backward ? 2 : 1;
    ptrdiff_t size = job->dtype == FA_F64 ? 8 : job->dtype == FA_F32 ? 4 : 2;
    int contiguous = job->dtype != FA_F16 && job->out_step == size && job->in_step[0] == size &&
                     (nin == 1 || job->in_step[1] == size);
    if (contiguous) {
        run_kernel(job, job->in[0] + begin * size, nin == 2 ? job->in[1] + begin * size : NULL,
                   job->out + begin * size, end - begin);
        return;
    }
    _Alignas(64) double buffers[3][FA_BLOCK]; /* in0, in1, out; float data uses the first half */
    for (ptrdiff_t start = begin; start < end; start += FA_BLOCK) {
        ptrdiff_t n = end - start < FA_BLOCK ? end - start : FA_BLOCK;
        for (int i = 0; i < nin; i++)
            gather(job->dtype, job->in[i] + start * job->in_step[i], job->in_step[i], buffers[i], n);
        run_kernel(job, buffers[0], buffers[1], buffers[2], n);
        scatter(job->dtype, buffers[2], job->out + start * job->out_step, job->out_step, n);
    }
}

static void run(int op, int dtype, int backward, char **args, const ptrdiff_t *dims, const ptrdiff_t *steps) {
    fa_job job = {fa_kernels_current(), op, dtype, backward, {args[0], backward ? args[1] : NULL},
                  args[backward ? 2 : 1], {steps[0], backward ? steps[1] : 0}, steps[backward ? 2 : 1]};
    fa_parallel_for(dims[0], min_per_thread[op][dtype == FA_F64], FA_GRAIN, run_range, &job);
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
