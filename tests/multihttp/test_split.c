/* Probe state machine of range splitting over real loopback sockets (one path): canned origin answers, checked byte for byte on both sides. */
#include <criterion/criterion.h>
#include <pthread.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mh_config.h"
#include "mh_conn.h"
#include "mh_engine.h"
#include "mh_log.h"
#include "handoff.h"
#include "sockio.h"

struct pair {
  int app, srv, ls;
};

static struct mh_config cfg;
static struct mh_engine_hooks hooks;
static int one_path_split = 1; /* hooks.split_one_path for the next session */
static uint64_t min_split;     /* the next session's min_split_size (0: the default) */

/* keep_listener: the test accepts a second connection (a fresh one the engine opens). The
 * origin is on loopback, the one path to it: split_one_path makes the engine split anyway. */
static struct pair start_session(int keep_listener) {
  mh_config_defaults(&cfg); /* splitting on, INIT 32 KiB */
  /* the host's store would carry one test's notes into the next: an object whose probe a
   * test's origin reset is asked whole for 30 minutes, by any process */
  snprintf(cfg.metrics_store, sizeof cfg.metrics_store, "off");
  if (min_split)
    cfg.min_split_size = min_split;
  hooks.cfg = &cfg;
  hooks.split_one_path = one_path_split;
  if (getenv("MH_TEST_LOG")) /* MH_TEST_LOG=1: the engine's debug log on stderr */
    mh_log_setup(MH_LOG_DEBUG, 2, write);
  test_engine_with(&hooks);
  int ls, srv;
  int up = loopback_connect(&srv, &ls);
  if (!keep_listener) {
    close(ls);
    ls = -1;
  } else {
    timeouts(ls);
  }
  int app = hand_to_engine(up);
  timeouts(app);
  timeouts(srv);
  return (struct pair){app, srv, ls};
}

/* One request head (up to the blank line) from the origin's side, NUL-terminated. */
static void recv_head(int fd, char *buf, size_t cap) {
  size_t n = 0;
  while (n + 1 < cap) {
    ssize_t r = recv(fd, buf + n, 1, 0);
    cr_assert(r == 1, "request head cut after %zu bytes", n);
    n++;
    if (n >= 4 && !memcmp(buf + n - 4, "\r\n\r\n", 4))
      break;
  }
  buf[n] = 0;
}

static char body[100000];
static void fill(void) {
  for (size_t i = 0; i < sizeof body; i++)
    body[i] = (char)('a' + (i * 7 + i / 251) % 26);
}

/* Sends a 206 for [first, last] of body (total bytes) with ETag etag. */
static void send_206(int fd, size_t first, size_t last, size_t total, const char *etag) {
  char h[512];
  snprintf(h, sizeof h,
           "HTTP/1.1 206 Partial Content\r\nServer: canned\r\nETag: %s\r\nContent-Range: bytes %zu-%zu/%zu\r\n"
           "Content-Length: %zu\r\nX-Order: kept\r\n\r\n",
           etag, first, last, total, last - first + 1);
  send_str(fd, h);
  send_all(fd, body + first, last - first + 1);
}

static const char *REQ = "GET /f HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n";

/* The range a request head asks, [*f, *l] of an object of total bytes ("bytes=f-" runs to
 * its end). Returns 1 for an open-ended range. */
static int range_of(const char *head, size_t total, size_t *f, size_t *l) {
  const char *r = strstr(head, "Range: bytes=");
  cr_assert(r, "request without Range: %s", head);
  char *e;
  *f = strtoull(r + 13, &e, 10);
  cr_assert(*e == '-', "request: %s", head);
  if (e[1] == '\r') {
    *l = total - 1;
    return 1;
  }
  *l = strtoull(e + 1, NULL, 10);
  return 0;
}

/* Serves the ranges fd asks of body (total bytes, ETag etag) until every byte from `from` on
 * was sent. The first is the object's end, open-ended (its answer checks the probe's total
 * before the head goes out); then lowest first up to it. */
static void serve_rest(int fd, size_t from, size_t total, const char *etag) {
  char req[4096];
  size_t f, l, end_from;
  recv_head(fd, req, sizeof req);
  cr_assert(range_of(req, total, &end_from, &l), "the end first, open-ended: %s", req);
  cr_assert(end_from >= from && end_from + 32768 >= total, "the end's first chunk: %s", req);
  cr_assert(strstr(req, "If-Range: ") && !strstr(req, "close"), "request: %s", req);
  send_206(fd, end_from, l, total, etag);
  size_t next = from;
  while (next < end_from) {
    recv_head(fd, req, sizeof req);
    cr_assert(!range_of(req, total, &f, &l) && f == next && l < end_from, "request: %s", req);
    cr_assert(strstr(req, "If-Range: ") && !strstr(req, "close"), "request: %s", req);
    send_206(fd, f, l, total, etag);
    next = l + 1;
  }
}

