/* The answers on a leg: response heads collected and checked, bodies into the scheduler and reassembly (llhttp callbacks). */
#include "split_core.h"
#include "split_leg.h"
#include "mh_clock.h"
#include "mh_log.h"
#include "mh_trust.h"
#include "policy/trickle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct mh__leg *mh__leg_of(llhttp_t *p) { return p->data; }

/* Appends to the head being collected, growing it by doubling up to MH__HEAD_MAX (past that
 * head_overflow). -1 when out of memory. */
static int mh__hb_append(struct mh__leg *g, const char *at, size_t len) {
  if (g->ans.hlen + len > MH__HEAD_MAX) {
    g->ans.head_overflow = 1;
    return 0;
  }
  if (g->ans.hlen + len > g->ans.hcap) {
    size_t cap = g->ans.hcap ? g->ans.hcap : 4096;
    while (cap < g->ans.hlen + len)
      cap *= 2;
    char *nb = realloc(g->ans.hbuf, cap);
    if (!nb)
      return -1;
    g->ans.hbuf = nb;
    g->ans.hcap = cap;
  }
  memcpy(g->ans.hbuf + g->ans.hlen, at, len);
  g->ans.hlen += len;
  return 0;
}

/* Room for one more header's offsets, up to MH__MAX_HDRS. 0, 1 (full) or -1 (no memory). */
static int mh__hoff_room(struct mh__leg *g) {
  if (g->ans.nh < g->ans.hoff_cap)
    return 0;
  if (g->ans.hoff_cap >= MH__MAX_HDRS)
    return 1;
  size_t cap = g->ans.hoff_cap ? 2 * g->ans.hoff_cap : 32;
  void *n = realloc(g->ans.hoff, cap * sizeof g->ans.hoff[0]);
  if (!n)
    return -1;
  g->ans.hoff = n;
  g->ans.hoff_cap = cap;
  return 0;
}

void mh__head_free(struct mh__leg *g) {
  free(g->ans.hbuf);
  free(g->ans.hoff);
  g->ans.hbuf = NULL;
  g->ans.hoff = NULL;
  g->ans.hlen = g->ans.hcap = g->ans.nh = g->ans.hoff_cap = 0;
}

static int mh__on_begin(llhttp_t *p) {
  struct mh__leg *g = mh__leg_of(p);
  g->ans.hlen = g->ans.nh = 0;
  g->ans.last_was_value = 1;
  g->ans.head_overflow = 0;
  g->ans.resp_started = 0;
  g->ans.discard = 0;
  g->ans.in_msg = 1;
  g->ans.reason_len = 0;
  g->ans.reason_long = 0;
  return 0;
}

static int mh__on_status(llhttp_t *p, const char *at, size_t len) {
  struct mh__leg *g = mh__leg_of(p);
  if (len > sizeof g->ans.reason - g->ans.reason_len) {
    g->ans.reason_long = 1;
    return 0;
  }
  memcpy(g->ans.reason + g->ans.reason_len, at, len);
  g->ans.reason_len += len;
  return 0;
}

static int mh__on_field(llhttp_t *p, const char *at, size_t len) {
  struct mh__leg *g = mh__leg_of(p);
  if (g->ans.last_was_value && !g->ans.head_overflow) {
    int room = mh__hoff_room(g);
    if (room < 0)
      return -1;
    if (room) {
      g->ans.head_overflow = 1;
      return 0;
    }
    g->ans.hoff[g->ans.nh][0] = g->ans.hlen;
    g->ans.hoff[g->ans.nh][1] = 0;
    g->ans.hoff[g->ans.nh][2] = g->ans.hlen;
    g->ans.hoff[g->ans.nh][3] = 0;
    g->ans.nh++;
    g->ans.last_was_value = 0;
  }
  if (g->ans.head_overflow)
    return 0;
  if (mh__hb_append(g, at, len) < 0)
    return -1;
  if (!g->ans.head_overflow)
    g->ans.hoff[g->ans.nh - 1][1] += len;
  return 0;
}

