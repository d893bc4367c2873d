/* cli/download.c and cli/preflight.c against a fake API (this file defines the mhttp_* calls): the calls and options it makes in order, stdout or a file, several URLs one after another, messages and exit codes of failures, checks before any transfer, dropped mirrors told with their cause, --stats and --progress-json output, a signal cancelling the transfer. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "download.h"
#include "mhttp.h"
#include "opts.h"

/* ---- the fake API: records each call; perform plays a script of events ---- */
static char fk_log[4096];
static const char *fk_reject;          /* this option name gets MHTTP_E_OPTION */
static mhttp_code fk_final = MHTTP_OK; /* the transfer's result after its events */
static const char *fk_errmsg = "";
static int fk_status = 200, fk_step, fk_raise, fk_ended = 0;
static mhttp_code fk_result = MHTTP_E_BUSY;
static int fk_pipe[2] = {-1, -1};
static mhttp_event_cb fk_cb;
static void *fk_arg;
struct mhttp_session {
  int unused;
};
struct mhttp_xfer {
  int unused;
};
static struct mhttp_session fk_s;
static struct mhttp_xfer fk_x;

static void fk(const char *fmt, const char *a, const char *b) {
  size_t l = strlen(fk_log);
  snprintf(fk_log + l, sizeof fk_log - l, fmt, a, b);
}
const char *mhttp_strerror(mhttp_code c) { return c == MHTTP_E_OPTION ? "bad option" : "error"; }
const char *mhttp_session_errmsg(const mhttp_session *s) {
  (void)s;
  return "";
}
/* the library's mapping (mh_api.c) for the codes these cases end with */
int mhttp_exit_code(mhttp_code c) {
  return c == MHTTP_OK           ? 0
         : c == MHTTP_E_URL      ? 3
         : c == MHTTP_E_RESOLVE  ? 6
         : c == MHTTP_E_HTTP     ? 22
         : c == MHTTP_E_PROTOCOL ? 8
                                 : 2;
}
mhttp_code mhttp_session_new(unsigned flags, mhttp_session **out) {
  fk("session_new %s%s;", flags ? "thread" : "embedded", "");
  if (pipe(fk_pipe) < 0 || write(fk_pipe[1], "x", 1) != 1) /* always readable: perform runs at once */
    return MHTTP_E_SYSTEM;
  *out = &fk_s;
  return MHTTP_OK;
}
mhttp_code mhttp_session_setopt(mhttp_session *s, const char *n, const char *v) {
  (void)s;
  fk("session_setopt %s=%s;", n, v);
  return fk_reject && !strcmp(n, fk_reject) ? MHTTP_E_OPTION : MHTTP_OK;
}
void mhttp_session_free(mhttp_session *s) {
  (void)s;
  fk("session_free%s%s;", "", "");
  close(fk_pipe[0]);
  close(fk_pipe[1]);
}
int mhttp_get_fd(mhttp_session *s) {
  (void)s;
  return fk_pipe[0];
}
int mhttp_get_timeout(mhttp_session *s) {
  (void)s;
  return -1;
}
static int fk_missing; /* this transfer's URL names "missing": it ends with a 404 */
mhttp_code mhttp_xfer_new(mhttp_session *s, const char *url, mhttp_xfer **out) {
  (void)s;
  fk("xfer_new %s%s;", url, "");
  *out = &fk_x;
  fk_step = 0, fk_ended = 0, fk_result = MHTTP_E_BUSY; /* a new transfer */
  fk_missing = strstr(url, "missing") != NULL;
  return strncmp(url, "http", 4) ? MHTTP_E_URL : MHTTP_OK;
}
mhttp_code mhttp_xfer_add_mirror(mhttp_xfer *x, const char *url) {
  (void)x;
  fk("add_mirror %s%s;", url, "");
  return strstr(url, "refused") ? MHTTP_E_URL : MHTTP_OK; /* as the library refuses a plain mirror of https */
}
mhttp_code mhttp_xfer_setopt(mhttp_xfer *x, const char *n, const char *v) {
  (void)x;
  fk("xfer_setopt %s=%s;", n, v);
  return fk_reject && !strcmp(n, fk_reject) ? MHTTP_E_OPTION : MHTTP_OK;
}
mhttp_code mhttp_xfer_set_fd(mhttp_xfer *x, int fd) {
  (void)x;
  fk("set_fd %s%s;", fd == 1 ? "1" : "?", "");
  return MHTTP_OK;
}
mhttp_code mhttp_xfer_set_write_cb(mhttp_xfer *x, mhttp_write_cb cb, int ordered, void *arg) {
  (void)x, (void)cb, (void)ordered, (void)arg;
  fk("set_write_cb%s%s;", "", "");
  return MHTTP_OK;
}
mhttp_code mhttp_xfer_set_event_cb(mhttp_xfer *x, mhttp_event_cb cb, void *arg) {
  (void)x;
  fk_cb = cb, fk_arg = arg;
  fk("set_event_cb%s%s;", "", "");
  return MHTTP_OK;
}
mhttp_code mhttp_xfer_start(mhttp_xfer *x) {
  (void)x;
  fk("start%s%s;", "", "");
  return MHTTP_OK;
}
mhttp_code mhttp_xfer_cancel(mhttp_xfer *x) {
  (void)x;
  fk("cancel%s%s;", "", "");
  fk_final = MHTTP_E_CANCELED;
  return MHTTP_OK;
}
mhttp_code mhttp_xfer_result(const mhttp_xfer *x) {
  (void)x;
  return fk_result;
}
const char *mhttp_xfer_errmsg(const mhttp_xfer *x) {
  (void)x;
  return fk_errmsg;
}
mhttp_code mhttp_xfer_stats_get(const mhttp_xfer *x, mhttp_xfer_stats *st) {
  (void)x;
  *st = (mhttp_xfer_stats){.size = sizeof *st,
                           .http_status = fk_status,
                           .total = 1000,
                           .done = fk_ended ? 1000 : 500,
                           .fetched = 1000,
                           .rate = 100,
                           .elapsed = 2,
                           .split = 1};
  return MHTTP_OK;
}
mhttp_code mhttp_xfer_path_stats(const mhttp_xfer *x, mhttp_path_stats *out, unsigned max, unsigned *n) {
  (void)x;
  *n = 1;
  if (max >= 1)
    out[0] = (mhttp_path_stats){.size = sizeof *out,
                                .iface = "wifi0",
                                .replica = "10.0.0.1",
                                .up = 1,
                                .bytes = 1000,
                                .rate = 100,
                                .srtt_us = 2000,
                                .in_flight = 1};
  return MHTTP_OK;
}
void mhttp_xfer_free(mhttp_xfer *x) {
  (void)x;
  fk("xfer_free%s%s;", "", "");
}

