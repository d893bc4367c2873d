/* HTTP rules for range splitting: which requests may be split, what a probe answer means, and the heads we write. */
#include "mh_range.h"

#include <llhttp.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int mh__ieq(const char *a, size_t alen, const char *lit) {
  size_t n = strlen(lit);
  return alen == n && strncasecmp(a, lit, n) == 0;
}

/* Returns the only occurrence of a header, NULL when absent; *count tells how many there were
 * so callers can refuse ambiguous heads (two Content-Range lines, say). */
static const struct mh_hdr *mh__find(const struct mh_hdr *h, size_t n, const char *name, size_t *count) {
  const struct mh_hdr *found = NULL;
  size_t c = 0;
  for (size_t i = 0; i < n; i++) {
    if (mh__ieq(h[i].name, h[i].name_len, name)) {
      if (!found)
        found = &h[i];
      c++;
    }
  }
  if (count)
    *count = c;
  return found;
}

/* Does a comma-separated list value contain token (case-insensitive)? Used for Connection. */
static int mh__list_has(const char *v, size_t len, const char *token) {
  size_t i = 0;
  while (i < len) {
    while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
      i++;
    size_t s = i;
    while (i < len && v[i] != ',')
      i++;
    size_t e = i;
    while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
      e--;
    if (e > s && mh__ieq(v + s, e - s, token))
      return 1;
  }
  return 0;
}

int mh_rr_request_keeps_alive(const struct mh_req_view *req) {
  const char *tok = req->http_minor >= 1 ? "close" : "keep-alive";
  int listed = 0;
  for (size_t i = 0; i < req->nhdrs && !listed; i++) {
    const struct mh_hdr *h = &req->hdrs[i];
    listed = mh__ieq(h->name, h->name_len, "Connection") && mh__list_has(h->value, h->value_len, tok);
  }
  return req->http_minor >= 1 ? !listed : listed;
}

/* RFC 9110 §5.6.2 tchar. */
static int mh__tchar(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int mh__token(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!mh__tchar((unsigned char)s[i]))
      return 0;
  return n > 0;
}

/* A value is re-emitted between ": " and CRLF: a CR, LF or NUL in it would end the line early
 * (a line the program never sent), so every control but HTAB is refused (§5.5 field-value).
 * llhttp already rejects these in what it parses; this is the writer's own guarantee. */
static int mh__value_ok(const char *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)v[i];
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      return 0;
  }
  return 1;
}

static int mh__field_ok(const struct mh_hdr *h) {
  return mh__token(h->name, h->name_len) && mh__value_ok(h->value, h->value_len);
}

/* The program's request head as llhttp reads it (the session frames it with llhttp too, so
 * a head it framed parses here alike). Each span of a head given whole comes in one callback;
 * one continued (extend) is taken whole all the same. */
struct mh__reqp {
  struct mh_req_view *v;
  struct mh_hdr *hdrs;
  size_t max, nh;
  int in_field; /* the last span was a header name */
};

static void mh__reqp_span(const char **at0, size_t *len0, const char *at, size_t len) {
  if (*at0)
    *len0 = (size_t)(at + len - *at0);
  else
    *at0 = at, *len0 = len;
}

static int mh__reqp_method(llhttp_t *p, const char *at, size_t len) {
  struct mh__reqp *r = p->data;
  mh__reqp_span(&r->v->method, &r->v->method_len, at, len);
  return 0;
}

static int mh__reqp_url(llhttp_t *p, const char *at, size_t len) {
  struct mh__reqp *r = p->data;
  mh__reqp_span(&r->v->target, &r->v->target_len, at, len);
  return 0;
}

static int mh__reqp_field(llhttp_t *p, const char *at, size_t len) {
  struct mh__reqp *r = p->data;
  if (!r->in_field) {
    if (r->nh == r->max)
      return -1; /* more header lines than the caller holds */
    r->hdrs[r->nh++] = (struct mh_hdr){.name = at, .value = at + len};
  }
  struct mh_hdr *h = &r->hdrs[r->nh - 1];
  mh__reqp_span(&h->name, &h->name_len, at, len);
  h->value = h->name + h->name_len; /* an empty value, unless one comes */
  r->in_field = 1;
  return 0;
}