static int mh__on_value(llhttp_t *p, const char *at, size_t len) {
  struct mh__leg *g = mh__leg_of(p);
  if (!g->ans.nh || g->ans.head_overflow)
    return 0;
  if (!g->ans.last_was_value) {
    g->ans.hoff[g->ans.nh - 1][2] = g->ans.hlen;
    g->ans.last_was_value = 1;
  }
  if (mh__hb_append(g, at, len) < 0)
    return -1;
  if (!g->ans.head_overflow)
    g->ans.hoff[g->ans.nh - 1][3] += len;
  return 0;
}

/* Views of the collected head into hdrs (values without surrounding OWS). */
static size_t mh__views(const char *base, const size_t (*off)[4], size_t n, struct mh_hdr *hdrs) {
  for (size_t i = 0; i < n; i++) {
    const char *v = base + off[i][2];
    size_t vl = off[i][3];
    while (vl && (*v == ' ' || *v == '\t'))
      v++, vl--;
    while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
      vl--;
    hdrs[i] = (struct mh_hdr){base + off[i][0], off[i][1], v, vl};
  }
  return n;
}

/* Heap views of g's collected head (*out, g->ans.nh entries; NULL when there are none). -1 when
 * out of memory. */
int mh__head_views(const struct mh__leg *g, struct mh_hdr **out) {
  *out = NULL;
  if (!g->ans.nh)
    return 0;
  if (!(*out = malloc(g->ans.nh * sizeof **out)))
    return -1;
  mh__views(g->ans.hbuf, (const size_t(*)[4])g->ans.hoff, g->ans.nh, *out);
  return 0;
}

/* A leg's body progress: its stall clock restarts per MH__PROGRESS_BYTES (a trickle is no
 * progress). */
static void mh__progress(struct mh__leg *g, size_t len, uint64_t now) {
  const struct mh_split *sp = g->sp;
  g->at.progress_bytes += len;
  const struct pol_path *pp = mh__view_path(sp, g->iface);
  uint64_t rtt = pp ? pp->srtt_min_us : 0;
  if (g->tw.t0_us && pol_trickle_reopens(g->tw.bytes, mh__since(now, g->tw.rx_us), len, rtt))
    g->tw.t0_us = 0; /* a crawl after a burst: its window starts here */
  uint64_t slot = g->tw.t0_us && now > g->tw.t0_us ? (now - g->tw.t0_us) / POL_TRICKLE_SLOT_US : 0;
  if (!g->tw.t0_us) { /* a trickle window opens with a byte (policy/trickle.h) */
    g->tw.t0_us = now;
    g->tw.bytes = 0;
    g->tw.slots = 1;
    g->tw.slot = 0;
  } else if (slot != g->tw.slot) { /* bytes in one more of the window's slots */
    g->tw.slots++;
    g->tw.slot = slot;
  }
  g->tw.bytes += len;
  g->tw.rx_us = now;
  if (g->at.progress_bytes >= MH__PROGRESS_BYTES) {
    g->at.progress_us = now;
    g->at.progress_bytes = 0;
  }
}

/* Why a range answer was unusable, as the user is told (a static string: it is kept by pointer). */
static const char *mh__status_why(int status) {
  switch (status) {
  case 401: return "HTTP 401 (unauthorized)";
  case 403: return "HTTP 403 (forbidden)";
  case 404: return "HTTP 404 (not found)";
  case 410: return "HTTP 410 (gone)";
  case 416: return "HTTP 416 (range not satisfiable)";
  case 429: return "HTTP 429 (too many requests)";
  case 500: return "HTTP 500 (server error)";
  case 502: return "HTTP 502 (bad gateway)";
  case 503: return "HTTP 503 (unavailable)";
  default: break;
  }
  return status >= 500 ? "an HTTP 5xx error" : status >= 400 ? "an HTTP 4xx error" : "unusable range answer";
}

