/* Unit tests for the range-splitting HTTP rules: verdicts, probe classes, validators, rewritten heads. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "mh_range.h"

/* clang-format off */
#define H(n, v) { n, sizeof(n) - 1, v, sizeof(v) - 1 }
/* clang-format on */
#define NH(a) (sizeof(a) / sizeof((a)[0]))

static struct mh_req_view req(const char *method, const char *target, int minor, const struct mh_hdr *h, size_t n,
                              int body) {
  struct mh_req_view r = {method, strlen(method), target, strlen(target), 1, minor, h, n, body};
  return r;
}

/* The program's request head into views, as llhttp reads it: OWS trimmed, an empty value, the
 * body's announcement; a head with bytes after it, bare LF lines, a line that is no header,
 * or more lines than the caller holds are refused. */
Test(parse_request, views_of_a_head_and_what_is_refused) {
  const char head[] = "GET /f?q=1 HTTP/1.1\r\nHost:a.test\r\nX-Pad: \t v w \t\r\nX-Empty:\r\n"
                      "Content-Length: 0\r\n\r\n";
  struct mh_hdr h[8];
  struct mh_req_view v;
  cr_assert_eq(mh_rr_parse_request(head, strlen(head), &v, h, 8), 0);
  cr_assert(v.method_len == 3 && !memcmp(v.method, "GET", 3));
  cr_assert(v.target_len == 6 && !memcmp(v.target, "/f?q=1", 6));
  cr_assert(v.http_major == 1 && v.http_minor == 1 && v.nhdrs == 4 && !v.has_body);
  cr_assert(h[0].name_len == 4 && h[0].value_len == 6 && !memcmp(h[0].value, "a.test", 6));
  cr_assert(h[1].value_len == 3 && !memcmp(h[1].value, "v w", 3), "OWS on both sides dropped");
  cr_assert(h[2].name_len == 7 && h[2].value_len == 0);
  const char body[] = "POST / HTTP/1.0\r\nContent-Length: 5\r\n\r\n";
  cr_assert_eq(mh_rr_parse_request(body, strlen(body), &v, h, 8), 0);
  cr_assert(v.has_body && v.http_minor == 0);
  const char *bad[] = {"GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\nHost: a\n\n",
                       "GET / HTTP/1.1\r\nno colon\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\n",
                       "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n"};
  for (size_t i = 0; i < NH(bad); i++)
    cr_assert_eq(mh_rr_parse_request(bad[i], strlen(bad[i]), &v, h, 2), -EINVAL, "%s", bad[i]);
}

Test(verdict, plain_get_is_splittable) {
  struct mh_hdr h[] = {H("Host", "a.test"), H("User-Agent", "Wget/1.21.3"), H("Accept", "*/*")};
  struct mh_req_view r = req("GET", "/f/32M", 1, h, NH(h), 0);
  cr_assert_eq(mh_rr_request_verdict(&r), MH_RR_SPLITTABLE);
  r = req("GET", "/f/32M", 0, h, NH(h), 0);
  cr_assert_eq(mh_rr_request_verdict(&r), MH_RR_SPLITTABLE, "HTTP/1.0 is eligible");
}

