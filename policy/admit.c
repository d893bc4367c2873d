/* Admission of an object's connections: which leg may take a range now, and how much (pure rules over a snapshot). */
#include "policy/admit.h"

#include <errno.h>
#include <math.h>

#include "policy/internal.h"

/* A leg that exists and can still carry requests. */
static bool pol__alive(const struct pol_admit_leg *l) {
  return (l->state == POL_ADMIT_CONNECTING || l->state == POL_ADMIT_READY) && !l->no_more;
}

/* A leg that could take a request this very moment. */
static bool pol__ready(const struct pol_admit_leg *l) {
  return l->state == POL_ADMIT_READY && !l->no_more && l->scheduled && !l->queue_full;
}

/* More than one path in the mask. */
static bool pol__several(uint32_t paths) { return paths & (paths - 1); }

bool pol_admit_explorable(const struct pol_view *v, unsigned i) {
  const struct pol_path *pp = &v->path[i];
  return i < v->n && pp->usable && !pp->metered && !(pp->max_rate > 0);
}

bool pol_admit_policy(const struct pol *p, const struct pol_view *v, const struct pol_plan *plan, unsigned i,
                      bool primary, uint32_t on, uint64_t missing, uint64_t floor) {
  uint64_t explore = floor < POL_ADMIT_EXPLORE_MIN ? floor : POL_ADMIT_EXPLORE_MIN;
  if (!plan)
    return primary || missing >= floor || (missing >= explore && pol_admit_explorable(v, i));
  if (i >= v->n)
    return false;
  if ((int)i == plan->primary.iface)
    return true;
  if (primary)
    return (plan->paths >> i) & 1;
  if (!p->ops->splits || !v->path[i].usable)
    return false;
  if (!(v->path[i].max_rate > 0))
    return missing >= explore && !v->path[i].metered; /* unmeasured: explore, unless it costs money */
  bool planned = (plan->paths >> i) & 1;
  if (planned && missing >= floor)
    return true;
  /* Below the floor a path of the plan still joins when it pays off for the bytes left now:
   * the plan weighed its handshake and slow start against the object, and the floor (256 KiB
   * by default) alone kept every 100 KiB object on one path. A measured path outside the
   * plan waits for the floor, as before policies. */
  if (!planned && missing < floor)
    return false;
  on &= ~(1u << i);
  if (!on)
    return false;
  struct pol_gain g;
  int rc = pol_worth_adding(p, v, on, i, missing, &g);
  if (rc == -ENODATA)
    return !v->path[i].metered; /* the running paths have no metrics: cannot weigh, explore */
  return rc == 0 && g.worth;
}

bool pol_admit_small(const struct pol_admit_obj *o) { return o->plan && o->rest < o->floor; }

uint32_t pol_admit_on_mask(const struct pol_admit_obj *o) {
  uint32_t on = 0;
  for (unsigned k = 0; k < o->nleg; k++) {
    const struct pol_admit_leg *l = &o->leg[k];
    if (l->state == POL_ADMIT_READY && l->queued && l->path >= 0)
      on |= 1u << l->path;
  }
  if (o->plan)
    on |= 1u << o->plan->primary.iface;
  return on;
}

unsigned pol_admit_alive_count(const struct pol_admit_obj *o, int i) {
  unsigned n = 0;
  for (unsigned k = 0; k < o->nleg; k++)
    n += o->leg[k].path == i && pol__alive(&o->leg[k]);
  return n;
}

bool pol_admit_explorer_waiting(const struct pol_admit_obj *o) {
  for (unsigned k = 0; k < o->nleg; k++) {
    const struct pol_admit_leg *h = &o->leg[k];
    if (h->primary || h->state != POL_ADMIT_READY || h->no_more || h->queued || !h->scheduled || h->path < 0 ||
        (unsigned)h->path >= o->view->n || o->view->path[h->path].max_rate > 0)
      continue;
    if (pol_admit_policy(o->pol, o->view, o->plan, (unsigned)h->path, false, pol_admit_on_mask(o), o->missing,
                         o->floor))
      return true;
  }
  return false;
}

