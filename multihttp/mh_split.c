/* Range splitting of one object: probe, validated 206s over every path, reassembly in order under the window, failover. */
#include "mh_clock.h"
#include "mh_split.h"
#include "mh_buf.h"
#include "mh_config.h"
#include "mh_dns.h"
#include "mh_engine.h"
#include "mh_log.h"
#include "mh_metrics.h"
#include "mh_path.h"
#include "mh_policy.h"
#include "mh_range.h"
#include "mh_reasm.h"
#include "mh_session.h"
#include "mh_rwnd.h"
#include "mh_upstream.h"
#include "policy/admit.h"
#include "scheduler/sched.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <inttypes.h>
#include <llhttp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MH__MAX_LEGS 16
/* A response head is parsed whole up to these bounds (curl allows 300 KB of headers); a larger
 * one is not split: the program's own request goes out and its answer is relayed untouched. */
#define MH__MAX_HDRS 1024
#define MH__HEAD_MAX (256 * 1024)  /* names and values of one response head */
#define MH__RAW_CAP (2 * MH__HEAD_MAX)  /* probe answer kept for a relay: its whole head fits */
#define MH__REQ_CAP (16 * 1024)    /* the program's request head */
#define MH__MAX_REQ_HDRS 128       /* its header lines (a larger request is relayed) */
#define MH__OUT_CAP (64 * 1024)    /* range requests waiting for a socket */
#define MH__IO (128 * 1024)
#define MH__ROUNDS 16
#define MH__TICK_MS 100
#define MH__CONNECT_TIMEOUT_US 5000000ULL
#define MH__STALL_MIN_US 1000000ULL
/* A leg's stall clock restarts only per this many body bytes (or a finished answer), so a
 * server that trickles a few bytes at a time (slow-loris) stalls like a silent one. At 56 kbit/s
 * this is under 0.6 s of data, well inside the stall limit. */
#define MH__PROGRESS_BYTES 4096
/* Plain fetching of an object whose ranges cannot be used (SP_PLAIN): attempts in a row that
 * bring no byte before the program sees a reset, and how long one may stay silent. */
#define MH__PLAIN_TRIES 3
#define MH__PLAIN_STALL_US 30000000ULL
#define MH__PROBE_STALL_US 2000000ULL  /* a moved probe's answer (mh__tick) */
#define MH__EARLY_DEPTH 3
#define MH__EARLY_SAMPLES 16

/* Split states; every change goes through mh__set_state(), which logs it. */
enum mh__sp_state {
  SP_PROBE,     /* the probe is out (on the program's connection, or moved to a pooled one on
                   the path the policy picks, mh__probe_move); the other paths connect */
  SP_DISCARD,   /* the probe's answer is unusable but well framed (416, a 206 without a strong
                   validator): its body is skipped, then the program's request goes out
                   unchanged on the same connection (mh__tick gives up on a silent one) */
  SP_VERIFY,    /* managed, but nothing sent to the program yet: the answer for the object's
                   last bytes, asked first and open-ended (mh__next_range), must agree with the
                   probe, so a changing origin or a total that is not the object's is caught
                   before any byte leaks */
  SP_MANAGED,   /* the rewritten 200 went out; bytes are delivered in order */
  SP_PLAIN,     /* the rewritten 200 went out, but the origin's ranges cannot be used exactly:
                   the rest comes as one open-ended range on one connection, asked again after
                   each close, as a resuming client would (mh__go_plain) */
  SP_FINISHED,  /* result decided; the session takes over */
};
static const char *const mh__sp_names[] = {"PROBE", "DISCARD", "VERIFY", "MANAGED", "PLAIN", "FINISHED"};

enum mh__leg_state {
  LEG_CONNECTING,
  LEG_READY,
  LEG_DEAD,      /* failed or closed: no more requests, not read */
};

struct mh__req {
  uint64_t off, len, got;
  int probe;
};

struct mh__leg {
  struct mh_split *sp;
  struct mh_upstream *up;
  int idx, sid, iface, primary;
  enum mh__leg_state st;
  llhttp_t p;
  char *hbuf;                      /* response head: names and values back to back */
  size_t hlen, hcap;
  size_t (*hoff)[4];               /* per header: name off/len, value off/len */
  size_t nh, hoff_cap;
  int last_was_value, head_overflow;
  int status, interim, discard, resp_started;
  int cut_body;                    /* the server closed inside a body that has a length */
  unsigned answers;                /* complete answers read on this connection */
  int in_msg;                      /* an answer has begun and not ended */
  uint64_t prog_bytes;             /* body bytes since t_progress_us last moved */
  uint64_t skip;                   /* SP_PLAIN: leading bytes of a whole-object 200 to drop */
  int eof;                         /* its server closed it (not a reset) */
  struct mh__req q[SCHED_MAX_QUEUE];
  unsigned qn;
  struct mh_buf out;
  uint64_t t_connect_us, t_progress_us;
  uint64_t hs_us;   /* a pre-connect taken established: its handshake time (first RTT sample) */
  uint64_t t_rx_us; /* its last response byte (the server's window was open then); 0 = none yet */
  int watching, paused, no_more;
  struct sockaddr_storage dst;     /* the server address this connection goes to */
  int dns_held;                    /* kept idle while its interface's resolver answers */
  int rwnd;                        /* TCP_WINDOW_CLAMP set on it (mh__leg_clamp), 0: none */
  int rescued;                     /* its stalled bytes were asked again elsewhere (mh__rescue) */
  uint64_t rw_srtt_us;             /* the path's srtt_min the clamp was computed with */
  uint64_t rw_t0_us, rw_bytes;     /* bytes read since rw_t0_us (mh_rwnd_grow's interval) */
};

struct mh__path_stats {
  uint64_t bytes;     /* body bytes the object used from this interface */
  unsigned chunks;
};

struct mh_split {
  struct mh_session *sess;
  uv_loop_t *loop;
  const struct mh_config *cfg;
  enum mh__sp_state state;
  unsigned id;
  int prog_fd;

  char req[MH__REQ_CAP];           /* the program's request, as written */
  size_t req_len;
  struct mh_req_view rv;
  struct mh_hdr rhdrs[MH__MAX_REQ_HDRS];
  char host[256];

  struct mh_iface ifaces[MH_MAX_IFACES];
  int nifaces, primary_iface;
  struct sockaddr_storage dst, local;   /* the program's connection */

  struct mh__leg *legs[MH__MAX_LEGS];
  int nlegs, reconnects;
  int rescue_victim, rescue_taker; /* a rescue waiting for its taker to connect: leg index + 1 */
  unsigned rescues;
  struct sched *sched;

  struct mh_buf raw;               /* probe answer bytes (relay fallback) */
  size_t interim_len;              /* of which complete 1xx answers, passed on before the head */
  size_t interim_sent;             /* of those, already passed to the program as they came */
  char *probe_hbuf;                /* the probe's head, owned: views in probe/phdrs point here */
  struct mh_hdr *phdrs;            /* owned, nph entries */
  size_t nph;
  struct mh_probe_info probe;
  uint64_t total;
  struct mh_buf head_out;          /* the rewritten head, before any body byte */
  struct mh_reasm ra;

  uv_timer_t tick;
  struct mh_split_result res;
  int up_dead, up_eof, up_reset;
  int up_closed;                   /* the answer to the program's request (the probe's head)
                                      says the origin ends the connection: the program sees
                                      that after the object; otherwise it gets a working
                                      connection back whatever ended its own (a fault or limit
                                      our extra ranges met is not the program's) */
  int no_pipeline;                 /* the origin dropped a pipelined request: one at a time */
  uint32_t slow;                   /* interfaces whose origin answers trickled (mh__leg_slow):
                                      no new connection to the origin there */
  int draining;                    /* delivered; answers still due on the program's connection
                                      are read and dropped first (mh__drain_first) */
  int stats_done;                  /* the MHTTP_STATS line is written */
  int plain_fails;                 /* SP_PLAIN attempts in a row that brought nothing */
  int plain_eof;                   /* the last of them ended with the server's close */
  int plain_whole;                 /* the origin's ranges fail plainly too: the program's own
                                      request instead, its first bytes skipped (mh__plain_open) */
  enum mh_split_end give_up;       /* how the program's connection ends once the bytes held
                                      in order reached it (mh__deliver); 0 while trying */

  uint64_t t_start_us, t_probe_us;
  uint64_t probe_len;              /* bytes the probe asked for (mh__probe_size) */
  struct mh__leg *probe_leg;       /* the connection the probe went out on: legs[0] (the
                                      program's), or a pooled one (mh__probe_move) */
  int probe_iface;                 /* its interface (stats) */
  int probe_moved;                 /* 1: the probe is not on the program's connection, whose
                                      upstream state must then never be relayed as its answer */
  struct mh__path_stats pst[MH_MAX_IFACES];
  uint64_t asked[MH_MAX_IFACES];   /* bytes of the object requested per interface, the probe excepted */
  char fallbacks[160];

  /* replicas per interface (mh__open_replicas): bit i = sp->ifaces[i] */
  int replicas_on;                 /* strong validator seen: replica legs may join */
  unsigned dns_hold, dns_released;
  uint64_t dns_hold_until_us;
  int ntried;                      /* (interface, address) pairs already given a leg */
  int tried_iface[MH__MAX_LEGS];
  struct sockaddr_storage tried[MH__MAX_LEGS];

  /* policy (mh_policy.h): the view is rebuilt every tick; the plan is made once, when the
   * probe tells the size */
  int planned;
  uint64_t plan_at_us;             /* when the plan was made (its predicted_us counts from then) */
  struct pol_view view;
  struct pol_view plan_view;       /* the view the plan was made on (stats, logs) */
  struct mh_policy_obj pobj;
  int midx[MH_MAX_IFACES];         /* metrics store index of each interface, -1 */
  uint32_t counted;                /* interfaces counted as carrying this transfer */
};

/* The admission rules' snapshot of the object (mh__admit): one entry per slot of legs[]. */
struct mh__admit {
  struct pol_admit_obj o;
  struct pol_admit_leg leg[MH__MAX_LEGS];
};
_Static_assert(MH_MAX_IFACES == POL_MAX_IFACES, "asked[] is read as POL_MAX_IFACES paths");

static char *mh__io;  /* one read before framing, shared (loop thread) */
static unsigned mh__next_id;

static void mh__set_state(struct mh_split *sp, enum mh__sp_state st) {
  if (sp->state == st)
    return;
  mh_dbg("split %u: %s -> %s", sp->id, mh__sp_names[sp->state], mh__sp_names[st]);
  sp->state = st;
}

static void mh__note(struct mh_split *sp, const char *what) {
  size_t l = strlen(sp->fallbacks);
  if (l + strlen(what) + 2 < sizeof sp->fallbacks)
    snprintf(sp->fallbacks + l, sizeof sp->fallbacks - l, "%s%s", l ? "," : "", what);
}

/* Microseconds from t to now; 0 when t is later (taken after now was read). */
static uint64_t mh__since(uint64_t now, uint64_t t) { return now > t ? now - t : 0; }

static void mh__leg_watch(struct mh__leg *g);
static void mh__probe_fallback(struct mh_split *sp, const char *why);
static void mh__drive(struct mh_split *sp);
static void mh__leg_fail(struct mh__leg *g, const char *why);
static void mh__finish(struct mh_split *sp, enum mh_split_end end);
static void mh__ensure_paths(struct mh_split *sp);
static void mh__open_replicas(struct mh_split *sp);
static struct mh__leg *mh__leg_open(struct mh_split *sp, int i);
static unsigned mh__alive_count(const struct mh_split *sp, int i);
static const struct pol_admit_obj *mh__admit(const struct mh_split *sp, struct mh__admit *a);
static void mh__plan(struct mh_split *sp, uint64_t remaining);
static void mh__build_view(struct mh_split *sp);
static void mh__plain_lost(struct mh__leg *g);
static void mh__plain_whole(struct mh_split *sp, const char *why);
static int mh__send_prog(struct mh_split *sp, const char *p, size_t len, size_t *sent);
static int mh__leg_park(struct mh_split *sp, int i);
static int mh__drain_first(struct mh_split *sp);
static void mh__stats(struct mh_split *sp, enum mh_split_end end);

/* ---- the program's request -------------------------------------------------------------- */

/* Splits the request head into views (mh_rr_parse_request) and keeps its Host. 0 or -EINVAL. */
static int mh__parse_req(struct mh_split *sp) {
  int rc = mh_rr_parse_request(sp->req, sp->req_len, &sp->rv, sp->rhdrs, MH__MAX_REQ_HDRS);
  if (rc < 0)
    return rc;
  for (size_t i = 0; i < sp->rv.nhdrs; i++) {
    const struct mh_hdr *h = &sp->rhdrs[i];
    if (h->name_len == 4 && !strncasecmp(h->name, "Host", 4) && h->value_len < sizeof sp->host) {
      memcpy(sp->host, h->value, h->value_len);
      sp->host[h->value_len] = 0;
    }
  }
  return 0;
}

/* ---- sending ----------------------------------------------------------------------------- */

static void mh__leg_flush(struct mh__leg *g) {
  while (g->out.len && g->st == LEG_READY) {
    ssize_t n = g->up->ops->send(g->up, mh_buf_head(&g->out), g->out.len);
    if (n == -EAGAIN)
      break;
    if (n < 0) {
      mh__leg_fail(g, "send failed");
      return;
    }
    mh_buf_consume(&g->out, (size_t)n);
  }
}

/* r's request is in g->out: it becomes g's next expected answer and is sent. */
static void mh__leg_queue(struct mh__leg *g, const struct sched_range *r, int probe) {
  struct mh_split *sp = g->sp;
  if (g->iface >= 0 && g->iface < MH_MAX_IFACES && !(sp->counted >> g->iface & 1)) {
    sp->counted |= 1u << g->iface;  /* paired in mh_split_free */
    mh_metrics_transfer(sp->midx[g->iface], +1);
  }
  if (!g->qn)
    g->t_progress_us = mh_now_us();
  if (!probe && g->iface >= 0 && g->iface < MH_MAX_IFACES)
    sp->asked[g->iface] += r->len;
  g->q[g->qn++] = (struct mh__req){.off = r->off, .len = r->len, .probe = probe};
  mh__leg_flush(g);
}

/* Queues request r (a range of the object) on g. 0 or -errno. */
static int mh__leg_request(struct mh__leg *g, const struct sched_range *r, int probe, int keep_alive) {
  struct mh_split *sp = g->sp;
  char buf[MH__REQ_CAP + 512];
  size_t vlen = 0;
  const char *ifr = probe ? NULL : mh_rr_if_range(&sp->probe, &vlen);
  uint64_t last = !probe && r->off + r->len == sp->total ? MH_RR_TO_END : r->off + r->len - 1;
  ssize_t n = mh_rr_range_request(&sp->rv, r->off, last, ifr, vlen, keep_alive, buf, sizeof buf);
  if (n < 0)
    return (int)n;
  int rc = mh_buf_append(&g->out, buf, (size_t)n);
  if (rc < 0)
    return rc;
  mh__leg_queue(g, r, probe);
  return 0;
}

