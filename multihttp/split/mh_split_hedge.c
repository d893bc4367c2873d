/* The hedge: when every path's answers go quiet at once, the program's own request goes out again on its path, its answer held until a trickle verdict makes it the plain fetch. */
#include "split_core.h"
#include "split_leg.h"
#include "split_legs.h"
#include "mh_clock.h"
#include "mh_config.h"
#include "mh_log.h"
#include "mh_upstream.h"
#include "policy/trickle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The hedge's answer held in memory before it is the plain fetch: about what a fast path
 * brings while a crawl's verdict waits for its next read; the kernel holds a window more. */
#define MH__HEDGE_HOLD (1024 * 1024)

/* The object's hedge. Made with the split (mh__hedge_new), seen by this file only. */
struct mh__hedge {
  uv_timer_t timer;   /* when every path would have been quiet long enough */
  struct mh__leg *on; /* the hedge, if one is out */
  int sent;           /* one was sent: at most one per object */
};

int mh__hedge_new(struct mh_split *sp) {
  if (!(sp->hg = calloc(1, sizeof *sp->hg)))
    return -ENOMEM;
  uv_timer_init(sp->loop, &sp->hg->timer);
  sp->hg->timer.data = sp;
  return 0;
}

static void mh__hedge_closed(uv_handle_t *h) { free(h->data); }

void mh__hedge_free(struct mh_split *sp) {
  if (!sp->hg)
    return;
  sp->hg->timer.data = sp->hg; /* stopped: it fires no more */
  uv_close((uv_handle_t *)&sp->hg->timer, mh__hedge_closed);
  sp->hg = NULL;
}

void mh__hedge_still(struct mh_split *sp) {
  struct mh__leg *h = sp->hg->on; /* inert from now on; mh_split_free drops it */
  uv_timer_stop(&sp->hg->timer);
  if (h && h->st != LEG_DEAD)
    h->up->ops->watch(h->up, 0), h->watching = 0;
}

/* Path i's connections to the origin as pol_trickle_hedge_wait reads them. A path whose
 * answers trickled already has no connection left: its quiet is the trickle's. */
static struct pol_hedge_path mh__hedge_path(const struct mh_split *sp, int i, uint64_t now) {
  const struct pol_path *pp = mh__view_path(sp, i);
  struct pol_hedge_path p = {.rtt_us = pp ? pp->srtt_min_us : 0};
  if (mh__slow_on(sp, i)) {
    p.begun = 1;
    p.quiet_us = UINT64_MAX;
    return p;
  }
  uint64_t last = 0;
  for (int k = 0; k < sp->nlegs; k++) {
    const struct mh__leg *g = sp->legs[k];
    if (!g || g->iface != i || g->st != LEG_READY || !g->qn || !mh__to_origin(sp, g))
      continue;
    p.busy |= g->paused || g->q[0].probe;
    p.begun |= g->ans.resp_started;
    if (g->at.rx_us > last)
      last = g->at.rx_us;
  }
  p.quiet_us = mh__since(now, last);
  return p;
}

/* Sends the program's request on a connection of its path (the standby one when it is there:
 * mh__standby_open) and holds its answer (mh__hedge_read), out of sp->legs, so that nothing that
 * drives, judges or counts the object's legs sees it. */
static void mh__hedge_open(struct mh_split *sp) {
  uint64_t from = mh_reasm_filled_to(&sp->ra);
  sp->hg->sent = 1;
  if (from >= sp->total || (unsigned)mh__legs_open(sp) >= sp->cfg->max_conns)
    return;
  struct mh__leg *g = mh__leg_open(sp, sp->net.primary_iface);
  if (!g)
    return;
  sp->legs[g->idx] = NULL;
  if (g->idx == sp->nlegs - 1)
    sp->nlegs--;
  g->idx = -1;
  g->hedge = 1;
  mh_buf_init(&g->hold, MH__HEDGE_HOLD);
  sp->hg->on = g;
  struct sched_range r = {.off = from, .len = sp->total - from};
  if (mh_buf_append(&g->out, sp->rq.req, sp->rq.req_len) < 0) {
    mh__hedge_drop(sp, "no memory");
    return;
  }
  mh__leg_queue(g, &r, 0);
  mh__path_asked(sp, g->iface, -(int64_t)r.len); /* asked for real once it is the plain fetch (mh__hedge_take) */
  mh_info("split %u: every path went quiet at once after its answers began: the program's own request again on %s, "
          "its answer held",
          sp->id, sp->net.ifaces[g->iface].name);
}

static void mh__hedge_due(uv_timer_t *t) {
  struct mh_split *sp = t->data;
  mh__hedge_arm(sp);
  mh__kick(sp);
}

/* Asked after every pump and when the timer it set fires: opens the hedge when every path has
 * been quiet long enough, else sets the timer for when they would have been. */
