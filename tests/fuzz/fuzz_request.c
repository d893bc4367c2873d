/* Fuzz target: the program's first bytes through shim_sniff_http, then a request head framed by llhttp into mh_rr_request_verdict / keeps_alive / range_request, and the same range request for a mirror. */
#include <errno.h>
#include <inttypes.h>
#include <llhttp.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "mh_range.h"
#include "shim_sniff.h"

#define REQ_MAX_HDRS 96 /* mh_split.c's MH__MAX_HDRS */

/* Every prefix of the first write: one of the three answers, MORE only for nothing, and once
 * a prefix is refused no longer one is taken (the shim decides on the first write). */
static void fuzz__sniff(const char *p, size_t n) {
  FUZZ_CHECK(shim_sniff_http(p, 0) == SHIM_SNIFF_MORE);
  size_t lim = n < 300 ? n : 300;
  int refused = 0;
  for (size_t k = 1; k <= lim; k++) {
    enum shim_sniff s = shim_sniff_http(p, k);
    FUZZ_CHECK(s == SHIM_SNIFF_NO || s == SHIM_SNIFF_HTTP);
    FUZZ_CHECK(!(refused && s == SHIM_SNIFF_HTTP));
    refused = s == SHIM_SNIFF_NO;
  }
  if (n && shim_sniff_http(p, n) == SHIM_SNIFF_HTTP && memchr(p, '\n', n)) {
    /* a complete first line that was taken ends in " HTTP/1.<digit>" */
    size_t line = (size_t)((const char *)memchr(p, '\n', n) - p);
    if (line && p[line - 1] == '\r')
      line--;
    FUZZ_CHECK(line >= 9 && !memcmp(p + line - 9, " HTTP/1.", 8) && p[line - 1] >= '0' && p[line - 1] <= '9');
  }
}

static int fuzz__on_complete(llhttp_t *p) {
  (void)p;
  return HPE_PAUSED; /* as mh_session.c: the message ends here */
}

/* Frames one request with llhttp the way mh_session.c does; returns its length or 0. */
static size_t fuzz__frame(const char *p, size_t n) {
  llhttp_settings_t st;
  llhttp_t lp;
  llhttp_settings_init(&st);
  st.on_message_complete = fuzz__on_complete;
  llhttp_init(&lp, HTTP_REQUEST, &st);
  if (llhttp_execute(&lp, p, n) != HPE_PAUSED || lp.method != HTTP_GET)
    return 0; /* the split only ever sees held GETs */
  return (size_t)(llhttp_get_error_pos(&lp) - p);
}

static int fuzz__is(const struct mh_hdr *h, const char *name) {
  return h->name_len == strlen(name) && !strncasecmp(h->name, name, h->name_len);
}

static int fuzz__same(const struct mh_hdr *a, const struct mh_hdr *b) {
  return a->name_len == b->name_len && !memcmp(a->name, b->name, a->name_len) && a->value_len == b->value_len &&
         !memcmp(a->value, b->value, a->value_len);
}

static int fuzz__has_close(const char *p, size_t n) {
  for (size_t i = 0; i + 5 <= n; i++)
    if (!strncasecmp(p + i, "close", 5))
      return 1;
  return 0;
}

/* The range request re-split must be the input's request line and kept headers, in order,
 * then exactly our Range and If-Range: no header line the input did not have. */
