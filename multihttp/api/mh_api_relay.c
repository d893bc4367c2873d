/* An API transfer reading an answer itself (the split did not manage it): llhttp framing (length, chunked, close), error statuses, redirects, the body into the destination in order. */
#include "mh_api_int.h"
#include "mh_clock.h"
#include "mh_engine_int.h"
#include "mh_log.h"
#include "mh_range.h"
#include "mh_upstream.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MH__X_OF(p) ((struct mhttp_xfer *)(p)->data)

/* Header bytes into the transfer's head store: a new line when the previous one ended. */
static void mh__head_add(struct mh__head *h, int part, const char *at, size_t len) {
  if (h->full)
    return;
  if (h->in != part && part == 1) { /* a name begins a new line */
    if (h->n == MH__API_HDRS) {
      h->full = 1;
      return;
    }
    h->h[h->n].off = (uint32_t)h->len;
    h->h[h->n].name_len = h->h[h->n].value_len = 0;
    h->n++;
  }
  h->in = part;
  if (!h->n || h->len + len > sizeof h->buf) {
    h->full = 1;
    h->n -= h->n ? 1 : 0; /* the line that does not fit is not kept half */
    return;
  }
  memcpy(h->buf + h->len, at, len);
  h->len += len;
  if (part == 1)
    h->h[h->n - 1].name_len += (uint32_t)len;
  else
    h->h[h->n - 1].value_len += (uint32_t)len;
}

static void mh__head_reset(struct mh__head *h) { h->len = h->n = 0, h->in = h->full = 0; }

/* The header name arrives in pieces: kept while it may still be one this file reads. */
static int mh__on_hfield(llhttp_t *p, const char *at, size_t len) {
  struct mhttp_xfer *x = MH__X_OF(p);
  mh__head_add(&x->rd.head, 1, at, len);
  if (x->rd.hname_len + len <= sizeof x->rd.hname)
    memcpy(x->rd.hname + x->rd.hname_len, at, len);
  x->rd.hname_len += len;
  return 0;
}

static int mh__hname_is(const struct mhttp_xfer *x, const char *name) {
  return x->rd.hname_len == strlen(name) && !strncasecmp(x->rd.hname, name, x->rd.hname_len);
}

/* A second Content-Length with the same value is accepted, as curl does (RFC 9110 §8.6 allows a
 * recipient to take a list of identical values as one): llhttp refuses any repeat (no lenient
 * flag covers it), so the first value is set aside and its flag cleared before llhttp reads the
 * second; the value callback then refuses a differing one, which stays a framing error (a
 * smuggling vector). */
static int mh__on_hfield_done(llhttp_t *p) {
  struct mhttp_xfer *x = MH__X_OF(p);
  x->rd.hdr_state = 0;
  if (mh__hname_is(x, "repr-digest") || mh__hname_is(x, "digest") || mh__hname_is(x, "content-digest")) {
    x->rd.hdr_state = mh__hname_is(x, "repr-digest") ? 4 : mh__hname_is(x, "digest") ? 5 : 6;
    x->rd.dval_len = 0;
  } else if (mh__hname_is(x, "content-length")) {
    x->rd.hdr_state = 3;
    x->rd.cl_again = (p->flags & F_CONTENT_LENGTH) != 0;
    x->rd.cl_first = p->content_length;
    p->flags &= ~F_CONTENT_LENGTH;
    p->content_length = 0; /* llhttp adds each digit to it: the second value starts afresh */
  }
  x->rd.hname_len = 0;
  return 0;
}

static int mh__on_hvalue(llhttp_t *p, const char *at, size_t len) {
  struct mhttp_xfer *x = MH__X_OF(p);
  mh__head_add(&x->rd.head, 2, at, len);
  if (x->rd.hdr_state >= 4) {
    if (x->rd.dval_len + len <= sizeof x->rd.dval)
      memcpy(x->rd.dval + x->rd.dval_len, at, len);
    x->rd.dval_len += len;
  }
  return 0;
}

/* The kept lines as the header views mh_range.h reads; how many. */
static size_t mh__head_view(const struct mh__head *h, struct mh_hdr *out) {
  for (unsigned i = 0; i < h->n; i++)
    out[i] = (struct mh_hdr){h->buf + h->h[i].off, h->h[i].name_len, h->buf + h->h[i].off + h->h[i].name_len,
                             h->h[i].value_len};
  return h->n;
}