static int fk_mirror_404; /* a mirror answers 404: a path-down with its cause */
static void fk_event(mhttp_event_type t, mhttp_code c) {
  mhttp_event ev = {
      .size = sizeof ev, .type = t, .xfer = &fk_x, .code = c, .total = 1000, .iface = "wifi0", .replica = "10.0.0.1"};
  if (t == MHTTP_EV_PATH_DOWN)
    ev.replica = "10.0.0.2", ev.mirror = 1, ev.message = "mirror at 10.0.0.2 answered otherwise: HTTP 404";
  fk_cb(&ev, fk_arg);
}
/* step 0: start, a path, progress (and the scripted signal); step 1: the end */
mhttp_code mhttp_perform(mhttp_session *s) {
  (void)s;
  if (fk_step++ == 0) {
    fk_event(MHTTP_EV_START, MHTTP_OK);
    fk_event(MHTTP_EV_PATH_UP, MHTTP_OK);
    if (fk_mirror_404)
      fk_event(MHTTP_EV_PATH_DOWN, MHTTP_E_PROTOCOL);
    fk_event(MHTTP_EV_PROGRESS, MHTTP_OK);
    if (fk_raise)
      raise(fk_raise);
    return MHTTP_OK;
  }
  if (fk_raise && fk_final != MHTTP_E_CANCELED)
    return MHTTP_OK; /* a signalled run only ends by being cancelled */
  fk_ended = 1;
  fk_result = fk_missing ? MHTTP_E_HTTP : fk_final;
  if (fk_missing)
    fk_status = 404;
  fk_event(fk_result == MHTTP_OK ? MHTTP_EV_COMPLETE : MHTTP_EV_ERROR, fk_result);
  return MHTTP_OK;
}

