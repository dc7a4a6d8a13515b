/* NumPy ufunc inner loops, one per storage dtype, for every operation and
 * arity of the manifest. Contiguous float32/float64 data goes straight to
 * the current kernel; strided or broadcast data is gathered into a buffer,
 * computed by the same kernel and scattered, so every layout gives the same
 * bits. float16 and bfloat16 are widened to float32 a block at a time (in
 * registers where contiguous), computed by the float32 kernel and rounded
 * back once (see fix_ties). Large calls are split across threads. */
#include <fenv.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#include <malloc.h> /* _aligned_malloc */
#endif
#if defined(__SSE2__) || defined(_M_X64)
#include <xmmintrin.h> /* _mm_getcsr: SSE, part of the x86-64 baseline */
#endif

#include "runtime/fastact.h"
#include "runtime/fastact_loops.h"
#include "half/convert16.h"
#include "half/half.h"
#include "half/piecewise16.h"
#include "half/table16.h"

#define FA_MAX_ARGS (FA_MAX_INPUTS + FA_MAX_OUTPUTS)
#define FA_BLOCK 1024      /* elements per gather buffer */
#define FA_SMALL_BLOCK 64  /* per stack buffer, for small calls */
/* Buffers one after another are staggered by this many bytes: a kernel
 * reading one and writing the next at the same offset modulo 4 KiB would
 * have every load wait on the store before it (4K aliasing): measured, the
 * float32 kernel ran at half speed on float16 data through unstaggered buffers. */
#define FA_STAGGER 192
_Static_assert(FA_BLOCK % 64 == 0, "a 16-bit block's tie bitmap holds whole 64-bit words");
#define FA_GRAIN 64        /* thread chunks are multiples of this */

const int fa_op_arity[FA_N_OPS][FA_N_DIRECTIONS][2] = FA_OP_ARITY_INIT;
static const int op_nparams[FA_N_OPS] = FA_OP_NPARAMS_INIT;

/* When to split a call across threads: by cost (see threads.c). Each kernel
 * learns its cost per element, per op, direction, tier, storage dtype, layout
 * (contiguous or gathered) and ISA, from its own timed calls; the manifest's
 * estimate (ns per element on one AVX2 core) only answers
 * fa_thread_threshold before the first measurement. Tests and measuring
 * tools may fix the elements per thread instead. */
enum { FA_N_STORED = 4 }; /* float16, float32, float64, bfloat16 */
static unsigned _Atomic cost_ps[FA_N_OPS][FA_N_DIRECTIONS][FA_N_TIERS][FA_N_STORED][2][FA_N_ISAS];
static const double cost_estimate_ns[FA_N_OPS][FA_N_KDTYPES] = FA_OP_NS_PER_ELEMENT_INIT;
static ptrdiff_t fixed_min_per_thread[FA_N_OPS][FA_N_KDTYPES]; /* 0: the cost model */

double fa_cost_estimate_ns(int op, int f64) {
    return op >= 0 && op < FA_N_OPS ? cost_estimate_ns[op][f64 ? FA_KF64 : FA_KF32] : -1;
}

double fa_cost_ns(int op, int direction, int tier, int dtype, int gathered) {
    if (op < 0 || op >= FA_N_OPS || direction < 0 || direction >= FA_N_DIRECTIONS || tier < 0 ||
        tier >= FA_N_TIERS || dtype < 0 || dtype >= FA_N_STORED)
        return -1;
    return atomic_load(&cost_ps[op][direction][tier][dtype][gathered != 0][fa_isa_current()]) / 1000.0;
}

ptrdiff_t fa_thread_threshold(int op, int tier, int f64) {
    if (op < 0 || op >= FA_N_OPS) return -1;
    int kd = f64 ? FA_KF64 : FA_KF32;
    if (fixed_min_per_thread[op][kd] > 0) return fixed_min_per_thread[op][kd];
    double ns = fa_cost_ns(op, FA_FWD, tier, f64 ? 2 : 1, 0);
    return fa_min_per_thread(ns > 0 ? ns : cost_estimate_ns[op][kd]);
}
void fa_set_thread_threshold(int op, int f64, ptrdiff_t n) {
    if (op >= 0 && op < FA_N_OPS) fixed_min_per_thread[op][f64 ? FA_KF64 : FA_KF32] = n > 0 ? n : 0;
}

/* ---- the dtype axis: storage type -> kernel type, size and converters ---- */

typedef void (*fa_gather_fn)(const char *src, ptrdiff_t step, void *dst, ptrdiff_t n);
typedef void (*fa_scatter_fn)(const void *src, char *dst, ptrdiff_t step, ptrdiff_t n);

#define FA_DEFINE_COPY(tag, stored, computed, load, store)                                   \
    static void gather_##tag(const char *src, ptrdiff_t step, void *dst, ptrdiff_t n) {     \
        computed *d = dst;                                                                   \
        for (ptrdiff_t i = 0; i < n; i++) d[i] = load(*(const stored *)(src + i * step));    \
    }                                                                                        \
    static void scatter_##tag(const void *src, char *dst, ptrdiff_t step, ptrdiff_t n) {    \
        const computed *s = src;                                                             \
        for (ptrdiff_t i = 0; i < n; i++) *(stored *)(dst + i * step) = store(s[i]);         \
    }
#define FA_AS_IS(v) (v)
FA_DEFINE_COPY(f16, uint16_t, float, fa_half_to_float, fa_float_to_half)
FA_DEFINE_COPY(bf16, uint16_t, float, fa_bf16_to_float, fa_float_to_bf16)
FA_DEFINE_COPY(f32, float, float, FA_AS_IS, FA_AS_IS)
FA_DEFINE_COPY(f64, double, double, FA_AS_IS, FA_AS_IS)

/* a 16-bit type, element by element */
typedef struct {
    int bf16;
    uint16_t (*narrow)(float);
    uint16_t (*from_double)(double);
    int (*is_tie)(float);
} fa_half_type;
static const fa_half_type half_f16 = {
    .bf16 = 0, .narrow = fa_float_to_half, .from_double = fa_double_to_half, .is_tie = fa_is_half_tie};
static const fa_half_type half_bf16 = {
    .bf16 = 1, .narrow = fa_float_to_bf16, .from_double = fa_double_to_bf16, .is_tie = fa_is_bf16_tie};

typedef struct {
    ptrdiff_t size;       /* bytes per stored element */
    int kdtype;           /* the kernel that computes it */
    int native;           /* contiguous data can go to the kernel as is */
    fa_gather_fn gather;
    fa_scatter_fn scatter;
    const fa_half_type *half; /* float16 and bfloat16; NULL otherwise */
} fa_dtype;