/* The answer's validator (strong ETag, else a strong Last-Modified) as the resume file keeps it. */
static void mh__x_note_validator(struct mhttp_xfer *x, const struct mh_hdr *hv, size_t n) {
  struct mh_probe_info info = {0};
  size_t vlen = 0;
  mh_rr_head_validators(hv, n, &info);
  const char *v = mh_rr_if_range(&info, &vlen);
  if (!v || vlen >= sizeof x->rs.validator)
    vlen = 0;
  memcpy(x->rs.validator, v ? v : "", vlen);
  x->rs.validator[vlen] = 0;
}

/* The length a 416's Content-Range names ("bytes", a star, "/LENGTH"). 0 or -1. */
static int mh__unsatisfied_total(const struct mh_hdr *cr, uint64_t *total) {
  char v[40], *end;
  if (!cr || cr->value_len >= sizeof v)
    return -1;
  memcpy(v, cr->value, cr->value_len);
  v[cr->value_len] = 0;
  if (strncasecmp(v, "bytes */", 8) || v[8] < '0' || v[8] > '9')
    return -1;
  *total = strtoull(v + 8, &end, 10);
  return *end || *total == UINT64_MAX ? -1 : 0;
}

/* The answer to a continued transfer's "Range: bytes=F-" + If-Range. 206 from F to the end:
 * the output keeps its first F bytes; 200: the origin serves another representation (or no
 * ranges): the output starts over; 416 naming F as the length: the output was complete.
 * 0 to go on with the body, 1 when the answer ended the transfer well, -1 failure recorded. */
static int mh__x_resume_answer(struct mhttp_xfer *x, int st, const struct mh_hdr *hv, size_t n) {
  struct mh_probe_info info = {0};
  uint64_t total;
  const struct mh_hdr *cr = mh_rr_header(hv, n, "Content-Range", NULL);
  if (st == 200) {
    x->rs.restarted = 1;
    mh_info("api: %s changed since the partial download (or takes no ranges): fetching it whole", x->url);
    return 0;
  }
  if (st == 416 && mh__unsatisfied_total(cr, &total) == 0 && total == x->rd.range_from &&
      (!x->rs.have.total || x->rs.have.total == total)) {
    x->rs.resumed = total;
    return mh__x_head(x, 200, total) < 0 ? -1 : 1;
  }
  if (st != 206)
    return 0; /* an error status fails as any would */
  if (mh_rr_classify_probe_at(206, hv, n, x->rd.range_from, &info) != MH_PROBE_MANAGED || info.last + 1 != info.total ||
      (x->rs.have.total && x->rs.have.total != info.total)) {
    mh__x_fail(x, MHTTP_E_RESUME, "the answer to bytes=%llu- is not the rest of the object the output holds",
               (unsigned long long)x->rd.range_from);
    return -1;
  }
  char held[sizeof x->rs.validator];
  memcpy(held, x->rs.have.validator, sizeof held);
  mh__x_note_validator(x, hv, n);                 /* what later saves name */
  if (held[0] && strcmp(held, x->rs.validator)) { /* a server that ignored If-Range */
    mh__x_fail(x, MHTTP_E_RESUME,
               "the answer to bytes=%llu- is of another representation (%.100s, the output "
               "holds %.100s)",
               (unsigned long long)x->rd.range_from, x->rs.validator[0] ? x->rs.validator : "no validator", held);
    return -1;
  }
  x->rs.resumed = x->rd.relay_off = x->rd.relay_base = x->rd.range_from;
  return mh__x_head(x, 206, info.total) < 0 ? -1 : 0;
}

static int mh__on_hvalue_done(llhttp_t *p) {
  struct mhttp_xfer *x = MH__X_OF(p);
  if (x->rd.hdr_state >= 4 && x->rd.dval_len <= sizeof x->rd.dval) {
    struct mh_digest *d = &x->rd.rdig[x->rd.hdr_state - 4];
    if (x->rd.hdr_state == 5)
      mh_digest_parse_3230(x->rd.dval, x->rd.dval_len, d, &x->rd.rdig_bad);
    else
      mh_digest_parse_sf(x->rd.dval, x->rd.dval_len, d, &x->rd.rdig_bad);
  }
  x->rd.cl_differs = x->rd.hdr_state == 3 && x->rd.cl_again && p->content_length != x->rd.cl_first;
  x->rd.hdr_state = 0;
  x->rd.cl_again = 0;
  return x->rd.cl_differs ? -1 : 0;
}

