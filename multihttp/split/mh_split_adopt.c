/* A relayed answer becomes a split: a path that appears while the program's one-path request is answered takes part of the rest (mh_split_adopt), and the program's connection stops where its share ends. */
#include "split_core.h"
#include "split_leg.h"
#include "split_legs.h"
#include "split_start.h"
#include "mh_clock.h"
#include "mh_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the relayed answer's head, as views ------------------------------------------------- */

/* The session framed the head already; it is parsed again here for its header lines. */
struct mh__hv {
  const char *base;
  struct mh_hdr *h;
  size_t n, cap;
  int in_value, overflow;
};

static int mh__hv_field(llhttp_t *p, const char *at, size_t len) {
  struct mh__hv *v = p->data;
  if (v->n && !v->in_value && v->h[v->n - 1].name + v->h[v->n - 1].name_len == at) {
    v->h[v->n - 1].name_len += len; /* the same name, in two pieces */
    return 0;
  }
  if (v->n == v->cap) {
    v->overflow = 1;
    return -1;
  }
  v->h[v->n++] = (struct mh_hdr){.name = at, .name_len = len, .value = at + len, .value_len = 0};
  v->in_value = 0;
  return 0;
}

static int mh__hv_value(llhttp_t *p, const char *at, size_t len) {
  struct mh__hv *v = p->data;
  if (!v->n)
    return -1;
  struct mh_hdr *h = &v->h[v->n - 1];
  if (!v->in_value || h->value_len == 0)
    h->value = at, h->value_len = len;
  else
    h->value_len = (size_t)(at + len - h->value);
  v->in_value = 1;
  return 0;
}

static int mh__hv_done(llhttp_t *p) {
  (void)p;
  return HPE_PAUSED; /* the head is all that is parsed */
}

/* Parses head (a whole response head, owned by the caller) into v->h. The status, or -1. */
static int mh__hv_parse(const char *head, size_t len, struct mh__hv *v) {
  llhttp_settings_t st;
  llhttp_settings_init(&st);
  st.on_header_field = mh__hv_field;
  st.on_header_value = mh__hv_value;
  st.on_headers_complete = mh__hv_done;
  llhttp_t p;
  llhttp_init(&p, HTTP_RESPONSE, &st);
  p.data = v;
  v->base = head;
  if (llhttp_execute(&p, head, len) != HPE_PAUSED || v->overflow)
    return -1;
  return llhttp_get_status_code(&p);
}

/* ---- may this answer be split ------------------------------------------------------------ */

/* The relayed answer's head is one a split can continue exactly: a 200 of total bytes framed
 * by one Content-Length (no Transfer-Encoding, no Content-Range), one Content-Encoding at
 * most, and a strong validator, so every range asked on another path is checked to be the
 * same representation (If-Range, and mh_rr_check_range_response). An answer with a digest
 * field is not taken: the bytes relayed before were not hashed, so the digest could not be
 * checked (mh_split_digest.c) and a splice would go unnoticed. NULL, or why not. */
static const char *mh__adopt_refusal(int status, const struct mh_hdr *h, size_t n, uint64_t total,
                                     struct mh_probe_info *info) {
  size_t count;
  const struct mh_hdr *cl = mh_rr_header(h, n, "Content-Length", &count);
  if (status != 200)
    return "not a 200";
  char want[32];
  int wl = snprintf(want, sizeof want, "%" PRIu64, total);
  if (!cl || count != 1 || cl->value_len != (size_t)wl || memcmp(cl->value, want, (size_t)wl))
    return "not one Content-Length";
  if (mh_rr_header(h, n, "Transfer-Encoding", NULL) || mh_rr_header(h, n, "Content-Range", NULL))
    return "a Transfer-Encoding or Content-Range";
  if (mh_rr_header(h, n, "Repr-Digest", NULL) || mh_rr_header(h, n, "Content-Digest", NULL) ||
      mh_rr_header(h, n, "Digest", NULL))
    return "a digest the relayed bytes were not hashed for";
  const struct mh_hdr *ce = mh_rr_header(h, n, "Content-Encoding", &count);
  if (ce && count != 1)
    return "two Content-Encodings";
  memset(info, 0, sizeof *info);
  mh_rr_head_validators(h, n, info);
  if (ce)
    info->content_encoding = ce->value, info->content_encoding_len = ce->value_len;
  size_t vl;
  if (!mh_rr_if_range(info, &vl))
    return "no strong validator";
  return NULL;
}