enum { FA_F16, FA_F32, FA_F64, FA_BF16 };
static const fa_dtype dtypes[] = {
    [FA_F16] = {.size = 2, .kdtype = FA_KF32, .native = 0, .gather = gather_f16, .scatter = scatter_f16,
                .half = &half_f16},
    [FA_F32] = {.size = 4, .kdtype = FA_KF32, .native = 1, .gather = gather_f32, .scatter = scatter_f32},
    [FA_F64] = {.size = 8, .kdtype = FA_KF64, .native = 1, .gather = gather_f64, .scatter = scatter_f64},
    [FA_BF16] = {.size = 2, .kdtype = FA_KF32, .native = 0, .gather = gather_bf16, .scatter = scatter_bf16,
                 .half = &half_bf16},
};

/* ---- ufunc loop data: which kernel, and its arity ---- */

typedef struct {
    int op, direction, tier, nin, nparams, nout;
    int fixed; /* the ufunc has no parameter operands: `defaults` stand for them */
    int unused; /* no padding: the specs are compared with memcmp */
    double defaults[FA_MAX_PARAMS];
} fa_loop_spec;
_Static_assert(sizeof(fa_loop_spec) == 8 * sizeof(int) + FA_MAX_PARAMS * sizeof(double), "no padding");

static fa_loop_spec specs[FA_N_OPS][FA_N_DIRECTIONS][FA_N_TIERS];
static fa_loop_spec fixed_specs[FA_N_OPS][FA_N_DIRECTIONS][FA_N_TIERS];

const void *fa_loop_data(int op, int direction, int tier) {
    if (op < 0 || op >= FA_N_OPS || direction < 0 || direction >= FA_N_DIRECTIONS || tier < 0 ||
        tier >= FA_N_TIERS)
        return NULL;
    fa_loop_spec *spec = &specs[op][direction][tier];
    fa_loop_spec value = {.op = op, .direction = direction, .tier = tier, .nin = fa_op_arity[op][direction][0],
                          .nparams = op_nparams[op], .nout = fa_op_arity[op][direction][1]};
    /* written once, when the ufuncs are made: later callers (the XLA handler,
     * on XLA's threads) only read it while loops may be reading it too */
    if (memcmp(spec, &value, sizeof value) != 0) *spec = value;
    return spec;
}

const void *fa_loop_data_fixed(int op, int direction, int tier, const double *params) {
    const fa_loop_spec *plain = fa_loop_data(op, direction, tier);
    if (!plain) return NULL;
    fa_loop_spec *spec = &fixed_specs[op][direction][tier], value = *plain;
    value.fixed = 1;
    for (int j = 0; j < value.nparams; j++) value.defaults[j] = params[j];
    if (memcmp(spec, &value, sizeof value) != 0) *spec = value; /* once, as fa_loop_data */
    return spec;
}

void fa_loop_arity(const void *data, int *nin, int *nparams, int *nout) {
    const fa_loop_spec *spec = data;
    *nin = spec->nin, *nparams = spec->nparams, *nout = spec->nout;
}
_Static_assert(FA_MAX_INPUTS + FA_MAX_PARAMS + FA_MAX_OUTPUTS <= FA_LOOP_MAX_ARGS, "a loop's operands fit");

typedef struct {
    fa_kernel kernel;
    const fa_dtype *dtype;
    int nin, nargs;
    char *args[FA_MAX_ARGS]; /* inputs, then outputs (the parameters apart) */
    ptrdiff_t steps[FA_MAX_ARGS];
    ptrdiff_t block; /* elements per kernel call, at most (see fa_order) */
    const double *params; /* the op's parameters, the same for every element of the job */
    int half_sum_at;      /* >= 0: 16-bit x + bias at inputs [at], [at + 1] (see round_half_sums) */
    /* 16-bit types: */
    fa_kernel wide;       /* the float64 accurate kernel, for ties (fix_ties) */
    uint32_t window;      /* float32 ULPs either side of a tie recomputed with it (see fix_ties) */
    const struct fa_tie_side_ *tie_sides; /* how the float64 kernel's own ties are decided (FA_MAX_TIE_RULES) */
    const double *wide_params; /* its parameters: the piecewise ops' rounded to float32, as their kernels do */
    const fa_convert16_set *convert; /* the current ISA's conversions */
    fa_relu16_fn relu16;  /* computes on the 16-bit values directly (ReLU); or NULL */
    int exact;            /* exact_through_float32: rounded without the tie scan */
    fa_piecewise16_fn piecewise16; /* the op in one pass over contiguous 16-bit data; or NULL */
    float limits[2];      /* its interval */
    const uint16_t *table; /* all 65536 results (table16.h); or NULL */
    int derivative;       /* backward as g times the kernel's f'(x) at g = 1 (see scale_by_derivative) */
    const float *derivatives; /* that f'(x) for all 65536 x (table16.h); or NULL */
    int isa;              /* the kernel set, read once per call: its conversions, one-pass code and tables */
    int from_output;      /* a derivative from the forward's output: 1 sigmoid's, 2 tanh's (no table: computed in one pass) */
    int hardswish_one_pass; /* hardswish, either direction: its one-pass loop on contiguous data (convert16.h) */
} fa_job;

/* The bias ops compute act(x + bias) of the sum rounded to the data's type,
 * as the unfused computation rounds it. A 16-bit job computes in float32,
 * so its sum is rounded to the 16-bit type here, into x's buffer, and bias
 * becomes -0.0, which the kernel adds exactly (x + -0.0 is x, -0.0 included). */
#define FA_BIAS_FLAG_(op, OP, act) [FA_##OP] = 1,
static const char is_bias_op[FA_N_OPS] = {FA_BIAS_OPS(FA_BIAS_FLAG_)};
#undef FA_BIAS_FLAG_
/* ops whose float32 kernels round their parameters to float32 first (the
 * exact piecewise ones, as PyTorch does); the others' accurate float32
 * kernels compute in float64 with the parameters as given */
#define FA_PIECEWISE_FLAG_(op, OP) [FA_##OP] = 1,
static const char rounds_params[FA_N_OPS] = {FA_PIECEWISE_OPS(FA_PIECEWISE_FLAG_)};
#undef FA_PIECEWISE_FLAG_

/* Ops whose float32 result, from 16-bit inputs, rounds to the 16-bit type as
 * the true value does, so no tie needs deciding and the scan is skipped:
 * relu6 and hardtanh, forward and backward, select an input, zero or a
 * parameter already rounded to float32 (exact); hardsigmoid's (x + 3)/6 and
 * g/6 are correctly rounded in float32, and for a 16-bit x or g the true
 * value is either exactly a 16-bit tie or farther from one than 2^-21 of
 * it (x + 3 - 6t and g - 6t are nonzero multiples of the coarser of the
 * two types' spacings there), far beyond float32's half ULP. The tests
 * check every 16-bit input. */
static const char exact_through_float32[FA_N_OPS][FA_N_DIRECTIONS] = {
    [FA_RELU6] = {1, 1}, [FA_HARDTANH] = {1, 1}, [FA_HARDSIGMOID] = {1, 1}};

