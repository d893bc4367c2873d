/* Per-interface metrics store: bounded SRTT slots, a monotonic deque of 100 ms rate buckets, 1 s slots of train rates. */
#include "policy/metrics.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* One connection's latest RTT estimate. */
struct pol__rtt_slot {
  uint64_t conn;
  uint64_t rtt_us;
  uint64_t min_us; /* the lowest estimate this connection has shown */
  uint64_t at_us;  /* when it was recorded: it expires 5 minutes later */
  bool used;
  bool handshake; /* still the handshake time, no SRTT seen yet */
};

/* A closed 100 ms bucket kept in the max deque. */
struct pol__bucket {
  uint64_t idx; /* now_us / POL_BUCKET_US at the time the bytes arrived */
  uint64_t bytes;
};

/* The two fastest packet trains seen in one 1 s slot. */
struct pol__cap {
  uint64_t idx;   /* now_us / POL_CAP_SLOT_US */
  double rate[2]; /* rate[0] >= rate[1]; 0: none */
};

struct pol__iface {
  struct pol__rtt_slot rtt[POL_RTT_SLOTS];
  /* Ring indexed by slot idx % POL_CAP_SLOTS: a slot is overwritten only by one a whole
   * window later, after it expired, so a scan of the ring is the window's maximum. */
  struct pol__cap cap[POL_CAP_SLOTS];
  /* Sliding-window maximum: closed buckets with strictly increasing idx and strictly
   * decreasing bytes, so the front is the maximum of the window. A bucket that is no larger
   * than a later one can never be the maximum again (it expires first), so it is dropped
   * when the later one is pushed: each bucket is pushed and popped once, O(1) amortised.
   * Indices lie within one window, so POL_WINDOW_BUCKETS entries always suffice. */
  struct pol__bucket dq[POL_WINDOW_BUCKETS];
  unsigned dq_head;
  unsigned dq_len;
  /* The bucket still being filled; it joins the deque when a later bucket starts. */
  uint64_t cur_idx;
  uint64_t cur_bytes;
  bool cur_used;
  /* The bucket closed last, kept for cur_rate (the last complete 100 ms). */
  uint64_t prev_idx;
  uint64_t prev_bytes;
  bool prev_used;
  uint64_t rx_last; /* rx counter baseline */
  bool rx_used;
  uint32_t transfers;
  uint32_t conns;
};

struct pol_metrics {
  struct pol__iface ifc[POL_MAX_IFACES];
};

int pol_metrics_new(struct pol_metrics **out) {
  *out = calloc(1, sizeof(**out));
  return *out ? 0 : -ENOMEM;
}

void pol_metrics_free(struct pol_metrics *m) { free(m); }

int pol_metrics_reset(struct pol_metrics *m, unsigned iface) {
  if (iface >= POL_MAX_IFACES)
    return -EINVAL;
  memset(&m->ifc[iface], 0, sizeof(m->ifc[iface]));
  return 0;
}

static bool pol__rtt_live(const struct pol__rtt_slot *s, uint64_t now_us) {
  /* A sample from the future (caller's clock quirk) is live rather than wrapped to stale. */
  return s->used && (now_us < s->at_us || now_us - s->at_us < POL_METRICS_EXPIRY_US);
}

/* The slot of `conn`, or the slot to (re)use for it: a free one, else the least recently
 * updated (an expired slot is always older than a live one). */
static struct pol__rtt_slot *pol__rtt_slot_for(struct pol__iface *f, uint64_t conn, bool *found) {
  struct pol__rtt_slot *victim = NULL;
  for (unsigned i = 0; i < POL_RTT_SLOTS; i++) {
    struct pol__rtt_slot *s = &f->rtt[i];
    if (s->used && s->conn == conn) {
      *found = true;
      return s;
    }
    if (!s->used) {
      if (!victim || victim->used)
        victim = s;
    } else if (!victim || (victim->used && s->at_us < victim->at_us)) {
      victim = s;
    }
  }
  *found = false;
  return victim;
}

static int pol__rtt_put(struct pol_metrics *m, unsigned iface, uint64_t conn, uint64_t rtt_us, uint64_t now_us,
                        bool handshake) {
  if (iface >= POL_MAX_IFACES || rtt_us == 0)
    return -EINVAL;
  bool found;
  struct pol__rtt_slot *s = pol__rtt_slot_for(&m->ifc[iface], conn, &found);
  /* The handshake time is only a first estimate: TCP_INFO's SRTT replaces it, never the
   * other way round. */
  if (found && handshake && !s->handshake)
    return 0;
  /* A connection that fills its link's queue reports an SRTT inflated by that queue (on the
   * demo's 10 ms link, 16 ms); its lowest estimate, the handshake time included, is the
   * path's own latency. */
  uint64_t min_us = found && s->min_us < rtt_us ? s->min_us : rtt_us;
  *s = (struct pol__rtt_slot){
      .conn = conn, .rtt_us = rtt_us, .min_us = min_us, .at_us = now_us, .used = true, .handshake = handshake};
  return 0;
}

