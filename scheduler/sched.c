/* mHTTP Algorithm 1 generalised to N connections, with request pipelining and tail re-split. */
#include "scheduler/sched.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "scheduler/estimate.h"

/* One request on a connection. Bytes arrive in order: [off, next) arrived; [next, live_end)
 * the object still needs from here; [live_end, wire_end) were re-split to another connection
 * but the server sends them anyway (HTTP/1.1 cannot shorten a response). */
struct sched__req {
  uint64_t off;
  uint64_t next;
  uint64_t live_end;
  uint64_t wire_end;
  uint64_t issued_us;
  bool started; /* first byte arrived */
};

/* Round trips after its first byte before a connection's rate counts as settled: slow start
 * doubles per round trip, so 8 covers a window 256 times the initial one. */
#define SCHED__SETTLE_RTTS 8

/* While another connection's first chunks are out, the floor of the bound on requests holds
 * only for an object with at least this many floors left (sched__size). */
#define SCHED__FIRST_ROUNDS_FLOORS 16

struct sched__conn {
  bool failed;
  struct sched_hmean rate;
  uint64_t first_data_us; /* its first body byte (0: none yet) */
  double rtl_us;
  bool has_rtl;
  bool sampling; /* a previous read exists since the connection last went busy */
  uint64_t sample_at_us;
  uint64_t sample_bytes; /* bytes read since sample_at_us */
  uint32_t chunks;
  enum sched_case last_case;
  uint64_t last_len;
  uint32_t qlen;
  struct sched__req q[SCHED_MAX_QUEUE]; /* q[0] is the response now arriving */
};

struct sched {
  struct sched_config cfg;
  struct sched_ledger *ledger;
  bool end; /* Algorithm 1's END: a balancing chunk was issued, the tail began */
  uint32_t nconns;
  struct sched__conn *c; /* cfg.max_conns slots, allocated once */
};

void sched_config_default(struct sched_config *cfg) {
  *cfg = (struct sched_config){
      .initial_chunk = 32 * 1024,
      .min_chunk = 16 * 1024,
      .tmax_rtts = 20,
      .pipeline = true,
      .pipeline_rtts = 2,
      .max_queue = 4,
      .hm_window = 64,
      .sample_min_us = 1000,
      .default_rtt_us = 100000,
      .max_conns = 8,
      .resplit_gain_rtts = 1,
      .steady_chunk = 256 * 1024,
      .floor_rtts = 2,
      .steady_share = 64,
      .steady_share_cap = 1024 * 1024,
      .tail_chunk = 64 * 1024,
  };
}

int sched_new(const struct sched_config *cfg, uint64_t total_len, struct sched **out) {
  struct sched_config def;
  sched_config_default(&def);
  if (!cfg)
    cfg = &def;
  if (!out || cfg->initial_chunk == 0 || cfg->max_conns == 0 || cfg->max_queue == 0 ||
      cfg->max_queue > SCHED_MAX_QUEUE || !(cfg->tmax_rtts > 0) || cfg->pipeline_rtts < 0 || cfg->floor_rtts < 0)
    return -EINVAL;
  struct sched *s = calloc(1, sizeof(*s));
  if (!s)
    return -ENOMEM;
  s->cfg = *cfg;
  s->c = calloc(cfg->max_conns, sizeof(*s->c));
  int rc = s->c ? sched_ledger_new(total_len, &s->ledger) : -ENOMEM;
  if (rc) {
    free(s->c);
    free(s);
    return rc;
  }
  *out = s;
  return 0;
}

void sched_free(struct sched *s) {
  if (!s)
    return;
  sched_ledger_free(s->ledger);
  free(s->c);
  free(s);
}

static struct sched__conn *sched__conn(const struct sched *s, int conn) {
  return conn >= 0 && (uint32_t)conn < s->nconns ? &s->c[conn] : NULL;
}

int sched_set_probe_chunk(struct sched *s, uint64_t size) {
  if (!size || sched_ledger_total(s->ledger) != SCHED_LEN_UNKNOWN)
    return -EINVAL;
  for (uint32_t i = 0; i < s->nconns; i++)
    if (s->c[i].chunks || s->c[i].qlen)
      return -EBUSY;
  s->cfg.probe_chunk = size;
  return 0;
}

int64_t sched_prefill(struct sched *s, uint64_t off, uint64_t len) {
  if (sched_ledger_total(s->ledger) == SCHED_LEN_UNKNOWN)
    return -EINVAL;
  return sched_ledger_receive_any(s->ledger, off, len);
}