static void round_half_sums(const fa_half_type *half, float *x, float *bias, ptrdiff_t n) {
    for (ptrdiff_t i = 0; i < n; i++) {
        float sum = x[i] != x[i] ? x[i] : x[i] + bias[i]; /* x's NaN first, as the kernel */
        uint16_t rounded = half->narrow(sum);
        x[i] = half->bf16 ? fa_bf16_to_float(rounded) : fa_half_to_float(rounded);
        bias[i] = -0.0f;
    }
}

/* ---- aliasing between out= and the inputs ----
 * How far the kernel may read ahead of what it has written when an output
 * aliases an input. NumPy passes an overlap to the loop without copying only
 * when an element-by-element loop in index order gives the right answer, and
 * the ufunc methods rely on that order: accumulate reads each output as the
 * next input, reduce reads and writes one accumulator throughout. The loop
 * must then behave like that element-by-element loop:
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
    ptrdiff_t block; /* elements per kernel call, at most */
    int split_ok;    /* chunks may run on other threads */
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

/* The strictest order over every (input or earlier output, output) pair. */
static fa_order job_order(const fa_job *job, ptrdiff_t n) {
    fa_order order = {PTRDIFF_MAX, 1};
    for (int o = job->nin; o < job->nargs; o++)
        for (int i = 0; i < o; i++) {
            fa_order pair = order_for(job->args[i], job->steps[i], job->args[o], job->steps[o], n, job->dtype->size);
            if (pair.block < order.block) order.block = pair.block;
            order.split_ok &= pair.split_ok;
        }
    return order;
}

/* ---- running a range of elements ---- */

static int unit_steps(const fa_job *job) {
    for (int i = 0; i < job->nargs; i++)
        if (job->steps[i] != job->dtype->size) return 0;
    return 1;
}

static int is_contiguous(const fa_job *job) { return job->dtype->native && unit_steps(job); }

static void run_contiguous(const fa_job *job, ptrdiff_t begin, ptrdiff_t end) {
    const void *in[FA_MAX_INPUTS];
    void *out[FA_MAX_OUTPUTS];
    for (ptrdiff_t start = begin, n; start < end; start += n) {
        n = end - start < job->block ? end - start : job->block;
        for (int i = 0; i < job->nin; i++) in[i] = job->args[i] + start * job->dtype->size;
        for (int o = job->nin; o < job->nargs; o++) out[o - job->nin] = job->args[o] + start * job->dtype->size;
        job->kernel(in, out, n, job->params);
    }
}

/* 64-byte aligned heap blocks. Windows' C runtimes (MSVC's, mingw-w64's)
 * have no C11 aligned_alloc: _aligned_malloc there, freed by _aligned_free. */
static void *aligned_block(size_t size) {
#if defined(_WIN32)
    return _aligned_malloc(size, 64);
#else
    return aligned_alloc(64, size);
#endif
}

static void free_aligned_block(void *block) {
#if defined(_WIN32)
    _aligned_free(block);
#else
    free(block);
#endif
}

/* Through buffers of the kernel's type, one per operand. They live on the
 * heap: a Python thread may have as little as 32 KiB of stack. Small calls,
 * and a failed allocation, use a small stack buffer. */
static void run_gathered(const fa_job *job, ptrdiff_t begin, ptrdiff_t end) {
    _Alignas(64) double small[FA_MAX_ARGS][FA_SMALL_BLOCK];
    double (*heap)[FA_BLOCK + FA_STAGGER / sizeof(double)] = NULL;
    ptrdiff_t block = job->block;
    if (end - begin > FA_SMALL_BLOCK && block > FA_SMALL_BLOCK)
        heap = aligned_block(sizeof(double[FA_MAX_ARGS][FA_BLOCK + FA_STAGGER / sizeof(double)]));
    ptrdiff_t capacity = heap ? FA_BLOCK : FA_SMALL_BLOCK;
    if (block > capacity) block = capacity;
    const void *in[FA_MAX_INPUTS];
    void *out[FA_MAX_OUTPUTS];
    for (int a = 0; a < job->nargs; a++) {
        double *buffer = heap ? heap[a] : small[a]; /* float data uses its first half */
        if (a < job->nin) in[a] = buffer;
        else out[a - job->nin] = buffer;
    }
    for (ptrdiff_t start = begin, n; start < end; start += n) {
        n = end - start < block ? end - start : block;
        for (int i = 0; i < job->nin; i++)
            job->dtype->gather(job->args[i] + start * job->steps[i], job->steps[i], (void *)in[i], n);
        job->kernel(in, out, n, job->params);
        for (int o = job->nin; o < job->nargs; o++)
            job->dtype->scatter(out[o - job->nin], job->args[o] + start * job->steps[o], job->steps[o], n);
    }
    free_aligned_block(heap);
}

/* A float32 result on a tie of the 16-bit type (exactly halfway between two
 * of its neighbours) came from a true value on one side of it, which rounding
 * the tie to even ignores: gelu(2^-24) would round to 0. Those elements are
 * recomputed by the float64 kernel and rounded once from there (half.h). They
 * are rare: about one float32 result in 2^13 for float16, 2^16 for bfloat16
 * (more where results are exact, as hardswish's often are), and batched.
 *
 * The smooth forward functions without parameters go further: their 16-bit
 * results come from the fast float32 kernel, and every result within
 * FA_NEAR_TIE_WINDOW float32 ULPs of a tie (twice that kernel's bound,
 * _manifest.FAST_FORWARD_ULP, of the result) is recomputed, at the cost of
 * about (2 * 8 + 1) / 2^13 of the elements for float16, 2^-12 for bfloat16.
 * Every other result rounds the same way as the true value. The gated
 * products are held to their float32 bound: a subnormal act(gate) times a
 * large up is far from the window.
 * So do float16's derivatives from the output, g·(y - y²) and g·(1 - y²):
 * their float32 value is two roundings (y - y² or 1 - y², then the product)
 * from the exact one, so with FA_FROM_OUTPUT_WINDOW they are correctly
 * rounded (AVX-512's loop rounds the exact value to odd instead:
 * convert16.c). bfloat16's keep the exact-tie rule: its AVX2 loop's
 * rounding half up, which the rule allows, is worth 1.7x there.
 * Other backward bounds are relative to the derivative's largest term, not
 * to the result, so those kernels keep the exact-tie rule. */
enum { FA_NEAR_TIE_WINDOW = 8 };
/* the scans' window arithmetic (half.h, convert16.c) assumes a window well
 * under half a 16-bit ULP: 2^12 float32 ULPs for float16 */
_Static_assert(FA_NEAR_TIE_WINDOW < 2048, "the near-tie window must stay far below half a 16-bit ULP");
enum { FA_TIE_BATCH = 64 }; /* ties recomputed per call of the float64 kernel */

