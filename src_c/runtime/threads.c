/* A small persistent thread pool for splitting one large array across cores.
 *
 * Design:
 *  - Wake path. A call publishes its job (range, grain, body, the caller's
 *    FP environment) in plain fields, then stores a new value of one atomic
 *    64-bit generation word; the low 16 bits of that word are the number of
 *    chunks, so a worker learns from one atomic load whether it takes part.
 *    Workers that finished a job watch the word in a spin loop (with the CPU's
 *    pause/yield hint), so back-to-back calls start them in about a
 *    microsecond, without a system call. Only if `sleepers` is nonzero does
 *    the caller take the mutex and broadcast the condition variable.
 *  - Spin budget. After a job a worker spins for FA_SPIN_NS (100 us) of wall
 *    time, checking the clock every 64 pauses, then parks on the condition
 *    variable (it bumps `sleepers` first, under the mutex, and re-checks the
 *    word: the seq_cst store/load pairs on both sides mean that either the
 *    caller sees the sleeper or the sleeper sees the new word; no lost wakeup).
 *    Parked workers cost nothing. With more threads than CPUs (an explicit
 *    request), or on the caller's own CPU (shares_callers_cpu), spinners also
 *    yield the CPU every 64 pauses. 100 us covers the gap between calls of a
 *    Python loop (a few microseconds) and bounds what a worker burns once the
 *    caller moves on; OpenMP (GOMP_SPINCOUNT, KMP_BLOCKTIME) and oneTBB make
 *    the same trade with longer budgets, which hurt more on a shared 2-core VM.
 *  - Blocks, claimed. A job of c chunks is cut into FA_BLOCKS_PER_CHUNK * c
 *    blocks; the caller and the woken workers each claim the next block
 *    (a compare-and-swap on one word that also names the job, so a worker
 *    late for one job cannot claim a block of the next) until none is left.
 *    A worker that wakes late, or is descheduled (a loaded VM, another
 *    library's threads spinning on the same cores), leaves its share to the
 *    others instead of making the caller wait for it: a split costs little
 *    more than its wake-up even when it does not pay.
 *  - Completion. Participants atomically OR the exception flags they raised
 *    into `raised` and decrement `pending` per block; the caller, after its
 *    last block, spins on `pending` for up to FA_CALLER_SPIN_NS, yielding
 *    every 64 pauses where a worker shares its CPU or is 20 us late, then
 *    parks the same way (a worker descheduled mid-block must not cost a
 *    spinning core).
 *  - Cost. Waking costs something: wake_ns[hot] (workers spinning) and
 *    wake_ns[cold] (workers parked) are measured with empty jobs when the pool
 *    starts, then follow what the jobs see (learn_wake). loops.c keeps a
 *    measured cost per element per (op, direction, tier, dtype, layout, ISA);
 *    a call wakes one worker per FA_WORTH wake costs (of the pool's present
 *    state) in its work. Calls in a loop, each worth a split of spinning
 *    workers but not of parked ones, wake them anyway (late for the first,
 *    in time for the rest).
 *    Memory-bound ops measured in cache look cheap, so they split later: the
 *    conservative direction. See fa_parallel_for.
 *  - One caller at a time. A call made while another thread uses the pool runs
 *    on its own thread (never blocks). Results never depend on the split:
 *    every kernel is elementwise and position-free, and workers run under the
 *    caller's floating-point environment (rounding, flush-to-zero) and hand
 *    the exception flags they raise back to the caller, where NumPy looks.
 *  - fork(): only the forking thread survives; the child forgets the workers
 *    and starts fresh ones. Interpreter exit: workers are detached and never
 *    joined, so exit() ends them wherever they are (spinning or parked).
 *  - The same pool on every OS: threads_os.h maps its lock, condition
 *    variables, threads and clock to POSIX or to Windows' own primitives. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/fastact.h"
#include "runtime/threads_os.h"

#define FA_MAX_THREADS 256

static atomic_int requested_threads; /* 0 until first asked */
static atomic_int threads_source;    /* fa_thread_source: where requested_threads came from */

/* "8" or, for OMP_NUM_THREADS, a nesting list "8,2" (its first level): ASCII
 * digits only, >= 1; 0 when unset or invalid. */
