/* The probe of a split: its size, the connection it goes out on, and what its answer means. */
#include "split_core.h"
#include "split_leg.h"
#include "split_deliver.h"
#include "split_legs.h"
#include "split_assign.h"
#include "split_start.h"
#include "mh_clock.h"
#include "mh_config.h"
#include "mh_log.h"
#include "mh_trust.h"
#include "mh_upstream.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void mh__probe_managed(struct mh_split *sp, struct mh__leg *g);
static void mh__probe_rest(struct mh_split *sp, struct mh__leg *g, uint64_t probe_len);

/* The probe's size (pol_probe_size): about one round trip of the program's path, from its
 * metrics, up to POL_PROBE_MAX_CHUNKS init_chunks; init_chunk on a path not measured yet (or
 * with an untrusted rate, pol_rate_trusted). A configured init_chunk is the user's choice
 * and stays fixed, and so does a connection on no configured interface (no metrics to size
 * from). Only the probe takes it (sched_config.probe_chunk): an extra path's first chunk
 * (before it has a rate) is init_chunk, doubling per chunk. */
uint64_t mh__probe_size(const struct mh_split *sp) {
  if (sp->cfg->init_chunk_set || sp->net.primary_iface < 0)
    return mh__probe_cap(sp, sp->cfg->init_chunk);
  struct pol_path m;
  memset(&m, 0, sizeof m);
  mh__iface_metrics(sp, sp->net.primary_iface, &m);
  if (!pol_rate_trusted(&m, sp->cfg->pol.init_window))
    m.max_rate = 0;
  return mh__probe_cap(
      sp, pol_probe_size(&sp->env->paths->pol, &m, sp->cfg->init_chunk, sp->cfg->init_chunk * POL_PROBE_MAX_CHUNKS));
}

/* A probe never asks past the program's closed span (mh__span). */
uint64_t mh__probe_cap(const struct mh_split *sp, uint64_t n) {
  if (sp->rq.span.on && sp->rq.span.last != MH_RR_TO_END && n > sp->rq.span.last - sp->rq.span.first + 1)
    return sp->rq.span.last - sp->rq.span.first + 1;
  return n;
}

/* The last byte of the object the split serves, for an object of total bytes: its end, or the
 * end of the program's span when that comes first (an origin answers a span past the end
 * with the bytes up to it). */
uint64_t mh__span_end(const struct mh_split *sp, uint64_t total) {
  return sp->rq.span.on && sp->rq.span.last < total - 1 ? sp->rq.span.last : total - 1;
}

/* A connection that existed before this split (the program's, a pooled one): the kernel's
 * RTT estimate as the scheduler's first latency, there being no handshake to time. */
void mh__seed_rtt(struct mh_split *sp, struct mh__leg *g) {
  uint32_t rtt = mh_upstream_srtt_us(g->up);
  if (rtt)
    sched_on_rtt(sp->sched, g->sid, rtt);
}

/* 1 when the probe may go to path j: its answer would stand for the object (even whole, a
 * probe that holds all of it), so j must have agreed with another path about the program's
 * server before (policy/trust.h); a captive portal or a stale cache on j would otherwise hand
 * the program its own bytes. A configured single:IF is the user's choice. */
static int mh__probe_may_move(struct mh_split *sp, int j) {
  if (mh_trust_exempt(sp->cfg))
    return 1;
  enum pol_trust_state st = mh_trust_of(sp->env->paths, &sp->net.ifaces[j], (const struct sockaddr *)&sp->prog.dst);
  if (st == POL_TRUST_AGREED)
    return 1;
  mh_dbg("split %u: probe stays: %s has %s with another path about the server", sp->id, sp->net.ifaces[j].name,
         st == POL_TRUST_DISAGREED ? "disagreed" : "not agreed yet");
  return 0;
}

/* The connection the probe goes out on. The program's connection was placed at connect()
 * (shim_bind.c), but a keep-alive program sends its later requests on it however loaded its
 * path is now (asym, wget2: probes waited 18-153 ms behind wifi0's own traffic while a warm
 * lte0 connection idled). So the policy picks again for the probe's size with the load of
 * now (mh_policy_probe_move); when it picks another path that has a connected pooled
 * connection to the program's server, the probe goes there, and the program's connection
 * stays a ready leg that takes ranges like any other. */
