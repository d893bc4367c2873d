/* The daemon's log lines (cli/daemon/log.c): when stderr is the journal (JOURNAL_STREAM) and the two forms of a line. */
#include <criterion/criterion.h>
#include <string.h>

#include "log.h"

Test(log, journal_stream_names_stderr) {
  static const struct {
    const char *env;
    unsigned long long dev, ino;
    int want;
  } t[] = {
      {"64769:1234567", 64769, 1234567, 1},
      {"0:1", 0, 1, 1},
      {"64769:1234567", 64769, 1234568, 0}, /* another file: stderr redirected by the unit */
      {"64770:1234567", 64769, 1234567, 0},
      {NULL, 0, 0, 0}, /* not started by systemd */
      {"", 0, 0, 0},
      {"64769", 64769, 0, 0},
      {"64769:1234567x", 64769, 1234567, 0}, /* trailing garbage */
      {"64769:1234567:9", 64769, 1234567, 0},
      {" 64769:1234567", 64769, 1234567, 0},
      {"-1:5", (unsigned long long)-1, 5, 0},
      {"64769:", 64769, 0, 0},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    cr_expect_eq(dmn_log_is_journal(t[i].env, t[i].dev, t[i].ino), t[i].want, "row %zu (%s)", i,
                 t[i].env ? t[i].env : "NULL");
}

Test(log, line_forms) {
  char b[64];
  cr_expect_eq(dmn_log_format(b, sizeof b, 1, LOG_ERR, "cannot listen"), 17);
  cr_expect_str_eq(b, "<3>cannot listen\n");
  dmn_log_format(b, sizeof b, 1, LOG_INFO, "ready");
  cr_expect_str_eq(b, "<6>ready\n");
  dmn_log_format(b, sizeof b, 0, LOG_WARNING, "option --x is not supported");
  cr_expect_str_eq(b, "mhttp daemon: option --x is not supported\n");
}

Test(log, long_line_cut_keeps_newline) {
  char b[16], msg[100];
  memset(msg, 'a', sizeof msg - 1);
  msg[sizeof msg - 1] = '\0';
  cr_expect_eq(dmn_log_format(b, sizeof b, 1, LOG_INFO, msg), 15);
  cr_expect_str_eq(b, "<6>aaaaaaaaaaa\n");
}
