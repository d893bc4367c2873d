/* The API's contracts against a loopback origin of the test's own (one path, so the transfer reads answers itself): messages of refused calls, booleans, START before an error status's ERROR, resume of a one-path transfer (Range from the first missing byte with If-Range; a changed validator restarts; a complete output; a resume file naming bytes past the end), and a claimed length that does not fit the disk. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mh_api_int.h"

#define BODY (256 * 1024)

/* ---- the origin: one thread, one connection at a time, answers per the test's settings ------- */

static struct {
  int ls;
  int port;
  pthread_t th;
  const char *etag;     /* the representation's current ETag */
  int status;           /* an error status to answer with (0: serve the body) */
  uint64_t claim;       /* a Content-Length to claim instead (0: the body's) */
  const char *location; /* /f answers 302 with this Location (NULL: serves it) */
  int ignore_if_range;  /* a Range is served whatever If-Range says */
  size_t cut;           /* the body stops after this many bytes (0: all), the connection held */
  char req[4096];       /* the last request head */
  unsigned requests;
  char body[BODY];
} o;

/* Bytes from the request's header "Name: " up to the line's end into out ("" when absent). */
static void req_header(const char *name, char *out, size_t cap) {
  const char *p = strcasestr(o.req, name);
  out[0] = 0;
  if (!p)
    return;
  p += strlen(name);
  size_t n = strcspn(p, "\r\n");
  snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
}

static void send_all_fd(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0)
      return;
    p += w, n -= (size_t)w;
  }
}

/* The answer to o.req: the status asked, a claim, or the body honouring Range and If-Range. */
static void answer(int fd) {
  char head[512], range[64], ifr[128];
  req_header("Range: bytes=", range, sizeof range);
  req_header("If-Range: ", ifr, sizeof ifr);
  uint64_t from = range[0] ? strtoull(range, NULL, 10) : 0;
  int partial = range[0] && (o.ignore_if_range || !ifr[0] || !strcmp(ifr, o.etag));
  if (o.location && !strncmp(o.req, "GET /f ", 7)) {
    snprintf(head, sizeof head, "HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n", o.location);
    send_all_fd(fd, head, strlen(head));
    return;
  }
  if (o.status)
    snprintf(head, sizeof head, "HTTP/1.1 %d Nope\r\nContent-Length: 0\r\n\r\n", o.status);
  else if (o.claim)
    snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nETag: %s\r\nContent-Length: %llu\r\n\r\n", o.etag,
             (unsigned long long)o.claim);
  else if (partial && from >= BODY)
    snprintf(head, sizeof head,
             "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */%d\r\n"
             "Content-Length: 0\r\n\r\n",
             BODY);
  else if (partial)
    snprintf(head, sizeof head,
             "HTTP/1.1 206 Partial Content\r\nETag: %s\r\nContent-Range: bytes %llu-%d/%d\r\n"
             "Content-Length: %llu\r\n\r\n",
             o.etag, (unsigned long long)from, BODY - 1, BODY, (unsigned long long)(BODY - from));
  else
    snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nETag: %s\r\nContent-Length: %d\r\n\r\n", o.etag, BODY);
  send_all_fd(fd, head, strlen(head));
  size_t len = BODY - (partial ? from : 0);
  if (!o.status && !(partial && from >= BODY))
    send_all_fd(fd, o.body + (partial ? from : 0), o.cut && o.cut < len ? o.cut : len);
  char c;
  while ((o.claim || o.cut) && recv(fd, &c, 1, 0) > 0) /* the rest never comes: until the client leaves */
    ;
}

static void *origin_main(void *arg) {
  (void)arg;
  for (;;) {
    int fd = accept(o.ls, NULL, NULL);
    if (fd < 0)
      return NULL;
    size_t got = 0;
    o.req[0] = 0;
    while (got < sizeof o.req - 1 && !strstr(o.req, "\r\n\r\n")) {
      ssize_t n = recv(fd, o.req + got, sizeof o.req - 1 - got, 0);
      if (n <= 0)
        break;
      got += (size_t)n;
      o.req[got] = 0;
    }
    o.requests++;
    answer(fd);
    close(fd);
  }
}

