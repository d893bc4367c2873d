/* Range splitting of one object: its lifecycle and state machine (start, pump, tick, finish, free); owns the scheduler and the reassembly. */
#include "split_core.h"
#include "split_leg.h"
#include "split_deliver.h"
#include "split_legs.h"
#include "split_assign.h"
#include "split_start.h"
#include "split_events.h"
#include "mh_clock.h"
#include "mh_config.h"
#include "mh_log.h"
#include "mh_netstate.h"
#include "mh_portal.h"
#include "mh_trust.h"
#include "mh_upstream.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Splits the request head into views (mh_rr_parse_request) and keeps its Host. 0 or -EINVAL. */
static int mh__parse_req(struct mh_split *sp) {
  int rc = mh_rr_parse_request(sp->rq.req, sp->rq.req_len, &sp->rq.rv, sp->rq.rhdrs, MH__MAX_REQ_HDRS);
  if (rc < 0)
    return rc;
  for (size_t i = 0; i < sp->rq.rv.nhdrs; i++) {
    const struct mh_hdr *h = &sp->rq.rhdrs[i];
    if (h->name_len == 4 && !strncasecmp(h->name, "Host", 4) && h->value_len < sizeof sp->rq.host) {
      memcpy(sp->rq.host, h->value, h->value_len);
      sp->rq.host[h->value_len] = 0;
    }
  }
  return 0;
}

/* Frees what sp's modules made (each free is safe to repeat and on parts never made): by
 * mh_split_free, by a start that fails before its timers exist, and when the tick closes after
 * a start that failed late. */
static void mh__parts_free(struct mh_split *sp) {
  mh__servers_free(sp);
  mh__origin_free(sp);
  mh__rescues_free(sp);
  mh__planning_free(sp);
  sched_free(sp->sched);
  sp->sched = NULL;
  mh_reasm_free(&sp->ra);
  mh__probe_free(sp);
  mh__deliver_free(sp);
  mh__have_free(sp);
}

static void mh__tick_closed(uv_handle_t *h) {
  mh__parts_free(h->data);
  free(h->data);
}

/* The rate limit's timer closed: then the tick, whose close frees sp. */
static void mh__rl_closed(uv_handle_t *h) {
  struct mh_split *sp = h->data;
  uv_close((uv_handle_t *)&sp->tick, mh__tick_closed);
}

/* The two timers close one after the other (the last close frees sp); each is stopped at
 * once, so none fires between the closes, a loop iteration apart, on a freed scheduler. The
 * hedge's closes with its state (mh__hedge_free), which is not sp's. */
static void mh__close_timers(struct mh_split *sp) {
  uv_timer_stop(&sp->tick);
  mh__hedge_free(sp);
  uv_close((uv_handle_t *)&sp->rl.timer, mh__rl_closed);
}

void mh_split_free(struct mh_split *sp, int abort) {
  if (!sp->sink->ended) { /* the owner frees it first */
    int err = mh__deliver_err(sp);
    sp->res.err = err ? err : -ECANCELED;
    mh_sink_end(sp->sink, &sp->res);
  }
  mh__stats(sp, sp->res.end);
  mh__hedge_drop(sp, sp->state == SP_FINISHED ? "the object ended" : NULL);
  mh__transfer_uncount(sp);
  for (int i = 0; i < sp->nlegs; i++) {
    struct mh__leg *g = sp->legs[i];
    if (g && (abort || !mh__leg_park(sp, i)))
      mh__leg_drop(g, !g->primary && (g->qn || g->st == LEG_CONNECTING));
  }
  mh__parts_free(sp);
  mh__close_timers(sp);
}