struct mh__leg *mh__probe_move(struct mh_split *sp, struct mh__leg *g0, uint64_t probe_size) {
  if (sp->net.primary_iface < 0 || sp->net.nifaces < 2 || !sp->rq.host[0] || !sp->cfg->probe_move)
    return g0;
  /* a program that ends its connection after this response (HTTP/1.0, Connection: close)
   * learns the end from the server closing its connection (mh__finish: up_dead), which only
   * a probe on that connection brings about */
  if (!mh_rr_request_keeps_alive(&sp->rq.rv))
    return g0;
  mh__build_view(sp);
  struct pol_choice c;
  const struct pol_view *v = mh__view(sp);
  int j = mh_policy_probe_move(&sp->env->paths->pol, v, sp->net.primary_iface, probe_size, mh_policy_draw(), &c);
  if (j < 0 || j >= sp->net.nifaces || !mh__probe_may_move(sp, j))
    return g0;
  uint64_t idle = v->path[j].idle_us;
  struct mh__leg *g = mh__leg_open(sp, j);
  if (!g)
    return g0;
  if (g->at.connect_us) /* a handshake after all (the pool changed): an extra leg, no move */
    return g0;
  mh__leg_connected(g);
  if (g->st != LEG_READY)
    return g0;
  if (!g->at.hs_us)
    mh__seed_rtt(sp, g);
  mh__probe_on(sp, g, 1);
  /* the probe is sized for that connection's path (pol_moved_probe_size); a configured
   * init_chunk stays the user's */
  if (!sp->cfg->init_chunk_set) {
    uint64_t n = mh__probe_cap(sp, pol_moved_probe_size(&sp->env->paths->pol, &v->path[j], probe_size,
                                                        sp->cfg->init_chunk * POL_PROBE_MAX_CHUNKS));
    if (n != probe_size)
      sched_set_probe_chunk(sp->sched, n); /* before any range: it cannot be refused */
  }
  if (idle == POL_IDLE_COLD)
    mh_dbg("split %u: probe moved to %s (pooled, never used; predicted %.0f us)", sp->id, sp->net.ifaces[j].name,
           c.predicted_us);
  else
    mh_dbg("split %u: probe moved to %s (pooled, idle %" PRIu64 " ms; predicted %.0f us)", sp->id,
           sp->net.ifaces[j].name, idle / 1000, c.predicted_us);
  return g;
}

/* A re-bound connection's probe (sp->prog.rebound: the connect-time choice put the program's
 * connection on another path than the kernel's) is confirmed on the kernel's own path: the
 * object's last bytes are asked there (no other leg takes a range meanwhile, mh__next_range),
 * on a ready connection to the program's server, opened when there is none. Without that
 * word within MH__PROBE_STALL_US the program's request goes the kernel's way. */
void mh__verify_plain(struct mh_split *sp) {
  if (sp->state != SP_VERIFY || !sp->prog.rebound)
    return;
  struct mh__leg *g = NULL;
  int any = 0;
  for (int i = 0; i < sp->nlegs; i++) {
    struct mh__leg *l = sp->legs[i];
    if (!l || l->iface != sp->prog.plain_iface || l->mirror || l->st == LEG_DEAD ||
        !mh_path_same_addr((const struct sockaddr *)&l->dst, (const struct sockaddr *)&sp->prog.dst))
      continue;
    if (mh__asks_end(sp, l))
      return; /* asked: its answer ends SP_VERIFY (mh__range_head) */
    any = 1;
    if (l->st == LEG_READY && !l->qn && !l->no_more && l->sid >= 0)
      g = l;
  }
  if (mh__probe_verify_overdue(sp)) {
    mh__restart(sp, "rebound-unverified", 1);
    return;
  }
  if (!g) {
    if (!any)
      mh__leg_open(sp, sp->prog.plain_iface);
    return;
  }
  struct sched_range r;
  if (sched_next_range_last(sp->sched, g->sid, mh_now_us(), sp->cfg->init_chunk, &r) == 0) {
    mh_dbg("split %u: leg %d (%s) asks %" PRIu64 "+%" PRIu64 ": the kernel's path checks the re-bound probe", sp->id,
           g->idx, sp->net.ifaces[g->iface].name, r.off, r.len);
    if (mh__leg_request(g, &r, 0, 1) < 0)
      mh__leg_fail(g, "request");
  }
}

/* A moved probe (mh__probe_move) did not get a usable 206: its connection is closed (a 200
 * there may be huge, and its bytes are not the program's connection's) and the program's
 * request goes out unchanged on its own connection (the session's resend), so the program
 * sees what it would have seen without the engine. */
