/* Probe state machine of range splitting over real loopback sockets (one path): canned origin answers, checked byte for byte on both sides. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "mh_config.h"
#include "mh_conn.h"
#include "mh_engine.h"
#include "handoff.h"
#include "sockio.h"

struct pair {
  int app, srv, ls;
};

static struct mh_config cfg;
static struct mh_engine_hooks hooks;


/* keep_listener: the test accepts a second connection (a fresh one the engine opens). */
static struct pair start_session(int keep_listener) {
  mh_config_defaults(&cfg);  /* splitting on, INIT 32 KiB */
  hooks.cfg = &cfg;
  mh_engine_set_hooks(&hooks);
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
   * (loopback is no configured interface), so every range comes here, in order */
  size_t next = 32768;
  while (next < 100000) {
    recv_head(p.srv, req, sizeof req);
    char want[64];
    snprintf(want, sizeof want, "Range: bytes=%zu-", next);
    cr_assert(strstr(req, want), "request: %s", req);
    cr_assert(strstr(req, "If-Range: \"e1\"\r\n"), "request: %s", req);
    cr_assert(strstr(req, "Connection") == NULL || !strstr(req, "close"));
    size_t last = strtoull(strstr(req, want) + strlen(want), NULL, 10);
    send_206(p.srv, next, last, 100000, "\"e1\"");
    next = last + 1;
  }
  expect_str(p.app, "HTTP/1.1 200 OK\r\nServer: canned\r\nETag: \"e1\"\r\nContent-Length: 100000\r\nX-Order: kept\r\n\r\n");
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
  snprintf(h, sizeof h, "HTTP/1.1 206 Partial Content\r\nETag: \"e\"\r\nConnection: close\r\n"
                        "Content-Range: bytes 0-32767/50000\r\nContent-Length: 32768\r\n\r\n");
  send_str(p.srv, h);
  send_all(p.srv, body, 32768);
  close(p.srv);
  /* the rest comes over a new (keep-alive) connection on the same path */
  int s2 = accept(p.ls, NULL, NULL);
  cr_assert(s2 >= 0, "no fresh connection: %s", strerror(errno));
  timeouts(s2);
  size_t next = 32768;
  while (next < 50000) {
    recv_head(s2, req, sizeof req);
    char want[64];
    snprintf(want, sizeof want, "Range: bytes=%zu-", next);
    cr_assert(strstr(req, want), "request: %s", req);
    cr_assert(!strstr(req, "Connection: close"));
    size_t last = strtoull(strstr(req, want) + strlen(want), NULL, 10);
    send_206(s2, next, last, 50000, "\"e\"");
    next = last + 1;
  }
  expect_str(p.app, "HTTP/1.1 200 OK\r\nETag: \"e\"\r\nConnection: close\r\nContent-Length: 50000\r\n\r\n");
  static char got[50000];
  recv_exact(p.app, got, sizeof got);
  cr_assert(!memcmp(got, body, sizeof got));
}