static void mh__tick(uv_timer_t *t) {
  struct mh_split *sp = t->data;
  struct mh__leg *pg = mh__probe_leg(sp);
  if (sp->state == SP_PROBE && mh__probe_moved(sp) && pg && pg->st == LEG_READY && pg->qn) {
    /* the program's own connection would have answered by now, or shown the program why
     * not: past this the moved probe's path is broken and the program's request goes out on
     * its own connection. Generous: a slow origin must not get every GET twice. */
    struct sched_conn_stats cs;
    sched_conn_stats(sp->sched, pg->sid, &cs);
    uint64_t limit = (uint64_t)(8 * cs.rtl_us);
    if (limit < MH__PROBE_STALL_US)
      limit = MH__PROBE_STALL_US;
    if (mh__since(mh_now_us(), pg->at.progress_us) > limit) {
      mh__leg_fail(pg, "probe stalled");
      mh__kick(sp);
    }
    return;
  }
  if (sp->state == SP_DISCARD && pg && mh__since(mh_now_us(), pg->at.progress_us) > MH__STALL_MIN_US) {
    /* the skipped answer stopped short of its length: a new connection instead */
    mh__restart(sp, "discard-stalled", 1);
    mh__kick(sp);
    return;
  }
  if (sp->state != SP_VERIFY && sp->state != SP_MANAGED && sp->state != SP_PLAIN)
    return;
  mh__net_tick(sp, mh_now_us()); /* paths gone, back, new (the engine's rtnetlink events) */
  mh__verify_plain(sp);
  if (sp->state == SP_FINISHED) {
    mh__kick(sp);
    return;
  }
  mh__replicas_update(sp); /* answers multiDNS got since the last tick */
  mh__tick_legs(sp, mh_now_us());
  if (sp->state == SP_MANAGED || sp->state == SP_VERIFY) {
    if (mh__planned(sp) && sp->net.primary_iface >= 0)
      mh__build_view(sp); /* fresh metrics for pol_worth_adding */
    mh__rescue(sp);
  }
  mh__kick(sp);
}

/* Credit returned: the legs the rate limit held read, the first one in turn (the one that
 * reads first takes what there is), then the owner pumps. */
static void mh__rl_resume(uv_timer_t *t) {
  struct mh_split *sp = t->data;
  int n = sp->nlegs;
  for (int k = 0; n > 0 && k < n && sp->state != SP_FINISHED; k++) {
    struct mh__leg *g = sp->legs[(sp->rl.next + (unsigned)k) % (unsigned)n];
    if (g && g->st == LEG_READY && mh__leg_may_read(g))
      mh__leg_read(g);
  }
  sp->rl.next++;
  mh__kick(sp);
}

/* A leg waits for credit: the timer wakes the split when there is some again. */
static void mh__rl_arm(struct mh_split *sp) {
  uint64_t now = mh_now_us();
  if (!sp->rl.bucket.rate || sp->state == SP_FINISHED || uv_is_active((uv_handle_t *)&sp->rl.timer) ||
      mh_bucket_avail(&sp->rl.bucket, now, 1))
    return;
  for (int i = 0; i < sp->nlegs; i++)
    if (sp->legs[i] && sp->legs[i]->st == LEG_READY && sp->legs[i]->paused) {
      uv_timer_start(&sp->rl.timer, mh__rl_resume, (mh_bucket_wait_us(&sp->rl.bucket, now) + 999) / 1000, 0);
      return;
    }
}

void mh_split_set_rate(struct mh_split *sp, uint64_t rate) {
  mh_bucket_set(&sp->rl.bucket, rate, mh_now_us());
  uv_timer_stop(&sp->rl.timer);
  if (sp->state != SP_FINISHED)
    uv_timer_start(&sp->rl.timer, mh__rl_resume, 0, 0); /* legs held may read at once now */
}

int mh_split_pump(struct mh_split *sp) {
  mh__verified(sp);
  if (mh__crawl_asked(sp))
    mh__crawl_everywhere(sp);
  for (int round = 0; round < 4 && sp->state != SP_FINISHED; round++) {
    uint64_t pos = sp->ra.pos;
    int rc = mh__deliver(sp);
    if (rc < 0)
      return rc;
    if (sp->state == SP_FINISHED)
      break;
    mh__drive(sp);
    /* legs paused by a full window may read again now */
    for (int i = 0; i < sp->nlegs; i++)
      if (sp->legs[i] && sp->legs[i]->st == LEG_READY && sp->legs[i]->paused && mh__leg_may_read(sp->legs[i]))
        mh__leg_read(sp->legs[i]);
    if (sp->ra.pos == pos)
      break;
  }
  mh__release_spares(sp, mh__rescue_waits(sp));
  for (int i = 0; i < sp->nlegs; i++)
    if (sp->legs[i] && sp->state != SP_FINISHED)
      mh__leg_watch(sp->legs[i]);
  mh__rl_arm(sp);
  mh__hedge_arm(sp);
  return 0;
}