/* ---- the tests ---- */
static struct cli_opts o;

static int run(int argc, char **argv) {
  char err[CLI_ERR_MAX];
  cr_assert_eq(cli_opts_parse(argc, argv, &o, err, sizeof err), 0, "%s", err);
  return cli_download(&o);
}
#define RUN(...)                                    \
  ({                                                \
    char *argv_[] = {"mhttp", __VA_ARGS__, NULL};   \
    run(sizeof argv_ / sizeof argv_[0] - 1, argv_); \
  })

TestSuite(download, .init = cr_redirect_stderr, .timeout = 20);

Test(download, options_in_order_to_a_file) {
  cr_expect_eq(RUN("-i", "lo", "-H", "X-A: 1", "-o", "out.bin", "--max-redirs", "3", "--policy", "rr",
                   "http://a.test/f", "--mirror", "http://b.test/f"),
               0);
  cr_expect_str_eq(fk_log, "session_new embedded;session_setopt interface=lo;session_setopt policy=rr;"
                           "xfer_new http://a.test/f;add_mirror http://b.test/f;xfer_setopt header=X-A: 1;"
                           "xfer_setopt max-redirs=3;xfer_setopt output=out.bin;xfer_setopt progress-interval=200;"
                           "set_event_cb;start;xfer_free;session_free;");
  fflush(stderr);
  cr_expect_stderr_eq_str(""); /* not a terminal, no --progress-json: nothing */
}

Test(download, limit_rate_passed_as_curls) {
  cr_expect_eq(RUN("--limit-rate", "1M", "-o", "out.bin", "http://a.test/f"), 0);
  cr_expect(strstr(fk_log, "xfer_setopt limit-rate=1M;xfer_setopt output=out.bin;"), "%s", fk_log);
  cr_expect_eq(RUN("--limit-rate=512k", "-o", "out.bin", "http://a.test/f"), 0);
  cr_expect(strstr(fk_log, "xfer_setopt limit-rate=512k;"), "%s", fk_log);
}

Test(download, stdout_without_output) {
  cr_expect_eq(RUN("-k", "http://a.test/f"), 0);
  cr_expect(strstr(fk_log, "xfer_setopt insecure=1;set_fd 1;xfer_setopt progress-interval=200;set_event_cb;start;"),
            "%s", fk_log);
}

Test(download, http_error_in_curls_words) {
  fk_final = MHTTP_E_HTTP, fk_status = 404, fk_errmsg = "HTTP 404";
  cr_expect_eq(RUN("http://a.test/missing"), 22);
  fflush(stderr);
  cr_expect_stderr_eq_str("mhttp: (22) The requested URL returned error: 404\n");
}

Test(download, resolve_error_names_the_host) {
  fk_final = MHTTP_E_RESOLVE;
  cr_expect_eq(RUN("-o", "x", "http://nowhere.test:8080/f"), 6);
  fflush(stderr);
  cr_expect_stderr_eq_str("mhttp: (6) Could not resolve host: nowhere.test\n");
}

Test(download, refused_option_stops_before_start) {
  fk_reject = "max-redirs";
  cr_expect_eq(RUN("--max-redirs", "x", "http://a.test/f"), 2);
  cr_expect_not(strstr(fk_log, "start;"), "%s", fk_log);
  cr_expect(strstr(fk_log, "xfer_free;session_free;"), "%s", fk_log);
  fflush(stderr);
  cr_expect_stderr_eq_str("mhttp: option --max-redirs: the value 'x' is not accepted\n"
                          "mhttp: try 'mhttp --help' for more information\n");
}

Test(download, bad_url) {
  cr_expect_eq(RUN("ftp://a.test/f"), 3);
  fflush(stderr);
  cr_expect_stderr_eq_str("mhttp: (3) URL using bad/illegal format or missing URL: ftp://a.test/f\n");
}

