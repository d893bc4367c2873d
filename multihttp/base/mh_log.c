/* Leveled one-line logging: one write(2) per line so concurrent threads never interleave inside a line. */
#include "mh_log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

int mh_log_level_v = MH_LOG_ERROR;
static int mh__log_fd = 2;
static ssize_t (*mh__log_write)(int, const void *, size_t) = write;

void mh_log_setup(int level, int fd, ssize_t (*writer)(int, const void *, size_t)) {
  mh_log_level_v = level;
  mh__log_fd = fd;
  if (writer)
    mh__log_write = writer;
}

void mh_log_(int level, const char *fmt, ...) {
  static const char *const names[] = {"off", "error", "info", "debug"};
  char line[512];
  int saved = errno; /* logging must never change the errno a hook is about to return */
  int n = snprintf(line, sizeof line, "libmhttp[%d] %s: ", (int)getpid(), names[level < 0 || level > 3 ? 0 : level]);
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
  va_end(ap);
  size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
  if (len > sizeof line - 2)
    len = sizeof line - 2;
  line[len++] = '\n';
  (void)!mh__log_write(mh__log_fd, line, len);
  errno = saved;
}