/* Interfaces the system reports in a captive portal, limited or without connectivity
 * (mh_netstate.h) leave the object's paths; the program's own stays (its request goes where
 * the program's connection is, as without the engine). */
static void mh__drop_bad_links(struct mh_split *sp) {
  const char *names[MH_MAX_IFACES];
  enum pol_link link[MH_MAX_IFACES];
  mh_netstate_refresh(sp->env->paths->netstate, sp->cfg, mh_now_us());
  mh_portal_check(sp->env->paths, sp->net.ifaces, sp->net.nifaces); /* its answers count from the next object */
  for (int i = 0; i < sp->net.nifaces; i++)
    names[i] = sp->net.ifaces[i].name;
  mh_netstate_links(sp->env->paths->netstate, names, (unsigned)sp->net.nifaces, link);
  int k = 0;
  for (int i = 0; i < sp->net.nifaces; i++) {
    if (pol_link_bad(link[i]) && mh_path_iface_of(&sp->net.ifaces[i], 1, (struct sockaddr *)&sp->prog.local) < 0) {
      mh_dbg("split: %s left out: the system reports no full connectivity there", sp->net.ifaces[i].name);
      continue;
    }
    sp->net.ifaces[k++] = sp->net.ifaces[i];
  }
  sp->net.nifaces = k;
}

/* The program's connection's addresses (up: its upstream; peer: its server when up cannot tell
 * yet, or NULL) and the interfaces towards its server. 0, -ENETUNREACH: one path only, or
 * -ENOTSUP: not an address the split can serve. */
static int mh__start_paths(struct mh_split *sp, struct mh_upstream *up, const struct sockaddr_storage *peer) {
  const struct mh_config *cfg = sp->cfg;
  int rc;
  /* a replacement of the program's connection may still be connecting (mh__finish_done): its
   * server is the program's */
  if ((rc = mh_upstream_query(up, MH_UPQ_PEER, NULL, &sp->prog.dst)) == -ENOTCONN && peer) {
    sp->prog.dst = *peer;
    rc = 0;
  }
  if (rc < 0 || mh_upstream_query(up, MH_UPQ_LOCAL, NULL, &sp->prog.local) < 0 ||
      (sp->prog.dst.ss_family != AF_INET && sp->prog.dst.ss_family != AF_INET6)) {
    return -ENOTSUP;
  }
  int n = mh_path_ifaces(cfg, sp->prog.dst.ss_family, sp->net.ifaces, MH_MAX_IFACES);
  sp->net.nifaces = n > 0 ? n : 0;
  mh__drop_bad_links(sp);
  sp->net.primary_iface = mh_path_iface_of(sp->net.ifaces, sp->net.nifaces, (struct sockaddr *)&sp->prog.local);
  /* re-bound only as long as the kernel's own path is another of ours */
  int plain =
      sp->prog.rebound ? mh_path_iface_of(sp->net.ifaces, sp->net.nifaces, (struct sockaddr *)&sp->prog.plain_src) : -1;
  sp->prog.rebound = plain >= 0 && plain != sp->net.primary_iface;
  sp->prog.plain_iface = plain;
  /* several servers (mirrors, pins) are several paths, on one interface, or on none (a
   * loopback server, a connection on no configured interface) */
  int servers = sp->own.nmirrors || sp->own.npins;
  if ((sp->net.primary_iface < 0 || sp->net.nifaces < 2) && !servers && !sp->env->one_path) {
    /* one path to the one server: a probe could not help, and the request must then go out as
     * written (a path that appears during the answer may take part of it: mh_split_adopt) */
    mh_dbg("split: one path to the server: relayed unchanged");
    return -ENETUNREACH;
  }
  if (sp->net.primary_iface < 0) {
    /* on no configured interface: the connections leave as the program's did (mh__leg_open_to),
     * under a pseudo-interface for the stats, named as the API names an unbound connection */
    sp->net.nifaces = 1;
    snprintf(sp->net.ifaces[0].name, sizeof sp->net.ifaces[0].name, "default");
  }
  return 0;
}