/* A 200's body is its whole representation: the first digest field of Repr-Digest, Digest,
 * Content-Digest that named a usable one is checked against it at its end. */
static void mh__digest_start(struct mhttp_xfer *x, int st) {
  static const char *const names[3] = {"Repr-Digest", "Digest", "Content-Digest"};
  if (x->rd.rdig_bad)
    mh_info("api: %d malformed member(s) of the answer's digest fields ignored", x->rd.rdig_bad);
  for (int i = 0; st == 200 && !x->rd.rfield && i < 3; i++)
    if (x->rd.rdig[i].alg != MH_DIGEST_NONE) {
      x->rd.rfield = names[i];
      x->rd.rdig[0] = x->rd.rdig[i];
      mh_digest_run_init(&x->rd.rrun, x->rd.rdig[i].alg);
    }
}

static void mh__digest_reset(struct mhttp_xfer *x) {
  memset(x->rd.rdig, 0, sizeof x->rd.rdig);
  x->rd.rdig_bad = 0;
  x->rd.rfield = NULL;
}

/* The answer's head: 1xx is skipped, a 3xx with Location is followed, >= 400 fails with
 * nothing written (after its start event), anything else is the body's start. */
static int mh__on_headers(llhttp_t *p) {
  struct mhttp_xfer *x = MH__X_OF(p);
  int st = llhttp_get_status_code(p);
  struct mh_hdr hv[MH__API_HDRS];
  size_t n = mh__head_view(&x->rd.head, hv);
  if (st < 200) {
    mh__head_reset(&x->rd.head); /* the next answer's lines */
    mh__digest_reset(x);         /* an interim answer's fields are not the final one's */
    return 0;
  }
  mh__digest_start(x, st);
  pthread_mutex_lock(&x->s->mu);
  x->rep.http_status = st; /* the latest answer's, a redirect's included */
  pthread_mutex_unlock(&x->s->mu);
  const struct mh_hdr *loc = mh_rr_header(hv, n, "Location", NULL);
  if (st >= 300 && st < 400 && loc && loc->value_len >= sizeof x->rd.location) {
    mh__x_fail(x, MHTTP_E_PROTOCOL, "redirect to a Location longer than %zu bytes", sizeof x->rd.location - 1);
    return -1;
  }
  if (st >= 300 && st < 400 && st != 304 && loc && loc->value_len) {
    memcpy(x->rd.location, loc->value, loc->value_len);
    x->rd.location[x->rd.location_len = loc->value_len] = 0;
    x->rd.redirect = 1;
    return -1;
  }
  int r = x->rd.range_from ? mh__x_resume_answer(x, st, hv, n) : 0;
  if (r)
    return r > 0 ? (x->rd.done_msg = 1, HPE_PAUSED) : -1;
  if (st >= 400) {
    mh__x_event(x, MHTTP_EV_START, NULL, NULL); /* the head was read: start, then the error */
    mh__x_fail(x, MHTTP_E_HTTP, "HTTP %d", st);
    return -1;
  }
  if (x->dst.head_seen)
    return 0; /* a resumed range's head was taken */
  mh__x_note_validator(x, hv, n);
  uint64_t total = (p->flags & F_CONTENT_LENGTH) ? p->content_length : UINT64_MAX;
  return mh__x_head(x, st, total) < 0 ? -1 : 0;
}

/* Body bytes go to the destination in order; what it does not take waits in hold (at most one
 * read: the connection is not read while bytes wait). */
static int mh__on_body(llhttp_t *p, const char *at, size_t len) {
  struct mhttp_xfer *x = MH__X_OF(p);
  if (llhttp_get_status_code(p) < 200)
    return 0;
  if (x->rd.rfield)
    mh_digest_run_update(&x->rd.rrun, at, len);
  size_t took = 0;
  if (!x->rd.hold_len) {
    ssize_t n = mh__x_put(x, x->rd.relay_off, at, len);
    if (n < 0)
      return -1;
    took = (size_t)n;
    x->rd.relay_off += took;
    x->rd.hold_off = 0;
  }
  if (took < len) {
    char *h = realloc(x->rd.hold, x->rd.hold_len + len - took);
    if (!h) {
      mh__x_fail(x, MHTTP_E_NOMEM, "out of memory");
      return -1;
    }
    memcpy(h + x->rd.hold_len, at + took, len - took);
    x->rd.hold = h;
    x->rd.hold_len += len - took;
  }
  return 0;
}

