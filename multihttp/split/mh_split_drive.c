/* Which leg asks which range: the view, the plan, admission (policy/admit.h), the drive loop and the rescue of a stalled leg. */
#include "split_core.h"
#include "split_leg.h"
#include "split_legs.h"
#include "split_assign.h"
#include "mh_clock.h"
#include "mh_config.h"
#include "mh_log.h"
#include "mh_metrics.h"
#include "mh_upstream.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The next range for g. While the head is held (SP_VERIFY) the object's last bytes are asked
 * before any other, at most a first chunk of them: the probe's total is only a claim until an
 * answer that reaches the end agrees with it (an origin whose ranges all claim the same wrong
 * total would otherwise get a head with that length, and then a plain fetch of another one). */
int mh__next_range(struct mh_split *sp, struct mh__leg *g, uint64_t now, uint64_t max, struct sched_range *r) {
  if (sp->state == SP_VERIFY && sp->prog.rebound && g->iface != sp->prog.plain_iface)
    return -EAGAIN; /* a re-bound probe waits for the kernel's path's word (mh__verify_plain) */
  if (sp->state == SP_VERIFY) {
    int asked = 0;
    for (int i = 0; i < sp->nlegs && !asked; i++)
      asked = sp->legs[i] && sp->legs[i]->st != LEG_DEAD && mh__asks_end(sp, sp->legs[i]);
    if (!asked)
      return sched_next_range_last(sp->sched, g->sid, now, max && max < sp->cfg->init_chunk ? max : sp->cfg->init_chunk,
                                   r);
  }
  return sched_next_range_upto(sp->sched, g->sid, now, max, r);
}

static uint64_t mh__lowest_missing(const struct mh_split *sp) {
  const struct sched_ledger *l = sched_ledger(sp->sched);
  size_t n = sched_ledger_count(l);
  struct sched_extent e;
  for (size_t i = 0; i < n; i++)
    if (sched_ledger_get(l, i, &e) == 0 && e.state == SCHED_MISSING)
      return e.off;
  return UINT64_MAX;
}

/* More connections on a planned path that would spend the object in slow start
 * (pol_path_conns: each connection opened together adds an initial window to every round).
 * Opened as soon as the plan knows the path's share: the probe's round trip later than the
 * first leg (mh__open_extras), which pre-connect started at the program's connect(). Not for
 * a small object (pol_admit_small): its shares are asked per path (pol_admit_share_left) and two
 * legs there are a handshake for a round or two of bytes. */
static void mh__plan_conns(struct mh_split *sp, const struct pol_plan *pl) {
  struct mh__admit a;
  if (sp->cfg->path_conns < 2 || pol_admit_small(mh__admit(sp, &a)) || !(pl->paths & (pl->paths - 1)))
    return;
  for (int i = 0; i < sp->net.nifaces; i++) {
    const struct pol_path *pp = mh__view_path(sp, i);
    if (!pp)
      break;
    if (!(pl->paths >> i & 1) || !(pl->share[i] >= 1))
      continue;
    unsigned want = pol_path_conns(&sp->env->paths->pol, pp, (uint64_t)pl->share[i], sp->cfg->path_conns);
    unsigned have = mh__alive_count(sp, i);
    if (want > have)
      mh_dbg("split %u: %s gets %u connections for its %.0f B (has %u)", sp->id, sp->net.ifaces[i].name, want,
             pl->share[i], have);
    for (; have < want && (unsigned)mh__legs_open(sp) < sp->cfg->max_conns; have++)
      if (!mh__leg_open(sp, i))
        break;
  }
}

