/* What the thread pool (threads.c) needs from the system: a lock and
 * condition variables for parking, detached worker threads, a monotonic
 * clock, the CPU count, yielding, the spin-wait hint and the floating-point
 * environment. POSIX threads everywhere but Windows, which gets its own
 * primitives (SRW locks, condition variables, CreateThread), so that MSVC
 * and clang-cl builds need no pthreads library. */
#ifndef FA_THREADS_OS_H
#define FA_THREADS_OS_H

#include <stddef.h>
#include <stdlib.h>

#if defined(_MSC_VER) && !defined(__clang__)
#define FA_THREAD_LOCAL __declspec(thread)
#else
#define FA_THREAD_LOCAL _Thread_local
#endif

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#include <immintrin.h>
#define FA_PAUSE() _mm_pause()
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define FA_PAUSE() __asm__ __volatile__("yield")
#elif defined(_M_ARM64)
#include <intrin.h>
#define FA_PAUSE() __yield()
#else
#define FA_PAUSE() ((void)0)
#endif

/* The floating-point environment a worker takes from its caller (rounding
 * mode, flush-to-zero, masks) and the exception flags it hands back. On
 * x86-64 all of it is MXCSR (no kernel uses x87), read and written
 * directly: mingw-w64's fesetenv leaves MXCSR's rounding mode as it was. */
#include <fenv.h>
#if defined(__x86_64__) || defined(_M_X64)
typedef unsigned fa_fpenv_t;
#define FA_MXCSR_FLAGS 0x3fu
static inline void fa_fpenv_get(fa_fpenv_t *env) { *env = _mm_getcsr(); }
static inline void fa_fpenv_set(const fa_fpenv_t *env) { _mm_setcsr(*env); }
/* enter the caller's environment with no flag raised */
static inline void fa_fpenv_enter(const fa_fpenv_t *caller) { _mm_setcsr(*caller & ~FA_MXCSR_FLAGS); }
/* the flags raised since, as FE_* bits (whose values differ between C runtimes) */
static inline int fa_fpenv_raised(void) {
    unsigned csr = _mm_getcsr();
    return (csr & 0x01u ? FE_INVALID : 0) | (csr & 0x04u ? FE_DIVBYZERO : 0) | (csr & 0x08u ? FE_OVERFLOW : 0) |
           (csr & 0x10u ? FE_UNDERFLOW : 0) | (csr & 0x20u ? FE_INEXACT : 0);
}
#else
typedef fenv_t fa_fpenv_t;
static inline void fa_fpenv_get(fa_fpenv_t *env) { fegetenv(env); }
static inline void fa_fpenv_set(const fa_fpenv_t *env) { fesetenv(env); }
static inline void fa_fpenv_enter(const fa_fpenv_t *caller) {
    fesetenv(caller);
    feclearexcept(FE_ALL_EXCEPT);
}
static inline int fa_fpenv_raised(void) { return fetestexcept(FE_ALL_EXCEPT); }
#endif

/* a worker's entry point, and what its thread starts with */
typedef void (*fa_thread_fn)(int index);
typedef struct {
    fa_thread_fn fn;
    int index;
} fa_thread_start_;

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

typedef SRWLOCK fa_lock_t;
typedef CONDITION_VARIABLE fa_cond_t;
#define FA_LOCK_INIT SRWLOCK_INIT
#define FA_COND_INIT CONDITION_VARIABLE_INIT
static inline void fa_lock(fa_lock_t *m) { AcquireSRWLockExclusive(m); }
static inline void fa_unlock(fa_lock_t *m) { ReleaseSRWLockExclusive(m); }
static inline void fa_cond_wait(fa_cond_t *c, fa_lock_t *m) { SleepConditionVariableSRW(c, m, INFINITE, 0); }
static inline void fa_cond_signal(fa_cond_t *c) { WakeConditionVariable(c); }
static inline void fa_cond_broadcast(fa_cond_t *c) { WakeAllConditionVariable(c); }
static inline void fa_yield(void) { SwitchToThread(); }
static inline int fa_current_cpu(void) { /* unique across processor groups */
    PROCESSOR_NUMBER cpu;
    GetCurrentProcessorNumberEx(&cpu);
    return (int)cpu.Group * 64 + (int)cpu.Number;
}
static inline void fa_nap(void) { Sleep(0); }