static int mh__on_done(llhttp_t *p) {
  struct mhttp_xfer *x = MH__X_OF(p);
  if (llhttp_get_status_code(p) < 200)
    return 0;
  x->rd.done_msg = 1;
  if (x->rd.rfield && mh_digest_run_check(&x->rd.rrun, &x->rd.rdig[0]) != 0)
    mh__x_fail(x, MHTTP_E_CHECKSUM, "the body does not match the origin's %s (%s)", x->rd.rfield,
               mh_digest_alg_name(x->rd.rdig[0].alg));
  return HPE_PAUSED; /* anything after the answer is not ours */
}

static const llhttp_settings_t mh__settings = {
    .on_header_field = mh__on_hfield,
    .on_header_field_complete = mh__on_hfield_done,
    .on_header_value = mh__on_hvalue,
    .on_header_value_complete = mh__on_hvalue_done,
    .on_headers_complete = mh__on_headers,
    .on_body = mh__on_body,
    .on_message_complete = mh__on_done,
};

/* Location resolved against the current URL by libcurl's URL API (RFC 3986 §5: dot segments,
 * a query or a fragment alone, scheme-relative), as curl follows it (spaces encoded); the
 * result is then held to mh_url_parse's rules (http or https, no credentials). */
static int mh__x_follow(struct mhttp_xfer *x) {
  CURLU *h = curl_url();
  char *next = NULL;
  struct mh_url u;
  int ok = h && curl_url_set(h, CURLUPART_URL, x->url, 0) == CURLUE_OK &&
           curl_url_set(h, CURLUPART_URL, x->rd.location, CURLU_URLENCODE | CURLU_ALLOW_SPACE) == CURLUE_OK &&
           curl_url_get(h, CURLUPART_URL, &next, 0) == CURLUE_OK && strlen(next) < sizeof x->url &&
           mh_url_parse(next, &u) == 0;
  if (ok) {
    x->u = u;
    snprintf(x->url, sizeof x->url, "%s", next);
  } else
    mh__x_fail(x, MHTTP_E_URL, "cannot follow redirect to %.200s", x->rd.location);
  curl_free(next);
  curl_url_cleanup(h);
  return ok ? 0 : -1;
}

/* A 3xx with Location: the transfer starts over at the new URL. */
static void mh__x_redirect(struct mhttp_xfer *x) {
  if (++x->rd.redirects > x->o.max_redirs) {
    mh__x_fail(x, MHTTP_E_REDIRECTS, "maximum (%d) redirects followed", x->o.max_redirs);
    return;
  }
  if (mh__x_follow(x) < 0)
    return;
  mh_dbg("api: redirect %d to %s", x->rd.redirects, x->url);
  mh__x_drop_up(x, 1);
  x->rd.redirect = 0;
  x->rd.location_len = 0;
  mh__x_resolve(x);
}

/* Feeds answer bytes to the parser and acts on what they meant. */
static void mh__x_feed(struct mhttp_xfer *x, const char *p, size_t len) {
  if (x->rd.done_msg || x->st != MH__X_RELAY)
    return;
  enum llhttp_errno e = llhttp_execute(&x->rd.parser, p, len);
  if (x->rd.redirect)
    mh__x_redirect(x);
  else if (e != HPE_OK && !(e == HPE_PAUSED && x->rd.done_msg))
    mh__x_fail(x, MHTTP_E_PROTOCOL, "malformed answer: %s",
               x->rd.cl_differs                         ? "Content-Length values differ"
               : llhttp_get_error_reason(&x->rd.parser) ? llhttp_get_error_reason(&x->rd.parser)
                                                        : llhttp_errno_name(e));
}

static void mh__x_eof(struct mhttp_xfer *x) {
  if (x->rd.done_msg || x->st != MH__X_RELAY)
    return;
  enum llhttp_errno e = llhttp_finish(&x->rd.parser);
  if (x->rd.done_msg)
    return;
  if (x->dst.head_seen)
    mh__x_fail(x, MHTTP_E_PARTIAL, "transfer closed with %llu bytes remaining",
               (unsigned long long)(x->rep.total == UINT64_MAX ? 0 : x->rep.total - x->rd.relay_off));
  else
    mh__x_fail(x, MHTTP_E_PROTOCOL, "%s", e == HPE_OK ? "empty reply from server" : llhttp_errno_name(e));
}