static void origin_start(void) {
  memset(&o, 0, sizeof o);
  for (int i = 0; i < BODY; i++)
    o.body[i] = (char)(i * 7 + i / 251);
  o.etag = "\"v1\"";
  o.ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  cr_assert_eq(bind(o.ls, (struct sockaddr *)&a, sizeof a), 0);
  cr_assert_eq(listen(o.ls, 8), 0);
  getsockname(o.ls, (struct sockaddr *)&a, &al);
  o.port = ntohs(a.sin_port);
  pthread_create(&o.th, NULL, origin_main, NULL);
}

static void origin_stop(void) {
  shutdown(o.ls, SHUT_RDWR);
  close(o.ls);
  pthread_join(o.th, NULL);
}

/* ---- a transfer to a file ----------------------------------------------------------------- */

static char out_path[64], resume_path[80];
static int evs[16], nevs;

static void on_ev(const mhttp_event *ev, void *arg) {
  (void)arg;
  if (ev->type != MHTTP_EV_PROGRESS && nevs < 16)
    evs[nevs++] = ev->type;
}

static void paths_init(void) {
  snprintf(out_path, sizeof out_path, "/tmp/mhttp-api-contracts-%d.bin", getpid());
  snprintf(resume_path, sizeof resume_path, "%s.mhttp", out_path);
  unlink(out_path);
  unlink(resume_path);
}

/* Runs one transfer of the origin's /f to out_path (continue when cont); its result, stats in *st. */
static mhttp_code fetch(int cont, mhttp_xfer_stats *st) {
  mhttp_session *s;
  mhttp_xfer *x;
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/f", o.port);
  nevs = 0;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_new(s, url, &x), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "output", out_path), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "continue", cont ? "true" : "false"), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_set_event_cb(x, on_ev, NULL), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_start(x), MHTTP_OK);
  cr_assert_eq(mhttp_session_wait(s, 10000), MHTTP_OK);
  mhttp_code c = mhttp_xfer_result(x);
  if (c != MHTTP_OK)
    fprintf(stderr, "fetch: %s: %s\n", mhttp_strerror(c), mhttp_xfer_errmsg(x));
  st->size = sizeof *st;
  mhttp_xfer_stats_get(x, st);
  mhttp_xfer_free(x);
  mhttp_session_free(s);
  return c;
}

/* The output holds the body's first n bytes; a resume file naming them under validator v (NULL:
 * no resume file). */
static void partial_output(size_t n, const char *v) {
  int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  cr_assert(fd >= 0);
  cr_assert_eq(write(fd, o.body, n), (ssize_t)n);
  close(fd);
  if (!v)
    return;
  FILE *f = fopen(resume_path, "w");
  fprintf(f, "mhttp-resume 1\nurl http://127.0.0.1:%d/f\nlength %d\nvalidator %s\nrange 0 %zu\n", o.port, BODY, v, n);
  fclose(f);
}

static void output_exact(void) {
  char *got = malloc(BODY + 1);
  int fd = open(out_path, O_RDONLY);
  cr_assert(fd >= 0);
  ssize_t n = read(fd, got, BODY + 1);
  close(fd);
  cr_assert_eq(n, BODY, "output of %zd bytes", n);
  cr_assert(!memcmp(got, o.body, BODY), "output differs from the body");
  free(got);
  cr_assert(access(resume_path, F_OK) < 0, "the resume file stays after completion");
}

/* ---- messages of refused calls ------------------------------------------------------------ */