static int mh__reqp_value(llhttp_t *p, const char *at, size_t len) {
  struct mh__reqp *r = p->data;
  struct mh_hdr *h = &r->hdrs[r->nh - 1];
  if (r->in_field)
    h->value = NULL;
  mh__reqp_span(&h->value, &h->value_len, at, len);
  r->in_field = 0;
  return 0;
}

static int mh__reqp_done(llhttp_t *p) {
  (void)p;
  return HPE_PAUSED; /* the head is all that is read: error_pos says where it ended */
}

static const llhttp_settings_t mh__reqp_settings = {
    .on_method = mh__reqp_method,
    .on_url = mh__reqp_url,
    .on_header_field = mh__reqp_field,
    .on_header_value = mh__reqp_value,
    .on_headers_complete = mh__reqp_done,
};

int mh_rr_parse_request(const char *p, size_t n, struct mh_req_view *v, struct mh_hdr *hdrs, size_t max) {
  struct mh__reqp r = {.v = v, .hdrs = hdrs, .max = max};
  llhttp_t parser;
  *v = (struct mh_req_view){.hdrs = hdrs};
  llhttp_init(&parser, HTTP_REQUEST, &mh__reqp_settings);
  parser.data = &r;
  /* nothing after the head: a body or a pipelined request is the caller's to frame */
  if (llhttp_execute(&parser, p, n) != HPE_PAUSED || llhttp_get_error_pos(&parser) != p + n || !v->method || !v->target)
    return -EINVAL;
  v->http_major = parser.http_major;
  v->http_minor = parser.http_minor;
  v->nhdrs = r.nh;
  for (size_t i = 0; i < r.nh; i++) {
    struct mh_hdr *h = &hdrs[i];
    while (h->value_len && (h->value[0] == ' ' || h->value[0] == '\t'))
      h->value++, h->value_len--;
    while (h->value_len && (h->value[h->value_len - 1] == ' ' || h->value[h->value_len - 1] == '\t'))
      h->value_len--;
    if (mh__ieq(h->name, h->name_len, "Transfer-Encoding") ||
        (mh__ieq(h->name, h->name_len, "Content-Length") && !(h->value_len == 1 && h->value[0] == '0')))
      v->has_body = 1;
  }
  return 0;
}

/* A request-target is re-emitted between two spaces: a space or control in it would change
 * the request line. */
static int mh__target_bytes_ok(const char *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)t[i];
    if (c <= 0x20 || c == 0x7f)
      return 0;
  }
  return n > 0;
}

static int mh__target_ok(const struct mh_req_view *req) { return mh__target_bytes_ok(req->target, req->target_len); }

enum mh_rr_verdict mh_rr_request_verdict(const struct mh_req_view *req) {
  if (req->method_len != 3 || memcmp(req->method, "GET", 3) != 0)
    return MH_RR_NOT_GET; /* methods are case-sensitive: "get" is another method */
  if (req->target_len == 0 || req->target[0] != '/')
    return MH_RR_NOT_ORIGIN_FORM;
  if (req->http_major != 1 || (req->http_minor != 0 && req->http_minor != 1))
    return MH_RR_VERSION;
  if (!mh__target_ok(req))
    return MH_RR_BAD_FIELD;
  if (req->has_body)
    return MH_RR_HAS_BODY;
  struct mh_rr_span span;
  const struct mh_hdr *ifr;
  if (mh_rr_request_span(req, &span, &ifr) < 0)
    return MH_RR_HAS_RANGE;
  int host = 0;
  for (size_t i = 0; i < req->nhdrs; i++) {
    const struct mh_hdr *h = &req->hdrs[i];
    host |= mh__ieq(h->name, h->name_len, "Host");
    if (mh__ieq(h->name, h->name_len, "Upgrade"))
      return MH_RR_UPGRADE;
    if (mh__ieq(h->name, h->name_len, "Expect"))
      return MH_RR_EXPECT;
    if (!mh__field_ok(h))
      return MH_RR_BAD_FIELD;
  }
  return host || req->http_minor >= 1 ? MH_RR_SPLITTABLE : MH_RR_NO_HOST;
}

