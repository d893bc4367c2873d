/* Fuzz target: response heads framed by llhttp into mh_rr_classify_probe, mh_rr_if_range, mh_rr_check_range_response, mh_rr_rewrite_head and mh_rr_rewrite_span_head. */
#include <errno.h>
#include <inttypes.h>
#include <ctype.h>
#include <llhttp.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "mh_range.h"

/* The input heads' bounds: smaller than the engine's (MH__MAX_HDRS, MH__HEAD_MAX in
 * mh_split_int.h) so that runs stay fast; what the engine does at its bounds is the same code. */
#define HEAD_MAX_HDRS 96
#define HEAD_CAP (16 * 1024) /* names and values of one head */
/* A rewritten head is parsed back with room for what the rewrite adds to an input at the
 * bounds: one Content-Length line, and a span's Content-Range value longer than the input's. */
#define BACK_MAX_HDRS (HEAD_MAX_HDRS + 1)
#define BACK_CAP (HEAD_CAP + 128)

/* One parsed head: names and values copied as llhttp hands them over, like mh_split.c's
 * collector, then viewed without the OWS around values. */
struct head {
  char buf[BACK_CAP];
  size_t len, off[BACK_MAX_HDRS][4];
  size_t nh, max_hdrs, cap; /* bounds of this parse (head_parse) */
  int last_was_value, overflow, done;
  int status, major, minor;
  struct mh_hdr hdrs[BACK_MAX_HDRS];
};

static int head__append(struct head *h, const char *at, size_t len) {
  if (h->len + len > h->cap) {
    h->overflow = 1;
    return 0;
  }
  memcpy(h->buf + h->len, at, len);
  h->len += len;
  return 1;
}

static int head__on_field(llhttp_t *p, const char *at, size_t len) {
  struct head *h = p->data;
  if (h->last_was_value) {
    if (h->nh == h->max_hdrs) {
      h->overflow = 1;
      return 0;
    }
    h->off[h->nh][0] = h->off[h->nh][2] = h->len;
    h->off[h->nh][1] = h->off[h->nh][3] = 0;
    h->nh++;
    h->last_was_value = 0;
  }
  if (!h->overflow && head__append(h, at, len))
    h->off[h->nh - 1][1] += len;
  return 0;
}

static int head__on_value(llhttp_t *p, const char *at, size_t len) {
  struct head *h = p->data;
  if (!h->nh || h->overflow)
    return 0;
  if (!h->last_was_value) {
    h->off[h->nh - 1][2] = h->len;
    h->last_was_value = 1;
  }
  if (head__append(h, at, len))
    h->off[h->nh - 1][3] += len;
  return 0;
}

static int head__on_headers(llhttp_t *p) {
  struct head *h = p->data;
  h->status = p->status_code;
  h->major = p->http_major;
  h->minor = p->http_minor;
  h->done = 1;
  return HPE_PAUSED;
}

/* Parses one response head from p[0..n) within max_hdrs lines and cap bytes of names and
 * values. Returns the bytes it took, 0 when there is no complete, usable head (malformed,
 * interim, or past those bounds). */
static size_t head_parse(struct head *h, const char *p, size_t n, size_t max_hdrs, size_t cap) {
  llhttp_settings_t st;
  llhttp_t lp;
  llhttp_settings_init(&st);
  st.on_header_field = head__on_field;
  st.on_header_value = head__on_value;
  st.on_headers_complete = head__on_headers;
  llhttp_init(&lp, HTTP_RESPONSE, &st);
  lp.data = h;
  h->len = h->nh = 0;
  h->max_hdrs = max_hdrs;
  h->cap = cap;
  h->last_was_value = 1;
  h->overflow = h->done = 0;
  if (llhttp_execute(&lp, p, n) != HPE_PAUSED || !h->done || h->overflow)
    return 0;
  for (size_t i = 0; i < h->nh; i++) {
    const char *v = h->buf + h->off[i][2];
    size_t vl = h->off[i][3];
    while (vl && (*v == ' ' || *v == '\t'))
      v++, vl--;
    while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
      vl--;
    h->hdrs[i] = (struct mh_hdr){h->buf + h->off[i][0], h->off[i][1], v, vl};
  }
  return (size_t)(llhttp_get_error_pos(&lp) - p);
}

static int is(const struct mh_hdr *h, const char *name) {
  return h->name_len == strlen(name) && !strncasecmp(h->name, name, h->name_len);
}