/* A session whose program sent REQ; the probe reached the origin (its head in req). */
static struct pair probed(int keep_listener, char *req, size_t cap) {
  struct pair p = start_session(keep_listener);
  send_str(p.app, REQ);
  recv_head(p.srv, req, cap);
  return p;
}

/* The program's next n bytes are the first n of body. */
static void expect_body(int app, size_t n) {
  static char got[sizeof body];
  recv_exact(app, got, n);
  cr_assert(!memcmp(got, body, n));
}

Test(split, probe_carries_range_and_206_becomes_200) {
  fill();
  struct pair p = start_session(0);
  send_str(p.app, REQ);
  char req[4096];
  recv_head(p.srv, req, sizeof req);
  cr_assert_str_eq(req, "GET /f HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\nRange: bytes=0-32767\r\n\r\n");
  send_206(p.srv, 0, 9, 10, "\"e1\"");
  expect_str(p.app, "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: 10\r\nX-Order: kept\r\n\r\n");
  char got[10];
  recv_exact(p.app, got, 10);
  cr_assert(!memcmp(got, body, 10));
}

Test(split, object_larger_than_probe_is_completed_with_if_range) {
  fill();
  struct pair p = start_session(0);
  send_str(p.app, REQ);
  char req[4096];
  recv_head(p.srv, req, sizeof req);
  cr_assert(strstr(req, "Range: bytes=0-32767\r\n"));
  send_206(p.srv, 0, 32767, 100000, "\"e1\"");
  /* the rest is asked for on the same connection, pipelined, with If-Range; one path only
   * (loopback is no configured interface), so every range comes here */
  serve_rest(p.srv, 32768, 100000, "\"e1\"");
  expect_str(p.app,
             "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: 100000\r\nX-Order: kept\r\n\r\n");
  static char got[100000];
  recv_exact(p.app, got, sizeof got);
  cr_assert(!memcmp(got, body, sizeof got));
}

Test(split, a_200_to_the_probe_is_relayed_verbatim) {
  fill();
  struct pair p = start_session(0);
  send_str(p.app, REQ);
  char req[4096];
  recv_head(p.srv, req, sizeof req);
  const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Full: yes\r\n\r\nhello";
  send_str(p.srv, resp);
  expect_str(p.app, resp);
  /* the connection stays usable: the next request is relayed or split as usual */
  send_str(p.app, REQ);
  recv_head(p.srv, req, sizeof req);
  cr_assert(strstr(req, "Range: bytes=0-32767"));
}

Test(split, chunked_206_is_dechunked_under_content_length) {
  fill();
  struct pair p = start_session(0);
  send_str(p.app, REQ);
  char req[4096];
  recv_head(p.srv, req, sizeof req);
  send_str(p.srv, "HTTP/1.1 206 Partial Content\r\nETag: \"e\"\r\nContent-Range: bytes 0-6/7\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n");
  expect_str(p.app, "HTTP/1.1 200 OK\r\nETag: \"e\"\r\nContent-Length: 7\r\n\r\nabcdefg");
}

