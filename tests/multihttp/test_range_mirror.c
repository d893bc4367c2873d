/* Unit tests for range requests to a mirror (mh_rr_range_request_to): its request-target and Host, credentials kept home from another origin, Range and If-Range as for the program's own server. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "mh_range.h"

/* clang-format off */
#define H(n, v) { n, sizeof(n) - 1, v, sizeof(v) - 1 }
/* clang-format on */
#define NH(a) (sizeof(a) / sizeof((a)[0]))

/* The API's request (mh_api_xfer.c: GET, Host, User-Agent, Accept, then the caller's headers). */
/* clang-format off */
static const struct mh_hdr api_hdrs[] = {
    H("Host", "a.test"),
    H("User-Agent", "mhttp/0.1.0"),
    H("Accept", "*/*"),
    H("Authorization", "Basic dXNlcjpwYXNz"),
    H("Cookie", "s=1"),
    H("proxy-authorization", "Basic eDp5"),
    H("X-Trace", "7"),
};
/* clang-format on */

static struct mh_req_view api_req(const struct mh_hdr *h, size_t n) {
  struct mh_req_view r = {"GET", 3, "/files/33554432.bin", 19, 1, 1, h, n, 0};
  return r;
}

static struct mh_rr_mirror mirror(const char *target, const char *host, int same_origin) {
  struct mh_rr_mirror m = {target, strlen(target), host, strlen(host), same_origin};
  return m;
}

Test(mirror_request, table) {
  struct mh_hdr nohost[] = {H("User-Agent", "x"), H("Authorization", "Bearer t")};
  struct mh_hdr twohosts[] = {H("Host", "a.test"), H("Accept", "*/*"), H("host", "a.test")};
  struct mh_hdr ranged[] = {H("Host", "a.test"), H("Range", "bytes=5-"), H("If-Range", "\"old\""),
                            H("Connection", "close")};
  struct {
    const char *what;
    const struct mh_hdr *h;
    size_t n;
    struct mh_rr_mirror to;
    int use_to;
    uint64_t first, last;
    const char *ifr;
    const char *want;
  } cases[] = {
      {"another host: its target and Host, no credentials, the rest in order", api_hdrs, NH(api_hdrs),
       mirror("/mirror/big.bin?k=1", "b.test:8080", 0), 1, 32768, 1048575, "\"6553f100-2000000\"",
       "GET /mirror/big.bin?k=1 HTTP/1.1\r\nHost: b.test:8080\r\nUser-Agent: mhttp/0.1.0\r\nAccept: */*\r\n"
       "X-Trace: 7\r\nRange: bytes=32768-1048575\r\nIf-Range: \"6553f100-2000000\"\r\n\r\n"},
      {"the same origin (another path): credentials go too", api_hdrs, NH(api_hdrs), mirror("/copy.bin", "a.test", 1),
       1, 0, MH_RR_TO_END, "\"e\"",
       "GET /copy.bin HTTP/1.1\r\nHost: a.test\r\nUser-Agent: mhttp/0.1.0\r\nAccept: */*\r\n"
       "Authorization: Basic dXNlcjpwYXNz\r\nCookie: s=1\r\nproxy-authorization: Basic eDp5\r\n"
       "X-Trace: 7\r\nRange: bytes=0-\r\nIf-Range: \"e\"\r\n\r\n"},
      {"the program's own server: nothing changes",
       api_hdrs,
       NH(api_hdrs),
       {0},
       0,
       10,
       19,
       NULL,
       "GET /files/33554432.bin HTTP/1.1\r\nHost: a.test\r\nUser-Agent: mhttp/0.1.0\r\nAccept: */*\r\n"
       "Authorization: Basic dXNlcjpwYXNz\r\nCookie: s=1\r\nproxy-authorization: Basic eDp5\r\n"
       "X-Trace: 7\r\nRange: bytes=10-19\r\n\r\n"},
      {"no Host line: the mirror's is added", nohost, NH(nohost), mirror("/f", "c.test", 0), 1, 0, 9, NULL,
       "GET /f HTTP/1.1\r\nUser-Agent: x\r\nHost: c.test\r\nRange: bytes=0-9\r\n\r\n"},
      {"two Host lines: one, the mirror's", twohosts, NH(twohosts), mirror("/f", "c.test", 0), 1, 0, 9, NULL,
       "GET /f HTTP/1.1\r\nHost: c.test\r\nAccept: */*\r\nRange: bytes=0-9\r\n\r\n"},
      {"the program's Range, If-Range and close give way", ranged, NH(ranged), mirror("/f", "c.test", 0), 1, 5,
       MH_RR_TO_END, "\"e\"", "GET /f HTTP/1.1\r\nHost: c.test\r\nRange: bytes=5-\r\nIf-Range: \"e\"\r\n\r\n"},
  };
  char out[1024];
  for (size_t i = 0; i < NH(cases); i++) {
    struct mh_req_view r = api_req(cases[i].h, cases[i].n);
    ssize_t n = mh_rr_range_request_to(&r, cases[i].use_to ? &cases[i].to : NULL, cases[i].first, cases[i].last,
                                       cases[i].ifr, cases[i].ifr ? strlen(cases[i].ifr) : 0, 1, out, sizeof out);
    cr_assert_eq(n, (ssize_t)strlen(cases[i].want), "%s: got %zd:\n%.*s", cases[i].what, n, (int)(n > 0 ? n : 0), out);
    cr_assert_eq(memcmp(out, cases[i].want, (size_t)n), 0, "%s: got:\n%.*s", cases[i].what, (int)n, out);
  }
}

