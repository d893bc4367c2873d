/* The split object's state and outcome, below every other part of the split: its state changes, its owner's kick, giving up on it (a restart of the program's request) and finishing it with a result for the sink. */
#include "split_core.h"
#include "mh_log.h"
#include "mh_taint.h"
#include "mh_trust.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const mh__sp_names[] = {"PROBE", "DISCARD", "VERIFY", "MANAGED", "PLAIN", "FINISHED"};

void mh__set_state(struct mh_split *sp, enum mh__sp_state st) {
  if (sp->state == st)
    return;
  mh_dbg("split %u: %s -> %s", sp->id, mh__sp_names[sp->state], mh__sp_names[st]);
  sp->state = st;
}

uint64_t mh__object_key(const struct mh_split *sp) {
  return mh_taint_key(sp->rq.host, strlen(sp->rq.host), sp->rq.rv.target, sp->rq.rv.target_len);
}

void mh__ranges_bad(struct mh_split *sp, const char *why) {
  if (sp->env->paths)
    mh_trust_ranges_note(sp->env->paths, mh__object_key(sp), why);
}

/* Nothing reached the program and what came back cannot be used exactly: the program's own
 * request goes out unchanged and its answer is relayed, as without the engine. fresh: on a new
 * connection (the answer's framing cannot be trusted); else on the program's connection when
 * it is clean (mh__finish decides). */
void mh__restart(struct mh_split *sp, const char *note, int fresh) {
  if (sp->prog.rebound) {
    /* nothing reached the program: its request goes the way plain would have sent it */
    sp->prog.local = sp->prog.plain_src;
    fresh = 1;
  }
  mh_info("split %u: %s: the program's request goes out unchanged%s", sp->id, note,
          sp->prog.rebound ? " from the kernel's own path"
          : fresh          ? " on another connection"
                           : "");
  mh__note(sp, note);
  if (fresh)
    sp->prog.up_dead = 1;
  sp->res.resend = 1;
  mh__finish(sp, MH_SPLIT_END_RELAY);
}

/* Where the program's next request goes when its own connection cannot carry it: over the
 * program's path, or the kernel's when the program's was re-bound (sp->prog.local is then the
 * kernel's source address: mh__restart). The owner takes a connection there (mh_pool_dial):
 * after mh_split_free the pool holds this object's idle legs and the standby connection
 * (mh__standby_open), so one of them carries it when they are there. */
static void mh__route(struct mh_split *sp, struct mh_route *rt) {
  int path = sp->prog.rebound ? sp->prog.plain_iface : sp->net.primary_iface;
  *rt = (struct mh_route){.src = sp->prog.local, .dst = sp->prog.dst};
  if (path >= 0 && sp->rq.host[0]) {
    snprintf(rt->iface, sizeof rt->iface, "%s", sp->net.ifaces[path].name);
    snprintf(rt->host, sizeof rt->host, "%s", sp->rq.host);
  }
}

/* The program's connection after a managed object: its own when clean; closed when the
 * origin ended it or the program asked for that (HTTP/1.0, Connection: close: the program sees
 * what it would have); else the owner is asked for a working replacement, so a keep-alive
 * program's next request finds its connection open as the origin left it. */
static void mh__finish_done(struct mh_split *sp) {
  struct mh__leg *g0 = sp->legs[0];
  int clean =
      g0 && g0->st == LEG_READY && !g0->qn && !g0->no_more && !sp->prog.up_dead && llhttp_get_errno(&g0->p) == HPE_OK;
  if (clean)
    return;
  sp->res.up_dead = 1;
  sp->res.replace = !sp->prog.up_closed && mh_rr_request_keeps_alive(&sp->rq.rv);
  if (sp->res.replace)
    mh__route(sp, &sp->res.route);
}

/* The sink's end for a result (mh_sink_ops.end). */
static int mh__sink_err(enum mh_split_end end) {
  switch (end) {
  case MH_SPLIT_END_DONE: return 0;
  case MH_SPLIT_END_RELAY: return -ENOTSUP;
  case MH_SPLIT_END_EOF: return -ECONNABORTED;
  default: return -ECONNRESET;
  }
}

/* Decides the result: what the owner does with the program's connection next. */
static void mh__result(struct mh_split *sp, enum mh_split_end end) {
  sp->res.end = end;
  uv_timer_stop(&sp->tick);
  uv_timer_stop(&sp->rl.timer);
  sp->on.finish(sp); /* the hedge inert (mh__hedge_still) */
  for (int i = 0; i < sp->nlegs; i++)
    if (sp->legs[i] && sp->legs[i]->st != LEG_DEAD)
      sp->legs[i]->up->ops->watch(sp->legs[i]->up, 0), sp->legs[i]->watching = 0;
  struct mh__leg *g0 = sp->legs[0];
  if (end == MH_SPLIT_END_RELAY) {
    const char *raw = NULL;
    sp->res.raw_len = sp->res.resend ? 0 : mh__probe_relay(sp, &raw);
    sp->res.raw = sp->res.raw_len ? raw : NULL;
    /* a resend goes out on a working connection: how the probe's one ended is not its story */
    sp->res.up_eof = sp->res.resend ? 0 : sp->prog.up_eof;
    sp->res.up_reset = sp->res.resend ? 0 : sp->prog.up_reset;
    sp->res.req = sp->rq.req;
    sp->res.req_len = sp->rq.req_len;
    /* a resend on a connection that has other answers in flight (or none left) goes out on
     * another one, which the owner opens: the program's own is closed by the owner */
    sp->res.replace = sp->res.resend && (!g0 || g0->st == LEG_DEAD || g0->qn || sp->prog.up_dead || g0->no_more);
    if (sp->res.replace)
      mh__route(sp, &sp->res.route);
  } else if (end == MH_SPLIT_END_DONE) {
    mh__finish_done(sp);
  }
}

void mh__finish(struct mh_split *sp, enum mh_split_end end) {
  if (sp->state == SP_FINISHED)
    return;
  mh__set_state(sp, SP_FINISHED);
  mh__result(sp, end);
  sp->res.err = mh__sink_err(sp->res.end);
  mh_sink_end(sp->sink, &sp->res);
}

/* SP_VERIFY ends once the answer for the object's last bytes agreed with the probe and the
 * probe's own answer (to the program's request) came whole or left with its leg: an origin
 * that cuts every answer cuts that one too, and the program, which has seen nothing yet, then
 * gets its own request's answer (mh__leg_eof) instead of a head no connection can fill. */
void mh__verified(struct mh_split *sp) {
  if (sp->state != SP_VERIFY || !mh__probe_end_agreed(sp))
    return;
  for (int i = 0; i < sp->nlegs; i++) {
    const struct mh__leg *g = sp->legs[i];
    if (g && mh__probe_due(sp, g) && g->st != LEG_DEAD)
      return;
  }
  mh__set_state(sp, SP_MANAGED);
}