Test(split, a_416_is_resent_without_range) {
  struct pair p = start_session(0);
  send_str(p.app, REQ);
  char req[4096];
  recv_head(p.srv, req, sizeof req);
  send_str(p.srv, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */0\r\nContent-Length: 3\r\n\r\nno!");
  recv_head(p.srv, req, sizeof req);
  cr_assert_str_eq(req, REQ, "the program's request, unchanged");
  const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  send_str(p.srv, resp);
  expect_str(p.app, resp);
}

Test(split, program_range_request_is_relayed_untouched) {
  struct pair p = start_session(0);
  const char *r = "GET /f HTTP/1.1\r\nHost: x\r\nRange: bytes=5-9\r\n\r\n";
  send_str(p.app, r);
  char req[4096];
  recv_head(p.srv, req, sizeof req);
  cr_assert_str_eq(req, r);
  const char *resp = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\nfghij";
  send_str(p.srv, resp);
  expect_str(p.app, resp);
}

Test(split, changed_representation_restarts_with_the_original_request) {
  fill();
  struct pair p = start_session(1);
  send_str(p.app, REQ);
  char req[4096];
  recv_head(p.srv, req, sizeof req);
  send_206(p.srv, 0, 32767, 100000, "\"v1\"");
  recv_head(p.srv, req, sizeof req);
  cr_assert(strstr(req, "If-Range: \"v1\""));
  /* If-Range failed: the origin sends its new version whole. Nothing reached the program
   * yet, so the engine starts over with the program's own request on a fresh connection */
  send_str(p.srv, "HTTP/1.1 200 OK\r\nETag: \"v2\"\r\nContent-Length: 4\r\n\r\nnew!");
  int s2 = accept(p.ls, NULL, NULL);
  cr_assert(s2 >= 0, "no fresh connection: %s", strerror(errno));
  timeouts(s2);
  recv_head(s2, req, sizeof req);
  cr_assert_str_eq(req, REQ);
  const char *resp = "HTTP/1.1 200 OK\r\nETag: \"v3\"\r\nContent-Length: 6\r\n\r\nwhole!";
  send_str(s2, resp);
  expect_str(p.app, resp);
}

Test(split, connection_close_probe_continues_on_a_fresh_connection) {
  fill();
  struct pair p = start_session(1);
  const char *r = "GET /f HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  send_str(p.app, r);
  char req[4096];
  recv_head(p.srv, req, sizeof req);
  cr_assert(strstr(req, "Connection: close\r\n"), "the probe is the program's request + Range");
  char h[512];
  snprintf(h, sizeof h,
           "HTTP/1.1 206 Partial Content\r\nETag: \"e\"\r\nConnection: close\r\n"
           "Content-Range: bytes 0-32767/50000\r\nContent-Length: 32768\r\n\r\n");
  send_str(p.srv, h);
  send_all(p.srv, body, 32768);
  close(p.srv);
  /* the rest comes over a new (keep-alive) connection on the same path */
  int s2 = accept(p.ls, NULL, NULL);
  cr_assert(s2 >= 0, "no fresh connection: %s", strerror(errno));
  timeouts(s2);
  serve_rest(s2, 32768, 50000, "\"e\"");
  expect_str(p.app, "HTTP/1.1 200 OK\r\nETag: \"e\"\r\nConnection: close\r\nContent-Length: 50000\r\n\r\n");
  static char got[50000];
  recv_exact(p.app, got, sizeof got);
  cr_assert(!memcmp(got, body, sizeof got));
}

/* ---- never worse than plain: answers the engine cannot use ------------------------------ */

/* The connection the engine opens instead of the program's (accepted on the kept listener). */
static int accept_fresh(struct pair *p) {
  int s = accept(p->ls, NULL, NULL);
  cr_assert(s >= 0, "no fresh connection: %s", strerror(errno));
  timeouts(s);
  return s;
}

/* The probe's answer was unusable: the program's request goes out unchanged on connection s,
 * and the program gets exactly that answer. */
static void expect_resent_and_relayed(struct pair *p, int s) {
  char req[4096];
  recv_head(s, req, sizeof req);
  cr_assert_str_eq(req, REQ, "the program's request, unchanged");
  const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nX-Plain: 1\r\n\r\nabcdef";
  send_str(s, resp);
  expect_str(p->app, resp);
}

Test(split, one_path_to_the_server_sends_the_request_unchanged) {
  one_path_split = 0; /* as the shim runs: loopback is no second path */
  char req[4096];
  struct pair p = probed(0, req, sizeof req);
  cr_assert_str_eq(req, REQ, "no probe where no second path could help");
  const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  send_str(p.srv, resp);
  expect_str(p.app, resp);
}

/* The probe is answered with `answer` (keep-alive, unusable, its framing not to be trusted):
 * the program's request goes out unchanged on a new connection and its answer is relayed. */
static void probe_answer_is_replaced(const char *answer) {
  char req[4096];
  struct pair p = probed(1, req, sizeof req);
  send_str(p.srv, answer);
  expect_resent_and_relayed(&p, accept_fresh(&p));
}

Test(split, a_206_claiming_more_than_the_object_resends_on_a_new_connection) {
  /* GNU wget's test server: Content-Range past the total, Content-Length of the asked range,
   * then only the object's 6 bytes, keep-alive: skipping its body in place would wait forever */
  probe_answer_is_replaced("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-32767/6\r\n"
                           "Content-Length: 32767\r\n\r\nabcdef");
}

Test(split, a_403_to_the_range_resends_the_program_request) {
  probe_answer_is_replaced("HTTP/1.1 403 Forbidden\r\nContent-Length: 9\r\n\r\nforbidden");
}

Test(split, a_200_naming_a_range_resends_the_program_request) {
  probe_answer_is_replaced("HTTP/1.1 200 OK\r\nContent-Range: bytes 0-2/6\r\nContent-Length: 3\r\n\r\nabc");
}

Test(split, an_unparsable_probe_answer_resends_the_program_request) {
  /* a duplicated Content-Length: llhttp refuses it, as a careful client would */
  probe_answer_is_replaced("HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/10\r\nContent-Length: 10\r\n"
                           "Content-Length: 11\r\n\r\n0123456789");
}

Test(split, without_a_strong_validator_the_object_is_not_split) {
  fill();
  char req[4096];
  struct pair p = probed(0, req, sizeof req);
  /* a weak ETag cannot tell two versions apart: the probe's bytes are skipped and the program's
   * own request goes out on the same connection */
  send_206(p.srv, 0, 32767, 100000, "W/\"w\"");
  expect_resent_and_relayed(&p, p.srv);
}

Test(split, early_hints_before_the_probe_answer_reach_the_program) {
  fill();
  char req[4096];
  struct pair p = probed(0, req, sizeof req);
  const char *hints = "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n";
  send_str(p.srv, hints);
  expect_str(p.app, hints); /* as it comes: a program may read it as if it were the answer */
  send_206(p.srv, 0, 9, 10, "\"e1\"");
  expect_str(p.app, "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: 10\r\nX-Order: kept\r\n\r\n");
  expect_body(p.app, 10);
}

Test(split, a_large_response_head_is_parsed_whole) {
  fill();
  char req[4096];
  struct pair p = probed(0, req, sizeof req);
  static char head[64 * 1024], want[64 * 1024];
  size_t n = (size_t)snprintf(head, sizeof head,
                              "HTTP/1.1 206 Partial Content\r\nETag: \"e1\"\r\n"
                              "Content-Range: bytes 0-9/10\r\nContent-Length: 10\r\n");
  size_t w = (size_t)snprintf(want, sizeof want, "HTTP/1.1 200 OK\r\nETag: \"e1\"\r\nContent-Length: 10\r\n");
  for (int i = 0; i < 300; i++) { /* 300 lines, 30 KB: past the bounds of the old parser */
    char line[128];
    int l = snprintf(line, sizeof line, "X-Big-%03d: %080d\r\n", i, i);
    memcpy(head + n, line, (size_t)l), n += (size_t)l;
    memcpy(want + w, line, (size_t)l), w += (size_t)l;
  }
  memcpy(head + n, "\r\n", 2), n += 2;
  memcpy(want + w, "\r\n", 2), w += 2;
  send_all(p.srv, head, n);
  send_all(p.srv, body, 10);
  want[w] = 0;
  expect_str(p.app, want);
  expect_body(p.app, 10);
}

struct big_send {
  int fd;
  const char *data;
  size_t len;
};
static void *big_sender(void *arg) {
  struct big_send *b = arg;
  send_all(b->fd, b->data, b->len);
  return NULL;
}

/* A probe answer larger than one read of the engine (a 200 that ignores the range, 600 KB sent
 * in one go) is read in pieces no larger than the read buffer and relayed exactly. The engine
 * once asked one recv() for all the room its probe copy had left (512 KiB) into a 128 KiB
 * buffer: ASan (this tree) reports that write, and four rounds make a large read likely. */
Test(split, a_probe_answer_larger_than_one_read_is_relayed_exactly) {
  static char resp[600064], got[600000];
  const size_t len = 600000;
  int h = snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", len);
  for (size_t i = 0; i < len; i++)
    resp[h + i] = (char)('A' + (i * 13 + i / 4093) % 26);
  struct pair p = start_session(0);
  for (int round = 0; round < 4; round++) {
    char req[4096];
    send_str(p.app, REQ);
    recv_head(p.srv, req, sizeof req);
    struct big_send b = {p.srv, resp, (size_t)h + len};
    pthread_t t;
    cr_assert(pthread_create(&t, NULL, big_sender, &b) == 0);
    char head[64];
    memcpy(head, resp, (size_t)h);
    head[h] = 0;
    expect_str(p.app, head);
    recv_exact(p.app, got, len);
    pthread_join(t, NULL);
    cr_assert(!memcmp(got, resp + h, len), "round %d: the relayed body differs", round);
  }
}

/* The probe of a 100000-byte object answered; *p's program connection then asks the object's
 * end, which is answered (it confirms the probe: the head goes out), and then its first range
 * from byte 32768 (its head in req): returns that range's last byte. */
static size_t first_range(struct pair *p, char *req, size_t cap) {
  fill();
  *p = probed(1, req, cap);
  send_206(p->srv, 0, 32767, 100000, "\"e1\"");
  recv_head(p->srv, req, cap);
  size_t f, l;
  cr_assert(range_of(req, 100000, &f, &l) && f == 100000 - 32768, "the end first: %s", req);
  send_206(p->srv, f, l, 100000, "\"e1\"");
  recv_head(p->srv, req, cap);
  cr_assert(!range_of(req, 100000, &f, &l) && f == 32768 && l < 100000 - 32768, "request: %s", req);
  return l;
}

Test(split, an_unusable_later_range_makes_the_rest_come_plainly) {
  char req[4096];
  struct pair p;
  first_range(&p, req, sizeof req);
  /* the end confirmed the representation (the head goes out); the next range is answered
   * with a shifted Content-Range: the rest is asked as one open-ended range on a new
   * connection, the way a resuming client asks */
  char h[256];
  snprintf(h, sizeof h,
           "HTTP/1.1 206 Partial Content\r\nETag: \"e1\"\r\nContent-Range: bytes %d-%d/100000\r\n"
           "Content-Length: 10\r\n\r\n",
           32769, 32778);
  send_str(p.srv, h);
  send_all(p.srv, body + 32769, 10);
  int s2 = accept_fresh(&p);
  recv_head(s2, req, sizeof req);
  cr_assert(strstr(req, "Range: bytes=32768-\r\n"), "request: %s", req);
  cr_assert(strstr(req, "If-Range: \"e1\"\r\n"));
  send_206(s2, 32768, 99999, 100000, "\"e1\"");
  expect_str(p.app,
             "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: 100000\r\nX-Order: kept\r\n\r\n");
  expect_body(p.app, sizeof body);
}

/* The probe claims 100000 bytes; the answer for the object's end, asked first and open-ended,
 * says otherwise: nothing reached the program, whose own request goes out unchanged. */
static void end_disagrees(const char *answer_fmt, int a, int b) {
  char req[4096];
  fill();
  struct pair p = probed(1, req, sizeof req);
  send_206(p.srv, 0, 32767, 100000, "\"e1\"");
  recv_head(p.srv, req, sizeof req);
  size_t f, l;
  cr_assert(range_of(req, 100000, &f, &l) && f == 100000 - 32768, "the end first: %s", req);
  char h[512];
  snprintf(h, sizeof h, answer_fmt, a, b);
  send_str(p.srv, h);
  expect_resent_and_relayed(&p, accept_fresh(&p));
}

Test(split, an_object_shorter_than_its_claimed_total_is_fetched_plainly) {
  /* a total 4096 too big on every range answer (the probe's included): the end is past it */
  end_disagrees("HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */%d\r\nContent-Length: %d\r\n\r\n", 95904,
                0);
}

Test(split, an_object_longer_than_its_claimed_total_is_fetched_plainly) {
  /* a total too small: "bytes=67232-" brings more than the claim (a closed range would not) */
  end_disagrees("HTTP/1.1 206 Partial Content\r\nETag: \"e1\"\r\nContent-Range: bytes 67232-%d/100000\r\n"
                "Content-Length: %d\r\n\r\n",
                104095, 36864);
}

/* Sends a 206 head for [f, l] of body with its full length, 1000 bytes of the body, then a
 * FIN (few enough that the end, held since it was asked first, leaves a gap). */
static void send_206_cut(int fd, size_t f, size_t l) {
  char h[256];
  snprintf(h, sizeof h,
           "HTTP/1.1 206 Partial Content\r\nETag: \"e1\"\r\nContent-Range: bytes %zu-%zu/100000\r\n"
           "Content-Length: %zu\r\n\r\n",
           f, l, l - f + 1);
  send_str(fd, h);
  send_all(fd, body + f, 1000);
  shutdown(fd, SHUT_WR); /* a close, not a reset: the server's error, not the path's */
}

Test(split, range_answers_cut_short_make_the_rest_come_by_the_program_request) {
  char req[4096];
  struct pair p;
  size_t last = first_range(&p, req, sizeof req); /* the end confirmed: the head went out */
  send_206_cut(p.srv, 32768, last);
  /* the rest as one range, the way a resuming client asks: cut short again */
  int s2 = accept_fresh(&p);
  recv_head(s2, req, sizeof req);
  size_t f2, l2;
  cr_assert(range_of(req, 100000, &f2, &l2), "an open-ended range: %s", req);
  send_206_cut(s2, f2, 99999);
  /* the origin's ranges cannot be had: the program's own request, its first bytes dropped */
  int s3 = accept_fresh(&p);
  recv_head(s3, req, sizeof req);
  cr_assert_str_eq(req, REQ);
  send_str(s3, "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: 100000\r\n\r\n");
  send_all(s3, body, sizeof body);
  expect_str(p.app,
             "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: 100000\r\nX-Order: kept\r\n\r\n");
  expect_body(p.app, sizeof body);
  /* the origin's close of the program's connection came with an answer of ours: the answer
   * to the program's request kept it open, so the program's connection stays open */
  struct pollfd pf = {.fd = p.app, .events = POLLIN};
  cr_assert_eq(poll(&pf, 1, 500), 0, "the program's connection was ended (revents %#x)", pf.revents);
}

Test(split, a_trickling_connection_stalls_and_its_bytes_come_elsewhere) {
  char req[4096];
  struct pair p;
  size_t last = first_range(&p, req, sizeof req);
  /* slow-loris: the range's head, then a byte every 50 ms (a stall clock that any byte
   * restarted never fired) */
  pid_t kid = fork();
  cr_assert(kid >= 0);
  if (kid == 0) {
    char h[256];
    snprintf(h, sizeof h,
             "HTTP/1.1 206 Partial Content\r\nETag: \"e1\"\r\nContent-Range: bytes 32768-%zu/100000\r\n"
             "Content-Length: %zu\r\n\r\n",
             last, last - 32767);
    send_str(p.srv, h);
    for (int i = 0; i < 80 && send(p.srv, body + 32768 + i, 1, MSG_NOSIGNAL) == 1; i++)
      usleep(50000);
    _exit(0);
  }
  /* within the stall limit (1 s on loopback) the missing bytes are asked on a new connection */
  int s2 = accept_fresh(&p);
  struct pollfd pf = {.fd = s2, .events = POLLIN};
  while (poll(&pf, 1, 500) == 1) { /* every range it asks, until it asks no more */
    recv_head(s2, req, sizeof req);
    size_t f, l;
    range_of(req, 100000, &f, &l);
    cr_assert(f >= 32768 && l < 100000, "request: %s", req);
    send_206(s2, f, l, 100000, "\"e1\"");
  }
  expect_str(p.app,
             "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: 100000\r\nX-Order: kept\r\n\r\n");
  expect_body(p.app, sizeof body);
  kill(kid, SIGKILL);
  waitpid(kid, NULL, 0);
}

/* ---- origins that end or drop requests -------------------------------------------------- */

enum origin_mode {
  ORIGIN_KEEP,          /* like nginx: keep-alive 206s; each request (the engine's own: the
                           tests answer the probe themselves) must be HTTP/1.1 keep-alive
                           with If-Range, within [origin_lo, origin_hi] */
  ORIGIN_CLOSE_EACH,    /* every answer says Connection: close, and the connection closes */
  ORIGIN_CLOSE_BODY,    /* ... and its body has no length: it ends with the connection */
  ORIGIN_NOLEN_BODY,    /* no Connection: close, but no length either: the body ends with the
                           connection (the origin would keep it for an answer with a length) */
  ORIGIN_DROP_PIPELINED /* answers the first request of each read, ignores the rest (reads
                           50 ms apart, so that pipelined requests share a read) */
};

static size_t origin_lo, origin_hi = sizeof body - 1;

/* Answers one range request head on fd as the mode says. 1 when fd was closed. */
static int origin_answer(int fd, const char *head, enum origin_mode mode) {
  size_t f, l;
  range_of(head, sizeof body, &f, &l);
  if (l >= sizeof body)
    l = sizeof body - 1;
  if (mode == ORIGIN_KEEP) {
    cr_assert(f >= origin_lo && l <= origin_hi, "outside [%zu, %zu]: %s", origin_lo, origin_hi, head);
    cr_assert(strstr(head, " HTTP/1.1\r\n") && !strstr(head, "close") && strstr(head, "If-Range: \"e1\""),
              "request: %s", head);
  }
  if (mode == ORIGIN_DROP_PIPELINED || mode == ORIGIN_KEEP) {
    send_206(fd, f, l, sizeof body, "\"e1\"");
    return 0;
  }
  char h[256];
  snprintf(h, sizeof h, "HTTP/1.1 206 Partial Content\r\nETag: \"e1\"\r\nContent-Range: bytes %zu-%zu/%zu\r\n%s", f, l,
           sizeof body, mode == ORIGIN_NOLEN_BODY ? "" : "Connection: close\r\n");
  send_str(fd, h);
  if (mode == ORIGIN_CLOSE_EACH) {
    snprintf(h, sizeof h, "Content-Length: %zu\r\n", l - f + 1);
    send_str(fd, h);
  }
  send_str(fd, "\r\n");
  send_all(fd, body + f, l - f + 1);
  close(fd);
  return 1;
}

/* A canned origin on p's listener and connections: serves every range asked until nothing
 * happens for 3 s (well past the engine's 1 s stall limit and its 100 ms tick, even on a
 * loaded machine). Returns how many connections came. */
static int origin_serve(struct pair *p, enum origin_mode mode) {
  struct pollfd pf[32];
  static char in[32][8192];
  size_t inlen[32] = {0};
  int n = 2, conns = 1;
  pf[0] = (struct pollfd){.fd = p->ls, .events = POLLIN};
  pf[1] = (struct pollfd){.fd = p->srv, .events = POLLIN};
  while (poll(pf, (nfds_t)n, 3000) > 0) {
    if (pf[0].revents & POLLIN) {
      int s = accept(p->ls, NULL, NULL);
      cr_assert(s >= 0 && n < 32);
      timeouts(s);
      inlen[n] = 0;
      pf[n++] = (struct pollfd){.fd = s, .events = POLLIN};
      conns++;
    }
    for (int i = 1; i < n; i++) {
      if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP)))
        continue;
      if (mode == ORIGIN_DROP_PIPELINED)
        usleep(50000); /* requests pipelined meanwhile arrive in this one read */
      ssize_t k = recv(pf[i].fd, in[i] + inlen[i], sizeof in[i] - 1 - inlen[i], 0);
      if (k <= 0) {
        close(pf[i].fd);
        pf[i].fd = -1;
        continue;
      }
      inlen[i] += (size_t)k;
      in[i][inlen[i]] = 0;
      int first = 1;
      char *end;
      while ((end = strstr(in[i], "\r\n\r\n"))) {
        *end = 0;
        int closed = (first || mode != ORIGIN_DROP_PIPELINED) && origin_answer(pf[i].fd, in[i], mode);
        first = 0;
        size_t used = (size_t)(end + 4 - in[i]);
        memmove(in[i], end + 4, inlen[i] - used + 1);
        inlen[i] -= used;
        if (closed) {
          pf[i].fd = -1;
          break;
        }
      }
    }
  }
  return conns;
}