Test(mirror_request, the_plain_call_is_the_same_writer) {
  struct mh_req_view r = api_req(api_hdrs, NH(api_hdrs));
  char a[1024], b[1024];
  ssize_t na = mh_rr_range_request(&r, 32768, 65535, "\"e\"", 3, 1, a, sizeof a);
  ssize_t nb = mh_rr_range_request_to(&r, NULL, 32768, 65535, "\"e\"", 3, 1, b, sizeof b);
  cr_assert_gt(na, 0);
  cr_assert_eq(na, nb);
  cr_assert_eq(memcmp(a, b, (size_t)na), 0);
}

Test(mirror_request, refuses_what_would_break_a_line) {
  struct mh_req_view r = api_req(api_hdrs, NH(api_hdrs));
  char out[1024];
  struct mh_rr_mirror bad[] = {
      mirror("/f x", "b.test", 0),                                                           /* a space in the target */
      mirror("/f\r\nX: 1", "b.test", 0), mirror("", "b.test", 0),       mirror("/f", "", 0), /* no Host value */
      mirror("/f", "b.test\r\nX: 1", 0), mirror("/f", "b.test\x01", 0),
  };
  for (size_t i = 0; i < NH(bad); i++)
    cr_assert_eq(mh_rr_range_request_to(&r, &bad[i], 0, 9, NULL, 0, 1, out, sizeof out), -EINVAL, "case %zu", i);
  struct mh_rr_mirror ok = mirror("/f", "b.test", 0);
  cr_assert_eq(mh_rr_range_request_to(&r, &ok, 0, 9, NULL, 0, 1, out, 40), -ENOSPC);
}

Test(mirror_request, credential_names) {
  const char *yes[] = {"Authorization", "authorization", "COOKIE", "Proxy-Authorization"};
  const char *no[] = {"Cookie2x", "X-Authorization", "Set-Cookie", "Authorizatio", "Host", ""};
  for (size_t i = 0; i < NH(yes); i++)
    cr_assert(mh_rr_is_credential(yes[i], strlen(yes[i])), "%s", yes[i]);
  for (size_t i = 0; i < NH(no); i++)
    cr_assert_not(mh_rr_is_credential(no[i], strlen(no[i])), "%s", no[i]);
}