/* The program's own Range, when it sent one, is the span the split fetches (mh__span). 0, or
 * -ENOTSUP for a closed span below min_split_size: too small to gain from more paths, so its
 * request goes out as written. */
static int mh__start_span(struct mh_split *sp) {
  struct mh_rr_span span;
  const struct mh_hdr *ifr;
  if (mh_rr_request_span(&sp->rq.rv, &span, &ifr) != 1)
    return 0;
  if (span.last != MH_RR_TO_END && span.last - span.first + 1 < sp->cfg->min_split_size) {
    mh_dbg("split: the program's range %" PRIu64 "-%" PRIu64 " is small: relayed", span.first, span.last);
    return -ENOTSUP;
  }
  sp->rq.span = (struct mh__span){.on = 1,
                                  .first = span.first,
                                  .last = span.last,
                                  .if_range = ifr ? ifr->value : NULL,
                                  .if_range_len = ifr ? ifr->value_len : 0};
  return 0;
}

/* The scheduler's configuration for this object. */
static void mh__sched_config(const struct mh_split *sp, struct sched_config *out) {
  const struct mh_config *cfg = sp->cfg;
  struct sched_config sc;
  sched_config_default(&sc);
  /* The other paths' first chunks follow a probe smaller than init_chunk (one round trip of
   * the program's path) but not a larger one (a long fat path's probe of up to 8 init_chunks):
   * larger first chunks made a path without a rate sample ask too much before its first
   * sample, and the object ended in a long tail of re-splits (bench/split/README.md). */
  sc.probe_chunk = mh__probe_size(sp);
  sc.initial_chunk = sc.probe_chunk < sp->cfg->init_chunk ? sc.probe_chunk : sp->cfg->init_chunk;
  sc.max_conns = cfg->max_conns + 8; /* reconnects take new ids */
  /* Short samples read bursts, and burst variance pulls a harmonic mean far below the path's
   * rate; pipelining from that rate came too late, the link idled between chunks, the samples
   * dropped further and tail re-splits handed a slow path too much. 5 ms samples over a
   * 16-sample memory and pipelining at 4 R.rtl keep a path busy (bench/split/README.md). */
  sc.sample_min_us = 5000;
  sc.hm_window = 16;
  sc.pipeline_rtts = 4;
  /* Tail re-splits by pieces of 2 RTTs, pipelined (scheduler/sched.h): a long path's rate is
   * still climbing out of slow start when the tail is cut, so a split point from its estimate
   * hands the short path too much; eating the tail piece by piece lets both meet where they
   * really are (bench/split/README.md). */
  sc.resplit_piece_rtts = 2;
  /* one more than MH__EARLY_DEPTH: sched_early_depth may queue a fourth case-4 chunk on a path
   * still in slow start at the plan's finish and keeps a slot for its first rate-sized one */
  sc.max_queue = MH__EARLY_DEPTH + 2;
  *out = sc;
}

/* The program's connection becomes legs[0], the probe goes out on it or on the connection
 * mh__probe_move picks, and the other paths connect. 0, or -ENOTSUP when the probe's request
 * cannot be built (nothing went out; sp is freed by the timer's close). */