/* The float64 result can itself be exactly a 16-bit tie when the term that
 * decides it is below float64's precision: gelu(x) = x/2 + x^2/sqrt(2 pi) +
 * ..., and for bfloat16's inputs below 2^-125 whose half is a tie, x^2 is
 * 2^-125 of x/2; silu'(x) g = g/2 + g x/2 + ... for a subnormal g and any x
 * below 2^-53; swiglu(74, 7) = 7 silu(74) is 518 less 518 e^-74. Each such
 * output is t + d in a region of its argument, t a plain multiple of the
 * inputs and d of known sign (_manifest.TieSide): where the float64 value
 * is exactly t and t is a tie, it is moved one step to d's side, and rounds
 * to that side. t + d is never itself a tie there: d is no short binary
 * fraction of t's scale. */
typedef struct fa_tie_side_ {
    signed char sign; /* 0: no rule */
    signed char arg;
    unsigned char times;   /* bit k: input k's sign multiplies d's */
    unsigned char leading; /* bit k: input k is a factor of t */
    signed char param;     /* -1: none */
    unsigned char flags;   /* FA_TIE_* */
    unsigned char region;  /* FA_REGION_* */
    unsigned char output;
    double coefficient;    /* of t */
} fa_tie_side;
enum { FA_TIE_PARAM_IN_T = 1, FA_TIE_SCALED_ARG = 2, FA_TIE_NEGATIVE_ONLY = 4 };
enum { FA_REGION_ZERO, FA_REGION_POSITIVE, FA_REGION_NEGATIVE };
static const fa_tie_side tie_sides[FA_N_OPS][FA_N_DIRECTIONS][FA_MAX_TIE_RULES] = FA_OP_TIE_SIDES_INIT;

static double sign_of(double v) {
    return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; /* NaN: 0, no rule */
}
static int in_region(const fa_tie_side *rule, double arg, double param) {
    switch (rule->region) {
    case FA_REGION_ZERO: {
        /* d's first term dominates the rest by far below 2^-10 */
        double v = rule->flags & FA_TIE_SCALED_ARG ? arg * param : arg;
        return v != 0 && fabs(v) < 0x1p-10 && !(rule->flags & FA_TIE_NEGATIVE_ONLY && !(arg < 0));
    }
    case FA_REGION_POSITIVE: return arg > 8;
    default: return arg < 0;
    }
}
/* t, where it is exact in float64 (else NaN: the rule does not apply) */
static double leading_term(const fa_tie_side *rule, int nin, double *const *in, int t, double param) {
    double lead = rule->coefficient;
    for (int k = 0; k < nin; k++)
        if (rule->leading >> k & 1) lead *= in[k][t]; /* 16-bit values, a power of two: exact */
    if (!(rule->flags & FA_TIE_PARAM_IN_T)) return lead;
    double product = lead * param;
    return fma(lead, param, -product) == 0 ? product : NAN;
}
static void decide_float64_ties(const fa_job *job, int output, double *const *in, double *out, int count) {
    for (int r = 0; r < FA_MAX_TIE_RULES; r++) {
        const fa_tie_side *rule = &job->tie_sides[r];
        if (!rule->sign || rule->output != output) continue;
        double param = rule->param >= 0 ? job->wide_params[rule->param] : 1.0;
        for (int t = 0; t < count; t++) {
            float f = (float)out[t];
            if (!in_region(rule, in[rule->arg][t], param) || out[t] != leading_term(rule, job->nin, in, t, param) ||
                (double)f != out[t] || !job->dtype->half->is_tie(f))
                continue;
            double side = rule->sign * sign_of(param);
            for (int k = 0; k < job->nin; k++)
                if (rule->times >> k & 1) side *= sign_of(in[k][t]);
            if (side != 0) out[t] = nextafter(out[t], side > 0 ? INFINITY : -INFINITY);
        }
    }
}
typedef struct {
    double in[FA_MAX_INPUTS][FA_TIE_BATCH], out[FA_MAX_OUTPUTS][FA_TIE_BATCH];
    ptrdiff_t where[FA_TIE_BATCH];
    unsigned tied_outputs[FA_TIE_BATCH];
    int count;
} fa_ties;

static void recompute_ties(const fa_job *job, fa_ties *ties, uint16_t *const *out16) {
    const void *in_at[FA_MAX_INPUTS] = {0};
    void *out_at[FA_MAX_OUTPUTS] = {0};
    int nout = job->nargs - job->nin;
    for (int k = 0; k < job->nin; k++) in_at[k] = ties->in[k];
    for (int o = 0; o < nout; o++) out_at[o] = ties->out[o];
    job->wide(in_at, out_at, ties->count, job->wide_params);
    double *in_rows[FA_MAX_INPUTS];
    for (int k = 0; k < job->nin; k++) in_rows[k] = ties->in[k];
    if (job->tie_sides[0].sign)
        for (int o = 0; o < nout; o++) decide_float64_ties(job, o, in_rows, ties->out[o], ties->count);
    for (int t = 0; t < ties->count; t++)
        for (int o = 0; o < nout; o++)
            if (ties->tied_outputs[t] >> o & 1) out16[o][ties->where[t]] = job->dtype->half->from_double(ties->out[o][t]);
    ties->count = 0;
}

/* the inputs widened where ties are marked: all that fix_ties reads of them
 * (the one-pass loops mark a few per block, widening all would cost more) */
static void widen_tied(const fa_half_type *half, const uint16_t *const *in16, int nin, float *const *in,
                       ptrdiff_t n, const uint64_t *ties) {
    for (ptrdiff_t word = 0; word < (n + 63) / 64; word++)
        for (int bit = 0; bit < 64 && ties[word] >> bit; bit++) {
            if (!(ties[word] >> bit & 1)) continue;
            ptrdiff_t i = word * 64 + bit;
            for (int k = 0; k < nin; k++)
                in[k][i] = half->bf16 ? fa_bf16_to_float(in16[k][i]) : fa_half_to_float(in16[k][i]);
        }
}
/* ties[o]: output o's tie bitmap from narrow */
static void fix_ties(const fa_job *job, float *const *in, uint16_t *const *out16, ptrdiff_t n,
                     uint64_t (*ties)[FA_BLOCK / 64]) {
    int nout = job->nargs - job->nin;
    fa_ties batch;
    batch.count = 0;
    for (ptrdiff_t word = 0; word < (n + 63) / 64; word++) {
        uint64_t any = 0;
        for (int o = 0; o < nout; o++) any |= ties[o][word];
        for (int bit = 0; bit < 64 && any >> bit; bit++) {
            if (!(any >> bit & 1)) continue;
            ptrdiff_t i = word * 64 + bit;
            unsigned tied = 0;
            for (int o = 0; o < nout; o++) tied |= (unsigned)(ties[o][word] >> bit & 1) << o;
            for (int k = 0; k < job->nin; k++) batch.in[k][batch.count] = in[k][i];
            batch.where[batch.count] = i;
            batch.tied_outputs[batch.count++] = tied;
            if (batch.count == FA_TIE_BATCH) recompute_ties(job, &batch, out16);
        }
    }
    if (batch.count > 0) recompute_ties(job, &batch, out16);
}