/* What g's answer head says about its path (policy/trust.h): an answer of the probe's
 * representation from another interface than the probe's is an agreement of the two paths
 * about the server (noted once per object and interface, both ways); any other answer there
 * (a redirect, a 511, another validator or length) is a disagreement. A mirror is another
 * server and answers for itself (mh__mirror_drop). */
static void mh__trust_answer(struct mh_split *sp, const struct mh__leg *g, int agreed, const char *why) {
  int pi = mh__probe_iface(sp);
  if (g->mirror || pi < 0 || g->iface == pi)
    return;
  const struct sockaddr *dst = (const struct sockaddr *)&g->dst;
  if (!agreed && sp->prog.rebound && !mh__probe_moved(sp) &&
      mh_path_same_addr(dst, (const struct sockaddr *)&sp->prog.dst)) {
    /* the probe came over a path plain would not have taken: the other path is the reference */
    mh_trust_note(sp->env->paths, &sp->net.ifaces[pi], dst, POL_TRUST_DISAGREED, why);
    return;
  }
  if (!agreed) {
    mh_trust_note(sp->env->paths, &sp->net.ifaces[g->iface], dst, POL_TRUST_DISAGREED, why);
    return;
  }
  if (!mh__probe_trust_once(sp, g->iface))
    return;
  mh_trust_note(sp->env->paths, &sp->net.ifaces[g->iface], dst, POL_TRUST_AGREED,
                "its range answer matches the probe's");
  if (mh__probe_trust_once(sp, pi))
    mh_trust_note(sp->env->paths, &sp->net.ifaces[pi], (const struct sockaddr *)&sp->prog.dst, POL_TRUST_AGREED,
                  "another path's range answer matches its probe's");
}

/* A further range's answer head: it must be the probe's representation, exactly the asked
 * bytes. In SP_PLAIN a 200 of the whole representation is taken too (its first bytes skipped),
 * as a resuming client would. */
static void mh__range_head(struct mh_split *sp, struct mh__leg *g, const struct mh_hdr *hdrs, size_t n) {
  struct mh__req *rq = &g->q[0];
  const struct mh_probe_info *pi = mh__probe_info(sp);
  uint64_t base = sp->rq.span.first; /* the request asked object bytes (mh__span) */
  int rc = mh_rr_check_range_response(pi, g->ans.status, hdrs, n, base + rq->off, base + rq->off + rq->len - 1);
  if (rc && sp->state == SP_PLAIN && !sp->rq.span.on && g->ans.status == 200 &&
      mh_rr_check_whole_response(pi, hdrs, n) == 0) {
    g->skip = rq->off;
    rc = 0;
  } else if (rc && sp->state == SP_PLAIN && sp->rq.span.on && sp->plain.whole &&
             mh_rr_check_range_response(pi, g->ans.status, hdrs, n, base, base + sp->total - 1) == 0) {
    g->skip = rq->off; /* the program's own request: its whole span again */
    rc = 0;
  }
  if (rc == 0) {
    g->ans.resp_started = 1;
    mh__trust_answer(sp, g, 1, NULL);
    if (!g->mirror && !mh_path_same_addr((const struct sockaddr *)&g->dst, (const struct sockaddr *)&sp->prog.dst))
      mh__replica_agreed(sp, g->iface);
    if (sp->state == SP_VERIFY && rq->off + rq->len == sp->total &&
        (!sp->prog.rebound || g->iface == sp->prog.plain_iface)) {
      mh_dbg("split %u: leg %d confirms the probe's representation and total", sp->id, g->idx);
      mh__probe_agree_end(sp);
      mh__verified(sp);
    }
    return;
  }
  mh_info("split %u: leg %d (%s) answered %d %s", sp->id, g->idx, sp->net.ifaces[g->iface].name, g->ans.status,
          rc == -EPROTO ? "for another representation" : "malformed");
  mh__trust_answer(sp, g, 0, rc == -EPROTO ? "another representation than the probe's" : "an unusable range answer");
  mh__leg_bad(g, rc == -EPROTO ? "another representation" : mh__status_why(g->ans.status));
}