int sched_set_total(struct sched *s, uint64_t total) {
  int rc = sched_ledger_set_total(s->ledger, total);
  if (rc)
    return rc;
  /* The probe asked for more than exists: the server sends only up to the end. */
  for (uint32_t i = 0; i < s->nconns; i++) {
    struct sched__conn *c = &s->c[i];
    uint32_t keep = 0;
    for (uint32_t k = 0; k < c->qlen; k++) {
      struct sched__req r = c->q[k];
      if (r.off >= total)
        continue;
      if (r.live_end > total)
        r.live_end = total;
      if (r.wire_end > total)
        r.wire_end = total;
      c->q[keep++] = r;
    }
    c->qlen = keep;
    if (keep == 0)
      c->sampling = false;
  }
  return 0;
}

int sched_conn_add(struct sched *s, uint64_t now_us) {
  (void)now_us;
  uint32_t id = s->nconns;
  /* every id used: a failed one owns nothing in the ledger any more (sched_conn_failed) */
  for (uint32_t k = 0; id == s->cfg.max_conns && k < s->nconns; k++)
    if (s->c[k].failed)
      id = k;
  if (id == s->cfg.max_conns)
    return -ENOSPC;
  struct sched__conn *c = &s->c[id];
  *c = (struct sched__conn){0};
  sched_hmean_init(&c->rate, s->cfg.hm_window);
  if (id == s->nconns)
    s->nconns++;
  return (int)id;
}

int sched_on_rtt(struct sched *s, int conn, uint32_t rtt_us) {
  struct sched__conn *c = sched__conn(s, conn);
  if (!c || rtt_us == 0)
    return -EINVAL;
  if (c->failed)
    return -ENOTCONN;
  c->rtl_us = c->has_rtl ? sched_rtl_ewma(c->rtl_us, rtt_us) : rtt_us;
  c->has_rtl = true;
  return 0;
}

int sched_on_resume(struct sched *s, int conn) {
  struct sched__conn *c = sched__conn(s, conn);
  if (!c)
    return -EINVAL;
  if (c->failed)
    return -ENOTCONN;
  c->sampling = false;
  return 0;
}

static double sched__rtl_s(const struct sched *s, const struct sched__conn *c) {
  return (c->has_rtl ? c->rtl_us : s->cfg.default_rtt_us) / 1e6;
}

/* Bytes the connection will still carry, and of those the ones the object needs. */
static uint64_t sched__wire_left(const struct sched__conn *c) {
  uint64_t n = 0;
  for (uint32_t k = 0; k < c->qlen; k++)
    n += c->q[k].wire_end - c->q[k].next;
  return n;
}

static uint64_t sched__live_left(const struct sched__conn *c) {
  uint64_t n = 0;
  for (uint32_t k = 0; k < c->qlen; k++)
    if (c->q[k].live_end > c->q[k].next)
      n += c->q[k].live_end - c->q[k].next;
  return n;
}

/* Seconds until the first byte of the head response, if it has not come yet: a request
 * sent one rtl ago should be arriving now. */
static double sched__wait_s(const struct sched *s, const struct sched__conn *c, uint64_t now_us) {
  if (c->qlen == 0 || c->q[0].started)
    return 0;
  double waited = now_us > c->q[0].issued_us ? (now_us - c->q[0].issued_us) / 1e6 : 0;
  double w = sched__rtl_s(s, c) - waited;
  return w > 0 ? w : 0;
}

/* Seconds until the connection has carried everything outstanding (0 when idle). */
static double sched__busy_s(const struct sched *s, const struct sched__conn *c, uint64_t now_us) {
  if (c->qlen == 0)
    return 0;
  return sched__wait_s(s, c, now_us) + sched__wire_left(c) / c->rate.mean;
}

/* The least connection c asks in Algorithm 1's steady state (case 3), sched_config's bound on
 * requests per object, but never more than by_end, what c delivers by the joint finish of every
 * connection: near the end a range the bound lengthened would make c the straggler, so there
 * (the tail) the balanced share goes out as Algorithm 1 sized it. */
