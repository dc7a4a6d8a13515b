/* Calls from a PyTorch program, split over PyTorch's own OpenMP threads.
 *
 * After each of its operations PyTorch's OpenMP workers spin for a while;
 * fastact's pool workers, woken then, wait for the cores those hold, so
 * inside a model fastact's calls ran on the caller alone. A call made in the
 * OpenMP scope (fastact.torch's calls on tensor memory) hands its blocks to
 * that runtime's team instead, through GOMP_parallel: the entry point that
 * GCC's libgomp and LLVM's libomp both export, whose address fastact.torch
 * finds in the runtime PyTorch loaded. The blocks are claimed as in the
 * pool (an atomic counter), so that a member that comes late leaves its
 * share to the others; each member runs under the caller's floating-point
 * environment and hands back the flags it raised. The results are the same
 * bits as on one thread: every kernel is position-free. */
#define _GNU_SOURCE
#include <stdatomic.h>
#if !defined(_WIN32)
#include <unistd.h>
#endif

#include "runtime/fastact.h"
#include "runtime/threads_os.h"

#define FA_TEAM_MIN_NS 20000.0 /* a split's least work: a parked team's wake-up costs about that */
#define FA_TEAM_BLOCKS_PER_THREAD 4

typedef void (*fa_gomp_parallel_fn)(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
typedef int (*fa_omp_max_threads_fn)(void);

static _Atomic(fa_gomp_parallel_fn) gomp_parallel;
static _Atomic(fa_omp_max_threads_fn) omp_max_threads;
#if !defined(_WIN32)
static atomic_int scope_owner_pid; /* the process that bound the runtime */
#endif
static FA_THREAD_LOCAL int in_scope;
static atomic_long team_calls; /* calls split over the team: for tests */

long fa_openmp_team_calls(void) { return atomic_load(&team_calls); }

int fa_openmp_scope(int on) {
    int before = in_scope;
    in_scope = on;
    return before;
}

int fa_in_openmp_scope(void) { return in_scope; }

typedef struct {
    ptrdiff_t n, grain;
    int blocks;
    atomic_int next, raised;
    fa_range_fn body;
    void *ctx;
    fa_fpenv_t caller_env;
} fa_team_job;

void fa_use_openmp(void *parallel, void *max_threads) {
    atomic_store(&omp_max_threads, (fa_omp_max_threads_fn)max_threads);
    atomic_store(&gomp_parallel, (fa_gomp_parallel_fn)parallel);
#if !defined(_WIN32)
    atomic_store(&scope_owner_pid, (int)getpid());
#endif
}

static ptrdiff_t block_start(const fa_team_job *job, int b) {
    ptrdiff_t grains = (job->n + job->grain - 1) / job->grain;
    ptrdiff_t start = (ptrdiff_t)((double)grains * b / job->blocks) * job->grain;
    return start < job->n ? start : job->n;
}

static void team_member(void *data) {
    fa_team_job *job = data;
    fa_fpenv_t own_env;
    fa_fpenv_get(&own_env);
    fa_fpenv_enter(&job->caller_env);
    for (int b; (b = atomic_fetch_add(&job->next, 1)) < job->blocks;) {
        ptrdiff_t begin = block_start(job, b), end = block_start(job, b + 1);
        if (end > begin) job->body(job->ctx, begin, end);
    }
    int raised = fa_fpenv_raised();
    if (raised) atomic_fetch_or(&job->raised, raised);
    fa_fpenv_set(&own_env);
}

int fa_team_parallel_for(ptrdiff_t n, double ns_per_element, int limit, ptrdiff_t grain, fa_range_fn body,
                         void *ctx) {
    fa_gomp_parallel_fn parallel = atomic_load(&gomp_parallel);
    fa_omp_max_threads_fn max_threads = atomic_load(&omp_max_threads);
    if (!parallel || !max_threads) return 0;
#if !defined(_WIN32)
    /* a forked child's OpenMP runtime may wait for threads that no longer exist */
    if (atomic_load(&scope_owner_pid) != (int)getpid()) return 0;
#endif
    int threads = max_threads();
    if (threads > limit) threads = limit;
    double work = (double)n * ns_per_element;
    if (threads <= 1 || ns_per_element <= 0 || work < FA_TEAM_MIN_NS) return 0;
    if (work < FA_TEAM_MIN_NS * threads / 2) threads = (int)(2 * work / FA_TEAM_MIN_NS);
    if (threads <= 1) return 0;
    fa_team_job job = {.n = n, .grain = grain, .body = body, .ctx = ctx};
    ptrdiff_t grains = (n + grain - 1) / grain;
    job.blocks = grains < threads * FA_TEAM_BLOCKS_PER_THREAD ? (int)grains : threads * FA_TEAM_BLOCKS_PER_THREAD;
    atomic_init(&job.next, 0);
    atomic_init(&job.raised, 0);
    fa_fpenv_get(&job.caller_env);
    atomic_fetch_add(&team_calls, 1);
    parallel(team_member, &job, (unsigned)threads, 0); /* the caller is a member: its flags restored */
    int raised = atomic_load(&job.raised);
    if (raised) feraiseexcept(raised); /* as if the caller had computed every block */
    return 1;
}