const char *mh_rr_verdict_str(enum mh_rr_verdict v) {
  switch (v) {
  case MH_RR_SPLITTABLE: return "splittable";
  case MH_RR_NOT_GET: return "not GET";
  case MH_RR_NOT_ORIGIN_FORM: return "not origin-form (proxy request)";
  case MH_RR_VERSION: return "not HTTP/1.0 or 1.1";
  case MH_RR_HAS_BODY: return "request has a body";
  case MH_RR_HAS_RANGE: return "program's Range is not one span";
  case MH_RR_NO_HOST: return "HTTP/1.0 without Host";
  case MH_RR_UPGRADE: return "Upgrade requested";
  case MH_RR_EXPECT: return "Expect header";
  case MH_RR_BAD_FIELD: return "malformed header field";
  }
  return "unknown";
}

/* Parses an unsigned decimal of at most 19 digits (so it fits in int64 arithmetic). */
static int mh__parse_u64(const char **p, const char *end, uint64_t *out) {
  const char *s = *p;
  uint64_t v = 0;
  size_t digits = 0;
  while (s < end && *s >= '0' && *s <= '9') {
    if (++digits > 19)
      return -EINVAL;
    v = v * 10 + (uint64_t)(*s - '0');
    s++;
  }
  if (digits == 0)
    return -EINVAL;
  *p = s;
  *out = v;
  return 0;
}

int mh_rr_parse_range(const char *v, size_t len, struct mh_rr_span *out) {
  const char *p = v, *end = v + len;
  const char *eq = memchr(v, '=', len);
  if (!eq || !mh__token(v, (size_t)(eq - v)))
    return -EINVAL;
  if (!mh__ieq(v, (size_t)(eq - v), "bytes"))
    return -ENOTSUP; /* another unit: the origin's business */
  p = eq + 1;
  if (memchr(p, ',', (size_t)(end - p)))
    return -ENOTSUP; /* several ranges: a multipart answer, not one span */
  if (p < end && *p == '-')
    return -ENOTSUP; /* a suffix: where it starts is only known from the total */
  uint64_t f, l = MH_RR_TO_END;
  if (mh__parse_u64(&p, end, &f) < 0 || p == end || *p++ != '-')
    return -EINVAL;
  if (p != end && (mh__parse_u64(&p, end, &l) < 0 || p != end || l < f))
    return -EINVAL;
  *out = (struct mh_rr_span){f, l};
  return 0;
}

int mh_rr_request_span(const struct mh_req_view *req, struct mh_rr_span *span, const struct mh_hdr **if_range) {
  size_t nr, ni;
  const struct mh_hdr *rg = mh__find(req->hdrs, req->nhdrs, "Range", &nr);
  const struct mh_hdr *ir = mh__find(req->hdrs, req->nhdrs, "If-Range", &ni);
  *if_range = NULL;
  if (!nr && !ni)
    return 0;
  if (nr != 1 || ni > 1 || mh_rr_parse_range(rg->value, rg->value_len, span) < 0)
    return -ENOTSUP;
  *if_range = ir;
  return 1;
}

int mh_rr_parse_content_range(const char *v, size_t len, uint64_t *first, uint64_t *last, uint64_t *total) {
  const char *p = v, *end = v + len;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
    end--;
  if (end - p < 6 || strncasecmp(p, "bytes", 5) != 0 || p[5] != ' ')
    return -EINVAL;
  p += 6;
  uint64_t f, l, t;
  if (mh__parse_u64(&p, end, &f) < 0 || p >= end || *p++ != '-')
    return -EINVAL;
  if (mh__parse_u64(&p, end, &l) < 0 || p >= end || *p++ != '/')
    return -EINVAL;
  if (mh__parse_u64(&p, end, &t) < 0 || p != end) /* an unknown total ("*") fails here */
    return -EINVAL;
  if (f > l || l >= t)
    return -EINVAL;
  *first = f;
  *last = l;
  *total = t;
  return 0;
}