bool pol_admit_leg_allowed(const struct pol_admit_obj *o, unsigned k) {
  const struct pol_admit_leg *g = &o->leg[k];
  /* The plan's primary path goes first: the other paths join once it has its first range.
   * Otherwise the program's connection, ready first (and first in the drive order), would
   * take the whole rest of a small object before the chosen path's connection is ready.
   * Only for a small object: a large one has more than any path can take at once, and the
   * program's connection would idle for the chosen path's handshake. */
  if (pol_admit_small(o)) {
    int pp = o->plan->primary.iface;
    if (g->path != pp && !(o->counted >> pp & 1) && pol_admit_alive_count(o, pp) > 0)
      return false;
  }
  /* An explorer ready to go goes before the program's connection takes more: otherwise the
   * program's connection, first in the drive order, queues case-4 chunks for the whole rest
   * of the object at once and the explorer finds nothing left (never given a byte, never
   * measured). */
  if (g->primary && o->missing >= POL_ADMIT_EXPLORE_MIN && pol_admit_explorer_waiting(o))
    return false;
  /* Past the probe a large object's planned extra paths keep the floor: a connection that
   * joins its tail late (a replica's) only makes a straggler there, which the scheduler's
   * balance avoids. */
  if (o->plan && !pol_admit_small(o) && !g->primary && g->path >= 0 && g->path != o->plan->primary.iface &&
      o->missing < o->floor && (unsigned)g->path < o->view->n && o->view->path[g->path].max_rate > 0)
    return false;
  return pol_admit_policy(o->pol, o->view, o->plan, (unsigned)g->path, g->primary, pol_admit_on_mask(o), o->missing,
                          o->floor);
}

/* True when a ready leg of another path of the plan than leg k's, allowed in now, still waits
 * for its turn: below its path's share (below_share), or without a range yet. */
static bool pol__planned_waits(const struct pol_admit_obj *o, unsigned k, bool below_share) {
  const struct pol_admit_leg *g = &o->leg[k];
  const struct pol_plan *pl = o->plan;
  for (unsigned j = 0; j < o->nleg; j++) {
    const struct pol_admit_leg *h = &o->leg[j];
    if (j == k || h->path < 0 || h->path >= POL_MAX_IFACES || h->path == g->path || !(pl->paths >> h->path & 1) ||
        !pol__ready(h))
      continue;
    if (below_share ? (double)o->asked[h->path] >= pl->share[h->path] : h->joined)
      continue;
    if (pol_admit_leg_allowed(o, j))
      return true;
  }
  return false;
}

/* Leg g has a range of the object in flight, or carried the probe: the connection that carried
 * the probe counts as joined right after it, or it would take the first (doubled) chunk of a
 * small object before a ready planned path had its own. Only that one: with the program's
 * connection counted too after a moved probe, each of the two yielded to the other and the
 * object stopped. */
static bool pol__joined_or_probe(const struct pol_admit_leg *g) { return g->joined || g->probe_leg; }

/* Leg g, already carrying ranges, lets a connected leg of another path of the plan take its
 * first range before g takes more. The scheduler sizes a connection's first chunks by
 * doubling from the probe size while it has no rate sample, and the program's connection,
 * first in the drive order, would queue them until nothing is left while a planned path's
 * connection stood by. Letting each planned path join first gives both their first chunks
 * at once; the one that finishes first takes the tail (sched_resplit). Only for legs ready
 * now: waiting for a handshake would idle g for a round trip. */
bool pol_admit_yields(const struct pol_admit_obj *o, unsigned k) {
  if (!pol_admit_small(o))
    return false;
  if (!pol__several(o->plan->paths) || !o->missing)
    return false;
  return pol__planned_waits(o, k, false);
}