Test(download, stats_file_and_json_progress) {
  char path[] = "/tmp/cli-stats-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  cr_expect_eq(RUN("--progress-json", "--stats", path, "http://a.test/f"), 0);
  FILE *f = fopen(path, "r");
  char line[1024] = "";
  cr_assert(f && fgets(line, sizeof line, f));
  fclose(f);
  unlink(path);
  cr_expect_str_eq(
      line,
      "{\"event\":\"complete\",\"http_status\":200,\"total\":1000,\"done\":1000,\"fetched\":1000,"
      "\"resumed\":0,\"rate\":100,\"elapsed\":2.000,\"split\":1,\"paths\":[{\"iface\":\"wifi0\","
      "\"replica\":\"10.0.0.1\",\"mirror\":0,\"up\":1,\"bytes\":1000,\"rate\":100,\"srtt_us\":2000,\"in_flight\":1}],"
      "\"dropped\":[]}\n");
  fflush(stderr);
  const char *p =
      ",\"http_status\":200,\"total\":1000,\"done\":500,\"fetched\":1000,\"resumed\":0,\"rate\":100,"
      "\"elapsed\":2.000,\"split\":1,\"paths\":[{\"iface\":\"wifi0\",\"replica\":\"10.0.0.1\",\"mirror\":0,\"up\":1,"
      "\"bytes\":1000,\"rate\":100,\"srtt_us\":2000,\"in_flight\":1}],\"dropped\":[]}\n";
  const char *end =
      ",\"http_status\":200,\"total\":1000,\"done\":1000,\"fetched\":1000,\"resumed\":0,\"rate\":100,"
      "\"elapsed\":2.000,\"split\":1,\"paths\":[{\"iface\":\"wifi0\",\"replica\":\"10.0.0.1\",\"mirror\":0,\"up\":1,"
      "\"bytes\":1000,\"rate\":100,\"srtt_us\":2000,\"in_flight\":1}],\"dropped\":[]}\n";
  char want[2048];
  snprintf(want, sizeof want,
           "{\"event\":\"start\"%s{\"event\":\"path-up\"%s{\"event\":\"progress\"%s"
           "{\"event\":\"complete\"%s",
           p, p, p, end);
  cr_expect_stderr_eq_str(want);
}

/* SIGINT while running: the transfer is cancelled (else the fake never ends it and the test
 * times out), everything is freed, and the command dies of SIGINT as the caller expects. */
Test(download, a_signal_cancels_then_kills, .signal = SIGINT) {
  fk_raise = SIGINT;
  RUN("-o", "x", "http://a.test/f");
}

Test(download, a_refused_mirror_exits_3_and_says_why) {
  cr_expect_eq(RUN("-o", "out.bin", "https://a.test/f", "--mirror", "http://refused.test/f"), 3);
  cr_expect_str_eq(fk_log, "session_new embedded;xfer_new https://a.test/f;add_mirror http://refused.test/f;"
                           "xfer_free;session_free;");
  fflush(stderr);
  cr_expect_stderr_eq_str("mhttp: (3) URL using bad/illegal format or missing URL: mirror http://refused.test/f: "
                          "plain http for an https URL is refused (its bytes would not be authenticated)\n");
}

/* curl's `-O u1 -O u2` and `u1 u2`: one transfer after another in one session; the exit code is
 * the last transfer's, as curl's. */
Test(download, several_urls_one_after_another) {
  cr_expect_eq(RUN("-o", "one.bin", "http://a.test/missing", "http://a.test/2"), 0);
  cr_expect_str_eq(fk_log, "session_new embedded;xfer_new http://a.test/missing;xfer_setopt output=one.bin;"
                           "xfer_setopt progress-interval=200;set_event_cb;start;xfer_free;"
                           "xfer_new http://a.test/2;set_fd 1;xfer_setopt progress-interval=200;set_event_cb;start;"
                           "xfer_free;session_free;");
  fflush(stderr);
  cr_expect_stderr_eq_str("mhttp: (22) The requested URL returned error: 404\n");
}

Test(download, the_last_transfer_gives_the_exit_code) {
  cr_expect_eq(RUN("http://a.test/1", "http://a.test/missing"), 22);
}

/* -c resumes the URLs written to files only; "-o -" is stdout without the terminal guard. */
Test(download, continue_goes_to_files_only) {
  cr_expect_eq(RUN("-c", "-o", "r.bin", "http://a.test/1", "-o", "-", "http://a.test/2"), 0);
  cr_expect(strstr(fk_log, "xfer_new http://a.test/1;xfer_setopt output=r.bin;xfer_setopt continue=1;"), "%s", fk_log);
  cr_expect(strstr(fk_log, "xfer_new http://a.test/2;set_fd 1;xfer_setopt progress-interval=200;"), "%s", fk_log);
}

