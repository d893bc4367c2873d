/* Which relayed answers a split may take over when a path appears (mh__adopt_judge): only one whose rest other paths can fetch and check exactly. */
#include <criterion/criterion.h>
#include <string.h>

#include "split_start.h"

#define DATE "Date: Sat, 28 Nov 2026 12:00:10 GMT\r\n"
#define LM "Last-Modified: Sat, 28 Nov 2026 12:00:00 GMT\r\n"

static const struct {
  const char *head;
  uint64_t total;
  const char *why; /* NULL: taken */
} cases[] = {
    {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: \"v1\"\r\n\r\n", 1000, NULL},
    {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n" LM DATE "\r\n", 1000, NULL},
    {"HTTP/1.0 200 OK\r\nContent-Length: 1000\r\nETag: \"v1\"\r\nContent-Encoding: gzip\r\n\r\n", 1000, NULL},
    /* a Last-Modified as old as the answer could change within its second: weak */
    {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n" LM "Date: Sat, 28 Nov 2026 12:00:00 GMT\r\n\r\n", 1000,
     "no strong validator"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: W/\"v1\"\r\n\r\n", 1000, "no strong validator"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", 1000, "no strong validator"},
    {"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-999/2000\r\nContent-Length: 1000\r\nETag: \"v1\"\r\n\r\n",
     1000, "not a 200"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: \"v1\"\r\n\r\n", 999, "not one Content-Length"},
    /* llhttp refuses a repeated Content-Length itself (the command's reader accepts identical
     * ones, as curl does; such an answer stays with it) */
    {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Length: 1000\r\nETag: \"v1\"\r\n\r\n", 1000,
     "a head not parsable"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Range: bytes 0-999/1000\r\nETag: \"v1\"\r\n\r\n", 1000,
     "a Transfer-Encoding or Content-Range"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: \"v1\"\r\nRepr-Digest: sha-256=:AAAA:\r\n\r\n", 1000,
     "a digest the relayed bytes were not hashed for"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: \"v1\"\r\nDigest: SHA-256=AAAA\r\n\r\n", 1000,
     "a digest the relayed bytes were not hashed for"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: \"v1\"\r\nContent-Encoding: gzip\r\nContent-Encoding: "
     "br\r\n\r\n",
     1000, "two Content-Encodings"},
    {"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nETag: \"v1\"\r\n", 1000, "a head not parsable"},
};

Test(adopt, judges_each_head) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct mh_hdr h[16];
    size_t n = 0;
    struct mh_probe_info info;
    const char *why = mh__adopt_judge(cases[i].head, strlen(cases[i].head), cases[i].total, h, 16, &n, &info);
    if (!cases[i].why)
      cr_assert_null(why, "case %zu: refused (%s)", i, why);
    else
      cr_assert(why && !strcmp(why, cases[i].why), "case %zu: %s, want %s", i, why ? why : "taken", cases[i].why);
  }
}

/* The head's lines are kept as views: the validator a range asks with is the head's own. */
Test(adopt, keeps_the_heads_validator) {
  const char *head = "HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 5000\r\nETag: \"abc\"\r\n\r\n";
  struct mh_hdr h[16];
  size_t n = 0, vl = 0;
  struct mh_probe_info info;
  cr_assert_null(mh__adopt_judge(head, strlen(head), 5000, h, 16, &n, &info));
  cr_assert_eq(n, 3);
  const char *v = mh_rr_if_range(&info, &vl);
  cr_assert(v && vl == 5 && !memcmp(v, "\"abc\"", 5));
  /* more lines than room: refused, never judged on a part of the head */
  cr_assert_not_null(mh__adopt_judge(head, strlen(head), 5000, h, 2, &n, &info));
}