static int parse_count(const char *env, int allow_list) {
    if (!env || !(*env >= '0' && *env <= '9')) return 0;
    char *end;
    long n = strtol(env, &end, 10);
    if (!(*end == '\0' || (allow_list && *end == ','))) return 0;
    if (n < 1) return 0;
    return n > FA_MAX_THREADS ? FA_MAX_THREADS : (int)n;
}

int fa_default_num_threads(void) {
    return parse_count(getenv("FASTACT_NUM_THREADS"), 0); /* digits only, as the Python layer checks */
}

const char *fa_thread_source_name(int source) {
    switch (source) {
    case FA_THREADS_FROM_CPUS: return "the CPUs this process may use";
    case FA_THREADS_FROM_FASTACT_ENV: return "FASTACT_NUM_THREADS";
    case FA_THREADS_FROM_OMP_ENV: return "OMP_NUM_THREADS (FASTACT_NUM_THREADS unset)";
    case FA_THREADS_FROM_CALL: return "fastact.set_num_threads()";
    case FA_THREADS_FROM_THREADPOOLCTL: return "threadpoolctl";
    default: return NULL;
    }
}

#define FA_SPIN_NS 100000.0        /* a worker's active wait after a job */
#define FA_CALLER_SPIN_NS 1000000.0 /* the caller's, for the workers' chunks */
#define FA_WORTH 1.5               /* a call's work >= this many wake costs per worker woken */
#define FA_CHUNK_BITS 16 /* the generation word: count << 32 | blocks << 16 | chunks */
#define FA_CHUNK_MASK ((1u << FA_CHUNK_BITS) - 1)
#define FA_BLOCKS_PER_CHUNK 4
#define FA_PROBE 4096              /* elements timed to learn an unknown cost */
#define FA_WAKE_GUESS_NS 20000.0   /* the wake cost until the pool has measured it */
#define FA_SPECULATE_NS 8000.0     /* the least work that wakes parked workers for the next call */
#define FA_CALLER_YIELD_NS 20000.0 /* a caller waiting this long for a block yields as it waits */

double fa_now_ns(void) { return fa_os_now_ns(); }

static _Atomic double last_call_end; /* when the last call the cost model decided ended */

int fa_cpus_available(void) { return fa_os_cpus(); }

/* FASTACT_NUM_THREADS; else OMP_NUM_THREADS (what Dask, joblib and batch
 * systems set to keep every library to its share), capped at the CPUs; else
 * the CPUs this process may use. */
int fa_num_threads(void) {
    int n = atomic_load(&requested_threads);
    if (n == 0) {
        int source = FA_THREADS_FROM_FASTACT_ENV, cpus = fa_cpus_available();
        n = fa_default_num_threads();
        if (n == 0) {
            source = FA_THREADS_FROM_OMP_ENV;
            n = parse_count(getenv("OMP_NUM_THREADS"), 1);
            if (n > cpus) n = cpus;
        }
        if (n == 0) {
            source = FA_THREADS_FROM_CPUS;
            n = cpus;
        }
        if (n > FA_MAX_THREADS) n = FA_MAX_THREADS;
        int expected = 0;
        if (atomic_compare_exchange_strong(&requested_threads, &expected, n))
            atomic_store(&threads_source, source);
        else
            n = expected;
    }
    return n;
}

int fa_thread_source(void) {
    fa_num_threads();
    return atomic_load(&threads_source);
}

void fa_set_num_threads_from(int n, int source) {
    atomic_store(&requested_threads, n < 1 ? 1 : n > FA_MAX_THREADS ? FA_MAX_THREADS : n);
    atomic_store(&threads_source, source);
}

void fa_set_num_threads(int n) { fa_set_num_threads_from(n, FA_THREADS_FROM_CALL); }