static int mh__etag_strong(const char *v, size_t len) {
  /* entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE; only the unprefixed form is strong. */
  if (len < 2 || v[0] != '"' || v[len - 1] != '"')
    return 0;
  for (size_t i = 1; i + 1 < len; i++)
    if (v[i] == '"')
      return 0;
  return 1;
}

static int mh__month(const char *m) {
  static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
  for (int i = 0; i < 12; i++)
    if (strncmp(m, names + 3 * i, 3) == 0)
      return i;
  return -1;
}

/* Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm), so the
 * result does not depend on TZ or on timegm's availability. */
static int64_t mh__days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int mh_rr_parse_http_date(const char *v, size_t len, int64_t *out) {
  char buf[64];
  while (len && (*v == ' ' || *v == '\t'))
    v++, len--;
  while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
    len--;
  if (len == 0 || len >= sizeof buf)
    return -EINVAL;
  memcpy(buf, v, len);
  buf[len] = '\0';

  int day, year, hh, mm, ss, n = 0;
  char mon[4], wk[16], tz[4];
  /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
  if (sscanf(buf, "%3s, %2d %3s %4d %2d:%2d:%2d %3s%n", wk, &day, mon, &year, &hh, &mm, &ss, tz, &n) == 8 &&
      (size_t)n == len && strcmp(tz, "GMT") == 0) {
    /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT (two-digit year: RFC 9110 §5.6.7 says
     * interpret a year more than 50 years ahead as the past century). */
  } else if (n = 0, sscanf(buf, "%15[A-Za-z], %2d-%3s-%2d %2d:%2d:%2d %3s%n", wk, &day, mon, &year, &hh, &mm, &ss, tz,
                           &n) == 8 &&
                        (size_t)n == len && strcmp(tz, "GMT") == 0) {
    year += year < 70 ? 2000 : 1900;
    /* asctime: Sun Nov  6 08:49:37 1994 */
  } else if (n = 0, sscanf(buf, "%3s %3s %2d %2d:%2d:%2d %4d%n", wk, mon, &day, &hh, &mm, &ss, &year, &n) == 7 &&
                        (size_t)n == len) {
  } else {
    return -EINVAL;
  }
  int m = mh__month(mon);
  if (m < 0 || day < 1 || day > 31 || hh > 23 || mm > 59 || ss > 60 || year < 1970 || hh < 0 || mm < 0 || ss < 0)
    return -EINVAL;
  *out = mh__days_from_civil(year, m + 1, day) * 86400 + hh * 3600 + mm * 60 + ss;
  return 0;
}

int mh_rr_probe_status_relayable(int status) {
  /* RFC 9110 §14.2: Range is evaluated after the target resource and the preconditions, so
     * a conforming server answers these whatever Range says. Any other status (403, 429, 5xx,
     * 1xx, a 101 nobody asked for, ...) may be the server's reaction to the Range we added:
     * the program must get the answer to its own request instead. */
  switch (status) {
  case 204:
  case 301:
  case 302:
  case 303:
  case 304:
  case 307:
  case 308:
  case 404:
  case 410: return 1;
  default: return 0;
  }
}

enum mh_probe_action mh_rr_classify_probe(int status, const struct mh_hdr *hdrs, size_t n, struct mh_probe_info *info) {
  return mh_rr_classify_probe_at(status, hdrs, n, 0, info);
}

void mh_rr_head_validators(const struct mh_hdr *hdrs, size_t n, struct mh_probe_info *info) {
  size_t count;
  const struct mh_hdr *et = mh__find(hdrs, n, "ETag", &count);
  if (et && count == 1) {
    info->etag = et->value;
    info->etag_len = et->value_len;
    info->etag_strong = mh__etag_strong(et->value, et->value_len);
  }
  const struct mh_hdr *lm = mh__find(hdrs, n, "Last-Modified", &count);
  if (lm && count == 1) {
    info->last_modified = lm->value;
    info->last_modified_len = lm->value_len;
    const struct mh_hdr *date = mh__find(hdrs, n, "Date", &count);
    int64_t tl, td;
    /* §8.8.2.2: a Last-Modified is strong for If-Range when the response's Date is at
         * least one second later: any later change would then carry a later date. */
    if (date && count == 1 && mh_rr_parse_http_date(lm->value, lm->value_len, &tl) == 0 &&
        mh_rr_parse_http_date(date->value, date->value_len, &td) == 0 && td - tl >= 1)
      info->last_modified_strong = 1;
  }
}