/* After origin_serve: the program got the whole object as one 200 with head. */
static void expect_whole_object(struct pair *p, const char *head) {
  char want[256];
  snprintf(want, sizeof want, head, sizeof body);
  expect_str(p->app, want);
  expect_body(p->app, sizeof body);
}

Test(split, an_origin_that_closes_after_every_answer_still_serves_the_object) {
  fill();
  struct pair p = start_session(1);
  send_str(p.app, REQ);
  int conns = origin_serve(&p, ORIGIN_CLOSE_EACH);
  /* one range per connection, each large enough to pay for its handshake: the probe on the
   * program's, the object's last bytes on the next, the rest on a third (or a few more) */
  cr_assert(conns >= 3 && conns <= 5, "each range on its own connection (%d)", conns);
  expect_whole_object(&p, "HTTP/1.1 200 OK\r\nETag: \"e1\"\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n");
}

Test(split, close_delimited_range_bodies_end_with_their_connection) {
  fill();
  struct pair p = start_session(1);
  send_str(p.app, REQ);
  origin_serve(&p, ORIGIN_CLOSE_BODY);
  expect_whole_object(&p, "HTTP/1.1 200 OK\r\nETag: \"e1\"\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n");
}

Test(split, close_delimited_range_bodies_leave_the_program_connection_open) {
  fill();
  struct pair p = start_session(1);
  send_str(p.app, REQ);
  origin_serve(&p, ORIGIN_NOLEN_BODY);
  expect_whole_object(&p, "HTTP/1.1 200 OK\r\nETag: \"e1\"\r\nContent-Length: %zu\r\n\r\n");
  /* the origin closed only because our 206s had no length: for the program's 200 with a length
   * it would not have, so the program's connection stays open for its next request */
  struct pollfd pf = {.fd = p.app, .events = POLLIN};
  cr_assert_eq(poll(&pf, 1, 500), 0, "the program's connection was ended (revents %#x)", pf.revents);
}

