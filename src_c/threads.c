/* A small persistent thread pool for splitting one large array across cores.
 * The caller runs the first chunk itself; workers sleep on a condition
 * variable between calls. A call made while another thread is using the
 * pool, or with too few elements, runs on the calling thread alone. Results
 * never depend on the split: every kernel is elementwise and position-free,
 * and workers run under the caller's floating-point environment (rounding,
 * flush-to-zero) and hand the exception flags they raise back to the caller,
 * where NumPy looks for them. */
#define _GNU_SOURCE
#include <fenv.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "fastact.h"

#define FA_MAX_THREADS 256

static atomic_int requested_threads; /* 0 until first asked */

int fa_default_num_threads(void) {
    const char *env = getenv("FASTACT_NUM_THREADS");
    if (env && *env >= '0' && *env <= '9') { /* digits only, as the Python layer checks */
        char *end;
        long n = strtol(env, &end, 10);
        if (*end == '\0' && n >= 1) return n > FA_MAX_THREADS ? FA_MAX_THREADS : (int)n;
    }
    return 0; /* caller falls back to the CPU count */
}

#if defined(_WIN32)

/* No pool on Windows yet: everything runs on the calling thread. */
int fa_num_threads(void) { return 1; }
void fa_set_num_threads(int n) { (void)n; }
void fa_parallel_for(ptrdiff_t n, ptrdiff_t min_per_thread, ptrdiff_t grain, fa_range_fn body, void *ctx) {
    (void)min_per_thread;
    (void)grain;
    if (n > 0) body(ctx, 0, n);
}

#else
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

static int cpus_available(void) {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)n : 1;
}

int fa_num_threads(void) {
    int n = atomic_load(&requested_threads);
    if (n == 0) {
        n = fa_default_num_threads();
        if (n == 0) n = cpus_available();
        if (n > FA_MAX_THREADS) n = FA_MAX_THREADS;
        atomic_store(&requested_threads, n);
    }
    return n;
}

void fa_set_num_threads(int n) {
    atomic_store(&requested_threads, n < 1 ? 1 : n > FA_MAX_THREADS ? FA_MAX_THREADS : n);
}

/* The job the workers run: chunk i of [0, n) for i = 1 .. chunks-1. */
static struct {
    pthread_mutex_t lock;      /* guards everything below */
    pthread_cond_t wake;       /* a new generation of work */
    pthread_cond_t done;       /* pending reached 0 */
    pthread_mutex_t in_use;    /* held by the one caller using the pool */
    int workers;               /* threads started */
    unsigned long generation;
    int chunks, pending;
    ptrdiff_t n, grain;
    fa_range_fn body;
    void *ctx;
    fenv_t caller_env;         /* the caller's rounding mode, FTZ/DAZ, masks */
    int raised;                /* exception flags the workers raised */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER, .in_use = PTHREAD_MUTEX_INITIALIZER};

/* Chunk boundaries: equal shares rounded to a multiple of grain. */
static ptrdiff_t chunk_start(ptrdiff_t n, ptrdiff_t grain, int chunks, int i) {
    if (i >= chunks) return n;
    ptrdiff_t blocks = (n + grain - 1) / grain;
    ptrdiff_t start = (ptrdiff_t)((double)blocks * i / chunks) * grain;
    return start < n ? start : n;
}

static void *worker_main(void *arg) {
    int index = (int)(ptrdiff_t)arg; /* runs chunk index + 1 */
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (pool.generation == seen) pthread_cond_wait(&pool.wake, &pool.lock);
        seen = pool.generation;
        if (index + 1 >= pool.chunks) continue;
        ptrdiff_t n = pool.n, grain = pool.grain;
        int chunks = pool.chunks;
        fa_range_fn body = pool.body;
        void *ctx = pool.ctx;
        fenv_t caller_env = pool.caller_env, own_env;
        pthread_mutex_unlock(&pool.lock);
        ptrdiff_t begin = chunk_start(n, grain, chunks, index + 1);
        ptrdiff_t end = chunk_start(n, grain, chunks, index + 2);
        fegetenv(&own_env);
        fesetenv(&caller_env);
        feclearexcept(FE_ALL_EXCEPT);
        if (end > begin) body(ctx, begin, end);
        int raised = fetestexcept(FE_ALL_EXCEPT);
        fesetenv(&own_env);
        pthread_mutex_lock(&pool.lock);
        pool.raised |= raised;
        if (--pool.pending == 0) pthread_cond_signal(&pool.done);
    }
    return NULL;
}

/* After fork() only the forking thread exists: forget the workers. */
static void reset_after_fork(void) {
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
    pool.lock = fresh;
    pool.in_use = fresh;
    pool.wake = fresh_cond;
    pool.done = fresh_cond;
    pool.workers = 0;
}

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, reset_after_fork); }

/* Start workers up to `wanted`; returns how many exist. Holds pool.lock. */
static int grow_pool(int wanted) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_fork_handler);
    while (pool.workers < wanted) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&t, &attr, worker_main, (void *)(ptrdiff_t)pool.workers);
        pthread_attr_destroy(&attr);
        if (failed) break;
        pool.workers++;
    }
    return pool.workers;
}

void fa_parallel_for(ptrdiff_t n, ptrdiff_t min_per_thread, ptrdiff_t grain, fa_range_fn body, void *ctx) {
    if (n <= 0) return;
    ptrdiff_t by_size = n / (min_per_thread > 0 ? min_per_thread : 1);
    int chunks = fa_num_threads();
    if (by_size < chunks) chunks = (int)by_size;
    if (chunks <= 1 || pthread_mutex_trylock(&pool.in_use) != 0) {
        body(ctx, 0, n);
        return;
    }
    pthread_mutex_lock(&pool.lock);
    int workers = grow_pool(chunks - 1);
    if (chunks > workers + 1) chunks = workers + 1;
    pool.n = n;
    pool.grain = grain;
    pool.chunks = chunks;
    pool.body = body;
    pool.ctx = ctx;
    pool.pending = chunks - 1;
    pool.raised = 0;
    fegetenv(&pool.caller_env);
    pool.generation++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    body(ctx, 0, chunk_start(n, grain, chunks, 1));

    pthread_mutex_lock(&pool.lock);
    while (pool.pending > 0) pthread_cond_wait(&pool.done, &pool.lock);
    int raised = pool.raised;
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&pool.in_use);
    if (raised) feraiseexcept(raised); /* as if the caller had computed every chunk */
}
#endif