static int mh__start_probe(struct mh_split *sp, struct mh_upstream *up, uint64_t probe_chunk) {
  struct mh__leg *g0 = mh__leg_new(sp, sp->net.primary_iface < 0 ? 0 : sp->net.primary_iface);
  g0->primary = 1;
  g0->dst = sp->prog.dst;
  g0->srv = mh__srv_of(sp, g0->iface, 0, (const struct sockaddr *)&sp->prog.dst);
  g0->up = up;
  /* The split's requests on the program's connection go out as they are made, as on the
   * engine's own connections. With the program's Nagle (wget sets no TCP_NODELAY, curl does)
   * a request written while the previous one was unacknowledged waited for its ACK: the
   * range asked right after the end chunk (mh__next_range) left a wifi0 round trip later
   * under wget than under curl. The session gives the program's setting back at the end. */
  (void)mh_upstream_control(up, MH_UPC_NODELAY, &(int){1});
  /* a program that ends its connection after this answer (HTTP/1.0, Connection: close) gets
   * the probe's answer on it and nothing more: its path's share goes on a connection of the
   * engine's own (mh__program_path_leg) */
  g0->no_more = !mh_rr_request_keeps_alive(&sp->rq.rv);
  mh__leg_set_state(g0, LEG_READY);
  g0->sid = sched_conn_add(sp->sched, sp->t_start_us);
  mh__seed_rtt(sp, g0);
  mh__probe_on(sp, g0, 0);
  struct sched_range r;
  char chk[MH__REQ_CAP + 512];
  if (mh_rr_range_request(&sp->rq.rv, sp->rq.span.first, sp->rq.span.first + probe_chunk - 1, sp->rq.span.if_range,
                          sp->rq.span.if_range_len, 0, chk, sizeof chk) < 0) {
    sp->legs[0] = NULL;
    mh__head_free(g0);
    mh_buf_free(&g0->out);
    free(g0);
    mh__close_timers(sp);
    return -ENOTSUP;
  }
  /* the probe's size is the program's path's whichever connection carries it: the policy
   * compared the paths on that size */
  struct mh__leg *pg = mh__probe_move(sp, g0, probe_chunk);
  if (sched_next_range(sp->sched, pg->sid, sp->t_start_us, &r) < 0 || mh__leg_request(pg, &r, 1, 0) < 0) {
    /* out of memory (its size was checked above): nothing went out, so the program's request
     * goes out unchanged on its own connection */
    r.off = r.len = 0;
    if (pg != g0)
      mh__leg_fail(pg, "request");
    else {
      sp->res.resend = 1;
      mh__finish(sp, MH_SPLIT_END_RELAY);
    }
  }
  mh__probe_asked(sp, r.len);
  mh_dbg("split %u: probe %" PRIu64 "+%" PRIu64 " on %s for %s (%d interfaces)", sp->id, r.off, r.len,
         sp->net.ifaces[pg->iface].name, sp->rq.host, sp->net.nifaces);
  if (sp->state != SP_FINISHED) { /* not when the probe could not go out (the resend above) */
    mh__open_extras(sp);
    mh__program_path_leg(sp);
  }
  for (int i = 0; i < sp->nlegs; i++)
    if (sp->legs[i])
      mh__leg_watch(sp->legs[i]);
  return 0;
}

/* What every split starts from: the owner's request parsed and judged, the paths to its
 * server, its scheduler (for total bytes: SCHED_LEN_UNKNOWN until a probe tells), its
 * reassembly from byte pos, its timers. Nothing is sent. 0; -ENETUNREACH: one path to the one
 * server (a split could not help now, mh_split_adopt may later); -ENOTSUP: the request goes
 * out as written; -ENOMEM. */
/* The owner's request, copied into sp and judged: 0 when it may be split, -ENOTSUP when it goes
 * out as written (a head not understood, a request that is not a plain GET of a whole object,
 * or an object whose ranges disagreed with its whole answer here before). */
static int mh__split_judge(struct mh_split *sp, const char *req, size_t req_len) {
  memcpy(sp->rq.req, req, req_len);
  sp->rq.req_len = req_len;
  if (mh__parse_req(sp) < 0) {
    mh_dbg("split: request head not understood: relayed");
    return -ENOTSUP;
  }
  enum mh_rr_verdict v = mh_rr_request_verdict(&sp->rq.rv);
  if (v != MH_RR_SPLITTABLE) {
    mh_dbg("split: request relayed (%s)", mh_rr_verdict_str(v));
    return -ENOTSUP;
  }
  if (mh_trust_ranges_bad(sp->env->paths, mh__object_key(sp))) {
    mh_info("split: %s%.*s: its range answers disagreed with a whole answer here before: asked whole", sp->rq.host,
            (int)sp->rq.rv.target_len, sp->rq.rv.target);
    return -ENOTSUP;
  }
  return 0;
}

/* The owner's parts sp keeps (its rebinding copied; its peer is read by mh__start_paths, during
 * the start: neither pointer is kept). */