/* The probe told the size: the policy decides where the rest goes (mh_policy_plan). */
void mh__plan(struct mh_split *sp, uint64_t remaining) {
  if (sp->net.primary_iface < 0)
    return; /* the program's connection is on no configured interface: nothing to choose */
  struct pol *p = &sp->env->paths->pol;
  mh__build_view(sp);
  /* the plan is made when the probe's head arrives: the rest of its body still holds its
   * connection (asym: 13 456 B, 55 ms of wifi0), and a range asked there now comes after it */
  struct mh__leg *pg = mh__probe_leg(sp);
  int busy_i = pg && pg->st == LEG_READY && mh__probe_due(sp, pg) ? pg->iface : -1;
  uint64_t busy = busy_i >= 0 && pg->q[0].len > pg->q[0].got ? pg->q[0].len - pg->q[0].got : 0;
  int rc = mh__plan_make(sp, remaining, busy_i, busy);
  if (rc < 0)
    mh_info("split %u: policy %s: no plan (%s): every path as without policy", sp->id, p->ops->name, strerror(-rc));
  if (mh_log_level_v >= MH_LOG_DEBUG) {
    char line[1024];
    size_t n = mh__plan_json(sp, line, sizeof line, 0);
    line[n] = 0;
    mh_dbg("split %u: %" PRIu64 " bytes after the probe: %s%s", sp->id, remaining,
           mh__plan_of(sp) ? "plan" : "no plan (metrics cannot tell)", line);
  }
  const struct pol_plan *plan = mh__plan_of(sp);
  if (!plan)
    return;
  int to = plan->primary.iface;
  /* the object goes elsewhere: the program's connection stops after the probe (and stays
   * reusable); the chosen interface needs a connection */
  if (to != sp->net.primary_iface && !mh__alive_count(sp, to)) {
    mh_dbg("split %u: the rest goes on %s: opening a connection there", sp->id, sp->net.ifaces[to].name);
    mh__leg_open(sp, to);
  }
  mh__plan_conns(sp, plan);
}

/* How many requests g keeps queued before its first rate sample (sched_early_depth): more
 * than MH__EARLY_DEPTH only on a path that would still be in slow start when a large object's
 * plan says it ends (pol_admit_early_finish). */
static uint32_t mh__early_depth(const struct mh_split *sp, const struct pol_admit_obj *o, const struct mh__leg *g,
                                uint64_t now) {
  uint64_t finish;
  if (!pol_admit_early_finish(o, &finish))
    return MH__EARLY_DEPTH;
  return sched_early_depth(sp->sched, g->sid, now, finish, sp->cfg->pol.init_window, MH__EARLY_DEPTH);
}

/* 1 while a request g asked within its early budget is outstanding. */
static int mh__early_pending(const struct mh__leg *g) {
  for (unsigned k = 0; g->early.last && k < g->qn; k++)
    if (g->q[k].off + 1 == g->early.last)
      return 1;
  return 0;
}

/* Less than this left of a leg's early budget is not worth a request of its own. */
#define MH__EARLY_CRUMB 4096

/* Whether g, without a rate sample, asks one more range now, and at most how much (*max, 0 =
 * any). A new connection's first samples read a fraction of its path's rate (slow start: a
 * burst, then a round trip of nothing), so requests sized by them come late and small while
 * the measured paths claim every missing byte: its first requests are queued at once. How
 * much: what its slow start delivers by the joint finish of every leg (pol_admit_early_budget,
 * decided at its first request); where that model does not apply, MH__EARLY_DEPTH doubling
 * chunks (sched_early_depth). A fixed depth is the same for every object and every leg: the
 * legs of one path each asked a whole path's rounds, and a path whose slow start would still
 * climb at the object's end asked less than it delivers by then (bench/split/README.md). */
static int mh__early_wants(struct mh_split *sp, const struct pol_admit_obj *o, struct mh__leg *g, uint64_t now,
                           uint64_t *max, int *last) {
  *max = 0;
  *last = 0;
  if (!g->early.set) {
    g->early.set = 1;
    g->early.budget = pol_admit_early_budget(o, (unsigned)g->idx);
    if (g->early.budget)
      mh_dbg("split %u: leg %d (%s) asks %" PRIu64 " B before its first rate sample", sp->id, g->idx,
             sp->net.ifaces[g->iface].name, g->early.budget);
  }
  if (!g->early.budget)
    return g->qn < mh__early_depth(sp, o, g, now);
  /* one queue slot stays free for the request its first rate sample sizes (sched_early_depth) */
  if (g->qn + 1 >= MH__EARLY_DEPTH + 2 || g->early.asked + MH__EARLY_CRUMB > g->early.budget)
    return 0;
  *max = g->early.budget - g->early.asked;
  /* the last slot takes the rest of the budget whatever the doubling says: four doubling
   * chunks from a first round's size may be far below the budget, and the leg would wait a
   * round trip for its next request after them */
  *last = g->qn + 2 >= MH__EARLY_DEPTH + 2;
  return 1;
}

/* Rescues per object: a path that stalls again is better left to the stall timeout (mh__tick). */
#define MH__MAX_RESCUES 2

/* The object's rescues (mh__rescue): the one waiting for its taker to connect, and how many
 * there were. Made with the split (mh__rescues_new), seen by this file only. */
struct mh__rescues {
  int victim, taker; /* the pending one's legs: index + 1; 0: none pending */
  unsigned n;
};