const char *mh__adopt_judge(const char *head, size_t len, uint64_t total, struct mh_hdr *h, size_t cap, size_t *n,
                            struct mh_probe_info *info) {
  struct mh__hv v = {.h = h, .cap = cap};
  int status = mh__hv_parse(head, len, &v);
  *n = v.n;
  return status < 0 ? "a head not parsable" : mh__adopt_refusal(status, v.h, v.n, total, info);
}

/* Takes the relayed head as the split's probe: its verdict says bytes [0, pos) of total came,
 * with the head's validators; its views point into the split's own copy. 0, or -errno. */
static int mh__adopt_head(struct mh_split *sp, const char *head, size_t len, uint64_t total, uint64_t pos) {
  char *buf = malloc(len);
  struct mh_hdr *h = calloc(MH__MAX_REQ_HDRS, sizeof *h);
  if (!buf || !h) {
    free(buf);
    free(h);
    return -ENOMEM;
  }
  memcpy(buf, head, len);
  struct mh_probe_info info;
  size_t n;
  const char *why = mh__adopt_judge(buf, len, total, h, MH__MAX_REQ_HDRS, &n, &info);
  if (why) {
    mh_dbg("split %u: the relayed answer is not split: %s", sp->id, why);
    free(buf);
    free(h);
    return -ENOTSUP;
  }
  info.first = 0;
  info.last = pos - 1;
  info.total = total;
  mh__probe_take_head(sp, buf, h, n, &info);
  sp->total = total;
  mh__probe_asked(sp, pos);
  return 0;
}

/* ---- the program's connection as the first leg ------------------------------------------- */

/* The head g0's parser is given for the rest of the relayed answer: a 206 for [pos, total)
 * with the head's validators, so its bytes are checked and counted as any range answer's. */
static int mh__adopt_feed(struct mh_split *sp, struct mh__leg *g0, uint64_t pos) {
  char buf[4096];
  int n = snprintf(buf, sizeof buf,
                   "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64
                   "\r\nContent-Length: %" PRIu64 "\r\n",
                   pos, sp->total - 1, sp->total, sp->total - pos);
  static const char *const copy[] = {"ETag", "Last-Modified", "Date", "Content-Encoding"};
  const struct mh_hdr *hdrs;
  size_t nh = mh__probe_hdrs(sp, &hdrs);
  for (size_t k = 0; k < sizeof copy / sizeof copy[0]; k++) {
    const struct mh_hdr *h = mh_rr_header(hdrs, nh, copy[k], NULL);
    if (h && n >= 0 && (size_t)n < sizeof buf)
      n += snprintf(buf + n, sizeof buf - (size_t)n, "%s: %.*s\r\n", copy[k], (int)h->value_len, h->value);
  }
  if (n < 0 || (size_t)n + 2 >= sizeof buf)
    return -ENOSPC;
  memcpy(buf + n, "\r\n", 2);
  n += 2;
  if (llhttp_execute(&g0->p, buf, (size_t)n) != HPE_OK || !g0->ans.resp_started || g0->st != LEG_READY ||
      sp->state != SP_MANAGED)
    return -EPROTO;
  return 0;
}

/* Where the program's connection stops: half of what is left, at most half the window ahead of
 * the program (the other paths' ranges must be inside it to be asked). The scheduler moves the
 * point as the paths are measured: a faster new path takes the program connection's tail
 * (sched_resplit), a slower one leaves bytes missing that a new connection on the program's
 * path asks once this one stopped (mh__carried_cut). */
static uint64_t mh__adopt_cut_at(const struct mh_split *sp, uint64_t pos) {
  uint64_t half = (sp->total - pos) / 2, w = sp->cfg->window / 2;
  return pos + (half < w ? half : w);
}

