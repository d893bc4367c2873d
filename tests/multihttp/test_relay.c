/* Engine relay without the shim: a loopback TCP pair as upstream and a socketpair as the program, checked byte for byte. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
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

/* app: the program's end; srv: the origin's accepted socket. */
struct pair {
  int app, srv;
};

/* These tests are about the relay: range splitting stays off (test_split.c covers it). */
static void relay_only(void) {
  static struct mh_config cfg;
  static struct mh_engine_hooks hooks;
  mh_config_defaults(&cfg);
  cfg.split = 0;
  hooks.cfg = &cfg;
  test_engine_with(&hooks);
}

static struct pair start_session(void) {
  relay_only();
  int ls, srv;
  int up = loopback_connect(&srv, &ls);
  close(ls);
  int app = hand_to_engine(up);
  timeouts(app);
  timeouts(srv);
  return (struct pair){app, srv};
}

/* Next recv returns 0 (EOF) or -1/err. */
static void expect_end(int fd, int err) {
  char c;
  ssize_t r = recv(fd, &c, 1, 0);
  if (err)
    cr_assert(r < 0 && errno == err, "wanted %s, got r=%zd (%s)", strerror(err), r, strerror(errno));
  else
    cr_assert_eq(r, 0, "wanted EOF, got r=%zd (%s)", r, r < 0 ? strerror(errno) : "data");
}

Test(relay, single_request_byte_exact) {
  struct pair p = start_session();
  const char *req = "GET /a HTTP/1.1\r\nHost: x\r\nCookie: secret\r\n\r\n";
  const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello";
  send_str(p.app, req);
  expect_str(p.srv, req);
  send_str(p.srv, resp);
  expect_str(p.app, resp);
}