static void fuzz__check_range_request(const struct mh_req_view *in, const char *out, size_t len, uint64_t first,
                                      uint64_t last, const char *ir, size_t irl, int ka) {
  static struct mh_hdr oh[REQ_MAX_HDRS + 2];
  struct mh_req_view ov;
  /* room for two more headers than the input may have: our Range and If-Range */
  FUZZ_CHECK(mh_rr_parse_request(out, len, &ov, oh, REQ_MAX_HDRS + 2) == 0);
  FUZZ_CHECK(ov.method_len == in->method_len && !memcmp(ov.method, in->method, in->method_len));
  FUZZ_CHECK(ov.target_len == in->target_len && !memcmp(ov.target, in->target, in->target_len));
  FUZZ_CHECK(ka ? ov.http_major == 1 && ov.http_minor == 1
                : ov.http_major == in->http_major && ov.http_minor == in->http_minor);
  size_t j = 0;
  for (size_t i = 0; i < in->nhdrs; i++) {
    const struct mh_hdr *h = &in->hdrs[i];
    if (fuzz__is(h, "Range") || fuzz__is(h, "If-Range"))
      continue;
    if (ka && fuzz__is(h, "Connection") && !(j < ov.nhdrs && fuzz__same(h, &oh[j]))) {
      FUZZ_CHECK(fuzz__has_close(h->value, h->value_len)); /* only one listing close is dropped */
      continue;
    }
    /* byte-equal name and value: no CR/LF the input's header did not have */
    FUZZ_CHECK(j < ov.nhdrs && fuzz__same(h, &oh[j]));
    j++;
  }
  char want[64];
  snprintf(want, sizeof want, "bytes=%" PRIu64 "-%" PRIu64, first, last);
  FUZZ_CHECK(j < ov.nhdrs && fuzz__is(&oh[j], "Range") && oh[j].value_len == strlen(want) &&
             !memcmp(oh[j].value, want, oh[j].value_len));
  j++;
  if (ir) {
    FUZZ_CHECK(j < ov.nhdrs && fuzz__is(&oh[j], "If-Range") && oh[j].value_len == irl && !memcmp(oh[j].value, ir, irl));
    j++;
  }
  FUZZ_CHECK(j == ov.nhdrs);
}

/* The same range request for a mirror (mh_rr_range_request_to): its target, its Host exactly
 * once, every other line of the plain one in order, no credential to another origin. */
static void fuzz__check_mirror(const struct mh_req_view *in, const char *plain, size_t plen, uint64_t first,
                               uint64_t last, const char *ir, size_t irl, int ka, int same) {
  static const struct mh_rr_mirror to = {"/m?k=1", 6, "m.test:8080", 11, 0};
  struct mh_rr_mirror m = to;
  m.same_origin = same;
  static struct mh_hdr ph[REQ_MAX_HDRS + 2], mh[REQ_MAX_HDRS + 3];
  struct mh_req_view pv, mv;
  char out[16 * 1024 + 640];
  ssize_t n = mh_rr_range_request_to(in, &m, first, last, ir, irl, ka, out, sizeof out);
  FUZZ_CHECK(n > 0 && mh_rr_parse_request(out, (size_t)n, &mv, mh, REQ_MAX_HDRS + 3) == 0 &&
             mh_rr_parse_request(plain, plen, &pv, ph, REQ_MAX_HDRS + 2) == 0);
  FUZZ_CHECK(mv.target_len == to.target_len && !memcmp(mv.target, to.target, to.target_len));
  size_t hosts = 0, j = 0;
  for (size_t i = 0; i < mv.nhdrs; i++) {
    const struct mh_hdr *h = &mh[i];
    FUZZ_CHECK(same || !mh_rr_is_credential(h->name, h->name_len));
    if (fuzz__is(h, "Host")) {
      FUZZ_CHECK(h->value_len == to.host_len && !memcmp(h->value, to.host, to.host_len));
      hosts++;
      continue;
    }
    while (j < pv.nhdrs && (fuzz__is(&ph[j], "Host") || (!same && mh_rr_is_credential(ph[j].name, ph[j].name_len))))
      j++;
    FUZZ_CHECK(j < pv.nhdrs && fuzz__same(h, &ph[j]));
    j++;
  }
  FUZZ_CHECK(hosts == 1);
}

static uint64_t fuzz__u64(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n && i < 8; i++)
    v = v << 8 | p[i];
  return v;
}