const struct mh_hdr *mh_rr_header(const struct mh_hdr *hdrs, size_t n, const char *name, size_t *count) {
  return mh__find(hdrs, n, name, count);
}

enum mh_probe_action mh_rr_classify_probe_at(int status, const struct mh_hdr *hdrs, size_t n, uint64_t first,
                                             struct mh_probe_info *info) {
  size_t count;
  if (status == 416)
    return MH_PROBE_RESEND; /* e.g. an empty file: bytes=0-… is unsatisfiable */
  if (status == 200)
    /* a 200 that names a range is not the whole representation (a broken server answered
         * our Range with its bytes only): only the program's own request tells what it gets */
    return mh__find(hdrs, n, "Content-Range", &count) ? MH_PROBE_RESEND : MH_PROBE_RELAY;
  if (status != 206)
    return mh_rr_probe_status_relayable(status) ? MH_PROBE_RELAY : MH_PROBE_RESEND;

  /* From here on the answer is a 206 the program never asked for: anything we cannot
     * manage must be replaced by the answer to the original request, never relayed. */
  const struct mh_hdr *cr = mh__find(hdrs, n, "Content-Range", &count);
  if (!cr || count != 1)
    return MH_PROBE_RESEND; /* multipart/byteranges or an ambiguous head */
  memset(info, 0, sizeof *info);
  if (mh_rr_parse_content_range(cr->value, cr->value_len, &info->first, &info->last, &info->total) < 0 ||
      info->first != first)
    return MH_PROBE_RESEND;

  const struct mh_hdr *cl = mh__find(hdrs, n, "Content-Length", &count);
  if (cl) {
    const char *p = cl->value;
    uint64_t v;
    if (count != 1 || mh__parse_u64(&p, cl->value + cl->value_len, &v) < 0 || p != cl->value + cl->value_len ||
        v != info->last - info->first + 1)
      return MH_PROBE_RESEND;
  }
  const struct mh_hdr *te = mh__find(hdrs, n, "Transfer-Encoding", &count);
  if (te && (count != 1 || !mh__ieq(te->value, te->value_len, "chunked")))
    return MH_PROBE_RESEND; /* a coding other than chunked alone changes the body bytes */

  mh_rr_head_validators(hdrs, n, info);
  const struct mh_hdr *ce = mh__find(hdrs, n, "Content-Encoding", &count);
  if (ce) {
    if (count != 1)
      return MH_PROBE_RESEND;
    info->content_encoding = ce->value;
    info->content_encoding_len = ce->value_len;
  }
  const struct mh_hdr *rd = mh__find(hdrs, n, "Repr-Digest", &count);
  if (rd && count == 1)
    info->repr_digest = rd->value, info->repr_digest_len = rd->value_len;
  const struct mh_hdr *dg = mh__find(hdrs, n, "Digest", &count);
  if (dg && count == 1)
    info->digest = dg->value, info->digest_len = dg->value_len;
  return MH_PROBE_MANAGED;
}

const char *mh_rr_if_range(const struct mh_probe_info *info, size_t *len) {
  if (info->etag && info->etag_strong) {
    *len = info->etag_len;
    return info->etag;
  }
  if (!info->etag && info->last_modified && info->last_modified_strong) {
    /* §13.1.5: a date only when there is no entity tag at all. */
    *len = info->last_modified_len;
    return info->last_modified;
  }
  *len = 0;
  return NULL;
}

/* 1 when the head carries a Content-Length that is not exactly len (or is repeated or not a
 * number); an absent one (chunked) is no disagreement. */