void mh__hedge_arm(struct mh_split *sp) {
  struct mh__hedge *hg = sp->hg;
  if (hg->on && sp->state != SP_FINISHED) /* out of sp->legs: the pump's watch pass does not see it */
    mh__leg_watch(hg->on);
  /* under a rate limit the pace is ours */
  if (hg->sent || (sp->state != SP_VERIFY && sp->state != SP_MANAGED) || sp->plain.whole || sp->rl.bucket.rate ||
      sp->net.primary_iface < 0) {
    uv_timer_stop(&hg->timer);
    return;
  }
  uint64_t now = mh_now_us();
  struct pol_hedge_path p[MH_MAX_IFACES];
  unsigned n = 0;
  for (int i = 0; i < sp->net.nifaces && n < MH_MAX_IFACES; i++)
    if (!(sp->net.down >> i & 1))
      p[n++] = mh__hedge_path(sp, i, now);
  uint64_t wait = pol_trickle_hedge_wait(p, n);
  if (wait == UINT64_MAX) {
    uv_timer_stop(&hg->timer);
    return;
  }
  if (!wait) {
    uv_timer_stop(&hg->timer);
    mh__hedge_open(sp);
    return;
  }
  uint64_t ms = (wait + 999) / 1000;
  if (!uv_is_active((uv_handle_t *)&hg->timer) || uv_timer_get_due_in(&hg->timer) != ms)
    uv_timer_start(&hg->timer, mh__hedge_due, ms, 0);
}

/* The hedge's connection is readable: its bytes are held as they come, up to the hold. A close
 * or reset ends the hedge: the plain fetch, if it comes, asks again. */
void mh__hedge_read(struct mh__leg *g) {
  struct mh_split *sp = g->sp;
  while (g->hold.len < g->hold.cap) {
    size_t want = g->hold.cap - g->hold.len < MH__IO ? g->hold.cap - g->hold.len : MH__IO;
    ssize_t n = g->up->ops->recv(g->up, sp->env->io, want);
    if (n == -EAGAIN)
      return;
    if (n <= 0) {
      mh__hedge_drop(sp, n ? strerror((int)-n) : "its server closed it");
      return;
    }
    if (mh_buf_append(&g->hold, sp->env->io, (size_t)n) < 0) {
      mh__hedge_drop(sp, "no memory");
      return;
    }
    g->at.rx_us = mh_now_us();
  }
  mh__leg_watch(g); /* the hold is full: the kernel holds the rest */
}

/* The hedge became the plain fetch (mh__hedge_take): its held bytes are its first reads. */
void mh__hedge_feed(struct mh__leg *g) {
  struct mh_buf b = g->hold;
  g->hold = (struct mh_buf){0};
  if (b.len)
    mh__leg_feed(g, mh_buf_head(&b), b.len);
  mh_buf_free(&b);
}

void mh__hedge_drop(struct mh_split *sp, const char *why) {
  struct mh__leg *g = sp->hg->on;
  uv_timer_stop(&sp->hg->timer);
  if (!g)
    return;
  sp->hg->on = NULL;
  if (why)
    mh_dbg("split %u: the hedge on %s is reset: %s", sp->id, sp->net.ifaces[g->iface].name, why);
  mh_buf_free(&g->hold);
  mh__leg_set_state(g, LEG_DEAD);
  g->qn = 0;
  mh__leg_drop(g, 1);
}

/* The plain fetch's connection (mh__plain_open): the hedge, its request out since it was
 * sent, when that fetch sends the program's own request too (the origin's ranges trickle);
 * NULL: none. A fetch that asks a Range from the first byte not held does not take it: the
 * hedge's answer would bring every byte before that again. */
struct mh__leg *mh__hedge_take(struct mh_split *sp) {
  struct mh__leg *g = sp->hg->on;
  if (!g)
    return NULL;
  if (g->st == LEG_DEAD || !sp->plain.whole) {
    mh__hedge_drop(sp, "not the plain fetch's request");
    return NULL;
  }
  int idx = -1;
  for (int i = 0; i < sp->nlegs && idx < 0; i++)
    if (!sp->legs[i])
      idx = i;
  if (idx < 0 && sp->nlegs < MH__MAX_LEGS)
    idx = sp->nlegs++;
  if (idx < 0) {
    mh__hedge_drop(sp, "no slot");
    return NULL;
  }
  sp->hg->on = NULL;
  g->hedge = 0;
  g->idx = idx;
  sp->legs[idx] = g;
  mh__path_asked(sp, g->iface, (int64_t)g->q[0].len);
  mh_info("split %u: leg %d (%s): the hedge is the plain fetch", sp->id, idx, sp->net.ifaces[g->iface].name);
  mh__leg_watch(g);
  return g;
}