static void mh__split_own(struct mh_split *sp, const struct mh_split_owner *own) {
  sp->own = *own;
  if (own->plain_src && !mh_trust_exempt(sp->cfg)) { /* single:IF is the user's own choice */
    sp->prog.plain_src = *own->plain_src;
    sp->prog.rebound = 1;
  }
  sp->own.plain_src = NULL;
  sp->own.peer = NULL;
}

/* What a judged split runs with: its id, buffers, reassembly from byte pos, scheduler (for
 * total bytes), and timers, the tick started. 0 or -ENOMEM (nothing of these left made). */
static int mh__split_parts(struct mh_split *sp, uv_loop_t *loop, struct mh_sink *sink, uint64_t total, uint64_t pos) {
  sp->id = ++sp->env->next_id;
  sp->net.gen = sp->env->paths->net_gen; /* its interfaces were read just now */
  sp->loop = loop;
  sp->sink = sink;
  sp->t_start_us = mh_now_us();
  mh_reasm_init(&sp->ra, pos, &sp->env->budget);
  struct sched_config sc;
  mh__sched_config(sp, &sc);
  /* the hedge's timer last: nothing fails after it */
  if (mh__probe_new(sp) < 0 || mh__deliver_new(sp) < 0 || sched_new(&sc, total, &sp->sched) < 0 ||
      mh__hedge_new(sp) < 0)
    return -ENOMEM; /* the caller frees what was made (mh__parts_free) */
  uv_timer_init(loop, &sp->tick);
  sp->tick.data = sp;
  uv_timer_start(&sp->tick, mh__tick, MH__TICK_MS, MH__TICK_MS);
  uv_timer_init(loop, &sp->rl.timer);
  sp->rl.timer.data = sp;
  return 0;
}

int mh__split_new(const struct mh_split_owner *own, uv_loop_t *loop, struct mh_upstream *up, const char *req,
                  size_t req_len, struct mh_sink *sink, uint64_t total, uint64_t pos, struct mh_split **out) {
  if (!own || !own->env)
    return -EINVAL;
  const struct mh_config *cfg = own->env->paths->cfg;
  struct sockaddr_storage local; /* a transport that cannot tell its addresses is relayed */
  if (!cfg->split || req_len > MH__REQ_CAP || mh_upstream_query(up, MH_UPQ_LOCAL, NULL, &local) < 0)
    return -ENOTSUP;
  struct mh_split *sp = calloc(1, sizeof *sp);
  if (!sp)
    return -ENOMEM;
  sp->env = own->env;
  sp->cfg = cfg;
  mh__split_own(sp, own);
  int rc = mh__split_judge(sp, req, req_len);
  if (rc == 0)
    rc = mh__start_span(sp);
  if (rc == 0)
    rc = mh__start_paths(sp, up, own->peer);
  if (rc == 0 && own->have && (sink->ops->ordered || sp->rq.span.on))
    rc = -ENOTSUP;
  if (rc == 0)
    rc = mh__servers_new(sp, own);
  if (rc == 0 && (mh__origin_new(sp) < 0 || mh__rescues_new(sp) < 0 || mh__have_copy(sp, own->have) < 0 ||
                  mh__planning_new(sp) < 0))
    rc = -ENOMEM;
  if (rc == 0)
    rc = mh__split_parts(sp, loop, sink, total, pos);
  if (rc < 0) {
    mh__parts_free(sp);
    free(sp);
    return rc;
  }
  sp->on.leg = mh__leg_events;
  sp->on.finish = mh__hedge_still;
  mh_sink_attach(sink, mh__sink_writable, sp); /* before the first request: it may end the split */
  *out = sp;
  return 0;
}

int mh_split_start(const struct mh_split_owner *own, uv_loop_t *loop, struct mh_upstream *up, const char *req,
                   size_t req_len, struct mh_sink *sink, struct mh_split **out) {
  struct mh_split *sp;
  int rc = mh__split_new(own, loop, up, req, req_len, sink, SCHED_LEN_UNKNOWN, 0, &sp);
  if (rc < 0)
    return rc;
  struct sched_config sc;
  mh__sched_config(sp, &sc);
  if (mh__start_probe(sp, up, sc.probe_chunk) < 0) {
    mh_sink_attach(sink, NULL, NULL);
    return -ENOTSUP;
  }
  *out = sp;
  return 0;
}