Test(split, an_origin_that_drops_pipelined_requests_gets_one_at_a_time) {
  fill();
  struct pair p = start_session(1);
  send_str(p.app, REQ);
  origin_serve(&p, ORIGIN_DROP_PIPELINED);
  expect_whole_object(
      &p, "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: %zu\r\nX-Order: kept\r\n\r\n");
}

Test(split, when_no_attempt_brings_the_rest_the_program_sees_the_origin_close) {
  char req[4096];
  struct pair p;
  size_t last = first_range(&p, req, sizeof req);
  send_206_cut(p.srv, 32768, last); /* the head and 1000 bytes go out, then a close */
  /* the origin closes every later connection as soon as its request arrives: a few
   * reconnects, then plain attempts, then the program gets the end the origin gave */
  struct pollfd pf = {.fd = p.ls, .events = POLLIN};
  int tries = 0;
  while (poll(&pf, 1, 3000) == 1 && tries < 30) {
    int s = accept_fresh(&p);
    recv_head(s, req, sizeof req);
    close(s);
    tries++;
  }
  cr_assert(tries >= 3 && tries < 30, "%d attempts", tries);
  expect_str(p.app,
             "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: 100000\r\nX-Order: kept\r\n\r\n");
  expect_body(p.app, 32768 + 1000);
  char c;
  errno = 0;
  cr_assert_eq(recv(p.app, &c, 1, 0), 0, "a close (truncated body), not %s", strerror(errno));
}