/* Floating-point flags raised while computing a 16-bit result are dropped:
 * a float32 intermediate's flags say nothing of the 16-bit result, and the
 * conversions raise them too (convert16.c). Once per call, not per block:
 * reading and writing MXCSR stalls the pipeline. */
#if defined(__SSE2__) || defined(_M_X64)
#define FA_MXCSR_FTZ 0x8000u
#define FA_MXCSR_DAZ 0x0040u
#define FA_MXCSR_MASKS 0x1f80u
typedef unsigned fa_flags;
static fa_flags save_flags(void) {
    return _mm_getcsr();
}
static void restore_flags(fa_flags saved) {
    _mm_setcsr(saved);
}
#else
typedef fexcept_t fa_flags;
static fa_flags save_flags(void) {
    fa_flags saved;
    fegetexceptflag(&saved, FE_ALL_EXCEPT);
    return saved;
}
static void restore_flags(fa_flags saved) {
    fesetexceptflag(&saved, FE_ALL_EXCEPT);
}
#endif

/* The smooth functions' 16-bit backward (and the derivatives from the
 * forward's output, f' a function of y), g·f'(x): the float32 kernel's
 * f'(x) (at g = 1) times g, rounded to float32, then to the 16-bit type as
 * any result (a float32 tie recomputed in float64). So the derivative can
 * come from a table of all 65536 x (derivative_table_for) with the same
 * bits. With g = 1 it is the kernel's own result; otherwise the product adds
 * at most half a float32 ULP, 2^-14 (float16) or 2^-17 (bfloat16) of a
 * 16-bit one. Where g is NaN the result is g's NaN (fa_times_derivative). */
#define FA_ONES_8_ 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f
#define FA_ONES_64_ FA_ONES_8_, FA_ONES_8_, FA_ONES_8_, FA_ONES_8_, FA_ONES_8_, FA_ONES_8_, FA_ONES_8_, FA_ONES_8_
#define FA_ONES_512_ FA_ONES_64_, FA_ONES_64_, FA_ONES_64_, FA_ONES_64_, FA_ONES_64_, FA_ONES_64_, FA_ONES_64_, FA_ONES_64_
_Static_assert(FA_BLOCK == 1024, "ones: one block of grad_output = 1");
static const float ones[FA_BLOCK] = {FA_ONES_512_, FA_ONES_512_};

/* in: g, x (float32); x16: x's 16-bit values where contiguous, or NULL */
static void scale_by_derivative(const fa_job *job, float *const *in, float *out, ptrdiff_t n, const uint16_t *x16) {
    if (job->derivatives && x16) {
        fa_table16_scale(job->isa, job->derivatives, x16, in[0], out, n);
        return;
    }
    const float *at_one[2] = {ones, in[1]};
    float *const derivative[1] = {out};
    job->kernel((const void *const *)at_one, (void *const *)derivative, n, job->params);
    for (ptrdiff_t i = 0; i < n; i++) out[i] = fa_times_derivative(in[0][i], out[i]);
}

/* float16 and bfloat16, a block at a time (or looked up: table16.h): widened to float32 (contiguous
 * inputs in registers), computed by the float32 kernel, rounded back (into
 * the output itself where contiguous) and ties resolved. ReLU computes on the
 * 16-bit values themselves. */
static void run_half_blocks(const fa_job *job, ptrdiff_t begin, ptrdiff_t end) {
    const fa_half_type *half = job->dtype->half;
    const fa_convert16 *convert = half->bf16 ? &job->convert->bf16 : &job->convert->f16;
    int nout = job->nargs - job->nin;
    if (job->table) {
        fa_table16_apply(job->table, job->args[0] + begin * job->steps[0], job->steps[0],
                         job->args[1] + begin * job->steps[1], job->steps[1], end - begin, job->block);
        return;
    }
    if ((job->relu16 || job->piecewise16) && unit_steps(job)) {
        const uint16_t *in16[FA_MAX_INPUTS];
        for (ptrdiff_t start = begin, n; start < end; start += n) {
            n = end - start < job->block ? end - start : job->block;
            for (int i = 0; i < job->nin; i++) in16[i] = (const uint16_t *)job->args[i] + start;
            uint16_t *out16 = (uint16_t *)job->args[job->nin] + start;
            if (job->relu16) job->relu16(in16, out16, n, half->bf16);
            else job->piecewise16(in16, out16, n, half->bf16, job->limits);
        }
        return;
    }
    typedef struct {
        float wide[FA_MAX_ARGS][FA_BLOCK + FA_STAGGER / sizeof(float)];
        uint16_t narrow[FA_MAX_OUTPUTS][FA_BLOCK + FA_STAGGER / sizeof(uint16_t)];
    } buffers_t;
    _Alignas(64) float small[FA_MAX_ARGS][FA_SMALL_BLOCK];
    _Alignas(64) uint16_t small16[FA_MAX_OUTPUTS][FA_SMALL_BLOCK];
    buffers_t *heap = NULL;
    ptrdiff_t block = job->block;
    if (end - begin > FA_SMALL_BLOCK && block > FA_SMALL_BLOCK) heap = aligned_block(sizeof(buffers_t));
    ptrdiff_t capacity = heap ? FA_BLOCK : FA_SMALL_BLOCK;
    if (block > capacity) block = capacity;
    float *in[FA_MAX_INPUTS], *out[FA_MAX_OUTPUTS];
    uint16_t *out16[FA_MAX_OUTPUTS];
    for (int a = 0; a < job->nargs; a++) {
        float *buffer = heap ? heap->wide[a] : small[a];
        if (a < job->nin) in[a] = buffer;
        else out[a - job->nin] = buffer;
    }
    /* a derivative looked up by x's bits needs x in float32 only for ties,
     * widened after the results are written: unless they overwrite x */
    int x_for_ties_only = 0;
    if (job->derivative && job->derivatives && job->steps[1] == 2) {
        const char *x_lo, *x_hi, *out_lo, *out_hi;
        extent(job->args[1] + begin * 2, 2, end - begin, 2, &x_lo, &x_hi);
        extent(job->args[2] + begin * job->steps[2], job->steps[2], end - begin, 2, &out_lo, &out_hi);
        x_for_ties_only = x_hi <= out_lo || out_hi <= x_lo;
    }
    /* g·f'(x) in one pass (f' looked up, or computed from y), or hardswish,
     * where the kernel set has the loop and the operands are contiguous:
     * into a buffer first if the result overwrites an input, which the ties need */
    int one_pass = unit_steps(job) &&
                   (job->hardswish_one_pass ||
                    (job->derivative && (job->derivatives ? convert->scale_narrow != NULL
                                                          : job->from_output && convert->from_output_narrow)));
    int one_pass_buffered = 0;
    if (one_pass) {
        const char *lo[FA_MAX_ARGS], *hi[FA_MAX_ARGS];
        for (int a = 0; a <= job->nin; a++) extent(job->args[a] + begin * 2, 2, end - begin, 2, &lo[a], &hi[a]);
        for (int a = 0; a < job->nin; a++) one_pass_buffered |= !(hi[a] <= lo[job->nin] || hi[job->nin] <= lo[a]);
    }
    for (ptrdiff_t start = begin, n; start < end; start += n) {
        n = end - start < block ? end - start : block;
        if (one_pass) {
            const uint16_t *in16[FA_MAX_INPUTS];
            for (int k = 0; k < job->nin; k++) in16[k] = (const uint16_t *)job->args[k] + start;
            uint16_t *result = (uint16_t *)job->args[job->nin] + start;
            uint16_t *dst = one_pass_buffered ? (heap ? heap->narrow[0] : small16[0]) : result;
            uint64_t ties[FA_BLOCK / 64];
            int any_tie;
            if (job->hardswish_one_pass)
                any_tie = convert->hardswish_narrow(job->nin == 2 ? in16[0] : NULL, in16[job->nin - 1], dst, n, ties,
                                                    FA_NEAR_TIE_WINDOW);
            else if (job->derivatives)
                any_tie = convert->scale_narrow(job->derivatives, in16[1], in16[0], dst, n, ties, job->window);
            else
                any_tie = convert->from_output_narrow(in16[0], in16[1], dst, n, ties, job->window, job->from_output == 2);
            if (any_tie) {
                widen_tied(half, in16, job->nin, in, n, ties);
                fix_ties(job, in, &dst, n, &ties);
            }
            if (dst != result) memcpy(result, dst, (size_t)n * sizeof *dst);
            continue;
        }
        for (int i = 0; i < job->nin; i++) {
            const char *src = job->args[i] + start * job->steps[i];
            if (i == 1 && x_for_ties_only) continue;
            if (job->steps[i] == 2) convert->widen((const uint16_t *)src, in[i], n);
            else job->dtype->gather(src, job->steps[i], in[i], n);
        }
        if (job->half_sum_at >= 0) round_half_sums(half, in[job->half_sum_at], in[job->half_sum_at + 1], n);
        if (job->derivative)
            scale_by_derivative(job, in, out[0], n, job->steps[1] == 2 ? (const uint16_t *)(job->args[1] + start * 2) : NULL);
        else
            job->kernel((const void *const *)in, (void *const *)out, n, job->params);
        uint64_t ties[FA_MAX_OUTPUTS][FA_BLOCK / 64];
        int any_tie = 0;
        for (int o = 0; o < nout; o++) {
            int a = job->nin + o;
            out16[o] = job->steps[a] == 2 ? (uint16_t *)(job->args[a] + start * 2) : heap ? heap->narrow[o] : small16[o];
            if (job->exact) convert->round(out[o], out16[o], n);
            else any_tie |= convert->narrow(out[o], out16[o], n, ties[o], job->window);
        }
        if (any_tie && x_for_ties_only) convert->widen((const uint16_t *)(job->args[1] + start * 2), in[1], n);
        if (any_tie) fix_ties(job, in, out16, n, ties);
        for (int o = 0; o < nout; o++) {
            int a = job->nin + o;
            if (job->steps[a] == 2) continue;
            char *dst = job->args[a] + start * job->steps[a];
            for (ptrdiff_t i = 0; i < n; i++) *(uint16_t *)(dst + i * job->steps[a]) = out16[o][i];
        }
    }
    free_aligned_block(heap);
}