static void mh__x_rl_resume(uv_timer_t *t);

/* What the connection is watched for: the request's rest, and answers unless bytes wait or
 * the rate limit has no credit (its timer reads again). */
static void mh__x_relay_watch(struct mhttp_xfer *x) {
  if (!x->conn.up || x->st != MH__X_RELAY)
    return;
  int want = !x->rd.hold_len && !x->dst.paused && !x->rd.done_msg;
  uint64_t now = mh_now_us();
  if (want && !mh_bucket_avail(&x->rl, now, 1)) {
    want = 0;
    if (!uv_is_active((uv_handle_t *)&x->rl_timer))
      uv_timer_start(&x->rl_timer, mh__x_rl_resume, (mh_bucket_wait_us(&x->rl, now) + 999) / 1000, 0);
  }
  x->conn.up->ops->watch(x->conn.up, (x->rq.req_sent < x->rq.req_len ? UV_WRITABLE : 0) | (want ? UV_READABLE : 0));
}

int mh__x_relay_flush(struct mhttp_xfer *x) {
  while (x->rd.hold_len > x->rd.hold_off) {
    ssize_t n = mh__x_put(x, x->rd.relay_off, x->rd.hold + x->rd.hold_off, x->rd.hold_len - x->rd.hold_off);
    if (n <= 0)
      return (int)n;
    x->rd.hold_off += (size_t)n;
    x->rd.relay_off += (uint64_t)n;
  }
  x->rd.hold_len = x->rd.hold_off = 0;
  if (x->rd.done_msg && x->rep.pending_code == MHTTP_OK)
    mh__x_done(x);
  mh__x_relay_watch(x);
  return 1;
}

void mh__x_relay_start(struct mhttp_xfer *x, const char *raw, size_t raw_len, int resend, int eof) {
  mh__x_set_state(x, MH__X_RELAY);
  llhttp_init(&x->rd.parser, HTTP_RESPONSE, &mh__settings);
  x->rd.parser.data = x;
  x->rd.done_msg = x->rd.redirect = 0;
  /* a chunked answer's stray Content-Length is ignored, as curl does: Transfer-Encoding
   * overrides it (RFC 9112 §6.3) */
  llhttp_set_lenient_chunked_length(&x->rd.parser, 1);
  mh__head_reset(&x->rd.head);
  x->rd.hdr_state = x->rd.cl_again = x->rd.cl_differs = 0;
  mh__digest_reset(x);
  x->rd.hname_len = x->rd.location_len = 0;
  x->rd.relay_off = x->rd.relay_base = 0;
  x->rq.req_sent = resend ? 0 : x->rq.req_len;
  if (raw_len)
    mh__x_feed(x, raw, raw_len);
  if (eof)
    mh__x_eof(x);
  if (x->rd.done_msg && !x->rd.hold_len && x->rep.pending_code == MHTTP_OK)
    mh__x_done(x);
  else
    mh__x_relay_watch(x);
}

/* A path appeared (the engine's net_gen moved) while the answer is read on the transfer's one
 * path: the rest of it becomes a split (mh_split_adopt), given the head as the origin sent it
 * (its lines as kept; a head that did not fit is not taken). 1 when it did. */
