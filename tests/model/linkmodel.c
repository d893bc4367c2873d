/* Discrete-event link model: an event heap, per-link servers answering ranges in order, and a client that calls the scheduler. */
#include "linkmodel.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum lm__ev_type {
  LM__UP,   /* handshake done: the connection joins the scheduler */
  LM__REQ,  /* a request reaches the server */
  LM__SEND, /* the server writes its next segment */
  LM__READ, /* a segment reaches the client */
  LM__RATE, /* the link rate changes */
  LM__FAIL, /* the connection dies */
};

struct lm__ev {
  double t;
  uint64_t seq; /* ties keep insertion order, so runs are deterministic */
  enum lm__ev_type type;
  int link;
  uint64_t off;
  uint64_t len;
};

struct lm__resp {
  uint64_t next;
  uint64_t end;
};

#define LM__QMAX (SCHED_MAX_QUEUE + 1)

struct lm__link {
  struct lm_link cfg;
  double bps; /* current rate, bit/s */
  int id;     /* scheduler connection id, -1 until up */
  bool up, dead, connecting;
  /* server side */
  struct lm__resp q[LM__QMAX];
  int qlen;
  bool sending;
  bool sent_any;
  double idle_since; /* when the server last ran out of work */
  double cwnd;       /* bytes, slow start only */
};

/* Sorted, merged received intervals: the model's own reassembly, independent of the ledger. */
struct lm__ivs {
  uint64_t (*v)[2];
  size_t n, cap;
};

struct lm__run {
  const struct lm_config *cfg;
  struct lm_result *res;
  struct sched *s;
  struct lm__link link[LM_MAX_LINKS];
  struct lm__ev *heap;
  size_t hn, hcap;
  uint64_t seq;
  bool size_known;
  bool done;
  int err;
  struct lm__ivs got;
  size_t chunk_cap;
};

void lm_config_default(struct lm_config *cfg) {
  memset(cfg, 0, sizeof(*cfg));
  sched_config_default(&cfg->sched);
  cfg->seg_bytes = 8192;
}

double lm_ideal_us(const struct lm_config *cfg) {
  double bps = 0, rtt = 0;
  for (int i = 0; i < cfg->nlinks; i++) {
    bps += cfg->link[i].mbps * 1e6;
    if (cfg->link[i].rtt_us > rtt)
      rtt = cfg->link[i].rtt_us;
  }
  return cfg->size * 8.0 / bps * 1e6 + 2 * rtt;
}

/* ---- event heap ---- */

static bool lm__before(const struct lm__ev *a, const struct lm__ev *b) {
  return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void lm__push(struct lm__run *r, double t, enum lm__ev_type type, int link, uint64_t off, uint64_t len) {
  if (r->hn == r->hcap) {
    size_t cap = r->hcap ? r->hcap * 2 : 256;
    struct lm__ev *h = realloc(r->heap, cap * sizeof(*h));
    if (!h) {
      r->err = -ENOMEM;
      return;
    }
    r->heap = h;
    r->hcap = cap;
  }
  size_t i = r->hn++;
  r->heap[i] = (struct lm__ev){.t = t, .seq = r->seq++, .type = type, .link = link, .off = off, .len = len};
  while (i > 0 && lm__before(&r->heap[i], &r->heap[(i - 1) / 2])) {
    struct lm__ev tmp = r->heap[i];
    r->heap[i] = r->heap[(i - 1) / 2];
    r->heap[(i - 1) / 2] = tmp;
    i = (i - 1) / 2;
  }
}

static struct lm__ev lm__pop(struct lm__run *r) {
  struct lm__ev top = r->heap[0];
  r->heap[0] = r->heap[--r->hn];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, m = i;
    if (l < r->hn && lm__before(&r->heap[l], &r->heap[m]))
      m = l;
    if (l + 1 < r->hn && lm__before(&r->heap[l + 1], &r->heap[m]))
      m = l + 1;
    if (m == i)
      break;
    struct lm__ev tmp = r->heap[i];
    r->heap[i] = r->heap[m];
    r->heap[m] = tmp;
    i = m;
  }
  return top;
}