/* A control other than HTAB (what the writers refuse in a value). */
static int fuzz__has_ctl(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
      return 1;
  return 0;
}

/* Input: the program's request, then (after the head) optional parameter bytes: keep_alive
 * (bit 0; bit 1: the mirror is of the same origin), the output capacity (2 bytes), first and
 * last (4 bytes each), then an If-Range value. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *p = (const char *)data;
  fuzz__sniff(p, size);
  size_t head = fuzz__frame(p, size);
  static struct mh_hdr hdrs[REQ_MAX_HDRS];
  struct mh_req_view v;
  if (!head || mh_rr_parse_request(p, head, &v, hdrs, REQ_MAX_HDRS) < 0)
    return 0;
  enum mh_rr_verdict verdict = mh_rr_request_verdict(&v);
  FUZZ_CHECK(mh_rr_verdict_str(verdict) != NULL);
  int ka = mh_rr_request_keeps_alive(&v);
  FUZZ_CHECK(ka == 0 || ka == 1);
  if (verdict == MH_RR_SPLITTABLE) {
    FUZZ_CHECK(v.method_len == 3 && !memcmp(v.method, "GET", 3) && v.target[0] == '/' && !v.has_body);
    /* a program's own Range is split only as one span: one Range line that parses, at most
     * one If-Range, and that one only with a Range */
    size_t nr = 0, ni = 0;
    struct mh_rr_span span;
    const struct mh_hdr *ifr;
    for (size_t i = 0; i < v.nhdrs; i++) {
      nr += fuzz__is(&hdrs[i], "Range");
      ni += fuzz__is(&hdrs[i], "If-Range");
      if (fuzz__is(&hdrs[i], "Range"))
        FUZZ_CHECK(mh_rr_parse_range(hdrs[i].value, hdrs[i].value_len, &span) == 0 && span.first <= span.last);
    }
    FUZZ_CHECK(nr <= 1 && ni <= nr && mh_rr_request_span(&v, &span, &ifr) == (int)nr);
  }

  const uint8_t *prm = data + head;
  size_t np = size - head;
  int keep = np > 0 ? prm[0] & 1 : 1;
  size_t cap = np > 2 ? (size_t)(prm[1] << 8 | prm[2]) : 16 * 1024 + 512; /* mh_split.c's buffer */
  uint64_t first = np > 6 ? fuzz__u64(prm + 3, 4) : 0;
  uint64_t last = np > 10 ? first + fuzz__u64(prm + 7, 4) : 32767;
  /* an If-Range comes from a response header value: llhttp hands those over without CR/LF */
  const char *ir = np > 11 ? (const char *)prm + 11 : NULL;
  size_t irl = 0;
  while (ir && irl < np - 11 && ir[irl] != '\r' && ir[irl] != '\n')
    irl++;
  while (irl && (*ir == ' ' || *ir == '\t')) /* and without the OWS around it */
    ir++, irl--;
  while (irl && (ir[irl - 1] == ' ' || ir[irl - 1] == '\t'))
    irl--;
  char *out = malloc(cap ? cap : 1); /* exact size: a write past cap trips ASan */
  ssize_t n = mh_rr_range_request(&v, first, last, ir, irl, keep, out, cap);
  /* -EINVAL: the writer refuses a field it cannot re-emit as one line; a splittable request's
   * fields are all good, so only its If-Range (a response's value) can be the cause */
  FUZZ_CHECK(n == -ENOSPC || (n > 0 && (size_t)n <= cap) ||
             (n == -EINVAL && (verdict != MH_RR_SPLITTABLE || fuzz__has_ctl(ir, irl))));
  if (n > 0) {
    fuzz__check_range_request(&v, out, (size_t)n, first, last, ir, irl, keep);
    fuzz__check_mirror(&v, out, (size_t)n, first, last, ir, irl, keep, np > 0 && (prm[0] & 2));
  }
  free(out);
  return 0;
}
