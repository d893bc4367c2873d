/* Delivery of a split to the program: the rewritten head and the bytes in order, interim answers, draining. */
#include "mh_split_int.h"
#include "mh_log.h"

#include <errno.h>
#include <inttypes.h>
#include <sys/socket.h>

static int mh__send_prog(struct mh_split *sp, const char *p, size_t len, size_t *sent) {
  ssize_t n;
  do
    n = send(sp->prog_fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    *sent = 0;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
  }
  *sent = (size_t)n;
  return 0;
}

/* A 1xx on the program's connection goes to the program as it comes, as without us (a program
 * may read an interim answer as if it were the final one, and must then not find the final
 * one in the same read). What cannot be written now goes before the head. */
void mh__pass_interim(struct mh_split *sp) {
  size_t sent = 0;
  if (sp->interim_len > sp->interim_sent &&
      mh__send_prog(sp, mh_buf_head(&sp->raw) + sp->interim_sent, sp->interim_len - sp->interim_sent, &sent) == 0)
    sp->interim_sent += sent;
}

/* Every byte reached the program, but ranges of ours are still due on the program's own
 * connection (a tail another leg brought first). When they arrive within two of its round
 * trips (about what a new connection costs: a handshake, and a round of its window) they are
 * read and dropped, so the program's next request goes out on its own warm connection (the
 * request waits in the socketpair meanwhile); otherwise mh__finish_done gives it another
 * connection. 1 while draining. */
static int mh__drain_first(struct mh_split *sp) {
  struct mh__leg *g0 = sp->legs[0];
  if (!g0 || g0->st != LEG_READY || !g0->qn || g0->no_more || g0->sid < 0 || sp->up_dead ||
      llhttp_get_errno(&g0->p) != HPE_OK)
    return 0;
  uint64_t due = 0;
  for (unsigned k = 0; k < g0->qn; k++)
    due += g0->q[k].len - g0->q[k].got;
  struct sched_conn_stats cs;
  if (sched_conn_stats(sp->sched, g0->sid, &cs) < 0 || !(cs.rate_Bps * 2 * cs.rtl_us / 1e6 >= (double)due))
    return 0;
  if (!sp->draining)
    mh_dbg("split %u: every byte delivered; %" PRIu64 " B still due on the program's connection: drained first",
           sp->id, due);
  sp->draining = 1;
  return 1;
}

/* Sends the head, then every in-order byte the program's socket takes. 0 or -errno. */
int mh__deliver(struct mh_split *sp) {
  if (sp->state != SP_MANAGED && sp->state != SP_PLAIN)
    return 0;
  size_t n;
  while (sp->head_out.len) {
    int rc = mh__send_prog(sp, mh_buf_head(&sp->head_out), sp->head_out.len, &n);
    if (rc < 0)
      return rc;
    if (!n)
      return 0;
    mh_buf_consume(&sp->head_out, n);
  }
  mh_buf_trim(&sp->head_out);
  const char *d;
  size_t len;
  while ((len = mh_reasm_peek(&sp->ra, &d))) {
    int rc = mh__send_prog(sp, d, len, &n);
    if (rc < 0)
      return rc;
    if (!n)
      return 0;
    mh_reasm_skip(&sp->ra, n);
  }
  if (sp->give_up) {
    mh__finish(sp, sp->give_up);  /* every byte it could have went out */
    return 0;
  }
  if (sp->ra.pos != sp->total)
    return 0;
  mh__stats(sp, MH_SPLIT_END_DONE);  /* now: the program may end before a drain does */
  if (!mh__drain_first(sp))
    mh__finish(sp, MH_SPLIT_END_DONE);
  return 0;
}

int mh_split_want_write(const struct mh_split *sp) {
  const char *d;
  return (sp->state == SP_MANAGED || sp->state == SP_PLAIN) && (sp->head_out.len || mh_reasm_peek(&sp->ra, &d));
}
