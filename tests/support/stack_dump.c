/* Preloaded into a test that may hang on a machine without a debugger: on
 * SIGRTMIN+4 it writes every thread's backtrace to stderr, one thread at a
 * time, and the process runs on. scripts/run-case.sh sends the signal to a case
 * that outlives its time limit. Offsets into shared objects are printed as
 * backtrace_symbols_fd gives them, for addr2line. */
#define _GNU_SOURCE
#include <dirent.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int dumped;

static void write_text(const char *text) {
  ssize_t ignored = write(STDERR_FILENO, text, strlen(text));
  (void)ignored;
}

static void dump_this_thread(void) {
  char header[96];
  snprintf(header, sizeof header, "--- thread %ld of process %ld\n", (long)syscall(SYS_gettid), (long)getpid());
  write_text(header);
  void *frames[64];
  const int depth = backtrace(frames, 64);
  backtrace_symbols_fd(frames, depth, STDERR_FILENO);
}

static void on_thread_signal(int signal_number) {
  (void)signal_number;
  dump_this_thread();
  atomic_store(&dumped, 1);
}

/* Runs on whichever thread the trigger lands on: the others are asked in turn.
 */
static void on_trigger(int signal_number) {
  (void)signal_number;
  const long self = (long)syscall(SYS_gettid);
  dump_this_thread();
  DIR *tasks = opendir("/proc/self/task");
  if (tasks == NULL) return;
  for (struct dirent *entry; (entry = readdir(tasks)) != NULL;) {
    const long tid = strtol(entry->d_name, NULL, 10);
    if (tid <= 0 || tid == self) continue;
    atomic_store(&dumped, 0);
    if (syscall(SYS_tgkill, (long)getpid(), tid, SIGRTMIN + 5) != 0) continue;
    /* A thread blocking the signal never answers: give each one a second. */
    for (int waited = 0; waited < 1000 && !atomic_load(&dumped); ++waited) {
      const struct timespec millisecond = {0, 1000000};
      nanosleep(&millisecond, NULL);
    }
  }
  closedir(tasks);
  write_text("--- end of dump\n");
}

__attribute__((constructor)) static void install(void) {
  void *warm[1];
  backtrace(warm, 1); /* loads the unwinder now: not inside a signal handler */
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  action.sa_handler = on_thread_signal;
  sigaction(SIGRTMIN + 5, &action, NULL);
  action.sa_handler = on_trigger;
  sigaction(SIGRTMIN + 4, &action, NULL);
}