/* Leg g's path has been asked for its share of the plan (pol_plan.share: what it delivers by
 * the joint finish) while a ready leg of another planned path, allowed in, is still below its
 * own: the rest goes there. The engine queues several doubling chunks on a connection without
 * a rate sample, so the first path to join would take everything left and finish long after
 * the others. Once bytes stop missing, the tail re-split balances what is left. */
bool pol_admit_over_share(const struct pol_admit_obj *o, unsigned k) {
  const struct pol_admit_leg *g = &o->leg[k];
  if (!pol_admit_small(o) || g->path < 0 || g->path >= POL_MAX_IFACES)
    return false;
  const struct pol_plan *pl = o->plan;
  if (!pol__several(pl->paths) || (double)o->asked[g->path] < pl->share[g->path] || !o->missing)
    return false;
  return pol__planned_waits(o, k, true);
}

/* What is left of g's path's share in a small object's plan; 0 (no limit) otherwise or once
 * the share is asked. The scheduler's first chunk on a path (init_chunk, doubled after the
 * probe) knows nothing of the plan: a path that restarted slow start, asked for more than its
 * share, delivers it rounds later than the share by the joint finish. */
uint64_t pol_admit_share_left(const struct pol_admit_obj *o, unsigned k) {
  const struct pol_admit_leg *g = &o->leg[k];
  if (!pol_admit_small(o) || g->path < 0 || g->path >= POL_MAX_IFACES)
    return 0;
  const struct pol_plan *pl = o->plan;
  if (!pol__several(pl->paths) || !(pl->paths >> g->path & 1))
    return 0;
  /* rounded up: asked then reaches the share, so pol_admit_over_share sees it as asked */
  double left = ceil(pl->share[g->path] - (double)o->asked[g->path]);
  return left >= 1 ? (uint64_t)left : 0;
}

/* A leg that joined the transfer goes on (after the planned paths that have not joined yet,
 * and up to its share while another planned path is below its own); otherwise the policy
 * decides (extra paths pay a handshake and slow start; the floor stays a floor), except that
 * when no leg the policy allows is alive, any leg serves: bytes must keep coming. */
bool pol_admit_worth_using(const struct pol_admit_obj *o, unsigned k) {
  const struct pol_admit_leg *g = &o->leg[k];
  if (pol__joined_or_probe(g) && (pol_admit_yields(o, k) || pol_admit_over_share(o, k)))
    return false;
  if (g->joined || pol_admit_leg_allowed(o, k))
    return true;
  for (unsigned j = 0; j < o->nleg; j++)
    if (j != k && pol__alive(&o->leg[j]) && pol_admit_leg_allowed(o, j))
      return false;
  return true;
}

/* Only a large object's plan: a small one follows the plan's shares (pol_admit_share_left). */
bool pol_admit_early_finish(const struct pol_admit_obj *o, uint64_t *finish_us) {
  if (!o->plan || pol_admit_small(o) || !(o->plan->predicted_us > 0))
    return false;
  *finish_us = o->plan_at_us + (uint64_t)o->plan->predicted_us;
  return true;
}

/* Leg h's arrival curve for an early budget (iw: a round's window less the timestamps): false
 * when its path is not known well enough to plan with. */
static bool pol__early_curve(const struct pol_admit_obj *o, const struct pol_admit_leg *h, double iw,
                             struct pol__curve *c) {
  const struct pol *p = o->pol;
  if (h->path < 0 || (unsigned)h->path >= o->view->n)
    return false;
  const struct pol_path *pp = &o->view->path[h->path];
  if (!pp->srtt_min_us || !pol_rate_trusted(pp, p->cfg.init_window))
    return false;
  double rtt = (double)pp->srtt_min_us, age = (double)h->age_us;
  /* the path's share of its rate, split over this object's legs on it */
  double path = pp->max_rate / ((double)pp->transfers + 1) / 1e6;
  double rate = path / pol_admit_alive_count(o, h->path);
  if (h->measured) {
    *c = (struct pol__curve){.start_us = h->queued ? 0 : rtt, .rtt_us = rtt, .rate = rate};
    return true;
  }
  /* the first round arrives a round trip after the first request, which a connecting leg sends
   * once its handshake is through */
  double start = h->state == POL_ADMIT_CONNECTING ? (age < rtt ? rtt - age : 0) + rtt : (h->age_us ? rtt - age : rtt);
  *c = (struct pol__curve){.start_us = start, .rtt_us = rtt, .rate = rate, .init_window = iw, .burst = path};
  return true;
}