static int mh__x_adopt(struct mhttp_xfer *x) {
  struct mh_engine *eng = mh_engine_of(x->s->loop);
  if (!x->rd.adopt_ok || eng->paths.net_gen == x->rd.adopt_gen || !x->dst.head_seen || x->rd.done_msg ||
      x->rd.hold_len || x->st != MH__X_RELAY || x->rd.redirect || x->rd.relay_base || x->rep.total == UINT64_MAX)
    return 0;
  x->rd.adopt_gen = eng->paths.net_gen;
  struct mh_hdr hv[MH__API_HDRS];
  size_t n = mh__head_view(&x->rd.head, hv), len = 0;
  char *head = malloc(MH__API_HEAD_MAX + 4 * MH__API_HDRS + 64);
  if (!head || x->rd.head.full || llhttp_get_status_code(&x->rd.parser) != 200) {
    free(head);
    x->rd.adopt_ok = 0;
    return 0;
  }
  len = (size_t)sprintf(head, "HTTP/%d.%d 200 OK\r\n", x->rd.parser.http_major, x->rd.parser.http_minor);
  for (size_t i = 0; i < n; i++)
    len += (size_t)sprintf(head + len, "%.*s: %.*s\r\n", (int)hv[i].name_len, hv[i].name, (int)hv[i].value_len,
                           hv[i].value);
  len += (size_t)sprintf(head + len, "\r\n");
  struct mh_split_relayed rel = {.head = head,
                                 .head_len = len,
                                 .total = x->rep.total,
                                 .pos = x->rd.relay_off,
                                 .closes = !llhttp_should_keep_alive(&x->rd.parser)};
  struct sockaddr_storage peer;
  struct mh_split_owner own;
  mh__x_owner(x, &own, &peer);
  struct mh_split *sp = NULL;
  x->split_res = (struct mh_split_result){0};
  int rc = mh_split_adopt(&own, x->s->loop, x->conn.up, x->rq.req, x->rq.req_len, &rel, &x->dst.sink, &sp);
  free(head);
  if (rc < 0) {
    x->rd.adopt_ok = rc == -ENETUNREACH;
    return 0;
  }
  uv_timer_stop(&x->rl_timer);
  x->sp = sp;
  mh__x_set_state(x, MH__X_SPLIT);
  if (x->o.limit_rate)
    mh_split_set_rate(sp, x->o.limit_rate);
  return 1;
}

static void mh__x_relay_read(struct mhttp_xfer *x) {
  char *buf = mh_engine_of(x->s->loop)->splits.io;
  for (int i = 0; i < 16 && x->st == MH__X_RELAY && x->conn.up && !x->rd.hold_len && !x->rd.done_msg && !x->dst.paused;
       i++) {
    uint64_t now = mh_now_us();
    size_t want = mh_bucket_avail(&x->rl, now, MH_ENGINE_IO);
    if (!want)
      break;
    ssize_t n = x->conn.up->ops->recv(x->conn.up, buf, want);
    if (n == -EAGAIN)
      break;
    if (n > 0)
      mh_bucket_take(&x->rl, now, (size_t)n);
    if (n < 0) {
      if (x->dst.head_seen)
        mh__x_fail(x, MHTTP_E_PARTIAL, "receive failure: %s", strerror((int)-n));
      else
        mh__x_fail(x, MHTTP_E_PROTOCOL, "receive failure: %s", strerror((int)-n));
      return;
    }
    if (n == 0) {
      mh__x_eof(x);
      return;
    }
    mh__x_feed(x, buf, (size_t)n);
    if (mh__x_adopt(x))
      return;
  }
}

void mh__x_relay_event(struct mh_upstream *up, int status, int events) {
  struct mhttp_xfer *x = up->owner;
  if (status < 0)
    events |= UV_READABLE; /* the read tells the error */
  if ((events & UV_WRITABLE) && x->rq.req_sent < x->rq.req_len) {
    ssize_t n = up->ops->send(up, x->rq.req + x->rq.req_sent, x->rq.req_len - x->rq.req_sent);
    if (n < 0 && n != -EAGAIN)
      mh__x_fail(x, MHTTP_E_CONNECT, "send failure: %s", strerror((int)-n));
    else if (n > 0)
      x->rq.req_sent += (size_t)n;
  }
  if (events & UV_READABLE)
    mh__x_relay_read(x);
  if (x->sp) { /* the answer became a split (mh__x_adopt): its events are the split's now */
    mh__x_settle(x);
    return;
  }
  if (x->rd.done_msg && !x->rd.hold_len && x->rep.pending_code == MHTTP_OK && x->st == MH__X_RELAY)
    mh__x_done(x);
  mh__x_relay_watch(x);
  mh__x_settle(x);
}

/* The rate limit has credit again: the answer is read as on a readable event. */
static void mh__x_rl_resume(uv_timer_t *t) {
  struct mhttp_xfer *x = t->data;
  if (x->st == MH__X_RELAY && x->conn.up)
    mh__x_relay_event(x->conn.up, 0, UV_READABLE);
}

void mh__x_rate_set(struct mhttp_xfer *x, uint64_t rate) {
  x->o.limit_rate = rate;
  mh_bucket_set(&x->rl, rate, mh_now_us());
  if (x->sp)
    mh_split_set_rate(x->sp, rate);
  uv_timer_stop(&x->rl_timer);
  if (x->st == MH__X_RELAY && x->conn.up)
    uv_timer_start(&x->rl_timer, mh__x_rl_resume, 0, 0); /* held reads go on at the new rate */
}