/* 1 when a request of g runs to the object's end (the one that checks the probe's total). */
static int mh__asks_end(const struct mh_split *sp, const struct mh__leg *g) {
  for (unsigned k = 0; k < g->qn; k++)
    if (g->q[k].off + g->q[k].len == sp->total)
      return 1;
  return 0;
}

/* The next range for g. While the head is held (SP_VERIFY) the object's last bytes are asked
 * before any other, at most a first chunk of them: the probe's total is only a claim until an
 * answer that reaches the end agrees with it (an origin whose ranges all claim the same wrong
 * total would otherwise get a head with that length, and then a plain fetch of another one). */
static int mh__next_range(struct mh_split *sp, struct mh__leg *g, uint64_t now, uint64_t max,
                          struct sched_range *r) {
  if (sp->state == SP_VERIFY) {
    int asked = 0;
    for (int i = 0; i < sp->nlegs && !asked; i++)
      asked = sp->legs[i] && sp->legs[i]->st != LEG_DEAD && mh__asks_end(sp, sp->legs[i]);
    if (!asked)
      return sched_next_range_last(sp->sched, g->sid, now,
                                   max && max < sp->cfg->init_chunk ? max : sp->cfg->init_chunk, r);
  }
  return sched_next_range_upto(sp->sched, g->sid, now, max, r);
}

/* ---- response heads ----------------------------------------------------------------------- */

static struct mh__leg *mh__leg_of(llhttp_t *p) { return p->data; }

/* Appends to the head being collected, growing it by doubling up to MH__HEAD_MAX (past that
 * head_overflow). -1 when out of memory. */
static int mh__hb_append(struct mh__leg *g, const char *at, size_t len) {
  if (g->hlen + len > MH__HEAD_MAX) {
    g->head_overflow = 1;
    return 0;
  }
  if (g->hlen + len > g->hcap) {
    size_t cap = g->hcap ? g->hcap : 4096;
    while (cap < g->hlen + len)
      cap *= 2;
    char *nb = realloc(g->hbuf, cap);
    if (!nb)
      return -1;
    g->hbuf = nb;
    g->hcap = cap;
  }
  memcpy(g->hbuf + g->hlen, at, len);
  g->hlen += len;
  return 0;
}

/* Room for one more header's offsets, up to MH__MAX_HDRS. 0, 1 (full) or -1 (no memory). */
static int mh__hoff_room(struct mh__leg *g) {
  if (g->nh < g->hoff_cap)
    return 0;
  if (g->hoff_cap >= MH__MAX_HDRS)
    return 1;
  size_t cap = g->hoff_cap ? 2 * g->hoff_cap : 32;
  void *n = realloc(g->hoff, cap * sizeof g->hoff[0]);
  if (!n)
    return -1;
  g->hoff = n;
  g->hoff_cap = cap;
  return 0;
}

static void mh__head_free(struct mh__leg *g) {
  free(g->hbuf);
  free(g->hoff);
  g->hbuf = NULL;
  g->hoff = NULL;
  g->hlen = g->hcap = g->nh = g->hoff_cap = 0;
}

static int mh__on_begin(llhttp_t *p) {
  struct mh__leg *g = mh__leg_of(p);
  g->hlen = g->nh = 0;
  g->last_was_value = 1;
  g->head_overflow = 0;
  g->resp_started = 0;
  g->discard = 0;
  g->in_msg = 1;
  return 0;
}

static int mh__on_field(llhttp_t *p, const char *at, size_t len) {
  struct mh__leg *g = mh__leg_of(p);
  if (g->last_was_value && !g->head_overflow) {
    int room = mh__hoff_room(g);
    if (room < 0)
      return -1;
    if (room) {
      g->head_overflow = 1;
      return 0;
    }
    g->hoff[g->nh][0] = g->hlen;
    g->hoff[g->nh][1] = 0;
    g->hoff[g->nh][2] = g->hlen;
    g->hoff[g->nh][3] = 0;
    g->nh++;
    g->last_was_value = 0;
  }
  if (g->head_overflow)
    return 0;
  if (mh__hb_append(g, at, len) < 0)
    return -1;
  if (!g->head_overflow)
    g->hoff[g->nh - 1][1] += len;
  return 0;
}

static int mh__on_value(llhttp_t *p, const char *at, size_t len) {
  struct mh__leg *g = mh__leg_of(p);
  if (!g->nh || g->head_overflow)
    return 0;
  if (!g->last_was_value) {
    g->hoff[g->nh - 1][2] = g->hlen;
    g->last_was_value = 1;
  }
  if (mh__hb_append(g, at, len) < 0)
    return -1;
  if (!g->head_overflow)
    g->hoff[g->nh - 1][3] += len;
  return 0;
}

/* Views of the collected head into hdrs (values without surrounding OWS). */
static size_t mh__views(const char *base, const size_t (*off)[4], size_t n, struct mh_hdr *hdrs) {
  for (size_t i = 0; i < n; i++) {
    const char *v = base + off[i][2];
    size_t vl = off[i][3];
    while (vl && (*v == ' ' || *v == '\t'))
      v++, vl--;
    while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
      vl--;
    hdrs[i] = (struct mh_hdr){base + off[i][0], off[i][1], v, vl};
  }
  return n;
}

/* Heap views of g's collected head (*out, g->nh entries; NULL when there are none). -1 when
 * out of memory. */
static int mh__head_views(const struct mh__leg *g, struct mh_hdr **out) {
  *out = NULL;
  if (!g->nh)
    return 0;
  if (!(*out = malloc(g->nh * sizeof **out)))
    return -1;
  mh__views(g->hbuf, (const size_t(*)[4])g->hoff, g->nh, *out);
  return 0;
}

/* ---- when an answer cannot be used --------------------------------------------------------- */

static void mh__go_plain(struct mh_split *sp, const char *why);

/* 1 when g goes to the program's server (not to a replica multiDNS named). */
static int mh__to_origin(const struct mh_split *sp, const struct mh__leg *g) {
  return g->primary || mh_path_same_addr((const struct sockaddr *)&g->dst, (const struct sockaddr *)&sp->dst);
}

/* Nothing reached the program and what came back cannot be used exactly: the program's own
 * request goes out unchanged and its answer is relayed, as without the engine. fresh: on a new
 * connection (the answer's framing cannot be trusted); else on the program's connection when
 * it is clean (mh__finish decides). */
static void mh__restart(struct mh_split *sp, const char *note, int fresh) {
  mh_info("split %u: %s: the program's request goes out unchanged%s", sp->id, note,
          fresh ? " on a new connection" : "");
  mh__note(sp, note);
  if (fresh)
    sp->up_dead = 1;
  sp->res.resend = 1;
  mh__finish(sp, MH_SPLIT_END_RELAY);
}

/* g's answer cannot be used exactly (a wrong Content-Range or length, a status other than
 * 206, an unparsable or oversized head, an unsolicited answer). A replica leaves the object
 * (its address is never tried again: sp->tried). The program's server: before the rewritten
 * head went out the program's request starts over; after it, the rest comes the plain way.
 * One rule for every such answer, so none can end as a reset the program would not have seen. */
static void mh__leg_bad(struct mh__leg *g, const char *why) {
  struct mh_split *sp = g->sp;
  if (g->st == LEG_DEAD || sp->state == SP_FINISHED)
    return;
  if (sp->state == SP_PLAIN && mh__to_origin(sp, g))
    mh__plain_whole(sp, why);
  if (sp->state == SP_PLAIN || !mh__to_origin(sp, g) ||
      (sp->state != SP_VERIFY && sp->state != SP_MANAGED)) {
    mh__note(sp, mh__to_origin(sp, g) ? "bad-answer" : "bad-replica");
    mh__leg_fail(g, why);
    return;
  }
  mh_info("split %u: leg %d (%s): %s", sp->id, g->idx, sp->ifaces[g->iface].name, why);
  if (sp->state == SP_VERIFY)
    mh__restart(sp, "inconsistent-restart", g->primary);
  else
    mh__go_plain(sp, why);
}

/* A leg's body progress: its stall clock restarts per MH__PROGRESS_BYTES (a trickle is no
 * progress). */
static void mh__progress(struct mh__leg *g, size_t len, uint64_t now) {
  g->prog_bytes += len;
  if (g->prog_bytes >= MH__PROGRESS_BYTES) {
    g->t_progress_us = now;
    g->prog_bytes = 0;
  }
}

/* ---- response heads: the probe ------------------------------------------------------------ */

/* The probe answered 206 with a usable Content-Range and a strong validator (or the whole
 * object): take its head, build the 200 (after any 1xx answers that came before it). */
static void mh__probe_managed(struct mh_split *sp, struct mh__leg *g) {
  if (mh__head_views(g, &sp->phdrs) < 0) {
    mh__restart(sp, "probe-no-memory", 1);
    return;
  }
  sp->probe_hbuf = g->hbuf;   /* the views in sp->probe point into it from now on */
  sp->nph = g->nh;
  g->hbuf = NULL;
  g->hcap = g->hlen = 0;
  mh_rr_classify_probe(g->status, sp->phdrs, sp->nph, &sp->probe);
  sp->total = sp->probe.total;
  /* each header grows by ": " and CRLF; then the status line and Content-Length */
  size_t cap = sp->interim_len + 4 * sp->nph + 256;
  for (size_t i = 0; i < sp->nph; i++)
    cap += sp->phdrs[i].name_len + sp->phdrs[i].value_len;
  char ver[16], *head = malloc(cap);
  snprintf(ver, sizeof ver, "HTTP/%d.%d", g->p.http_major, g->p.http_minor);
  mh_buf_init(&sp->head_out, cap);
  ssize_t n = head ? mh_rr_rewrite_head(ver, sp->phdrs, sp->nph, sp->total, head, cap) : -ENOMEM;
  if (n < 0 ||
      (sp->interim_len > sp->interim_sent &&
       mh_buf_append(&sp->head_out, mh_buf_head(&sp->raw) + sp->interim_sent, sp->interim_len - sp->interim_sent) < 0) ||
      mh_buf_append(&sp->head_out, head, (size_t)n) < 0 || sched_set_total(sp->sched, sp->total) < 0) {
    free(head);
    mh__restart(sp, "probe-rewrite-failed", 1);  /* cannot happen with sane sizes; never guess */
    return;
  }
  free(head);
  g->q[0].len = sp->probe.last + 1;
  sp->t_probe_us = mh_now_us() - sp->t_start_us;
  uint64_t probe_len = sp->probe.last + 1;
  mh_dbg("split %u: probe 206, total %" PRIu64 "%s", sp->id, sp->total,
         probe_len >= sp->total ? " (the whole object)" : ", strong validator");
  if (probe_len >= sp->total) {
    mh__set_state(sp, SP_MANAGED);  /* the probe is the whole object: nothing to verify */
  } else {
    mh__plan(sp, sp->total - probe_len);
    if (sp->total - probe_len >= sp->cfg->min_split_size)
      mh__open_replicas(sp);
    mh__set_state(sp, SP_VERIFY);
    /* pipeline the next range on the program's connection at once, so a small object does
     * not wait a round trip between the probe and the rest (unless the plan moved it) */
    struct sched_range r;
    struct mh__admit a;
    const struct pol_admit_obj *o = mh__admit(sp, &a);
    if (!g->no_more && llhttp_should_keep_alive(&g->p) && pol_admit_leg_allowed(o, (unsigned)g->idx) &&
        !pol_admit_yields(o, (unsigned)g->idx) &&
        mh__next_range(sp, g, mh_now_us(), pol_admit_share_left(o, (unsigned)g->idx), &r) == 0) {
      mh_dbg("split %u: leg %d range %" PRIu64 "+%" PRIu64 " (pipelined after the probe)", sp->id,
             g->idx, r.off, r.len);
      if (mh__leg_request(g, &r, 0, 1) < 0)
        mh__leg_fail(g, "request");
    }
  }
}

/* What the probe's answer means (mh_rr_classify_probe), with the two rules the classifier
 * cannot see: a 206 longer than asked is not ours, and an object larger than the probe is
 * split only under a strong validator (without one, bytes of different versions could be
 * spliced). *framed: the answer's length can be trusted (its body may be skipped in place). */
static enum mh_probe_action mh__probe_verdict(const struct mh__leg *g, const struct mh_hdr *hdrs,
                                              size_t n, const char **why, int *framed) {
  struct mh_probe_info info;
  size_t vl;
  enum mh_probe_action a = mh_rr_classify_probe(g->status, hdrs, n, &info);
  *framed = g->status == 416;
  *why = a == MH_PROBE_RELAY ? "probe-relay" : "probe-unusable";
  if (a != MH_PROBE_MANAGED)
    return a;
  if (info.last >= g->q[0].len) {
    *why = "probe-longer-than-asked";
    return MH_PROBE_RESEND;
  }
  *framed = 1;
  if (info.last + 1 < info.total && !mh_rr_if_range(&info, &vl)) {
    *why = "no-strong-validator";
    return MH_PROBE_RESEND;
  }
  return MH_PROBE_MANAGED;
}

/* The probe's answer head: managed, relayed (it cannot depend on our Range), or replaced by
 * the answer to the program's own request. */
static void mh__probe_head(struct mh_split *sp, struct mh__leg *g) {
  if (g->interim) {
    /* a 1xx on the program's connection is passed on before the head (sp->interim_len); on a
     * moved probe's connection it belongs to no request of the program */
    if (sp->probe_moved)
      mh__probe_fallback(sp, "interim");
    return;
  }
  struct mh_hdr *hdrs = NULL;
  const char *why = "probe-head-too-large";
  int framed = 0;
  enum mh_probe_action a = MH_PROBE_RESEND;
  if (!g->head_overflow && mh__head_views(g, &hdrs) == 0)
    a = mh__probe_verdict(g, hdrs, g->nh, &why, &framed);
  free(hdrs);
  if (sp->probe_moved && a != MH_PROBE_MANAGED) {
    /* the answer is on another connection than the program's: relaying it would hand the
     * program another connection's stream as its own (and a 200 may be huge). Close that
     * one and let the program's request go out unchanged on its own connection. */
    mh_dbg("split %u: moved probe answered %d: resend on the program's connection", sp->id, g->status);
    mh__probe_fallback(sp, why);
  } else if (a == MH_PROBE_RELAY) {
    mh_dbg("split %u: probe answered %d: relay", sp->id, g->status);
    mh__note(sp, why);
    mh__finish(sp, MH_SPLIT_END_RELAY);
  } else if (a == MH_PROBE_RESEND && framed) {
    mh_dbg("split %u: probe answered %d (%s): its body is skipped, then the request goes out unchanged",
           sp->id, g->status, why);
    mh__note(sp, why);
    g->discard = 1;
    g->t_progress_us = mh_now_us();
    mh__set_state(sp, SP_DISCARD);
  } else if (a == MH_PROBE_RESEND) {
    mh__restart(sp, why, 1);  /* its framing cannot be trusted: a new connection */
  } else {
    mh__probe_managed(sp, g);
  }
}