static inline DWORD WINAPI fa_thread_trampoline_(LPVOID arg) {
    fa_thread_start_ start = *(fa_thread_start_ *)arg;
    HeapFree(GetProcessHeap(), 0, arg);
    start.fn(start.index);
    return 0;
}

/* 0 on success; the thread runs on detached (its handle is closed at once) */
static inline int fa_start_detached(fa_thread_fn fn, int index) {
    fa_thread_start_ *start = (fa_thread_start_ *)HeapAlloc(GetProcessHeap(), 0, sizeof *start);
    if (!start) return -1;
    start->fn = fn;
    start->index = index;
    HANDLE t = CreateThread(NULL, 0, fa_thread_trampoline_, start, 0, NULL);
    if (!t) {
        HeapFree(GetProcessHeap(), 0, start);
        return -1;
    }
    CloseHandle(t);
    return 0;
}

static inline double fa_os_now_ns(void) {
    static LARGE_INTEGER frequency; /* fixed at boot: a benign race */
    LARGE_INTEGER now;
    if (frequency.QuadPart == 0) QueryPerformanceFrequency(&frequency);
    QueryPerformanceCounter(&now);
    return (double)now.QuadPart * (1e9 / (double)frequency.QuadPart);
}

/* the CPUs of the process's affinity mask (one processor group, as a
 * process starts in unless it asks for more) */
static inline int fa_os_cpus(void) {
    DWORD_PTR process_mask, system_mask;
    if (GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask) && process_mask) {
        int n = 0;
        for (; process_mask; process_mask &= process_mask - 1) n++;
        return n;
    }
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    return info.dwNumberOfProcessors >= 1 ? (int)info.dwNumberOfProcessors : 1;
}

#else
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

typedef pthread_mutex_t fa_lock_t;
typedef pthread_cond_t fa_cond_t;
#define FA_LOCK_INIT PTHREAD_MUTEX_INITIALIZER
#define FA_COND_INIT PTHREAD_COND_INITIALIZER
static inline void fa_lock(fa_lock_t *m) { pthread_mutex_lock(m); }
static inline void fa_unlock(fa_lock_t *m) { pthread_mutex_unlock(m); }
static inline void fa_cond_wait(fa_cond_t *c, fa_lock_t *m) { pthread_cond_wait(c, m); }
static inline void fa_cond_signal(fa_cond_t *c) { pthread_cond_signal(c); }
static inline void fa_cond_broadcast(fa_cond_t *c) { pthread_cond_broadcast(c); }
static inline void fa_yield(void) { sched_yield(); }
/* the CPU this thread runs on now, or -1 where the system does not say */
static inline int fa_current_cpu(void) {
#if defined(__linux__)
    return sched_getcpu();
#else
    return -1;
#endif
}
static inline void fa_nap(void) {
    struct timespec pause = {0, 50000};
    nanosleep(&pause, NULL);
}

static inline void *fa_thread_trampoline_(void *arg) {
    fa_thread_start_ start = *(fa_thread_start_ *)arg;
    free(arg);
    start.fn(start.index);
    return NULL;
}

static inline int fa_start_detached(fa_thread_fn fn, int index) {
    fa_thread_start_ *start = (fa_thread_start_ *)malloc(sizeof *start);
    if (!start) return -1;
    start->fn = fn;
    start->index = index;
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int failed = pthread_create(&t, &attr, fa_thread_trampoline_, start);
    pthread_attr_destroy(&attr);
    if (failed) free(start);
    return failed ? -1 : 0;
}

static inline double fa_os_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static inline int fa_os_cpus(void) {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)n : 1;
}
#endif

#endif