static int mh__length_differs(const struct mh_hdr *hdrs, size_t n, uint64_t len) {
  size_t count;
  const struct mh_hdr *cl = mh__find(hdrs, n, "Content-Length", &count);
  if (!cl)
    return 0;
  const char *p = cl->value;
  uint64_t v;
  return count != 1 || mh__parse_u64(&p, cl->value + cl->value_len, &v) < 0 || p != cl->value + cl->value_len ||
         v != len;
}

static int mh__same_representation(const struct mh_probe_info *probe, const struct mh_hdr *hdrs, size_t n);

/* 1 when the answer names the representation's digest (one line of field) otherwise than the
 * probe did: a source with other bytes under the same validator (a cache holding an older
 * version) is told apart by it before any of its bytes count. Absent on either side: 0. */
static int mh__digest_field_differs(const char *pv, size_t plen, const struct mh_hdr *hdrs, size_t n,
                                    const char *name) {
  size_t count;
  const struct mh_hdr *h = mh__find(hdrs, n, name, &count);
  return pv && h && count == 1 && !(h->value_len == plen && memcmp(h->value, pv, plen) == 0);
}

static int mh__same(const char *a, size_t alen, const char *b, size_t blen) {
  if (!a || !b)
    return a == b;
  return alen == blen && memcmp(a, b, alen) == 0;
}

int mh_rr_check_range_response(const struct mh_probe_info *probe, int status, const struct mh_hdr *hdrs, size_t n,
                               uint64_t first, uint64_t last) {
  if (status == 200)
    return -EPROTO; /* If-Range failed: the source has another representation */
  if (status != 206)
    return -EBADMSG;
  size_t count;
  const struct mh_hdr *cr = mh__find(hdrs, n, "Content-Range", &count);
  uint64_t f, l, t;
  if (!cr || count != 1 || mh_rr_parse_content_range(cr->value, cr->value_len, &f, &l, &t) < 0)
    return -EBADMSG;
  if (t != probe->total)
    return -EPROTO;
  if (f != first || l != last)
    return -EBADMSG;
  if (mh__length_differs(hdrs, n, last - first + 1))
    return -EBADMSG; /* a body longer or shorter than the range it claims */
  return mh__same_representation(probe, hdrs, n);
}

int mh_rr_check_whole_response(const struct mh_probe_info *probe, const struct mh_hdr *hdrs, size_t n) {
  size_t count;
  if (mh__find(hdrs, n, "Content-Range", &count))
    return -EBADMSG;
  const struct mh_hdr *te = mh__find(hdrs, n, "Transfer-Encoding", &count);
  if (!te && !mh__find(hdrs, n, "Content-Length", &count))
    return -EBADMSG; /* a length is needed to know the body is whole */
  if (mh__length_differs(hdrs, n, probe->total))
    return -EBADMSG;
  return mh__same_representation(probe, hdrs, n);
}

/* The probe's validators and Content-Encoding, exactly; a coding other than chunked alone is
 * refused. 0, -EPROTO or -EBADMSG. */
static int mh__same_representation(const struct mh_probe_info *probe, const struct mh_hdr *hdrs, size_t n) {
  size_t count;
  const struct mh_hdr *et = mh__find(hdrs, n, "ETag", &count);
  if (count > 1)
    return -EBADMSG; /* the first matching the probe says nothing of the second */
  if (!mh__same(et ? et->value : NULL, et ? et->value_len : 0, probe->etag, probe->etag_len))
    return -EPROTO;
  const struct mh_hdr *lm = mh__find(hdrs, n, "Last-Modified", &count);
  if (count > 1)
    return -EBADMSG;
  if (!mh__same(lm ? lm->value : NULL, lm ? lm->value_len : 0, probe->last_modified, probe->last_modified_len))
    return -EPROTO;
  const struct mh_hdr *ce = mh__find(hdrs, n, "Content-Encoding", &count);
  if (count > 1)
    return -EBADMSG;
  if (!mh__same(ce ? ce->value : NULL, ce ? ce->value_len : 0, probe->content_encoding, probe->content_encoding_len))
    return -EPROTO;
  const struct mh_hdr *te = mh__find(hdrs, n, "Transfer-Encoding", &count);
  if (te && (count != 1 || !mh__ieq(te->value, te->value_len, "chunked")))
    return -EBADMSG;
  return mh__digest_field_differs(probe->repr_digest, probe->repr_digest_len, hdrs, n, "Repr-Digest") ||
                 mh__digest_field_differs(probe->digest, probe->digest_len, hdrs, n, "Digest")
             ? -EPROTO
             : 0;
}