/* The answer ends its connection by the origin's choice (Connection: close, or HTTP/1.0
 * without keep-alive), not only because its body has no length: after a close-delimited 206 of
 * ours the origin would have kept the program's connection for a 200 with a length. */
static int mh__says_close(const llhttp_t *p) {
  if (p->flags & F_CONNECTION_CLOSE)
    return 1;
  if (p->http_major == 1 && p->http_minor == 0 && !(p->flags & F_CONNECTION_KEEP_ALIVE))
    return 1;
  return !llhttp_message_needs_eof(p);
}

static int mh__on_headers(llhttp_t *p) {
  struct mh__leg *g = mh__leg_of(p);
  struct mh_split *sp = g->sp;
  if (sp->state == SP_FINISHED || g->st == LEG_DEAD)
    return 0;
  g->ans.status = p->status_code;
  g->ans.interim = g->ans.status >= 100 && g->ans.status < 200 && g->ans.status != 101;
  if (!g->qn) {
    /* an idle connection's server speaking first (a 408 before it closes, say) ends that
     * connection, not the object */
    mh__leg_fail(g, "unsolicited response");
    return 0;
  }
  if (!g->ans.interim && !llhttp_should_keep_alive(p)) {
    g->no_more = 1; /* the origin ends this connection after this answer: nothing more on it */
    g->end.said_close = 1;
    if (g->primary && g->q[0].probe && mh__says_close(p))
      sp->prog.up_closed = 1;
    mh__leg_report(g, MH__LEG_SAID_CLOSE, NULL); /* its keep-alive end, or every answer's */
  }
  if (g->q[0].probe) {
    mh__leg_report(g, MH__LEG_PROBE_HEAD, NULL);
    return 0;
  }
  if (g->ans.interim)
    return 0;
  struct mh_hdr *hdrs = NULL;
  if (g->ans.head_overflow || mh__head_views(g, &hdrs) < 0) {
    mh__leg_bad(g, "response head too large");
    return 0;
  }
  mh__range_head(sp, g, hdrs, g->ans.nh);
  free(hdrs);
  return 0;
}

/* SP_PLAIN: body bytes of the one open-ended range go straight to reassembly. */
static void mh__plain_body(struct mh__leg *g, const char *at, size_t len, uint64_t now) {
  struct mh_split *sp = g->sp;
  size_t k = g->skip < len ? (size_t)g->skip : len;
  g->skip -= k;
  at += k;
  len -= k;
  if (sp->plain.whole)
    g->at.progress_us = now; /* slow is not stalled: the program would wait as long */
  else
    mh__progress(g, len + k, now);
  if (!len)
    return;
  struct mh__req *rq = &g->q[0];
  if (rq->got + len > rq->len) {
    mh__leg_bad(g, "more body than the object");
    return;
  }
  uint64_t off = rq->off + rq->got;
  rq->got += len;
  if (rq->got >= MH__PLAIN_WORTH || rq->got == rq->len)
    sp->plain.fails = 0; /* this attempt paid for its reconnect */
  mh__path_body(sp, g->iface, len);
  mh__srv_count_bytes(sp, g, len);
  if (mh_reasm_put(&sp->ra, off, at, len) < 0)
    mh__finish(sp, MH_SPLIT_END_RESET);
}