static uint64_t sched__least(const struct sched *s, const struct sched__conn *c, double by_end) {
  double least = floor(s->cfg.floor_rtts * c->rate.mean * sched__rtl_s(s, c));
  uint64_t total = sched_ledger_total(s->ledger);
  uint64_t share = s->cfg.steady_share && total != SCHED_LEN_UNKNOWN ? total / s->cfg.steady_share : 0;
  if (share > s->cfg.steady_share_cap)
    share = s->cfg.steady_share_cap;
  if (least < (double)share)
    least = (double)share;
  if (least < (double)s->cfg.steady_chunk)
    least = (double)s->cfg.steady_chunk;
  if (least > by_end)
    least = floor(by_end);
  return least > (double)s->cfg.min_chunk ? (uint64_t)least : s->cfg.min_chunk;
}

/* Case 4 of Algorithm 1: nothing is known about connection c's path yet. A chunk that arrived
 * without giving a sample (one or two reads on a fast path) doubles the next one, so a
 * connection can never stay stuck on probe-sized chunks; 2^10 · initial is far past any T_max. */
static uint64_t sched__size_unknown(const struct sched *s, const struct sched__conn *c, uint64_t left) {
  uint64_t size = s->cfg.initial_chunk << (c->chunks < 10 ? c->chunks : 10);
  if (left == SCHED_LEN_UNKNOWN && s->cfg.probe_chunk)
    size = s->cfg.probe_chunk; /* the probe itself */
  return left < size ? left : size;
}

/* β and R̄_k for connection i: the earliest time any other measured connection will be free
 * (INFINITY: none), counted from when i's own outstanding bytes are through, and the sum of
 * their rates. Returns whether another connection's first chunks are out (no joint finish). */
static bool sched__others(const struct sched *s, int i, uint64_t now_us, double *beta, double *rk) {
  bool first_rounds = false;
  *beta = INFINITY;
  *rk = 0;
  for (uint32_t k = 0; k < s->nconns; k++) {
    const struct sched__conn *o = &s->c[k];
    if ((int)k == i || o->failed)
      continue;
    if (o->rate.n == 0) {
      first_rounds |= o->qlen > 0;
      continue; /* a connection still probing has no rate to plan with */
    }
    *rk += o->rate.mean;
    double b = sched__busy_s(s, o, now_us);
    if (b < *beta)
      *beta = b;
  }
  if (isfinite(*beta)) {
    *beta -= sched__busy_s(s, &s->c[i], now_us);
    if (*beta < 0)
      *beta = 0;
  }
  return first_rounds;
}

/* Algorithm 1 for connection i: the size of its next chunk given `left` = L − δ missing bytes.
 * β is generalised to N connections: the earliest time any other measured connection will be
 * free, and R̄_k the sum of their rates. With pipelining the new chunk only starts once i's
 * own outstanding bytes are through, so β is counted from then (β − a_i). */
static uint64_t sched__size(struct sched *s, int i, uint64_t now_us, uint64_t left, enum sched_case *kase) {
  struct sched__conn *c = &s->c[i];
  if (c->chunks == 0 || c->rate.n == 0) {
    *kase = SCHED_CASE_PROBE;
    return sched__size_unknown(s, c, left);
  }
  double ri = c->rate.mean;
  double tmax = s->cfg.tmax_rtts * sched__rtl_s(s, c);
  double beta, rk;
  bool first_rounds = sched__others(s, i, now_us, &beta, &rk);
  double L = (double)left, t;
  /* Case 2's T: T·R̄_i + (T − β)·ΣR̄_k = L − δ, so every connection ends together. */
  double joint = rk > 0 ? (L + beta * rk) / (ri + rk) : L / ri;
  bool constraint = beta * ri >= L || s->end;
  if (tmax * ri >= L && constraint) {
    *kase = SCHED_CASE_ALL; /* case 1 */
    t = L / ri;
  } else {
    t = joint;
    if (t <= tmax) {
      s->end = true;
      *kase = SCHED_CASE_BALANCE;
    } else {
      t = tmax; /* case 3: far from the end */
      *kase = SCHED_CASE_TMAX;
    }
  }
  /* The epsilon keeps exact products (0.135 s · 10 MB/s) from flooring one byte short. */
  double want = floor(t * ri + 1e-6);
  uint64_t size = want >= L ? left : (uint64_t)want;
  uint64_t least = *kase == SCHED_CASE_TMAX ? sched__least(s, c, joint * ri) : s->cfg.min_chunk;
  /* Before another connection's rate is known there is no joint finish: a floor on a slow path
   * could outlast a small object (a 2 Mbit/s path's 256 KiB is a second), so only an object
   * with SCHED__FIRST_ROUNDS_FLOORS floors left keeps it meanwhile. */
  if (first_rounds && left < SCHED__FIRST_ROUNDS_FLOORS * least)
    least = s->cfg.min_chunk;
  if (size < least)
    size = least;
  /* A leftover smaller than min_chunk would cost someone a whole round trip: take it now. (One
   * below the floor stays: near the end it is another connection's balanced share.) */
  if (size >= left || left - size < s->cfg.min_chunk)
    size = left;
  return size;
}