Test(verdict, everything_else_is_relayed) {
  struct mh_hdr host[] = {H("Host", "a.test")};
  struct mh_hdr range[] = {H("Host", "a.test"), H("range", "bytes=0-1,5-")}; /* one span is split: test_range_span.c */
  struct mh_hdr ifr[] = {H("Host", "a.test"), H("If-Range", "\"x\"")};
  struct mh_hdr up[] = {H("Host", "a.test"), H("Upgrade", "websocket")};
  struct mh_hdr ex[] = {H("Host", "a.test"), H("Expect", "100-continue")};
  struct {
    struct mh_req_view r;
    enum mh_rr_verdict want;
  } cases[] = {
      {req("HEAD", "/x", 1, host, 1, 0), MH_RR_NOT_GET},
      {req("POST", "/x", 1, host, 1, 1), MH_RR_NOT_GET},
      {req("get", "/x", 1, host, 1, 0), MH_RR_NOT_GET},
      {req("GETX", "/x", 1, host, 1, 0), MH_RR_NOT_GET},
      {req("GET", "http://a.test/x", 1, host, 1, 0), MH_RR_NOT_ORIGIN_FORM},
      {req("GET", "*", 1, host, 1, 0), MH_RR_NOT_ORIGIN_FORM},
      {req("GET", "/x", 2, host, 1, 0), MH_RR_VERSION},
      {req("GET", "/x", 1, host, 1, 1), MH_RR_HAS_BODY},
      {req("GET", "/x", 1, range, 2, 0), MH_RR_HAS_RANGE},
      {req("GET", "/x", 1, ifr, 2, 0), MH_RR_HAS_RANGE},
      {req("GET", "/x", 1, up, 2, 0), MH_RR_UPGRADE},
      {req("GET", "/x", 1, ex, 2, 0), MH_RR_EXPECT},
  };
  for (size_t i = 0; i < NH(cases); i++)
    cr_expect_eq(mh_rr_request_verdict(&cases[i].r), cases[i].want, "case %zu: got %s", i,
                 mh_rr_verdict_str(mh_rr_request_verdict(&cases[i].r)));
}

Test(content_range, parses_and_rejects) {
  uint64_t f, l, t;
  cr_assert_eq(mh_rr_parse_content_range("bytes 0-32767/1048576", 21, &f, &l, &t), 0);
  cr_assert_eq(f, 0);
  cr_assert_eq(l, 32767);
  cr_assert_eq(t, 1048576);
  cr_assert_eq(mh_rr_parse_content_range(" bytes 5-5/6 ", 13, &f, &l, &t), 0);
  cr_assert_eq(f, 5);
  const char *bad[] = {"bytes 0-9/*",
                       "bytes */100",
                       "bytes 9-0/100",
                       "bytes 0-100/100",
                       "bytes 0-9/10x",
                       "items 0-9/10",
                       "bytes 0-9",
                       "bytes=0-9/10",
                       "bytes -1-9/10",
                       "bytes 0-99999999999999999999/99999999999999999999",
                       "",
                       "bytes 0-9/10,bytes 0-9/10"};
  for (size_t i = 0; i < NH(bad); i++)
    cr_expect_eq(mh_rr_parse_content_range(bad[i], strlen(bad[i]), &f, &l, &t), -EINVAL, "accepted '%s'", bad[i]);
}