/* The job: workers 0 .. chunks-2 take part, claiming blocks of [begin, end). */
static struct {
    fa_lock_t lock;                /* for parking only: sleepers and the condition variables */
    fa_cond_t wake;                /* a new generation, for parked workers */
    fa_cond_t done;                /* pending reached 0, for a parked caller */
    atomic_flag in_use;            /* held by the one caller using the pool */
    atomic_int workers;            /* threads started (changed only by the caller holding in_use) */
    atomic_int oversubscribed;     /* more threads than CPUs: spinners yield the CPU */
    _Atomic uint64_t generation;   /* (count << 32) | (blocks << 16) | chunks */
    _Atomic uint64_t claim;        /* (count << 32) | the next block to run */
    atomic_int spinning;           /* workers in their active wait */
    atomic_int sleepers;           /* workers parked on `wake` */
    atomic_int caller_parked;      /* the caller waits on `done` */
    atomic_int pending;            /* blocks not finished yet */
    atomic_int raised;             /* exception flags the workers raised */
    /* plain fields, written before the generation is published */
    ptrdiff_t begin, end, grain;
    fa_range_fn body;
    void *ctx;
    fa_fpenv_t caller_env;         /* the caller's rounding mode, FTZ/DAZ, masks */
    _Atomic double wake_ns[2];     /* a wake's cost, measured then learned (ns): [0] parked, [1] spinning */
    atomic_int caller_cpu;         /* the CPU of the last job's caller, or -1 */
    _Atomic int64_t first_claim;   /* when a worker first claimed a block of this job (ns), or 0 */
    atomic_int caller_claiming;    /* the caller is claiming blocks (not yet waiting for the rest) */
    atomic_int cpu_shared;         /* a worker of this job found itself on the caller's CPU */
} pool = {.lock = FA_LOCK_INIT, .wake = FA_COND_INIT, .done = FA_COND_INIT, .in_use = ATOMIC_FLAG_INIT};

static uint64_t start_generation[FA_MAX_THREADS]; /* what worker i has seen when it starts */

/* Chunk boundaries: equal shares of [begin, end) rounded to a multiple of grain. */
static ptrdiff_t chunk_start(ptrdiff_t begin, ptrdiff_t end, ptrdiff_t grain, int chunks, int i) {
    if (i >= chunks) return end;
    ptrdiff_t n = end - begin, blocks = (n + grain - 1) / grain;
    ptrdiff_t start = (ptrdiff_t)((double)blocks * i / chunks) * grain;
    return begin + (start < n ? start : n);
}

/* A worker woken from its park can land on its caller's CPU while another
 * idles (Linux puts a wakee near its waker), until the balancer moves it,
 * milliseconds later: spinning there, it and the caller take turns of the
 * scheduler's slice (~110 us on a 2-vCPU VM, a 31 us call then took 150).
 * So a worker on the caller's CPU yields as it waits, claims no block while
 * the caller still claims, and says so (cpu_shared), for the caller to
 * yield as it waits for the workers' blocks. */
static int shares_callers_cpu(void) {
    int caller = atomic_load_explicit(&pool.caller_cpu, memory_order_relaxed);
    return caller >= 0 && fa_current_cpu() == caller;
}

/* Spin, then park, until the generation differs from `seen`. The caller of
 * this function is counted in pool.spinning; it is not on return. */
static uint64_t wait_for_work(uint64_t seen) {
    uint64_t g;
    double deadline = fa_now_ns() + FA_SPIN_NS;
    for (unsigned i = 1;; i++) {
        g = atomic_load(&pool.generation);
        if (g != seen) {
            atomic_fetch_sub(&pool.spinning, 1);
            return g;
        }
        FA_PAUSE();
        if (i % 64 == 0) {
            if (fa_now_ns() > deadline) break;
            if (atomic_load_explicit(&pool.oversubscribed, memory_order_relaxed) || shares_callers_cpu()) fa_yield();
        }
    }
    fa_lock(&pool.lock);
    atomic_fetch_sub(&pool.spinning, 1);
    atomic_fetch_add(&pool.sleepers, 1);
    while ((g = atomic_load(&pool.generation)) == seen) fa_cond_wait(&pool.wake, &pool.lock);
    atomic_fetch_sub(&pool.sleepers, 1);
    fa_unlock(&pool.lock);
    return g;
}

/* Claim the next block of the job `generation` names; -1 once none is left
 * or the job is over. A successful claim orders the job's fields before it. */