Test(api_contracts, refused_calls_say_why) {
  mhttp_session *s;
  mhttp_xfer *x;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_new(s, "gopher://a/", &x), MHTTP_E_URL);
  cr_assert(strstr(mhttp_session_errmsg(s), "gopher://a/"), "%s", mhttp_session_errmsg(s));
  cr_assert_eq(mhttp_session_setopt(s, "interface", "nosuch0"), MHTTP_E_INTERFACE);
  cr_assert(strstr(mhttp_session_errmsg(s), "no interface named 'nosuch0'"), "%s", mhttp_session_errmsg(s));
  cr_assert_eq(mhttp_session_setopt(s, "cacert", "/nonexistent/ca.pem"), MHTTP_E_CACERT);
  cr_assert(strstr(mhttp_session_errmsg(s), "/nonexistent/ca.pem"), "%s", mhttp_session_errmsg(s));
  cr_assert_eq(mhttp_session_setopt(s, "output", "/tmp/x"), MHTTP_E_OPTION);
  cr_assert(strstr(mhttp_session_errmsg(s), "transfer option"), "%s", mhttp_session_errmsg(s));
  cr_assert_eq(mhttp_session_setopt(s, "max-redirs", "lots"), MHTTP_E_OPTION);
  cr_assert(strstr(mhttp_session_errmsg(s), "'lots' is not accepted"), "%s", mhttp_session_errmsg(s));
  cr_assert_eq(mhttp_xfer_new(s, "http://a.test/f", &x), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_start(x), MHTTP_E_INVAL);
  cr_assert(strstr(mhttp_xfer_errmsg(x), "no destination"), "%s", mhttp_xfer_errmsg(x));
  cr_assert_eq(mhttp_xfer_setopt(x, "policy", "rr"), MHTTP_E_OPTION);
  cr_assert(strstr(mhttp_xfer_errmsg(x), "session option"), "%s", mhttp_xfer_errmsg(x));
  cr_assert_eq(mhttp_xfer_setopt(x, "nosuch", "1"), MHTTP_E_OPTION);
  cr_assert(strstr(mhttp_xfer_errmsg(x), "unknown option 'nosuch'"), "%s", mhttp_xfer_errmsg(x));
  cr_assert_eq(mhttp_xfer_add_mirror(x, "http://[::1/"), MHTTP_E_URL);
  cr_assert(strstr(mhttp_xfer_errmsg(x), "mirror http://[::1/"), "%s", mhttp_xfer_errmsg(x));
  cr_assert_eq(mhttp_xfer_add_replica(x, "a.test", NULL), MHTTP_E_INVAL);
  cr_assert(strstr(mhttp_xfer_errmsg(x), "not an IPv4 or IPv6 address"), "%s", mhttp_xfer_errmsg(x));
  mhttp_xfer_free(x);
  mhttp_session_free(s);
}

/* mhttp.h: set_fd (or a callback) after the option output, or output after either: E_INVAL */
Test(api_contracts, one_destination_either_order) {
  mhttp_session *s;
  mhttp_xfer *x;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_new(s, "http://a.test/f", &x), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "output", "/tmp/never"), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_set_fd(x, 1), MHTTP_E_INVAL, "set_fd after output");
  cr_assert(strstr(mhttp_xfer_errmsg(x), "output was set"), "%s", mhttp_xfer_errmsg(x));
  cr_assert_eq(mhttp_xfer_set_write_cb(x, (mhttp_write_cb)1, 1, NULL), MHTTP_E_INVAL, "callback after output");
  mhttp_xfer_free(x);
  cr_assert_eq(mhttp_xfer_new(s, "http://a.test/f", &x), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_set_fd(x, 1), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "output", "/tmp/never"), MHTTP_E_INVAL, "output after set_fd");
  cr_assert(strstr(mhttp_xfer_errmsg(x), "an fd was set"), "%s", mhttp_xfer_errmsg(x));
  mhttp_xfer_free(x);
  mhttp_session_free(s);
}

Test(api_contracts, booleans) {
  const char *yes[] = {"1", "yes", "YES", "true", "True"}, *no[] = {"0", "no", "No", "false", "FALSE"};
  const char *bad[] = {"", "2", "maybe", "on", "truex", " 1"};
  mhttp_session *s;
  mhttp_xfer *x;
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_new(s, "http://a.test/f", &x), MHTTP_OK);
  for (size_t i = 0; i < 5; i++) {
    cr_assert_eq(mhttp_session_setopt(s, "insecure", yes[i]), MHTTP_OK, "%s", yes[i]);
    cr_assert_eq(s->opts.insecure, 1, "%s", yes[i]);
    cr_assert_eq(mhttp_xfer_setopt(x, "continue", no[i]), MHTTP_OK, "%s", no[i]);
    cr_assert_eq(x->o.cont, 0, "%s", no[i]);
    cr_assert_eq(mhttp_xfer_setopt(x, "continue", yes[i]), MHTTP_OK, "%s", yes[i]);
    cr_assert_eq(x->o.cont, 1, "%s", yes[i]);
  }
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq(mhttp_xfer_setopt(x, "insecure", bad[i]), MHTTP_E_OPTION, "'%s'", bad[i]);
  mhttp_xfer_free(x);
  mhttp_session_free(s);
}

