/* The policy's views of the object: its paths (struct pol_view), rebuilt at every tick from the metrics and its legs, and the admission rules' snapshot (struct pol_admit_obj). */
#include "split_core.h"
#include "split_leg.h"
#include "split_legs.h"
#include "mh_clock.h"

/* The view of every interface for this object: metrics, usable (not every connection on it
 * failed), reusable (a connected idle leg, the program's connection, or a pooled one) and how
 * long the most recently used of those has been idle (pol_path.idle_us: past the server's RTO
 * its window is the initial one again). */
void mh__build_view(struct mh_split *sp) {
  const char *names[MH_MAX_IFACES];
  struct pol_path m[MH_MAX_IFACES];
  uint32_t usable = 0, reusable = 0;
  uint64_t idle_us[MH_MAX_IFACES], window[MH_MAX_IFACES], now = mh_now_us();
  memset(m, 0, sizeof m);
  for (int i = 0; i < sp->net.nifaces; i++) {
    idle_us[i] = POL_IDLE_COLD;
    window[i] = 0;
    names[i] = sp->net.ifaces[i].name;
    mh__iface_metrics(sp, i, &m[i]);
    int legs = 0, dead = 0, idle = 0;
    for (int k = 0; k < sp->nlegs; k++) {
      const struct mh__leg *g = sp->legs[k];
      if (!g || g->iface != i)
        continue;
      legs++;
      /* a connection the origin ends after each answer (mh__closing) did not fail: its path
       * gets a fresh one per range */
      dead += (g->st == LEG_DEAD || g->no_more) && !(mh__closes(sp) && (g->no_more || g->answers));
      if (g->st == LEG_READY && !g->no_more && (g->primary || g == mh__probe_leg(sp) || !g->qn)) {
        idle++;
        uint64_t t = mh__leg_idle_us(g, now);
        if (t < idle_us[i] || (t == idle_us[i] && !window[i])) {
          idle_us[i] = t;
          window[i] = mh_upstream_window(g->up);
        }
      }
    }
    if ((!legs || dead < legs) && !mh__slow_on(sp, i) && !(sp->net.down >> i & 1))
      usable |= 1u << i;
    uint64_t pooled = POL_IDLE_COLD, pooled_w = 0;
    if (sp->rq.host[0] && mh_pool_idle(sp->env->paths->pool, names[i], (struct sockaddr *)&sp->prog.dst,
                                       mh__xport_of(sp, 0), sp->rq.host, &pooled, &pooled_w)) {
      idle++;
      if (pooled < idle_us[i] || (pooled == idle_us[i] && !window[i])) {
        idle_us[i] = pooled;
        window[i] = pooled_w;
      }
    }
    if (idle)
      reusable |= 1u << i;
  }
  mh__view_set(sp, m, usable, reusable, idle_us, window);
}

/* The admission rules' view of this object (policy/admit.h), filled for one decision: every
 * request issued changes it, so a caller fills it again after one. Legs keep their index. */
const struct pol_admit_obj *mh__admit(const struct mh_split *sp, struct mh__admit *a) {
  static const enum pol_admit_state st[] = {
      [LEG_CONNECTING] = POL_ADMIT_CONNECTING, [LEG_READY] = POL_ADMIT_READY, [LEG_DEAD] = POL_ADMIT_DEAD};
  uint64_t now = mh_now_us();
  a->o = (struct pol_admit_obj){
      .pol = &sp->env->paths->pol,
      .rest = sp->total - mh__probe_end(sp),
      .floor = sp->cfg->min_split_size,
      .missing = sp->sched ? sched_ledger_bytes(sched_ledger(sp->sched), SCHED_MISSING, SCHED_NOBODY) : 0,
      .unreceived = sp->sched && sp->total
                        ? sp->total - sched_ledger_bytes(sched_ledger(sp->sched), SCHED_RECEIVED, SCHED_NOBODY)
                        : 0,
      .leg = a->leg,
      .nleg = (unsigned)sp->nlegs,
  };
  mh__plan_admit(sp, &a->o);
  for (int k = 0; k < sp->nlegs; k++) {
    const struct mh__leg *g = sp->legs[k];
    struct pol_admit_leg *l = &a->leg[k];
    if (!g) {
      *l = (struct pol_admit_leg){.state = POL_ADMIT_NONE, .path = -1};
      continue;
    }
    struct sched_conn_stats cs = {0};
    if (g->sid >= 0)
      sched_conn_stats(sp->sched, g->sid, &cs);
    uint64_t since = g->st == LEG_CONNECTING ? g->at.connect_us : g->at.asked_us;
    *l = (struct pol_admit_leg){.state = st[g->st],
                                .path = g->iface,
                                .primary = g->primary,
                                .probe_leg = g == mh__probe_leg(sp),
                                .no_more = g->no_more,
                                .scheduled = g->sid >= 0,
                                .queue_full = g->qn >= SCHED_MAX_QUEUE,
                                .queued = g->qn,
                                .measured = cs.samples > 0,
                                .age_us = since ? mh__since(now, since) : 0};
    for (unsigned q = 0; q < g->qn && !l->joined; q++)
      l->joined = !g->q[q].probe; /* the probe alone does not count: it is not the plan's */
  }
  return &a->o;
}
