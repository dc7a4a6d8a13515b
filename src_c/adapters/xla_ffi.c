/* fastact's elementwise operations as one XLA FFI handler (fastact.jax
 * registers it with jax.ffi), so that jax.jit calls the kernels in place of
 * a host callback. The operation comes as attributes: op, direction and tier
 * (its ufunc's numbers), and params (its float64 parameters, when it has
 * any). Operands and results are XLA's dense buffers of one dtype and one
 * element count; the ufunc loop of that dtype computes them in one call, as
 * NumPy would over contiguous arrays (same bits, same thread split).
 * With forward_op, forward_direction and forward_tier, the last operand x
 * first goes through that operation into the result, a stretch at a time,
 * and the operation then runs on the other operands and that result, in
 * place: a derivative from the forward's output (sigmoid's, tanh's) taken
 * from x in one pass over memory, with the two operations' bits. */
#include <string.h>
#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#else
#include <fenv.h>
#endif

#include "adapters/xla_ffi.h"
#include "adapters/xla_ffi_abi.h"
#include "runtime/fastact_loops.h"

typedef void (*fa_loop_fn)(char **args, const ptrdiff_t *dims, const ptrdiff_t *steps, void *data);

static fa_xla_error *failure(const fa_xla_call_frame *frame, const char *message) {
    fa_xla_error_create_args args = {.struct_size = sizeof args, .message = message,
                                     .errc = FA_XLA_INVALID_ARGUMENT};
    return frame->api->error_create(&args);
}

static int named(const fa_xla_bytes *name, const char *expected) {
    return name->len == strlen(expected) && memcmp(name->ptr, expected, name->len) == 0;
}

/* an integer attribute (jax passes int32 or int64 scalars), or -1 */
static int64_t int_attr(const fa_xla_attrs *attrs, const char *name) {
    for (int64_t i = 0; i < attrs->size; i++) {
        if (attrs->types[i] != FA_XLA_ATTR_SCALAR || !named(attrs->names[i], name)) continue;
        const fa_xla_scalar *scalar = attrs->attrs[i];
        if (scalar->dtype == FA_XLA_S32) return *(const int32_t *)scalar->value;
        if (scalar->dtype == FA_XLA_S64) return *(const int64_t *)scalar->value;
    }
    return -1;
}

/* the float64 array attribute `params`, or NULL (*count 0) */
static const double *params_attr(const fa_xla_attrs *attrs, size_t *count) {
    *count = 0;
    for (int64_t i = 0; i < attrs->size; i++) {
        if (attrs->types[i] != FA_XLA_ATTR_ARRAY || !named(attrs->names[i], "params")) continue;
        const fa_xla_array *array = attrs->attrs[i];
        if (array->dtype != FA_XLA_F64) return NULL;
        *count = array->size;
        return array->data;
    }
    return NULL;
}

static int64_t elements(const fa_xla_buffer *buffer) {
    int64_t n = 1;
    for (int64_t d = 0; d < buffer->rank; d++) n *= buffer->dims[d];
    return n;
}

/* XLA runs its CPU programs with subnormals flushed to zero (FTZ and DAZ):
 * fastact's results are IEEE's there as everywhere, within its stated
 * bounds, so the loop runs in the default environment and XLA's is put back. */
#if defined(__x86_64__) || defined(_M_X64)
typedef unsigned fa_xla_fpenv;
static fa_xla_fpenv ieee_enter(void) {
    fa_xla_fpenv saved = _mm_getcsr();
    _mm_setcsr(0x1f80u); /* round to nearest, every exception masked, no FTZ or DAZ */
    return saved;
}
static void ieee_leave(fa_xla_fpenv saved) { _mm_setcsr(saved); }
#else
typedef fenv_t fa_xla_fpenv;
static fa_xla_fpenv ieee_enter(void) {
    fa_xla_fpenv saved;
    fegetenv(&saved);
    fesetenv(FE_DFL_ENV);
    return saved;
}
static void ieee_leave(fa_xla_fpenv saved) { fesetenv(&saved); }
#endif

static fa_xla_error *describe(fa_xla_metadata_extension *extension) {
    extension->metadata->api_version =
        (fa_xla_api_version){.struct_size = sizeof(fa_xla_api_version), .major_version = FA_XLA_FFI_MAJOR,
                             .minor_version = FA_XLA_FFI_MINOR};
    extension->metadata->traits = 0;
    return NULL;
}

/* Stretches of this many elements (256 KiB of float32): the forward's
 * result is still in L2 when the operation reads it back, and a stretch is
 * long enough for the loops' thread split. */
#define FA_XLA_STRETCH ((int64_t)1 << 16)

/* result = spec(other operands, forward(x)), x the last operand; args and
 * steps as the handler laid them out (inputs, parameters, the result) */