int pol_metrics_rtt(struct pol_metrics *m, unsigned iface, uint64_t conn, uint64_t srtt_us, uint64_t now_us) {
  return pol__rtt_put(m, iface, conn, srtt_us, now_us, false);
}

int pol_metrics_min_rtt(struct pol_metrics *m, unsigned iface, uint64_t conn, uint64_t min_rtt_us, uint64_t now_us) {
  if (iface >= POL_MAX_IFACES || min_rtt_us == 0 || min_rtt_us >= UINT32_MAX)
    return -EINVAL;
  bool found;
  struct pol__rtt_slot *s = pol__rtt_slot_for(&m->ifc[iface], conn, &found);
  if (!found)
    return -ENOENT;
  (void)now_us; /* the SRTT sample beside it dates the slot */
  if (min_rtt_us < s->min_us)
    s->min_us = min_rtt_us;
  return 0;
}

int pol_metrics_handshake(struct pol_metrics *m, unsigned iface, uint64_t conn, uint64_t rtt_us, uint64_t now_us) {
  return pol__rtt_put(m, iface, conn, rtt_us, now_us, true);
}

static bool pol__bucket_expired(uint64_t idx, uint64_t now_idx) { return idx + POL_WINDOW_BUCKETS <= now_idx; }

static void pol__dq_expire(struct pol__iface *f, uint64_t now_idx) {
  while (f->dq_len && pol__bucket_expired(f->dq[f->dq_head].idx, now_idx)) {
    f->dq_head = (f->dq_head + 1) % POL_WINDOW_BUCKETS;
    f->dq_len--;
  }
}

/* Moves the current bucket into the deque because bucket now_idx has begun. */
static void pol__close_bucket(struct pol__iface *f, uint64_t now_idx) {
  f->prev_idx = f->cur_idx;
  f->prev_bytes = f->cur_bytes;
  f->prev_used = true;
  f->cur_used = false;
  pol__dq_expire(f, now_idx);
  /* Pushed even if it is already out of the window: then so is everything before it, the
   * deque is empty, and pol__advance expires it right after. */
  while (f->dq_len) {
    unsigned back = (f->dq_head + f->dq_len - 1) % POL_WINDOW_BUCKETS;
    if (f->dq[back].bytes > f->cur_bytes)
      break;
    f->dq_len--;
  }
  /* Every entry left has a distinct idx in (now_idx - WINDOW, cur_idx) and cur_idx <
   * now_idx, so fewer than WINDOW - 1 remain: there is room. */
  unsigned tail = (f->dq_head + f->dq_len) % POL_WINDOW_BUCKETS;
  f->dq[tail] = (struct pol__bucket){.idx = f->cur_idx, .bytes = f->cur_bytes};
  f->dq_len++;
}

/* Closes the current bucket if now lies in a later one. */
static void pol__advance(struct pol__iface *f, uint64_t now_idx) {
  if (f->cur_used && now_idx > f->cur_idx)
    pol__close_bucket(f, now_idx);
  pol__dq_expire(f, now_idx);
}

int pol_metrics_bytes(struct pol_metrics *m, unsigned iface, uint64_t bytes, uint64_t now_us) {
  if (iface >= POL_MAX_IFACES)
    return -EINVAL;
  struct pol__iface *f = &m->ifc[iface];
  uint64_t idx = now_us / POL_BUCKET_US;
  pol__advance(f, idx);
  if (!f->cur_used) {
    /* A clock that stepped back must not reopen a bucket older than one already closed. */
    f->cur_idx = (f->prev_used && idx <= f->prev_idx) ? f->prev_idx + 1 : idx;
    f->cur_bytes = 0;
    f->cur_used = true;
  }
  f->cur_bytes += bytes;
  return 0;
}

int pol_metrics_rx_counter(struct pol_metrics *m, unsigned iface, uint64_t rx_total, uint64_t now_us) {
  if (iface >= POL_MAX_IFACES)
    return -EINVAL;
  struct pol__iface *f = &m->ifc[iface];
  bool counts = f->rx_used && rx_total >= f->rx_last;
  uint64_t delta = counts ? rx_total - f->rx_last : 0;
  f->rx_last = rx_total;
  f->rx_used = true;
  return counts ? pol_metrics_bytes(m, iface, delta, now_us) : 0;
}