static void sched__push(struct sched__conn *c, struct sched_range r, uint64_t now_us, enum sched_case kase) {
  c->q[c->qlen++] = (struct sched__req){
      .off = r.off, .next = r.off, .live_end = r.off + r.len, .wire_end = r.off + r.len, .issued_us = now_us};
  c->chunks++;
  c->last_case = kase;
  c->last_len = r.len;
}

/* Why next_range would refuse right now (0 when it would hand out a range). */
static int sched__can_request(const struct sched *s, const struct sched__conn *c) {
  if (!c)
    return -EINVAL;
  if (c->failed)
    return -ENOTCONN;
  if (c->qlen >= s->cfg.max_queue)
    return -EBUSY;
  if (sched_ledger_total(s->ledger) == SCHED_LEN_UNKNOWN) {
    /* Before the size is known only the probe may go out: one chunk, on one connection
     * (again on another if that one failed and released it). */
    if (sched_ledger_bytes(s->ledger, SCHED_MISSING, SCHED_NOBODY) != SCHED_LEN_UNKNOWN)
      return -EAGAIN;
    return 0;
  }
  return sched_ledger_bytes(s->ledger, SCHED_MISSING, SCHED_NOBODY) ? 0 : -ENODATA;
}

int sched_next_range(struct sched *s, int conn, uint64_t now_us, struct sched_range *out) {
  return sched_next_range_upto(s, conn, now_us, 0, out);
}

static int sched__next(struct sched *s, int conn, uint64_t now_us, uint64_t max, bool last, struct sched_range *out) {
  struct sched__conn *c = sched__conn(s, conn);
  int rc = sched__can_request(s, c);
  if (rc)
    return rc;
  if (!out)
    return -EINVAL;
  uint64_t left = sched_ledger_bytes(s->ledger, SCHED_MISSING, SCHED_NOBODY);
  enum sched_case kase;
  uint64_t size = sched__size(s, conn, now_us, left, &kase);
  if (max && size > max)
    size = max;
  struct sched_range r;
  rc = last ? sched_ledger_assign_last(s->ledger, conn, size, &r) : sched_ledger_assign(s->ledger, conn, size, &r);
  if (rc)
    return rc;
  sched__push(c, r, now_us, kase);
  *out = r;
  return 0;
}

int sched_next_range_upto(struct sched *s, int conn, uint64_t now_us, uint64_t max, struct sched_range *out) {
  return sched__next(s, conn, now_us, max, false, out);
}

int sched_next_range_last(struct sched *s, int conn, uint64_t now_us, uint64_t max, struct sched_range *out) {
  return sched__next(s, conn, now_us, max, true, out);
}

int sched_next_range_sized(struct sched *s, int conn, uint64_t now_us, uint64_t size, struct sched_range *out) {
  struct sched__conn *c = sched__conn(s, conn);
  int rc = sched__can_request(s, c);
  if (rc)
    return rc;
  if (!out || !size)
    return -EINVAL;
  if (sched_ledger_total(s->ledger) == SCHED_LEN_UNKNOWN)
    return -EAGAIN; /* only the probe goes out before the size is known */
  struct sched_range r;
  rc = sched_ledger_assign(s->ledger, conn, size, &r);
  if (rc)
    return rc;
  sched__push(c, r, now_us, SCHED_CASE_PROBE);
  *out = r;
  return 0;
}