/* ---- against the origin ------------------------------------------------------------------- */

/* A relative Location is resolved against the URL as RFC 3986 §5 says (and curl does): dot
 * segments removed, a query alone replaces the query, a fragment is not sent, a space encoded. */
Test(api_contracts, redirect_targets_resolved_as_rfc3986) {
  static const struct {
    const char *location, *want;
  } rows[] = {
      {"g", "GET /g "},           {"../g", "GET /g "},    {"?q=2", "GET /f?q=2 "}, {"d/./e/../g", "GET /d/g "},
      {"/d/g#part", "GET /d/g "}, {"a b", "GET /a%20b "},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    origin_start();
    paths_init();
    o.location = rows[i].location;
    mhttp_xfer_stats st;
    cr_assert_eq(fetch(0, &st), MHTTP_OK, "Location: %s", rows[i].location);
    cr_expect(!strncmp(o.req, rows[i].want, strlen(rows[i].want)), "Location: %s: asked %.40s, want %s",
              rows[i].location, o.req, rows[i].want);
    output_exact();
    unlink(out_path);
    origin_stop();
  }
}

Test(api_contracts, start_before_an_error_status) {
  origin_start();
  paths_init();
  o.status = 404;
  mhttp_xfer_stats st;
  cr_assert_eq(fetch(0, &st), MHTTP_E_HTTP);
  cr_assert_eq(nevs, 2, "%d events", nevs);
  cr_assert_eq(evs[0], MHTTP_EV_START, "the head was read: START first");
  cr_assert_eq(evs[1], MHTTP_EV_ERROR);
  cr_assert_eq(st.http_status, 404);
  cr_assert(access(out_path, F_OK) < 0, "an error status writes nothing");
  origin_stop();
}

/* A one-path transfer keeps a resume file while it runs: a cancel leaves one naming what the
 * output holds, with the answer's validator, under the URL as given (not its redirect's) */
Test(api_contracts, one_path_writes_a_resume_file) {
  origin_start();
  paths_init();
  o.claim = 2 * BODY;
  o.location = "/g"; /* the head says more than it sends: the transfer waits for the rest */
  mhttp_session *s;
  mhttp_xfer *x;
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/f", o.port);
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_new(s, url, &x), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "output", out_path), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_start(x), MHTTP_OK);
  for (int i = 0; i < 200 && access(resume_path, F_OK) < 0; i++)
    mhttp_session_wait(s, 10);
  cr_assert_eq(mhttp_xfer_cancel(x), MHTTP_OK);
  cr_assert_eq(mhttp_session_wait(s, 5000), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_result(x), MHTTP_E_CANCELED);
  FILE *f = fopen(resume_path, "r");
  cr_assert(f, "no resume file for a one-path transfer");
  char text[512] = "";
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  cr_assert(strstr(text, "validator \"v1\"\n"), "%s", text);
  cr_assert(strstr(text, "length 524288\n"), "%s", text);
  cr_assert(strstr(text, "/f\n"), "the URL as given: %s", text);
  mhttp_xfer_free(x);
  mhttp_session_free(s);
  unlink(out_path);
  unlink(resume_path);
  origin_stop();
}

Test(api_contracts, resume_one_path_from_the_first_missing_byte) {
  origin_start();
  paths_init();
  partial_output(100000, "\"v1\"");
  mhttp_xfer_stats st;
  cr_assert_eq(fetch(1, &st), MHTTP_OK);
  cr_assert(strstr(o.req, "Range: bytes=100000-\r\n"), "%s", o.req);
  cr_assert(strstr(o.req, "If-Range: \"v1\"\r\n"), "%s", o.req);
  cr_assert_eq(st.resumed, 100000);
  cr_assert_eq(st.fetched, BODY - 100000, "fetched %llu", (unsigned long long)st.fetched);
  cr_assert_eq(st.restarted, 0);
  output_exact();
  origin_stop();
}

Test(api_contracts, resume_changed_validator_restarts) {
  origin_start();
  paths_init();
  partial_output(100000, "\"v0\""); /* the origin now serves "v1": If-Range fails, 200 */
  mhttp_xfer_stats st;
  cr_assert_eq(fetch(1, &st), MHTTP_OK);
  cr_assert(strstr(o.req, "If-Range: \"v0\"\r\n"), "%s", o.req);
  cr_assert_eq(st.resumed, 0);
  cr_assert_eq(st.restarted, 1, "said so");
  output_exact();
  origin_stop();
}