/* A bounded appender: once full it stays full and the caller reports -ENOSPC. */
struct mh__out {
  char *p;
  size_t len, cap;
  int full;
};

static void mh__put(struct mh__out *o, const char *s, size_t n) {
  if (o->full || o->cap - o->len < n) {
    o->full = 1;
    return;
  }
  memcpy(o->p + o->len, s, n);
  o->len += n;
}

static void mh__puts(struct mh__out *o, const char *s) { mh__put(o, s, strlen(s)); }

static void mh__put_hdr(struct mh__out *o, const struct mh_hdr *h) {
  mh__put(o, h->name, h->name_len);
  mh__put(o, ": ", 2);
  mh__put(o, h->value, h->value_len);
  mh__put(o, "\r\n", 2);
}

/* The headers of a rewritten head after its status line: the probe's, in order, with
 * Content-Length set to len (Transfer-Encoding gives its place to it when the probe had none:
 * the program sees a length-delimited body either way) and Content-Range replaced by cr, or
 * dropped when cr is NULL. */
static void mh__rewrite_fields(struct mh__out *o, const struct mh_hdr *hdrs, size_t n, uint64_t len, const char *cr) {
  char num[32];
  int have_length = 0, have_range = 0;
  snprintf(num, sizeof num, "%" PRIu64, len);
  struct mh_hdr cl = {"Content-Length", 14, num, strlen(num)};
  struct mh_hdr crh = {"Content-Range", 13, cr, cr ? strlen(cr) : 0};
  for (size_t i = 0; i < n; i++) {
    const struct mh_hdr *h = &hdrs[i];
    if (mh__ieq(h->name, h->name_len, "Content-Range")) {
      if (cr && !have_range)
        mh__put_hdr(o, &crh);
      have_range = 1;
      continue;
    }
    if (mh__ieq(h->name, h->name_len, "Content-Length") || mh__ieq(h->name, h->name_len, "Transfer-Encoding")) {
      if (!have_length)
        mh__put_hdr(o, &cl);
      have_length = 1;
      continue;
    }
    mh__put_hdr(o, h);
  }
  if (!have_length)
    mh__put_hdr(o, &cl);
  if (cr && !have_range)
    mh__put_hdr(o, &crh);
  mh__put(o, "\r\n", 2);
}

static int mh__fields_ok(const struct mh_hdr *hdrs, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!mh__field_ok(&hdrs[i]))
      return 0;
  return 1;
}

ssize_t mh_rr_rewrite_head(const char *version, const struct mh_hdr *hdrs, size_t n, uint64_t total, char *out,
                           size_t cap) {
  struct mh__out o = {out, 0, cap, 0};
  if (!mh__fields_ok(hdrs, n))
    return -EINVAL;
  mh__puts(&o, version);
  mh__puts(&o, " 200 OK\r\n");
  mh__rewrite_fields(&o, hdrs, n, total, NULL);
  return o.full ? -ENOSPC : (ssize_t)o.len;
}

