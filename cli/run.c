/* Runs a command under the preload library: finds it, puts it first in LD_PRELOAD, forks, execs and waits like a shell. */
#include "run.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "preload.h"

#ifndef MHTTP_CLI_BUILD_DIR
#error "MHTTP_CLI_BUILD_DIR (the build tree's cli directory) comes from cli/CMakeLists.txt"
#endif

static int cli__preload(char *lib, size_t cap) {
  char exe[PATH_MAX], err[256];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  const char *dir = n > 0 ? dirname(exe) : NULL;
  if (cli_preload_path(getenv("MHTTP_PRELOAD"), dir, MHTTP_CLI_BUILD_DIR, MHTTP_CLI_BUILD_PRELOAD,
                       MHTTP_CLI_PRELOAD_REL, lib, cap, err, sizeof err) < 0) {
    fprintf(stderr, "mhttp: run: %s\n", err);
    return -1;
  }
  char canon[PATH_MAX];
  if (!strchr(lib, ' ') && !realpath(lib, canon)) { /* MHTTP_PRELOAD may name several */
    fprintf(stderr, "mhttp: run: the preload library %s: %s\n", lib, strerror(errno));
    return -1;
  }
  if (!strchr(lib, ' '))
    snprintf(lib, cap, "%s", canon); /* the canonical path, not "/usr/bin/../lib/..." */
  return 0;
}

int cli_run(char **argv) {
  char lib[PATH_MAX], env[8192];
  if (cli__preload(lib, sizeof lib) < 0)
    return 2;
  if (cli_preload_compose(lib, getenv("LD_PRELOAD"), env, sizeof env) < 0) {
    fprintf(stderr, "mhttp: run: LD_PRELOAD is too long\n");
    return 2;
  }
  /* like a shell running a foreground job: a ^C reaches CMD (same process group) and mhttp
   * stays to report CMD's status */
  struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
  sigaction(SIGINT, &ign, &old_int);
  sigaction(SIGQUIT, &ign, &old_quit);
  pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    setenv("LD_PRELOAD", env, 1);
    execvp(argv[0], argv);
    int e = errno;
    fprintf(stderr, "mhttp: run: %s: %s\n", argv[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
  }
  if (pid < 0) {
    fprintf(stderr, "mhttp: run: fork: %s\n", strerror(errno));
    return 2;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGQUIT, &old_quit, NULL);
  return cli_wait_code(status);
}