uint32_t sched_early_depth(const struct sched *s, int conn, uint64_t now_us, uint64_t finish_us, uint64_t init_window,
                           uint32_t base) {
  const struct sched__conn *c = sched__conn(s, conn);
  uint32_t depth = base < s->cfg.max_queue ? base : s->cfg.max_queue;
  if (!c || c->failed || c->rate.n || !c->has_rtl || c->rtl_us <= 0 || !init_window || finish_us <= now_us)
    return depth;
  double rounds = floor((finish_us - now_us) / c->rtl_us) - 1; /* the first carries the request */
  if (rounds < 1 || rounds >= SCHED__SETTLE_RTTS)
    return depth; /* nothing to gain, or its rate settles in time to size its requests */
  /* slow start delivers init_window · (2^rounds − 1); chunk k is initial_chunk · 2^k */
  double cap = (double)init_window * (ldexp(1, (int)rounds) - 1);
  /* one slot stays free: the first rate sample may size a request at once (asym, 1 MiB: lte0's
   * first sample came from a burst at 2.4 MB/s and asked 820 kB; with every slot taken by
   * case-4 chunks it waited for them, and its later samples read 9-100 kB/s) */
  uint32_t n = 0;
  while (n + 1 < s->cfg.max_queue && (double)s->cfg.initial_chunk * (ldexp(1, (int)n + 1) - 1) <= cap)
    n++;
  return n > depth ? n : depth;
}

bool sched_want_pipeline(const struct sched *s, int conn, uint64_t now_us) {
  (void)now_us;
  const struct sched__conn *c = sched__conn(s, conn);
  if (sched__can_request(s, c))
    return false;
  if (c->qlen == 0)
    return true;
  if (!s->cfg.pipeline || c->rate.n == 0)
    return false;
  double bdp = c->rate.mean * sched__rtl_s(s, c);
  return (double)sched__wire_left(c) < s->cfg.pipeline_rtts * bdp;
}

int sched_on_data(struct sched *s, int conn, uint64_t off, uint64_t len, uint64_t now_us) {
  struct sched__conn *c = sched__conn(s, conn);
  if (!c)
    return -EINVAL;
  if (c->failed)
    return -ENOTCONN;
  if (c->qlen == 0)
    return -EPROTO;
  struct sched__req *h = &c->q[0];
  if (len == 0 || len > INT32_MAX)
    return -EINVAL; /* the return value must be able to say "all of it" */
  if (off != h->next || len > h->wire_end - h->next)
    return -ERANGE;
  bool first = !h->started;
  if (!c->first_data_us)
    c->first_data_us = now_us ? now_us : 1;
  if (first) {
    h->started = true;
    /* Without any RTT sample yet, request-to-first-byte is the best latency we have. */
    if (!c->has_rtl && now_us > h->issued_us) {
      c->rtl_us = (double)(now_us - h->issued_us);
      c->has_rtl = true;
    }
  }
  /* Every byte that has not arrived yet counts, whichever connection brings it: a victim's
   * server still sends the bytes a re-split gave away, and when the victim turns out faster
   * than its estimate (a rate that was still climbing, a loss it has recovered from) it
   * delivers them before the taker. Refusing them made the object wait for the taker's
   * copies (the model on demo links with slow start, 4 MiB, the 50 ms link's reads held
   * back 100 ms as by a loss: bench/split/README.md). */
  int64_t acc = sched_ledger_receive_any(s->ledger, off, len);
  if (acc < 0)
    return -EPROTO;
  /* Throughput: bytes since the previous sample over the time since it. The first read of a
   * response only marks the start: before it the server may have sat idle waiting for the
   * request (a request pipelined too late, or none outstanding), and one such interval would
   * drag the harmonic mean down for dozens of samples. */
  if (c->sampling && !first) {
    c->sample_bytes += len;
    uint64_t dt = now_us - c->sample_at_us;
    if (now_us > c->sample_at_us && dt >= s->cfg.sample_min_us) {
      sched_hmean_add(&c->rate, c->sample_bytes * 1e6 / dt);
      c->sample_at_us = now_us;
      c->sample_bytes = 0;
    }
  } else {
    c->sampling = true;
    c->sample_at_us = now_us;
    c->sample_bytes = 0;
  }
  h->next += len;
  if (h->next == h->wire_end) {
    for (uint32_t k = 1; k < c->qlen; k++)
      c->q[k - 1] = c->q[k];
    if (--c->qlen == 0)
      c->sampling = false;
  }
  return (int)acc;
}

/* Moves r, the end of connection from's request q, to connection to, which asks it again: the
 * ledger's owner changes and q stops counting it as owed (its server still sends it). */
static int sched__hand_over(struct sched *s, int from, int to, struct sched__req *q, struct sched_range r,
                            uint64_t now_us, enum sched_case kase) {
  int rc = sched_ledger_transfer(s->ledger, from, to, r.off, r.len);
  if (rc)
    return rc;
  q->live_end = r.off;
  sched__push(&s->c[to], r, now_us, kase);
  return 0;
}