void mh__probe_fallback(struct mh_split *sp, const char *why) {
  struct mh__leg *g = mh__probe_leg_release(sp);
  mh_info("split %u: moved probe on %s: %s: the program's request goes out on its own connection", sp->id,
          g ? sp->net.ifaces[g->iface].name : "?", why);
  mh__note(sp, "probe-moved-fallback");
  if (g && g->st != LEG_DEAD) {
    if (g->sid >= 0)
      sched_conn_failed(sp->sched, g->sid);
    mh__leg_set_state(g, LEG_DEAD);
    g->qn = 0;
    mh__leg_drop(g, 1);
  }
  sp->res.resend = 1;
  mh__finish(sp, MH_SPLIT_END_RELAY);
}

/* What the probe's answer means (mh_rr_classify_probe_at the span's start), with the rules
 * the classifier cannot see: a 206 longer than asked is not ours, an object (or span) larger
 * than the probe is split only under a strong validator (without one, bytes of different
 * versions could be spliced), and a span's 206 head repeats the reason phrase, which must
 * have fit. *framed: the answer's length can be trusted (its body may be skipped in place). */
static enum mh_probe_action mh__probe_verdict(const struct mh_split *sp, const struct mh__leg *g,
                                              const struct mh_hdr *hdrs, size_t n, const char **why, int *framed) {
  struct mh_probe_info info;
  size_t vl;
  enum mh_probe_action a = mh_rr_classify_probe_at(g->ans.status, hdrs, n, sp->rq.span.first, &info);
  *framed = g->ans.status == 416;
  *why = a == MH_PROBE_RELAY ? "probe-relay" : "probe-unusable";
  if (a != MH_PROBE_MANAGED)
    return a;
  if (info.last - info.first >= g->q[0].len) {
    *why = "probe-longer-than-asked";
    return MH_PROBE_RESEND;
  }
  *framed = 1;
  if (sp->rq.span.on && g->ans.reason_long) {
    *why = "probe-reason-too-long";
    return MH_PROBE_RESEND;
  }
  if (info.last < mh__span_end(sp, info.total) && !mh_rr_if_range(&info, &vl)) {
    *why = "no-strong-validator";
    return MH_PROBE_RESEND;
  }
  return MH_PROBE_MANAGED;
}

/* The probe's answer head: managed, relayed (it cannot depend on our Range), or replaced by
 * the answer to the program's own request. */
void mh__probe_head(struct mh_split *sp, struct mh__leg *g) {
  if (g->ans.interim) {
    /* a 1xx on the program's connection is passed on before the head (mh__probe_interim); on a
     * moved probe's connection it belongs to no request of the program */
    if (mh__probe_moved(sp))
      mh__probe_fallback(sp, "interim");
    return;
  }
  struct mh_hdr *hdrs = NULL;
  const char *why = "probe-head-too-large";
  int framed = 0;
  enum mh_probe_action a = MH_PROBE_RESEND;
  if (!g->ans.head_overflow && mh__head_views(g, &hdrs) == 0)
    a = mh__probe_verdict(sp, g, hdrs, g->ans.nh, &why, &framed);
  free(hdrs);
  if (sp->prog.rebound && !mh__probe_moved(sp) && a != MH_PROBE_MANAGED) {
    /* the program's connection is on a path plain would not have taken: an answer that is not
     * a clean 206 there (a portal's redirect or login page) is not relayed; the request goes
     * the way plain would have sent it, and the path is marked for this server */
    mh_trust_note(sp->env->paths, &sp->net.ifaces[g->iface], (const struct sockaddr *)&sp->prog.dst,
                  POL_TRUST_DISAGREED, "an unusable probe answer on a re-bound connection");
    mh__restart(sp, why, 1);
  } else if (mh__probe_moved(sp) && a != MH_PROBE_MANAGED) {
    /* the answer is on another connection than the program's: relaying it would hand the
     * program another connection's stream as its own (and a 200 may be huge). Close that
     * one and let the program's request go out unchanged on its own connection. */
    mh_dbg("split %u: moved probe answered %d: resend on the program's connection", sp->id, g->ans.status);
    mh__probe_fallback(sp, why);
  } else if (a == MH_PROBE_RELAY) {
    mh_dbg("split %u: probe answered %d: relay", sp->id, g->ans.status);
    mh__note(sp, why);
    mh__finish(sp, MH_SPLIT_END_RELAY);
  } else if (a == MH_PROBE_RESEND && framed) {
    mh_dbg("split %u: probe answered %d (%s): its body is skipped, then the request goes out unchanged", sp->id,
           g->ans.status, why);
    mh__note(sp, why);
    g->ans.discard = 1;
    g->at.progress_us = mh_now_us();
    mh__set_state(sp, SP_DISCARD);
  } else if (a == MH_PROBE_RESEND) {
    mh__restart(sp, why, 1); /* its framing cannot be trusted: a new connection */
  } else {
    mh__probe_managed(sp, g);
  }
}