int mh__rescues_new(struct mh_split *sp) { return (sp->rc = calloc(1, sizeof *sp->rc)) ? 0 : -ENOMEM; }

void mh__rescues_free(struct mh_split *sp) {
  free(sp->rc);
  sp->rc = NULL;
}

struct mh__leg *mh__rescue_waits(const struct mh_split *sp) {
  return sp->rc->taker ? sp->legs[sp->rc->taker - 1] : NULL;
}

/* The taker of a pending rescue, once connected and idle, asks the victim's unreceived bytes
 * again (sched_rescue). Dropped when either leg is gone or the bytes moved on meanwhile. */
static void mh__rescue_assign(struct mh_split *sp) {
  struct mh__rescues *p = sp->rc;
  if (!p->taker)
    return;
  struct mh__leg *t = sp->legs[p->taker - 1], *v = sp->legs[p->victim - 1];
  if (t && t->st == LEG_CONNECTING && v && v->st == LEG_READY && v->qn)
    return; /* its handshake is still in flight */
  p->taker = p->victim = 0;
  if (!t || !v || t->st != LEG_READY || v->st != LEG_READY || t->sid < 0 || v->sid < 0)
    return;
  struct sched_range r;
  int rc, n = 0;
  while (t->st == LEG_READY && t->qn < SCHED_MAX_QUEUE &&
         (rc = sched_rescue(sp->sched, t->sid, v->sid, mh_now_us(), &r)) == 0) {
    mh_dbg("split %u: leg %d (%s) asks %" PRIu64 "+%" PRIu64 " again for stalled leg %d (%s)", sp->id, t->idx,
           sp->net.ifaces[t->iface].name, r.off, r.len, v->idx, sp->net.ifaces[v->iface].name);
    n++;
    if (mh__leg_request(t, &r, 0, 1) < 0)
      mh__leg_fail(t, "request");
  }
  if (!n)
    mh_dbg("split %u: rescue of leg %d on leg %d: nothing moved", sp->id, v->idx, t->idx);
}

/* What a connection on interface j would be for a rescue of victim: an idle leg of this
 * object, else the pool's, else a new one (pol_path.reusable and idle_us as mh__build_view
 * tells them, for that very connection). Returns the idle leg, or NULL. */
static struct mh__leg *mh__rescue_taker(struct mh_split *sp, int j, const struct mh__leg *victim, struct pol_path *tp) {
  uint64_t now = mh_now_us();
  *tp = *mh__view_path(sp, j);
  tp->busy = 0;
  for (int k = 0; k < sp->nlegs; k++) {
    struct mh__leg *g = sp->legs[k];
    if (g && g != victim && g->iface == j && g->st == LEG_READY && !g->qn && !g->no_more && g->sid >= 0) {
      tp->reusable = true;
      tp->idle_us = mh__leg_idle_us(g, now);
      tp->window = mh_upstream_window(g->up);
      return g;
    }
  }
  uint64_t idle = 0, w = 0;
  tp->reusable =
      sp->rq.host[0] && mh_pool_idle(sp->env->paths->pool, sp->net.ifaces[j].name, (struct sockaddr *)&sp->prog.dst,
                                     mh__xport_of(sp, 0), sp->rq.host, &idle, &w);
  tp->idle_us = tp->reusable ? idle : 0;
  tp->window = tp->reusable ? w : 0;
  return NULL;
}

/* The interface that brings v's owed bytes soonest if pol_rescue_worth says asking them again
 * there pays (-1: none), with its predicted time (*tt), v's own (*tv), and the idle leg that
 * would take them there (*idle; NULL: a new connection). */
static int mh__rescue_path(struct mh_split *sp, struct mh__leg *v, uint64_t stalled, uint64_t owed, double *tv,
                           double *tt, struct mh__leg **idle) {
  const struct pol_path *vp = mh__view_path(sp, v->iface);
  int best = -1;
  for (int j = 0; j < sp->net.nifaces; j++) {
    const struct pol_path *jp = mh__view_path(sp, j);
    if (!jp)
      break;
    if (!jp->usable)
      continue;
    struct pol_path tp;
    struct mh__leg *t = mh__rescue_taker(sp, j, v, &tp);
    double t_j;
    if (pol_rescue_worth(&sp->env->paths->pol, vp, stalled, &tp, owed, tv, &t_j) && (best < 0 || t_j < *tt)) {
      best = j;
      *tt = t_j;
      *idle = t;
    }
  }
  return best;
}