/* Checked before anything is made, in curl's codes: an unknown interface 45, a CA file that
 * cannot be read 77, an output or --stats file that cannot be written 23. */
Test(download, checks_before_any_transfer) {
  cr_expect_eq(RUN("-i", "nosuch0", "http://a.test/f"), 45);
  cr_expect_eq(RUN("--cacert", "/nonexistent/ca.pem", "https://a.test/f"), 77);
  cr_expect_eq(RUN("-o", "/nonexistent/x", "http://a.test/f"), 23);
  cr_expect_eq(RUN("--stats", "/nonexistent/s.json", "http://a.test/f"), 23);
  cr_expect_eq(RUN("-o", "/tmp", "http://a.test/f"), 23);
  cr_expect_str_eq(fk_log, "");
  fflush(stderr);
  cr_expect_stderr_eq_str(
      "mhttp: (45) Couldn't bind to 'nosuch0'\n"
      "mhttp: (77) error setting certificate file: /nonexistent/ca.pem\n"
      "mhttp: (23) Failure writing output to destination: /nonexistent/x: No such file or directory\n"
      "mhttp: (23) Failure writing output to destination: --stats /nonexistent/s.json: No such file or "
      "directory\n"
      "mhttp: (23) Failure writing output to destination: /tmp: Is a directory\n");
}

Test(download, silent_says_nothing) {
  cr_expect_eq(RUN("-s", "http://a.test/missing"), 22);
  cr_expect_eq(RUN("-s", "-i", "nosuch0", "http://a.test/f"), 45);
  fflush(stderr);
  cr_expect_stderr_eq_str("");
}

Test(download, extra_outputs_are_warned_of) {
  cr_expect_eq(RUN("-o", "x", "-o", "y", "http://a.test/f"), 0);
  cr_expect(strstr(fk_log, "xfer_setopt output=x;"), "%s", fk_log);
  cr_expect_not(strstr(fk_log, "output=y"), "%s", fk_log);
  fflush(stderr);
  cr_expect_stderr_eq_str("mhttp: warning: got more output options than URLs (1 ignored)\n");
}

/* A mirror dropped for a cause: a warning naming the mirror and the cause (not with -q), the
 * cause in the path-down JSON line and in --stats. */
Test(download, a_dropped_mirror_is_told_with_its_cause) {
  fk_mirror_404 = 1;
  cr_expect_eq(RUN("-o", "m.bin", "http://a.test/f", "--mirror", "http://b.test/f"), 0);
  cr_expect_eq(RUN("-q", "-o", "m.bin", "http://a.test/f", "--mirror", "http://b.test/f"), 0);
  fflush(stderr);
  cr_expect_stderr_eq_str("mhttp: warning: mirror http://b.test/f dropped (over wifi0): mirror at 10.0.0.2 "
                          "answered otherwise: HTTP 404\n");
}

Test(download, a_dropped_mirror_in_json_and_stats) {
  char path[] = "/tmp/cli-stats-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  fk_mirror_404 = 1;
  cr_expect_eq(RUN("-q", "--progress-json", "--stats", path, "http://a.test/f", "--mirror", "http://b.test/f"), 0);
  FILE *f = fopen(path, "r");
  char line[2048] = "";
  cr_assert(f && fgets(line, sizeof line, f));
  fclose(f);
  unlink(path);
  const char *cause = "{\"iface\":\"wifi0\",\"replica\":\"10.0.0.2\",\"mirror\":1,\"exit\":8,"
                      "\"message\":\"mirror at 10.0.0.2 answered otherwise: HTTP 404\"}";
  char want[512];
  snprintf(want, sizeof want, "\"dropped\":[%s]}\n", cause);
  cr_expect(strstr(line, want), "%s", line);
  fflush(stderr);
  char got[8192] = "";
  FILE *e = cr_get_redirected_stderr();
  size_t n = fread(got, 1, sizeof got - 1, e);
  got[n] = 0;
  snprintf(want, sizeof want, "{\"event\":\"path-down\",\"cause\":%s,", cause);
  cr_expect(strstr(got, want), "%s", got);
}