/* ---- reassembly check: returns bytes of [a, b) already present ---- */

static uint64_t lm__ivs_add(struct lm__run *r, uint64_t a, uint64_t b) {
  struct lm__ivs *s = &r->got;
  uint64_t dup = 0;
  size_t i = 0;
  while (i < s->n && s->v[i][1] < a)
    i++;
  size_t j = i;
  uint64_t na = a, nb = b;
  while (j < s->n && s->v[j][0] <= b) {
    uint64_t lo = s->v[j][0] > a ? s->v[j][0] : a, hi = s->v[j][1] < b ? s->v[j][1] : b;
    if (hi > lo)
      dup += hi - lo;
    if (s->v[j][0] < na)
      na = s->v[j][0];
    if (s->v[j][1] > nb)
      nb = s->v[j][1];
    j++;
  }
  if (i == j) { /* no neighbour touched: insert */
    if (s->n == s->cap) {
      size_t cap = s->cap ? s->cap * 2 : 64;
      void *v = realloc(s->v, cap * sizeof(s->v[0]));
      if (!v) {
        r->err = -ENOMEM;
        return 0;
      }
      s->v = v;
      s->cap = cap;
    }
    memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(s->v[0]));
    s->n++;
  } else {
    memmove(&s->v[i + 1], &s->v[j], (s->n - j) * sizeof(s->v[0]));
    s->n -= j - i - 1;
  }
  s->v[i][0] = na;
  s->v[i][1] = nb;
  return dup;
}

/* ---- client ---- */

static uint64_t lm__now(double t) { return (uint64_t)llround(t); }

static void lm__request(struct lm__run *r, int li, struct sched_range rg, double t) {
  struct lm__link *l = &r->link[li];
  struct sched_conn_stats st;
  sched_conn_stats(r->s, l->id, &st);
  if (r->res->nchunks == r->chunk_cap) {
    size_t cap = r->chunk_cap ? r->chunk_cap * 2 : 64;
    struct lm_chunk *c = realloc(r->res->chunks, cap * sizeof(*c));
    if (!c) {
      r->err = -ENOMEM;
      return;
    }
    r->res->chunks = c;
    r->chunk_cap = cap;
  }
  r->res->chunks[r->res->nchunks++] =
      (struct lm_chunk){.link = li, .off = rg.off, .len = rg.len, .issued_us = t, .kase = st.last_case};
  r->res->link[li].chunks++;
  lm__push(r, t + l->cfg.rtt_us / 2.0, LM__REQ, li, rg.off, rg.len);
}

/* What the engine does after any event on a connection: request while the scheduler wants
 * it (idle, or pipelining), and when idle with nothing missing, try to take a straggler's tail. */
static void lm__pump(struct lm__run *r, int li, double t) {
  struct lm__link *l = &r->link[li];
  if (!l->up || l->dead || r->done)
    return;
  for (int guard = 0; guard < SCHED_MAX_QUEUE + 1; guard++) {
    struct sched_range rg;
    if (sched_want_pipeline(r->s, l->id, lm__now(t))) {
      int rc = sched_next_range(r->s, l->id, lm__now(t), &rg);
      if (rc) {
        r->err = -EIO;
        return;
      }
      lm__request(r, li, rg, t);
      continue;
    }
    struct sched_conn_stats st;
    sched_conn_stats(r->s, l->id, &st);
    int victim;
    if (r->size_known && sched_resplit(r->s, l->id, lm__now(t), &victim, &rg) == 0) {
      lm__request(r, li, rg, t);
      continue;
    }
    return;
  }
}

static void lm__pump_all(struct lm__run *r, double t) {
  for (int i = 0; i < r->cfg->nlinks; i++)
    lm__pump(r, i, t);
}

