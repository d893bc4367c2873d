/* The public API's own checks (include/mhttp.h): argument and state checking of every call, option names and values at both levels, error strings, URL parsing, and SHA-256 against the FIPS 180-4 / NIST vectors. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mh_api_int.h"
#include "mh_log.h"
#include "mh_sha256.h"

/* ---- error strings ---------------------------------------------------------------------------- */

Test(api_strerror, every_code_named_and_distinct) {
  for (int a = MHTTP_OK; a <= MHTTP_E_CACERT; a++) {
    const char *s = mhttp_strerror((mhttp_code)a);
    cr_assert(s && *s, "code %d has no text", a);
    cr_assert(strcmp(s, mhttp_strerror((mhttp_code)1000)), "code %d reads as unknown", a);
    for (int b = MHTTP_OK; b < a; b++)
      cr_assert(strcmp(s, mhttp_strerror((mhttp_code)b)), "codes %d and %d share '%s'", a, b, s);
  }
  cr_assert_str_eq(mhttp_strerror(MHTTP_E_RESOLVE), "could not resolve host");
}

Test(api_strerror, unknown_codes) {
  int bad[] = {-1, MHTTP_E_CACERT + 1, 1000, -2147483647 - 1};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_str_eq(mhttp_strerror((mhttp_code)bad[i]), "unknown error code");
}

Test(api_strerror, stable_numbers) {
  /* the numbers are the ABI: a reordering of the enum must fail here */
  cr_assert_eq(MHTTP_E_RESOLVE, 5);
  cr_assert_eq(MHTTP_E_CONNECT, 6);
  cr_assert_eq(MHTTP_E_PARTIAL, 8);
  cr_assert_eq(MHTTP_E_HTTP, 9);
  cr_assert_eq(MHTTP_E_WRITE, 10);
  cr_assert_eq(MHTTP_E_TIMEOUT, 11);
  cr_assert_eq(MHTTP_E_CHECKSUM, 14);
  cr_assert_eq(MHTTP_E_CANCELED, 16);
  cr_assert_eq(MHTTP_E_BUSY, 19);
  cr_assert_eq(MHTTP_E_INTERFACE, 20);
  cr_assert_eq(MHTTP_E_CACERT, 21);
}