Test(api_contracts, resume_without_resume_file_as_curl_c) {
  origin_start();
  paths_init();
  partial_output(5000, NULL);
  mhttp_xfer_stats st;
  cr_assert_eq(fetch(1, &st), MHTTP_OK);
  cr_assert(strstr(o.req, "Range: bytes=5000-\r\n"), "%s", o.req);
  cr_assert_null(strstr(o.req, "If-Range"), "no validator known");
  output_exact();
  partial_output(BODY, NULL); /* complete already: the origin's 416 names its length */
  cr_assert_eq(fetch(1, &st), MHTTP_OK, "a complete output");
  cr_assert_eq(st.fetched, 0);
  output_exact();
  origin_stop();
}

Test(api_contracts, resume_complete_output_checks_the_last_byte) {
  origin_start();
  paths_init();
  partial_output(BODY, "\"v1\"");
  mhttp_xfer_stats st;
  cr_assert_eq(fetch(1, &st), MHTTP_OK);
  cr_assert(strstr(o.req, "Range: bytes=262143-\r\n"), "%s", o.req);
  cr_assert_eq(st.fetched, 1);
  output_exact();
  origin_stop();
}

/* A resume file naming bytes the output no longer holds (a crash between a restart's truncation
 * and its removal) is not believed: the whole object again */
Test(api_contracts, resume_file_past_the_end_refused) {
  origin_start();
  paths_init();
  partial_output(100000, "\"v1\"");
  cr_assert_eq(truncate(out_path, 1000), 0);
  mhttp_xfer_stats st;
  cr_assert_eq(fetch(1, &st), MHTTP_OK);
  cr_assert_null(strstr(o.req, "Range:"), "%s", o.req);
  output_exact();
  origin_stop();
}

/* A claimed length the file system cannot hold fails before anything is written */
Test(api_contracts, claim_larger_than_the_disk) {
  origin_start();
  paths_init();
  o.claim = 1ULL << 60;
  mhttp_session *s;
  mhttp_xfer *x;
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/f", o.port);
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_new(s, url, &x), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "output", out_path), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_start(x), MHTTP_OK);
  cr_assert_eq(mhttp_session_wait(s, 5000), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_result(x), MHTTP_E_WRITE);
  cr_assert(strstr(mhttp_xfer_errmsg(x), "do not fit"), "%s", mhttp_xfer_errmsg(x));
  cr_assert(access(out_path, F_OK) < 0, "nothing written");
  mhttp_xfer_free(x);
  mhttp_session_free(s);
  origin_stop();
}

/* A resumed one-path transfer interrupted again keeps the validator in its resume file (its
 * next continue still sends If-Range) and names what it holds now */
Test(api_contracts, resumed_then_canceled_keeps_the_validator) {
  origin_start();
  paths_init();
  partial_output(100000, "\"v1\"");
  o.cut = 50000;
  mhttp_session *s;
  mhttp_xfer *x;
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/f", o.port);
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_new(s, url, &x), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "output", out_path), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "continue", "1"), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_start(x), MHTTP_OK);
  mhttp_xfer_stats st = {.size = sizeof st};
  for (int i = 0; i < 500 && st.done < 150000; i++) {
    mhttp_session_wait(s, 10);
    mhttp_xfer_stats_get(x, &st);
  }
  cr_assert_eq(st.done, 150000, "done %llu", (unsigned long long)st.done);
  cr_assert_eq(mhttp_xfer_cancel(x), MHTTP_OK);
  cr_assert_eq(mhttp_session_wait(s, 5000), MHTTP_OK);
  mhttp_xfer_free(x);
  mhttp_session_free(s);
  FILE *f = fopen(resume_path, "r");
  cr_assert(f);
  char text[512] = "";
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  cr_assert(strstr(text, "validator \"v1\"\nrange 0 150000\n"), "%s", text);
  o.cut = 0;
  cr_assert_eq(fetch(1, &st), MHTTP_OK);
  cr_assert(strstr(o.req, "Range: bytes=150000-\r\nIf-Range: \"v1\"\r\n"), "%s", o.req);
  output_exact();
  origin_stop();
}