/* The object is larger than the probe: plan the rest, open the replicas, and verify (the
 * object's last bytes asked at once, pipelined on the probe's connection when it may). */
static void mh__probe_rest(struct mh_split *sp, struct mh__leg *g, uint64_t probe_len) {
  mh__plan(sp, sp->total - probe_len);
  mh__program_path_leg(sp); /* the origin's answer may end the program's connection */
  if (sp->total - probe_len >= sp->cfg->min_split_size) {
    mh__open_replicas(sp);
    mh__standby_open(sp);
  }
  mh__set_state(sp, SP_VERIFY);
  mh__probe_verify_begins(sp);
  mh__verify_plain(sp);
  /* pipeline the next range on the program's connection at once, so a small object does
   * not wait a round trip between the probe and the rest (unless the plan moved it) */
  struct sched_range r;
  struct mh__admit a;
  const struct pol_admit_obj *o = mh__admit(sp, &a);
  if (!g->no_more && llhttp_should_keep_alive(&g->p) && pol_admit_leg_allowed(o, (unsigned)g->idx) &&
      !pol_admit_yields(o, (unsigned)g->idx) &&
      mh__next_range(sp, g, mh_now_us(), pol_admit_share_left(o, (unsigned)g->idx), &r) == 0) {
    mh_dbg("split %u: leg %d range %" PRIu64 "+%" PRIu64 " (pipelined after the probe)", sp->id, g->idx, r.off, r.len);
    if (mh__leg_request(g, &r, 0, 1) < 0)
      mh__leg_fail(g, "request");
  }
}

/* The probe answered 206 with a usable Content-Range and a strong validator (or the whole
 * object): take its head, build the 200 (any 1xx answers the sink has not taken yet go before
 * it, mh__deliver). */
static void mh__probe_managed(struct mh_split *sp, struct mh__leg *g) {
  struct mh_hdr *h;
  struct mh_probe_info info;
  if (mh__head_views(g, &h) < 0) {
    mh__restart(sp, "probe-no-memory", 1);
    return;
  }
  size_t nh = g->ans.nh;
  mh_rr_classify_probe_at(g->ans.status, h, nh, sp->rq.span.first, &info);
  mh__probe_take_head(sp, g->ans.hbuf, h, nh, &info); /* the views in h and info point into it */
  g->ans.hbuf = NULL;
  g->ans.hcap = g->ans.hlen = 0;
  uint64_t end = mh__span_end(sp, info.total);
  sp->total = end + 1 - sp->rq.span.first;
  mh__digest_setup(sp);
  /* each header grows by ": " and CRLF; then the status line, Content-Length and Content-Range */
  size_t cap = 4 * nh + 256 + g->ans.reason_len;
  for (size_t i = 0; i < nh; i++)
    cap += h[i].name_len + h[i].value_len;
  char ver[16], *head = malloc(cap);
  snprintf(ver, sizeof ver, "HTTP/%d.%d", g->p.http_major, g->p.http_minor);
  ssize_t n = -ENOMEM;
  if (head && sp->rq.span.on)
    n = mh_rr_rewrite_span_head(ver, g->ans.reason, g->ans.reason_len, h, nh, sp->rq.span.first, end, info.total, head,
                                cap);
  else if (head)
    n = mh_rr_rewrite_head(ver, h, nh, sp->total, head, cap);
  if (n < 0 || mh__deliver_head(sp, head, (size_t)n) < 0 || sched_set_total(sp->sched, sp->total) < 0) {
    free(head);
    mh__restart(sp, "probe-rewrite-failed", 1); /* cannot happen with sane sizes; never guess */
    return;
  }
  free(head);
  mh__have_apply(sp); /* a resumed object: what its destination holds is not asked again */
  uint64_t probe_len = mh__probe_end(sp);
  g->q[0].len = probe_len;
  mh__probe_timed(sp);
  mh_dbg("split %u: probe 206, total %" PRIu64 "%s%s", sp->id, info.total, sp->rq.span.on ? ", the program's span" : "",
         probe_len >= sp->total ? " (all of it)" : ", strong validator");
  if (probe_len >= sp->total && sp->prog.rebound && !mh__probe_moved(sp)) {
    /* a whole object from a path plain would not have taken has no other path's word: the
     * program's request goes the kernel's way (a portal's made-up 206 never stands) */
    mh__restart(sp, "rebound-whole-object", 1);
  } else if (probe_len >= sp->total) {
    mh__set_state(sp, SP_MANAGED); /* the probe is the whole object: nothing to verify */
  } else {
    mh__probe_rest(sp, g, probe_len);
  }
}
