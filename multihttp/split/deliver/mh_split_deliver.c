/* Delivery of a split into its sink: interim answers, the rewritten head, the body in order or as it comes, draining. */
#include "split_core.h"
#include "split_deliver.h"
#include "private/deliver_int.h"
#include "mh_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

int mh__deliver_new(struct mh_split *sp) {
  if (!(sp->dl = calloc(1, sizeof *sp->dl)))
    return -ENOMEM;
  mh_buf_init(&sp->dl->head_out, 0); /* sized when the probe's head is known */
  return 0;
}

void mh__deliver_free(struct mh_split *sp) {
  if (!sp->dl)
    return;
  mh_buf_free(&sp->dl->head_out);
  free(sp->dl);
  sp->dl = NULL;
}

int mh__deliver_head(struct mh_split *sp, const char *head, size_t len) {
  mh_buf_free(&sp->dl->head_out);
  mh_buf_init(&sp->dl->head_out, len);
  return mh_buf_append(&sp->dl->head_out, head, len) < 0 ? -ENOMEM : 0;
}

int mh__deliver_head_due(const struct mh_split *sp) { return sp->dl->head_sent < sp->dl->head_out.len; }

void mh__deliver_give_up(struct mh_split *sp, enum mh_split_end end) { sp->dl->give_up = end; }

int mh__deliver_err(const struct mh_split *sp) { return sp->dl ? sp->dl->sink_err : 0; }

/* Offers p to the sink through fn's result n: 1 when all of it was taken, 0 when the sink is
 * full (*taken says how much went), or -errno when it failed (kept for its end()). */
static int mh__taken(struct mh_split *sp, ssize_t n, size_t len, size_t *taken) {
  if (n < 0) {
    sp->dl->sink_err = (int)n;
    *taken = 0;
    return (int)n;
  }
  *taken = (size_t)n;
  return (size_t)n == len;
}

/* A 1xx on the program's connection goes to the sink as it comes, as without us (a program may
 * read an interim answer as if it were the final one, and must then not find the final one in
 * the same read). What the sink cannot take now goes before the head (mh__deliver); a sink
 * that wants none drops them. 1 when all went, 0 when the sink is full, -errno. */
static int mh__interim_out(struct mh_split *sp) {
  const char *p;
  size_t left = mh__probe_interim(sp, &p), n;
  if (!left)
    return 1;
  if (!sp->sink->ops->interim) {
    mh__probe_interim_sent(sp, left);
    return 1;
  }
  int rc = mh__taken(sp, sp->sink->ops->interim(sp->sink, p, left), left, &n);
  mh__probe_interim_sent(sp, n);
  return rc;
}

void mh__pass_interim(struct mh_split *sp) { (void)mh__interim_out(sp); }

/* The sink can take more: the owner pumps the split (mh__deliver). */
void mh__sink_writable(struct mh_sink *k, void *arg) {
  (void)k;
  mh__kick(arg);
}

/* Every byte reached the program, but ranges of ours are still due on the program's own
 * connection (a tail another leg brought first). When they arrive within two of its round
 * trips (about what a new connection costs: a handshake, and a round of its window) they are
 * read and dropped, so the program's next request goes out on its own warm connection (the
 * request waits in the socketpair meanwhile); otherwise its owner is asked for another
 * connection (mh__finish_done). 1 while draining. */
static int mh__drain_first(struct mh_split *sp) {
  struct mh__leg *g0 = sp->legs[0];
  if (!g0 || g0->st != LEG_READY || !g0->qn || g0->no_more || g0->sid < 0 || sp->prog.up_dead ||
      llhttp_get_errno(&g0->p) != HPE_OK)
    return 0;
  uint64_t due = 0;
  for (unsigned k = 0; k < g0->qn; k++)
    due += g0->q[k].len - g0->q[k].got;
  struct sched_conn_stats cs;
  if (sched_conn_stats(sp->sched, g0->sid, &cs) < 0 || !(cs.rate_Bps * 2 * cs.rtl_us / 1e6 >= (double)due))
    return 0;
  if (!sp->dl->draining)
    mh_dbg("split %u: every byte delivered; %" PRIu64 " B still due on the program's connection: drained first", sp->id,
           due);
  sp->dl->draining = 1;
  return 1;
}

