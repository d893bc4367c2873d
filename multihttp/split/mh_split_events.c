/* What the object does with its legs' reports (mh__leg_report): a failed connection, an answer it cannot use, a trickle, a server that ends its connections, the probe's head; every leg's failure is handled here. */
#include "split_core.h"
#include "split_leg.h"
#include "split_deliver.h"
#include "split_legs.h"
#include "split_assign.h"
#include "split_start.h"
#include "split_events.h"
#include "mh_clock.h"
#include "mh_log.h"

#include <stdint.h>
#include <string.h>

static void mh__on_fail(struct mh__leg *g, const char *why);

/* g's answer cannot be used exactly (a wrong Content-Range or length, a status other than
 * 206, an unparsable or oversized head, an unsolicited answer). A replica leaves the object
 * (its address is never tried again: mh__tried_add). The program's server: before the rewritten
 * head went out the program's request starts over; after it, the rest comes the plain way.
 * One rule for every such answer, so none can end as a reset the program would not have seen. */
static void mh__on_bad(struct mh__leg *g, const char *why) {
  struct mh_split *sp = g->sp;
  if (g->st == LEG_DEAD || sp->state == SP_FINISHED)
    return;
  if (g->mirror) {
    mh__mirror_drop(sp, g->mirror, why); /* every leg of it: another server's word is no longer taken */
    return;
  }
  if (sp->state == SP_PLAIN && mh__to_origin(sp, g))
    mh__plain_whole(sp, why);
  if (sp->state == SP_PLAIN || !mh__to_origin(sp, g) || (sp->state != SP_VERIFY && sp->state != SP_MANAGED)) {
    mh__note(sp, mh__to_origin(sp, g) ? "bad-answer" : "bad-replica");
    if (!mh__to_origin(sp, g))
      mh__srv_drop(sp, g, MH_SPLIT_PATH_BAD, why);
    mh__on_fail(g, why);
    return;
  }
  mh_info("split %u: leg %d (%s): %s", sp->id, g->idx, sp->net.ifaces[g->iface].name, why);
  if (sp->state == SP_VERIFY)
    mh__restart(sp, "inconsistent-restart", g->primary);
  else
    mh__go_plain(sp, why);
}

/* Says how leg g ended: its server's keep-alive end (renews: mh__leg_renews found one), or a
 * failure, which may be its network lost (mh__net_lost). */
static void mh__leg_fail_note(struct mh__leg *g, int renews, const char *why) {
  struct mh_split *sp = g->sp;
  if (renews || g->end.renewed || (g->end.eof && !g->qn && g->no_more)) { /* its keep-alive end */
    mh_dbg("split %u: leg %d (%s) ended by its server (%s)", sp->id, g->idx, sp->net.ifaces[g->iface].name, why);
  } else {
    mh_info("split %u: leg %d (%s) failed: %s", sp->id, g->idx, sp->net.ifaces[g->iface].name, why);
    mh__net_lost(sp, g, mh_now_us());
  }
}

/* The program's connection (leg g) is done with: no longer watched, never used again. */
static void mh__primary_unwatch(struct mh_split *sp, struct mh__leg *g) {
  sp->prog.up_dead = 1;
  g->up->ops->watch(g->up, 0);
  g->watching = 0;
}

/* The program's connection (leg g) failed before the object is managed: 1 when that decides
 * what comes next. */
static int mh__primary_lost_early(struct mh_split *sp, struct mh__leg *g) {
  if (mh__probe_moved(sp) && sp->state == SP_PROBE) {
    /* its idle connection ended while its probe is out elsewhere: the split goes on without
     * it; a resend, if any, goes out on one its owner takes (result.replace), and the program sees its
     * connection close after the response, as keep-alive allows */
    mh__primary_unwatch(sp, g);
    return 1;
  }
  if (sp->state != SP_PROBE && sp->state != SP_DISCARD)
    return 0;
  /* before anything reached the program: in PROBE the program sees what the server did; in
   * DISCARD its request goes out again on a fresh connection */
  mh__primary_unwatch(sp, g);
  if (sp->state == SP_DISCARD)
    sp->res.resend = 1;
  else
    sp->prog.up_eof = sp->prog.up_reset = 1;
  mh__finish(sp, MH_SPLIT_END_RELAY);
  return 1;
}

static void mh__on_fail(struct mh__leg *g, const char *why) {
  struct mh_split *sp = g->sp;
  if (g->st == LEG_DEAD)
    return;
  if (g->hedge) {
    mh__hedge_drop(sp, why);
    return;
  }
  struct mh__renewal rn;
  mh__leg_fail_note(g, mh__leg_renews(g, &rn), why);
  if (sp->state == SP_PLAIN) {
    mh__plain_lost(g);
    return;
  }
  if (g == mh__probe_leg(sp) && mh__probe_moved(sp) && sp->state == SP_PROBE) {
    mh__probe_fallback(sp, why); /* before its 206: the program's own connection serves */
    return;
  }
  if (g->sid >= 0)
    sched_conn_failed(sp->sched, g->sid);
  mh__leg_set_state(g, LEG_DEAD);
  g->qn = 0;
  if (g->primary && mh__primary_lost_early(sp, g))
    return;
  int reopen = mh__close_reopens(sp, g), iface = g->iface, mirror = g->mirror;
  struct sockaddr_storage dst = g->dst;
  if (g->primary)
    mh__primary_unwatch(sp, g);
  else
    mh__leg_drop(g, 1);
  /* a server that ends keep-alive connections after N answers: the same path again; one that
   * closes after every answer: a fresh connection for the next range */
  if (!mh__leg_renew(sp, &rn) && reopen)
    mh__leg_open_to(sp, iface, mirror, (const struct sockaddr *)&dst);
  if (sp->state == SP_VERIFY || sp->state == SP_MANAGED)
    mh__ensure_paths(sp);
}