/* A connection that has delivered nothing for longer than its retransmission timeout holds
 * bytes the object needs (one lost segment holds a whole small object behind it for the
 * sender's timeout: policy/README.md, pol_rescue_worth). When pol_rescue_worth predicts
 * another connection sooner, that one asks those bytes again; the victim is still read, and
 * whichever copy comes first counts. Once per leg, MH__MAX_RESCUES per object. */
void mh__rescue(struct mh_split *sp) {
  if (sp->state != SP_MANAGED || sp->net.primary_iface < 0 || sp->rc->taker || sp->rc->n >= MH__MAX_RESCUES)
    return;
  uint64_t now = mh_now_us();
  int viewed = mh__planned(sp); /* mh__tick rebuilt it; an object the probe carries whole has none */
  for (int i = 0; i < sp->nlegs; i++) {
    struct mh__leg *v = sp->legs[i];
    /* a crawl is not a lost segment's silence (the kernel hands nothing on behind a hole).
     * The origin's is the trickle rule's, which moves its ranges once the crawl is sure: a
     * rescue would ask the same origin, whose new range's first bytes may come at full speed
     * and hide the crawl. A replica's crawl is the replica's: the origin takes its bytes. */
    if (!v || v->st != LEG_READY || !v->qn || v->paused || v->rescued || v->sid < 0 ||
        mh__since(now, v->at.progress_us) < POL_RTO_MIN_US || (mh__leg_crawls(v, now) && mh__to_origin(sp, v)))
      continue;
    if (!viewed) {
      mh__build_view(sp);
      viewed = 1;
    }
    const struct pol_path *vp = mh__view_path(sp, v->iface);
    if (!vp)
      continue;
    struct sched_conn_stats cs;
    if (sched_conn_stats(sp->sched, v->sid, &cs) < 0 || !cs.owed)
      continue;
    uint64_t stalled = mh__since(now, v->at.progress_us);
    double best_t = 0, tv = 0;
    struct mh__leg *idle = NULL;
    int best = mh__rescue_path(sp, v, stalled, cs.owed, &tv, &best_t, &idle);
    if (best < 0)
      continue;
    v->rescued = 1;
    sp->rc->n++;
    mh__note(sp, "rescue");
    mh_info("split %u: leg %d (%s) delivered nothing for %" PRIu64 " ms with %" PRIu64
            " B to bring (predicted %.0f ms): asked again on %s (%.0f ms)",
            sp->id, v->idx, sp->net.ifaces[v->iface].name, stalled / 1000, cs.owed, tv / 1000,
            sp->net.ifaces[best].name, best_t / 1000);
    struct mh__leg *t = idle ? idle : mh__leg_open(sp, best);
    if (!t)
      continue;
    if (t->st == LEG_CONNECTING && !t->at.connect_us)
      mh__leg_connected(t); /* a connected pooled one: ready at once */
    sp->rc->victim = v->idx + 1;
    sp->rc->taker = t->idx + 1;
    mh__rescue_assign(sp);
    return;
  }
}

/* 1 when g, a leg that just died, is to be followed by a fresh connection on its path: the
 * origin closes after every answer, g brought one whole (so the reopening is bounded by
 * progress), bytes are still to come and nothing else serves that path. */
int mh__close_reopens(const struct mh_split *sp, const struct mh__leg *g) {
  return mh__closes(sp) && (sp->state == SP_VERIFY || sp->state == SP_MANAGED) && g->answers &&
         !mh__slow_on(sp, g->iface) && !sched_done(sp->sched) && !mh__alive_count(sp, g->iface);
}

/* The bytes the live legs of path i (every path: -1) still owe the object. */
static uint64_t mh__owed(const struct mh_split *sp, int i) {
  uint64_t owed = 0;
  struct sched_conn_stats cs;
  for (int k = 0; k < sp->nlegs; k++) {
    const struct mh__leg *o = sp->legs[k];
    if (o && o->st != LEG_DEAD && o->sid >= 0 && (i < 0 || o->iface == i) &&
        sched_conn_stats(sp->sched, o->sid, &cs) == 0)
      owed += cs.owed;
  }
  return owed;
}

/* The range a leg asks when the origin closes after every answer: what brings its path's
 * bytes in flight to its part of everything still to come (the plan's paths, or every path
 * that did not trickle; by the paths' measured rates, equal parts when a rate is unknown),
 * at least MH__CLOSE_RANGE_MIN. */