/* ---- a program's own Range; HTTP/1.0 (issue 19) ------------------------------------------ */

/* The program's next n bytes are body[first, first + n). */
static void expect_span(int app, size_t first, size_t n) {
  static char got[sizeof body];
  recv_exact(app, got, n);
  cr_assert(!memcmp(got, body + first, n), "bytes differ");
}

Test(split, program_range_to_the_end_is_split_into_its_own_206) {
  fill();
  struct pair p = start_session(1);
  send_str(p.app, "GET /f HTTP/1.1\r\nHost: x\r\nRange: bytes=20000-\r\nIf-Range: \"e1\"\r\nUser-Agent: t\r\n\r\n");
  char req[4096];
  recv_head(p.srv, req, sizeof req);
  cr_assert_str_eq(
      req, "GET /f HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\nRange: bytes=20000-52767\r\nIf-Range: \"e1\"\r\n\r\n",
      "the probe starts the program's span and carries its If-Range");
  send_206(p.srv, 20000, 52767, sizeof body, "\"e1\"");
  origin_lo = 20000;
  origin_serve(&p, ORIGIN_KEEP);
  origin_lo = 0;
  expect_str(p.app, "HTTP/1.1 206 Partial Content\r\nServer: canned\r\nETag: \"e1\"\r\n"
                    "Content-Range: bytes 20000-99999/100000\r\nContent-Length: 80000\r\nX-Order: kept\r\n\r\n");
  expect_span(p.app, 20000, 80000);
}