/* Index of v's last request that still owes bytes (only it can be cut, from its end), or -1. */
static int sched__last_owing(const struct sched__conn *v) {
  for (int q = (int)v->qlen - 1; q >= 0; q--)
    if (v->q[q].live_end > v->q[q].next)
      return q;
  return -1;
}

/* The bytes connection k (v) would give from its tail to a taker of rate rf free in df s, and
 * the time that saves (*gain); 0 when nothing is worth moving. piece (> 0 when pieces): the
 * most a pipelined piece takes. */
static uint64_t sched__resplit_give(const struct sched *s, int k, double rf, double df, bool pieces, double piece,
                                    uint64_t now_us, double *gain) {
  const struct sched__conn *v = &s->c[k];
  int last = sched__last_owing(v);
  if (last < 0)
    return 0;
  double rv = v->rate.mean;
  /* Pieces are taken on estimates alone. A victim younger than SCHED__SETTLE_RTTS round
   * trips may still be in slow start: its mean reads low while its real rate climbs, and
   * the taker would take bytes the victim delivers sooner (demo links, 1 MiB: 0.367 ->
   * 0.378 s without this rule). */
  if (pieces && (double)(now_us - v->first_data_us) < SCHED__SETTLE_RTTS * sched__rtl_s(s, v) * 1e6)
    return 0;
  /* When the victim's last needed byte arrives, if left alone. */
  double tv = sched__wait_s(s, v, now_us);
  for (int q = 0; q <= last; q++)
    tv += ((q == last ? v->q[q].live_end : v->q[q].wire_end) - v->q[q].next) / rv;
  /* Give away y bytes from the end so both end together: tv − y/rv = df + y/rf. */
  double y = (tv - df) * rv * rf / (rv + rf);
  uint64_t cap = v->q[last].live_end - v->q[last].next;
  if (y > (double)cap)
    y = (double)cap;
  if (y < (double)s->cfg.min_chunk)
    return 0;
  double fin_v = tv - y / rv, fin_f = df + y / rf;
  *gain = tv - (fin_v > fin_f ? fin_v : fin_f);
  /* Past a steady-state range a piece is half the balanced tail (at least `piece`): a long
   * straggler's tail then moves in a few pieces (log2 of its size in pieces), not dozens of
   * tail_chunk requests, and the last pieces stay small enough for the two to meet where
   * they really are. Below, pieces are few anyway and each rests on the newest estimates. */
  if (pieces && y > piece)
    y = y > (double)s->cfg.steady_chunk && y / 2 > piece ? y / 2 : piece;
  /* Another connection may already have brought the end of this tail (a piece the victim
   * itself took earlier and delivered, say): only bytes the victim still owns can move. */
  uint64_t yb = (uint64_t)y;
  return sched_ledger_owned(s->ledger, k, v->q[last].live_end - yb, yb) ? yb : 0;
}

int sched_resplit(struct sched *s, int idle_conn, uint64_t now_us, int *victim, struct sched_range *out) {
  struct sched__conn *f = sched__conn(s, idle_conn);
  if (!f || !victim || !out)
    return -EINVAL;
  if (f->failed)
    return -ENOTCONN;
  bool pieces = s->cfg.resplit_piece_rtts > 0;
  if (f->qlen && (!pieces || f->qlen >= s->cfg.max_queue || f->rate.n == 0 ||
                  (double)sched__wire_left(f) >= s->cfg.pipeline_rtts * f->rate.mean * sched__rtl_s(s, f)))
    return -EBUSY;
  if (sched_ledger_total(s->ledger) == SCHED_LEN_UNKNOWN || sched_ledger_bytes(s->ledger, SCHED_MISSING, SCHED_NOBODY))
    return -EAGAIN;
  if (f->rate.n == 0)
    return -ENODATA; /* cannot promise to be faster on an unmeasured path */
  double rf = f->rate.mean, df = sched__rtl_s(s, f);
  /* A pipelined piece starts when the taker's own queue is through, at the earliest one
   * round trip from now. */
  double busy = sched__busy_s(s, f, now_us);
  if (busy > df)
    df = busy;
  double piece = s->cfg.resplit_piece_rtts * rf * sched__rtl_s(s, f);
  uint64_t least = s->cfg.tail_chunk > s->cfg.min_chunk ? s->cfg.tail_chunk : s->cfg.min_chunk;
  if (piece < (double)least)
    piece = (double)least;
  int best = -1;
  double best_gain = s->cfg.resplit_gain_rtts * sched__rtl_s(s, f);
  uint64_t best_y = 0;
  for (uint32_t k = 0; k < s->nconns; k++) {
    const struct sched__conn *v = &s->c[k];
    if ((int)k == idle_conn || v->failed || v->qlen == 0 || v->rate.n == 0)
      continue;
    double gain = 0;
    uint64_t y = sched__resplit_give(s, (int)k, rf, df, pieces, piece, now_us, &gain);
    if (y && gain > best_gain) {
      best = (int)k;
      best_gain = gain;
      best_y = y;
    }
  }
  if (best < 0)
    return -ENODATA;
  struct sched__req *q = &s->c[best].q[sched__last_owing(&s->c[best])];
  struct sched_range r = {.off = q->live_end - best_y, .len = best_y};
  int rc = sched__hand_over(s, best, idle_conn, q, r, now_us, SCHED_CASE_RESPLIT);
  if (rc)
    return rc;
  *victim = best;
  *out = r;
  return 0;
}