Test(http_date, three_forms_agree) {
  int64_t a, b, c;
  cr_assert_eq(mh_rr_parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", 29, &a), 0);
  cr_assert_eq(a, 784111777);
  cr_assert_eq(mh_rr_parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", 30, &b), 0);
  cr_assert_eq(mh_rr_parse_http_date("Sun Nov  6 08:49:37 1994", 24, &c), 0);
  cr_assert_eq(a, b);
  cr_assert_eq(a, c);
  cr_assert_eq(mh_rr_parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT", 29, &a), 0);
  cr_assert_eq(a, 0);
  cr_assert_eq(mh_rr_parse_http_date("Sun, 22 Nov 2026 03:09:38 GMT", 29, &a), 0);
  cr_assert_eq(a, 1795316978);
  const char *bad[] = {"Sun, 06 Nov 1994 08:49:37 CET",
                       "Sun, 06 Foo 1994 08:49:37 GMT",
                       "Sun, 06 Nov 1994 25:49:37 GMT",
                       "yesterday",
                       "",
                       "Sun, 06 Nov 1994 08:49:37 GMT trailing"};
  for (size_t i = 0; i < NH(bad); i++)
    cr_expect_eq(mh_rr_parse_http_date(bad[i], strlen(bad[i]), &a), -EINVAL, "accepted '%s'", bad[i]);
}

/* clang-format off */
static const struct mh_hdr probe_ok[] = {
    H("Server", "nginx/1.22.1"),
    H("Date", "Sun, 22 Nov 2026 03:09:38 GMT"),
    H("Content-Type", "application/octet-stream"),
    H("Content-Length", "32768"),
    H("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT"),
    H("Connection", "keep-alive"),
    H("ETag", "\"6955b900-2000000\""),
    H("Content-Range", "bytes 0-32767/33554432"),
};
/* clang-format on */

Test(probe, managed_206_fills_info) {
  struct mh_probe_info pi;
  cr_assert_eq(mh_rr_classify_probe(206, probe_ok, NH(probe_ok), &pi), MH_PROBE_MANAGED);
  cr_assert_eq(pi.first, 0);
  cr_assert_eq(pi.last, 32767);
  cr_assert_eq(pi.total, 33554432);
  cr_assert(pi.etag_strong);
  cr_assert(pi.last_modified_strong);
  size_t n;
  const char *v = mh_rr_if_range(&pi, &n);
  cr_assert_not_null(v);
  cr_assert_eq(n, strlen("\"6955b900-2000000\""));
  cr_assert_eq(memcmp(v, "\"6955b900-2000000\"", n), 0);
}

Test(probe, classes_of_other_answers) {
  struct mh_probe_info pi;
  /* relayed: answers a server gives whatever Range says; resent: statuses a server may give
     * because of the Range we added (an origin that answers any Range with 403 gives plain
     * clients 200), so the program's own request goes out instead */
  static const struct {
    int status;
    enum mh_probe_action want;
  } cases[] = {
      {200, MH_PROBE_RELAY},  {204, MH_PROBE_RELAY},  {301, MH_PROBE_RELAY},  {302, MH_PROBE_RELAY},
      {304, MH_PROBE_RELAY},  {307, MH_PROBE_RELAY},  {404, MH_PROBE_RELAY},  {410, MH_PROBE_RELAY},
      {416, MH_PROBE_RESEND}, {403, MH_PROBE_RESEND}, {429, MH_PROBE_RESEND}, {503, MH_PROBE_RESEND},
      {500, MH_PROBE_RESEND}, {401, MH_PROBE_RESEND}, {103, MH_PROBE_RESEND}, {101, MH_PROBE_RESEND},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    cr_expect_eq(mh_rr_classify_probe(cases[i].status, probe_ok, 3, &pi), cases[i].want, "status %d", cases[i].status);
  /* a 200 that carries a Content-Range holds the range's bytes only, not the object */
  struct mh_hdr ok_with_range[] = {H("Content-Length", "32768"), H("Content-Range", "bytes 0-32767/1048576")};
  cr_assert_eq(mh_rr_classify_probe(200, ok_with_range, 2, &pi), MH_PROBE_RESEND);

  struct mh_hdr star[] = {H("Content-Range", "bytes 0-9/*")};
  struct mh_hdr notzero[] = {H("Content-Range", "bytes 1-9/100")};
  struct mh_hdr twice[] = {H("Content-Range", "bytes 0-9/100"), H("Content-Range", "bytes 0-9/100")};
  struct mh_hdr multipart[] = {H("Content-Type", "multipart/byteranges; boundary=x")};
  struct mh_hdr badlen[] = {H("Content-Range", "bytes 0-9/100"), H("Content-Length", "11")};
  struct mh_hdr gzip_te[] = {H("Content-Range", "bytes 0-9/100"), H("Transfer-Encoding", "gzip, chunked")};
  cr_expect_eq(mh_rr_classify_probe(206, star, 1, &pi), MH_PROBE_RESEND);
  cr_expect_eq(mh_rr_classify_probe(206, notzero, 1, &pi), MH_PROBE_RESEND);
  cr_expect_eq(mh_rr_classify_probe(206, twice, 2, &pi), MH_PROBE_RESEND);
  cr_expect_eq(mh_rr_classify_probe(206, multipart, 1, &pi), MH_PROBE_RESEND);
  cr_expect_eq(mh_rr_classify_probe(206, badlen, 2, &pi), MH_PROBE_RESEND);
  cr_expect_eq(mh_rr_classify_probe(206, gzip_te, 2, &pi), MH_PROBE_RESEND);

  struct mh_hdr chunked[] = {H("Content-Range", "bytes 0-9/100"), H("Transfer-Encoding", "chunked")};
  cr_expect_eq(mh_rr_classify_probe(206, chunked, 2, &pi), MH_PROBE_MANAGED,
               "a chunked 206 is de-chunked, still managed");
  cr_expect_eq(pi.total, 100);
}

Test(probe, validator_strength) {
  struct mh_probe_info pi;
  size_t n;
  struct mh_hdr weak[] = {H("Content-Range", "bytes 0-9/100"), H("ETag", "W/\"abc\"")};
  cr_assert_eq(mh_rr_classify_probe(206, weak, 2, &pi), MH_PROBE_MANAGED);
  cr_expect_not(pi.etag_strong);
  cr_expect_null(mh_rr_if_range(&pi, &n), "a weak ETag never goes into If-Range");

  struct mh_hdr lm_same_second[] = {H("Content-Range", "bytes 0-9/100"), H("Date", "Thu, 01 Jan 2026 00:00:00 GMT"),
                                    H("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT")};
  cr_assert_eq(mh_rr_classify_probe(206, lm_same_second, 3, &pi), MH_PROBE_MANAGED);
  cr_expect_not(pi.last_modified_strong, "modified in the second it was served: weak");
  cr_expect_null(mh_rr_if_range(&pi, &n));

  struct mh_hdr lm_only[] = {H("Content-Range", "bytes 0-9/100"), H("Date", "Thu, 01 Jan 2026 00:00:01 GMT"),
                             H("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT")};
  cr_assert_eq(mh_rr_classify_probe(206, lm_only, 3, &pi), MH_PROBE_MANAGED);
  cr_expect(pi.last_modified_strong);
  const char *v = mh_rr_if_range(&pi, &n);
  cr_assert_not_null(v);
  cr_expect_eq(memcmp(v, "Thu, 01 Jan 2026 00:00:00 GMT", n), 0);

  struct mh_hdr weak_and_lm[] = {H("Content-Range", "bytes 0-9/100"), H("ETag", "W/\"abc\""),
                                 H("Date", "Thu, 01 Jan 2026 00:01:00 GMT"),
                                 H("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT")};
  cr_assert_eq(mh_rr_classify_probe(206, weak_and_lm, 4, &pi), MH_PROBE_MANAGED);
  cr_expect_null(mh_rr_if_range(&pi, &n), "a date only when there is no entity tag (13.1.5)");

  struct mh_hdr none[] = {H("Content-Range", "bytes 0-9/100")};
  cr_assert_eq(mh_rr_classify_probe(206, none, 1, &pi), MH_PROBE_MANAGED);
  cr_expect_null(mh_rr_if_range(&pi, &n));
}

Test(check, consistent_and_inconsistent_sources) {
  struct mh_probe_info pi;
  cr_assert_eq(mh_rr_classify_probe(206, probe_ok, NH(probe_ok), &pi), MH_PROBE_MANAGED);
  struct mh_hdr good[] = {H("ETag", "\"6955b900-2000000\""), H("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT"),
                          H("Content-Range", "bytes 32768-99999/33554432")};
  cr_expect_eq(mh_rr_check_range_response(&pi, 206, good, 3, 32768, 99999), 0);
  cr_expect_eq(mh_rr_check_range_response(&pi, 206, good, 3, 32768, 99998), -EBADMSG);
  cr_expect_eq(mh_rr_check_range_response(&pi, 200, good, 3, 32768, 99999), -EPROTO);
  cr_expect_eq(mh_rr_check_range_response(&pi, 500, good, 3, 32768, 99999), -EBADMSG);

  struct mh_hdr other_total[] = {H("ETag", "\"6955b900-2000000\""), H("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT"),
                                 H("Content-Range", "bytes 32768-99999/33554433")};
  cr_expect_eq(mh_rr_check_range_response(&pi, 206, other_total, 3, 32768, 99999), -EPROTO);
  struct mh_hdr other_etag[] = {H("ETag", "\"other\""), H("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT"),
                                H("Content-Range", "bytes 32768-99999/33554432")};
  cr_expect_eq(mh_rr_check_range_response(&pi, 206, other_etag, 3, 32768, 99999), -EPROTO);
  struct mh_hdr gz[] = {H("ETag", "\"6955b900-2000000\""), H("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT"),
                        H("Content-Encoding", "gzip"), H("Content-Range", "bytes 32768-99999/33554432")};
  cr_expect_eq(mh_rr_check_range_response(&pi, 206, gz, 4, 32768, 99999), -EPROTO);
  struct mh_hdr no_cr[] = {H("ETag", "\"6955b900-2000000\"")};
  cr_expect_eq(mh_rr_check_range_response(&pi, 206, no_cr, 1, 32768, 99999), -EBADMSG);
  /* found by fuzz_response: the first ETag matched and a second, different one was ignored */
  struct mh_hdr two_etags[] = {H("ETag", "\"6955b900-2000000\""), H("ETag", "\"other\""),
                               H("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT"),
                               H("Content-Range", "bytes 32768-99999/33554432")};
  cr_expect_eq(mh_rr_check_range_response(&pi, 206, two_etags, 4, 32768, 99999), -EBADMSG);
}

/* A later answer naming the representation's digest otherwise than the probe comes from another
 * representation, whatever its validator; Content-Digest is per answer and never compared. */
Test(check, digest_fields_must_agree) {
  struct mh_probe_info pi;
  struct mh_hdr probe[] = {H("Content-Range", "bytes 0-9/100"), H("ETag", "\"v\""), H("Repr-Digest", "sha-256=:AAAA:"),
                           H("Digest", "SHA-256=BBBB")};
  cr_assert_eq(mh_rr_classify_probe(206, probe, NH(probe), &pi), MH_PROBE_MANAGED);
  struct {
    const char *repr, *dig, *content;
    int want;
  } rows[] = {
      {"sha-256=:AAAA:", "SHA-256=BBBB", NULL, 0},
      {NULL, NULL, "sha-256=:CCCC:", 0}, /* absent: nothing to compare */
      {"sha-256=:XXXX:", NULL, NULL, -EPROTO},
      {NULL, "SHA-256=XXXX", NULL, -EPROTO},
      {"sha-256=:AAAA:", "SHA-256=BBBB", "sha-256=:ZZZZ:", 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    struct mh_hdr h[5] = {H("ETag", "\"v\""), H("Content-Range", "bytes 10-19/100")};
    size_t n = 2;
    if (rows[i].repr)
      h[n++] = (struct mh_hdr){"Repr-Digest", 11, rows[i].repr, strlen(rows[i].repr)};
    if (rows[i].dig)
      h[n++] = (struct mh_hdr){"Digest", 6, rows[i].dig, strlen(rows[i].dig)};
    if (rows[i].content)
      h[n++] = (struct mh_hdr){"Content-Digest", 14, rows[i].content, strlen(rows[i].content)};
    cr_expect_eq(mh_rr_check_range_response(&pi, 206, h, n, 10, 19), rows[i].want, "row %zu", i);
  }
  struct mh_hdr twice[] = {H("Content-Range", "bytes 0-9/100"), H("ETag", "\"v\""), H("Repr-Digest", "sha-256=:AAAA:"),
                           H("Repr-Digest", "sha-512=:BBBB:")};
  cr_assert_eq(mh_rr_classify_probe(206, twice, NH(twice), &pi), MH_PROBE_MANAGED);
  cr_expect_null(pi.repr_digest, "two lines: not compared");
}

Test(rewrite, head_is_a_plain_200) {
  char out[1024];
  ssize_t n = mh_rr_rewrite_head("HTTP/1.1", probe_ok, NH(probe_ok), 33554432, out, sizeof out);
  cr_assert_gt(n, 0);
  const char *want = "HTTP/1.1 200 OK\r\n"
                     "Server: nginx/1.22.1\r\n"
                     "Date: Sun, 22 Nov 2026 03:09:38 GMT\r\n"
                     "Content-Type: application/octet-stream\r\n"
                     "Content-Length: 33554432\r\n"
                     "Last-Modified: Thu, 01 Jan 2026 00:00:00 GMT\r\n"
                     "Connection: keep-alive\r\n"
                     "ETag: \"6955b900-2000000\"\r\n"
                     "\r\n";
  cr_assert_eq((size_t)n, strlen(want));
  cr_assert_eq(memcmp(out, want, (size_t)n), 0, "got:\n%.*s", (int)n, out);
  cr_assert_eq(mh_rr_rewrite_head("HTTP/1.1", probe_ok, NH(probe_ok), 33554432, out, 40), -ENOSPC);
}

Test(rewrite, chunked_probe_gets_a_length) {
  struct mh_hdr h[] = {H("Server", "x"), H("Transfer-Encoding", "chunked"), H("Content-Range", "bytes 0-9/100"),
                       H("X-A", "1")};
  char out[256];
  ssize_t n = mh_rr_rewrite_head("HTTP/1.0", h, NH(h), 100, out, sizeof out);
  const char *want = "HTTP/1.0 200 OK\r\nServer: x\r\nContent-Length: 100\r\nX-A: 1\r\n\r\n";
  cr_assert_eq((size_t)n, strlen(want));
  cr_assert_eq(memcmp(out, want, (size_t)n), 0, "got:\n%.*s", (int)n, out);
  struct mh_hdr none[] = {H("Content-Range", "bytes 0-9/100")};
  n = mh_rr_rewrite_head("HTTP/1.1", none, 1, 100, out, sizeof out);
  want = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n";
  cr_assert_eq((size_t)n, strlen(want));
  cr_assert_eq(memcmp(out, want, (size_t)n), 0);
}

Test(request, range_request_keeps_program_headers) {
  struct mh_hdr h[] = {H("User-Agent", "Wget/1.21.3"), H("Accept", "*/*"), H("Accept-Encoding", "identity"),
                       H("Host", "a.test"), H("Connection", "Keep-Alive, close")};
  struct mh_req_view r = req("GET", "/f/32M?x=1", 0, h, NH(h), 0);
  char out[512];
  ssize_t n = mh_rr_range_request(&r, 32768, 1048575, "\"e\"", 3, 1, out, sizeof out);
  const char *want = "GET /f/32M?x=1 HTTP/1.1\r\n"
                     "User-Agent: Wget/1.21.3\r\nAccept: */*\r\n"
                     "Accept-Encoding: identity\r\nHost: a.test\r\n"
                     "Range: bytes=32768-1048575\r\nIf-Range: \"e\"\r\n\r\n";
  cr_assert_eq((size_t)n, strlen(want), "got:\n%.*s", (int)n, out);
  cr_assert_eq(memcmp(out, want, (size_t)n), 0);

  n = mh_rr_range_request(&r, 0, 32767, NULL, 0, 0, out, sizeof out);
  want = "GET /f/32M?x=1 HTTP/1.0\r\n"
         "User-Agent: Wget/1.21.3\r\nAccept: */*\r\n"
         "Accept-Encoding: identity\r\nHost: a.test\r\n"
         "Connection: Keep-Alive, close\r\n"
         "Range: bytes=0-32767\r\n\r\n";
  cr_assert_eq((size_t)n, strlen(want), "got:\n%.*s", (int)n, out);
  cr_assert_eq(memcmp(out, want, (size_t)n), 0);
  cr_assert_eq(mh_rr_range_request(&r, 0, 32767, NULL, 0, 0, out, 30), -ENOSPC);

  n = mh_rr_range_request(&r, 1015808, MH_RR_TO_END, "\"e\"", 3, 1, out, sizeof out);
  want = "GET /f/32M?x=1 HTTP/1.1\r\n"
         "User-Agent: Wget/1.21.3\r\nAccept: */*\r\n"
         "Accept-Encoding: identity\r\nHost: a.test\r\n"
         "Range: bytes=1015808-\r\nIf-Range: \"e\"\r\n\r\n";
  cr_assert_eq((size_t)n, strlen(want), "got:\n%.*s", (int)n, out);
  cr_assert_eq(memcmp(out, want, (size_t)n), 0);
}

/* Whether the program keeps its connection after the response (a moved probe needs it). */
Test(verdict, keeps_alive_per_version_and_connection_tokens) {
  struct mh_hdr none[] = {H("Host", "a.test")};
  struct mh_hdr close_[] = {H("Host", "a.test"), H("connection", "Upgrade, close")};
  struct mh_hdr ka[] = {H("Host", "a.test"), H("Connection", " Keep-Alive ")};
  struct mh_hdr two[] = {H("Connection", "TE"), H("Connection", "close")};
  struct mh_req_view r = req("GET", "/", 1, none, NH(none), 0);
  cr_assert(mh_rr_request_keeps_alive(&r));
  r = req("GET", "/", 1, close_, NH(close_), 0);
  cr_assert_not(mh_rr_request_keeps_alive(&r));
  r = req("GET", "/", 1, two, NH(two), 0);
  cr_assert_not(mh_rr_request_keeps_alive(&r), "a second Connection line counts too");
  r = req("GET", "/", 1, ka, NH(ka), 0);
  cr_assert(mh_rr_request_keeps_alive(&r));
  r = req("GET", "/", 0, none, NH(none), 0);
  cr_assert_not(mh_rr_request_keeps_alive(&r), "HTTP/1.0 closes unless asked");
  r = req("GET", "/", 0, ka, NH(ka), 0);
  cr_assert(mh_rr_request_keeps_alive(&r));
  r = req("GET", "/", 0, close_, NH(close_), 0);
  cr_assert_not(mh_rr_request_keeps_alive(&r));
}

/* ---- no header injection through rewriting ------------------------------------------------
 * llhttp 8 (the session's request parser and each leg's response parser) already rejects a
 * bare CR, a bare LF and NUL in a header value (HPE_LF_EXPECTED / HPE_INVALID_HEADER_TOKEN),
 * but it accepts obs-fold, and mh_split's own line splitter then sees "\tX: 1" as a header
 * named "\tX". The writers guarantee on their own that every line they emit is one of the
 * input's (plus Range/If-Range), whatever the caller hands them. */

/* Every CRLF-terminated line of out[0..n) is the first line, one of allowed[], or the end. */
static void only_lines(const char *out, size_t n, const char *const *allowed, size_t na) {
  const char *p = out, *end = out + n;
  int first = 1;
  while (p < end) {
    const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
    cr_assert_not_null(eol, "unterminated line in:\n%.*s", (int)n, out);
    size_t l = (size_t)(eol - p);
    cr_assert_null(memchr(p, '\n', l), "bare LF inside a line");
    cr_assert_null(memchr(p, '\r', l), "bare CR inside a line");
    cr_assert_null(memchr(p, '\0', l), "NUL inside a line");
    int ok = first || l == 0;
    for (size_t i = 0; i < na && !ok; i++)
      ok = strlen(allowed[i]) == l && !memcmp(allowed[i], p, l);
    cr_assert(ok, "line not in the input: [%.*s]", (int)l, p);
    first = 0;
    p = eol + 2;
  }
}

/* clang-format off */
#define HB(n, v) { n, sizeof(n) - 1, v, sizeof(v) - 1 }
/* clang-format on */

Test(inject, range_request_refuses_values_that_would_split_a_line) {
  static const struct mh_hdr bad[][2] = {
      {HB("Host", "a.test"), HB("Authorization", "Basic x\r\nX-Injected: 1")},
      {HB("Host", "a.test"), HB("Authorization", "Basic x\rX-Injected: 1")},
      {HB("Host", "a.test"), HB("Cookie", "a=1\nX-Injected: 1")},
      {HB("Host", "a.test"), HB("Cookie", "a=1\0X-Injected: 1")},
      {HB("Host", "a.test"), HB("X-V", "a\x01"
                                       "b")},
      {HB("Host", "a.test"), HB("X-V", "a\x7f")},
      {HB("Host", "a.test"), HB("\tX-Injected", "1")}, /* an obs-fold line */
      {HB("Host", "a.test"), HB(" X-Injected", "1")},
      {HB("Host", "a.test"), HB("X-Injected\r\nY", "1")},
      {HB("Host", "a.test"), HB("", "1")},
  };
  char out[512];
  for (size_t i = 0; i < NH(bad); i++) {
    struct mh_req_view r = req("GET", "/f", 1, bad[i], 2, 0);
    cr_assert_eq(mh_rr_range_request(&r, 0, 9, NULL, 0, 1, out, sizeof out), -EINVAL, "case %zu", i);
    cr_assert_eq(mh_rr_request_verdict(&r), MH_RR_BAD_FIELD, "case %zu: relayed, never split", i);
  }
  /* a request line or an If-Range that would break a line is refused too */
  struct mh_hdr ok[] = {HB("Host", "a.test"), HB("Authorization", "Basic dTpw"), HB("X-Tab", "a\tb")};
  struct mh_req_view r = req("GET", "/f\r\nX-Injected: 1", 1, ok, NH(ok), 0);
  cr_assert_eq(mh_rr_range_request(&r, 0, 9, NULL, 0, 1, out, sizeof out), -EINVAL);
  cr_assert_eq(mh_rr_request_verdict(&r), MH_RR_BAD_FIELD);
  r = req("GET", "/f x", 1, ok, NH(ok), 0);
  cr_assert_eq(mh_rr_range_request(&r, 0, 9, NULL, 0, 1, out, sizeof out), -EINVAL);
  cr_assert_eq(mh_rr_request_verdict(&r), MH_RR_BAD_FIELD);
  r = req("GET", "/f\fx", 1, ok, NH(ok), 0); /* found by fuzz_request: a control in the target */
  cr_assert_eq(mh_rr_range_request(&r, 0, 9, NULL, 0, 1, out, sizeof out), -EINVAL);
  cr_assert_eq(mh_rr_request_verdict(&r), MH_RR_BAD_FIELD, "the verdict agrees with the writer");
  r = req("GE\nT", "/f", 1, ok, NH(ok), 0);
  cr_assert_eq(mh_rr_range_request(&r, 0, 9, NULL, 0, 1, out, sizeof out), -EINVAL);
  r = req("GET", "/f", 1, ok, NH(ok), 0);
  cr_assert_eq(mh_rr_range_request(&r, 0, 9, "\"e\"\r\nX: 1", 9, 1, out, sizeof out), -EINVAL);

  /* and a good one carries exactly its lines (HTAB inside a value is a field-value byte) */
  cr_assert_eq(mh_rr_request_verdict(&r), MH_RR_SPLITTABLE);
  ssize_t n = mh_rr_range_request(&r, 0, 9, "\"e\"", 3, 1, out, sizeof out);
  cr_assert_gt(n, 0);
  static const char *const lines[] = {"Host: a.test", "Authorization: Basic dTpw", "X-Tab: a\tb", "Range: bytes=0-9",
                                      "If-Range: \"e\""};
  only_lines(out, (size_t)n, lines, NH(lines));
  cr_assert_eq(memcmp(out, "GET /f HTTP/1.1\r\n", 17), 0);
}

Test(inject, rewrite_head_refuses_values_that_would_split_a_line) {
  static const struct mh_hdr bad[][3] = {
      {HB("Server", "x"), HB("Content-Range", "bytes 0-9/100"), HB("Set-Cookie", "a=1\r\nX-Injected: 1")},
      {HB("Server", "x"), HB("Content-Range", "bytes 0-9/100"), HB("Set-Cookie", "a=1\nX-Injected: 1")},
      {HB("Server", "x"), HB("Content-Range", "bytes 0-9/100"), HB("Set-Cookie", "a=1\rX")},
      {HB("Server", "x"), HB("Content-Range", "bytes 0-9/100"), HB("Set-Cookie", "a=1\0X")},
      {HB("Server", "x"), HB("Content-Range", "bytes 0-9/100"), HB("\tX-Injected", "1")},
      {HB("Server", "x"), HB("Content-Range", "bytes 0-9/100"), HB("X: Y", "1")},
  };
  char out[512];
  for (size_t i = 0; i < NH(bad); i++)
    cr_assert_eq(mh_rr_rewrite_head("HTTP/1.1", bad[i], 3, 100, out, sizeof out), -EINVAL, "case %zu", i);
  /* an obs-folded value reaches here as llhttp's spans glued together ("a" + "\tb"): one line */
  struct mh_hdr folded[] = {HB("Server", "x"), HB("Content-Range", "bytes 0-9/100"), HB("X-Folded", "a\tb")};
  ssize_t n = mh_rr_rewrite_head("HTTP/1.1", folded, 3, 100, out, sizeof out);
  cr_assert_gt(n, 0);
  static const char *const lines[] = {"Server: x", "X-Folded: a\tb", "Content-Length: 100"};
  only_lines(out, (size_t)n, lines, NH(lines));
}
