/* Plain fetching: the rest of an object on one connection when the origin's ranges cannot be used exactly. */
#include "split_core.h"
#include "split_leg.h"
#include "split_deliver.h"
#include "split_legs.h"
#include "mh_log.h"
#include "mh_upstream.h"

#include <errno.h>
#include <inttypes.h>

/* Asks everything from the first byte not held on to the end, on one connection of the
 * program's path to its server, the way a resuming client would. After MH__PLAIN_TRIES
 * attempts in a row that brought too little to pay for a reconnect (MH__PLAIN_WORTH) the
 * program sees the end a broken server gives. */
static void mh__plain_open(struct mh_split *sp) {
  uint64_t from = mh_reasm_filled_to(&sp->ra);
  if (from >= sp->total)
    return;
  if (sp->plain.fails >= MH__PLAIN_TRIES) {
    /* the program sees its bytes so far, then the end the origin gave the last attempt: a
     * close (a truncated body, as plain would read it) or a reset */
    mh__deliver_give_up(sp, sp->plain.eof ? MH_SPLIT_END_EOF : MH_SPLIT_END_RESET);
    mh_info("split %u: %d plain attempts in a row brought too little: the program sees %s", sp->id, sp->plain.fails,
            sp->plain.eof ? "the server close" : "a reset");
    mh__note(sp, "no-path");
    return;
  }
  sp->plain.fails++; /* back to 0 once it pays (mh__plain_body) */
  struct mh__leg *g = mh__hedge_take(sp);
  if (g) { /* its request went out when every path went quiet; its answer's first window is in */
    mh_dbg("split %u: leg %d (%s) asks the whole object to keep %" PRIu64 "- plainly (attempt %d, the hedge)", sp->id,
           g->idx, sp->net.ifaces[g->iface].name, from, sp->plain.fails);
    mh__hedge_feed(g);
    return;
  }
  g = mh__leg_open(sp, sp->net.primary_iface < 0 ? 0 : sp->net.primary_iface);
  struct sched_range r = {.off = from, .len = sp->total - from};
  int rc = -ENOMEM;
  if (g && sp->plain.whole) {
    rc = mh_buf_append(&g->out, sp->rq.req, sp->rq.req_len); /* its 200: mh__range_head skips */
    if (rc == 0)
      mh__leg_queue(g, &r, 0);
  } else if (g) {
    rc = mh__leg_request(g, &r, 0, 1);
  }
  if (rc < 0) {
    if (g)
      mh__leg_fail(g, "request");
    else
      mh__finish(sp, MH_SPLIT_END_RESET);
    return;
  }
  mh_dbg("split %u: leg %d (%s) asks %s%" PRIu64 "- plainly (attempt %d)", sp->id, g->idx,
         sp->net.ifaces[g->iface].name, sp->plain.whole ? "the whole object to keep " : "", from, sp->plain.fails);
}

/* The origin's ranges fail even asked one at a time: from now on the plain attempts send the
 * program's own request, which is what it would have got without us (the bytes it already has
 * are read again and dropped). */
void mh__plain_whole(struct mh_split *sp, const char *why) {
  if (sp->plain.whole)
    return;
  mh_info("split %u: %s: the program's own request from now on", sp->id, why);
  mh__note(sp, "plain-whole");
  sp->plain.whole = 1;
}

/* The plain connection ended or failed: the next one asks from where it stopped. */
void mh__plain_lost(struct mh__leg *g) {
  struct mh_split *sp = g->sp;
  sp->plain.eof = g->end.eof;
  if (g->end.cut_body)
    mh__plain_whole(sp, "its range answer ended short");
  mh__leg_set_state(g, LEG_DEAD);
  g->qn = 0;
  if (g->primary) {
    sp->prog.up_dead = 1;
    g->up->ops->watch(g->up, 0);
    g->watching = 0;
    if (!g->carried)
      return;
  } else {
    mh__leg_drop(g, 1);
  }
  mh__plain_open(sp);
}

/* The origin's ranges cannot be used exactly and the rewritten head went out: every leg
 * leaves (an idle clean one to the pool), and the rest comes plainly (mh__plain_open). The
 * program's connection is not read again; mh__finish gives the program a working one. */
void mh__go_plain(struct mh_split *sp, const char *why) {
  mh_info("split %u: %s: the rest on one connection, as a plain client would", sp->id, why);
  mh__note(sp, "plain");
  mh__set_state(sp, SP_PLAIN); /* a rescue pending is no more: rescues are SP_MANAGED's (mh__rescue) */
  int carried = 0;
  for (int i = 0; i < sp->nlegs; i++) {
    struct mh__leg *g = sp->legs[i];
    if (!g || g->st == LEG_DEAD || mh__leg_park(sp, i))
      continue;
    if (g->carried) {
      carried = 1; /* the program's own answer (mh_split_adopt) runs to the end: it is the plain one */
      continue;
    }
    if (g->primary) {
      sp->prog.up_dead = 1;
      mh__leg_set_state(g, LEG_DEAD);
      g->qn = 0;
      g->up->ops->watch(g->up, 0);
      g->watching = 0;
    } else {
      mh__leg_set_state(g, LEG_DEAD);
      g->qn = 0;
      mh__leg_drop(g, 1);
    }
  }
  sp->plain.fails = 0;
  if (!carried)
    mh__plain_open(sp);
}