Test(split, program_closed_range_is_split_and_never_asked_past) {
  fill();
  min_split = 1000; /* the span (70 000 B) is below the default 256 KiB */
  struct pair p = start_session(1);
  min_split = 0;
  send_str(p.app, "GET /f HTTP/1.1\r\nHost: x\r\nRange: bytes=20000-89999\r\n\r\n");
  char req[4096];
  recv_head(p.srv, req, sizeof req);
  cr_assert_str_eq(req, "GET /f HTTP/1.1\r\nHost: x\r\nRange: bytes=20000-52767\r\n\r\n");
  send_206(p.srv, 20000, 52767, sizeof body, "\"e1\"");
  origin_lo = 20000;
  origin_hi = 89999;
  origin_serve(&p, ORIGIN_KEEP);
  origin_lo = 0;
  origin_hi = sizeof body - 1;
  expect_str(p.app, "HTTP/1.1 206 Partial Content\r\nServer: canned\r\nETag: \"e1\"\r\n"
                    "Content-Range: bytes 20000-89999/100000\r\nContent-Length: 70000\r\nX-Order: kept\r\n\r\n");
  expect_span(p.app, 20000, 70000);
  /* keep-alive: the program's next request finds its connection working */
  struct pollfd pf = {.fd = p.app, .events = POLLIN};
  cr_assert_eq(poll(&pf, 1, 300), 0, "the program's connection was ended (revents %#x)", pf.revents);
}