Test(relay, request_arrives_byte_by_byte) {
  struct pair p = start_session();
  const char *req = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc";
  for (const char *c = req; *c; c++)
    send_all(p.app, c, 1);
  expect_str(p.srv, req);
  send_str(p.srv, "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
  expect_str(p.app, "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n");
}

Test(relay, pipelined_requests_and_responses) {
  struct pair p = start_session();
  const char *reqs =
      "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\n\r\n";
  send_str(p.app, reqs);
  expect_str(p.srv, reqs);
  const char *resps = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1"
                      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"
                      "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno!";
  send_str(p.srv, resps);
  expect_str(p.app, resps);
}

Test(relay, head_response_has_no_body) {
  struct pair p = start_session();
  const char *reqs = "HEAD /h HTTP/1.1\r\nHost: x\r\n\r\nGET /g HTTP/1.1\r\nHost: x\r\n\r\n";
  send_str(p.app, reqs);
  expect_str(p.srv, reqs);
  /* the HEAD answer announces 1000 bytes but carries none: the next response follows at once */
  const char *resps = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
                      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  send_str(p.srv, resps);
  expect_str(p.app, resps);
}

Test(relay, not_modified_then_chunked) {
  struct pair p = start_session();
  send_str(p.app, "GET /a HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"e\"\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
  char tmp[256];
  recv_exact(p.srv, tmp,
             strlen("GET /a HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"e\"\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n"));
  const char *resps = "HTTP/1.1 304 Not Modified\r\nETag: \"e\"\r\nContent-Length: 77\r\n\r\n"
                      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n";
  send_str(p.srv, resps);
  expect_str(p.app, resps);
}

Test(relay, expect_100_continue) {
  struct pair p = start_session();
  const char *head = "PUT /u HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n";
  send_str(p.app, head);
  expect_str(p.srv, head);
  send_str(p.srv, "HTTP/1.1 100 Continue\r\n\r\n");
  expect_str(p.app, "HTTP/1.1 100 Continue\r\n\r\n");
  send_str(p.app, "body");
  expect_str(p.srv, "body");
  send_str(p.srv, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  expect_str(p.app, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
}

Test(relay, large_body_exact_with_slow_reader) {
  struct pair p = start_session();
  send_str(p.app, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  char tmp[64];
  recv_exact(p.srv, tmp, strlen("GET /big HTTP/1.1\r\nHost: x\r\n\r\n"));
  size_t n = 8u << 20;
  char *body = malloc(n), *got = malloc(n);
  for (size_t i = 0; i < n; i++)
    body[i] = (char)(i * 2654435761u >> 13);
  const char *h = "HTTP/1.1 200 OK\r\nContent-Length: 8388608\r\n\r\n";
  send_str(p.srv, h);
  /* the origin writes from a child so the test can read slowly at the same time */
  pid_t pid = fork();
  if (pid == 0) {
    send_all(p.srv, body, n);
    _exit(0);
  }
  expect_str(p.app, h);
  size_t off = 0;
  while (off < n) {
    size_t k = n - off < 3000 ? n - off : 3000; /* odd-sized reads across splice boundaries */
    recv_exact(p.app, got + off, k);
    off += k;
  }
  cr_assert(memcmp(body, got, n) == 0);
  free(body);
  free(got);
}

Test(relay, close_delimited_body_then_eof) {
  struct pair p = start_session();
  send_str(p.app, "GET /c HTTP/1.0\r\n\r\n");
  expect_str(p.srv, "GET /c HTTP/1.0\r\n\r\n");
  send_str(p.srv, "HTTP/1.0 200 OK\r\n\r\nuntil the end");
  shutdown(p.srv, SHUT_WR);
  expect_str(p.app, "HTTP/1.0 200 OK\r\n\r\nuntil the end");
  expect_end(p.app, 0);
}

Test(relay, program_half_close_still_gets_response) {
  struct pair p = start_session();
  send_str(p.app, "GET /h HTTP/1.1\r\nHost: x\r\n\r\n");
  shutdown(p.app, SHUT_WR);
  expect_str(p.srv, "GET /h HTTP/1.1\r\nHost: x\r\n\r\n");
  expect_end(p.srv, 0); /* the origin sees our FIN */
  send_str(p.srv, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
  close(p.srv);
  expect_str(p.app, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
  expect_end(p.app, 0);
}

Test(relay, server_closes_mid_body) {
  struct pair p = start_session();
  send_str(p.app, "GET /m HTTP/1.1\r\nHost: x\r\n\r\n");
  expect_str(p.srv, "GET /m HTTP/1.1\r\nHost: x\r\n\r\n");
  send_str(p.srv, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
  close(p.srv);
  expect_str(p.app, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
  expect_end(p.app, 0);
}

Test(relay, server_reset_reaches_program_as_econnreset) {
  struct pair p = start_session();
  send_str(p.app, "GET /r HTTP/1.1\r\nHost: x\r\n\r\n");
  expect_str(p.srv, "GET /r HTTP/1.1\r\nHost: x\r\n\r\n");
  send_str(p.srv, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nsome");
  usleep(100 * 1000); /* let the bytes arrive first, as they would before a real RST */
  struct linger lg = {1, 0};
  setsockopt(p.srv, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  close(p.srv);
  expect_str(p.app, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nsome");
  expect_end(p.app, ECONNRESET);
  expect_end(p.app, 0); /* like TCP: the error is reported once, then EOF */
}

Test(relay, program_close_with_unread_data_resets_server) {
  struct pair p = start_session();
  send_str(p.app, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
  expect_str(p.srv, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
  send_str(p.srv, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nunread...");
  usleep(100 * 1000);
  close(p.app); /* response bytes are waiting unread in the program's socket */
  char buf[4096];
  ssize_t r;
  int resets = 0;
  for (int i = 0; i < 100; i++) {
    r = send(p.srv, buf, sizeof buf, MSG_NOSIGNAL);
    if (r < 0) {
      resets = errno == ECONNRESET || errno == EPIPE;
      break;
    }
    usleep(10 * 1000);
  }
  cr_assert(resets, "the origin should see the connection reset");
}

Test(relay, unparsable_response_is_relayed_raw) {
  struct pair p = start_session();
  send_str(p.app, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  expect_str(p.srv, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  const char *junk = "SSH-2.0-not http at all\r\n\x01\x02\x03";
  send_str(p.srv, junk);
  expect_str(p.app, junk);
}

Test(relay, upgrade_becomes_tunnel) {
  struct pair p = start_session();
  const char *req = "GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
  send_str(p.app, req);
  expect_str(p.srv, req);
  send_str(p.srv, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x05hello");
  expect_str(p.app,
             "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x05hello");
  send_str(p.app, "\x82\x01z not http");
  expect_str(p.srv, "\x82\x01z not http");
}

Test(relay, early_response_while_body_uploads) {
  struct pair p = start_session();
  const char *head = "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345";
  send_str(p.app, head);
  expect_str(p.srv, head);
  /* the origin answers before the body is complete (413, 401...): relayed at once */
  send_str(p.srv, "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 4\r\n\r\nbig!");
  expect_str(p.app, "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 4\r\n\r\nbig!");
  send_str(p.app, "67890GET /next HTTP/1.1\r\nHost: x\r\n\r\n");
  expect_str(p.srv, "67890GET /next HTTP/1.1\r\nHost: x\r\n\r\n");
  send_str(p.srv, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nk");
  expect_str(p.app, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nk");
}

Test(relay, head_with_chunked_header_then_get) {
  struct pair p = start_session();
  const char *reqs = "HEAD /c HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n";
  send_str(p.app, reqs);
  expect_str(p.srv, reqs);
  const char *resps = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
  send_str(p.srv, resps);
  expect_str(p.app, resps);
}

Test(relay, bytes_reach_program_as_they_arrive) {
  struct pair p = start_session();
  send_str(p.app, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  expect_str(p.srv, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  /* a body trickling in: each piece is readable before the next one is sent */
  send_str(p.srv, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nab");
  expect_str(p.app, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nab");
  send_str(p.srv, "cd");
  expect_str(p.app, "cd");
  send_str(p.srv, "ef");
  expect_str(p.app, "ef");
}