static void lm__connect(struct lm__run *r, int li, double t) {
  struct lm__link *l = &r->link[li];
  if (l->connecting || l->up)
    return;
  l->connecting = true;
  lm__push(r, t + l->cfg.rtt_us, LM__UP, li, 0, 0);
}

static void lm__on_up(struct lm__run *r, int li, double t) {
  struct lm__link *l = &r->link[li];
  if (l->dead)
    return;
  l->id = sched_conn_add(r->s, lm__now(t));
  if (l->id < 0) {
    r->err = -EIO;
    return;
  }
  l->up = true;
  sched_on_rtt(r->s, l->id, l->cfg.rtt_us); /* the handshake time, as the engine measures it */
  lm__pump(r, li, t);
}

static void lm__on_read(struct lm__run *r, int li, uint64_t off, uint64_t len, double t) {
  struct lm__link *l = &r->link[li];
  if (l->dead || r->done)
    return;
  if (!r->size_known) {
    /* The probe's 206 arrives with its first body bytes: now the size is known. */
    if (sched_set_total(r->s, r->cfg->size)) {
      r->err = -EIO;
      return;
    }
    r->size_known = true;
    for (int i = 0; i < r->cfg->nlinks; i++)
      lm__connect(r, i, t);
  }
  int acc = sched_on_data(r->s, l->id, off, len, lm__now(t));
  if (acc < 0) {
    r->err = -EIO;
    return;
  }
  /* The scheduler counts the bytes new to the object, wherever they are in the read (a
   * victim's bytes past a re-split count when they come before the taker's copy). Reassembly
   * keeps the first copy of each byte: a count that disagrees with what it already had is a
   * byte accepted twice (or a new one refused). */
  uint64_t had = lm__ivs_add(r, off, off + len);
  if ((uint64_t)acc != len - had)
    r->res->duplicate += (uint64_t)acc > len - had ? (uint64_t)acc - (len - had) : (len - had) - (uint64_t)acc;
  if (acc > 0)
    r->res->link[li].finish_us = t;
  r->res->link[li].useful += (uint64_t)acc;
  r->res->link[li].wasted += len - (uint64_t)acc;
  sched_on_rtt(r->s, l->id, l->cfg.rtt_us); /* TCP_INFO's srtt, read with the data */
  if (sched_done(r->s)) {
    r->done = true;
    r->res->completion_us = t;
    return;
  }
  lm__pump(r, li, t);
  lm__pump_all(r, t);
}

/* ---- server ---- */

static void lm__send(struct lm__run *r, int li, double t) {
  struct lm__link *l = &r->link[li];
  if (l->dead)
    return;
  if (l->qlen == 0) {
    l->sending = false;
    l->idle_since = t;
    return;
  }
  struct lm__resp *h = &l->q[0];
  uint64_t seg = h->end - h->next < r->cfg->seg_bytes ? h->end - h->next : r->cfg->seg_bytes;
  double bps = l->bps;
  if (r->cfg->slow_start) {
    double cap = l->cwnd * 8 / (l->cfg.rtt_us / 1e6);
    if (cap < bps)
      bps = cap;
    l->cwnd += seg; /* one ACKed segment grows cwnd by its size: doubling per RTT */
  }
  double te = t + seg * 8 / bps * 1e6;
  double at = te + l->cfg.rtt_us / 2.0;
  if (l->cfg.hold_us && at >= l->cfg.hold_at_us && at < (double)(l->cfg.hold_at_us + l->cfg.hold_us))
    at = (double)(l->cfg.hold_at_us + l->cfg.hold_us); /* ties keep their order */
  lm__push(r, at, LM__READ, li, h->next, seg);
  h->next += seg;
  if (h->next == h->end) {
    memmove(&l->q[0], &l->q[1], (size_t)(l->qlen - 1) * sizeof(l->q[0]));
    l->qlen--;
  }
  lm__push(r, te, LM__SEND, li, 0, 0);
}

