/* An API transfer's statistics: the per-path snapshot taken on the loop (the split's (interface, server) paths, or the transfer's own connection), path up/down events, and the public stats calls. */
#include "mh_api_int.h"
#include "mh_clock.h"
#include "mh_path.h"
#include "mh_upstream.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The transfer's own connection as its one path (no split). */
static int mh__own_path(struct mhttp_xfer *x, struct mh_split_path *p) {
  if (!x->conn.iface[0])
    return 0;
  memset(p, 0, sizeof *p);
  memcpy(p->iface, x->conn.iface, sizeof p->iface);
  if (x->conn.next_addr > 0)
    p->replica = x->conn.addrs[x->conn.next_addr - 1];
  p->up = x->conn.up && x->st == MH__X_RELAY;
  p->bytes = x->rd.relay_off - x->rd.relay_base;
  p->srtt_us = x->conn.up ? mh_upstream_srtt_us(x->conn.up) : 0;
  p->in_flight = p->up && !x->rd.done_msg;
  return 1;
}

/* The user's number of the split's mirror k (mh__x_split_mirrors may have left some out). */
static unsigned mh__mirror_idx(const struct mhttp_xfer *x, unsigned k) {
  for (unsigned i = 0; k && i < x->mir.nmirrors; i++)
    if (x->mir.mirrors[i]->slot == (int)k - 1)
      return x->mir.mirrors[i]->idx;
  return 0;
}

/* Merges one path into the snapshot (under mu): a path is an (interface, server, mirror). */
static void mh__merge(struct mhttp_xfer *x, const struct mh_split_path *p) {
  char replica[46] = "";
  if (p->replica.ss_family)
    mh_path_ntop((const struct sockaddr *)&p->replica, replica, sizeof replica);
  unsigned mirror = mh__mirror_idx(x, p->mirror), i = 0;
  while (i < x->rep.npaths && (strcmp(x->rep.paths[i].iface, p->iface) || strcmp(x->rep.paths[i].replica, replica) ||
                               x->rep.paths[i].mirror != mirror))
    i++;
  if (i == MH__API_PATHS)
    return; /* bounded: the first MH__API_PATHS paths are reported */
  struct mh__xpath *q = &x->rep.paths[i];
  if (i == x->rep.npaths) {
    memset(q, 0, sizeof *q);
    memcpy(q->iface, p->iface, sizeof q->iface);
    memcpy(q->replica, replica, sizeof q->replica);
    q->mirror = mirror;
    x->rep.npaths++;
  }
  q->up = p->up;
  if (p->dropped && !q->dropped) {
    q->dropped = p->dropped;
    q->why = p->why;
  }
  if (p->bytes > q->bytes)
    q->bytes = p->bytes;
  q->srtt_us = p->srtt_us;
  q->in_flight = p->in_flight;
}

/* The rates, one way for the transfer and its paths: bytes over the same window (the last
 * second while it runs; from start to end once it ended, so a short transfer has its real
 * average and the paths add up to the transfer's rate, duplicates aside). Under mu. */
static void mh__rates(struct mhttp_xfer *x, uint64_t now) {
  int ended = x->st == MH__X_ENDED;
  uint64_t since = ended ? x->t_start_us : x->rep.rate_t_us;
  if (now <= since || (!ended && now - since < 1000000))
    return;
  double dt = (double)(now - since) / 1e6;
  uint64_t got = x->rep.done - x->rs.resumed; /* what this transfer delivered (resumed bytes aside) */
  x->rep.rate = (double)(got - (ended ? 0 : x->rep.rate_done)) / dt;
  x->rep.rate_t_us = now;
  x->rep.rate_done = got;
  for (unsigned i = 0; i < x->rep.npaths; i++) {
    struct mh__xpath *q = &x->rep.paths[i];
    q->rate = (double)(q->bytes - (ended ? 0 : q->rate_bytes)) / dt;
    q->rate_bytes = q->bytes;
  }
}

/* The transfer's figures from its paths (under mu). */
static void mh__totals(struct mhttp_xfer *x, uint64_t now) {
  uint64_t fetched = 0;
  unsigned used = 0;
  for (unsigned i = 0; i < x->rep.npaths; i++)
    fetched += x->rep.paths[i].bytes, used += x->rep.paths[i].bytes > 0;
  x->rep.fetched = fetched;
  x->rep.split_used = used > 1;
  mh__rates(x, now);
}

/* A path whose server left the object (mh_split_path.dropped) goes down with its cause, once:
 * another representation or an unusable answer is MHTTP_E_PROTOCOL; a connection that failed
 * MHTTP_E_CERT, MHTTP_E_TLS or MHTTP_E_CONNECT, as the transfer's own connection would. */