Test(split, http10_request_gets_http10_framing_and_its_close) {
  fill();
  struct pair p = start_session(1);
  const char *r = "GET /f HTTP/1.0\r\nHost: x\r\nUser-Agent: t\r\n\r\n";
  send_str(p.app, r);
  char req[4096];
  recv_head(p.srv, req, sizeof req);
  cr_assert_str_eq(req, "GET /f HTTP/1.0\r\nHost: x\r\nUser-Agent: t\r\nRange: bytes=0-32767\r\n\r\n",
                   "the probe is the program's HTTP/1.0 request + Range");
  /* an HTTP/1.0 origin: its answer ends with the connection's close */
  send_str(p.srv, "HTTP/1.0 206 Partial Content\r\nServer: canned\r\nETag: \"e1\"\r\n"
                  "Content-Range: bytes 0-32767/100000\r\nContent-Length: 32768\r\n\r\n");
  send_all(p.srv, body, 32768);
  close(p.srv);
  p.srv = -1;
  origin_serve(&p, ORIGIN_KEEP); /* the rest: HTTP/1.1 keep-alive requests of the engine's own */
  expect_str(p.app, "HTTP/1.0 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: 100000\r\n\r\n");
  expect_body(p.app, sizeof body);
  char c;
  cr_assert_eq(recv(p.app, &c, 1, 0), 0, "the program's connection closes after the answer");
}

Test(split, connection_close_request_closes_even_when_the_origin_keeps_alive) {
  fill();
  struct pair p = start_session(1);
  send_str(p.app, "GET /f HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  char req[4096];
  recv_head(p.srv, req, sizeof req);
  cr_assert_str_eq(req, "GET /f HTTP/1.1\r\nHost: x\r\nConnection: close\r\nRange: bytes=0-32767\r\n\r\n");
  send_206(p.srv, 0, 32767, sizeof body, "\"e1\""); /* keep-alive, though the program said close */
  origin_serve(&p, ORIGIN_KEEP);                    /* nothing more on the program's connection: ours carry the rest */
  expect_str(p.app,
             "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: 100000\r\nX-Order: kept\r\n\r\n");
  expect_body(p.app, sizeof body);
  char c;
  cr_assert_eq(recv(p.app, &c, 1, 0), 0, "the program asked for close: it sees one after the answer");
}