/* ---- response heads: further ranges -------------------------------------------------------- */

/* A further range's answer head: it must be the probe's representation, exactly the asked
 * bytes. In SP_PLAIN a 200 of the whole representation is taken too (its first bytes skipped),
 * as a resuming client would. */
static void mh__range_head(struct mh_split *sp, struct mh__leg *g, const struct mh_hdr *hdrs, size_t n) {
  struct mh__req *rq = &g->q[0];
  int rc = mh_rr_check_range_response(&sp->probe, g->status, hdrs, n, rq->off, rq->off + rq->len - 1);
  if (rc && sp->state == SP_PLAIN && g->status == 200 && mh_rr_check_whole_response(&sp->probe, hdrs, n) == 0) {
    g->skip = rq->off;
    rc = 0;
  }
  if (rc == 0) {
    g->resp_started = 1;
    if (sp->state == SP_VERIFY && rq->off + rq->len == sp->total) {
      mh_dbg("split %u: leg %d confirms the probe's representation and total", sp->id, g->idx);
      mh__set_state(sp, SP_MANAGED);
    }
    return;
  }
  mh_info("split %u: leg %d (%s) answered %d %s", sp->id, g->idx, sp->ifaces[g->iface].name,
          g->status, rc == -EPROTO ? "for another representation" : "malformed");
  mh__leg_bad(g, rc == -EPROTO ? "another representation" : "unusable range answer");
}

/* The answer ends its connection by the origin's choice (Connection: close, or HTTP/1.0
 * without keep-alive), not only because its body has no length: after a close-delimited 206 of
 * ours the origin would have kept the program's connection for a 200 with a length. */
static int mh__says_close(const llhttp_t *p) {
  if (p->flags & F_CONNECTION_CLOSE)
    return 1;
  if (p->http_major == 1 && p->http_minor == 0 && !(p->flags & F_CONNECTION_KEEP_ALIVE))
    return 1;
  return !llhttp_message_needs_eof(p);
}

static int mh__on_headers(llhttp_t *p) {
  struct mh__leg *g = mh__leg_of(p);
  struct mh_split *sp = g->sp;
  if (sp->state == SP_FINISHED || g->st == LEG_DEAD)
    return 0;
  g->status = p->status_code;
  g->interim = g->status >= 100 && g->status < 200 && g->status != 101;
  if (!g->qn) {
    /* an idle connection's server speaking first (a 408 before it closes, say) ends that
     * connection, not the object */
    mh__leg_fail(g, "unsolicited response");
    return 0;
  }
  if (!g->interim && !llhttp_should_keep_alive(p)) {
    g->no_more = 1;  /* the origin ends this connection after this answer: nothing more on it */
    if (g->primary && g->q[0].probe && mh__says_close(p))
      sp->up_closed = 1;
  }
  if (g->q[0].probe) {
    mh__probe_head(sp, g);
    return 0;
  }
  if (g->interim)
    return 0;
  struct mh_hdr *hdrs = NULL;
  if (g->head_overflow || mh__head_views(g, &hdrs) < 0) {
    mh__leg_bad(g, "response head too large");
    return 0;
  }
  mh__range_head(sp, g, hdrs, g->nh);
  free(hdrs);
  return 0;
}

/* SP_PLAIN: body bytes of the one open-ended range go straight to reassembly. */
static void mh__plain_body(struct mh__leg *g, const char *at, size_t len, uint64_t now) {
  struct mh_split *sp = g->sp;
  size_t k = g->skip < len ? (size_t)g->skip : len;
  g->skip -= k;
  at += k;
  len -= k;
  if (sp->plain_whole)
    g->t_progress_us = now;  /* slow is not stalled: the program would wait as long */
  else
    mh__progress(g, len + k, now);
  if (!len)
    return;
  struct mh__req *rq = &g->q[0];
  if (rq->got + len > rq->len) {
    mh__leg_bad(g, "more body than the object");
    return;
  }
  uint64_t off = rq->off + rq->got;
  rq->got += len;
  sp->plain_fails = 0;
  sp->pst[g->iface].bytes += len;
  if (mh_reasm_put(&sp->ra, off, at, len) < 0)
    mh__finish(sp, MH_SPLIT_END_RESET);
}

static int mh__on_body(llhttp_t *p, const char *at, size_t len) {
  struct mh__leg *g = mh__leg_of(p);
  struct mh_split *sp = g->sp;
  uint64_t now = mh_now_us();
  if (g->discard)
    g->t_progress_us = now;  /* mh__tick gives up on a discard that stops */
  if (g->discard || g->st == LEG_DEAD || sp->state == SP_FINISHED || sp->state == SP_PROBE ||
      sp->state == SP_DISCARD || g->interim)
    return 0;
  if (sp->state == SP_PLAIN) {
    mh__plain_body(g, at, len, now);
    return 0;
  }
  struct mh__req *rq = &g->q[0];
  uint64_t off = rq->off + rq->got;
  if (rq->got + len > rq->len) {
    mh__leg_bad(g, "more body than requested");
    return 0;
  }
  int acc = sched_on_data(sp->sched, g->sid, off, len, now);
  if (acc < 0) {
    mh__leg_fail(g, "scheduler refused the bytes");
    return 0;
  }
  rq->got += len;
  mh__progress(g, len, now);
  if (acc) {
    sp->pst[g->iface].bytes += (uint64_t)acc;
    /* the new bytes may lie anywhere in the read (a victim's bytes past its re-split point
     * that came before the taker's copy): reassembly keeps the first copy of each byte */
    if (mh_reasm_put(&sp->ra, off, at, len) < 0) {
      mh__finish(sp, MH_SPLIT_END_RESET);
      return 0;
    }
  }
  return 0;
}

static int mh__on_complete(llhttp_t *p) {
  struct mh__leg *g = mh__leg_of(p);
  struct mh_split *sp = g->sp;
  g->in_msg = 0;
  if (sp->state == SP_FINISHED || g->st == LEG_DEAD)
    return 0;
  if (g->interim) {
    g->interim = 0;
    /* pause so mh__leg_read learns where the 1xx ends in the probe's raw bytes */
    return sp->state == SP_PROBE && g == sp->probe_leg && !sp->probe_moved ? HPE_PAUSED : 0;
  }
  g->answers++;
  int keep = llhttp_should_keep_alive(p);
  if (!keep)
    g->no_more = 1;
  if (sp->state == SP_DISCARD && g->discard) {
    g->qn = 0;
    g->discard = 0;
    sp->res.resend = 1;
    if (!keep)
      sp->up_dead = 1;  /* the session opens a fresh connection (mh__finish) */
    mh__finish(sp, MH_SPLIT_END_RELAY);
    return 0;
  }
  if (!g->qn)
    return 0;
  struct mh__req *rq = &g->q[0];
  if (rq->got != rq->len) {
    mh__leg_bad(g, "short response");
    return 0;
  }
  g->t_progress_us = mh_now_us();
  g->prog_bytes = 0;
  sp->reconnects = 0;  /* answers complete again: reconnecting is worth it (mh__ensure_paths) */
  if (sp->state == SP_PLAIN) {
    g->qn = 0;
    return 0;
  }
  sp->pst[g->iface].chunks++;
  memmove(&g->q[0], &g->q[1], (--g->qn) * sizeof g->q[0]);
  if (!keep && (sp->state == SP_VERIFY || sp->state == SP_MANAGED))
    mh__ensure_paths(sp);  /* the server closes this one (the program asked for close, say) */
  if (mh_log_level_v >= MH_LOG_DEBUG) {
    struct sched_conn_stats cs;
    sched_conn_stats(sp->sched, g->sid, &cs);
    mh_dbg("split %u: +%.1f ms leg %d chunk done (%u queued, rate %.0f B/s, %u samples)", sp->id,
           (mh_now_us() - sp->t_start_us) / 1000.0, g->idx, g->qn, cs.rate_Bps, cs.samples);
  }
  return 0;
}

static llhttp_settings_t mh__settings;

/* ---- reading ----------------------------------------------------------------------------- */

/* The object offset of the next body byte g will read, or UINT64_MAX when none is due. */
static uint64_t mh__leg_next_off(const struct mh__leg *g) {
  return g->qn ? g->q[0].off + g->q[0].got : UINT64_MAX;
}

/* May g read now? Reads stop when the window is full, except for the connection that fills
 * the gap at the program's read position while nothing else waits for the program: that one
 * always moves the program forward (so a full window can never deadlock). */
static int mh__leg_may_read(const struct mh__leg *g) {
  const struct mh_split *sp = g->sp;
  if (sp->state == SP_PROBE || sp->state == SP_DISCARD)
    return 1;
  if (!g->qn || g->skip)
    return 1;  /* idle (only a close or garbage can arrive), or bytes to drop */
  if (!g->resp_started && !g->q[0].probe)
    return 1;  /* its next bytes are a head (verification) */
  if (sp->state == SP_VERIFY && mh__asks_end(sp, g))
    return 1;  /* the answer that ends SP_VERIFY is behind these bytes (over the window by at
                  most this leg's queue: the program cannot drain before it) */
  if (sp->state == SP_MANAGED && g->q[0].off + g->q[0].len == sp->total &&
      g->q[0].len <= sp->cfg->init_chunk)
    return 1;  /* the end chunk asked first (mh__next_range) is read whatever the window: the
                  program's next bytes may be queued behind it on this connection, and with the
                  window full (1,000 objects at once) nothing else would ever let them come */
  if (mh_reasm_room(MH__IO))
    return 1;
  const char *d;
  return (sp->state == SP_MANAGED || sp->state == SP_PLAIN) && mh__leg_next_off(g) == sp->ra.pos &&
         !sp->head_out.len && !mh_reasm_peek(&sp->ra, &d);
}

/* DRWA on the receiver side (mh_rwnd.h): an extra connection's sender may have at most
 * rwnd_k x its path's recorded BDP in flight, so its slow start cannot overshoot a bottleneck
 * queue of about one BDP (on demo, lte0 lost about 250 segments there and then read nothing
 * for 100-150 ms). The program's own connection and unmeasured paths are left alone. Set once
 * the connection is up: a clamp set while the SYN is out was lost at establishment (measured). */
static void mh__leg_clamp(struct mh_split *sp, struct mh__leg *g, uint64_t hs_us) {
  struct pol_path m;
  int fd = mh_upstream_fd(g->up);
  if (!(sp->cfg->rwnd_k > 0) || fd < 0 || mh_metrics_snapshot(sp->midx[g->iface], &m) < 0)
    return;
  int w = (int)mh_rwnd_clamp(sp->total, m.srtt_min_us, hs_us, m.max_rate, sp->cfg->rwnd_k);
  /* receive-buffer autotuning raises the window clamp along with the buffer (measured: the
   * origin saw 3 MB windows under a 600 kB clamp); a fixed buffer turns it off. Twice the
   * clamp: the window is only part of the buffer (skb overhead), and the clamp is the bound. */
  int buf = 2 * w;
  if (w && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf) == 0 &&
      setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &w, sizeof w) == 0 && (g->rwnd = w)) {
    g->rw_srtt_us = m.srtt_min_us;
    g->rw_t0_us = mh_now_us();
    g->rw_bytes = 0;
  }
  mh_dbg("split %u: leg %d (%s) window clamp %d B (0: none; object %" PRIu64 " B, srtt_min %" PRIu64
         " us, handshake %" PRIu64 " us, max rate %.0f B/s)", sp->id, g->idx, sp->ifaces[g->iface].name,
         g->rwnd, sp->total, m.srtt_min_us, hs_us, m.max_rate);
}

/* Holds the clamp after n bytes were read, and doubles it when the leg filled it (the path's
 * recorded rate was too low: the clamp must never pin a path below what it can do). */
static void mh__leg_clamp_read(struct mh__leg *g, size_t n) {
  int fd = mh_upstream_fd(g->up);
  uint64_t now = mh_now_us();
  g->rw_bytes += n;
  uint32_t w = mh_rwnd_grow((uint32_t)g->rwnd, g->rw_bytes, now - g->rw_t0_us, g->rw_srtt_us);
  if (w != (uint32_t)g->rwnd) {
    int buf = 2 * (int)w;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    mh_dbg("split %u: leg %d window clamp %d -> %u B (%" PRIu64 " B in %" PRIu64 " us)", g->sp->id, g->idx,
           g->rwnd, w, g->rw_bytes, now - g->rw_t0_us);
    g->rwnd = (int)w;
  }
  if (now - g->rw_t0_us >= g->rw_srtt_us) {
    g->rw_t0_us = now;
    g->rw_bytes = 0;
  }
  /* Linux (6.18 here) rewrites the clamp from the buffer size whenever arriving data change
   * its estimate of per-segment overhead: a clamp set once was 1.5 MB at the origin a few
   * round trips later. Setting it again per read holds it (an unchanged value is a no-op). */
  (void)setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &g->rwnd, sizeof g->rwnd);
}

/* A 1xx on the program's connection goes to the program as it comes, as without us (a program
 * may read an interim answer as if it were the final one, and must then not find the final
 * one in the same read). What cannot be written now goes before the head. */
static void mh__pass_interim(struct mh_split *sp) {
  size_t sent = 0;
  if (sp->interim_len > sp->interim_sent &&
      mh__send_prog(sp, mh_buf_head(&sp->raw) + sp->interim_sent, sp->interim_len - sp->interim_sent, &sent) == 0)
    sp->interim_sent += sent;
}

/* Parses one read of g. On the program's connection while its probe's answer is out, a 1xx
 * answer pauses the parser (mh__on_complete) so that its end in the raw bytes is known: those
 * bytes go to the program before the rewritten head. */
static llhttp_errno_t mh__leg_parse(struct mh__leg *g, const char *buf, size_t n, int probing) {
  struct mh_split *sp = g->sp;
  size_t base = sp->raw.len - (probing ? n : 0);
  llhttp_errno_t err = llhttp_execute(&g->p, buf, n);
  while (err == HPE_PAUSED && sp->state != SP_FINISHED) {
    size_t used = (size_t)(llhttp_get_error_pos(&g->p) - buf);
    if (probing) {
      sp->interim_len = base + used;
      mh__pass_interim(sp);
    }
    llhttp_resume(&g->p);
    err = used < n ? llhttp_execute(&g->p, buf + used, n - used) : HPE_OK;
    buf += used;
    n -= used;
    base += used;
  }
  return err;
}

/* g's connection ended (n: 0 for EOF, else -errno). A close-delimited body ends here. */
static void mh__leg_eof(struct mh__leg *g, ssize_t n) {
  struct mh_split *sp = g->sp;
  /* a close inside a body that has a length is the server's error, not the path's (a path
   * that breaks resets or goes silent): its ranges are not to be trusted */
  int cut_body = n == 0 && g->in_msg && g->resp_started && g->qn && !llhttp_message_needs_eof(&g->p);
  if (n == 0 && g->in_msg)
    llhttp_finish(&g->p);  /* a body without length ends with the connection */
  if (sp->state == SP_FINISHED)
    return;
  g->eof = n == 0;
  g->cut_body = cut_body;
  if (cut_body && sp->state != SP_PLAIN)
    mh__leg_bad(g, "answer ended short");
  else
    mh__leg_fail(g, n == 0 ? "server closed" : strerror((int)-n));
}