uint64_t mh__close_range(const struct mh_split *sp, const struct mh__leg *g) {
  uint64_t missing = sched_ledger_bytes(sched_ledger(sp->sched), SCHED_MISSING, SCHED_NOBODY);
  double all = 0, mine = 0;
  unsigned paths = 0, unknown = 0;
  /* a path whose connection just closed is still a path here (the view counts it unusable) */
  const struct pol_path *pp;
  for (int i = 0; (pp = mh__view_path(sp, i)); i++) {
    if (mh__slow_on(sp, i) || !(mh__plan_on(sp, i) || i == g->iface))
      continue;
    paths++;
    unknown += !(pp->max_rate > 0);
    all += pp->max_rate;
    if (i == g->iface)
      mine = pp->max_rate;
  }
  double part = !unknown && all > 0 ? mine / all : 1.0 / (paths ? paths : 1);
  double want = (double)(missing + mh__owed(sp, -1)) * part - (double)mh__owed(sp, g->iface);
  uint64_t n = want > 0 ? (uint64_t)want : 0;
  return n > MH__CLOSE_RANGE_MIN ? n : MH__CLOSE_RANGE_MIN;
}

/* Whether leg g (at index i, k requests into this round, st its scheduler's view) is early:
 * a new connection has no rate yet, so the scheduler would wait for its first chunk before the
 * next, and its first samples (slow start) are low, so pipelining by rate comes late: the
 * connection idles a round trip. It keeps MH__EARLY_DEPTH requests queued until the first
 * sample, and on a lone path (nothing else keeps its link busy... nor competes for the tail)
 * until MH__EARLY_SAMPLES samples exist. e->max and e->last: mh__early_wants. */
struct mh__early {
  int on, last;
  uint64_t max;
};
static void mh__drive_early(struct mh_split *sp, const struct pol_admit_obj *o, struct mh__leg *g, int alone,
                            const struct sched_conn_stats *st, uint64_t now, struct mh__early *e) {
  e->max = 0;
  e->last = 0;
  e->on = alone ? st->samples < MH__EARLY_SAMPLES && g->qn < MH__EARLY_DEPTH
                : !st->samples && mh__early_wants(sp, o, g, now, &e->max, &e->last);
}

/* Whether leg g stops asking in this round (its k-th request of it): 1 when it waits. */
static int mh__drive_waits(struct mh_split *sp, const struct mh__leg *g, int i, const struct pol_admit_obj *o, int k,
                           const struct sched_conn_stats *st, int early, uint64_t now) {
  if (k && pol_admit_over_share(o, (unsigned)i))
    return 1; /* its share is asked: the next chunk goes to a planned path below its own */
  /* its budget is what it carries by the joint finish; its first samples come from slow start
   * (a burst of a round read at the link's rate, then a round trip of nothing) and would size
   * a request on a rate it does not have yet: the last bytes then come a round trip of this
   * path after the measured paths have finished */
  if (st->samples && mh__early_pending(g))
    return 1;
  /* nothing missing: a queue that is due may still take a piece of a straggler's tail
   * (sched_resplit refuses when it is not due) */
  uint64_t low = mh__lowest_missing(sp);
  /* the program's next byte is asked nowhere (a failed leg's ranges came back) and the window
   * is full: no leg reads, so none becomes due for its next request; this one asks it now,
   * and reads through its queue to it (mh__leg_may_read) */
  int starved = low == sp->ra.pos && mh__window_blocks(sp);
  if (g->qn && !early && !starved && !sched_want_pipeline(sp->sched, g->sid, now) &&
      sched_ledger_bytes(sched_ledger(sp->sched), SCHED_MISSING, SCHED_NOBODY))
    return 1;
  /* beyond the program's position + window: not requested yet (a sink that takes any order
   * holds nothing for a gap, so it has no such window) */
  return sp->sink->ops->ordered && low != UINT64_MAX && low >= sp->ra.pos + sp->cfg->window;
}

/* The range leg g asks next into *r (0), or < 0: the scheduler's (sized for an origin that
 * closes after every answer, or an early leg's last), else, when nothing is missing or the
 * leg is not due, a piece of a straggler's tail (sched_resplit). *why names which. */