static int mh__adopt_leg(struct mh_split *sp, struct mh_upstream *up, uint64_t pos, int closes) {
  uint64_t now = mh_now_us();
  struct mh__leg *g0 = mh__leg_new(sp, sp->net.primary_iface);
  if (!g0)
    return -ENOMEM;
  g0->primary = 1;
  g0->carried = 1;
  g0->dst = sp->prog.dst;
  g0->srv = mh__srv_of(sp, g0->iface, 0, (const struct sockaddr *)&sp->prog.dst);
  g0->up = up;
  g0->no_more = 1; /* its answer runs to the object's end: nothing may be asked behind it */
  sp->prog.up_closed = closes;
  mh__leg_set_state(g0, LEG_READY);
  g0->sid = sched_conn_add(sp->sched, now);
  mh__seed_rtt(sp, g0);
  mh__probe_on(sp, g0, 0);
  struct sched_range r;
  if (g0->sid < 0 || sched_prefill(sp->sched, 0, pos) < 0 ||
      sched_next_range_sized(sp->sched, g0->sid, now, sp->total - pos, &r) < 0 || r.off != pos ||
      r.off + r.len != sp->total)
    return -EPROTO;
  mh__leg_queue(g0, &r, 0); /* asked by the program: nothing goes out */
  uint64_t cut = mh__adopt_cut_at(sp, pos);
  if (sched_cede(sp->sched, g0->sid, cut) > 0) /* the tail it cedes is no longer asked on its path */
    mh__path_asked(sp, g0->iface, -(int64_t)(sp->total - cut));
  mh__set_state(sp, SP_MANAGED); /* the program has the head and pos bytes of the body */
  return mh__adopt_feed(sp, g0, pos);
}

int mh_split_adopt(const struct mh_split_owner *own, uv_loop_t *loop, struct mh_upstream *up, const char *req,
                   size_t req_len, const struct mh_split_relayed *rel, struct mh_sink *sink, struct mh_split **out) {
  if (own->have || !rel->pos || rel->pos >= rel->total)
    return -ENOTSUP;
  struct mh_split *sp;
  int rc = mh__split_new(own, loop, up, req, req_len, sink, rel->total, rel->pos, &sp);
  if (rc < 0)
    return rc;
  if (sp->rq.span.on || sp->net.primary_iface < 0 || sp->net.nifaces < 2 ||
      rel->total - rel->pos < 2 * sp->cfg->min_split_size)
    rc = -ENOTSUP; /* the program's own range, a path the split cannot name, or too little left */
  if (rc == 0)
    rc = mh__adopt_head(sp, rel->head, rel->head_len, rel->total, rel->pos);
  if (rc == 0)
    rc = mh__adopt_leg(sp, up, rel->pos, rel->closes);
  if (rc < 0) {
    /* nothing was sent: the program's connection stays the session's (its owner watches it
     * again), and no statistics line tells of a split that never ran */
    sp->report.done = 1;
    mh_split_free(sp, 1);
    mh_sink_attach(sink, NULL, NULL);
    return rc;
  }
  mh_info("split %u: %s appeared: the relayed answer continues as a split (%" PRIu64 " of %" PRIu64
          " B relayed; the program's connection keeps up to %" PRIu64 ")",
          sp->id, sp->net.ifaces[sp->net.nifaces - 1].name, rel->pos, sp->total, mh__adopt_cut_at(sp, rel->pos));
  mh__note(sp, "adopted");
  mh__open_extras(sp);
  if (sp->total - rel->pos >= sp->cfg->min_split_size)
    mh__open_replicas(sp);
  for (int i = 0; i < sp->nlegs; i++)
    if (sp->legs[i])
      mh__leg_watch(sp->legs[i]);
  *out = sp;
  return 0;
}

/* g carries the program's relayed answer (carried), which runs to the object's end: once it
 * owes nothing more (the rest is another path's, or was taken from its tail), its bytes would
 * only repeat others'. It is reset, so its server stops sending, and its path gets a
 * connection of ours for the ranges still to ask. */
void mh__carried_cut(struct mh__leg *g) {
  struct mh_split *sp = g->sp;
  struct sched_conn_stats cs;
  if (g->st != LEG_READY || sp->state != SP_MANAGED || sched_conn_stats(sp->sched, g->sid, &cs) < 0 || cs.owed ||
      sched_done(sp->sched))
    return;
  mh_dbg("split %u: leg %d (%s) brought its share of the relayed answer: cut, %" PRIu64 " B of it unread", sp->id,
         g->idx, sp->net.ifaces[g->iface].name, cs.outstanding);
  (void)mh_upstream_control(g->up, MH_UPC_ABORT, NULL);
  sched_conn_failed(sp->sched, g->sid);
  mh__leg_set_state(g, LEG_DEAD);
  g->qn = 0;
  sp->prog.up_dead = 1;
  g->up->ops->watch(g->up, 0);
  g->watching = 0;
  if (!mh__alive_count(sp, g->iface))
    mh__leg_open(sp, g->iface);
}