/* A server that ignores If-Range and sends the range of another representation: refused, the
 * output untouched (never a splice) */
Test(api_contracts, range_of_another_representation_refused) {
  origin_start();
  paths_init();
  partial_output(100000, "\"v0\"");
  o.ignore_if_range = 1;
  mhttp_xfer_stats st;
  cr_assert_eq(fetch(1, &st), MHTTP_E_RESUME);
  struct stat sb;
  cr_assert_eq(stat(out_path, &sb), 0);
  cr_assert_eq(sb.st_size, 100000, "the output is as it was");
  origin_stop();
}

/* The periodic save (libuv's thread pool) names what is on disk while the transfer runs, within
 * about a second of the bytes' arrival; the transfer freed with a save in flight frees cleanly */
Test(api_contracts, periodic_save_while_running) {
  origin_start();
  paths_init();
  o.cut = 100000;
  mhttp_session *s;
  mhttp_xfer *x;
  char url[64], text[512] = "";
  snprintf(url, sizeof url, "http://127.0.0.1:%d/f", o.port);
  cr_assert_eq(mhttp_session_new(0, &s), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_new(s, url, &x), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "output", out_path), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_start(x), MHTTP_OK);
  for (int i = 0; i < 300 && !strstr(text, "range 0 100000\n"); i++) {
    mhttp_session_wait(s, 10);
    FILE *f = fopen(resume_path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = 0;
    if (f)
      fclose(f);
  }
  cr_assert(strstr(text, "validator \"v1\"\nrange 0 100000\n"), "%s", text);
  cr_assert_eq(mhttp_xfer_result(x), MHTTP_E_BUSY, "still running");
  mhttp_xfer_free(x);
  mhttp_session_free(s);
  unlink(out_path);
  unlink(resume_path);
  origin_stop();
}

/* limit-rate on a transfer that reads its answer itself, in its own loop thread: held at the
 * rate (a bound only slowness cannot break: at most the burst and the rate's bytes by then),
 * a bad value refused while it runs, and lifted from the caller's thread it completes exact. */
Test(api_contracts, limit_rate_held_then_lifted_while_running) {
  origin_start();
  paths_init();
  mhttp_session *s;
  mhttp_xfer *x;
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%d/f", o.port);
  cr_assert_eq(mhttp_session_new(MHTTP_SESSION_THREAD, &s), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_new(s, url, &x), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "output", out_path), MHTTP_OK);
  cr_assert_eq(mhttp_xfer_setopt(x, "limit-rate", "32k"), MHTTP_OK); /* 256 KiB: 8 s */
  cr_assert_eq(mhttp_xfer_start(x), MHTTP_OK);
  cr_assert_eq(mhttp_session_wait(s, 500), MHTTP_E_TIMEOUT, "held by the limit");
  mhttp_xfer_stats st = {.size = sizeof st};
  cr_assert_eq(mhttp_xfer_stats_get(x, &st), MHTTP_OK);
  cr_assert_leq(st.done, 4096 + 32768 * (st.elapsed + 0.2), "%llu bytes in %.3f s", (unsigned long long)st.done,
                st.elapsed);
  cr_assert_eq(mhttp_xfer_setopt(x, "limit-rate", "fast"), MHTTP_E_OPTION);
  cr_assert(strstr(mhttp_xfer_errmsg(x), "limit-rate"), "%s", mhttp_xfer_errmsg(x));
  cr_assert_eq(mhttp_xfer_setopt(x, "output", "/tmp/other"), MHTTP_E_INVAL, "only limit-rate changes once started");
  cr_assert_eq(mhttp_xfer_setopt(x, "limit-rate", "0"), MHTTP_OK);
  cr_assert_eq(mhttp_session_wait(s, 5000), MHTTP_OK, "lifted: the rest at once");
  cr_assert_eq(mhttp_xfer_result(x), MHTTP_OK, "%s", mhttp_xfer_errmsg(x));
  cr_assert_eq(mhttp_xfer_setopt(x, "limit-rate", "1M"), MHTTP_OK, "ended: no effect");
  output_exact();
  mhttp_xfer_free(x);
  mhttp_session_free(s);
  unlink(out_path);
  origin_stop();
}
