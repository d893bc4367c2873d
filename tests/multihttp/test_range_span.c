/* Unit tests for the clients issue 19 adds: eligibility of Connection: close, HTTP/1.0 and a program's own Range, its parsing, and the heads written for them (exact bytes). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "mh_range.h"

/* clang-format off */
#define H(n, v) { n, sizeof(n) - 1, v, sizeof(v) - 1 }
/* clang-format on */
#define NH(a) (sizeof(a) / sizeof((a)[0]))

static struct mh_req_view req(int minor, const struct mh_hdr *h, size_t n) {
  return (struct mh_req_view){"GET", 3, "/f", 2, 1, minor, h, n, 0};
}

static void expect_bytes(const char *out, ssize_t n, const char *want) {
  cr_assert_eq(n, (ssize_t)strlen(want), "length %zd, want %zu; got:\n%.*s", n, strlen(want), (int)(n > 0 ? n : 0),
               out);
  cr_assert_eq(memcmp(out, want, (size_t)n), 0, "got:\n%.*s", (int)n, out);
}

/* ---- eligibility ------------------------------------------------------------------------- */

Test(span_verdict, close_http10_and_one_span_are_split_the_rest_relayed) {
  struct mh_hdr close_[] = {H("Host", "a.test"), H("Connection", "close")};
  struct mh_hdr nohost[] = {H("User-Agent", "x")};
  struct mh_hdr ab[] = {H("Host", "a.test"), H("Range", "bytes=0-24999999")};
  struct mh_hdr open_[] = {H("Host", "a.test"), H("Range", "bytes=7000000-")};
  struct mh_hdr ifr[] = {H("Host", "a.test"), H("Range", "bytes=7000000-"), H("If-Range", "\"e\"")};
  struct mh_hdr unit[] = {H("Host", "a.test"), H("range", "BYTES=5-9")};
  struct mh_hdr suffix[] = {H("Host", "a.test"), H("Range", "bytes=-500")};
  struct mh_hdr multi[] = {H("Host", "a.test"), H("Range", "bytes=0-1,5-")};
  struct mh_hdr items[] = {H("Host", "a.test"), H("Range", "items=0-5")};
  struct mh_hdr junk[] = {H("Host", "a.test"), H("Range", "bytes=a-b")};
  struct mh_hdr big[] = {H("Host", "a.test"), H("Range", "bytes=99999999999999999999-")};
  struct mh_hdr two[] = {H("Host", "a.test"), H("Range", "bytes=0-"), H("Range", "bytes=0-")};
  struct mh_hdr ifr_only[] = {H("Host", "a.test"), H("If-Range", "\"e\"")};
  struct mh_hdr ifr_two[] = {H("Host", "a.test"), H("Range", "bytes=0-"), H("If-Range", "\"e\""),
                             H("If-Range", "\"f\"")};
  struct {
    struct mh_req_view r;
    enum mh_rr_verdict want;
  } cases[] = {
      {req(1, close_, NH(close_)), MH_RR_SPLITTABLE},
      {req(0, close_, NH(close_)), MH_RR_SPLITTABLE},
      {req(0, close_, 1), MH_RR_SPLITTABLE}, /* HTTP/1.0, Host, no Connection */
      {req(0, nohost, NH(nohost)), MH_RR_NO_HOST},
      {req(1, nohost, NH(nohost)), MH_RR_SPLITTABLE}, /* the origin's 400 is relayed */
      {req(1, ab, NH(ab)), MH_RR_SPLITTABLE},
      {req(1, open_, NH(open_)), MH_RR_SPLITTABLE},
      {req(1, ifr, NH(ifr)), MH_RR_SPLITTABLE},
      {req(0, ifr, NH(ifr)), MH_RR_SPLITTABLE},
      {req(1, unit, NH(unit)), MH_RR_SPLITTABLE},
      {req(1, suffix, NH(suffix)), MH_RR_HAS_RANGE},
      {req(1, multi, NH(multi)), MH_RR_HAS_RANGE},
      {req(1, items, NH(items)), MH_RR_HAS_RANGE},
      {req(1, junk, NH(junk)), MH_RR_HAS_RANGE},
      {req(1, big, NH(big)), MH_RR_HAS_RANGE},
      {req(1, two, NH(two)), MH_RR_HAS_RANGE},
      {req(1, ifr_only, NH(ifr_only)), MH_RR_HAS_RANGE},
      {req(1, ifr_two, NH(ifr_two)), MH_RR_HAS_RANGE},
  };
  for (size_t i = 0; i < NH(cases); i++)
    cr_expect_eq(mh_rr_request_verdict(&cases[i].r), cases[i].want, "case %zu: got %s", i,
                 mh_rr_verdict_str(mh_rr_request_verdict(&cases[i].r)));
}