/* g's answer started but its body trickles. In SP_PLAIN the origin's range answers are slow:
 * the program's own request from now on. A replica leaves the object; the origin's interface
 * takes no new connection to it, and when every interface has trickled the origin's ranges
 * are the trouble: mh__leg_bad. */
static void mh__on_slow(struct mh__leg *g) {
  struct mh_split *sp = g->sp;
  if (sp->state == SP_PLAIN) {
    mh__ranges_bad(sp, "trickled");
    mh__plain_whole(sp, "its range answer trickles");
    mh__on_fail(g, "trickles");
    return;
  }
  if (!mh__to_origin(sp, g)) {
    mh__on_bad(g, "answer trickles");
    return;
  }
  uint32_t slow = mh__slow_mark(sp, g->iface >= 0 && g->iface < MH_MAX_IFACES ? 1u << g->iface : 0);
  uint32_t all = sp->net.nifaces >= 32 ? UINT32_MAX : (1u << sp->net.nifaces) - 1;
  uint32_t crawl = mh__crawling_paths(sp, g, 0);
  if (((slow | crawl) & all) == all)
    slow = mh__slow_mark(sp, crawl); /* the other paths' crawls are this trickle, seen earlier in their windows */
  if ((slow & all) == all) {
    /* connections on two paths trickled: the origin's ranges are the trouble, an open-ended
     * one too, so the program's own request (one connection's trickle may be that answer's) */
    mh__ranges_bad(sp, "trickled on every path");
    if (sp->state == SP_MANAGED && sp->net.nifaces >= 2)
      mh__plain_whole(sp, "answers trickle on every path");
    mh__on_bad(g, "answers trickle on every path");
  } else {
    mh__srv_drop(sp, g, MH_SPLIT_PATH_BAD, "its answers trickle");
    mh__on_fail(g, "trickles: no new connection on this path");
  }
}

/* An answer's head said its server ends the connection after it: on a connection's first
 * answer (to a keep-alive request of ours, or of the program's) the origin closes after every
 * answer; after several, it ends keep-alive connections after N answers (keepalive_requests),
 * renewed on the same path (mh__leg_renew). */
static void mh__on_said_close(struct mh_split *sp, struct mh__leg *g) {
  if (!g->answers && (!(g->primary && g->q[0].probe) || mh_rr_request_keeps_alive(&sp->rq.rv)))
    mh__closing(sp, g);
  else if (g->answers)
    mh__ka_learn(sp, g);
}

/* g's last answer ended (its server closes the connection now): its keep-alive limit is
 * renewed at once, and the paths are kept up (the program asked for close, say). */
static void mh__on_last_answer(struct mh_split *sp, struct mh__leg *g) {
  struct mh__renewal rn;
  if (mh__leg_renews(g, &rn))
    g->end.renewed = mh__leg_renew(sp, &rn);
  if (sp->state == SP_VERIFY || sp->state == SP_MANAGED)
    mh__ensure_paths(sp);
}

/* g's answer stopped for its stall limit: its connection fails, and its path is re-probed
 * whatever its last bytes said (mh__net_silent): silence for that long is a pacer's pause or a
 * path gone, and either way a new connection there may carry the rest. */
static void mh__on_stall(struct mh__leg *g) {
  struct mh_split *sp = g->sp;
  int i = g->iface, hedge = g->hedge;
  mh__on_fail(g, "stalled");
  if (!hedge)
    mh__net_silent(sp, i, mh_now_us());
}

void mh__leg_events(struct mh__leg *g, enum mh__leg_ev ev, const char *why) {
  struct mh_split *sp = g->sp;
  switch (ev) {
  case MH__LEG_FAILED: mh__on_fail(g, why); break;
  case MH__LEG_BAD: mh__on_bad(g, why); break;
  case MH__LEG_SLOW: mh__on_slow(g); break;
  case MH__LEG_STALLED: mh__on_stall(g); break;
  case MH__LEG_SAID_CLOSE: mh__on_said_close(sp, g); break;
  case MH__LEG_PROBE_HEAD: mh__probe_head(sp, g); break;
  case MH__LEG_LAST_ANSWER: mh__on_last_answer(sp, g); break;
  case MH__LEG_CARRIED: mh__carried_cut(g); break;
  case MH__LEG_INTERIM: mh__pass_interim(sp); break;
  case MH__LEG_HEDGE_READABLE: mh__hedge_read(g); break;
  }
}