static void mh__leg_read(struct mh__leg *g) {
  struct mh_split *sp = g->sp;
  for (int i = 0; i < MH__ROUNDS && g->st == LEG_READY && sp->state != SP_FINISHED; i++) {
    if (!mh__leg_may_read(g))
      break;
    size_t want = MH__IO;
    /* the program's connection carrying the probe: its bytes are the relay fallback */
    int probing = sp->state == SP_PROBE && g->primary && !sp->probe_moved;
    if (probing) {
      want = MH__RAW_CAP - sp->raw.len;
      if (!want) {  /* a head this large is not ours to parse: the program's own request */
        mh__restart(sp, "probe-head-too-large", 1);
        return;
      }
    }
    ssize_t n = g->up->ops->recv(g->up, mh__io, want);
    if (n == -EAGAIN)
      return;
    if (n > 0 && g->rwnd)
      mh__leg_clamp_read(g, (size_t)n);
    if (n <= 0) {
      if (probing) {
        sp->up_eof = 1;
        sp->up_reset = n < 0;
        mh__finish(sp, MH_SPLIT_END_RELAY);  /* the program sees what it would have */
        return;
      }
      mh__leg_eof(g, n);
      return;
    }
    g->t_rx_us = mh_now_us();  /* the server just sent: its window is open (pol_window_open) */
    if (probing)
      mh_buf_append(&sp->raw, mh__io, (size_t)n);
    llhttp_errno_t err = mh__leg_parse(g, mh__io, (size_t)n, probing);
    if (sp->state == SP_FINISHED)
      return;
    if (err != HPE_OK && g->st != LEG_DEAD) {
      if (probing && sp->state == SP_PROBE) {
        mh__restart(sp, "probe-unparsable", 1);  /* relaying it would pass on our Range's answer */
        return;
      }
      mh__leg_bad(g, llhttp_errno_name(err));
      return;
    }
  }
}

/* ---- legs ------------------------------------------------------------------------------- */

static void mh__leg_closed(struct mh_upstream *up) {
  struct mh__leg *g = up->owner;
  mh__head_free(g);
  mh_buf_free(&g->out);
  free(g);
}

/* Detaches g from the split and frees it (its upstream closes asynchronously). */
static void mh__leg_drop(struct mh__leg *g, int abort) {
  struct mh_split *sp = g->sp;
  sp->legs[g->idx] = NULL;
  if (g->primary) {
    g->up->ops->watch(g->up, 0);
    mh__head_free(g);
    mh_buf_free(&g->out);
    free(g);
    return;
  }
  g->up->owner = g;
  g->up->ops->close(g->up, abort, mh__leg_closed);
}

static void mh__leg_fail(struct mh__leg *g, const char *why) {
  struct mh_split *sp = g->sp;
  if (g->st == LEG_DEAD)
    return;
  mh_info("split %u: leg %d (%s) failed: %s", sp->id, g->idx, sp->ifaces[g->iface].name, why);
  if (sp->state == SP_PLAIN) {
    mh__plain_lost(g);
    return;
  }
  if (g == sp->probe_leg && sp->probe_moved && sp->state == SP_PROBE) {
    mh__probe_fallback(sp, why);  /* before its 206: the program's own connection serves */
    return;
  }
  if (g->sid >= 0)
    sched_conn_failed(sp->sched, g->sid);
  g->st = LEG_DEAD;
  g->qn = 0;
  if (g->primary && sp->probe_moved && sp->state == SP_PROBE) {
    /* the program's idle connection ended while its probe is out elsewhere: the split goes
     * on without it; a resend, if any, opens a fresh one (mh__finish), and the program sees
     * its connection close after the response, as keep-alive allows */
    sp->up_dead = 1;
    g->up->ops->watch(g->up, 0);
    g->watching = 0;
    return;
  }
  if (g->primary && (sp->state == SP_PROBE || sp->state == SP_DISCARD)) {
    /* before anything reached the program: in PROBE the program sees what the server did;
     * in DISCARD its request goes out again on a fresh connection */
    sp->up_dead = 1;
    g->up->ops->watch(g->up, 0);
    g->watching = 0;
    if (sp->state == SP_DISCARD)
      sp->res.resend = 1;
    else
      sp->up_eof = sp->up_reset = 1;
    mh__finish(sp, MH_SPLIT_END_RELAY);
    return;
  }
  if (g->primary) {
    sp->up_dead = 1;
    g->up->ops->watch(g->up, 0);
    g->watching = 0;
  } else {
    mh__leg_drop(g, 1);
  }
  if (sp->state == SP_VERIFY || sp->state == SP_MANAGED)
    mh__ensure_paths(sp);
}

static void mh__leg_connected(struct mh__leg *g) {
  struct mh_split *sp = g->sp;
  int err = mh_upstream_tcp_error(g->up);
  if (err < 0) {
    mh__leg_fail(g, strerror(-err));
    return;
  }
  uint64_t now = mh_now_us();
  g->st = LEG_READY;
  if (sp->state == SP_PLAIN)
    return;  /* one range, no scheduling, no window clamp: as a plain client */
  g->sid = sched_conn_add(sp->sched, now);
  if (g->sid < 0) {
    mh__leg_fail(g, "connection limit");
    return;
  }
  mh__leg_clamp(sp, g, g->t_connect_us ? now - g->t_connect_us : g->hs_us);
  if (g->t_connect_us)  /* the handshake time is this path's first latency sample */
    sched_on_rtt(sp->sched, g->sid, (uint32_t)(now - g->t_connect_us));
  else if (g->hs_us)
    sched_on_rtt(sp->sched, g->sid, (uint32_t)g->hs_us);
  mh_dbg("split %u: +%.1f ms leg %d (%s) connected in %" PRIu64 " us", sp->id, (now - sp->t_start_us) / 1000.0, g->idx,
         sp->ifaces[g->iface].name, g->t_connect_us ? now - g->t_connect_us : 0);
}

static void mh__leg_event(struct mh_upstream *up, int status, int events) {
  struct mh__leg *g = up->owner;
  struct mh_split *sp = g->sp;
  (void)status;
  if (g->st == LEG_CONNECTING && (events & UV_WRITABLE || status < 0))
    mh__leg_connected(g);
  if (g->st == LEG_READY && (events & UV_WRITABLE))
    mh__leg_flush(g);
  if (g->st == LEG_READY && (events & UV_READABLE || status < 0))
    mh__leg_read(g);
  mh_session_kick(sp->sess);
}

static void mh__leg_watch(struct mh__leg *g) {
  if (g->st == LEG_DEAD)
    return;
  int ev = 0;
  if (g->st == LEG_CONNECTING)
    ev = UV_WRITABLE;
  else {
    if (g->out.len)
      ev |= UV_WRITABLE;
    int may = mh__leg_may_read(g);
    if (may)
      ev |= UV_READABLE;
    if (!may && !g->paused)
      g->paused = 1;
    else if (may && g->paused) {
      g->paused = 0;
      g->t_progress_us = mh_now_us();  /* time spent paused is not a stall */
    }
  }
  if (ev != g->watching) {
    g->watching = ev;
    g->up->ops->watch(g->up, ev);
  }
}

static struct mh__leg *mh__leg_new(struct mh_split *sp, int iface) {
  int idx = sp->nlegs;
  /* a plain fetch reconnects as often as the origin closes: it reuses the slots of legs gone */
  for (int i = 0; idx == MH__MAX_LEGS && i < sp->nlegs && sp->state == SP_PLAIN; i++)
    if (!sp->legs[i])
      idx = i;
  if (idx == MH__MAX_LEGS)
    return NULL;
  struct mh__leg *g = calloc(1, sizeof *g);
  if (!g)
    return NULL;
  g->sp = sp;
  g->idx = idx;
  g->sid = -1;
  g->iface = iface;
  g->watching = -1;
  mh_buf_init(&g->out, MH__OUT_CAP);
  llhttp_init(&g->p, HTTP_RESPONSE, &mh__settings);
  g->p.data = g;
  sp->legs[idx] = g;
  if (idx == sp->nlegs)
    sp->nlegs++;
  return g;
}

/* Opens (or takes from the pool) a connection on interface i to dst (NULL: the program's
 * server). */