static void mh__dropped_event(struct mhttp_xfer *x, const struct mh__xpath *p) {
  char msg[160];
  if (p->dropped == MH_SPLIT_PATH_BAD) {
    const char *why = p->why && *p->why ? p->why : "unusable answer";
    if (p->mirror)
      snprintf(msg, sizeof msg, "mirror at %s answered otherwise: %s", p->replica, why);
    else /* the URL's server or a replica of it: an answer, or answers that trickle */
      snprintf(msg, sizeof msg, "server %s: %s", p->replica, why);
    mh__x_path_event(x, 0, p, MHTTP_E_PROTOCOL, msg);
    return;
  }
  mhttp_code c = p->dropped == -EKEYREJECTED ? MHTTP_E_CERT : p->dropped == -EPROTO ? MHTTP_E_TLS : MHTTP_E_CONNECT;
  const char *why = c == MHTTP_E_CERT  ? "its certificate did not verify (name or CA)"
                    : c == MHTTP_E_TLS ? "the TLS handshake failed"
                                       : strerror(-p->dropped); /* not "Key was rejected by service" */
  snprintf(msg, sizeof msg, "could not connect to %s: %s", p->replica, why);
  mh__x_path_event(x, 0, p, c, msg);
}

void mh__x_tick_stats(struct mhttp_xfer *x, uint64_t now) {
  struct mh_split_path p[MH__API_PATHS];
  int n = x->sp ? mh_split_paths(x->sp, p, MH__API_PATHS) : mh__own_path(x, p);
  if (n > MH__API_PATHS)
    n = MH__API_PATHS;
  int ended = x->st == MH__X_ENDED;
  pthread_mutex_lock(&x->s->mu);
  for (int i = 0; i < n; i++) {
    p[i].up = p[i].up && !ended;
    mh__merge(x, &p[i]);
  }
  for (unsigned i = 0; ended && i < x->rep.npaths; i++)
    x->rep.paths[i].up = 0; /* every path is down at the end, the split's included */
  mh__totals(x, now);
  struct mh__xpath ev[MH__API_PATHS];
  unsigned char drop[MH__API_PATHS];
  unsigned nev = 0;
  /* path events follow MHTTP_EV_START: the split's other paths connect while the first answer
   * is on its way, and a caller reads EV_START as the transfer's beginning */
  for (unsigned i = 0; (x->dst.head_seen || ended) && i < x->rep.npaths; i++) {
    struct mh__xpath *q = &x->rep.paths[i];
    drop[nev] = q->dropped && !q->told_dropped;
    if (q->up == q->told_up && !drop[nev])
      continue;
    q->told_dropped |= drop[nev];
    q->told_up = q->up;
    ev[nev++] = *q;
  }
  pthread_mutex_unlock(&x->s->mu);
  for (unsigned i = 0; i < nev; i++) { /* outside the lock: the callback may ask for stats */
    if (drop[i])
      mh__dropped_event(x, &ev[i]);
    else
      mh__x_path_event(x, ev[i].up, &ev[i], MHTTP_OK, NULL);
  }
}

MHTTP_API mhttp_code mhttp_xfer_stats_get(const mhttp_xfer *x, mhttp_xfer_stats *st) {
  if (!x || !st || st->size < sizeof st->size)
    return MHTTP_E_INVAL;
  mhttp_xfer_stats v = {.size = sizeof v};
  pthread_mutex_lock(&x->s->mu);
  v.http_status = x->rep.http_status;
  v.total = x->rep.total;
  v.done = x->rep.done;
  v.fetched = x->rep.fetched;
  v.resumed = x->rs.resumed;
  v.rate = x->rep.rate;
  uint64_t end = x->st == MH__X_ENDED ? x->t_end_us : 0;
  v.elapsed = x->t_start_us ? ((end ? end : mh_now_us()) - x->t_start_us) / 1e6 : 0;
  for (unsigned i = 0; i < x->rep.npaths; i++)
    v.paths += x->rep.paths[i].bytes > 0;
  v.split = x->rep.split_used;
  v.restarted = x->rs.restarted;
  pthread_mutex_unlock(&x->s->mu);
  size_t n = st->size < sizeof v ? st->size : sizeof v;
  memcpy((char *)st + sizeof st->size, (char *)&v + sizeof v.size, n - sizeof v.size);
  return MHTTP_OK;
}

MHTTP_API mhttp_code mhttp_xfer_path_stats(const mhttp_xfer *x, mhttp_path_stats *out, unsigned max, unsigned *n) {
  if (!x || !n || (max && (!out || out[0].size < sizeof out[0].size)))
    return MHTTP_E_INVAL;
  size_t stride = max ? out[0].size : 0; /* the caller's struct: an older one may be shorter */
  pthread_mutex_lock(&x->s->mu);
  *n = x->rep.npaths;
  for (unsigned i = 0; i < x->rep.npaths && i < max; i++) {
    const struct mh__xpath *q = &x->rep.paths[i];
    mhttp_path_stats v = {.size = stride,
                          .up = q->up,
                          .bytes = q->bytes,
                          .rate = q->rate,
                          .srtt_us = q->srtt_us,
                          .in_flight = q->in_flight,
                          .mirror = q->mirror};
    memcpy(v.iface, q->iface, sizeof v.iface);
    memcpy(v.replica, q->replica, sizeof v.replica);
    memcpy((char *)out + i * stride, &v, stride < sizeof v ? stride : sizeof v);
  }
  pthread_mutex_unlock(&x->s->mu);
  return MHTTP_OK;
}