static int mh__on_body(llhttp_t *p, const char *at, size_t len) {
  struct mh__leg *g = mh__leg_of(p);
  struct mh_split *sp = g->sp;
  uint64_t now = mh_now_us();
  if (g->ans.discard)
    g->at.progress_us = now; /* mh__tick gives up on a discard that stops */
  if (g->ans.discard || g->st == LEG_DEAD || sp->state == SP_FINISHED || sp->state == SP_PROBE ||
      sp->state == SP_DISCARD || g->ans.interim)
    return 0;
  if (sp->state == SP_PLAIN) {
    mh__plain_body(g, at, len, now);
    return 0;
  }
  struct mh__req *rq = &g->q[0];
  uint64_t off = rq->off + rq->got;
  if (rq->got + len > rq->len) {
    mh__leg_bad(g, "more body than requested");
    return 0;
  }
  int acc = sched_on_data(sp->sched, g->sid, off, len, now);
  if (acc < 0) {
    mh__leg_fail(g, "scheduler refused the bytes");
    return 0;
  }
  rq->got += len;
  mh__progress(g, len, now);
  if (g->tw.bytes < POL_TRICKLE_SEG)
    mh__crawl_ask(sp);
  if (acc) {
    mh__path_body(sp, g->iface, (uint64_t)acc);
    mh__srv_count_bytes(sp, g, (uint64_t)acc);
    /* the new bytes may lie anywhere in the read (a victim's bytes past its re-split point
     * that came before the taker's copy): reassembly keeps the first copy of each byte */
    if (mh_reasm_put(&sp->ra, off, at, len) < 0) {
      mh__finish(sp, MH_SPLIT_END_RESET);
      return 0;
    }
  }
  if (g->carried)
    mh__leg_report(g, MH__LEG_CARRIED, NULL);
  return 0;
}

static int mh__on_complete(llhttp_t *p) {
  struct mh__leg *g = mh__leg_of(p);
  struct mh_split *sp = g->sp;
  g->ans.in_msg = 0;
  if (sp->state == SP_FINISHED || g->st == LEG_DEAD)
    return 0;
  if (g->ans.interim) {
    g->ans.interim = 0;
    /* pause so mh__leg_read learns where the 1xx ends in the probe's raw bytes */
    return sp->state == SP_PROBE && g == mh__probe_leg(sp) && !mh__probe_moved(sp) ? HPE_PAUSED : 0;
  }
  g->answers++;
  int keep = llhttp_should_keep_alive(p);
  if (!keep)
    g->no_more = 1;
  if (sp->state == SP_DISCARD && g->ans.discard) {
    g->qn = 0;
    g->ans.discard = 0;
    sp->res.resend = 1;
    if (!keep)
      sp->prog.up_dead = 1; /* its owner takes another one (result.replace) */
    mh__finish(sp, MH_SPLIT_END_RELAY);
    return 0;
  }
  if (!g->qn)
    return 0;
  struct mh__req *rq = &g->q[0];
  if (rq->got != rq->len) {
    mh__leg_bad(g, "short response");
    return 0;
  }
  g->at.progress_us = mh_now_us();
  g->at.progress_bytes = 0;
  mh__reconnects_clear(sp); /* answers complete again: reconnecting is worth it (mh__ensure_paths) */
  if (sp->state == SP_PLAIN) {
    g->qn = 0;
    return 0;
  }
  mh__path_chunk(sp, g->iface);
  if (rq->probe)
    g->tw.t0_us = 0; /* the probe's bytes are not judged (mh__leg_window): the next answer's open a window */
  memmove(&g->q[0], &g->q[1], (--g->qn) * sizeof g->q[0]);
  if (!keep)
    mh__leg_report(g, MH__LEG_LAST_ANSWER, NULL);
  if (mh_log_level_v >= MH_LOG_DEBUG) {
    struct sched_conn_stats cs;
    sched_conn_stats(sp->sched, g->sid, &cs);
    mh_dbg("split %u: +%.1f ms leg %d chunk done (%u queued, rate %.0f B/s, %u samples)", sp->id,
           (mh_now_us() - sp->t_start_us) / 1000.0, g->idx, g->qn, cs.rate_Bps, cs.samples);
  }
  return 0;
}

/* The parser callbacks every leg's llhttp uses: a process-wide constant (llhttp_settings_init
 * only zeroes what is not named), shared by every engine's loop thread. */
static const llhttp_settings_t mh__settings = {
    .on_message_begin = mh__on_begin,
    .on_status = mh__on_status,
    .on_header_field = mh__on_field,
    .on_header_value = mh__on_value,
    .on_headers_complete = mh__on_headers,
    .on_body = mh__on_body,
    .on_message_complete = mh__on_complete,
};

const llhttp_settings_t *mh__answer_settings(void) { return &mh__settings; }