static void lm__on_req(struct lm__run *r, int li, uint64_t off, uint64_t len, double t) {
  struct lm__link *l = &r->link[li];
  if (l->dead)
    return;
  if (l->qlen == LM__QMAX) {
    r->err = -EIO;
    return;
  }
  /* A range past the end is answered up to the end (the probe of a small object). */
  uint64_t end = off + len > r->cfg->size ? r->cfg->size : off + len;
  l->q[l->qlen++] = (struct lm__resp){.next = off, .end = end};
  if (!l->sending) {
    if (l->sent_any) {
      r->res->link[li].gap_us += t - l->idle_since;
      r->res->link[li].gaps++;
    }
    l->sending = true;
    l->sent_any = true;
    lm__send(r, li, t);
  }
}

static void lm__on_fail(struct lm__run *r, int li, double t) {
  struct lm__link *l = &r->link[li];
  if (l->dead)
    return;
  l->dead = true;
  l->qlen = 0;
  r->res->link[li].failed = true;
  if (l->up && sched_conn_failed(r->s, l->id)) {
    r->err = -EIO;
    return;
  }
  lm__pump_all(r, t);
}

int lm_run(const struct lm_config *cfg, struct lm_result *res) {
  memset(res, 0, sizeof(*res));
  if (cfg->nlinks < 1 || cfg->nlinks > LM_MAX_LINKS || cfg->seg_bytes == 0 || cfg->size == 0)
    return -EINVAL;
  for (int i = 0; i < cfg->nlinks; i++)
    if (!(cfg->link[i].mbps > 0) || cfg->link[i].rtt_us == 0)
      return -EINVAL;
  struct lm__run r = {.cfg = cfg, .res = res};
  res->ideal_us = lm_ideal_us(cfg);
  int rc = sched_new(&cfg->sched, SCHED_LEN_UNKNOWN, &r.s);
  if (rc)
    return rc;
  for (int i = 0; i < cfg->nlinks; i++) {
    r.link[i] = (struct lm__link){.cfg = cfg->link[i], .bps = cfg->link[i].mbps * 1e6, .id = -1, .cwnd = 10 * 1448};
    if (cfg->link[i].change_at_us)
      lm__push(&r, cfg->link[i].change_at_us, LM__RATE, i, 0, 0);
    if (cfg->link[i].fail_at_us)
      lm__push(&r, cfg->link[i].fail_at_us, LM__FAIL, i, 0, 0);
  }
  lm__connect(&r, 0, 0);
  if (!cfg->connect_after_probe)
    for (int i = 1; i < cfg->nlinks; i++)
      lm__connect(&r, i, 0);
  while (r.hn && !r.done && !r.err) {
    struct lm__ev ev = lm__pop(&r);
    res->events++;
    switch (ev.type) {
    case LM__UP: lm__on_up(&r, ev.link, ev.t); break;
    case LM__REQ: lm__on_req(&r, ev.link, ev.off, ev.len, ev.t); break;
    case LM__SEND: lm__send(&r, ev.link, ev.t); break;
    case LM__READ: lm__on_read(&r, ev.link, ev.off, ev.len, ev.t); break;
    case LM__RATE: r.link[ev.link].bps = r.link[ev.link].cfg.change_mbps * 1e6; break;
    case LM__FAIL: lm__on_fail(&r, ev.link, ev.t); break;
    }
  }
  uint64_t have = 0;
  for (size_t i = 0; i < r.got.n; i++)
    have += r.got.v[i][1] - r.got.v[i][0];
  res->missing = cfg->size - (have < cfg->size ? have : cfg->size);
  if (!r.err && !r.done)
    r.err = -ETIMEDOUT;
  sched_free(r.s);
  free(r.heap);
  free(r.got.v);
  return r.err;
}

void lm_result_free(struct lm_result *res) {
  free(res->chunks);
  res->chunks = NULL;
  res->nchunks = 0;
}