static int same(const struct mh_hdr *a, const struct mh_hdr *b) {
  return a->name_len == b->name_len && !memcmp(a->name, b->name, a->name_len) && a->value_len == b->value_len &&
         !memcmp(a->value, b->value, a->value_len);
}

static size_t count(const struct head *h, const char *name) {
  size_t c = 0;
  for (size_t i = 0; i < h->nh; i++)
    c += is(&h->hdrs[i], name);
  return c;
}

static int veq(const char *a, size_t al, const char *b, size_t bl) { return al == bl && (!al || !memcmp(a, b, al)); }

/* The probe was taken: its facts must follow from its head. */
static void check_managed(const struct head *h, const struct mh_probe_info *in) {
  FUZZ_CHECK(h->status == 206 && count(h, "Content-Range") == 1);
  FUZZ_CHECK(in->first == 0 && in->first <= in->last && in->last < in->total);
  size_t vl;
  const char *v = mh_rr_if_range(in, &vl);
  if (v) { /* a strong ETag, else (no ETag at all) a Last-Modified older than Date */
    FUZZ_CHECK(vl >= 1 && ((v == in->etag && in->etag_strong && v[0] == '"' && v[vl - 1] == '"' && vl >= 2) ||
                           (!in->etag && v == in->last_modified && in->last_modified_strong)));
    FUZZ_CHECK(!memchr(v, '\r', vl) && !memchr(v, '\n', vl));
  }
}

/* The 200 we hand the program (cr NULL), or a span's 206 (cr its Content-Range value): llhttp
 * reads it back with that status and header lines that are the probe's in order, its
 * Content-Range dropped (200) or replaced in place by cr (206), with one Content-Length: total
 * in place of the first Content-Length/Transfer-Encoding (or at the end). */
static void check_rewrite(const struct head *in, const char *out, size_t len, uint64_t total, const char *cr) {
  static struct head back;
  char num[32];
  snprintf(num, sizeof num, "%" PRIu64, total);
  struct mh_hdr cl = {"Content-Length", 14, num, strlen(num)};
  struct mh_hdr crh = {"Content-Range", 13, cr, cr ? strlen(cr) : 0};
  FUZZ_CHECK(head_parse(&back, out, len, BACK_MAX_HDRS, BACK_CAP) == len);
  FUZZ_CHECK(back.status == (cr ? 206 : 200) && back.major == in->major && back.minor == in->minor);
  size_t j = 0;
  int have_len = 0;
  for (size_t i = 0; i < in->nh; i++) {
    const struct mh_hdr *h = &in->hdrs[i];
    if (is(h, "Content-Range") && cr)
      h = &crh; /* the probe's one Content-Range (mh_rr_classify_probe) */
    else if (is(h, "Content-Range") || (have_len && (is(h, "Content-Length") || is(h, "Transfer-Encoding"))))
      continue;
    if (is(h, "Content-Length") || is(h, "Transfer-Encoding")) {
      have_len = 1;
      h = &cl;
    }
    FUZZ_CHECK(j < back.nh && same(h, &back.hdrs[j]));
    j++;
  }
  if (!have_len)
    FUZZ_CHECK(j < back.nh && same(&cl, &back.hdrs[j++]));
  FUZZ_CHECK(j == back.nh);
  FUZZ_CHECK(count(&back, "Content-Length") == 1 && count(&back, "Content-Range") == !!cr &&
             !count(&back, "Transfer-Encoding"));
}

/* A further range's answer: accepted only as a 206 covering exactly first..last of the
 * probe's total with the probe's validators. */
static void check_range(const struct mh_probe_info *pi, const struct head *r, uint64_t first, uint64_t last) {
  int rc = mh_rr_check_range_response(pi, r->status, r->hdrs, r->nh, first, last);
  FUZZ_CHECK(rc == 0 || rc == -EPROTO || rc == -EBADMSG);
  if (rc)
    return;
  FUZZ_CHECK(r->status == 206 && count(r, "Content-Range") == 1);
  for (size_t i = 0; i < r->nh; i++) {
    const struct mh_hdr *h = &r->hdrs[i];
    uint64_t f, l, t;
    if (is(h, "Content-Range"))
      FUZZ_CHECK(mh_rr_parse_content_range(h->value, h->value_len, &f, &l, &t) == 0 && f == first && l == last &&
                 t == pi->total);
    if (is(h, "ETag"))
      FUZZ_CHECK(pi->etag && veq(h->value, h->value_len, pi->etag, pi->etag_len));
    if (is(h, "Last-Modified"))
      FUZZ_CHECK(pi->last_modified && veq(h->value, h->value_len, pi->last_modified, pi->last_modified_len));
    if (is(h, "Content-Encoding"))
      FUZZ_CHECK(pi->content_encoding && veq(h->value, h->value_len, pi->content_encoding, pi->content_encoding_len));
  }
  /* each validator the probe had is repeated exactly once */
  FUZZ_CHECK(count(r, "ETag") == !!pi->etag && count(r, "Last-Modified") == !!pi->last_modified &&
             count(r, "Content-Encoding") == !!pi->content_encoding);
}

