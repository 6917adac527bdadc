#define _GNU_SOURCE
/* Starts `file` (searched in PATH) as a child tied to this process: it gets
 * SIGTERM when the thread that started it ends, however this process ends
 * (kill -9 included), so no `git fetch` outlives the Folio that ran it and
 * races the next one for its refs. posix_spawn cannot set that
 * (prctl(PR_SET_PDEATHSIG) must run in the child), hence fork and exec,
 * in C: between them the child may call only async-signal-safe functions,
 * which Swift code cannot promise. stdin is /dev/null, stdout and stderr
 * go to `out` and `err`; signals are unblocked and SIGINT, SIGTERM, SIGHUP
 * and SIGPIPE back at their defaults. Returns 0 and sets *pid, or the errno
 * of what failed (fork, or exec: ENOENT when there is no such program). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/wait.h>
#include "CProcess.h"
int folio_spawn_tied(const char *file, char *const argv[], char *const envp[], const char *dir, int out, int err,
                     int *pid) {
  /* The child reports a failed exec's errno here; a successful exec closes
   * it (O_CLOEXEC), so the parent reads nothing. */
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return errno;
  sigset_t all, old;
  sigfillset(&all);
  /* No handler of ours may run in the child between fork and exec. */
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t parent = getpid();
  pid_t child = fork();
  if (child == 0) {
    struct sigaction dfl;
    dfl.sa_handler = SIG_DFL;
    dfl.sa_flags = 0;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGINT, &dfl, 0);
    sigaction(SIGTERM, &dfl, 0);
    sigaction(SIGHUP, &dfl, 0);
    sigaction(SIGPIPE, &dfl, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) _exit(126);
    /* The parent may have died before the prctl: then nobody would send it. */
    if (getppid() != parent) _exit(126);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, 0);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
    if (dir && chdir(dir) != 0) _exit(126);
    execvpe(file, argv, envp);
    int failure = errno;
    ssize_t written = write(report[1], &failure, sizeof failure);
    (void)written;
    _exit(127);
  }
  int saved = errno;
  pthread_sigmask(SIG_SETMASK, &old, 0);
  close(report[1]);
  if (child < 0) {
    close(report[0]);
    return saved;
  }
  int failure = 0;
  ssize_t n;
  do {
    n = read(report[0], &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == (ssize_t)sizeof failure) {
    /* Not started: reap the child, which has exited. */
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return failure;
  }
  *pid = child;
  return 0;
}
