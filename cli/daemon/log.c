/* The daemon's log lines, in the journal's form when stderr is the journal (log.h). */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int journal;

int dmn_log_is_journal(const char *journal_stream, unsigned long long dev, unsigned long long ino) {
  unsigned long long d, i;
  int n = -1;
  if (!journal_stream || sscanf(journal_stream, "%llu:%llu%n", &d, &i, &n) != 2 || n < 0 || journal_stream[n] != '\0' ||
      journal_stream[0] < '0' || journal_stream[0] > '9')
    return 0;
  return d == dev && i == ino;
}

size_t dmn_log_format(char *buf, size_t len, int journal_form, int prio, const char *msg) {
  int n = journal_form ? snprintf(buf, len, "<%d>%s", prio & 7, msg) : snprintf(buf, len, "mhttp daemon: %s", msg);
  size_t m = n < 0 ? 0 : (size_t)n;
  if (m > len - 2)
    m = len >= 2 ? len - 2 : 0;
  if (len >= 2) {
    buf[m++] = '\n';
    buf[m] = '\0';
  }
  return m;
}

void dmn_log_init(void) {
  struct stat st;
  /* systemd names the stream it connected; stderr redirected elsewhere by the unit or a shell
   * inherits the variable but is another file */
  journal = fstat(STDERR_FILENO, &st) == 0 &&
            dmn_log_is_journal(getenv("JOURNAL_STREAM"), (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
}

void dmn_log(int prio, const char *fmt, ...) {
  char msg[1024], line[1100];
  int saved = errno;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t n = dmn_log_format(line, sizeof line, journal, prio, msg);
  (void)!write(STDERR_FILENO, line, n);
  errno = saved;
}