/* What curve c carries by fin, less a head's room per slow-start round it spans (iw: its
 * first window), when fin comes before its rounds reach its share of the path (rate · RTT):
 * until then they come as the model says, a window a round trip, doubling. A window past its
 * share fills the bottleneck's queue (legs of one path overshoot it together and lose
 * segments, and a budget asked at once cannot be taken back), while its rate becomes
 * measurable and Algorithm 1 sizes its requests. 0 otherwise. */
static uint64_t pol__early_bytes(const struct pol__curve *c, double fin, double iw, double head) {
  double cum = 0, w = iw, cap = c->rate * c->rtt_us, ss_end = c->start_us;
  while (w < cap) {
    ss_end += c->rtt_us;
    w *= 2;
  }
  if (fin > ss_end)
    return 0;
  double b = pol__curve_bytes(c, fin) - pol__curve_bytes(c, 0);
  w = iw;
  while (cum < b && w < cap) { /* the slow-start rounds the budget spans: a head's room each */
    cum += w;
    w *= 2;
    b -= head;
  }
  return b >= 1 ? (uint64_t)b : 0;
}

uint64_t pol_admit_early_budget(const struct pol_admit_obj *o, unsigned k) {
  if (!o->plan || pol_admit_small(o) || k >= o->nleg || !o->unreceived)
    return 0;
  const struct pol_admit_leg *g = &o->leg[k];
  /* decided at a leg's first request: the probe's leg (its window opened by the probe) and a
   * leg that asked already keep what they have */
  if (g->state != POL_ADMIT_READY || g->no_more || g->measured || g->probe_leg || g->queued || g->age_us || g->path < 0)
    return 0;
  const struct pol *p = o->pol;
  /* The early requests go out back to back, so a response head comes per request, not per
   * round as pol_plan's curves count it (pol__round_payload): a round carries its window less
   * the timestamps (round_overhead less the head's allowance), and each round the budget spans
   * gives up one head's room at the end. Counted the plan's way (a head's room per round,
   * doubled with the window) the legs asked less than their rounds carry, and the measured
   * paths ended the object after them. */
  double head = p->cfg.round_overhead < POL_HEAD_ROOM ? (double)p->cfg.round_overhead : POL_HEAD_ROOM;
  double iw = (double)p->cfg.init_window - ((double)p->cfg.round_overhead - head);
  struct pol__curve c[POL_MAX_IFACES * POL_CONNS_MAX];
  unsigned n = 0, mine = 0;
  double before = 0; /* what the curves delivered before now: arrived, so not in unreceived */
  for (unsigned j = 0; j < o->nleg; j++) {
    const struct pol_admit_leg *h = &o->leg[j];
    if (!pol__alive(h))
      continue;
    if (n == sizeof c / sizeof c[0] || !pol__early_curve(o, h, iw, &c[n]))
      return 0;
    before += pol__curve_bytes(&c[n], 0);
    if (j == k)
      mine = n;
    n++;
  }
  double fin = pol__finish_us(c, n, (double)o->unreceived + before);
  if (!(fin > 0) || fin >= POL_ADMIT_SETTLE_RTTS * c[mine].rtt_us)
    return 0;
  return pol__early_bytes(&c[mine], fin, iw, head);
}