static void run_half(const fa_job *job, ptrdiff_t begin, ptrdiff_t end) {
    fa_flags saved = save_flags();
    run_half_blocks(job, begin, end);
    restore_flags(saved);
}

/* Tables hold IEEE results: they are used only while the caller has
 * flush-to-zero and denormals-are-zero off (results under those modes are
 * the caller's to choose, so such calls compute), and they are filled with
 * every exception masked, so that filling, which evaluates all 65536 inputs
 * (signaling NaNs, overflows) the caller never passed, cannot trap; the
 * flags it raises are dropped. */
#if defined(__SSE2__) || defined(_M_X64)
static int tables_allowed(void) {
    return !(_mm_getcsr() & (FA_MXCSR_FTZ | FA_MXCSR_DAZ));
}
typedef unsigned fa_fill_state;
static fa_fill_state fill_begin(void) {
    unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | FA_MXCSR_MASKS);
    return csr;
}
static void fill_end(fa_fill_state csr) {
    _mm_setcsr(csr);
}
#else
/* no portable way to read a flush-to-zero mode (AArch64's FPCR.FZ is off
 * unless a caller sets it through assembly) */
static int tables_allowed(void) {
    return 1;
}
typedef fenv_t fa_fill_state;
static fa_fill_state fill_begin(void) {
    fenv_t env;
    feholdexcept(&env);
    return env;
}
static void fill_end(fa_fill_state env) {
    fesetenv(&env);
}
#endif

/* The key's published entries for the job's parameters; or NULL, with
 * *to_fill a new table when the count says filling one now pays (else NULL). */
static const void *ready_or_to_fill(const fa_job *job, const fa_loop_spec *spec, fa_table16_key key, ptrdiff_t n,
                                    fa_table16 **to_fill) {
    int taken;
    *to_fill = NULL;
    const void *ready = fa_table16_get(key, job->params, spec->nparams, &taken);
    if (!ready && !taken && fa_table16_worth_filling(key, n)) *to_fill = fa_table16_new(key, job->params, spec->nparams);
    return ready;
}

/* The unary forward ops without one-pass code of their own, on 16-bit data:
 * looked up in a table of all their results for the job's parameters, once
 * enough elements have gone through the computing path to pay for filling
 * the table by that same path. */
static const uint16_t *table_for(const fa_job *job, const fa_loop_spec *spec, ptrdiff_t n) {
    if (spec->direction != FA_FWD || spec->nin != 1 || spec->nout != 1 || job->relu16 || job->piecewise16 ||
        job->half_sum_at >= 0)
        return NULL;
    /* hardswish's one-pass loop (contiguous data) on AVX-512 outran the
     * lookups 1.8x on a Zen 4; AVX2's did not on a Zen 3 */
    if (job->hardswish_one_pass && job->isa == FA_ISA_AVX512 && unit_steps(job)) return NULL;
    fa_table16_key key = {.isa = job->isa, .op = spec->op, .direction = FA_FWD, .tier = spec->tier,
                          .bf16 = job->dtype->half->bf16};
    fa_table16 *filled;
    const uint16_t *table = ready_or_to_fill(job, spec, key, n, &filled);
    if (!filled) return table;
    uint16_t *results = (uint16_t *)filled->entries;
    for (ptrdiff_t i = 0; i < FA_TABLE16_SIZE; i++) results[i] = (uint16_t)i;
    fa_job fill = *job; /* in place: each block is widened before it is written */
    fill.args[0] = fill.args[1] = (char *)results;
    fill.steps[0] = fill.steps[1] = 2;
    fill.block = PTRDIFF_MAX;
    fa_fill_state state = fill_begin();
    run_half_blocks(&fill, 0, FA_TABLE16_SIZE);
    fill_end(state);
    return fa_table16_publish(key, filled, spec->nparams);
}