ssize_t mh_rr_rewrite_span_head(const char *version, const char *reason, size_t reason_len, const struct mh_hdr *hdrs,
                                size_t n, uint64_t first, uint64_t last, uint64_t total, char *out, size_t cap) {
  struct mh__out o = {out, 0, cap, 0};
  char cr[80];
  if (!mh__fields_ok(hdrs, n) || !mh__value_ok(reason, reason_len) || first > last || last >= total)
    return -EINVAL;
  snprintf(cr, sizeof cr, "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, first, last, total);
  mh__puts(&o, version);
  mh__puts(&o, " 206 ");
  mh__put(&o, reason, reason_len);
  mh__puts(&o, "\r\n");
  mh__rewrite_fields(&o, hdrs, n, last - first + 1, cr);
  return o.full ? -ENOSPC : (ssize_t)o.len;
}

int mh_rr_is_credential(const char *name, size_t len) {
  return mh__ieq(name, len, "Authorization") || mh__ieq(name, len, "Cookie") ||
         mh__ieq(name, len, "Proxy-Authorization");
}

/* The request's header lines for a range request: Range and If-Range are the split's own, a
 * Connection: close gives way to keep_alive, and for a mirror its Host replaces the program's
 * (one line, where the program's first stood; added when it sent none) and credentials stay
 * with their own origin. */
static void mh__range_fields(struct mh__out *o, const struct mh_req_view *req, const struct mh_rr_mirror *to,
                             int keep_alive) {
  int host_done = 0;
  for (size_t i = 0; i < req->nhdrs; i++) {
    const struct mh_hdr *h = &req->hdrs[i];
    if (mh__ieq(h->name, h->name_len, "Range") || mh__ieq(h->name, h->name_len, "If-Range"))
      continue;
    if (keep_alive && mh__ieq(h->name, h->name_len, "Connection") && mh__list_has(h->value, h->value_len, "close"))
      continue;
    if (to && !to->same_origin && mh_rr_is_credential(h->name, h->name_len))
      continue;
    if (to && mh__ieq(h->name, h->name_len, "Host")) {
      struct mh_hdr host = {"Host", 4, to->host, to->host_len};
      if (!host_done)
        mh__put_hdr(o, &host);
      host_done = 1;
      continue;
    }
    mh__put_hdr(o, h);
  }
  if (to && !host_done) {
    struct mh_hdr host = {"Host", 4, to->host, to->host_len};
    mh__put_hdr(o, &host);
  }
}

ssize_t mh_rr_range_request_to(const struct mh_req_view *req, const struct mh_rr_mirror *to, uint64_t first,
                               uint64_t last, const char *if_range, size_t if_range_len, int keep_alive, char *out,
                               size_t cap) {
  struct mh__out o = {out, 0, cap, 0};
  char line[96];
  const char *target = to ? to->target : req->target;
  size_t target_len = to ? to->target_len : req->target_len;
  if (!mh__token(req->method, req->method_len) || !mh__target_bytes_ok(target, target_len) ||
      (to && (!to->host_len || !mh__value_ok(to->host, to->host_len))) ||
      (if_range && !mh__value_ok(if_range, if_range_len)) || !mh__fields_ok(req->hdrs, req->nhdrs))
    return -EINVAL;
  mh__put(&o, req->method, req->method_len);
  mh__put(&o, " ", 1);
  mh__put(&o, target, target_len);
  snprintf(line, sizeof line, " HTTP/%d.%d\r\n", keep_alive ? 1 : req->http_major, keep_alive ? 1 : req->http_minor);
  mh__puts(&o, line);
  mh__range_fields(&o, req, to, keep_alive);
  if (last == MH_RR_TO_END)
    snprintf(line, sizeof line, "Range: bytes=%" PRIu64 "-\r\n", first);
  else
    snprintf(line, sizeof line, "Range: bytes=%" PRIu64 "-%" PRIu64 "\r\n", first, last);
  mh__puts(&o, line);
  if (if_range) {
    struct mh_hdr ir = {"If-Range", 8, if_range, if_range_len};
    mh__put_hdr(&o, &ir);
  }
  mh__put(&o, "\r\n", 2);
  return o.full ? -ENOSPC : (ssize_t)o.len;
}

ssize_t mh_rr_range_request(const struct mh_req_view *req, uint64_t first, uint64_t last, const char *if_range,
                            size_t if_range_len, int keep_alive, char *out, size_t cap) {
  return mh_rr_range_request_to(req, NULL, first, last, if_range, if_range_len, keep_alive, out, cap);
}