/* ---- the program's Range ----------------------------------------------------------------- */

Test(span_parse, table) {
  struct {
    const char *v;
    int rc;
    uint64_t first, last;
  } cases[] = {
      {"bytes=0-24999999", 0, 0, 24999999},
      {"bytes=7000000-", 0, 7000000, MH_RR_TO_END},
      {"bytes=5-5", 0, 5, 5},
      {"Bytes=0-0", 0, 0, 0},
      {"bytes=0-", 0, 0, MH_RR_TO_END},
      {"bytes=9999999999999999999-", 0, 9999999999999999999ULL, MH_RR_TO_END},
      {"bytes=-500", -ENOTSUP, 0, 0},
      {"bytes=0-1,5-", -ENOTSUP, 0, 0},
      {"bytes=0-1, 5-9", -ENOTSUP, 0, 0},
      {"bytes=0-,", -ENOTSUP, 0, 0},
      {"items=0-5", -ENOTSUP, 0, 0},
      {"bytes=10-9", -EINVAL, 0, 0},
      {"bytes=a-b", -EINVAL, 0, 0},
      {"bytes=5", -EINVAL, 0, 0},
      {"bytes=", -EINVAL, 0, 0},
      {"bytes 0-5", -EINVAL, 0, 0},
      {"bytes=0-5x", -EINVAL, 0, 0},
      {"bytes= 0-5", -EINVAL, 0, 0},
      {"bytes=0 -5", -EINVAL, 0, 0},
      {"bytes=+1-5", -EINVAL, 0, 0},
      {"bytes=10000000000000000000-", -EINVAL, 0, 0}, /* 20 digits: past uint64 arithmetic */
      {"bytes=0-18446744073709551616", -EINVAL, 0, 0},
      {"=0-5", -EINVAL, 0, 0},
      {"", -EINVAL, 0, 0},
  };
  for (size_t i = 0; i < NH(cases); i++) {
    struct mh_rr_span s = {42, 42};
    int rc = mh_rr_parse_range(cases[i].v, strlen(cases[i].v), &s);
    cr_expect_eq(rc, cases[i].rc, "%s: rc %d", cases[i].v, rc);
    if (rc == 0 && cases[i].rc == 0)
      cr_expect(s.first == cases[i].first && s.last == cases[i].last, "%s: %llu-%llu", cases[i].v,
                (unsigned long long)s.first, (unsigned long long)s.last);
  }
}

Test(span_parse, request_span_and_its_if_range) {
  struct mh_hdr none[] = {H("Host", "a.test")};
  struct mh_hdr ifr[] = {H("Host", "a.test"), H("If-Range", "Tue, 14 Nov 2023 22:13:20 GMT"), H("Range", "bytes=100-")};
  struct mh_rr_span s;
  const struct mh_hdr *ir = (const struct mh_hdr *)1;
  struct mh_req_view r = req(1, none, NH(none));
  cr_assert_eq(mh_rr_request_span(&r, &s, &ir), 0);
  cr_assert_null(ir);
  r = req(1, ifr, NH(ifr));
  cr_assert_eq(mh_rr_request_span(&r, &s, &ir), 1);
  cr_assert(s.first == 100 && s.last == MH_RR_TO_END);
  cr_assert_eq(ir, &ifr[1]);
  r = req(1, ifr, 2); /* If-Range without Range: the origin ignores it, we would not */
  cr_assert_eq(mh_rr_request_span(&r, &s, &ir), -ENOTSUP);
}