/* The derivatives of scale_by_derivative for all 65536 x, on the same terms. */
static const float *derivative_table_for(const fa_job *job, const fa_loop_spec *spec, ptrdiff_t n) {
    /* looked up by x's contiguous bits; y - y² costs less than a lookup */
    if (!job->derivative || job->from_output || job->steps[1] != 2) return NULL;
    const fa_half_type *half = job->dtype->half;
    fa_table16_key key = {.isa = job->isa, .op = spec->op, .direction = FA_BWD, .tier = spec->tier,
                          .bf16 = half->bf16};
    fa_table16 *filled;
    const float *table = ready_or_to_fill(job, spec, key, n, &filled);
    if (!filled) return table;
    float *derivatives = (float *)filled->entries;
    fa_fill_state state = fill_begin();
    for (ptrdiff_t start = 0; start < FA_TABLE16_SIZE; start += FA_BLOCK) {
        _Alignas(64) float x[FA_BLOCK];
        for (ptrdiff_t i = 0; i < FA_BLOCK; i++) {
            uint16_t bits = (uint16_t)(start + i);
            x[i] = half->bf16 ? fa_bf16_to_float(bits) : fa_half_to_float(bits);
        }
        const float *at_one[2] = {ones, x};
        float *const out[1] = {derivatives + start};
        job->kernel((const void *const *)at_one, (void *const *)out, FA_BLOCK, job->params);
    }
    fill_end(state);
    /* bfloat16 keeps a NaN's high 16 bits: with the low ones cleared, g times
     * a NaN entry rounds half up to the same bits (a NaN parameter's payload
     * could otherwise carry into the sign) in the one-pass loops */
    if (half->bf16)
        for (ptrdiff_t i = 0; i < FA_TABLE16_SIZE; i++) {
            uint32_t bits;
            memcpy(&bits, &derivatives[i], sizeof bits);
            if ((bits & 0x7fffffffu) > 0x7f800000u) bits &= 0xffff0000u;
            memcpy(&derivatives[i], &bits, sizeof bits);
        }
    return fa_table16_publish(key, filled, spec->nparams);
}

static void run_range(void *ctx, ptrdiff_t begin, ptrdiff_t end) {
    const fa_job *job = ctx;
    if (job->dtype->half) run_half(job, begin, end);
    else if (is_contiguous(job)) run_contiguous(job, begin, end);
    else run_gathered(job, begin, end);
}

/* The kernels' bounds (and their bit identity across ISAs) assume rounding to
 * nearest; under a directed mode they lose thousands of ULPs. Like glibc's
 * libm, compute in round-to-nearest whatever mode the caller set, keeping its
 * flush-to-zero and denormals-are-zero bits and the flags the kernels raise. */
#if defined(__SSE2__) || defined(_M_X64)
#define FA_MXCSR_ROUNDING 0x6000u
#define FA_MXCSR_FLAGS 0x3fu
long fa_round_to_nearest(void) {
    unsigned csr = _mm_getcsr();
    if (csr & FA_MXCSR_ROUNDING) _mm_setcsr(csr & ~FA_MXCSR_ROUNDING);
    return (long)csr;
}
void fa_restore_rounding(long saved) {
    if (saved & FA_MXCSR_ROUNDING) _mm_setcsr((unsigned)saved | (_mm_getcsr() & FA_MXCSR_FLAGS));
}
#else
long fa_round_to_nearest(void) {
    int mode = fegetround();
    if (mode != FE_TONEAREST) fesetround(FE_TONEAREST);
    return mode;
}
void fa_restore_rounding(long saved) {
    if (saved != FE_TONEAREST) fesetround((int)saved);
}
#endif

/* n elements, with the parameters in job->params */
static void run_job(fa_job *job, const fa_loop_spec *spec, int dtype_index, ptrdiff_t n) {
    fa_order order = job_order(job, n);
    job->block = order.block;
    if (order.split_ok) {
        fa_cost cost = {&cost_ps[spec->op][spec->direction][spec->tier][dtype_index][!unit_steps(job)]
                                [fa_isa_current()],
                        fixed_min_per_thread[spec->op][job->dtype->kdtype]};
        fa_parallel_for(n, &cost, FA_GRAIN, run_range, job);
    }
    else if (n > 0)
        run_range(job, 0, n);
}

/* bit for bit: -0.0 is not 0.0 to the kernels */
static int same_params(char *const *param, const ptrdiff_t *step, int nparams, ptrdiff_t i, const double *p) {
    for (int j = 0; j < nparams; j++)
        if (memcmp(param[j] + i * step[j], &p[j], sizeof(double)) != 0) return 0;
    return 1;
}

/* b is a, element for element, or shares no byte with it */
static int same_or_apart(const char *a, const char *b, ptrdiff_t bytes) {
    return a == b || a + bytes <= b || b + bytes <= a;
}

/* A small call on contiguous native data with constant parameters, which
 * would run on the caller in one kernel call: that call, without the
 * general set-up (the 16-bit fields, the order and thread decisions), whose
 * fixed cost is most of a small call's. 0: not such a call. */
#define FA_SMALL_CALL 1024
static int run_small(int dtype_index, char **args, ptrdiff_t n, const ptrdiff_t *steps, const fa_loop_spec *spec) {
    const fa_dtype *dtype = &dtypes[dtype_index];
    ptrdiff_t fixed = fixed_min_per_thread[spec->op][dtype->kdtype];
    if (!dtype->native || n <= 0 || n >= FA_SMALL_CALL || (fixed > 0 && n >= 2 * fixed)) return 0;
    int nin = spec->nin, nparams = spec->nparams, nargs = nin + nparams + spec->nout;
    ptrdiff_t bytes = n * dtype->size;
    for (int a = 0; a < nargs; a++)
        if (steps[a] != (a >= nin && a < nin + nparams ? 0 : dtype->size)) return 0;
    for (int o = nin + nparams; o < nargs; o++)
        for (int a = 0; a < o; a++)
            if ((a < nin || a >= nin + nparams) && !same_or_apart(args[a], args[o], bytes)) return 0;
    double params[FA_MAX_PARAMS];
    const void *in[FA_MAX_INPUTS];
    void *out[FA_MAX_OUTPUTS];
    for (int j = 0; j < nparams; j++) memcpy(&params[j], args[nin + j], sizeof(double));
    for (int i = 0; i < nin; i++) in[i] = args[i];
    for (int o = 0; o < spec->nout; o++) out[o] = args[nin + nparams + o];
    fa_kernel kernel = fa_kernels_current()->kernel[spec->op][spec->direction][dtype->kdtype][spec->tier];
    long saved = fa_round_to_nearest();
    kernel(in, out, n, nparams ? params : NULL);
    fa_restore_rounding(saved);
    return 1;
}

