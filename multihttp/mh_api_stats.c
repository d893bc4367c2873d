/* An API transfer's statistics: the per-path snapshot taken on the loop (from the split's paths, or the transfer's own connection), path up/down events, and the public stats calls. */
#include "mh_api_int.h"
#include "mh_clock.h"
#include "mh_path.h"
#include "mh_upstream.h"

#include <string.h>

/* The transfer's own connection as its one path (no split). */
static int mh__own_path(struct mhttp_xfer *x, struct mh_split_path *p) {
  if (!x->iface[0])
    return 0;
  memset(p, 0, sizeof *p);
  memcpy(p->iface, x->iface, sizeof p->iface);
  if (x->next_addr > 0)
    p->replica = x->addrs[x->next_addr - 1];
  p->up = x->up && x->st == MH__X_RELAY;
  p->bytes = x->relay_off;
  p->srtt_us = x->up ? mh_upstream_srtt_us(x->up) : 0;
  p->in_flight = p->up && !x->done_msg;
  return 1;
}

/* Merges one path into the snapshot (under mu). */
static void mh__merge(struct mhttp_xfer *x, const struct mh_split_path *p, uint64_t now) {
  unsigned i = 0;
  while (i < x->npaths && strcmp(x->paths[i].iface, p->iface))
    i++;
  if (i == MH__API_PATHS)
    return;
  struct mh__xpath *q = &x->paths[i];
  if (i == x->npaths) {
    memset(q, 0, sizeof *q);
    memcpy(q->iface, p->iface, sizeof q->iface);
    q->rate_t_us = x->t_start_us;
    x->npaths++;
  }
  if (p->replica.ss_family)
    mh_path_ntop((const struct sockaddr *)&p->replica, q->replica, sizeof q->replica);
  q->up = p->up;
  if (p->bytes > q->bytes)
    q->bytes = p->bytes;
  q->srtt_us = p->srtt_us;
  q->in_flight = p->in_flight;
  if (now - q->rate_t_us >= 1000000 || x->st == MH__X_ENDED) {  /* the rate over the last second */
    q->rate = now > q->rate_t_us ? (q->bytes - q->rate_bytes) * 1e6 / (double)(now - q->rate_t_us) : 0;
    q->rate_t_us = now;
    q->rate_bytes = q->bytes;
  }
}

/* The transfer's figures from its paths (under mu). */
static void mh__totals(struct mhttp_xfer *x, uint64_t now) {
  uint64_t fetched = 0;
  unsigned used = 0;
  for (unsigned i = 0; i < x->npaths; i++)
    fetched += x->paths[i].bytes, used += x->paths[i].bytes > 0;
  x->fetched = fetched;
  x->split_used = used > 1;
  if (now - x->rate_t_us >= 1000000) {
    x->rate = (x->done - x->rate_done) * 1e6 / (double)(now - x->rate_t_us);
    x->rate_t_us = now;
    x->rate_done = x->done;
  }
}

void mh__x_tick_stats(struct mhttp_xfer *x, uint64_t now) {
  struct mh_split_path p[MH__API_PATHS];
  int n = x->sp ? mh_split_paths(x->sp, p, MH__API_PATHS) : mh__own_path(x, p);
  if (n > MH__API_PATHS)
    n = MH__API_PATHS;
  int ended = x->st == MH__X_ENDED;
  unsigned char was_up[MH__API_PATHS];
  pthread_mutex_lock(&x->s->mu);
  for (unsigned i = 0; i < MH__API_PATHS; i++)
    was_up[i] = i < x->npaths && x->paths[i].up;
  for (int i = 0; i < n; i++) {
    p[i].up = p[i].up && !ended;
    mh__merge(x, &p[i], now);
  }
  for (unsigned i = 0; ended && i < x->npaths; i++)
    x->paths[i].up = 0;  /* every path is down at the end, the split's included */
  mh__totals(x, now);
  struct mh__xpath ev[MH__API_PATHS];
  unsigned nev = 0;
  for (unsigned i = 0; i < x->npaths; i++)
    if (x->paths[i].up != was_up[i])
      ev[nev++] = x->paths[i];
  pthread_mutex_unlock(&x->s->mu);
  for (unsigned i = 0; i < nev; i++)  /* outside the lock: the callback may ask for stats */
    mh__x_event(x, ev[i].up ? MHTTP_EV_PATH_UP : MHTTP_EV_PATH_DOWN, ev[i].iface, ev[i].replica);
}

MHTTP_API mhttp_code mhttp_xfer_stats_get(const mhttp_xfer *x, mhttp_xfer_stats *st) {
  if (!x || !st || st->size < sizeof st->size)
    return MHTTP_E_INVAL;
  mhttp_xfer_stats v = {.size = sizeof v};
  pthread_mutex_lock(&x->s->mu);
  v.http_status = x->http_status;
  v.total = x->total;
  v.done = x->done;
  v.fetched = x->fetched;
  v.resumed = x->resumed;
  v.rate = x->rate;
  uint64_t end = x->st == MH__X_ENDED ? x->t_end_us : 0;
  v.elapsed = x->t_start_us ? ((end ? end : mh_now_us()) - x->t_start_us) / 1e6 : 0;
  for (unsigned i = 0; i < x->npaths; i++)
    v.paths += x->paths[i].bytes > 0;
  v.split = x->split_used;
  pthread_mutex_unlock(&x->s->mu);
  size_t n = st->size < sizeof v ? st->size : sizeof v;
  memcpy((char *)st + sizeof st->size, (char *)&v + sizeof v.size, n - sizeof v.size);
  return MHTTP_OK;
}

MHTTP_API mhttp_code mhttp_xfer_path_stats(const mhttp_xfer *x, mhttp_path_stats *out, unsigned max, unsigned *n) {
  if (!x || !n || (max && (!out || out[0].size < sizeof out[0].size)))
    return MHTTP_E_INVAL;
  size_t stride = max ? out[0].size : 0;  /* the caller's struct: an older one may be shorter */
  pthread_mutex_lock(&x->s->mu);
  *n = x->npaths;
  for (unsigned i = 0; i < x->npaths && i < max; i++) {
    const struct mh__xpath *q = &x->paths[i];
    mhttp_path_stats v = {.size = stride, .up = q->up, .bytes = q->bytes, .rate = q->rate,
                          .srtt_us = q->srtt_us, .in_flight = q->in_flight};
    memcpy(v.iface, q->iface, sizeof v.iface);
    memcpy(v.replica, q->replica, sizeof v.replica);
    memcpy((char *)out + i * stride, &v, stride < sizeof v ? stride : sizeof v);
  }
  pthread_mutex_unlock(&x->s->mu);
  return MHTTP_OK;
}