static struct mh__leg *mh__leg_open_to(struct mh_split *sp, int i, const struct sockaddr *dst) {
  if (!dst && sp->state != SP_PLAIN && (sp->slow >> i & 1))
    return NULL;
  struct mh__leg *g = mh__leg_new(sp, i);
  if (!g)
    return NULL;
  if (!dst)
    dst = (const struct sockaddr *)&sp->dst;
  memcpy(&g->dst, dst, dst->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
  struct mh_pool_taken how = {0};
  g->up = mh_pool_take(sp->ifaces[i].name, dst, sp->host, mh__leg_event, g, &how);
  if (g->up) {
    mh_dbg("split %u: leg %d (%s) reuses a pooled connection%s", sp->id, g->idx, sp->ifaces[i].name,
           how.connecting ? " (pre-connect, handshake in flight)" : how.t_start_us ? " (pre-connected)" : "");
    /* connected: the first writable event says so at once; a pre-connect still connecting is
     * waited for like a fresh connection (its connect timeout counts from its own start) */
    g->st = LEG_CONNECTING;
    g->t_connect_us = how.connecting ? how.t_start_us : 0;
    g->hs_us = how.handshake_us;
    g->t_rx_us = how.used_us;
  } else {
    int err = 0;
    /* on no configured interface (loopback, an unlisted device): the program's own source
     * address, so the connection leaves the way the program's did */
    const struct sockaddr *src = sp->primary_iface < 0 ? (const struct sockaddr *)&sp->local
                                                       : (const struct sockaddr *)&sp->ifaces[i].addr;
    g->up = mh_upstream_tcp_connect(sp->loop, src, sp->primary_iface < 0 ? NULL : sp->ifaces[i].name,
                                    dst, mh__leg_event, g, &err);
    if (!g->up) {
      mh_info("split %u: connect on %s: %s", sp->id, sp->ifaces[i].name, strerror(-err));
      sp->legs[g->idx] = NULL;
      if (g->idx == sp->nlegs - 1)
        sp->nlegs--;
      mh_buf_free(&g->out);
      free(g);
      return NULL;
    }
    g->st = LEG_CONNECTING;
    g->t_connect_us = mh_now_us();
  }
  mh__leg_watch(g);
  return g;
}

static struct mh__leg *mh__leg_open(struct mh_split *sp, int i) { return mh__leg_open_to(sp, i, NULL); }

/* ---- plain fetching (SP_PLAIN) ------------------------------------------------------------- */

/* Asks everything from the first byte not held on to the end, on one connection of the
 * program's path to its server, the way a resuming client would. After MH__PLAIN_TRIES
 * attempts in a row that brought nothing the program sees the reset a broken server gives. */
static void mh__plain_open(struct mh_split *sp) {
  uint64_t from = mh_reasm_filled_to(&sp->ra);
  if (from >= sp->total)
    return;
  if (sp->plain_fails >= MH__PLAIN_TRIES) {
    /* the program sees its bytes so far, then the end the origin gave the last attempt: a
     * close (a truncated body, as plain would read it) or a reset */
    sp->give_up = sp->plain_eof ? MH_SPLIT_END_EOF : MH_SPLIT_END_RESET;
    mh_info("split %u: %d plain attempts in a row brought nothing: the program sees %s", sp->id,
            sp->plain_fails, sp->plain_eof ? "the server close" : "a reset");
    mh__note(sp, "no-path");
    return;
  }
  sp->plain_fails++;  /* back to 0 with its first byte (mh__plain_body) */
  struct mh__leg *g = mh__leg_open(sp, sp->primary_iface < 0 ? 0 : sp->primary_iface);
  struct sched_range r = {.off = from, .len = sp->total - from};
  int rc = -ENOMEM;
  if (g && sp->plain_whole) {
    rc = mh_buf_append(&g->out, sp->req, sp->req_len);  /* its 200: mh__range_head skips */
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
         sp->ifaces[g->iface].name, sp->plain_whole ? "the whole object to keep " : "", from,
         sp->plain_fails);
}

/* The origin's ranges fail even asked one at a time: from now on the plain attempts send the
 * program's own request, which is what it would have got without us (the bytes it already has
 * are read again and dropped). */
static void mh__plain_whole(struct mh_split *sp, const char *why) {
  if (sp->plain_whole)
    return;
  mh_info("split %u: %s: the program's own request from now on", sp->id, why);
  mh__note(sp, "plain-whole");
  sp->plain_whole = 1;
}

/* The plain connection ended or failed: the next one asks from where it stopped. */
static void mh__plain_lost(struct mh__leg *g) {
  struct mh_split *sp = g->sp;
  sp->plain_eof = g->eof;
  if (g->cut_body)
    mh__plain_whole(sp, "its range answer ended short");
  g->st = LEG_DEAD;
  g->qn = 0;
  if (g->primary) {
    g->up->ops->watch(g->up, 0);
    g->watching = 0;
    return;
  }
  mh__leg_drop(g, 1);
  mh__plain_open(sp);
}

/* The origin's ranges cannot be used exactly and the rewritten head went out: every leg
 * leaves (an idle clean one to the pool), and the rest comes plainly (mh__plain_open). The
 * program's connection is not read again; mh__finish gives the program a working one. */
static void mh__go_plain(struct mh_split *sp, const char *why) {
  mh_info("split %u: %s: the rest on one connection, as a plain client would", sp->id, why);
  mh__note(sp, "plain");
  mh__set_state(sp, SP_PLAIN);
  sp->rescue_taker = sp->rescue_victim = 0;
  for (int i = 0; i < sp->nlegs; i++) {
    struct mh__leg *g = sp->legs[i];
    if (!g || g->st == LEG_DEAD || mh__leg_park(sp, i))
      continue;
    if (g->primary) {
      sp->up_dead = 1;
      g->st = LEG_DEAD;
      g->qn = 0;
      g->up->ops->watch(g->up, 0);
      g->watching = 0;
    } else {
      g->st = LEG_DEAD;
      g->qn = 0;
      mh__leg_drop(g, 1);
    }
  }
  sp->plain_fails = 0;
  mh__plain_open(sp);
}

/* How long the extra legs of an interface wait for its own resolver before serving the
 * program's server after all. A working resolver answers within one round trip of its
 * network, and the harvest started when the program resolved the name; a silent one would
 * hold the link idle for c-ares's whole timeout (2 x 2 s). */
#define MH__DNS_HOLD_US 300000ULL

static int mh__legs_open(const struct mh_split *sp) {
  int n = 0;
  for (int i = 0; i < sp->nlegs; i++)
    if (sp->legs[i] && sp->legs[i]->st != LEG_DEAD)
      n++;
  return n;
}

/* Opens one leg on interface i to each address not given one there before (a replica whose
 * leg failed is not retried every tick). */
static void mh__replica_legs(struct mh_split *sp, int i, const char *host, const struct sockaddr_storage *a, int n) {
  for (int k = 0; k < n; k++) {
    if ((unsigned)mh__legs_open(sp) >= sp->cfg->max_conns || sp->ntried == MH__MAX_LEGS)
      return;
    int seen = 0;
    for (int t = 0; t < sp->ntried && !seen; t++)
      seen = sp->tried_iface[t] == i && mh_path_same_addr((const struct sockaddr *)&sp->tried[t], (const struct sockaddr *)&a[k]);
    if (seen)
      continue;
    sp->tried_iface[sp->ntried] = i;
    sp->tried[sp->ntried++] = a[k];
    char buf[64];
    mh_dbg("split %u: replica %s of %s joins on %s (strong validator)", sp->id,
           mh_path_ntop((const struct sockaddr *)&a[k], buf, sizeof buf), host, sp->ifaces[i].name);
    mh__leg_open_to(sp, i, (const struct sockaddr *)&a[k]);
  }
}

/* Per interface, the replicas learned through it (multiDNS) get legs there, and only there:
 * a CDN maps clients per network, so an address from another network's resolver may be far
 * away or unreachable (socket-intents §V-E2). On the primary the program's own answer joins
 * too. The legs mh__open_extras gave another interface towards the program's server (an
 * address of the primary's network) are held while that interface's resolver is still
 * answering, and retired once it named replicas of its own; when it names none, is silent
 * past MH__DNS_HOLD_US, or has no resolver, they serve the program's server as before. */
static void mh__replicas_update(struct mh_split *sp) {
  if (!sp->replicas_on || sp->state == SP_FINISHED || sp->state == SP_PLAIN || sched_done(sp->sched))
    return;
  char host[256];
  snprintf(host, sizeof host, "%s", sp->host);
  char *colon = strrchr(host, ':');  /* Host may carry a port ("a.test:8080"); not for [v6] */
  if (colon && !strchr(host, ']') && colon == strchr(host, ':'))
    *colon = 0;
  uint64_t now = mh_now_us();
  int adding = sched_ledger_bytes(sched_ledger(sp->sched), SCHED_MISSING, SCHED_NOBODY) >= sp->cfg->min_split_size;
  for (int i = 0; i < sp->nifaces; i++) {
    struct sockaddr_storage got[16], use[16];
    int n = mh_dns_addrs(host, sp->ifaces[i].name, got, 16);
    if (i == sp->primary_iface)
      n += mh_engine_lookup(host, got + n, 16 - n);
    int k = mh_dns_select(got, n, (const struct sockaddr *)&sp->dst, use, 16);
    int here = n > 0;  /* this interface's own resolver named the host (maybe the same server) */
    unsigned bit = 1u << i;
    if (i != sp->primary_iface && here) {
      sp->dns_hold &= ~bit;
      sp->dns_released |= bit;
      int dst_named = 0;  /* it names the program's server too: that leg stays */
      for (int j = 0; j < n && !dst_named; j++) {
        struct sockaddr_storage a = got[j];
        if (a.ss_family == AF_INET && sp->dst.ss_family == AF_INET)
          ((struct sockaddr_in *)&a)->sin_port = ((struct sockaddr_in *)&sp->dst)->sin_port;
        else if (a.ss_family == AF_INET6 && sp->dst.ss_family == AF_INET6)
          ((struct sockaddr_in6 *)&a)->sin6_port = ((struct sockaddr_in6 *)&sp->dst)->sin6_port;
        dst_named = mh_path_same_addr((const struct sockaddr *)&a, (const struct sockaddr *)&sp->dst);
      }
      for (int j = 0; j < sp->nlegs; j++)
        if (sp->legs[j] && sp->legs[j]->iface == i && sp->legs[j]->dns_held) {
          sp->legs[j]->dns_held = 0;
          sp->legs[j]->no_more = 0;
        }
      for (int j = 0; j < sp->nlegs && !dst_named; j++) {
        struct mh__leg *g = sp->legs[j];
        if (!g || g->primary || g == sp->probe_leg || g->iface != i || g->st == LEG_DEAD || g->no_more ||
            !mh_path_same_addr((const struct sockaddr *)&g->dst, (const struct sockaddr *)&sp->dst))
          continue;
        if (g->dns_held || !g->qn) {
          mh_dbg("split %u: leg %d (%s) retired: that network names its own replicas of %s", sp->id, g->idx,
                 sp->ifaces[i].name, host);
          if (g->sid >= 0)
            sched_conn_failed(sp->sched, g->sid);
          g->st = LEG_DEAD;
          mh__leg_drop(g, 0);
        } else {
          g->no_more = 1;  /* finishes the ranges it has, takes no more */
        }
      }
    } else if (i != sp->primary_iface && !(sp->dns_released & bit)) {
      int hold = now < sp->dns_hold_until_us && mh_dns_waiting(sp->ifaces[i].name);
      for (int j = 0; j < sp->nlegs; j++) {
        struct mh__leg *g = sp->legs[j];
        if (!g || g->primary || g == sp->probe_leg || g->iface != i || g->st == LEG_DEAD)
          continue;
        if (hold && !g->qn && !g->no_more && !g->dns_held) {
          g->dns_held = 1;
          g->no_more = 1;  /* mh__drive gives it nothing meanwhile */
        } else if (!hold && g->dns_held) {
          g->dns_held = 0;
          g->no_more = 0;
        }
      }
      if (hold) {
        if (!(sp->dns_hold & bit))
          mh_dbg("split %u: %s waits for its resolver's answer for %s", sp->id, sp->ifaces[i].name, host);
        sp->dns_hold |= bit;
      } else {
        if (sp->dns_hold & bit)
          mh_dbg("split %u: %s: no replica of its own for %s; serving the program's server", sp->id,
                 sp->ifaces[i].name, host);
        sp->dns_hold &= ~bit;
        sp->dns_released |= bit;
      }
    }
    if (adding)
      mh__replica_legs(sp, i, host, use, k);
  }
}

/* After the probe's 206: used only when its validator is strong, so every 206 from another
 * server is checked against it. A Host the program never resolved (it connected to a literal
 * address) is harvested now. Later answers join from the tick (mh__tick). */
static void mh__open_replicas(struct mh_split *sp) {
  size_t vl;
  if (sp->primary_iface < 0 || !sp->host[0] || !mh_rr_if_range(&sp->probe, &vl))
    return;
  char host[256];
  snprintf(host, sizeof host, "%s", sp->host);
  char *colon = strrchr(host, ':');
  if (colon && !strchr(host, ']') && colon == strchr(host, ':'))
    *colon = 0;
  struct sockaddr_storage tmp[1];
  if (!mh_engine_lookup(host, tmp, 1))
    mh_dns_host_header(sp->loop, sp->host, strlen(sp->host));
  sp->replicas_on = 1;
  sp->dns_hold_until_us = mh_now_us() + MH__DNS_HOLD_US;
  mh__replicas_update(sp);
}

/* Opens connections on every other interface (the scheduler's model: handshakes start with
 * the probe, so they are ready when its 206 arrives): MHTTP_PATH_CONNS on a path that spends
 * objects in slow start (pol_extra_conns), one elsewhere; one the object does not need goes
 * to the pool for the next probe. asym, interleaved, 5 runs: mixed/wget 2.056 -> 1.871 s,
 * many100k/wget 9.02 -> 7.72 s (policy/README.md). */
static void mh__open_extras(struct mh_split *sp) {
  if (sp->primary_iface < 0)
    return;
  unsigned max = sp->cfg->max_conns;
  mh__build_view(sp);
  for (int i = 0; i < sp->nifaces && (unsigned)sp->nlegs < max; i++) {
    if (i == sp->primary_iface)
      continue;
    /* a moved probe's path has its leg, which counts */
    unsigned want = (unsigned)i < sp->view.n ? pol_extra_conns(mh_policy_engine(), &sp->view.path[i], sp->cfg->path_conns) : 1;
    for (unsigned have = mh__alive_count(sp, i); have < want && (unsigned)sp->nlegs < max; have++)
      if (!mh__leg_open(sp, i))
        break;
  }
}

static int mh__live_legs(const struct mh_split *sp) {
  int n = 0;
  for (int i = 0; i < sp->nlegs; i++)
    if (sp->legs[i] && sp->legs[i]->st != LEG_DEAD && !sp->legs[i]->no_more)
      n++;
  return n;
}

/* No connection left while bytes are missing: new ones on every interface, a bounded number
 * of times; after that the program sees the reset a broken network would give it. */
static void mh__ensure_paths(struct mh_split *sp) {
  if ((sp->state != SP_VERIFY && sp->state != SP_MANAGED) || sched_done(sp->sched) || mh__live_legs(sp))
    return;
  int limit = sp->nifaces > 0 ? 2 * sp->nifaces : 2;
  if (sp->reconnects >= limit || sp->nlegs >= MH__MAX_LEGS) {
    /* no connection lasts for a range: before the head went out the program's own request
     * serves, after it the rest comes plainly */
    if (sp->state == SP_VERIFY)
      mh__restart(sp, "no-lasting-connection", 1);
    else
      mh__go_plain(sp, "no connection lasts for a range");
    return;
  }
  sp->reconnects++;
  mh__note(sp, "reconnect");
  int first = sp->primary_iface < 0 ? 0 : sp->primary_iface;
  for (int k = 0; k < sp->nifaces; k++)
    mh__leg_open(sp, (first + k) % sp->nifaces);
  if (!mh__live_legs(sp))
    mh__go_plain(sp, "no new connection");
}

/* ---- scheduling -------------------------------------------------------------------------- */

static uint64_t mh__lowest_missing(const struct mh_split *sp) {
  const struct sched_ledger *l = sched_ledger(sp->sched);
  size_t n = sched_ledger_count(l);
  struct sched_extent e;
  for (size_t i = 0; i < n; i++)
    if (sched_ledger_get(l, i, &e) == 0 && e.state == SCHED_MISSING)
      return e.off;
  return UINT64_MAX;
}

/* ---- policy ------------------------------------------------------------------------------ */

/* How long leg g's connection has been idle (pol_path.idle_us): since its last response
 * byte, when its server's window was open; POL_IDLE_COLD when it never carried one. */
static uint64_t mh__leg_idle_us(const struct mh__leg *g, uint64_t now) {
  return g->t_rx_us ? (now > g->t_rx_us ? now - g->t_rx_us : 0) : POL_IDLE_COLD;
}

/* The view of every interface for this object: metrics, usable (not every connection on it
 * failed), reusable (a connected idle leg, the program's connection, or a pooled one) and how
 * long the most recently used of those has been idle (pol_path.idle_us: past the server's RTO
 * its window is the initial one again). */
static void mh__build_view(struct mh_split *sp) {
  const char *names[MH_MAX_IFACES];
  struct pol_path m[MH_MAX_IFACES];
  uint32_t self[MH_MAX_IFACES], usable = 0, reusable = 0;
  uint64_t idle_us[MH_MAX_IFACES], window[MH_MAX_IFACES], now = mh_now_us();
  memset(m, 0, sizeof m);
  for (int i = 0; i < sp->nifaces; i++) {
    idle_us[i] = POL_IDLE_COLD;
    window[i] = 0;
    names[i] = sp->ifaces[i].name;
    mh_metrics_snapshot(sp->midx[i], &m[i]);
    self[i] = sp->counted >> i & 1;
    int legs = 0, dead = 0, idle = 0;
    for (int k = 0; k < sp->nlegs; k++) {
      const struct mh__leg *g = sp->legs[k];
      if (!g || g->iface != i)
        continue;
      legs++;
      dead += g->st == LEG_DEAD || g->no_more;
      if (g->st == LEG_READY && !g->no_more && (g->primary || g == sp->probe_leg || !g->qn)) {
        idle++;
        uint64_t t = mh__leg_idle_us(g, now);
        if (t < idle_us[i] || (t == idle_us[i] && !window[i])) {
          idle_us[i] = t;
          window[i] = mh_conn_window(mh_upstream_fd(g->up));
        }
      }
    }
    if ((!legs || dead < legs) && !(sp->slow >> i & 1))
      usable |= 1u << i;
    uint64_t pooled = POL_IDLE_COLD, pooled_w = 0;
    if (sp->host[0] && mh_pool_idle(names[i], (struct sockaddr *)&sp->dst, sp->host, &pooled, &pooled_w)) {
      idle++;
      if (pooled < idle_us[i] || (pooled == idle_us[i] && !window[i])) {
        idle_us[i] = pooled;
        window[i] = pooled_w;
      }
    }
    if (idle)
      reusable |= 1u << i;
  }
  mh_policy_view(sp->cfg, (unsigned)sp->nifaces, names, m, usable, reusable, self, &sp->view);
  for (unsigned i = 0; i < sp->view.n; i++) {
    sp->view.path[i].idle_us = sp->view.path[i].reusable ? idle_us[i] : 0;
    sp->view.path[i].window = sp->view.path[i].reusable ? window[i] : 0;
  }
}

/* More connections on a planned path that would spend the object in slow start
 * (pol_path_conns: each connection opened together adds an initial window to every round).
 * Opened as soon as the plan knows the path's share: the probe's round trip later than the
 * first leg (mh__open_extras), which pre-connect started at the program's connect(). Not for
 * a small object (pol_admit_small): its shares are asked per path (pol_admit_share_left) and two
 * legs there are a handshake for a round or two of bytes. */
static void mh__plan_conns(struct mh_split *sp) {
  const struct pol_plan *pl = &sp->pobj.plan;
  struct mh__admit a;
  if (sp->cfg->path_conns < 2 || pol_admit_small(mh__admit(sp, &a)) || !(pl->paths & (pl->paths - 1)))
    return;
  for (int i = 0; i < sp->nifaces && (unsigned)i < sp->view.n; i++) {
    if (!(pl->paths >> i & 1) || !(pl->share[i] >= 1))
      continue;
    unsigned want = pol_path_conns(mh_policy_engine(), &sp->view.path[i], (uint64_t)pl->share[i],
                                   sp->cfg->path_conns);
    unsigned have = mh__alive_count(sp, i);
    if (want > have)
      mh_dbg("split %u: %s gets %u connections for its %.0f B (has %u)", sp->id, sp->ifaces[i].name,
             want, pl->share[i], have);
    for (; have < want && (unsigned)mh__legs_open(sp) < sp->cfg->max_conns; have++)
      if (!mh__leg_open(sp, i))
        break;
  }
}

/* The probe told the size: the policy decides where the rest goes (mh_policy_plan). */
static void mh__plan(struct mh_split *sp, uint64_t remaining) {
  if (sp->primary_iface < 0)
    return;  /* the program's connection is on no configured interface: nothing to choose */
  struct pol *p = mh_policy_engine();
  mh__build_view(sp);
  /* the plan is made when the probe's head arrives: the rest of its body still holds its
   * connection (asym: 13 456 B, 55 ms of wifi0), and a range asked there now comes after it */
  struct mh__leg *pg = sp->probe_leg;
  if (pg && pg->st == LEG_READY && pg->qn && pg->q[0].probe && pg->iface >= 0 &&
      (unsigned)pg->iface < sp->view.n && sp->view.path[pg->iface].reusable)
    sp->view.path[pg->iface].busy = pg->q[0].len > pg->q[0].got ? pg->q[0].len - pg->q[0].got : 0;
  int rc = mh_policy_plan(p, &sp->view, remaining, mh_policy_draw(), &sp->pobj);
  sp->planned = 1;
  sp->plan_at_us = mh_now_us();
  sp->plan_view = sp->view;
  if (rc < 0)
    mh_info("split %u: policy %s: no plan (%s): every path as without policy", sp->id,
            p->ops->name, strerror(-rc));
  if (mh_log_level_v >= MH_LOG_DEBUG) {
    char line[1024];
    size_t n = mh_policy_json(line, sizeof line, 0, p, &sp->plan_view, &sp->pobj);
    line[n] = 0;
    mh_dbg("split %u: %" PRIu64 " bytes after the probe: %s%s", sp->id, remaining,
           sp->pobj.has_plan ? "plan" : "no plan (metrics cannot tell)", line);
  }
  if (!sp->pobj.has_plan)
    return;
  int to = sp->pobj.plan.primary.iface;
  /* the object goes elsewhere: the program's connection stops after the probe (and stays
   * reusable); the chosen interface needs a connection */
  if (to != sp->primary_iface && !mh__alive_count(sp, to)) {
    mh_dbg("split %u: the rest goes on %s: opening a connection there", sp->id, sp->ifaces[to].name);
    mh__leg_open(sp, to);
  }
  mh__plan_conns(sp);
}

/* The admission rules' view of this object (policy/admit.h), filled for one decision: every
 * request issued changes it, so a caller fills it again after one. Legs keep their index. */
static const struct pol_admit_obj *mh__admit(const struct mh_split *sp, struct mh__admit *a) {
  static const enum pol_admit_state st[] = {
      [LEG_CONNECTING] = POL_ADMIT_CONNECTING, [LEG_READY] = POL_ADMIT_READY, [LEG_DEAD] = POL_ADMIT_DEAD};
  int plan = sp->planned && sp->primary_iface >= 0 && sp->pobj.has_plan;
  a->o = (struct pol_admit_obj){
      .pol = mh_policy_engine(),
      .view = &sp->view,
      .plan = plan ? &sp->pobj.plan : NULL,
      .plan_at_us = sp->plan_at_us,
      .rest = sp->total - (sp->probe.last + 1),
      .floor = sp->cfg->min_split_size,
      .missing = sp->sched ? sched_ledger_bytes(sched_ledger(sp->sched), SCHED_MISSING, SCHED_NOBODY) : 0,
      .counted = sp->counted,
      .asked = sp->asked,
      .leg = a->leg,
      .nleg = (unsigned)sp->nlegs,
  };
  for (int k = 0; k < sp->nlegs; k++) {
    const struct mh__leg *g = sp->legs[k];
    struct pol_admit_leg *l = &a->leg[k];
    if (!g) {
      *l = (struct pol_admit_leg){.state = POL_ADMIT_NONE, .path = -1};
      continue;
    }
    *l = (struct pol_admit_leg){.state = st[g->st], .path = g->iface, .primary = g->primary,
                                .probe_leg = g == sp->probe_leg, .no_more = g->no_more,
                                .scheduled = g->sid >= 0, .queue_full = g->qn >= SCHED_MAX_QUEUE,
                                .queued = g->qn};
    for (unsigned q = 0; q < g->qn && !l->joined; q++)
      l->joined = !g->q[q].probe;  /* the probe alone does not count: it is not the plan's */
  }
  return &a->o;
}

/* How many legs on interface i can still carry requests. */
static unsigned mh__alive_count(const struct mh_split *sp, int i) {
  struct mh__admit a;
  return pol_admit_alive_count(mh__admit(sp, &a), i);
}

/* How many requests g keeps queued before its first rate sample (sched_early_depth): more
 * than MH__EARLY_DEPTH only on a path that would still be in slow start when a large object's
 * plan says it ends (pol_admit_early_finish). */
static uint32_t mh__early_depth(const struct mh_split *sp, const struct pol_admit_obj *o,
                                const struct mh__leg *g, uint64_t now) {
  uint64_t finish;
  if (!pol_admit_early_finish(o, &finish))
    return MH__EARLY_DEPTH;
  return sched_early_depth(sp->sched, g->sid, now, finish, sp->cfg->pol.init_window, MH__EARLY_DEPTH);
}

/* ---- rescue of a stalled connection ------------------------------------------------------ */

/* Rescues per object: a path that stalls again is better left to the stall timeout (mh__tick). */
#define MH__MAX_RESCUES 2

/* The taker of a pending rescue, once connected and idle, asks the victim's unreceived bytes
 * again (sched_rescue). Dropped when either leg is gone or the bytes moved on meanwhile. */
static void mh__rescue_assign(struct mh_split *sp) {
  if (!sp->rescue_taker)
    return;
  struct mh__leg *t = sp->legs[sp->rescue_taker - 1], *v = sp->legs[sp->rescue_victim - 1];
  if (t && t->st == LEG_CONNECTING && v && v->st == LEG_READY && v->qn)
    return;  /* its handshake is still in flight */
  sp->rescue_taker = sp->rescue_victim = 0;
  if (!t || !v || t->st != LEG_READY || v->st != LEG_READY || t->sid < 0 || v->sid < 0)
    return;
  struct sched_range r;
  int rc, n = 0;
  while (t->st == LEG_READY && t->qn < SCHED_MAX_QUEUE &&
         (rc = sched_rescue(sp->sched, t->sid, v->sid, mh_now_us(), &r)) == 0) {
    mh_dbg("split %u: leg %d (%s) asks %" PRIu64 "+%" PRIu64 " again for stalled leg %d (%s)", sp->id,
           t->idx, sp->ifaces[t->iface].name, r.off, r.len, v->idx, sp->ifaces[v->iface].name);
    n++;
    if (mh__leg_request(t, &r, 0, 1) < 0)
      mh__leg_fail(t, "request");
  }
  if (!n)
    mh_dbg("split %u: rescue of leg %d on leg %d: nothing moved", sp->id, v->idx, t->idx);
}

/* What a connection on interface j would be for a rescue of victim: an idle leg of this
 * object, else the pool's, else a new one (pol_path.reusable and idle_us as mh__build_view
 * tells them, for that very connection). Returns the idle leg, or NULL. */
static struct mh__leg *mh__rescue_taker(struct mh_split *sp, int j, const struct mh__leg *victim,
                                        struct pol_path *tp) {
  uint64_t now = mh_now_us();
  *tp = sp->view.path[j];
  tp->busy = 0;
  for (int k = 0; k < sp->nlegs; k++) {
    struct mh__leg *g = sp->legs[k];
    if (g && g != victim && g->iface == j && g->st == LEG_READY && !g->qn && !g->no_more && g->sid >= 0) {
      tp->reusable = true;
      tp->idle_us = mh__leg_idle_us(g, now);
      tp->window = mh_conn_window(mh_upstream_fd(g->up));
      return g;
    }
  }
  uint64_t idle = 0, w = 0;
  tp->reusable = sp->host[0] && mh_pool_idle(sp->ifaces[j].name, (struct sockaddr *)&sp->dst, sp->host, &idle, &w);
  tp->idle_us = tp->reusable ? idle : 0;
  tp->window = tp->reusable ? w : 0;
  return NULL;
}

/* A connection that has delivered nothing for longer than its retransmission timeout holds
 * bytes the object needs (asym: one lte0 segment lost, and the 100 KiB object behind it took
 * 1.1-1.4 s instead of 0.15-0.45 s, at the end of a page load). When pol_rescue_worth predicts
 * another connection sooner, that one asks those bytes again; the victim is still read, and
 * whichever copy comes first counts. Once per leg, MH__MAX_RESCUES per object. */
static void mh__rescue(struct mh_split *sp) {
  if (sp->state != SP_MANAGED || sp->primary_iface < 0 || sp->rescue_taker ||
      sp->rescues >= MH__MAX_RESCUES)
    return;
  uint64_t now = mh_now_us();
  int viewed = sp->planned;  /* mh__tick rebuilt it; an object the probe carries whole has none */
  for (int i = 0; i < sp->nlegs; i++) {
    struct mh__leg *v = sp->legs[i];
    if (!v || v->st != LEG_READY || !v->qn || v->paused || v->rescued || v->sid < 0 ||
        mh__since(now, v->t_progress_us) < POL_RTO_MIN_US)
      continue;
    if (!viewed) {
      mh__build_view(sp);
      viewed = 1;
    }
    if ((unsigned)v->iface >= sp->view.n)
      continue;
    struct sched_conn_stats cs;
    if (sched_conn_stats(sp->sched, v->sid, &cs) < 0 || !cs.owed)
      continue;
    uint64_t stalled = mh__since(now, v->t_progress_us);
    int best = -1;
    double best_t = 0, tv = 0;
    struct mh__leg *idle = NULL;
    for (int j = 0; j < sp->nifaces && (unsigned)j < sp->view.n; j++) {
      if (!sp->view.path[j].usable)
        continue;
      struct pol_path tp;
      struct mh__leg *t = mh__rescue_taker(sp, j, v, &tp);
      double tt;
      if (pol_rescue_worth(mh_policy_engine(), &sp->view.path[v->iface], stalled, &tp, cs.owed, &tv, &tt) &&
          (best < 0 || tt < best_t)) {
        best = j;
        best_t = tt;
        idle = t;
      }
    }
    if (best < 0)
      continue;
    v->rescued = 1;
    sp->rescues++;
    mh__note(sp, "rescue");
    mh_info("split %u: leg %d (%s) delivered nothing for %" PRIu64 " ms with %" PRIu64
            " B to bring (predicted %.0f ms): asked again on %s (%.0f ms)", sp->id, v->idx,
            sp->ifaces[v->iface].name, stalled / 1000, cs.owed, tv / 1000, sp->ifaces[best].name, best_t / 1000);
    struct mh__leg *t = idle ? idle : mh__leg_open(sp, best);
    if (!t)
      continue;
    if (t->st == LEG_CONNECTING && !t->t_connect_us)
      mh__leg_connected(t);  /* a connected pooled one: ready at once */
    sp->rescue_victim = v->idx + 1;
    sp->rescue_taker = t->idx + 1;
    mh__rescue_assign(sp);
    return;
  }
}

static void mh__drive(struct mh_split *sp) {
  if (sp->state != SP_VERIFY && sp->state != SP_MANAGED)
    return;
  mh__rescue_assign(sp);
  uint64_t now = mh_now_us();
  int alone = mh__live_legs(sp) <= 1;
  /* A leg that yielded (pol_admit_yields) comes before the one it yielded to in this
   * order; once that one has its range, a second pass gives the yielding leg its own at once
   * instead of at the next read event (asym, 100 KiB: wifi0 idled 18 ms after its probe). */
  for (int pass = 0, again = 1; pass < 2 && again; pass++) {
    int skipped = 0, issued = 0;
    for (int i = 0; i < sp->nlegs; i++) {
      struct mh__leg *g = sp->legs[i];
      if (!g || g->st != LEG_READY || g->no_more || g->sid < 0)
        continue;
      struct mh__admit a;
      if (!pol_admit_worth_using(mh__admit(sp, &a), (unsigned)i)) {
        skipped = 1;
        continue;
      }
      unsigned depth = sp->no_pipeline ? 1 : SCHED_MAX_QUEUE;
      for (int k = 0; k < SCHED_MAX_QUEUE && g->qn < depth && g->st == LEG_READY; k++) {
        struct sched_conn_stats st;
        sched_conn_stats(sp->sched, g->sid, &st);
        const struct pol_admit_obj *o = mh__admit(sp, &a);  /* the last request changed it */
        /* a new connection has no rate yet, so the scheduler would wait for its first chunk
         * before the next, and its first samples (slow start) are low, so pipelining by
         * rate comes late: the connection idles a round trip. Keep MH__EARLY_DEPTH requests
         * queued until the first sample, and on a lone path (nothing else keeps its link
         * busy... nor competes for the tail) until MH__EARLY_SAMPLES samples exist. */
        int early = alone ? st.samples < MH__EARLY_SAMPLES && g->qn < MH__EARLY_DEPTH
                          : !st.samples && g->qn < mh__early_depth(sp, o, g, now);
        if (k && pol_admit_over_share(o, (unsigned)i))
          break;  /* its share is asked: the next chunk goes to a planned path below its own */
        /* nothing missing: a queue that is due may still take a piece of a straggler's tail
         * (sched_resplit refuses when it is not due) */
        if (g->qn && !early && !sched_want_pipeline(sp->sched, g->sid, now) &&
            sched_ledger_bytes(sched_ledger(sp->sched), SCHED_MISSING, SCHED_NOBODY))
          break;
        struct sched_range r;
        const char *why = "next";
        uint64_t low = mh__lowest_missing(sp);
        int rc;
        if (low != UINT64_MAX && low >= sp->ra.pos + sp->cfg->window)
          break;  /* beyond the program's position + window: not requested yet */
        rc = mh__next_range(sp, g, now, pol_admit_share_left(o, (unsigned)i), &r);
        if (rc == -ENODATA || rc == -EBUSY) {
          int victim = -1;
          rc = sched_resplit(sp->sched, g->sid, now, &victim, &r);
          why = "resplit";
          if (rc == 0) {
            struct sched_conn_stats vs;
            sched_conn_stats(sp->sched, victim, &vs);
            mh_dbg("split %u: leg %d takes %" PRIu64 "+%" PRIu64 " over from connection %d (its rate %.0f B/s, rtl %.0f us)",
                   sp->id, g->idx, r.off, r.len, victim, vs.rate_Bps, vs.rtl_us);
          }
        }
        if (rc < 0)
          break;
        struct sched_conn_stats cs;
        sched_conn_stats(sp->sched, g->sid, &cs);
        mh_dbg("split %u: +%.1f ms leg %d (%s) range %" PRIu64 "+%" PRIu64 " (%s, case %d, rate %.0f B/s, rtl %.0f us, queued %u)",
               sp->id, (now - sp->t_start_us) / 1000.0, g->idx, sp->ifaces[g->iface].name, r.off, r.len, why,
               (int)cs.last_case, cs.rate_Bps, cs.rtl_us, cs.queued);
        if (mh__leg_request(g, &r, 0, 1) < 0) {
          mh__leg_fail(g, "request");
          break;
        }
        issued = 1;
      }
    }
    again = skipped && issued;
  }
}

/* ---- delivery ---------------------------------------------------------------------------- */

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
static int mh__deliver(struct mh_split *sp) {
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

/* Hands legs[i] to the pool when it is an extra connection with nothing outstanding: a clean
 * idle one for the next object's requests, one still connecting for the next object on its
 * path to adopt instead of paying a handshake again. Returns 1 when it went (legs[i] is then
 * NULL), 0 when it must be dropped or kept. */
static int mh__leg_park(struct mh_split *sp, int i) {
  struct mh__leg *g = sp->legs[i];
  if (!g || g->primary || g->qn || g->out.len || !sp->host[0])
    return 0;
  const char *ifname = sp->ifaces[g->iface].name;
  if (g->st == LEG_READY && !g->no_more && llhttp_get_errno(&g->p) == HPE_OK) {
    g->up->ops->watch(g->up, 0);
    /* its window is as warm as its last response byte, not as the time it is parked: an
     * extra taken from the pool and handed back unused is no warmer than it was */
    mh_pool_put(g->up, ifname, (struct sockaddr *)&g->dst, sp->host, g->t_rx_us);
  } else if (g->st == LEG_CONNECTING && g->t_connect_us) {
    g->up->ops->watch(g->up, 0);
    mh_pool_put_connecting(g->up, ifname, (struct sockaddr *)&g->dst, g->t_connect_us);
  } else {
    return 0;
  }
  if (g->sid >= 0)
    sched_conn_failed(sp->sched, g->sid);  /* nothing outstanding: it only leaves the plan */
  sp->legs[i] = NULL;
  mh__head_free(g);
  mh_buf_free(&g->out);
  free(g);
  return 1;
}

/* Once every byte of the object is asked, an extra connection opened with the probe that
 * never got a range has no work here: it goes to the pool now instead of when the object
 * ends, so that the objects in flight meanwhile find it. asym, wget2 many100k: a probe moved
 * to lte0 asked the whole object while its split held lte0's other pooled connection idle,
 * and the next probes went to wifi0 or a new lte0 handshake. A leg that carried ranges stays:
 * it is the one that takes a straggler's tail (sched_resplit). */
static void mh__release_spares(struct mh_split *sp) {
  if (sp->state != SP_MANAGED ||
      sched_ledger_bytes(sched_ledger(sp->sched), SCHED_MISSING, SCHED_NOBODY))
    return;
  for (int i = 0; i < sp->nlegs; i++) {
    struct mh__leg *g = sp->legs[i];
    struct sched_conn_stats cs;
    if (g && g != sp->probe_leg && i + 1 != sp->rescue_taker &&
        (g->sid < 0 || (sched_conn_stats(sp->sched, g->sid, &cs) == 0 && !cs.chunks)))
      mh__leg_park(sp, i);
  }
}

int mh_split_pump(struct mh_split *sp) {
  for (int round = 0; round < 4 && sp->state != SP_FINISHED; round++) {
    uint64_t pos = sp->ra.pos;
    int rc = mh__deliver(sp);
    if (rc < 0)
      return rc;
    if (sp->state == SP_FINISHED)
      break;
    mh__drive(sp);
    /* legs paused by a full window may read again now */
    for (int i = 0; i < sp->nlegs; i++)
      if (sp->legs[i] && sp->legs[i]->st == LEG_READY && sp->legs[i]->paused && mh__leg_may_read(sp->legs[i]))
        mh__leg_read(sp->legs[i]);
    if (sp->ra.pos == pos)
      break;
  }
  mh__release_spares(sp);
  for (int i = 0; i < sp->nlegs; i++)
    if (sp->legs[i] && sp->state != SP_FINISHED)
      mh__leg_watch(sp->legs[i]);
  return 0;
}

/* ---- timer: stalls and connect timeouts -------------------------------------------------- */

/* Connect timeouts and stalls. A leg stalls when it brought fewer than MH__PROGRESS_BYTES in 8
 * of its round trips (at least MH__STALL_MIN_US; a plain fetch waits MH__PLAIN_STALL_US). One
 * that stalls on a request it queued behind a finished answer met an origin that drops
 * pipelined requests: the object asks one range at a time from then on. */
/* g's answer started but its body trickles. In SP_PLAIN the origin's range answers are slow:
 * the program's own request from now on. A replica leaves the object; the origin's interface
 * takes no new connection to it, and when every interface has trickled the origin's ranges
 * are the trouble: mh__leg_bad. */
static void mh__leg_slow(struct mh__leg *g) {
  struct mh_split *sp = g->sp;
  if (sp->state == SP_PLAIN) {
    mh__plain_whole(sp, "its range answer trickles");
    mh__leg_fail(g, "trickles");
    return;
  }
  if (!mh__to_origin(sp, g)) {
    mh__leg_bad(g, "answer trickles");
    return;
  }
  if (g->iface >= 0 && g->iface < MH_MAX_IFACES)
    sp->slow |= 1u << g->iface;
  uint32_t all = sp->nifaces >= 32 ? UINT32_MAX : (1u << sp->nifaces) - 1;
  if ((sp->slow & all) == all)
    mh__leg_bad(g, "answers trickle on every path");
  else
    mh__leg_fail(g, "trickles: no new connection on this path");
}

static void mh__tick_legs(struct mh_split *sp, uint64_t now) {
  for (int i = 0; i < sp->nlegs && sp->state != SP_FINISHED; i++) {
    struct mh__leg *g = sp->legs[i];
    if (!g || g->st == LEG_DEAD)
      continue;
    /* a leg opened by a failure earlier in this loop started after now */
    if (g->st == LEG_CONNECTING && g->t_connect_us && mh__since(now, g->t_connect_us) > MH__CONNECT_TIMEOUT_US) {
      mh__leg_fail(g, "connect timeout");
      continue;
    }
    if (g->st != LEG_READY || !g->qn || g->paused)
      continue;
    /* the program's own request waits as long as the program would; a range of ours no longer
     * than another leg would */
    uint64_t limit = sp->plain_whole ? MH__PLAIN_STALL_US : 2 * MH__STALL_MIN_US;
    if (sp->state != SP_PLAIN) {
      struct sched_conn_stats cs;
      if (g->sid < 0 || sched_conn_stats(sp->sched, g->sid, &cs) < 0)
        continue;
      limit = (uint64_t)(8 * cs.rtl_us);
      if (limit < MH__STALL_MIN_US)
        limit = MH__STALL_MIN_US;
    }
    if (mh__since(now, g->t_progress_us) <= limit)
      continue;
    if (g->answers && !g->in_msg && !sp->no_pipeline && sp->state != SP_PLAIN) {
      mh_info("split %u: leg %d: no answer to a pipelined request: one request at a time", sp->id, g->idx);
      sp->no_pipeline = 1;
    }
    mh__note(sp, "stall");
    /* bytes still coming (within the last half of the limit) is a trickle; none is a path
     * gone silent, which the reconnects and rescue handle */
    if (g->resp_started && g->t_rx_us && mh__since(now, g->t_rx_us) < limit / 2)
      mh__leg_slow(g);
    else
      mh__leg_fail(g, "stalled");
  }
}

static void mh__tick(uv_timer_t *t) {
  struct mh_split *sp = t->data;
  struct mh__leg *pg = sp->probe_leg;
  if (sp->state == SP_PROBE && sp->probe_moved && pg && pg->st == LEG_READY && pg->qn) {
    /* the program's own connection would have answered by now, or shown the program why
     * not: past this the moved probe's path is broken and the program's request goes out on
     * its own connection. Generous: a slow origin must not get every GET twice. */
    struct sched_conn_stats cs;
    sched_conn_stats(sp->sched, pg->sid, &cs);
    uint64_t limit = (uint64_t)(8 * cs.rtl_us);
    if (limit < MH__PROBE_STALL_US)
      limit = MH__PROBE_STALL_US;
    if (mh__since(mh_now_us(), pg->t_progress_us) > limit) {
      mh__leg_fail(pg, "probe stalled");
      mh_session_kick(sp->sess);
    }
    return;
  }
  if (sp->state == SP_DISCARD && pg && mh__since(mh_now_us(), pg->t_progress_us) > MH__STALL_MIN_US) {
    /* the skipped answer stopped short of its length: a new connection instead */
    mh__restart(sp, "discard-stalled", 1);
    mh_session_kick(sp->sess);
    return;
  }
  if (sp->state != SP_VERIFY && sp->state != SP_MANAGED && sp->state != SP_PLAIN)
    return;
  mh__replicas_update(sp);  /* answers multiDNS got since the last tick */
  mh__tick_legs(sp, mh_now_us());
  if (sp->state == SP_MANAGED || sp->state == SP_VERIFY) {
    if (sp->planned && sp->primary_iface >= 0)
      mh__build_view(sp);  /* fresh metrics for pol_worth_adding */
    mh__rescue(sp);
  }
  mh_session_kick(sp->sess);
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

/* A connection to the program's server on the program's path for its next request, when its
 * own cannot carry one (answers of ours are still due on it, or it was given up) although the
 * origin did not end it: an idle leg of this object, else the pool's, else a new one. */
static struct mh_upstream *mh__replacement(struct mh_split *sp) {
  const struct sockaddr *dst = (const struct sockaddr *)&sp->dst;
  int path = sp->primary_iface < 0 ? 0 : sp->primary_iface;
  for (int i = 1; i < sp->nlegs; i++) {
    struct mh__leg *g = sp->legs[i];
    if (!g || g->iface != path || g->st != LEG_READY || g->qn || g->out.len ||
        g->no_more || llhttp_get_errno(&g->p) != HPE_OK || !mh_path_same_addr((const struct sockaddr *)&g->dst, dst))
      continue;
    struct mh_upstream *up = g->up;
    up->ops->watch(up, 0);
    sp->legs[i] = NULL;
    mh__head_free(g);
    mh_buf_free(&g->out);
    free(g);
    return up;
  }
  struct mh_upstream *up = NULL;
  if (sp->host[0] && sp->primary_iface >= 0)
    up = mh_pool_take(sp->ifaces[sp->primary_iface].name, dst, sp->host, NULL, NULL, NULL);
  int err = 0;
  return up ? up : mh_upstream_tcp_connect(sp->loop, (const struct sockaddr *)&sp->local, NULL, dst, NULL, NULL, &err);
}

/* The program's connection after a managed object: its own when clean; closed when the
 * origin ended it (the program sees what it would have); else a working replacement, so a
 * keep-alive program's next request finds its connection open as the origin left it. */
static void mh__finish_done(struct mh_split *sp) {
  struct mh__leg *g0 = sp->legs[0];
  int clean = g0 && g0->st == LEG_READY && !g0->qn && !g0->no_more && !sp->up_dead &&
              llhttp_get_errno(&g0->p) == HPE_OK;
  if (clean)
    return;
  if (!sp->up_closed)
    sp->res.new_up = mh__replacement(sp);
  sp->res.up_dead = !sp->res.new_up;
  if (sp->res.new_up)
    mh_dbg("split %u: the program's connection continues on another connection to its server", sp->id);
}

static void mh__finish(struct mh_split *sp, enum mh_split_end end) {
  if (sp->state == SP_FINISHED)
    return;
  mh__set_state(sp, SP_FINISHED);
  sp->res.end = end;
  uv_timer_stop(&sp->tick);
  for (int i = 0; i < sp->nlegs; i++)
    if (sp->legs[i] && sp->legs[i]->st != LEG_DEAD)
      sp->legs[i]->up->ops->watch(sp->legs[i]->up, 0), sp->legs[i]->watching = 0;
  struct mh__leg *g0 = sp->legs[0];
  if (end == MH_SPLIT_END_RELAY) {
    sp->res.raw_len = sp->res.resend ? 0 : sp->raw.len - sp->interim_sent;
    sp->res.raw = sp->res.raw_len ? mh_buf_head(&sp->raw) + sp->interim_sent : NULL;
    /* a resend goes out on a working connection: how the probe's one ended is not its story */
    sp->res.up_eof = sp->res.resend ? 0 : sp->up_eof;
    sp->res.up_reset = sp->res.resend ? 0 : sp->up_reset;
    sp->res.req = sp->req;
    sp->res.req_len = sp->req_len;
    /* a resend on a connection that has other answers in flight (or none left) goes out on a
     * fresh connection over the same path: the program's own is closed by the session */
    if (sp->res.resend && (!g0 || g0->st == LEG_DEAD || g0->qn || sp->up_dead || g0->no_more)) {
      int err = 0;
      sp->res.new_up = mh_upstream_tcp_connect(sp->loop, (const struct sockaddr *)&sp->local, NULL,
                                               (const struct sockaddr *)&sp->dst, NULL, NULL, &err);
      if (!sp->res.new_up) {
        sp->res.end = MH_SPLIT_END_RESET;
        return;
      }
    }
  } else if (end == MH_SPLIT_END_DONE) {
    mh__finish_done(sp);
  }
}

enum mh_split_end mh_split_result(struct mh_split *sp, struct mh_split_result *r) {
  *r = sp->res;
  return sp->state == SP_FINISHED ? sp->res.end : MH_SPLIT_RUNNING;
}

/* Writes the object's MHTTP_STATS line, once. */
static void mh__stats(struct mh_split *sp, enum mh_split_end end) {
  const char *path = sp->cfg->stats;
  if (!path[0] || sp->stats_done)
    return;
  sp->stats_done = 1;
  char line[2048], size[24] = "null";  /* null: the probe did not tell (relayed) */
  static const char *const ends[] = {"running", "relay", "ok", "reset", "eof"};
  if (sp->total)
    snprintf(size, sizeof size, "%" PRIu64, sp->total);
  /* the wall-clock start lets the lines of parallel objects (and processes) be laid out on
   * one timeline */
  uint64_t took = mh_now_us() - sp->t_start_us;
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  double start = (double)wall.tv_sec + wall.tv_nsec / 1e9 - took / 1e6;
  int n = snprintf(line, sizeof line,
                   "{\"host\":\"%s\",\"size\":%s,\"result\":\"%s\",\"start\":%.3f,\"duration_ms\":%.1f,"
                   "\"probe_ms\":%.1f,\"probe_bytes\":%" PRIu64 ",\"probe_iface\":\"%s\","
                   "\"probe_moved\":%s,\"paths\":[",
                   sp->host, size, ends[end], start, took / 1000.0,
                   sp->t_probe_us / 1000.0, sp->probe_len,
                   sp->ifaces[sp->probe_iface >= 0 ? sp->probe_iface : 0].name,
                   sp->probe_moved ? "true" : "false");
  for (int i = 0; i < sp->nifaces && n < (int)sizeof line - 200; i++)
    n += snprintf(line + n, sizeof line - (size_t)n,
                  "%s{\"iface\":\"%s\",\"bytes\":%" PRIu64 ",\"chunks\":%u}", i ? "," : "",
                  sp->ifaces[i].name, sp->pst[i].bytes, sp->pst[i].chunks);
  n += snprintf(line + n, sizeof line - (size_t)n, "],\"connections\":%d,\"fallbacks\":[", sp->nlegs);
  const char *f = sp->fallbacks;
  int first = 1;
  while (*f && n < (int)sizeof line - 64) {
    size_t l = strcspn(f, ",");
    n += snprintf(line + n, sizeof line - (size_t)n, "%s\"%.*s\"", first ? "" : ",", (int)l, f);
    first = 0;
    f += l + (f[l] == ',');
  }
  n += snprintf(line + n, sizeof line - (size_t)n, "]");
  if (sp->planned)
    n = (int)mh_policy_json(line, sizeof line - 4, (size_t)n, mh_policy_engine(), &sp->plan_view, &sp->pobj);
  n += snprintf(line + n, sizeof line - (size_t)n, "}\n");
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  (void)!write(fd, line, (size_t)n);
  close(fd);
}

static void mh__tick_closed(uv_handle_t *h) { free(h->data); }

void mh_split_free(struct mh_split *sp, int abort) {
  mh__stats(sp, sp->res.end);
  for (int i = 0; i < MH_MAX_IFACES; i++)
    if (sp->counted >> i & 1)
      mh_metrics_transfer(sp->midx[i], -1);
  for (int i = 0; i < sp->nlegs; i++) {
    struct mh__leg *g = sp->legs[i];
    if (g && (abort || !mh__leg_park(sp, i)))
      mh__leg_drop(g, !g->primary && (g->qn || g->st == LEG_CONNECTING));
  }
  sched_free(sp->sched);
  mh_reasm_free(&sp->ra);
  mh_buf_free(&sp->raw);
  mh_buf_free(&sp->head_out);
  free(sp->probe_hbuf);
  free(sp->phdrs);
  uv_close((uv_handle_t *)&sp->tick, mh__tick_closed);
}

/* A moved probe (mh__probe_move) did not get a usable 206: its connection is closed (a 200
 * there may be huge, and its bytes are not the program's connection's) and the program's
 * request goes out unchanged on its own connection (the session's resend), so the program
 * sees what it would have seen without the engine. */
static void mh__probe_fallback(struct mh_split *sp, const char *why) {
  struct mh__leg *g = sp->probe_leg;
  mh_info("split %u: moved probe on %s: %s: the program's request goes out on its own connection", sp->id,
          g ? sp->ifaces[g->iface].name : "?", why);
  mh__note(sp, "probe-moved-fallback");
  if (g && g->st != LEG_DEAD) {
    if (g->sid >= 0)
      sched_conn_failed(sp->sched, g->sid);
    g->st = LEG_DEAD;
    g->qn = 0;
    mh__leg_drop(g, 1);
  }
  sp->probe_leg = NULL;
  sp->res.resend = 1;
  mh__finish(sp, MH_SPLIT_END_RELAY);
}

/* A connection that existed before this split (the program's, a pooled one): the kernel's
 * RTT estimate as the scheduler's first latency, there being no handshake to time. */
static void mh__seed_rtt(struct mh_split *sp, struct mh__leg *g) {
  struct tcp_info ti;
  socklen_t tl = sizeof ti;
  int fd = mh_upstream_fd(g->up);
  if (fd >= 0 && getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 && ti.tcpi_rtt)
    sched_on_rtt(sp->sched, g->sid, ti.tcpi_rtt);
}

/* The connection the probe goes out on. The program's connection was placed at connect()
 * (shim_bind.c), but a keep-alive program sends its later requests on it however loaded its
 * path is now (asym, wget2: probes waited 18-153 ms behind wifi0's own traffic while a warm
 * lte0 connection idled). So the policy picks again for the probe's size with the load of
 * now (mh_policy_probe_move); when it picks another path that has a connected pooled
 * connection to the program's server, the probe goes there, and the program's connection
 * stays a ready leg that takes ranges like any other. */
static struct mh__leg *mh__probe_move(struct mh_split *sp, struct mh__leg *g0, uint64_t probe_size) {
  if (sp->primary_iface < 0 || sp->nifaces < 2 || !sp->host[0] || !sp->cfg->probe_move)
    return g0;
  /* a program that ends its connection after this response (HTTP/1.0, Connection: close)
   * learns the end from the server closing its connection (mh__finish: up_dead), which only
   * a probe on that connection brings about */
  if (!mh_rr_request_keeps_alive(&sp->rv))
    return g0;
  mh__build_view(sp);
  struct pol_choice c;
  int j = mh_policy_probe_move(mh_policy_engine(), &sp->view, sp->primary_iface, probe_size,
                               mh_policy_draw(), &c);
  if (j < 0 || j >= sp->nifaces)
    return g0;
  uint64_t idle = sp->view.path[j].idle_us;
  struct mh__leg *g = mh__leg_open(sp, j);
  if (!g)
    return g0;
  if (g->t_connect_us)  /* a handshake after all (the pool changed): an extra leg, no move */
    return g0;
  mh__leg_connected(g);
  if (g->st != LEG_READY)
    return g0;
  if (!g->hs_us)
    mh__seed_rtt(sp, g);
  sp->probe_moved = 1;
  /* the probe is sized for that connection's path (pol_moved_probe_size); a configured
   * init_chunk stays the user's */
  if (!sp->cfg->init_chunk_set) {
    uint64_t n = pol_moved_probe_size(mh_policy_engine(), &sp->view.path[j], probe_size,
                                      sp->cfg->init_chunk * POL_PROBE_MAX_CHUNKS);
    if (n != probe_size)
      sched_set_probe_chunk(sp->sched, n);  /* before any range: it cannot be refused */
  }
  if (idle == POL_IDLE_COLD)
    mh_dbg("split %u: probe moved to %s (pooled, never used; predicted %.0f us)", sp->id,
           sp->ifaces[j].name, c.predicted_us);
  else
    mh_dbg("split %u: probe moved to %s (pooled, idle %" PRIu64 " ms; predicted %.0f us)", sp->id,
           sp->ifaces[j].name, idle / 1000, c.predicted_us);
  return g;
}

/* The probe's size (pol_probe_size): about one round trip of the program's path, from its
 * metrics, up to POL_PROBE_MAX_CHUNKS init_chunks; init_chunk on a path not measured yet (or
 * with an untrusted rate, pol_rate_trusted). A configured init_chunk is the user's choice
 * and stays fixed, and so does a connection on no configured interface (no metrics to size
 * from). Only the probe takes it (sched_config.probe_chunk): an extra path's first chunk
 * (before it has a rate) is init_chunk, doubling per chunk. */
static uint64_t mh__probe_size(const struct mh_split *sp) {
  if (sp->cfg->init_chunk_set || sp->primary_iface < 0)
    return sp->cfg->init_chunk;
  struct pol_path m;
  memset(&m, 0, sizeof m);
  mh_metrics_snapshot(sp->midx[sp->primary_iface], &m);
  if (!pol_rate_trusted(&m, sp->cfg->pol.init_window))
    m.max_rate = 0;
  return pol_probe_size(mh_policy_engine(), &m, sp->cfg->init_chunk,
                        sp->cfg->init_chunk * POL_PROBE_MAX_CHUNKS);
}

int mh_split_start(struct mh_session *sess, uv_loop_t *loop, struct mh_upstream *up,
                   const char *req, size_t req_len, int prog_fd, struct mh_split **out) {
  static int settings_done;
  if (!settings_done) {
    llhttp_settings_init(&mh__settings);
    mh__settings.on_message_begin = mh__on_begin;
    mh__settings.on_header_field = mh__on_field;
    mh__settings.on_header_value = mh__on_value;
    mh__settings.on_headers_complete = mh__on_headers;
    mh__settings.on_body = mh__on_body;
    mh__settings.on_message_complete = mh__on_complete;
    settings_done = 1;
  }
  if (!mh__io && !(mh__io = malloc(MH__IO)))
    return -ENOMEM;
  const struct mh_config *cfg = mh_engine_config();
  if (!cfg->split || req_len > MH__REQ_CAP || mh_upstream_fd(up) < 0)
    return -ENOTSUP;
  struct mh_split *sp = calloc(1, sizeof *sp);
  if (!sp)
    return -ENOMEM;
  sp->cfg = cfg;
  memcpy(sp->req, req, req_len);
  sp->req_len = req_len;
  if (mh__parse_req(sp) < 0) {
    mh_dbg("split: request head not understood: relayed");
    free(sp);
    return -ENOTSUP;
  }
  enum mh_rr_verdict v = mh_rr_request_verdict(&sp->rv);
  if (v != MH_RR_SPLITTABLE) {
    mh_dbg("split: request relayed (%s)", mh_rr_verdict_str(v));
    free(sp);
    return -ENOTSUP;
  }
  int fd = mh_upstream_fd(up);
  socklen_t l = sizeof sp->dst;
  /* a replacement of the program's connection may still be connecting (mh__finish_done): its
   * server is the program's */
  if ((getpeername(fd, (struct sockaddr *)&sp->dst, &l) < 0 &&
       (errno != ENOTCONN || mh_session_peer(sess, &sp->dst) < 0)) ||
      (l = sizeof sp->local, getsockname(fd, (struct sockaddr *)&sp->local, &l) < 0) ||
      (sp->dst.ss_family != AF_INET && sp->dst.ss_family != AF_INET6)) {
    free(sp);
    return -ENOTSUP;
  }
  int n = mh_path_ifaces(cfg, sp->dst.ss_family, sp->ifaces, MH_MAX_IFACES);
  sp->nifaces = n > 0 ? n : 0;
  sp->primary_iface = mh_path_iface_of(sp->ifaces, sp->nifaces, (struct sockaddr *)&sp->local);
  if ((sp->primary_iface < 0 || sp->nifaces < 2) && !mh_engine_split_one_path()) {
    /* one path to the server (a loopback server, a connection on no configured interface, a
     * single interface): a probe could not help, and the request must then go out as written */
    mh_dbg("split: one path to the server: relayed unchanged");
    free(sp);
    return -ENOTSUP;
  }
  if (sp->primary_iface < 0) {
    /* (tests) on no configured interface: single path, under a pseudo-interface for the stats */
    sp->nifaces = 1;
    snprintf(sp->ifaces[0].name, sizeof sp->ifaces[0].name, "primary");
  }
  mh_reasm_budget_max = cfg->window;
  sp->id = ++mh__next_id;
  sp->sess = sess;
  sp->loop = loop;
  sp->prog_fd = prog_fd;
  sp->t_start_us = mh_now_us();
  mh_buf_init(&sp->raw, MH__RAW_CAP);
  mh_buf_init(&sp->head_out, 0);  /* sized when the probe's head is known */
  mh_reasm_init(&sp->ra, 0);
  for (int i = 0; i < MH_MAX_IFACES; i++)
    sp->midx[i] = i < sp->nifaces && sp->primary_iface >= 0 ? mh_metrics_iface(sp->ifaces[i].name) : -1;
  struct sched_config sc;
  sched_config_default(&sc);
  /* The other paths' first chunks follow a probe smaller than init_chunk (one round trip of
   * the program's path) but not a larger one (a long fat path's probe of up to 8 init_chunks):
   * demo, 4 MiB, first chunks of 32 KiB doubling instead of the 24 KiB probe's size: 0.75 ->
   * 0.83-0.87 s over 4 A/B rounds of 3 runs (lte0 asks 224 KiB before its first rate sample
   * instead of 171 KiB and its end is a long tail of re-splits). */
  sc.probe_chunk = mh__probe_size(sp);
  sc.initial_chunk = sc.probe_chunk < sp->cfg->init_chunk ? sc.probe_chunk : sp->cfg->init_chunk;
  sc.max_conns = cfg->max_conns + 8;  /* reconnects take new ids */
  /* Measured on the demo links (bench/split): with 1 ms samples the harmonic mean of a
   * 50 Mbit/s path sat near 2 MB/s (burst variance pulls a harmonic mean down); pipelining at
   * 2 R.rtl then came too late, the link idled between chunks, the samples dropped further
   * and tail re-splits handed a slow path too much. 5 ms samples over a 16-sample memory and
   * pipelining at 4 R.rtl keep a path busy (4 MiB: 0.86 s -> 0.79 s). */
  sc.sample_min_us = 5000;
  sc.hm_window = 16;
  sc.pipeline_rtts = 4;
  /* Tail re-splits by pieces of 2 RTTs, pipelined (scheduler/sched.h): on the demo links the
   * 50 ms path's rate is still climbing out of slow start when the tail is cut, so a split
   * point from its estimate handed the 10 ms path too much; eating the tail piece by piece
   * lets both meet where they really are (model with slow start, 4 MiB: 1.34 -> 1.21 x ideal;
   * testbed, median of 7: 0.794 -> 0.765 s). */
  sc.resplit_piece_rtts = 2;
  /* one more than MH__EARLY_DEPTH: sched_early_depth may queue a fourth case-4 chunk on a path
   * still in slow start at the plan's finish and keeps a slot for its first rate-sized one */
  sc.max_queue = MH__EARLY_DEPTH + 2;
  if (sched_new(&sc, SCHED_LEN_UNKNOWN, &sp->sched) < 0) {
    mh_buf_free(&sp->raw);
    mh_buf_free(&sp->head_out);
    mh_reasm_free(&sp->ra);
    free(sp);
    return -ENOMEM;
  }
  uv_timer_init(loop, &sp->tick);
  sp->tick.data = sp;
  uv_timer_start(&sp->tick, mh__tick, MH__TICK_MS, MH__TICK_MS);

  struct mh__leg *g0 = mh__leg_new(sp, sp->primary_iface < 0 ? 0 : sp->primary_iface);
  g0->primary = 1;
  g0->dst = sp->dst;
  g0->up = up;
  g0->st = LEG_READY;
  up->on_event = mh__leg_event;
  up->owner = g0;
  g0->sid = sched_conn_add(sp->sched, sp->t_start_us);
  mh__seed_rtt(sp, g0);
  sp->probe_leg = g0;
  struct sched_range r;
  char chk[MH__REQ_CAP + 512];
  if (mh_rr_range_request(&sp->rv, 0, sc.probe_chunk - 1, NULL, 0, 0, chk, sizeof chk) < 0) {
    up->on_event = NULL;
    sp->legs[0] = NULL;
    mh__head_free(g0);
    mh_buf_free(&g0->out);
    free(g0);
    sched_free(sp->sched);
    uv_close((uv_handle_t *)&sp->tick, mh__tick_closed);
    return -ENOTSUP;
  }
  /* the probe's size is the program's path's whichever connection carries it: the policy
   * compared the paths on that size */
  struct mh__leg *pg = mh__probe_move(sp, g0, sc.probe_chunk);
  sp->probe_leg = pg;
  sp->probe_iface = pg->iface;
  if (sched_next_range(sp->sched, pg->sid, sp->t_start_us, &r) < 0 || mh__leg_request(pg, &r, 1, 0) < 0) {
    /* out of memory (its size was checked above): nothing went out, so the program's request
     * goes out unchanged on its own connection */
    r.off = r.len = 0;
    if (pg != g0)
      mh__leg_fail(pg, "request");
    else {
      sp->res.resend = 1;
      mh__finish(sp, MH_SPLIT_END_RELAY);
    }
  }
  sp->probe_len = r.len;
  mh_dbg("split %u: probe %" PRIu64 "+%" PRIu64 " on %s for %s (%d interfaces)", sp->id, r.off,
         r.len, sp->ifaces[pg->iface].name, sp->host, sp->nifaces);
  if (sp->state != SP_FINISHED)  /* not when the probe could not go out (the resend above) */
    mh__open_extras(sp);
  for (int i = 0; i < sp->nlegs; i++)
    if (sp->legs[i])
      mh__leg_watch(sp->legs[i]);
  *out = sp;
  return 0;
}