/* NumPy's operands: the arrays, then the op's float64 parameters, then the
 * outputs. Parameters are usually scalars (step 0): one job. Where they vary,
 * each run of equal parameters is a job of its own. */
static void run(int dtype_index, char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, const void *data) {
    const fa_loop_spec *spec = data;
    char *with_params[FA_LOOP_MAX_ARGS];
    ptrdiff_t with_param_steps[FA_LOOP_MAX_ARGS];
    if (spec->fixed) { /* the defaults as operands of step 0, where NumPy would have put them */
        for (int a = 0, from = 0; a < spec->nin + spec->nparams + spec->nout; a++) {
            int param = a - spec->nin, is_param = param >= 0 && param < spec->nparams;
            with_params[a] = is_param ? (char *)&spec->defaults[param] : args[from];
            with_param_steps[a] = is_param ? 0 : steps[from++];
        }
        args = with_params, steps = with_param_steps;
    }
    if (run_small(dtype_index, args, dims[0], steps, spec)) return;
    const fa_dtype *dtype = &dtypes[dtype_index];
    /* 16-bit data of the piecewise functions: their exact 16-bit routes, as
     * cheap as any, serve both tiers */
    fa_loop_spec accurate;
    if (dtype->half && rounds_params[spec->op] && spec->tier != FA_ACCURATE) {
        accurate = *spec;
        accurate.tier = FA_ACCURATE;
        spec = &accurate;
    }
    const fa_kernels *kernels = fa_kernels_current();
    double params[FA_MAX_PARAMS], wide_params[FA_MAX_PARAMS];
    int round_params = dtype->half && rounds_params[spec->op];
    fa_job job = {.kernel = kernels->kernel[spec->op][spec->direction][dtype->kdtype][spec->tier],
                  .dtype = dtype,
                  .nin = spec->nin,
                  .nargs = spec->nin + spec->nout,
                  .params = spec->nparams ? params : NULL,
                  .half_sum_at = dtype->half && is_bias_op[spec->op] ? spec->nin - 2 : -1,
                  .wide = kernels->kernel[spec->op][spec->direction][FA_KF64][0],
                  .wide_params = spec->nparams ? (round_params ? wide_params : params) : NULL,
                  .isa = fa_isa_current()};
    if (dtype->half) {
        /* the smooth forward functions without parameters (which the fast
         * kernels may round differently): the fast kernel, near ties recomputed */
        fa_kernel fast = kernels->kernel[spec->op][FA_FWD][FA_KF32][FA_FAST];
        if (spec->direction == FA_FWD && fast && !spec->nparams && !rounds_params[spec->op]) {
            job.kernel = fast;
            job.window = FA_NEAR_TIE_WINDOW;
        }
        job.tie_sides = tie_sides[spec->op][spec->direction];
        job.convert = fa_convert16_for(job.isa);
        job.exact = exact_through_float32[spec->op][spec->direction];
        const fa_piecewise16_set *piecewise16 = fa_piecewise16_for(job.isa);
        int forward = spec->direction == FA_FWD;
        if (spec->op == FA_RELU6 || spec->op == FA_HARDTANH) {
            job.piecewise16 = forward ? piecewise16->clamp : piecewise16->pass_between;
            job.limits[1] = 6.0f; /* relu6's; hardtanh's come with its parameters below */
        }
        if (spec->op == FA_LEAKY_RELU) /* its slope comes with its parameters below */
            job.piecewise16 = forward ? piecewise16->leaky_relu : piecewise16->leaky_relu_bwd;
        if (spec->op == FA_HARDSIGMOID) {
            job.piecewise16 = forward ? piecewise16->hardsigmoid : piecewise16->hardsigmoid_bwd;
            job.limits[0] = -3.0f;
            job.limits[1] = 3.0f;
        }
        if (spec->op == FA_RELU) job.relu16 = spec->direction == FA_FWD ? job.convert->relu_fwd : job.convert->relu_bwd;
        /* the derivatives from the forward's output are g·f'(y) too: their
         * kernel at g = 1 is y - y² or 1 - y², the factor g multiplies */
        job.from_output = spec->op == FA_SIGMOID_BACKWARD_FROM_OUTPUT ? 1 : spec->op == FA_TANH_BACKWARD_FROM_OUTPUT ? 2 : 0;
        if (job.from_output && !dtype->half->bf16) job.window = FA_FROM_OUTPUT_WINDOW;
        job.derivative = (spec->direction == FA_BWD || job.from_output) && spec->nin == 2 && spec->nout == 1 &&
                         spec->op != FA_RELU && !rounds_params[spec->op] && !is_bias_op[spec->op];
        job.hardswish_one_pass = spec->op == FA_HARDSWISH &&
                                 (dtype->half->bf16 ? job.convert->bf16 : job.convert->f16).hardswish_narrow != NULL;
    }
    char *const *param = args + spec->nin;
    const ptrdiff_t *param_step = steps + spec->nin;
    for (int a = 0; a < job.nargs; a++) {
        int operand = a < spec->nin ? a : a + spec->nparams;
        job.args[a] = args[operand];
        job.steps[a] = steps[operand];
    }
    ptrdiff_t n = dims[0];
    long saved = fa_round_to_nearest();
    int use_tables = dtype->half && tables_allowed();
    for (ptrdiff_t start = 0, count; start < n; start += count) {
        for (int j = 0; j < spec->nparams; j++) {
            memcpy(&params[j], param[j] + start * param_step[j], sizeof(double));
            wide_params[j] = (double)(float)params[j];
        }
        count = 1;
        while (start + count < n && same_params(param, param_step, spec->nparams, start + count, params)) {
            int constant = 1;
            for (int j = 0; j < spec->nparams; j++) constant &= param_step[j] == 0;
            if (constant) {
                count = n - start;
                break;
            }
            count++;
        }
        fa_job part = job;
        for (int a = 0; a < job.nargs; a++) part.args[a] += start * job.steps[a];
        if (spec->op == FA_HARDTANH || spec->op == FA_LEAKY_RELU) /* as their float32 kernels round them */
            part.limits[0] = (float)params[0], part.limits[1] = (float)params[spec->nparams - 1];
        if (dtype->half && use_tables) {
            part.table = table_for(&part, spec, count);
            part.derivatives = derivative_table_for(&part, spec, count);
        }
        run_job(&part, spec, dtype_index, count);
    }
    fa_restore_rounding(saved);
}

void fa_loop_f16(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data) {
    run(FA_F16, args, dims, steps, data);
}
void fa_loop_f32(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data) {
    run(FA_F32, args, dims, steps, data);
}
void fa_loop_f64(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data) {
    run(FA_F64, args, dims, steps, data);
}
void fa_loop_bf16(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data) {
    run(FA_BF16, args, dims, steps, data);
}
