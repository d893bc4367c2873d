/* The session's side of a split: handing a held request to it, pumping it, and taking the program's connection back when it ends. */
#include "mh_session_int.h"
#include "mh_log.h"

#include <string.h>

/* The held request is complete: split it, or send it on unchanged. A request with more bytes
 * behind it in the same read (pipelining) is relayed: its successors must follow it on the
 * program's connection, where the split wants to put its own range requests. */
int mh__hold_decide(struct mh_session *s, struct mh_transfer *t, int more) {
  struct mh_split *sp = NULL;
  if (!more && !s->split &&
      mh_split_start(s, s->loop, s->up, mh_buf_head(&t->hold), t->hold.len, s->prog_fd, &sp) == 0) {
    s->split = sp;
    t->strat = &mh_strategy_split;
    mh_buf_free(&t->hold);
    return 0;
  }
  return mh_transfer_release(t);
}

/* The split ended: the session takes its upstream back and acts on the result. */
static void mh__split_end(struct mh_session *s, const struct mh_split_result *r) {
  struct mh_split *sp = s->split;
  struct mh_transfer *t = s->xhead;
  s->split = NULL;
  if (!t) {  /* cannot happen: the split's transfer stays at the head until it ends */
    mh_split_free(sp, 1);
    mh__sess_close(s, 1);
    return;
  }
  struct mh_upstream *old = NULL;
  if (r->new_up) {  /* the program's own connection is replaced; closed once the split let go */
    old = s->up;
    s->up = r->new_up;
  }
  s->up->on_event = mh__up_event_cb;
  s->up->owner = s;
  s->up_watch = -1;  /* the split changed what the upstream watches */
  int rc = 0;
  switch (r->end) {
  case MH_SPLIT_END_RELAY:
    t->strat = &mh_strategy_relay;
    if (r->resend)
      rc = mh_session_send_upstream(s, r->req, r->req_len);
    if (rc == 0 && r->raw_len)
      rc = mh__resp_feed(s, r->raw, r->raw_len);
    if (r->up_eof) {
      s->up_eof = 1;
      if (r->up_reset)
        s->up_reset = s->up_wr_dead = 1;
      mh__resp_eof(s);
    }
    break;
  case MH_SPLIT_END_DONE:
    mh__xfer_pop(s);
    if (r->up_dead) {
      /* the program's connection cannot carry another request: it sees the server close it
       * after this complete response, as a keep-alive connection may */
      s->up_eof = s->up_wr_dead = 1;
    }
    break;
  case MH_SPLIT_END_EOF:
    s->up_eof = s->up_wr_dead = 1;
    break;
  default:
    s->up_eof = s->up_reset = s->up_wr_dead = 1;
    break;
  }
  mh_split_free(sp, r->end == MH_SPLIT_END_RESET || r->end == MH_SPLIT_END_EOF);
  if (old)
    old->ops->close(old, 1, NULL);
  if (rc < 0)
    mh__sess_close(s, 1);
}

/* While a split runs: it writes the program's socket itself; the program is not read (its
 * next request waits in the socketpair, in order). */
int mh__sess_pump_split(struct mh_session *s) {
  int rc = mh_split_pump(s->split);
  if (rc < 0) {
    mh_dbg("session %u: program gone during split: %s", s->id, strerror(-rc));
    mh__sess_close(s, 1);
    return -1;
  }
  struct mh_split_result r;
  if (mh_split_result(s->split, &r) != MH_SPLIT_RUNNING) {
    mh__split_end(s, &r);
    return s->state == MH_SESS_CLOSING ? -1 : 0;
  }
  int pw = mh_split_want_write(s->split) ? UV_WRITABLE : 0;
  mh__prog_watch(s, pw);
  return 1;
}