static int claim_block(uint64_t generation) {
    uint64_t count = generation >> 32, blocks = (generation >> FA_CHUNK_BITS) & FA_CHUNK_MASK;
    uint64_t c = atomic_load(&pool.claim);
    while ((c >> 32) == count && (c & 0xffffffffu) < blocks)
        if (atomic_compare_exchange_weak(&pool.claim, &c, c + 1)) return (int)(c & 0xffffffffu);
    return -1;
}

/* whether the job `generation` names has a block left to claim */
static int blocks_left(uint64_t generation) {
    uint64_t count = generation >> 32, blocks = (generation >> FA_CHUNK_BITS) & FA_CHUNK_MASK;
    uint64_t c = atomic_load(&pool.claim);
    return (c >> 32) == count && (c & 0xffffffffu) < blocks;
}

/* Block b's elements, run; returns how many */
static ptrdiff_t run_block(uint64_t generation, int b) {
    int blocks = (int)((generation >> FA_CHUNK_BITS) & FA_CHUNK_MASK);
    ptrdiff_t begin = chunk_start(pool.begin, pool.end, pool.grain, blocks, b);
    ptrdiff_t end = chunk_start(pool.begin, pool.end, pool.grain, blocks, b + 1);
    if (end > begin) pool.body(pool.ctx, begin, end);
    return end - begin;
}

static void finish_block(void) {
    if (atomic_fetch_sub(&pool.pending, 1) == 1 && atomic_load(&pool.caller_parked)) {
        fa_lock(&pool.lock);
        fa_cond_signal(&pool.done);
        fa_unlock(&pool.lock);
    }
}

static void worker_main(int index) {
    uint64_t seen = start_generation[index];
    for (;;) {
        seen = wait_for_work(seen);
        int chunks = (int)(seen & FA_CHUNK_MASK), b;
        /* on the caller's CPU a block would wait for the caller: none while
         * it claims blocks itself, or until the scheduler moves this thread,
         * which yielding lets it do (with more threads than CPUs, sharing is
         * the rule, and the scheduler's turns run the blocks) */
        while (index + 1 < chunks && atomic_load(&pool.caller_claiming) &&
               !atomic_load_explicit(&pool.oversubscribed, memory_order_relaxed) && shares_callers_cpu() &&
               blocks_left(seen))
            atomic_store_explicit(&pool.cpu_shared, 1, memory_order_relaxed), fa_yield();
        if (index + 1 >= chunks || (b = claim_block(seen)) < 0) { /* not in this job, or too late for it */
            atomic_fetch_add(&pool.spinning, 1);
            continue;
        }
        int64_t none = 0;
        atomic_compare_exchange_strong(&pool.first_claim, &none, (int64_t)fa_now_ns());
        fa_fpenv_t own_env;
        fa_fpenv_get(&own_env);
        fa_fpenv_enter(&pool.caller_env); /* the job cannot end before this block: its fields stand */
        for (; b >= 0; b = claim_block(seen)) {
            run_block(seen, b);
            int raised = fa_fpenv_raised(); /* handed over before the block counts as done */
            if (raised) atomic_fetch_or(&pool.raised, raised);
            finish_block();
        }
        fa_fpenv_set(&own_env);
        atomic_fetch_add(&pool.spinning, 1);
    }
}

#if !defined(_WIN32)
/* After fork() only the forking thread exists: forget the workers. */
static void reset_after_fork(void) {
    fa_lock_t fresh = FA_LOCK_INIT;
    fa_cond_t fresh_cond = FA_COND_INIT;
    pool.lock = fresh;
    pool.wake = fresh_cond;
    pool.done = fresh_cond;
    pool.workers = 0;
    atomic_store(&pool.spinning, 0);
    atomic_store(&pool.sleepers, 0);
    atomic_store(&pool.caller_parked, 0);
    atomic_store(&pool.pending, 0);
    atomic_flag_clear(&pool.in_use);
}

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, reset_after_fork); }
#endif