/* ---- the probe of a span: its 206 must start where the span does ------------------------ */

Test(span_probe, classified_at_the_span_start) {
  struct mh_hdr h[] = {H("ETag", "\"e\""), H("Content-Range", "bytes 7000000-7032767/33554432"),
                       H("Content-Length", "32768")};
  struct mh_probe_info pi;
  cr_assert_eq(mh_rr_classify_probe_at(206, h, NH(h), 7000000, &pi), MH_PROBE_MANAGED);
  cr_assert(pi.first == 7000000 && pi.last == 7032767 && pi.total == 33554432);
  cr_assert_eq(mh_rr_classify_probe_at(206, h, NH(h), 0, &pi), MH_PROBE_RESEND);
  cr_assert_eq(mh_rr_classify_probe_at(206, h, NH(h), 6999999, &pi), MH_PROBE_RESEND);
  cr_assert_eq(mh_rr_classify_probe(206, h, NH(h), &pi), MH_PROBE_RESEND, "a plain probe starts at 0");
  struct mh_hdr whole[] = {H("ETag", "\"e\""), H("Content-Length", "33554432")};
  cr_assert_eq(mh_rr_classify_probe_at(200, whole, NH(whole), 7000000, &pi), MH_PROBE_RELAY,
               "a 200 (range ignored) reaches the program unchanged");
  cr_assert_eq(mh_rr_classify_probe_at(416, whole, 0, 7000000, &pi), MH_PROBE_RESEND,
               "a 416: the program's own request, its answer relayed");
}

/* ---- heads (exact bytes) ----------------------------------------------------------------- */

/* nginx 1.22's answer to the probe of `curl -r 0-24999999` (Range: bytes=0-32767). */
/* clang-format off */
static const struct mh_hdr nginx_206[] = {
    H("Server", "nginx"),
    H("Date", "Wed, 25 Nov 2026 12:31:27 GMT"),
    H("Content-Type", "application/octet-stream"),
    H("Content-Length", "32768"),
    H("Last-Modified", "Tue, 14 Nov 2023 22:13:20 GMT"),
    H("Connection", "keep-alive"),
    H("ETag", "\"6553f100-2000000\""),
    H("X-Testbed-Origin", "a"),
    H("Content-Range", "bytes 0-32767/33554432"),
};
/* clang-format on */

Test(span_head, the_206_of_the_program_span) {
  char out[1024];
  ssize_t n = mh_rr_rewrite_span_head("HTTP/1.1", "Partial Content", 15, nginx_206, NH(nginx_206), 0, 24999999,
                                      33554432, out, sizeof out);
  /* what nginx itself sends for Range: bytes=0-24999999 */
  expect_bytes(out, n,
               "HTTP/1.1 206 Partial Content\r\n"
               "Server: nginx\r\n"
               "Date: Wed, 25 Nov 2026 12:31:27 GMT\r\n"
               "Content-Type: application/octet-stream\r\n"
               "Content-Length: 25000000\r\n"
               "Last-Modified: Tue, 14 Nov 2023 22:13:20 GMT\r\n"
               "Connection: keep-alive\r\n"
               "ETag: \"6553f100-2000000\"\r\n"
               "X-Testbed-Origin: a\r\n"
               "Content-Range: bytes 0-24999999/33554432\r\n"
               "\r\n");
  cr_assert_eq(mh_rr_rewrite_span_head("HTTP/1.1", "Partial Content", 15, nginx_206, NH(nginx_206), 0, 24999999,
                                       33554432, out, 100),
               -ENOSPC);
  cr_assert_eq(mh_rr_rewrite_span_head("HTTP/1.1", "Partial\r\nX: 1", 13, nginx_206, NH(nginx_206), 0, 24999999,
                                       33554432, out, sizeof out),
               -EINVAL, "a reason cannot add a line");
  cr_assert_eq(mh_rr_rewrite_span_head("HTTP/1.1", "Partial Content", 15, nginx_206, NH(nginx_206), 5, 33554432,
                                       33554432, out, sizeof out),
               -EINVAL, "a span past the end");
}

