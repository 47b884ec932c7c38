import CLinux
import ChimedCommand

// Swift's global executor is taken over before any task runs on it (see GlobalExecutor.c: an idle chimed
// must not wake every second), so before the first call that can leave the main thread.
CLinux_runGlobalJobsOnOvercommitThreads()
await Chimed.runAsProgram()