/* The wake costs follow what the jobs see (publish to a worker's first
 * claim, a little less than measure_wake's round trip): down at once, up
 * by a sixteenth of the difference; only jobs published to a pool all
 * parked or all spinning count. The first measure (measure_wake) can
 * catch a passing state: another library's
 * threads spinning on the other CPU, or a new worker still on the caller's
 * (both seen on a 2-vCPU VM: 110 us, then 0.2-16 us for the life of the
 * process), and a cost kept too high stops the very splits that would
 * correct it only where no call is large enough to split anyway. */
static void learn_wake(int parked, double seen, int at_least) {
    double old = pool.wake_ns[parked ? 0 : 1];
    if (seen <= 0 || pool.workers == 0 || (at_least && seen <= old)) return;
    double cost = seen < old ? seen : old + (seen - old) / 16;
    if (parked && cost < pool.wake_ns[1]) cost = pool.wake_ns[1]; /* a park never costs less than a spin */
    pool.wake_ns[parked ? 0 : 1] = cost;
}

/* Publish a job of `chunks` participants over [begin, end), claim and run
 * blocks here (at most `own_blocks`), wait for the rest and raise the
 * workers' flags here. Returns the time of the caller's blocks, their
 * elements in *own. The caller holds in_use. */
static double run_job(int chunks, ptrdiff_t begin, ptrdiff_t end, ptrdiff_t grain, fa_range_fn body, void *ctx,
                      int own_blocks, ptrdiff_t *own) {
    ptrdiff_t grains = (end - begin + grain - 1) / grain;
    int blocks = chunks * FA_BLOCKS_PER_CHUNK;
    if (blocks > grains) blocks = grains > chunks ? (int)grains : chunks;
    pool.begin = begin;
    pool.end = end;
    pool.grain = grain;
    pool.body = body;
    pool.ctx = ctx;
    fa_fpenv_get(&pool.caller_env);
    atomic_store_explicit(&pool.caller_cpu, fa_current_cpu(), memory_order_relaxed);
    atomic_store(&pool.raised, 0);
    atomic_store(&pool.pending, blocks);
    uint64_t count = (atomic_load(&pool.generation) >> 32) + 1;
    uint64_t next = count << 32 | (uint64_t)blocks << FA_CHUNK_BITS | (uint64_t)chunks;
    atomic_store(&pool.claim, count << 32);
    atomic_store(&pool.first_claim, 0);
    atomic_store(&pool.caller_claiming, 1);
    atomic_store(&pool.cpu_shared, 0);
    /* the pool's state as published, for learn_wake: all parked, all spinning, or mixed */
    int state = atomic_load(&pool.sleepers) >= pool.workers ? 0 : atomic_load(&pool.spinning) >= pool.workers ? 1 : -1;
    double published = fa_now_ns();
    atomic_store(&pool.generation, next);
    if (atomic_load(&pool.sleepers) > 0) { /* read after the store: no lost wake-up (see the top) */
        fa_lock(&pool.lock);
        fa_cond_broadcast(&pool.wake);
        fa_unlock(&pool.lock);
    }

    ptrdiff_t done = 0;
    double started = fa_now_ns();
    for (int b; own_blocks-- > 0 && (b = claim_block(next)) >= 0;) {
        done += run_block(next, b);
        atomic_fetch_sub(&pool.pending, 1);
    }
    atomic_store(&pool.caller_claiming, 0);
    double took = fa_now_ns() - started;
    if (own) *own = done;

    double finished = started + took, deadline = finished + FA_CALLER_SPIN_NS;
    for (unsigned i = 1; atomic_load(&pool.pending) > 0; i++) {
        FA_PAUSE();
        /* a worker on this CPU (it says so, or it is late) gets it; yielding
         * always would give it to any other task too */
        if (i % 64 == 0 && (atomic_load_explicit(&pool.oversubscribed, memory_order_relaxed) ||
                            atomic_load_explicit(&pool.cpu_shared, memory_order_relaxed) ||
                            fa_now_ns() > finished + FA_CALLER_YIELD_NS))
            fa_yield();
        if (i % 64 == 0 && fa_now_ns() > deadline) {
            fa_lock(&pool.lock);
            atomic_store(&pool.caller_parked, 1);
            while (atomic_load(&pool.pending) > 0) fa_cond_wait(&pool.done, &pool.lock);
            atomic_store(&pool.caller_parked, 0);
            fa_unlock(&pool.lock);
            break;
        }
    }
    int64_t first = atomic_load(&pool.first_claim);
    /* none came: from a park, the wake took longer than the job (a bound
     * from below: it may raise the cost, never lower it); from a spin, the
     * caller was quick, which says nothing of the wake */
    if (state >= 0 && (first || state == 0)) learn_wake(state == 0, (first ? (double)first : fa_now_ns()) - published, !first);
    int raised = atomic_load(&pool.raised);
    if (raised) feraiseexcept(raised); /* as if the caller had computed every chunk */
    return took;
}