Test(span_head, chunked_and_reason_of_the_origin) {
  /* a chunked 206 (origin_server.py "chunked"), its own reason phrase, an open span to the end */
  struct mh_hdr h[] = {H("Content-Range", "bytes 7000000-7032767/33554432"), H("ETag", "\"e\""),
                       H("Transfer-Encoding", "chunked")};
  char out[512];
  ssize_t n = mh_rr_rewrite_span_head("HTTP/1.1", "Partial", 7, h, NH(h), 7000000, 33554431, 33554432, out, sizeof out);
  expect_bytes(out, n,
               "HTTP/1.1 206 Partial\r\n"
               "Content-Range: bytes 7000000-33554431/33554432\r\n"
               "ETag: \"e\"\r\n"
               "Content-Length: 26554432\r\n"
               "\r\n");
}

/* The rewritten head of an HTTP/1.0 request (curl --http1.0): the origin's own version and its
 * Connection: close, a length, never chunked. */
Test(span_head, http10_answers_keep_their_framing) {
  struct mh_hdr h11[] = {H("Server", "nginx"), H("Content-Length", "32768"), H("Connection", "close"),
                         H("ETag", "\"e\""), H("Content-Range", "bytes 0-32767/33554432")};
  char out[512];
  ssize_t n = mh_rr_rewrite_head("HTTP/1.1", h11, NH(h11), 33554432, out, sizeof out);
  expect_bytes(out, n,
               "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 33554432\r\nConnection: close\r\n"
               "ETag: \"e\"\r\n\r\n");
  /* an HTTP/1.0 origin (python's http.server): no Connection, a 1.0 status line */
  struct mh_hdr h10[] = {H("Server", "SimpleHTTP/0.6"), H("Content-Range", "bytes 0-32767/33554432"),
                         H("Content-Length", "32768"), H("ETag", "\"e\"")};
  n = mh_rr_rewrite_head("HTTP/1.0", h10, NH(h10), 33554432, out, sizeof out);
  expect_bytes(out, n, "HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6\r\nContent-Length: 33554432\r\nETag: \"e\"\r\n\r\n");
  /* and its span */
  n = mh_rr_rewrite_span_head("HTTP/1.0", "Partial Content", 15, h10, NH(h10), 0, 24999999, 33554432, out, sizeof out);
  expect_bytes(out, n,
               "HTTP/1.0 206 Partial Content\r\nServer: SimpleHTTP/0.6\r\n"
               "Content-Range: bytes 0-24999999/33554432\r\nContent-Length: 25000000\r\nETag: \"e\"\r\n\r\n");
}

/* ---- the requests: the probe is the program's (its version, its Connection, its If-Range);
 * every later range is HTTP/1.1 keep-alive ------------------------------------------------- */

Test(span_request, probe_keeps_the_program_semantics_later_ranges_keep_alive) {
  struct mh_hdr h[] = {H("Host", "a.test"), H("Connection", "close"), H("Range", "bytes=7000000-"),
                       H("If-Range", "\"e\""), H("User-Agent", "Python-urllib/3.11")};
  struct mh_req_view r = req(0, h, NH(h));
  char out[512];
  ssize_t n = mh_rr_range_request(&r, 7000000, 7032767, "\"e\"", 3, 0, out, sizeof out);
  expect_bytes(out, n,
               "GET /f HTTP/1.0\r\nHost: a.test\r\nConnection: close\r\nUser-Agent: Python-urllib/3.11\r\n"
               "Range: bytes=7000000-7032767\r\nIf-Range: \"e\"\r\n\r\n");
  n = mh_rr_range_request(&r, 33000000, MH_RR_TO_END, "\"e\"", 3, 1, out, sizeof out);
  expect_bytes(out, n,
               "GET /f HTTP/1.1\r\nHost: a.test\r\nUser-Agent: Python-urllib/3.11\r\n"
               "Range: bytes=33000000-\r\nIf-Range: \"e\"\r\n\r\n");
}
