#ifndef CHIME_CLINUX_H
#define CHIME_CLINUX_H

// Linux interfaces that chimed uses and Swift's Glibc module does not import.
//
// Glibc's module map leaves out <sys/timerfd.h>, so timerfd_create and timerfd_settime are not
// visible from Swift at all; including the header here makes them visible through this module.
// <sys/vfs.h> is not in it either: statfs tells a FUSE root (a container's) from a Flatpak sandbox's.
// <sys/inotify.h> is included as well so that ChimeDaemon takes every Linux-only call from one
// place and does not depend on which headers a given Glibc module map happens to cover.
//
// The flags of both APIs are enumerators re-#defined to themselves (TFD_*) or plain macros (IN_*),
// whose imported Swift types vary (an anonymous enum, Int32). Each constant below re-exports one
// macro under the CLinux_ prefix with the type the system call takes.

#include <stddef.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <malloc.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/timerfd.h>
#include <sys/vfs.h>
#include <time.h>

// Flags for timerfd_create: the macros TFD_CLOEXEC and TFD_NONBLOCK.
static const int CLinux_TFD_CLOEXEC = TFD_CLOEXEC;
static const int CLinux_TFD_NONBLOCK = TFD_NONBLOCK;

// Flags for timerfd_settime: the macros TFD_TIMER_ABSTIME and TFD_TIMER_CANCEL_ON_SET.
static const int CLinux_TFD_TIMER_ABSTIME = TFD_TIMER_ABSTIME;
static const int CLinux_TFD_TIMER_CANCEL_ON_SET = TFD_TIMER_CANCEL_ON_SET;

// Flags for inotify_init1: the macros IN_CLOEXEC and IN_NONBLOCK.
static const int CLinux_IN_CLOEXEC = IN_CLOEXEC;
static const int CLinux_IN_NONBLOCK = IN_NONBLOCK;

// Events for inotify_add_watch and in inotify_event.mask: the macros IN_<NAME>.
static const uint32_t CLinux_IN_MODIFY = IN_MODIFY;
static const uint32_t CLinux_IN_ATTRIB = IN_ATTRIB;
static const uint32_t CLinux_IN_CLOSE_WRITE = IN_CLOSE_WRITE;
static const uint32_t CLinux_IN_MOVED_FROM = IN_MOVED_FROM;
static const uint32_t CLinux_IN_MOVED_TO = IN_MOVED_TO;
static const uint32_t CLinux_IN_CREATE = IN_CREATE;
static const uint32_t CLinux_IN_DELETE = IN_DELETE;
static const uint32_t CLinux_IN_DELETE_SELF = IN_DELETE_SELF;
static const uint32_t CLinux_IN_MOVE_SELF = IN_MOVE_SELF;
static const uint32_t CLinux_IN_UNMOUNT = IN_UNMOUNT;
static const uint32_t CLinux_IN_Q_OVERFLOW = IN_Q_OVERFLOW;
static const uint32_t CLinux_IN_IGNORED = IN_IGNORED;
static const uint32_t CLinux_IN_ISDIR = IN_ISDIR;

// Watch options for inotify_add_watch: the macros IN_ONLYDIR, IN_EXCL_UNLINK and IN_MASK_ADD.
static const uint32_t CLinux_IN_ONLYDIR = IN_ONLYDIR;
static const uint32_t CLinux_IN_EXCL_UNLINK = IN_EXCL_UNLINK;
static const uint32_t CLinux_IN_MASK_ADD = IN_MASK_ADD;

// The calling thread's kernel id, for setpriority: glibc's gettid() is not in Swift's Glibc module, and
// syscall(SYS_gettid), which it stands for, is variadic.
static inline pid_t CLinux_gettid(void) { return (pid_t)syscall(SYS_gettid); }

// Makes glibc map every allocation of `bytes` or more on its own and give it back when it is freed
// (M_MMAP_THRESHOLD, which also stops glibc from raising the threshold by itself): <malloc.h> is not in
// Swift's Glibc module.
static inline int CLinux_setMmapThreshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }

// Gives up every capability the process holds (permitted, effective, inheritable): the chime program is
// also chimed, and a file capability given to chimed (cap_wake_alarm, docs/wake.md) is on that one
// program, so chime's commands drop it first thing. capset(2) has no glibc wrapper; dropping is always
// allowed. Returns 0, or -1 with errno set.
static inline int CLinux_dropCapabilities(void) {
    // struct __user_cap_header_struct and two __user_cap_data_struct (_LINUX_CAPABILITY_VERSION_3).
    uint32_t header[2] = {0x20080522, 0};
    uint32_t data[6] = {0, 0, 0, 0, 0, 0};
    return (int)syscall(SYS_capset, header, data);
}

// struct inotify_event ends in a flexible array member (char name[]), which Swift does not import:
// the name starts at this offset from the start of each event.
static const size_t CLinux_INOTIFY_EVENT_NAME_OFFSET = offsetof(struct inotify_event, name);

// Makes Swift's global concurrent executor run its jobs on libdispatch's overcommit threads, which
// libdispatch does not watch with its once-a-second timer (GlobalExecutor.c). Call it first thing in
// main, before any task runs.
void CLinux_runGlobalJobsOnOvercommitThreads(void);

#endif