static void empty_body(void *ctx, ptrdiff_t begin, ptrdiff_t end) { (void)ctx, (void)begin, (void)end; }

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The round trip of an empty job over every worker: back to back (workers
 * spinning) and after they have parked; a few milliseconds, once per pool
 * size. */
static void measure_wake(void) {
    int chunks = pool.workers + 1;
    double hot[15], cold[5];
    /* untimed first: a thread just created may not run yet, and its start
     * (a hundred microseconds on a loaded VM) is no wake cost */
    for (int i = 0; i < 3; i++) run_job(chunks, 0, chunks * 64, 64, empty_body, NULL, 1, NULL);
    for (int i = 0; i < 15; i++) {
        double t = fa_now_ns();
        run_job(chunks, 0, chunks * 64, 64, empty_body, NULL, 1, NULL);
        hot[i] = fa_now_ns() - t;
    }
    qsort(hot, 15, sizeof hot[0], compare_doubles);
    for (int i = 0; i < 5; i++) {
        double give_up = fa_now_ns() + 20e6;
        while (atomic_load(&pool.sleepers) < pool.workers && fa_now_ns() < give_up) fa_nap();
        double t = fa_now_ns();
        run_job(chunks, 0, chunks * 64, 64, empty_body, NULL, 1, NULL);
        cold[i] = fa_now_ns() - t;
    }
    qsort(cold, 5, sizeof cold[0], compare_doubles);
    /* the spinning pool's: the least seen (a descheduled worker, on a shared
     * VM, only ever adds time, and one slow measure would keep every later
     * mid-sized call on one thread); the parked pool's: the median */
    pool.wake_ns[1] = hot[0];
    pool.wake_ns[0] = cold[2] > hot[0] ? cold[2] : hot[0];
}

/* Start workers up to `wanted` (measuring the wake cost when the pool grows);
 * returns how many exist. The caller holds in_use. */
static int grow_pool(int wanted) {
#if !defined(_WIN32)
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_fork_handler);
#endif
    int before = pool.workers;
    while (pool.workers < wanted) {
        start_generation[pool.workers] = atomic_load(&pool.generation);
        atomic_fetch_add(&pool.spinning, 1); /* counted from the start, as wait_for_work expects */
        if (fa_start_detached(worker_main, pool.workers) != 0) {
            atomic_fetch_sub(&pool.spinning, 1);
            break;
        }
        pool.workers++;
    }
    atomic_store(&pool.oversubscribed, pool.workers + 1 > fa_cpus_available());
    if (pool.workers > before) measure_wake();
    return pool.workers;
}

double fa_wake_ns(int hot) { return pool.workers > 0 ? pool.wake_ns[hot ? 1 : 0] : 0; }

ptrdiff_t fa_min_per_thread(double ns_per_element) {
    double wake = pool.workers > 0 ? pool.wake_ns[0] : FA_WAKE_GUESS_NS;
    double n = FA_WORTH * wake / 2 / (ns_per_element > 0 ? ns_per_element : 1e-3); /* two threads' share each */
    ptrdiff_t elements = n > 1e15 ? (ptrdiff_t)1e15 : (ptrdiff_t)n + 1;
    return elements < FA_PROBE ? FA_PROBE : elements;
}

/* Keep the smallest cost seen: noise (other processes, page faults, a
 * neighbour sharing the memory bus) only ever adds time. */