/* A field the rewriter must refuse to re-emit (it would not be one line): a name that is not a
 * token or a value with a control other than HTAB (an obs-fold llhttp accepted leaves CR LF). */
static int bad_field(const struct head *h) {
  for (size_t i = 0; i < h->nh; i++) {
    const struct mh_hdr *f = &h->hdrs[i];
    if (!f->name_len)
      return 1;
    for (size_t k = 0; k < f->name_len; k++) {
      unsigned char c = (unsigned char)f->name[k];
      if (!isalnum(c) && !strchr("!#$%&'*+-.^_`|~", c))
        return 1;
    }
    for (size_t k = 0; k < f->value_len; k++) {
      unsigned char c = (unsigned char)f->value[k];
      if ((c < 0x20 && c != '\t') || c == 0x7f)
        return 1;
    }
  }
  return 0;
}

/* Input: the probe's response head, then optionally a second head (a further range's answer)
 * and, after that, one byte choosing the rewrite's capacity. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static struct head probe, range;
  const char *p = (const char *)data;
  size_t used = head_parse(&probe, p, size, HEAD_MAX_HDRS, HEAD_CAP);
  if (!used)
    return 0;
  struct mh_probe_info info;
  enum mh_probe_action a = mh_rr_classify_probe(probe.status, probe.hdrs, probe.nh, &info);
  FUZZ_CHECK(a == MH_PROBE_MANAGED || a == MH_PROBE_RELAY || a == MH_PROBE_RESEND);
  /* relayed only when the answer cannot depend on the Range we added: a 200 that names no
   * range, or a status a server returns whatever Range says; anything else is resent */
  int relayable = probe.status == 200 ? !count(&probe, "Content-Range") : mh_rr_probe_status_relayable(probe.status);
  FUZZ_CHECK((a == MH_PROBE_RELAY) == relayable);
  if (a != MH_PROBE_MANAGED)
    return 0;
  check_managed(&probe, &info);

  size_t used2 = head_parse(&range, p + used, size - used, HEAD_MAX_HDRS, HEAD_CAP);
  if (used2) {
    uint64_t first = info.last + 1, last = info.total - 1;
    for (size_t i = 0; i < range.nh; i++) /* aim at the range it claims, to reach acceptance */
      if (is(&range.hdrs[i], "Content-Range"))
        mh_rr_parse_content_range(range.hdrs[i].value, range.hdrs[i].value_len, &first, &last, &(uint64_t){0});
    check_range(&info, &range, first, last);
  }

  size_t rest = size - used - used2;
  /* mh_split.c's buffer by default; a chosen smaller one must fail cleanly, never overflow */
  size_t cap = rest ? (size_t)data[size - 1] * 8 : HEAD_CAP + 256;
  char ver[16];
  snprintf(ver, sizeof ver, "HTTP/%d.%d", probe.major, probe.minor);
  char *out = malloc(cap ? cap : 1);
  ssize_t n = mh_rr_rewrite_head(ver, probe.hdrs, probe.nh, info.total, out, cap);
  FUZZ_CHECK(n == -ENOSPC || (n > 0 && (size_t)n <= cap) || (n == -EINVAL && bad_field(&probe)));
  if (n > 0)
    check_rewrite(&probe, out, (size_t)n, info.total, NULL);
  /* a program's span from the probe's first byte to the probe's last or the object's end */
  uint64_t last = rest && data[size - 1] & 1 ? info.last : info.total - 1;
  char cr[80];
  snprintf(cr, sizeof cr, "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, info.first, last, info.total);
  n = mh_rr_rewrite_span_head(ver, "Partial Content", 15, probe.hdrs, probe.nh, info.first, last, info.total, out, cap);
  FUZZ_CHECK(n == -ENOSPC || (n > 0 && (size_t)n <= cap) || (n == -EINVAL && bad_field(&probe)));
  if (n > 0)
    check_rewrite(&probe, out, (size_t)n, last - info.first + 1, cr);
  free(out);
  return 0;
}