/* curl's exit statuses, as the mhttp command exits (mhttp.h's table) */
Test(api_strerror, exit_codes_are_curls) {
  static const int want[][2] = {
      {MHTTP_OK, 0},
      {MHTTP_E_INVAL, 2},
      {MHTTP_E_OPTION, 2},
      {MHTTP_E_NOMEM, 27},
      {MHTTP_E_URL, 3},
      {MHTTP_E_RESOLVE, 6},
      {MHTTP_E_CONNECT, 7},
      {MHTTP_E_PROTOCOL, 8},
      {MHTTP_E_PARTIAL, 18},
      {MHTTP_E_HTTP, 22},
      {MHTTP_E_WRITE, 23},
      {MHTTP_E_TIMEOUT, 28},
      {MHTTP_E_TLS, 35},
      {MHTTP_E_CERT, 60},
      {MHTTP_E_CHECKSUM, 32},
      {MHTTP_E_RESUME, 36},
      {MHTTP_E_CANCELED, 42},
      {MHTTP_E_REDIRECTS, 47},
      {MHTTP_E_SYSTEM, 2},
      {MHTTP_E_BUSY, 2},
      {MHTTP_E_INTERFACE, 45},
      {MHTTP_E_CACERT, 77},
      {1000, 2},
      {-1, 2},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    cr_assert_eq(mhttp_exit_code((mhttp_code)want[i][0]), want[i][1], "code %d", want[i][0]);
}

/* ---- arguments and states --------------------------------------------------------------------- */

static long sink(void *arg, uint64_t off, const void *buf, size_t len) {
  (void)arg, (void)off, (void)buf;
  return (long)len;
}

Test(api_version, the_header_is_the_librarys) {
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", MHTTP_VERSION_MAJOR, MHTTP_VERSION_MINOR, MHTTP_VERSION_PATCH);
  cr_assert_str_eq(mhttp_version(), want, "include/mhttp.h and CMakeLists.txt's project version must agree");
}

Test(api_args, sessions) {
  mhttp_session *s = (mhttp_session *)1;
  cr_assert_eq(mhttp_session_new(0, NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_session_new(0x80, &s), MHTTP_E_INVAL);
  cr_assert_null(s, "out is cleared on failure");
  cr_assert_eq(mhttp_session_setopt(NULL, "policy", "eaf"), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_get_fd(NULL), -1);
  cr_assert_eq(mhttp_get_timeout(NULL), -1);
  cr_assert_eq(mhttp_perform(NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_session_wait(NULL, 0), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_wakeup(NULL), MHTTP_E_INVAL);
  mhttp_session_free(NULL);
  cr_assert_eq(mhttp_session_new(MHTTP_SESSION_THREAD, &s), MHTTP_OK);
  cr_assert_eq(mhttp_session_setopt(s, NULL, "1"), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_session_setopt(s, "insecure", NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_get_fd(s), -1, "a threaded session has no fd to poll");
  cr_assert_eq(mhttp_perform(s), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_session_wait(s, 0), MHTTP_OK, "nothing started");
  cr_assert_eq(mhttp_wakeup(s), MHTTP_OK);
  mhttp_session_free(s);
}

/* MHTTP_LOG_FILE is the API library's as it is the preload library's: lines appended to the
 * file, not written to stderr; a file that cannot be opened refuses the session, saying why. */
Test(api_args, log_file) {
  char path[] = "/tmp/mhttp-logXXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  cr_assert_eq(write(fd, "before\n", 7), 7);
  close(fd);
  setenv("MHTTP_LOG", "debug", 1);
  setenv("MHTTP_LOG_FILE", path, 1);
  mhttp_session *s;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  mh_info("log_file test line");
  mhttp_session_free(s);
  setenv("MHTTP_LOG_FILE", "/nonexistent-dir/log", 1);
  s = (mhttp_session *)1;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_E_OPTION);
  cr_assert_null(s);
  unsetenv("MHTTP_LOG_FILE");
  unsetenv("MHTTP_LOG");
  char buf[4096] = {0};
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  unlink(path);
  cr_assert(n > 7 && !strncmp(buf, "before\n", 7), "appended, not truncated: %s", buf);
  cr_assert_not_null(strstr(buf, "info: log_file test line"), "the session's lines are in the file: %s", buf);
  cr_assert_not_null(strstr(buf, "MHTTP_LOG_FILE: cannot open '/nonexistent-dir/log'"), "%s", buf);
}

Test(api_args, embedded_fd_freezes_options) {
  mhttp_session *s;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_session_setopt(s, "max-redirs", "3"), MHTTP_OK);
  cr_assert_geq(mhttp_get_fd(s), 0);
  cr_assert_eq(mhttp_perform(s), MHTTP_OK);
  cr_assert_eq(mhttp_session_setopt(s, "max-redirs", "4"), MHTTP_E_INVAL, "the engine exists: fixed");
  mhttp_session_free(s);
}

Test(api_args, transfers_before_start) {
  mhttp_session *s;
  mhttp_xfer *x = (mhttp_xfer *)1;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_new(NULL, "http://a/", &x), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_new(s, NULL, &x), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_new(s, "http://a/", NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_new(s, "ftp://a/", &x), MHTTP_E_URL);
  cr_assert_null(x);
  cr_assert_eq(mhttp_xfer_new(s, "http://user:pw@a/", &x), MHTTP_E_URL, "credentials are never sent");
  cr_assert_eq(mhttp_xfer_new(s, "https://a/", &x), MHTTP_OK, "https: the TLS transport");
  mhttp_xfer_free(x);
  cr_assert_eq(mhttp_xfer_new(s, "http://a/f", &x), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_result(x), MHTTP_E_INVAL, "not started: said so, not 'still running'");
  cr_assert_str_eq(mhttp_xfer_errmsg(x), "the transfer was not started");
  cr_assert_str_eq(mhttp_xfer_errmsg(NULL), "");
  cr_assert_eq(mhttp_xfer_result(NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_add_mirror(x, NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_add_mirror(x, "gopher://b/"), MHTTP_E_URL);
  cr_assert_eq(mhttp_xfer_add_replica(x, "not-an-ip", NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_add_replica(x, "10.0.0.1", "an-interface-name-too-long"), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_set_fd(x, -1), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_set_write_cb(x, NULL, 1, NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_set_event_cb(NULL, NULL, NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_start(x), MHTTP_E_INVAL, "no destination");
  cr_assert_eq(mhttp_xfer_pause(x, 1), MHTTP_E_INVAL, "not running");
  cr_assert_eq(mhttp_xfer_cancel(x), MHTTP_E_INVAL, "not started");
  cr_assert_eq(mhttp_xfer_set_fd(x, 1), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_set_write_cb(x, sink, 1, NULL), MHTTP_E_INVAL, "one destination");
  cr_assert_eq(mhttp_xfer_setopt(x, "output", "/tmp/never"), MHTTP_E_INVAL, "an fd and an output");
  mhttp_xfer_stats st = {.size = 0};
  cr_assert_eq(mhttp_xfer_stats_get(x, &st), MHTTP_E_INVAL, "size not set");
  cr_assert_eq(mhttp_xfer_stats_get(x, NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_stats_get(NULL, &st), MHTTP_E_INVAL);
  unsigned n = 9;
  cr_assert_eq(mhttp_xfer_path_stats(x, NULL, 0, NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_path_stats(x, NULL, 1, &n), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_path_stats(x, NULL, 0, &n), MHTTP_OK);
  cr_assert_eq(n, 0);
  mhttp_xfer_free(x);
  mhttp_xfer_free(NULL);
  mhttp_session_free(s);
}

/* A transfer that ends at once (nothing listens on 127.0.0.1:1): every call in its after-end
 * state, and the outcome reported exactly once. */
static int ends, errors;
static void on_ev(const mhttp_event *ev, void *arg) {
  (void)arg;
  cr_assert_eq(ev->size, sizeof *ev);
  ends += ev->type == MHTTP_EV_COMPLETE || ev->type == MHTTP_EV_ERROR;
  errors += ev->type == MHTTP_EV_ERROR && ev->code == MHTTP_E_CONNECT;
}

Test(api_args, transfers_after_end) {
  mhttp_session *s;
  mhttp_xfer *x;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_new(s, "http://127.0.0.1:1/x", &x), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_set_write_cb(x, sink, 0, NULL), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_set_event_cb(x, on_ev, NULL), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_start(x), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_start(x), MHTTP_E_INVAL, "once");
  cr_assert_eq(mhttp_xfer_setopt(x, "max-redirs", "1"), MHTTP_E_INVAL, "started");
  cr_assert_eq(mhttp_xfer_set_fd(x, 1), MHTTP_E_INVAL, "started");
  cr_assert_eq(mhttp_xfer_add_mirror(x, "http://b.test/x"), MHTTP_E_INVAL, "started");
  cr_assert_eq(mhttp_xfer_add_replica(x, "10.0.0.2", NULL), MHTTP_E_INVAL, "started");
  cr_assert_eq(mhttp_session_wait(s, 10000), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_result(x), MHTTP_E_CONNECT, "%s", mhttp_xfer_errmsg(x));
  cr_assert(strstr(mhttp_xfer_errmsg(x), "refused"), "%s", mhttp_xfer_errmsg(x));
  cr_assert_eq(mhttp_xfer_cancel(x), MHTTP_OK, "ended: a no-op");
  cr_assert_eq(mhttp_xfer_pause(x, 1), MHTTP_E_INVAL, "ended");
  for (int i = 0; i < 5; i++)
    mhttp_perform(s);
  cr_assert_eq(mhttp_xfer_result(x), MHTTP_E_CONNECT, "a cancel after the end changes nothing");
  cr_assert_eq(ends, 1);
  cr_assert_eq(errors, 1);
  mhttp_xfer_free(x);
  mhttp_session_free(s);
}

/* ---- mirrors and pinned replicas -------------------------------------------------------------- */

/* A transfer of url in s (nothing runs: these tests read what a split would be handed). */
static mhttp_xfer *xfer_of(mhttp_session *s, const char *url) {
  mhttp_xfer *x = NULL;
  cr_assert_eq(mhttp_xfer_new(s, url, &x), MHTTP_OK);
  return x;
}

Test(api_mirrors, accepted_and_handed_to_the_split) {
  mhttp_session *s;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  mhttp_xfer *x = xfer_of(s, "http://a.test/f");
  cr_assert_eq(mhttp_xfer_add_mirror(x, NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_add_mirror(NULL, "http://b.test/"), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_add_mirror(x, "gopher://b.test/"), MHTTP_E_URL);
  cr_assert_eq(mhttp_xfer_add_mirror(x, "http://u:p@b.test/"), MHTTP_E_URL, "credentials are never sent");
  cr_assert_eq(mhttp_xfer_add_mirror(x, "http://b.test/a b"), MHTTP_E_URL);
  cr_assert_eq(x->mir.nmirrors, 0, "nothing kept of a refused one");
  cr_assert_eq(mhttp_xfer_add_mirror(x, "http://b.test:8080/m/f?k=1"), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_add_mirror(x, "https://c.test/f"), MHTTP_OK, "an https mirror of an http URL");
  cr_assert_eq(mhttp_xfer_add_mirror(x, "HTTP://A.TEST:80/copy"), MHTTP_OK, "the URL's own origin");
  cr_assert_eq(mh__x_split_mirrors(x), 3);
  const struct mh_split_mirror *m = x->mir.split_mirrors;
  cr_assert_str_eq(m[0].target, "/m/f?k=1");
  cr_assert_str_eq(m[0].host, "b.test:8080");
  cr_assert_str_eq(m[0].name, "b.test");
  cr_assert_eq(m[0].port, 8080);
  cr_assert_null(m[0].tls, "plain");
  cr_assert_eq(m[0].same_origin, 0, "another host: the credentials stay home");
  cr_assert_eq(m[0].naddrs, 0, "not looked up yet");
  cr_assert_eq(m[0].addrs, x->mir.mirrors[0]->addrs, "the lookup's answer is read where it lands");
  cr_assert_eq(m[1].port, 443);
  cr_assert_eq(m[1].tls, &x->mir.mirrors[1]->tls, "its own TLS transport (name, certificate)");
  cr_assert_eq(m[1].same_origin, 0, "another scheme");
  cr_assert_str_eq(m[2].target, "/copy");
  cr_assert_eq(m[2].same_origin, 1);
  for (int i = 3; i < MH__API_MIRRORS; i++)
    cr_assert_eq(mhttp_xfer_add_mirror(x, "http://d.test/"), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_add_mirror(x, "http://d.test/"), MHTTP_E_INVAL, "at most %d", MH__API_MIRRORS);
  mhttp_xfer_free(x);
  /* an https URL takes no plain mirror: its bytes would not be authenticated */
  x = xfer_of(s, "https://a.test/f");
  cr_assert_eq(mhttp_xfer_add_mirror(x, "http://b.test/f"), MHTTP_E_URL);
  cr_assert_eq(mhttp_xfer_add_mirror(x, "https://b.test/f"), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_add_mirror(x, "https://a.test/g"), MHTTP_OK);
  cr_assert_eq(mh__x_split_mirrors(x), 2);
  cr_assert_eq(x->mir.split_mirrors[0].same_origin, 0);
  cr_assert_eq(x->mir.split_mirrors[1].same_origin, 1);
  mhttp_xfer_free(x);
  /* after a redirect from http to https, a plain mirror is left out of the split */
  x = xfer_of(s, "http://a.test/f");
  cr_assert_eq(mhttp_xfer_add_mirror(x, "http://b.test/f"), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_add_mirror(x, "https://c.test/f"), MHTTP_OK);
  cr_assert_eq(mh_url_parse("https://a.test/f", &x->u), 0);
  cr_assert_eq(mh__x_split_mirrors(x), 1);
  cr_assert_str_eq(x->mir.split_mirrors[0].name, "c.test");
  cr_assert_eq(x->mir.mirrors[0]->slot, -1);
  cr_assert_eq(x->mir.mirrors[1]->slot, 0);
  mhttp_xfer_free(x);
  mhttp_session_free(s);
}

Test(api_replicas, pinned_and_handed_to_the_split) {
  mhttp_session *s;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  mhttp_xfer *x = xfer_of(s, "http://a.test/f");
  cr_assert_eq(mhttp_xfer_add_replica(x, "not-an-ip", NULL), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_add_replica(x, "10.0.0.1", "an-interface-name-too-long"), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_add_replica(x, "10.0.0.1", ""), MHTTP_E_INVAL);
  cr_assert_eq(mhttp_xfer_add_replica(x, "b.test", NULL), MHTTP_E_INVAL, "an address, not a name");
  cr_assert_eq(x->mir.npins, 0);
  cr_assert_eq(mhttp_xfer_add_replica(x, "10.210.2.10", "lte0"), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_add_replica(x, "fd6d:7462:0:202::10", NULL), MHTTP_OK);
  struct mh_split_pin pins[MH__API_REPLICAS];
  cr_assert_eq(mh__x_split_pins(x, pins), 2);
  const struct sockaddr_in *a = (const struct sockaddr_in *)&pins[0].addr;
  cr_assert_eq(a->sin_family, AF_INET);
  cr_assert_eq(ntohl(a->sin_addr.s_addr), 0x0ad2020aU);
  cr_assert_eq(a->sin_port, 0, "the split gives it the URL's port");
  cr_assert_str_eq(pins[0].iface, "lte0");
  cr_assert_eq(pins[1].addr.ss_family, AF_INET6);
  cr_assert_null(pins[1].iface, "every interface");
  for (int i = 2; i < MH__API_REPLICAS; i++)
    cr_assert_eq(mhttp_xfer_add_replica(x, "10.0.0.3", NULL), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_add_replica(x, "10.0.0.3", NULL), MHTTP_E_INVAL, "at most %d", MH__API_REPLICAS);
  /* they serve the URL's host: a redirect to another origin leaves them out */
  cr_assert_eq(mh_url_parse("http://c.test/f", &x->u), 0);
  cr_assert_eq(mh__x_split_pins(x, pins), 0);
  mhttp_xfer_free(x);
  mhttp_session_free(s);
}

/* ---- option names ----------------------------------------------------------------------------- */

struct opt_case {
  const char *name, *good, *bad;
  int level; /* 1 session only, 2 transfer only, 3 both */
};
/* clang-format off */
static const struct opt_case opts[] = {
    {"interface", "lo", "a,b", 1},
    {"dns-server", "lo=10.0.0.1", "lo=not-an-ip", 1},
    {"policy", "rr", "fastest", 1},
    {"cacert", "/etc/ssl/certs/ca-certificates.crt", "", 3},
    {"insecure", "yes", "maybe", 3},
    {"connect-timeout", "2.5", "0", 3},
    {"max-time", "60", "-1", 3},
    {"max-redirs", "0", "51", 3},
    {"user-agent", "test/1.0", "evil\r\nX-Injected: 1", 3},
    {"header", "X-Test: 1", "no colon here", 2},
    {"output", "/tmp/out.bin", "", 2},
    {"continue", "no", "2", 2},
    {"checksum", "sha-256=ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "md5=00", 2},
    {"progress-interval", "10", "9", 2},
    {"limit-rate", "1.5M", "2X", 2},
};
/* clang-format on */

/* curl's --limit-rate: bytes/s, a decimal, k/m/g as powers of 1024 in either case */
Test(api_options, limit_rate_values) {
  static const struct {
    const char *v;
    int ok;
    uint64_t want;
  } t[] = {{"0", 1, 0},        {"1000", 1, 1000},    {"1k", 1, 1024},       {"1K", 1, 1024},
           {"2M", 1, 2097152}, {"1.5m", 1, 1572864}, {"1G", 1, 1073741824}, {"", 0, 0},
           {"k", 0, 0},        {"-1", 0, 0},         {"1T", 0, 0},          {"1kb", 0, 0},
           {" 1", 0, 0},       {"nan", 0, 0},        {"1e400", 0, 0},       {"2000G", 0, 0}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    uint64_t got = 7;
    cr_assert_eq(mh__speed(t[i].v, &got) == 0, t[i].ok, "'%s'", t[i].v);
    if (t[i].ok)
      cr_assert_eq(got, t[i].want, "'%s': %llu", t[i].v, (unsigned long long)got);
  }
}

Test(api_options, every_name_good_and_bad) {
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
    const struct opt_case *c = &opts[i];
    mhttp_session *s;
    mhttp_xfer *x;
    cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
    cr_assert_eq(mhttp_xfer_new(s, "http://a.test/", &x), MHTTP_OK);
    cr_assert_eq(mhttp_session_setopt(s, c->name, c->good), c->level & 1 ? MHTTP_OK : MHTTP_E_OPTION, "session %s=%s",
                 c->name, c->good);
    cr_assert_eq(mhttp_session_setopt(s, c->name, c->bad), MHTTP_E_OPTION, "session %s=%s", c->name, c->bad);
    cr_assert_eq(mhttp_xfer_setopt(x, c->name, c->good), c->level & 2 ? MHTTP_OK : MHTTP_E_OPTION, "transfer %s=%s",
                 c->name, c->good);
    cr_assert_eq(mhttp_xfer_setopt(x, c->name, c->bad), MHTTP_E_OPTION, "transfer %s=%s", c->name, c->bad);
    mhttp_xfer_free(x);
    mhttp_session_free(s);
  }
}

Test(api_options, unknown_names) {
  const char *names[] = {"", "--output", "Output", "outputs", "foo", "max_redirs", "insecure "};
  mhttp_session *s;
  mhttp_xfer *x;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_new(s, "http://a.test/", &x), MHTTP_OK);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    cr_assert_eq(mhttp_session_setopt(s, names[i], "1"), MHTTP_E_OPTION, "'%s'", names[i]);
    cr_assert_eq(mhttp_xfer_setopt(x, names[i], "1"), MHTTP_E_OPTION, "'%s'", names[i]);
  }
  mhttp_xfer_free(x);
  mhttp_session_free(s);
}

/* A refused value changes nothing (the state behind the handles is read directly). */
Test(api_options, bad_value_changes_nothing) {
  mhttp_session *s;
  mhttp_xfer *x;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_session_setopt(s, "interface", "lo"), MHTTP_OK);
  cr_assert_eq(mhttp_session_setopt(s, "interface", "lo,lo"), MHTTP_E_OPTION);
  cr_assert_str_eq(s->cfg.ifaces, "lo");
  cr_assert_eq(mhttp_session_setopt(s, "interface", "nosuch9"), MHTTP_E_INTERFACE, "not on this host");
  cr_assert_str_eq(s->cfg.ifaces, "lo");
  cr_assert_eq(mhttp_session_setopt(s, "dns-server", "lo=10.0.0.1"), MHTTP_OK);
  cr_assert_eq(mhttp_session_setopt(s, "dns-server", "lo=10.0.0.2"), MHTTP_OK);
  cr_assert_eq(mhttp_session_setopt(s, "dns-server", "lo=x"), MHTTP_E_OPTION);
  cr_assert_str_eq(mh_config_dns(&s->cfg, "lo"), "10.0.0.1,10.0.0.2");
  cr_assert_eq(mhttp_session_setopt(s, "max-redirs", "7"), MHTTP_OK);
  cr_assert_eq(mhttp_session_setopt(s, "max-redirs", "7x"), MHTTP_E_OPTION);
  cr_assert_eq(s->opts.max_redirs, 7);
  cr_assert_eq(mhttp_xfer_new(s, "http://a.test/", &x), MHTTP_OK);
  cr_assert_eq(x->o.max_redirs, 7, "the session's default");
  cr_assert_eq(mhttp_xfer_setopt(x, "header", "X-A: 1"), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "header", "X-B: 2\r\nX-C: 3"), MHTTP_E_OPTION);
  cr_assert_eq(mhttp_xfer_setopt(x, "header", "X B: 2"), MHTTP_E_OPTION);
  cr_assert_eq(mhttp_xfer_setopt(x, "header", "X-D: 4"), MHTTP_OK);
  cr_assert_eq(x->o.headers_len, strlen("X-A: 1\r\nX-D: 4\r\n"));
  cr_assert(!memcmp(x->o.headers, "X-A: 1\r\nX-D: 4\r\n", x->o.headers_len));
  cr_assert_eq(mhttp_xfer_setopt(x, "checksum", "sha-256=abc"), MHTTP_E_OPTION);
  cr_assert_eq(x->o.has_checksum, 0);
  cr_assert_eq(mhttp_xfer_setopt(x, "progress-interval", "10"), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "progress-interval", "ten"), MHTTP_E_OPTION);
  cr_assert_eq(x->o.progress_ms, 10);
  mhttp_xfer_free(x);
  mhttp_session_free(s);
}

Test(api_options, policy_names) {
  const char *good[] = {"eaf", "rr", "round-robin", "threshold", "biased", "single", "single:lo"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    mhttp_session *s;
    cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
    cr_assert_eq(mhttp_session_setopt(s, "interface", "lo"), MHTTP_OK);
    cr_assert_eq(mhttp_session_setopt(s, "policy", good[i]), MHTTP_OK, "%s", good[i]);
    mhttp_session_free(s);
  }
}

/* ---- URLs ------------------------------------------------------------------------------------- */

Test(api_url, parsing) {
  struct {
    const char *url, *host, *port, *path, *hostport;
  } ok[] = {
      {"http://a.test", "a.test", "80", "/", "a.test"},
      {"http://a.test:8080/x/y?q=1#frag", "a.test", "8080", "/x/y?q=1", "a.test:8080"},
      {"HTTP://A.test?q", "A.test", "80", "/?q", "A.test"},
      {"http://[fd00::1]:81/f", "fd00::1", "81", "/f", "[fd00::1]:81"},
      {"https://b.test/", "b.test", "443", "/", "b.test"},
      {"http://a.test:/x", "a.test", "80", "/x", "a.test:"}, /* an empty port: the default */
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    struct mh_url u;
    cr_assert_eq(mh_url_parse(ok[i].url, &u), 0, "%s", ok[i].url);
    cr_assert_str_eq(u.host, ok[i].host);
    cr_assert_str_eq(u.port, ok[i].port);
    cr_assert_str_eq(u.path, ok[i].path);
    cr_assert_str_eq(u.hostport, ok[i].hostport);
  }
  const char *bad[] = {"",
                       "a.test/x",
                       "ftp://a/",
                       "http://",
                       "http:///x",
                       "http://a:0/",
                       "http://a:65536/",
                       "http://a:8x/",
                       "http://u:p@a/",
                       "http://a/b c",
                       "http://a/\r\nX: 1",
                       "http://[::1/"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct mh_url u;
    cr_assert_eq(mh_url_parse(bad[i], &u), -1, "'%s' accepted", bad[i]);
  }
}

/* The origin credentials belong to (a redirect elsewhere drops them; a mirror elsewhere never gets
 * them): scheme, host without case, port with the scheme's default filled in. */
Test(api_url, same_origin) {
  struct {
    const char *a, *b;
    int same;
  } cases[] = {
      {"http://a.test/x", "http://a.test/y?z", 1},    {"http://a.test/x", "http://A.TEST:80/x", 1},
      {"https://a.test/x", "https://a.test:443/", 1}, {"http://a.test/x", "https://a.test/x", 0},
      {"http://a.test/x", "http://a.test:8080/x", 0}, {"http://a.test/x", "http://b.test/x", 0},
      {"http://a.test/x", "http://a.test.evil/x", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct mh_url a, b;
    cr_assert_eq(mh_url_parse(cases[i].a, &a), 0);
    cr_assert_eq(mh_url_parse(cases[i].b, &b), 0);
    cr_assert_eq(mh_url_same_origin(&a, &b), cases[i].same, "%s vs %s", cases[i].a, cases[i].b);
    cr_assert_eq(mh_url_same_origin(&b, &a), cases[i].same, "symmetric");
  }
}

/* ---- SHA-256 (FIPS 180-4; NIST CAVP / FIPS 180-2 appendix vectors) ----------------------------- */

static void hex_of(const void *p, size_t len, char out[65]) {
  struct mh_sha256 c;
  uint8_t d[32];
  mh_sha256_init(&c);
  mh_sha256_update(&c, p, len);
  mh_sha256_final(&c, d);
  mh_sha256_hex(d, out);
}

Test(api_sha256, nist_vectors) {
  struct {
    const char *msg, *digest;
  } v[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrst"
       "u",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
  };
  char h[65];
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    hex_of(v[i].msg, strlen(v[i].msg), h);
    cr_assert_str_eq(h, v[i].digest, "'%s'", v[i].msg);
  }
}

Test(api_sha256, million_a_in_pieces) {
  struct mh_sha256 c;
  uint8_t d[32];
  char h[65], buf[997];
  memset(buf, 'a', sizeof buf);
  mh_sha256_init(&c);
  size_t left = 1000000;
  while (left) { /* pieces of 997 bytes: never aligned on a block */
    size_t k = left < sizeof buf ? left : sizeof buf;
    mh_sha256_update(&c, buf, k);
    left -= k;
  }
  mh_sha256_final(&c, d);
  mh_sha256_hex(d, h);
  cr_assert_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Every split of a message into two updates hashes like the whole, around each padding edge
 * (55, 56, 63, 64 bytes and their neighbours). */
Test(api_sha256, split_updates_match_one_shot) {
  uint8_t msg[200];
  for (size_t i = 0; i < sizeof msg; i++)
    msg[i] = (uint8_t)(i * 7 + 3);
  for (size_t len = 50; len <= 140; len++) {
    char whole[65];
    hex_of(msg, len, whole);
    for (size_t cut = 0; cut <= len; cut++) {
      struct mh_sha256 c;
      uint8_t d[32];
      char h[65];
      mh_sha256_init(&c);
      mh_sha256_update(&c, msg, cut);
      mh_sha256_update(&c, msg + cut, len - cut);
      mh_sha256_final(&c, d);
      mh_sha256_hex(d, h);
      cr_assert_str_eq(h, whole, "len %zu cut %zu", len, cut);
    }
  }
}

Test(api_sha256, hex_parsing) {
  uint8_t d[32];
  char h[65];
  const char *x = "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD";
  cr_assert_eq(mh_sha256_parse_hex(x, d), 0);
  mh_sha256_hex(d, h);
  cr_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  cr_assert_eq(mh_sha256_parse_hex("ba78", d), -1);
  cr_assert_eq(mh_sha256_parse_hex(NULL, d), -1);
  cr_assert_eq(mh_sha256_parse_hex("za7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", d), -1);
  cr_assert_eq(mh_sha256_parse_hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0", d), -1);
}

/* ---- resume: runs and the resume file ------------------------------------------------------- */

static void runs_are(const struct mh__runs *r, const uint64_t *want, unsigned n) {
  cr_assert_eq(r->n, n, "%u runs, want %u", r->n, n);
  for (unsigned i = 0; i < n; i++)
    cr_assert(r->v[i].off == want[2 * i] && r->v[i].len == want[2 * i + 1], "run %u: %llu+%llu, want %llu+%llu", i,
              (unsigned long long)r->v[i].off, (unsigned long long)r->v[i].len, (unsigned long long)want[2 * i],
              (unsigned long long)want[2 * i + 1]);
}

Test(api_resume, runs_merge) {
  struct mh__runs r = {0};
  cr_assert_eq(mh__runs_add(&r, 100, 10), 0);
  cr_assert_eq(mh__runs_add(&r, 0, 10), 0);
  cr_assert_eq(mh__runs_add(&r, 50, 0), 0, "empty: nothing");
  runs_are(&r, (uint64_t[]){0, 10, 100, 10}, 2);
  cr_assert_eq(mh__runs_add(&r, 10, 5), 0); /* touches the first */
  runs_are(&r, (uint64_t[]){0, 15, 100, 10}, 2);
  cr_assert_eq(mh__runs_add(&r, 95, 5), 0); /* touches the second from below */
  runs_are(&r, (uint64_t[]){0, 15, 95, 15}, 2);
  cr_assert_eq(mh__runs_add(&r, 40, 10), 0);
  runs_are(&r, (uint64_t[]){0, 15, 40, 10, 95, 15}, 3);
  cr_assert_eq(mh__runs_add(&r, 5, 100), 0); /* spans all three */
  runs_are(&r, (uint64_t[]){0, 110}, 1);
  cr_assert_eq(mh__runs_add(&r, 20, 5), 0, "inside: nothing new");
  runs_are(&r, (uint64_t[]){0, 110}, 1);
  for (unsigned i = 0; i < 40; i++) /* growth past the first allocation */
    cr_assert_eq(mh__runs_add(&r, 1000 + 10 * i, 5), 0);
  cr_assert_eq(r.n, 41);
  mh__runs_free(&r);
}

Test(api_resume, file_round_trip) {
  struct mh__resume a = {.total = 33554432};
  snprintf(a.url, sizeof a.url, "http://a.test/files/x.bin");
  snprintf(a.validator, sizeof a.validator, "\"6553f100-2000000\"");
  mh__runs_add(&a.runs, 0, 1048576);
  mh__runs_add(&a.runs, 4194304, 65536);
  size_t len;
  char *t = mh__resume_format(&a, &len);
  cr_assert_str_eq(t, "mhttp-resume 1\nurl http://a.test/files/x.bin\nlength 33554432\n"
                      "validator \"6553f100-2000000\"\nrange 0 1048576\nrange 4194304 65536\n");
  struct mh__resume b;
  cr_assert_eq(mh__resume_parse(t, len, &b), 0);
  cr_assert_str_eq(b.url, a.url);
  cr_assert_str_eq(b.validator, a.validator);
  cr_assert_eq(b.total, a.total);
  runs_are(&b.runs, (uint64_t[]){0, 1048576, 4194304, 65536}, 2);
  free(t);
  mh__runs_free(&a.runs);
  mh__runs_free(&b.runs);
  /* a Last-Modified validator has spaces; none at all is an empty value */
  const char *lm = "mhttp-resume 1\nurl http://a/\nlength 10\nvalidator Wed, 21 Oct 2015 07:28:00 GMT\n";
  cr_assert_eq(mh__resume_parse(lm, strlen(lm), &b), 0);
  cr_assert_str_eq(b.validator, "Wed, 21 Oct 2015 07:28:00 GMT");
  cr_assert_eq(b.runs.n, 0);
}

Test(api_resume, file_refused) {
  const char *bad[] = {
      "",
      "mhttp-resume 2\nurl http://a/\nlength 10\n",                       /* another version */
      "mhttp-resume 1\nlength 10\n",                                      /* no url */
      "mhttp-resume 1\nurl http://a/\n",                                  /* no length */
      "mhttp-resume 1\nurl http://a/\nlength 0\n",                        /* empty object */
      "mhttp-resume 1\nurl http://a/\nlength 10\nrange 0 5",              /* cut short */
      "mhttp-resume 1\nurl http://a/\nlength 10\nrange 5 5\nrange 0 2\n", /* out of order */
      "mhttp-resume 1\nurl http://a/\nlength 10\nrange 0 5\nrange 4 2\n", /* overlapping */
      "mhttp-resume 1\nurl http://a/\nlength 10\nrange 0 5\nrange 5 2\n", /* touching: not ours */
      "mhttp-resume 1\nurl http://a/\nlength 10\nrange 8 5\n",            /* past the end */
      "mhttp-resume 1\nurl http://a/\nlength 10\nrange 1 0\n",            /* empty run */
      "mhttp-resume 1\nurl http://a/\nlength 10\nrange 1x 2\n",
      "mhttp-resume 1\nurl http://a/\nrange 0 5\nlength 10\n", /* a range before the length */
      "mhttp-resume 1\nurl http://a/\nlength 10\nsize 3\n",    /* unknown key */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct mh__resume r;
    cr_assert_eq(mh__resume_parse(bad[i], strlen(bad[i]), &r), -1, "accepted: '%s'", bad[i]);
  }
}