int sched_rescue(struct sched *s, int taker, int victim, uint64_t now_us, struct sched_range *out) {
  struct sched__conn *f = sched__conn(s, taker), *v = sched__conn(s, victim);
  if (!f || !v || !out || taker == victim)
    return -EINVAL;
  if (f->failed || v->failed)
    return -ENOTCONN;
  if (f->qlen >= s->cfg.max_queue)
    return -EBUSY;
  if (sched_ledger_total(s->ledger) == SCHED_LEN_UNKNOWN)
    return -EAGAIN;
  /* the earliest request that still owes bytes: the stall holds it, and those behind it */
  struct sched__req *q = NULL;
  for (uint32_t k = 0; k < v->qlen && !q; k++)
    if (v->q[k].live_end > v->q[k].next)
      q = &v->q[k];
  if (!q)
    return -ENODATA;
  struct sched_range r = {.off = q->next, .len = q->live_end - q->next};
  /* bytes another connection already took over (a re-split of this tail) stay with it */
  if (!sched_ledger_owned(s->ledger, victim, r.off, r.len))
    return -ENODATA;
  int rc = sched__hand_over(s, victim, taker, q, r, now_us, SCHED_CASE_RESCUE);
  if (rc)
    return rc;
  *out = r;
  return 0;
}

int64_t sched_cede(struct sched *s, int conn, uint64_t end) {
  struct sched__conn *c = sched__conn(s, conn);
  if (!c)
    return -EINVAL;
  if (c->failed)
    return -ENOTCONN;
  int last = sched__last_owing(c);
  if (last < 0)
    return -ENODATA;
  struct sched__req *q = &c->q[last];
  if (end < q->next)
    end = q->next; /* what already arrived stays received */
  if (end >= q->live_end)
    return -ENODATA;
  uint64_t n = q->live_end - end;
  int rc = sched_ledger_unassign(s->ledger, conn, end, n);
  if (rc)
    return rc;
  q->live_end = end;
  return (int64_t)n;
}

int sched_conn_failed(struct sched *s, int conn) {
  struct sched__conn *c = sched__conn(s, conn);
  if (!c)
    return -EINVAL;
  sched_ledger_release(s->ledger, conn);
  c->failed = true;
  c->qlen = 0;
  c->sampling = false;
  return 0;
}

bool sched_done(const struct sched *s) { return sched_ledger_complete(s->ledger); }

const struct sched_ledger *sched_ledger(const struct sched *s) { return s->ledger; }

int sched_conn_stats(const struct sched *s, int conn, struct sched_conn_stats *out) {
  const struct sched__conn *c = sched__conn(s, conn);
  if (!c || !out)
    return -EINVAL;
  *out = (struct sched_conn_stats){
      .rate_Bps = c->rate.mean,
      .rtl_us = c->has_rtl ? c->rtl_us : 0,
      .samples = c->rate.n,
      .chunks = c->chunks,
      .last_case = c->last_case,
      .last_len = c->last_len,
      .queued = c->qlen,
      .outstanding = sched__wire_left(c),
      .owed = sched__live_left(c),
      .failed = c->failed,
  };
  return 0;
}