static void pol__top2(double top[2], double r) {
  if (r > top[0]) {
    top[1] = top[0];
    top[0] = r;
  } else if (r > top[1]) {
    top[1] = r;
  }
}

int pol_metrics_capacity(struct pol_metrics *m, unsigned iface, double rate, uint64_t now_us) {
  if (iface >= POL_MAX_IFACES || !(rate > 0) || !isfinite(rate))
    return -EINVAL;
  uint64_t idx = now_us / POL_CAP_SLOT_US;
  struct pol__cap *c = &m->ifc[iface].cap[idx % POL_CAP_SLOTS];
  if (c->idx != idx)
    *c = (struct pol__cap){.idx = idx};
  pol__top2(c->rate, rate);
  return 0;
}

/* The second fastest train of the window ending at now: one train timed too short (its first
 * read late, the next ones on time) is an outlier the next train does not repeat, and a max
 * would keep it 5 minutes (and give it to every process through the host-wide store). A slot
 * from the future, a clock quirk, counts rather than expiring early. */
static double pol__cap_rate(const struct pol__iface *f, uint64_t now_us) {
  uint64_t now_idx = now_us / POL_CAP_SLOT_US;
  double top[2] = {0, 0};
  for (unsigned i = 0; i < POL_CAP_SLOTS; i++) {
    const struct pol__cap *c = &f->cap[i];
    if (c->rate[0] > top[1] && c->idx + POL_CAP_SLOTS > now_idx) {
      pol__top2(top, c->rate[0]);
      pol__top2(top, c->rate[1]);
    }
  }
  return top[1];
}

double pol_metrics_train_rate(struct pol_metrics *m, unsigned iface, uint64_t now_us) {
  return iface < POL_MAX_IFACES ? pol__cap_rate(&m->ifc[iface], now_us) : 0;
}

static int pol__count(uint32_t *c, int delta) {
  int64_t v = (int64_t)*c + delta;
  if (v < 0 || v > UINT32_MAX)
    return -EINVAL;
  *c = (uint32_t)v;
  return 0;
}

int pol_metrics_transfers(struct pol_metrics *m, unsigned iface, int delta) {
  return iface < POL_MAX_IFACES ? pol__count(&m->ifc[iface].transfers, delta) : -EINVAL;
}

int pol_metrics_conns(struct pol_metrics *m, unsigned iface, int delta) {
  return iface < POL_MAX_IFACES ? pol__count(&m->ifc[iface].conns, delta) : -EINVAL;
}

/* Buckets are bytes per 100 ms; rates are bytes per second. */
static double pol__bucket_rate(uint64_t bytes) { return (double)bytes * (1e6 / (double)POL_BUCKET_US); }

int pol_metrics_snapshot(struct pol_metrics *m, unsigned iface, uint64_t now_us, struct pol_path *out) {
  if (iface >= POL_MAX_IFACES)
    return -EINVAL;
  struct pol__iface *f = &m->ifc[iface];
  uint64_t now_idx = now_us / POL_BUCKET_US;
  pol__advance(f, now_idx);

  uint64_t max = f->dq_len ? f->dq[f->dq_head].bytes : 0;
  /* After pol__advance a current bucket is now_idx's own (or a later one, if the clock
   * stepped back): never expired. Still filling, it can only underestimate: safe for a max. */
  if (f->cur_used && f->cur_bytes > max)
    max = f->cur_bytes;
  out->max_rate = pol__bucket_rate(max);
  /* a slow-start-limited path's buckets hold one round each: its trains know its capacity */
  double cap = pol__cap_rate(f, now_us);
  if (cap > out->max_rate)
    out->max_rate = cap;
  /* For the same reason the last complete bucket, if it had bytes, is the one closed last. */
  bool last_complete = f->prev_used && now_idx > 0 && f->prev_idx == now_idx - 1;
  out->cur_rate = last_complete ? pol__bucket_rate(f->prev_bytes) : 0;

  uint64_t v[POL_RTT_SLOTS], lo = 0;
  unsigned n = 0;
  for (unsigned i = 0; i < POL_RTT_SLOTS; i++) {
    if (!pol__rtt_live(&f->rtt[i], now_us))
      continue;
    if (!lo || f->rtt[i].min_us < lo)
      lo = f->rtt[i].min_us;
    /* Insertion sort: at most 16 values. */
    unsigned j = n++;
    for (; j > 0 && v[j - 1] > f->rtt[i].rtt_us; j--)
      v[j] = v[j - 1];
    v[j] = f->rtt[i].rtt_us;
  }
  out->srtt_min_us = lo;
  out->srtt_med_us = !n ? 0 : (n & 1) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  out->transfers = f->transfers;
  out->conns = f->conns;
  return 0;
}
