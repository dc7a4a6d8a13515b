/* One kernel over n float32 elements, called `calls` times, for
 * tools/instruction_counts.sh: run under qemu-user with every executed
 * instruction logged, once and twice, the difference is one call's
 * instructions, without the start-up and the inputs' set-up.
 *
 *   instruction_count ISA OP DIRECTION TIER N CALLS   (ISA: a name of
 *       dispatch.c; OP the op's index; DIRECTION 0 forward, 1 backward; TIER
 *       its index)
 *   instruction_count --list                     every (OP, DIRECTION, TIER)
 *                                                of the scalar set, one a line
 * The inputs are a sweep of [-8, 8], where the kernels take their common paths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/fastact.h"
#include "runtime/fastact_loops.h"

static const double default_params[FA_N_OPS][FA_MAX_PARAMS] = FA_OP_DEFAULT_PARAMS_INIT;
#define FA_OP_NAME_(name, NAME) #name,
static const char *const op_names[FA_N_OPS] = {FA_OPS(FA_OP_NAME_)};

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (int op = 0; op < FA_N_OPS; op++)
            for (int direction = 0; direction < FA_N_DIRECTIONS; direction++)
                for (int tier = 0; tier < FA_N_TIERS; tier++)
                    if (fa_kernels_scalar.kernel[op][direction][FA_KF32][tier])
                        printf("%d %d %d %s\n", op, direction, tier, op_names[op]);
        return 0;
    }
    if (argc != 7) {
        fprintf(stderr, "usage: %s ISA OP DIRECTION TIER N CALLS | --list\n", argv[0]);
        return 2;
    }
    int isa = -1;
    for (int i = 0; i < FA_N_ISAS; i++)
        if (strcmp(argv[1], fa_isa_name(i)) == 0) isa = i;
    int op = atoi(argv[2]), direction = atoi(argv[3]), tier = atoi(argv[4]);
    ptrdiff_t n = atol(argv[5]);
    int calls = atoi(argv[6]);
    if (isa < 0 || fa_isa_set(isa) != 0 || op < 0 || op >= FA_N_OPS || direction < 0 || direction > 1 ||
        tier < 0 || tier >= FA_N_TIERS || n < 1 || calls < 0) {
        fprintf(stderr, "no such kernel set, op, direction or tier here\n");
        return 2;
    }
    fa_kernel kernel = fa_kernels_current()->kernel[op][direction][FA_KF32][tier];
    if (!kernel) return 3;
    float *buffers[FA_MAX_INPUTS + FA_MAX_OUTPUTS];
    for (int b = 0; b < FA_MAX_INPUTS + FA_MAX_OUTPUTS; b++) {
        buffers[b] = malloc((size_t)n * sizeof(float));
        if (!buffers[b]) return 1;
        for (ptrdiff_t i = 0; i < n; i++) buffers[b][i] = -8.0f + 16.0f * (float)i / (float)n + 0.125f * (float)b;
    }
    const void *in[FA_MAX_INPUTS] = {buffers[0], buffers[1], buffers[2]};
    void *out[FA_MAX_OUTPUTS] = {buffers[3], buffers[4]};
    for (int c = 0; c < calls; c++) kernel(in, out, n, default_params[op]);
    return 0;
}
