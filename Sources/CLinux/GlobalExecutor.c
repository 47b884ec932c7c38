// Runs the jobs of Swift's global concurrent executor on libdispatch's overcommit threads.
//
// libdispatch on Linux watches the threads of its non-overcommit root queues, the ones Swift's global
// executor uses, with a timer that fires every second for the rest of the process's life once the
// first such thread starts (workqueue.c, _dispatch_workq_monitor_pools). chimed's own queues are
// serial, so they run on the overcommit root queues, which are not watched. Sending the global
// executor's jobs there as well leaves no thread to watch, and an idle chimed asleep.
//
// The Swift runtime lets a process take over the global executor through hook variables
// (include/swift/Runtime/ConcurrencyHooks.def); a job is run with swift_job_run on the generic
// executor, as the runtime's own global executor runs it.
#include "CLinux.h"

#include <stdbool.h>
#include <time.h>

// From libdispatch (dispatch/dispatch.h; its private flag DISPATCH_QUEUE_OVERCOMMIT is 0x2).
typedef struct dispatch_queue_s *CLinux_dispatch_queue_t;
extern CLinux_dispatch_queue_t dispatch_get_global_queue(intptr_t identifier, uintptr_t flags);
extern void dispatch_async_f(CLinux_dispatch_queue_t queue, void *context, void (*work)(void *));
extern void dispatch_after_f(uint64_t when, CLinux_dispatch_queue_t queue, void *context, void (*work)(void *));
extern uint64_t dispatch_time(uint64_t when, int64_t delta);
static const uintptr_t CLinux_DISPATCH_QUEUE_OVERCOMMIT = 0x2;

// From the Swift runtime (swift/Runtime/Concurrency.h and ConcurrencyHooks.def).
typedef struct CLinux_Job CLinux_Job;
typedef struct {
    void *identity;
    uintptr_t implementation;
} CLinux_SerialExecutorRef;
extern __attribute__((swiftcall)) void swift_job_run(CLinux_Job *job, CLinux_SerialExecutorRef executor);
extern __attribute__((swiftcall)) void swift_get_time(long long *seconds, long long *nanoseconds, int clock);

typedef __attribute__((swiftcall)) void (*CLinux_EnqueueGlobal)(CLinux_Job *job);
typedef __attribute__((swiftcall)) void (*CLinux_EnqueueGlobalWithDelay)(unsigned long long delay, CLinux_Job *job);
typedef __attribute__((swiftcall)) void (*CLinux_EnqueueGlobalWithDeadline)(
    long long sec, long long nsec, long long tsec, long long tnsec, int clock, CLinux_Job *job);
extern __attribute__((swiftcall)) void (*swift_task_enqueueGlobal_hook)(
    CLinux_Job *job, CLinux_EnqueueGlobal original);
extern __attribute__((swiftcall)) void (*swift_task_enqueueGlobalWithDelay_hook)(
    unsigned long long delay, CLinux_Job *job, CLinux_EnqueueGlobalWithDelay original);
extern __attribute__((swiftcall)) void (*swift_task_enqueueGlobalWithDeadline_hook)(
    long long sec, long long nsec, long long tsec, long long tnsec, int clock, CLinux_Job *job,
    CLinux_EnqueueGlobalWithDeadline original);

static CLinux_dispatch_queue_t overcommitQueue(void) {
    return dispatch_get_global_queue(0, CLinux_DISPATCH_QUEUE_OVERCOMMIT);
}

static void runJob(void *job) {
    CLinux_SerialExecutorRef generic = {0, 0};
    swift_job_run((CLinux_Job *)job, generic);
}

static __attribute__((swiftcall)) void enqueueGlobal(CLinux_Job *job, CLinux_EnqueueGlobal original) {
    (void)original;
    dispatch_async_f(overcommitQueue(), job, runJob);
}

static __attribute__((swiftcall)) void enqueueGlobalWithDelay(
    unsigned long long delay, CLinux_Job *job, CLinux_EnqueueGlobalWithDelay original) {
    (void)original;
    int64_t nanoseconds = delay > (unsigned long long)INT64_MAX ? INT64_MAX : (int64_t)delay;
    dispatch_after_f(dispatch_time(0, nanoseconds), overcommitQueue(), job, runJob);
}

static __attribute__((swiftcall)) void enqueueGlobalWithDeadline(
    long long sec, long long nsec, long long tsec, long long tnsec, int clock, CLinux_Job *job,
    CLinux_EnqueueGlobalWithDeadline original) {
    (void)tsec;
    (void)tnsec;
    (void)original;
    // The deadline is on the task's clock (continuous or suspending); dispatch waits a delay from now.
    long long nowSeconds = 0, nowNanoseconds = 0;
    swift_get_time(&nowSeconds, &nowNanoseconds, clock);
    long long delta = (sec - nowSeconds) * 1000000000LL + (nsec - nowNanoseconds);
    if (delta <= 0) {
        dispatch_async_f(overcommitQueue(), job, runJob);
    } else {
        dispatch_after_f(dispatch_time(0, delta), overcommitQueue(), job, runJob);
    }
}

void CLinux_runGlobalJobsOnOvercommitThreads(void) {
    swift_task_enqueueGlobal_hook = enqueueGlobal;
    swift_task_enqueueGlobalWithDelay_hook = enqueueGlobalWithDelay;
    swift_task_enqueueGlobalWithDeadline_hook = enqueueGlobalWithDeadline;
}