static int mh__drive_range(struct mh_split *sp, struct mh__leg *g, int i, const struct pol_admit_obj *o,
                           const struct mh__early *e, uint64_t now, struct sched_range *r, const char **why) {
  uint64_t lim = pol_admit_share_left(o, (unsigned)i);
  if (e->on && e->max && (!lim || e->max < lim))
    lim = e->max;
  int rc;
  *why = "next";
  if (mh__closes(sp) && sp->state == SP_MANAGED)
    rc = sched_next_range_sized(sp->sched, g->sid, now, mh__close_range(sp, g), r);
  else if (e->on && e->last && e->max && sp->state == SP_MANAGED)
    rc = sched_next_range_sized(sp->sched, g->sid, now, lim, r);
  else
    rc = mh__next_range(sp, g, now, lim, r);
  if (rc != -ENODATA && rc != -EBUSY)
    return rc;
  int victim = -1;
  *why = "resplit";
  if ((rc = sched_resplit(sp->sched, g->sid, now, &victim, r)) == 0) {
    struct sched_conn_stats vs;
    sched_conn_stats(sp->sched, victim, &vs);
    mh_dbg("split %u: leg %d takes %" PRIu64 "+%" PRIu64 " over from connection %d (its rate %.0f B/s, rtl %.0f us)",
           sp->id, g->idx, r->off, r->len, victim, vs.rate_Bps, vs.rtl_us);
  }
  return rc;
}

/* Sends range r on leg g (logged with why); an early leg (no sample yet) counts it against its
 * budget. < 0 when the leg failed (it is dropped). */
static int mh__drive_ask(struct mh_split *sp, struct mh__leg *g, const struct sched_range *r, const char *why,
                         uint32_t samples, uint64_t now) {
  struct sched_conn_stats cs;
  sched_conn_stats(sp->sched, g->sid, &cs);
  mh_dbg("split %u: +%.1f ms leg %d (%s) range %" PRIu64 "+%" PRIu64 " (%s, case %d, rate %.0f B/s, rtl %.0f us, "
         "queued %u)",
         sp->id, (now - sp->t_start_us) / 1000.0, g->idx, sp->net.ifaces[g->iface].name, r->off, r->len, why,
         (int)cs.last_case, cs.rate_Bps, cs.rtl_us, cs.queued);
  if (mh__leg_request(g, r, 0, 1) < 0) {
    mh__leg_fail(g, "request");
    return -1;
  }
  if (!samples) {
    g->early.asked += r->len;
    if (g->early.budget)
      g->early.last = r->off + 1;
  }
  return 0;
}

/* Fills leg g's queue (index i) up to its depth: how many requests it sent. */
static int mh__drive_leg(struct mh_split *sp, struct mh__leg *g, int i, int alone, uint64_t now) {
  unsigned depth = mh__leg_depth(sp, g);
  int issued = 0;
  for (int k = 0; k < SCHED_MAX_QUEUE && g->qn < depth && g->st == LEG_READY; k++) {
    struct sched_conn_stats st;
    sched_conn_stats(sp->sched, g->sid, &st);
    struct mh__admit a;
    const struct pol_admit_obj *o = mh__admit(sp, &a); /* the last request changed it */
    struct mh__early e;
    mh__drive_early(sp, o, g, alone, &st, now, &e);
    struct sched_range r;
    const char *why;
    if (mh__drive_waits(sp, g, i, o, k, &st, e.on, now) || mh__drive_range(sp, g, i, o, &e, now, &r, &why) < 0 ||
        mh__drive_ask(sp, g, &r, why, st.samples, now) < 0)
      break;
    issued++;
  }
  return issued;
}

/* The split's assignment: every ready leg worth using (pol_admit_worth_using) fills its queue
 * (mh__drive_leg: early state, wait rules, the range, the request), after a rescue's. */
void mh__drive(struct mh_split *sp) {
  if (sp->state != SP_VERIFY && sp->state != SP_MANAGED)
    return;
  mh__rescue_assign(sp);
  uint64_t now = mh_now_us();
  int alone = mh__live_legs(sp) <= 1;
  /* A leg that yielded (pol_admit_yields) comes before the one it yielded to in this
   * order; once that one has its range, a second pass gives the yielding leg its own at once
   * instead of at the next read event (which may be a while: the leg idles meanwhile). */
  for (int pass = 0, again = 1; pass < 2 && again; pass++) {
    int skipped = 0, issued = 0;
    for (int i = 0; i < sp->nlegs; i++) {
      struct mh__leg *g = sp->legs[i];
      if (!g || g->st != LEG_READY || g->no_more || g->sid < 0)
        continue;
      struct mh__admit a;
      if (!pol_admit_worth_using(mh__admit(sp, &a), (unsigned)i)) {
        skipped = 1;
        continue;
      }
      issued |= mh__drive_leg(sp, g, i, alone, now) > 0;
    }
    again = skipped && issued;
  }
}