/* Interim answers not taken yet, then the head. 1 when all went, 0 when the sink is full, -errno. */
static int mh__head_out(struct mh_split *sp) {
  int rc = mh__interim_out(sp);
  size_t n;
  if (rc <= 0)
    return rc;
  struct mh_sink_head h = {.status = sp->rq.span.on ? 206 : 200,
                           .length = sp->total,
                           .bytes = mh_buf_head(&sp->dl->head_out),
                           .len = sp->dl->head_out.len};
  while (sp->dl->head_sent < h.len) {
    rc = mh__taken(sp, sp->sink->ops->head(sp->sink, &h, sp->dl->head_sent), h.len - sp->dl->head_sent, &n);
    sp->dl->head_sent += n;
    if (rc <= 0)
      return rc;
  }
  return 1;
}

/* The body in order: the run held from the next byte on, as the sink takes it. */
static int mh__body_ordered(struct mh_split *sp) {
  const char *d;
  size_t len, n;
  while ((len = mh_reasm_peek(&sp->ra, &d))) {
    if (!(len = mh__digest_allow(sp, d, len)))
      return -EBADMSG; /* the object does not match the origin's digest (mh__deliver ends it) */
    int rc = mh__taken(sp, sp->sink->ops->data(sp->sink, sp->rq.span.first + sp->ra.pos, d, len), len, &n);
    mh__digest_taken(sp, d, n);
    mh_reasm_skip(&sp->ra, n);
    if (rc <= 0)
      return rc;
  }
  return 1;
}

/* The body as it comes (a sink that takes any order): every run held, gaps or not. */
static int mh__body_any(struct mh_split *sp) {
  const char *d;
  uint64_t off;
  size_t len, n;
  while ((len = mh_reasm_peek_any(&sp->ra, &off, &d))) {
    int rc = mh__taken(sp, sp->sink->ops->data(sp->sink, sp->rq.span.first + off, d, len), len, &n);
    if (mh_reasm_skip_any(&sp->ra, n) < 0) {
      sp->dl->sink_err = -ENOMEM;
      return -ENOMEM;
    }
    if (rc <= 0)
      return rc;
  }
  return 1;
}

/* Gives the sink the head, then every byte it takes. 0 or -errno (the sink failed). */
int mh__deliver(struct mh_split *sp) {
  if (sp->state != SP_MANAGED && sp->state != SP_PLAIN)
    return 0;
  int rc = mh__head_out(sp);
  if (rc > 0)
    rc = sp->sink->ops->ordered ? mh__body_ordered(sp) : mh__body_any(sp);
  if (sp->dl->ig.digest_bad) {
    /* some path served other bytes: never a clean end, the program sees a failed transfer */
    mh__finish(sp, MH_SPLIT_END_RESET);
    return 0;
  }
  if (rc <= 0)
    return rc;
  if (sp->dl->give_up) {
    mh__finish(sp, sp->dl->give_up); /* every byte it could have went out */
    return 0;
  }
  if (sp->ra.pos != sp->total)
    return 0;
  mh__stats(sp, MH_SPLIT_END_DONE); /* now: the program may end before a drain does */
  if (!mh__drain_first(sp))
    mh__finish(sp, MH_SPLIT_END_DONE);
  return 0;
}

int mh_split_want_write(const struct mh_split *sp) {
  const char *d;
  uint64_t off;
  if (sp->state != SP_MANAGED && sp->state != SP_PLAIN)
    return 0;
  if (mh__deliver_head_due(sp) || mh__probe_interim(sp, NULL))
    return 1;
  return sp->sink->ops->ordered ? mh_reasm_peek(&sp->ra, &d) != 0 : mh_reasm_peek_any(&sp->ra, &off, &d) != 0;
}