static void record_cost(const fa_cost *cost, double ns, ptrdiff_t n) {
    if (!cost || !cost->ps_per_element || n < FA_PROBE / 4 || ns <= 0) return;
    double ps = ns * 1000.0 / (double)n;
    unsigned value = ps < 1 ? 1 : ps > 4e9 ? 4000000000u : (unsigned)ps;
    unsigned old = atomic_load_explicit(cost->ps_per_element, memory_order_relaxed);
    while ((old == 0 || value < old) &&
           !atomic_compare_exchange_weak_explicit(cost->ps_per_element, &old, value, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

void fa_parallel_for(ptrdiff_t n, const fa_cost *cost, ptrdiff_t grain, fa_range_fn body, void *ctx) {
    if (n <= 0) return;
    int limit = fa_num_threads();
    ptrdiff_t fixed = cost ? cost->min_per_thread : 0;
    if (fixed <= 0 && cost && cost->ps_per_element && fa_in_openmp_scope()) { /* a PyTorch program's call */
        unsigned known = atomic_load_explicit(cost->ps_per_element, memory_order_relaxed);
        if (known > 0 && fa_team_parallel_for(n, known / 1000.0, limit, grain, body, ctx)) return;
    }
    if (limit <= 1 || n < (fixed > 0 ? 2 * fixed : 2 * FA_PROBE) || atomic_flag_test_and_set(&pool.in_use)) {
        body(ctx, 0, n);
        return;
    }
    ptrdiff_t begin = 0;
    unsigned ps = cost && cost->ps_per_element ? atomic_load_explicit(cost->ps_per_element, memory_order_relaxed) : 0;
    if (fixed <= 0 && ps == 0 && cost && cost->ps_per_element) { /* first call: learn the cost on the first elements */
        double t = fa_now_ns();
        body(ctx, 0, FA_PROBE);
        record_cost(cost, fa_now_ns() - t, FA_PROBE);
        begin = FA_PROBE;
        ps = atomic_load_explicit(cost->ps_per_element, memory_order_relaxed);
    }
    ptrdiff_t rest = n - begin;
    int chunks = limit, warm = 0;
    if (fixed > 0) {
        if (rest / fixed < chunks) chunks = (int)(rest / fixed);
    } else {
        /* FA_WORTH wake costs of work per worker woken (the pool's state now;
         * before the pool exists, a guess). Blocks are claimed, so a split
         * gains wherever the work outlasts the wake-up: a worker that comes
         * late leaves its blocks to the caller. */
        warm = pool.workers > 0 && atomic_load(&pool.spinning) >= pool.workers;
        double wake = pool.workers > 0 ? pool.wake_ns[warm ? 1 : 0] : FA_WAKE_GUESS_NS;
        double work = (double)rest * ps / 1000.0, worth = work / (FA_WORTH * (wake > 0 ? wake : 1.0));
        if (worth < chunks - 1) chunks = 1 + (int)worth;
        /* Parked workers, a call worth a split of spinning ones, and the last
         * such call ended within a worker's spin: calls in a loop. Wake them
         * now, late for this call (its blocks are claimed: the caller does
         * what they miss), so that they spin for the next. An isolated call
         * keeps its one thread. */
        double now = fa_now_ns();
        if (chunks < 2 && !warm && pool.workers > 0 && work >= FA_SPECULATE_NS &&
            work >= FA_WORTH * pool.wake_ns[1] && now - atomic_load(&last_call_end) < FA_SPIN_NS)
            chunks = 2;
    }
    if (chunks > 1 && pool.workers < chunks - 1) grow_pool(chunks - 1);
    if (chunks > pool.workers + 1) chunks = pool.workers + 1;
    if (chunks <= 1) {
        atomic_flag_clear(&pool.in_use);
        double t = fa_now_ns();
        body(ctx, begin, n);
        double end = fa_now_ns();
        if (fixed <= 0) record_cost(cost, end - t, n - begin), atomic_store(&last_call_end, end);
        return;
    }
    ptrdiff_t own = 0;
    double took = run_job(chunks, begin, n, grain, body, ctx, INT32_MAX, &own);
    atomic_flag_clear(&pool.in_use);
    if (fixed <= 0) record_cost(cost, took, own), atomic_store(&last_call_end, fa_now_ns());
}