static fa_xla_error *through_forward(const fa_xla_call_frame *frame, fa_loop_fn loop, const void *spec,
                                     int64_t forward_op, char **args, const ptrdiff_t *steps, int nin, int nparams,
                                     int64_t n) {
    int64_t direction = int_attr(&frame->attrs, "forward_direction"), tier = int_attr(&frame->attrs, "forward_tier");
    const void *forward = direction < 0 || tier < 0 ? NULL : fa_loop_data((int)forward_op, (int)direction, (int)tier);
    int fwd_in, fwd_params, fwd_out;
    if (forward) fa_loop_arity(forward, &fwd_in, &fwd_params, &fwd_out);
    if (!forward || fwd_in != 1 || fwd_params != 0 || fwd_out != 1 || nparams != 0 || nin < 2)
        return failure(frame, "fastact: no such forward operation for this one");
    ptrdiff_t size = steps[0];
    fa_xla_fpenv saved = ieee_enter();
    for (int64_t start = 0; start < n; start += FA_XLA_STRETCH) {
        ptrdiff_t len = n - start < FA_XLA_STRETCH ? (ptrdiff_t)(n - start) : (ptrdiff_t)FA_XLA_STRETCH;
        char *y = args[nin] + start * size;
        char *fwd_args[2] = {args[nin - 1] + start * size, y}, *op_args[FA_LOOP_MAX_ARGS];
        for (int a = 0; a < nin - 1; a++) op_args[a] = args[a] + start * size;
        op_args[nin - 1] = y, op_args[nin] = y;
        loop(fwd_args, &len, steps, (void *)forward);
        loop(op_args, &len, steps, (void *)spec);
    }
    ieee_leave(saved);
    return NULL;
}

fa_xla_error *fa_xla_ffi_activation(fa_xla_call_frame *frame) {
    if (frame->extension_start && frame->extension_start->type == FA_XLA_EXTENSION_METADATA)
        return describe((fa_xla_metadata_extension *)frame->extension_start);
    if (frame->stage != FA_XLA_STAGE_EXECUTE) return NULL;
    int64_t op = int_attr(&frame->attrs, "op"), direction = int_attr(&frame->attrs, "direction"),
            tier = int_attr(&frame->attrs, "tier");
    const void *spec = op < 0 || direction < 0 || tier < 0 ? NULL : fa_loop_data((int)op, (int)direction, (int)tier);
    if (!spec) return failure(frame, "fastact: no such operation");
    int nin, nparams, nout;
    fa_loop_arity(spec, &nin, &nparams, &nout);
    size_t given;
    const double *params = params_attr(&frame->attrs, &given);
    if (frame->args.size != nin || frame->rets.size != nout || given != (size_t)nparams)
        return failure(frame, "fastact: wrong number of operands, results or parameters");
    char *args[FA_LOOP_MAX_ARGS];
    ptrdiff_t steps[FA_LOOP_MAX_ARGS];
    const fa_xla_buffer *first = frame->rets.items[0];
    int64_t n = elements(first);
    int count = 0;
    for (int a = 0; a < nin + nout; a++) {
        int is_ret = a >= nin;
        const fa_xla_buffer *buffer = is_ret ? frame->rets.items[a - nin] : frame->args.items[a];
        if ((is_ret ? frame->rets.types[a - nin] : frame->args.types[a]) != 1 || buffer->dtype != first->dtype ||
            elements(buffer) != n)
            return failure(frame, "fastact: operands and results must be arrays of one dtype and size");
        if (a == nin)
            for (int j = 0; j < nparams; j++) args[count] = (char *)&params[j], steps[count++] = 0;
        args[count] = buffer->data;
        steps[count++] = first->dtype == FA_XLA_F64 ? 8 : first->dtype == FA_XLA_F32 ? 4 : 2;
    }
    fa_loop_fn loop = first->dtype == FA_XLA_F32 ? fa_loop_f32 : first->dtype == FA_XLA_F64 ? fa_loop_f64
                    : first->dtype == FA_XLA_F16 ? fa_loop_f16 : first->dtype == FA_XLA_BF16 ? fa_loop_bf16 : NULL;
    if (!loop) return failure(frame, "fastact: the dtype must be float32, float64, float16 or bfloat16");
    int64_t forward_op = int_attr(&frame->attrs, "forward_op");
    if (forward_op >= 0) return through_forward(frame, loop, spec, forward_op, args, steps, nin, nparams, n);
    ptrdiff_t dims[1] = {(ptrdiff_t)n};
    if (n > 0) {
        fa_xla_fpenv saved = ieee_enter();
        loop(args, dims, steps, (void *)spec);
        ieee_leave(saved);
    }
    return NULL;
}

void *fa_xla_ffi_activation_address(void) {
    return (void *)fa_xla_ffi_activation;
}
