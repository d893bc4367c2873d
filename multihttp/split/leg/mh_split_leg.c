/* A leg: one connection of a split carrying ranges (open, send, read, window clamp, stall, failure, close). */
#include "split_core.h"
#include "split_deliver.h"
#include "split_leg.h"
#include "mh_clock.h"
#include "mh_config.h"
#include "mh_log.h"
#include "mh_rwnd.h"
#include "mh_upstream.h"
#include "policy/trickle.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *const mh__leg_names[] = {"CONNECTING", "READY", "DEAD"};

/* The one place a leg changes state: DEAD is final. */
void mh__leg_set_state(struct mh__leg *g, enum mh__leg_state st) {
  if (g->st == st)
    return;
  assert(g->st != LEG_DEAD);
  mh_dbg("split %u: leg %d: %s -> %s", g->sp->id, g->idx, mh__leg_names[g->st], mh__leg_names[st]);
  g->st = st;
}

/* A new connection of sp: over its owner's transport (own.tls: TLS through libcurl, else plain
 * TCP), so every leg, replacement and resend speaks what the owner's connection speaks; a
 * mirror's leg over the mirror's (its own server name and certificate). */
struct mh_upstream *mh__connect(struct mh_split *sp, int mirror, const struct sockaddr *src, const char *ifname,
                                const struct sockaddr *dst, mh_upstream_event_cb on_event, void *owner, int *err) {
  return mh_upstream_connect(sp->loop, sp->env->paths->env, src, ifname, dst, mh__tls_of(sp, mirror), on_event, owner,
                             err);
}

static void mh__leg_flush(struct mh__leg *g) {
  while (g->out.len && g->st == LEG_READY) {
    ssize_t n = g->up->ops->send(g->up, mh_buf_head(&g->out), g->out.len);
    if (n == -EAGAIN)
      break;
    if (n < 0) {
      g->end.reset = n == -EPIPE || n == -ECONNRESET;
      mh__leg_fail(g, "send failed");
      return;
    }
    mh_buf_consume(&g->out, (size_t)n);
  }
}

/* r's request is in g->out: it becomes g's next expected answer and is sent. */
void mh__leg_queue(struct mh__leg *g, const struct sched_range *r, int probe) {
  struct mh_split *sp = g->sp;
  mh__transfer_count(sp, g->iface); /* paired in mh_split_free */
  if (!g->qn)
    g->at.progress_us = mh_now_us();
  if (!g->at.asked_us)
    g->at.asked_us = mh_now_us();
  if (!probe)
    mh__path_asked(sp, g->iface, (int64_t)r->len);
  g->q[g->qn++] = (struct mh__req){.off = r->off, .len = r->len, .probe = probe};
  mh__leg_flush(g);
}

/* Queues request r (a range of the object, in the split's offsets: mh__span) on g. The probe
 * carries the program's own If-Range, if any; every later range the same one, else the probe's
 * strong validator, so a changed object never mixes. The last range of an object runs to its
 * end (MH_RR_TO_END). A mirror's leg sends the same request with the mirror's target and Host
 * (mh_rr_range_request_to). 0 or -errno. */
int mh__leg_request(struct mh__leg *g, const struct sched_range *r, int probe, int keep_alive) {
  struct mh_split *sp = g->sp;
  char buf[MH__REQ_CAP + 512];
  size_t vlen = sp->rq.span.if_range_len;
  const char *ifr = sp->rq.span.if_range;
  if (!probe && !ifr)
    ifr = mh__probe_if_range(sp, &vlen);
  uint64_t first = sp->rq.span.first + r->off, last = first + r->len - 1;
  if (!probe && r->off + r->len == sp->total && last + 1 == mh__probe_info(sp)->total)
    last = MH_RR_TO_END;
  const struct mh_split_mirror *m = g->mirror ? &sp->own.mirrors[g->mirror - 1] : NULL;
  struct mh_rr_mirror to = {0};
  if (m)
    to = (struct mh_rr_mirror){m->target, strlen(m->target), m->host, strlen(m->host), m->same_origin};
  ssize_t n = mh_rr_range_request_to(&sp->rq.rv, m ? &to : NULL, first, last, ifr, vlen, keep_alive, buf, sizeof buf);
  if (n < 0)
    return (int)n;
  int rc = mh_buf_append(&g->out, buf, (size_t)n);
  if (rc < 0)
    return rc;
  mh__leg_queue(g, r, probe);
  return 0;
}

/* 1 when a body byte at off is still to come on g: one of its queued answers covers it and has
 * not reached it yet (answers arrive in request order, so every byte queued ahead of it comes
 * first). */
static int mh__leg_brings(const struct mh__leg *g, uint64_t off) {
  for (unsigned k = 0; k < g->qn; k++)
    if (off >= g->q[k].off + g->q[k].got && off < g->q[k].off + g->q[k].len)
      return 1;
  return 0;
}

int mh__window_blocks(const struct mh_split *sp) {
  const char *d;
  return (sp->state == SP_MANAGED || sp->state == SP_PLAIN) && sp->sink->ops->ordered &&
         !mh_reasm_room(&sp->ra, MH__IO) && !mh__deliver_head_due(sp) && !mh_reasm_peek(&sp->ra, &d);
}

/* May g read now? Reads stop when the window is full, except on the connection that brings
 * the program's next byte while the program waits for it (mh__window_blocks): that one always
 * reads, through whatever its queue holds ahead of that byte (a range asked before it: the
 * object's end asked first, a stalled leg's bytes it still carries after a rescue asked them
 * elsewhere, a re-split piece), so a full window can never deadlock. The window is exceeded by
 * at most those queued bytes, and bytes already held or delivered are dropped, not stored. */
int mh__leg_may_read(const struct mh__leg *g) {
  const struct mh_split *sp = g->sp;
  if (g->hedge) /* its answer is held until it is the plain fetch (mh_split_hedge.c) */
    return g->hold.len < g->hold.cap;
  if (sp->rl.bucket.rate && !mh_bucket_avail(&sp->rl.bucket, mh_now_us(), 1))
    return 0; /* the rate limit: its timer reads again (mh__rl_arm) */
  if (sp->state == SP_PROBE || sp->state == SP_DISCARD)
    return 1;
  if (!g->qn || g->skip)
    return 1; /* idle (only a close or garbage can arrive), or bytes to drop */
  if (!g->ans.resp_started && !g->q[0].probe)
    return 1; /* its next bytes are a head (verification) */
  if (sp->state == SP_VERIFY && mh__asks_end(sp, g))
    return 1; /* the answer that ends SP_VERIFY is behind these bytes (over the window by at
                 most this leg's queue: the program cannot drain before it) */
  if (sp->state == SP_VERIFY && mh__probe_due(sp, g))
    return 1; /* SP_VERIFY ends only once the probe's own answer is whole (mh__verified): its
                 bytes (one probe) are read over a full window, which the program cannot drain
                 before the head goes out (many objects in VERIFY held the window among them) */
  if (mh_reasm_room(&sp->ra, MH__IO))
    return 1;
  return mh__window_blocks(sp) && mh__leg_brings(g, sp->ra.pos);
}

/* DRWA on the receiver side (mh_rwnd.h): an extra connection's sender may have at most
 * rwnd_k x its path's recorded BDP in flight, so its slow start cannot overshoot a bottleneck
 * queue of about one BDP (on demo, lte0 lost about 250 segments there and then read nothing
 * for 100-150 ms). The program's own connection and unmeasured paths are left alone. Set once
 * the connection is up: a clamp set while the SYN is out was lost at establishment (measured). */
static void mh__leg_clamp(struct mh_split *sp, struct mh__leg *g, uint64_t hs_us) {
  struct pol_path m;
  if (!(sp->cfg->rwnd_k > 0) || mh__iface_metrics(sp, g->iface, &m) < 0)
    return;
  int w = (int)mh_rwnd_clamp(sp->total, m.srtt_min_us, hs_us, m.max_rate, sp->cfg->rwnd_k);
  /* receive-buffer autotuning raises the window clamp along with the buffer (measured: the
   * origin saw 3 MB windows under a 600 kB clamp); a fixed buffer turns it off. Twice the
   * clamp: the window is only part of the buffer (skb overhead), and the clamp is the bound. */
  int buf = 2 * w;
  if (w && mh_upstream_control(g->up, MH_UPC_RCVBUF, &buf) == 0 &&
      mh_upstream_control(g->up, MH_UPC_WINDOW_CLAMP, &w) == 0 && (g->rw.clamp = w)) {
    g->rw.srtt_us = m.srtt_min_us;
    g->rw.t0_us = mh_now_us();
    g->rw.bytes = 0;
  }
  mh_dbg("split %u: leg %d (%s) window clamp %d B (0: none; object %" PRIu64 " B, srtt_min %" PRIu64
         " us, handshake %" PRIu64 " us, max rate %.0f B/s)",
         sp->id, g->idx, sp->net.ifaces[g->iface].name, g->rw.clamp, sp->total, m.srtt_min_us, hs_us, m.max_rate);
}

/* Holds the clamp after n bytes were read, and doubles it when the leg filled it (the path's
 * recorded rate was too low: the clamp must never pin a path below what it can do). */
static void mh__leg_clamp_read(struct mh__leg *g, size_t n) {
  uint64_t now = mh_now_us();
  g->rw.bytes += n;
  uint32_t w = mh_rwnd_grow((uint32_t)g->rw.clamp, g->rw.bytes, now - g->rw.t0_us, g->rw.srtt_us);
  if (w != (uint32_t)g->rw.clamp) {
    int buf = 2 * (int)w;
    (void)mh_upstream_control(g->up, MH_UPC_RCVBUF, &buf);
    mh_dbg("split %u: leg %d window clamp %d -> %u B (%" PRIu64 " B in %" PRIu64 " us)", g->sp->id, g->idx, g->rw.clamp,
           w, g->rw.bytes, now - g->rw.t0_us);
    g->rw.clamp = (int)w;
  }
  if (now - g->rw.t0_us >= g->rw.srtt_us) {
    g->rw.t0_us = now;
    g->rw.bytes = 0;
  }
  /* Linux (6.18 here) rewrites the clamp from the buffer size whenever arriving data change
   * its estimate of per-segment overhead: a clamp set once was 1.5 MB at the origin a few
   * round trips later. Setting it again per read holds it (an unchanged value is a no-op). */
  (void)mh_upstream_control(g->up, MH_UPC_WINDOW_CLAMP, &g->rw.clamp);
}

/* Parses one read of g. On the program's connection while its probe's answer is out, a 1xx
 * answer pauses the parser (mh__on_complete) so that its end in the raw bytes is known: those
 * bytes go to the program before the rewritten head. */
static llhttp_errno_t mh__leg_parse(struct mh__leg *g, const char *buf, size_t n, int probing) {
  struct mh_split *sp = g->sp;
  llhttp_errno_t err = llhttp_execute(&g->p, buf, n);
  while (err == HPE_PAUSED && sp->state != SP_FINISHED) {
    size_t used = (size_t)(llhttp_get_error_pos(&g->p) - buf);
    if (probing) { /* this read's bytes are the last kept: n - used of them follow the 1xx */
      mh__probe_interim_ends(sp, n - used);
      mh__leg_report(g, MH__LEG_INTERIM, NULL);
    }
    llhttp_resume(&g->p);
    err = used < n ? llhttp_execute(&g->p, buf + used, n - used) : HPE_OK;
    buf += used;
    n -= used;
  }
  return err;
}

/* g's connection ended (n: 0 for EOF, else -errno). A close-delimited body ends here. */
static void mh__leg_eof(struct mh__leg *g, ssize_t n) {
  struct mh_split *sp = g->sp;
  /* a close inside a body that has a length is the server's error, not the path's (a path
   * that breaks resets or goes silent): its ranges are not to be trusted */
  int cut_body = n == 0 && g->ans.in_msg && g->ans.resp_started && g->qn && !llhttp_message_needs_eof(&g->p);
  if (n == 0 && g->ans.in_msg)
    llhttp_finish(&g->p); /* a body without length ends with the connection */
  if (sp->state == SP_FINISHED)
    return;
  g->end.eof = n == 0;
  g->end.reset = n == -ECONNRESET || n == -EPIPE;
  g->end.cut_body = cut_body;
  if (sp->state == SP_VERIFY && mh__probe_due(sp, g)) {
    /* the answer to the program's own request was cut (reset, or closed inside its body):
     * an origin that ends every answer early gives the program the same end, so that request
     * goes out unchanged and the program sees what it would have; no reconnect chases it */
    if (n == 0 || n == -ECONNRESET) /* the server's doing, not a path's (an unreachable host) */
      mh__ranges_bad(sp, n == 0 ? "were cut short" : "were reset");
    mh__restart(sp, n == 0 ? "probe-cut" : "probe-reset", g->primary);
    return;
  }
  if (cut_body && sp->state != SP_PLAIN)
    mh__leg_bad(g, "answer ended short");
  else
    mh__leg_fail(g, n == 0 ? "server closed" : strerror((int)-n));
}

void mh__leg_feed(struct mh__leg *g, const char *buf, size_t n) {
  struct mh_split *sp = g->sp;
  llhttp_errno_t err = mh__leg_parse(g, buf, n, 0);
  if (sp->state != SP_FINISHED && err != HPE_OK && g->st != LEG_DEAD)
    mh__leg_bad(g, llhttp_errno_name(err));
}

void mh__leg_read(struct mh__leg *g) {
  struct mh_split *sp = g->sp;
  if (g->hedge) { /* its answer is held (mh_split_hedge.c) */
    mh__leg_report(g, MH__LEG_HEDGE_READABLE, NULL);
    return;
  }
  for (int i = 0; i < MH__ROUNDS && g->st == LEG_READY && sp->state != SP_FINISHED; i++) {
    if (!mh__leg_may_read(g))
      break;
    size_t want = MH__IO;
    /* the program's connection carrying the probe: its bytes are the relay fallback */
    int probing = sp->state == SP_PROBE && g->primary && !mh__probe_moved(sp);
    if (probing) {
      /* the copy kept for a relay is bounded too */
      size_t room = mh__probe_raw_room(sp);
      if (!room) { /* a head this large is not ours to parse: the program's own request */
        mh__restart(sp, "probe-head-too-large", 1);
        return;
      }
      if (room < want)
        want = room;
    }
    uint64_t now = mh_now_us();
    want = mh_bucket_avail(&sp->rl.bucket, now, want);
    ssize_t n = g->up->ops->recv(g->up, sp->env->io, want);
    if (n == -EAGAIN)
      return;
    if (n > 0)
      mh_bucket_take(&sp->rl.bucket, now, (size_t)n);
    if (n > 0 && g->rw.clamp)
      mh__leg_clamp_read(g, (size_t)n);
    if (n <= 0) {
      if (probing) {
        sp->prog.up_eof = 1;
        sp->prog.up_reset = n < 0;
        mh__finish(sp, MH_SPLIT_END_RELAY); /* the program sees what it would have */
        return;
      }
      mh__leg_eof(g, n);
      return;
    }
    g->at.rx_us = mh_now_us(); /* the server just sent: its window is open (pol_window_open) */
    if (probing)
      mh__probe_raw_keep(sp, sp->env->io, (size_t)n);
    llhttp_errno_t err = mh__leg_parse(g, sp->env->io, (size_t)n, probing);
    if (sp->state == SP_FINISHED)
      return;
    if (err != HPE_OK && g->st != LEG_DEAD) {
      if (probing && sp->state == SP_PROBE) {
        mh__restart(sp, "probe-unparsable", 1); /* relaying it would pass on our Range's answer */
        return;
      }
      mh__leg_bad(g, llhttp_errno_name(err));
      return;
    }
  }
}

static void mh__leg_closed(struct mh_upstream *up) {
  struct mh__leg *g = up->owner;
  mh__head_free(g);
  mh_buf_free(&g->out);
  free(g);
}

/* Detaches g from the split and frees it (its upstream closes asynchronously). */
void mh__leg_drop(struct mh__leg *g, int abort) {
  struct mh_split *sp = g->sp;
  if (g->idx >= 0) /* (the hedge holds no slot) */
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

/* 1 when g goes to the program's server (not to a replica multiDNS named or the owner pinned,
 * nor to a mirror). */
int mh__to_origin(const struct mh_split *sp, const struct mh__leg *g) {
  return g->primary ||
         (!g->mirror && mh_path_same_addr((const struct sockaddr *)&g->dst, (const struct sockaddr *)&sp->prog.dst));
}

/* g's handshake time as one round trip of its path: the transport's own measure when it has
 * a shorter one (TLS answers its TCP handshake: the TLS round trips after it are no sample of
 * the path), else the time since its connect began (0: unknown). */
static uint64_t mh__leg_hs_us(struct mh__leg *g, uint64_t now) {
  uint64_t hs = g->at.connect_us ? now - g->at.connect_us : g->at.hs_us, own = 0;
  if (mh_upstream_query(g->up, MH_UPQ_HANDSHAKE_US, NULL, &own) == 0 && own && (!hs || own < hs))
    hs = own;
  /* a handshake whose SYN went out again (a path that just came back, mh_split_net.c) lasted a
   * retransmission timeout, not a round trip; the kernel's sample of it (timestamps, Karn's
   * rule) is the round trip. Taken only then: a second's "round trip" sized its chunks at 20 s. */
  uint64_t srtt = mh_upstream_srtt_us(g->up);
  if (srtt && hs > 2 * srtt)
    hs = srtt;
  return hs;
}

void mh__leg_connected(struct mh__leg *g) {
  struct mh_split *sp = g->sp;
  int err = mh_upstream_error(g->up);
  if (err < 0 && g->hedge) {
    mh__leg_fail(g, strerror(-err)); /* the hedge is dropped */
    return;
  }
  if (err < 0) {
    mh__srv_drop(sp, g, err, "could not connect"); /* a replica or mirror is not tried again there */
    mh__leg_fail(g, strerror(-err));
    return;
  }
  uint64_t now = mh_now_us();
  mh__leg_set_state(g, LEG_READY);
  if (sp->state == SP_PLAIN || g->hedge)
    return; /* one range, no scheduling, no window clamp: as a plain client */
  g->sid = sched_conn_add(sp->sched, now);
  if (g->sid < 0) {
    mh__leg_fail(g, "connection limit");
    return;
  }
  uint64_t hs = mh__leg_hs_us(g, now);
  mh__leg_clamp(sp, g, hs);
  if (hs) /* the handshake time is this path's first latency sample */
    sched_on_rtt(sp->sched, g->sid, (uint32_t)hs);
  mh_dbg("split %u: +%.1f ms leg %d (%s) connected in %" PRIu64 " us", sp->id, (now - sp->t_start_us) / 1000.0, g->idx,
         sp->net.ifaces[g->iface].name, g->at.connect_us ? now - g->at.connect_us : 0);
}

/* An event of g's connection: connect, send, read, then the owner pumps the split. */
static void mh__leg_on(struct mh__leg *g, int status, int events) {
  struct mh_split *sp = g->sp;
  if (g->st == LEG_CONNECTING && (events & UV_WRITABLE || status < 0))
    mh__leg_connected(g);
  if (g->st == LEG_READY && (events & UV_WRITABLE))
    mh__leg_flush(g);
  if (g->st == LEG_READY && (events & UV_READABLE || status < 0))
    mh__leg_read(g);
  mh__kick(sp);
}

void mh__leg_event(struct mh_upstream *up, int status, int events) { mh__leg_on(up->owner, status, events); }

/* The program's connection keeps its owner's callbacks: the owner forwards them here. Once the
 * split is finished, or its leg was dropped, nothing of it is watched any more. */
void mh_split_up_event(struct mh_split *sp, int status, int events) {
  struct mh__leg *g0 = sp->legs[0];
  if (g0 && g0->primary && sp->state != SP_FINISHED)
    mh__leg_on(g0, status, events);
}

void mh__leg_watch(struct mh__leg *g) {
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
      g->at.progress_us = mh_now_us(); /* time spent paused is not a stall */
      g->tw.t0_us = 0;                 /* nor a trickle */
      if (g->sid >= 0)
        sched_on_resume(g->sp->sched, g->sid); /* nor the path's rate */
    }
  }
  if (ev != g->watching) {
    g->watching = ev;
    g->up->ops->watch(g->up, ev);
  }
}

/* A new leg in sp->legs; renewal: it replaces a connection its server ended (mh__leg_renew). */
static struct mh__leg *mh__leg_slot(struct mh_split *sp, int iface, int renewal) {
  int idx = sp->nlegs;
  /* a plain fetch, a renewed keep-alive connection and an origin that closes after every
   * answer reconnect as often as the origin closes: they reuse the slots of legs gone */
  for (int i = 0; idx == MH__MAX_LEGS && i < sp->nlegs && (sp->state == SP_PLAIN || renewal || mh__closes(sp)); i++)
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
  g->srv = -1;
  g->watching = -1;
  mh_buf_init(&g->out, MH__OUT_CAP);
  llhttp_init(&g->p, HTTP_RESPONSE, mh__answer_settings());
  g->p.data = g;
  sp->legs[idx] = g;
  if (idx == sp->nlegs)
    sp->nlegs++;
  return g;
}

struct mh__leg *mh__leg_new(struct mh_split *sp, int iface) {
  return mh__leg_slot(sp, iface, 0);
}

/* Opens (or takes from the pool) a connection on interface i to dst (NULL: the program's
 * server) for mirror (0: the program's request's server); renewal: as mh__leg_slot's. */
static struct mh__leg *mh__leg_open_in(struct mh_split *sp, int i, int mirror, const struct sockaddr *dst,
                                       int renewal) {
  if ((!dst && sp->state != SP_PLAIN && mh__slow_on(sp, i)) || (sp->net.down >> i & 1))
    return NULL; /* (net_down: the interface is gone, mh_split_net.c) */
  struct mh__leg *g = mh__leg_slot(sp, i, renewal);
  if (!g)
    return NULL;
  if (!dst)
    dst = (const struct sockaddr *)&sp->prog.dst;
  memcpy(&g->dst, dst, dst->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
  g->mirror = mirror;
  g->srv = mh__srv_of(sp, i, mirror, dst);
  struct mh_pool_taken how = {0};
  g->up = mh_pool_take(sp->env->paths->pool, sp->net.ifaces[i].name, dst, mh__xport_of(sp, mirror),
                       mh__host_of(sp, mirror), mh__leg_event, g, &how);
  if (g->up) {
    mh__note_pooled(sp);
    mh_dbg("split %u: leg %d (%s) reuses a pooled connection%s", sp->id, g->idx, sp->net.ifaces[i].name,
           how.connecting   ? " (pre-connect, handshake in flight)"
           : how.t_start_us ? " (pre-connected)"
                            : "");
    /* connected: the first writable event says so at once; a pre-connect still connecting is
     * waited for like a fresh connection (its connect timeout counts from its own start) */
    mh__leg_set_state(g, LEG_CONNECTING);
    g->at.connect_us = how.connecting ? how.t_start_us : 0;
    g->at.hs_us = how.handshake_us;
    g->at.rx_us = how.used_us;
  } else {
    int err = 0;
    /* on no configured interface (loopback, an unlisted device): the program's own source
     * address, so the connection leaves the way the program's did; a mirror's as the kernel
     * routes it (a loopback source reaches no other host) */
    const struct sockaddr *src = sp->net.primary_iface >= 0 ? (const struct sockaddr *)&sp->net.ifaces[i].addr
                                 : mirror                   ? NULL
                                                            : (const struct sockaddr *)&sp->prog.local;
    g->up = mh__connect(sp, mirror, src, sp->net.primary_iface < 0 ? NULL : sp->net.ifaces[i].name, dst, mh__leg_event,
                        g, &err);
    if (!g->up) {
      mh_info("split %u: connect on %s: %s", sp->id, sp->net.ifaces[i].name, strerror(-err));
      mh__srv_drop(sp, g, err, "could not connect");
      sp->legs[g->idx] = NULL;
      if (g->idx == sp->nlegs - 1)
        sp->nlegs--;
      mh_buf_free(&g->out);
      free(g);
      return NULL;
    }
    mh__leg_set_state(g, LEG_CONNECTING);
    g->at.connect_us = mh_now_us();
  }
  mh__leg_watch(g);
  return g;
}

struct mh__leg *mh__leg_open_to(struct mh_split *sp, int i, int mirror, const struct sockaddr *dst) {
  return mh__leg_open_in(sp, i, mirror, dst, 0);
}

struct mh__leg *mh__leg_open(struct mh_split *sp, int i) {
  return mh__leg_open_to(sp, i, 0, NULL);
}

/* A server may end a keep-alive connection after its N-th answer (nginx keepalive_requests):
 * Connection: close on that answer (the requests pipelined behind it are never answered), or a
 * close once it completed. A request of ours that reached its socket after that close makes its
 * kernel reset the connection, and the reset may cut the last answer's tail. For a connection
 * that carried several answers none of that is a failure of the path (curl, too, asks again on
 * a fresh connection when a reused one dies before its answer): a new connection to the same
 * server on the same interface takes over while the object still needs bytes, opened as that
 * answer completes (mh__on_complete) or at the close (mh__leg_fail); the old one's ranges go
 * back to the scheduler when it closes. Bounded by progress: each renewed connection brought
 * at least two answers. A close inside an answer that did not say close is the server's error
 * (mh__leg_eof). An origin that closes after every answer is not renewed here:
 * mh__ensure_paths and the plain fallback (mh_split_plain.c) handle it. Fills *rn; 1 when g
 * ended so and no connection replaces it yet. */
int mh__leg_renews(const struct mh__leg *g, struct mh__renewal *rn) {
  const struct mh_split *sp = g->sp;
  int between = !g->ans.in_msg && (g->end.said_close || ((g->end.eof || g->end.reset) && !g->no_more));
  int last_cut = g->ans.in_msg && g->end.said_close && g->end.reset;
  rn->on = !g->end.renewed && (between || last_cut) && !g->end.cut_body && g->answers + (unsigned)g->ans.in_msg >= 2 &&
           (sp->state == SP_VERIFY || sp->state == SP_MANAGED) && !sched_done(sp->sched);
  if (!rn->on)
    return 0;
  rn->iface = g->iface;
  rn->mirror = g->mirror;
  rn->origin = mh__to_origin(sp, g);
  rn->dst = g->dst;
  return 1;
}

/* Opens the connection *rn describes. 1 when it did. */
int mh__leg_renew(struct mh_split *sp, const struct mh__renewal *rn) {
  if (!rn->on || sp->state == SP_FINISHED)
    return 0;
  struct mh__leg *g =
      mh__leg_open_in(sp, rn->iface, rn->mirror, rn->origin ? NULL : (const struct sockaddr *)&rn->dst, 1);
  if (g)
    g->end.renewal = 1;
  mh_dbg("split %u: %s's server ends a keep-alive connection: %s", sp->id, sp->net.ifaces[rn->iface].name,
         g ? "a new one takes over" : "none can be opened");
  return g != NULL;
}

/* g's share of its path's rate for the trickle rule: the path's measured rate over the
 * connections of this object reading on it and the other transfers there; 0 unknown. */
static double mh__leg_share(const struct mh_split *sp, const struct mh__leg *g) {
  const struct pol_path *pp = mh__view_path(sp, g->iface);
  if (!pp)
    return 0;
  unsigned n = pp->transfers;
  for (int i = 0; i < sp->nlegs; i++) {
    const struct mh__leg *o = sp->legs[i];
    n += o && o->st == LEG_READY && o->iface == g->iface && o->qn;
  }
  return pp->max_rate / (n ? n : 1);
}

/* g's trickle window at now, as the rule reads it (rtl_us: its request latency, 0 unknown).
 * 0 when it has none to judge. */
static int mh__leg_window(struct mh__leg *g, uint64_t now, uint64_t rtl_us, struct pol_trickle_in *in) {
  struct mh_split *sp = g->sp;
  if ((sp->state == SP_PLAIN && sp->plain.whole) || g->q[0].probe || !g->tw.t0_us || g->tw.t0_us > now ||
      sp->rl.bucket.rate) { /* under a rate limit the pace is ours, not the origin's */
    if (g->tw.t0_us > now)
      g->tw.t0_us = 0; /* opened by a byte read after now was taken */
    return 0;
  }
  const struct pol_path *pp = mh__view_path(sp, g->iface);
  if (!rtl_us && pp)
    rtl_us = pp->srtt_min_us;
  *in = (struct pol_trickle_in){.elapsed_us = now - g->tw.t0_us,
                                .bytes = g->tw.bytes,
                                .quiet_us = mh__since(now, g->at.rx_us),
                                .rtt_us = rtl_us,
                                .share_Bps = mh__leg_share(sp, g),
                                .slots = g->tw.slots,
                                .low_before = g->tw.low};
  return 1;
}

/* mh__leg_window with g's request latency as the scheduler knows it. */
static int mh__leg_window_now(struct mh__leg *g, uint64_t now, struct pol_trickle_in *in) {
  struct sched_conn_stats cs = {0};
  return g->sid >= 0 && sched_conn_stats(g->sp->sched, g->sid, &cs) == 0 &&
         mh__leg_window(g, now, (uint64_t)cs.rtl_us, in);
}

int mh__leg_crawls(struct mh__leg *g, uint64_t now) {
  struct pol_trickle_in in;
  return mh__leg_window_now(g, now, &in) && pol_trickle_crawling(&in);
}

/* The paths (bits) not yet judged slow whose connections to the origin are all in a crawling
 * window (pol_trickle_crawling; creep: pol_trickle_creeping), besides g's; one whose window went quiet after its first
 * bytes (pol_trickle_quiet) neither crawls nor says its path is fine: against an origin that
 * sends each new range's first 64 KiB at full speed, a rescue's fresh connection would
 * otherwise hold its path "fine" until its own crawl showed. */
uint32_t mh__crawling_paths(struct mh_split *sp, const struct mh__leg *g, int creep) {
  uint32_t crawl = 0, fine = 0;
  uint64_t now = mh_now_us();
  for (int i = 0; i < sp->nlegs; i++) {
    struct mh__leg *o = sp->legs[i];
    if (!o || o == g || o->st != LEG_READY || !o->qn || o->iface < 0 || o->iface >= 32 || mh__slow_on(sp, o->iface) ||
        !mh__to_origin(sp, o))
      continue;
    struct pol_trickle_in in;
    int win = mh__leg_window_now(o, now, &in);
    int crawls = win && (creep ? pol_trickle_creeping(&in) : pol_trickle_crawling(&in));
    if (!crawls && win && pol_trickle_quiet(&in))
      continue;
    *(crawls ? &crawl : &fine) |= 1u << o->iface;
  }
  return crawl & ~fine;
}

/* The trickle rule (policy/trickle.h) on g, a leg with requests out and not paused: 1 when
 * it trickles and was handled (mh__leg_slow). The program's own request is not judged: what
 * its answer does, the program would have seen. */
static int mh__leg_trickle(struct mh__leg *g, uint64_t now, uint64_t rtl_us) {
  struct mh_split *sp = g->sp;
  struct pol_trickle_in in;
  if (!mh__leg_window(g, now, rtl_us, &in))
    return 0;
  enum pol_trickle v = pol_trickle_judge(&in);
  if (v == POL_TRICKLE_WAIT)
    return 0;
  g->tw.t0_us = 0; /* the next byte opens the next window */
  g->tw.low = v == POL_TRICKLE_LOW;
  if (v != POL_TRICKLE_SLOW)
    return 0;
  mh_info("split %u: leg %d (%s) trickles: %" PRIu64 " B in %" PRIu64 " ms (share %.0f B/s, rtt %" PRIu64 " us)",
          sp->id, g->idx, sp->net.ifaces[g->iface].name, in.bytes, in.elapsed_us / 1000, in.share_Bps, rtl_us);
  mh__note(sp, "trickle");
  mh__leg_report(g, MH__LEG_SLOW, NULL);
  return 1;
}

/* Every path's connections to the origin creep at once (pol_trickle_creeping, in the same
 * tick: far below a per-second pacer's dribble): the origin paces its range answers, wherever
 * they go. One connection's own verdict
 * waits until its bytes spread over POL_TRICKLE_EARLY_SLOTS slots (a pacer's dribble at a
 * slot's edge is not yet a trickle), 0.3-0.4 s for an origin that sends 10 bytes every 100 ms;
 * connections on two paths crawling together say it after their second read. mh__leg_slow on
 * one of them then finds the others crawling: the program's own request from now on. Asked at
 * every tick, and at the pump after a read that left a connection's window under a segment
 * (mh__crawl_ask): the second read of a crawl is the moment. */
void mh__crawl_everywhere(struct mh_split *sp) {
  uint32_t all = sp->net.nifaces >= 32 ? UINT32_MAX : (1u << sp->net.nifaces) - 1;
  if (sp->net.nifaces < 2 || (sp->state != SP_MANAGED && sp->state != SP_VERIFY) ||
      (mh__crawling_paths(sp, NULL, 1) & all) != all)
    return;
  for (int i = 0; i < sp->nlegs; i++) {
    struct mh__leg *g = sp->legs[i];
    if (g && g->st == LEG_READY && g->qn && mh__to_origin(sp, g) && g->tw.t0_us && !g->q[0].probe) {
      mh_info("split %u: every path's answers crawl at once", sp->id);
      mh__note(sp, "trickle");
      mh__leg_report(g, MH__LEG_SLOW, NULL);
      return;
    }
  }
}

/* Connect timeouts and stalls. A leg stalls when it brought fewer than MH__PROGRESS_BYTES in 8
 * of its round trips (at least MH__STALL_MIN_US; a plain fetch waits MH__PLAIN_STALL_US). One
 * that stalls on a request it queued behind a finished answer met an origin that drops
 * pipelined requests: the object asks one range at a time from then on. */
void mh__tick_legs(struct mh_split *sp, uint64_t now) {
  for (int i = 0; i < sp->nlegs && sp->state != SP_FINISHED; i++) {
    struct mh__leg *g = sp->legs[i];
    if (!g || g->st == LEG_DEAD)
      continue;
    /* a leg opened by a failure earlier in this loop started after now */
    if (g->st == LEG_CONNECTING && g->at.connect_us && mh__since(now, g->at.connect_us) > MH__CONNECT_TIMEOUT_US) {
      mh__srv_drop(sp, g, -ETIMEDOUT, "could not connect");
      mh__leg_fail(g, "connect timeout");
      continue;
    }
    if (g->st != LEG_READY || !g->qn || g->paused) {
      g->tw.t0_us = 0;
      continue;
    }
    /* the program's own request waits as long as the program would; a range of ours no longer
     * than another leg would */
    uint64_t limit = sp->plain.whole ? MH__PLAIN_STALL_US : 2 * MH__STALL_MIN_US;
    struct sched_conn_stats cs = {0};
    if (sp->state != SP_PLAIN && (g->sid < 0 || sched_conn_stats(sp->sched, g->sid, &cs) < 0))
      continue;
    if (mh__leg_trickle(g, now, (uint64_t)cs.rtl_us))
      continue;
    if (sp->state != SP_PLAIN) {
      limit = (uint64_t)(8 * cs.rtl_us);
      if (limit < MH__STALL_MIN_US)
        limit = MH__STALL_MIN_US;
    }
    if (mh__since(now, g->at.progress_us) <= limit)
      continue;
    if (g->answers && !g->ans.in_msg && sp->state != SP_PLAIN)
      mh__pipeline_dropped(sp, g);
    mh__note(sp, "stall");
    /* bytes still coming (within the last half of the limit) is a trickle; none is a path
     * gone silent, which the reconnects and rescue handle */
    if (g->ans.resp_started && g->at.rx_us && mh__since(now, g->at.rx_us) < limit / 2)
      mh__leg_report(g, MH__LEG_SLOW, NULL);
    else
      mh__leg_report(g, MH__LEG_STALLED, NULL);
  }
  mh__crawl_everywhere(sp);
}

/* 1 when a request of g runs to the object's end (the one that checks the probe's total). */
int mh__asks_end(const struct mh_split *sp, const struct mh__leg *g) {
  for (unsigned k = 0; k < g->qn; k++)
    if (g->q[k].off + g->q[k].len == sp->total)
      return 1;
  return 0;
}

/* How long leg g's connection has been idle (pol_path.idle_us): since its last response
 * byte, when its server's window was open; POL_IDLE_COLD when it never carried one. */
uint64_t mh__leg_idle_us(const struct mh__leg *g, uint64_t now) {
  return g->at.rx_us ? (now > g->at.rx_us ? now - g->at.rx_us : 0) : POL_IDLE_COLD;
}

/* Hands legs[i] to the pool when it is an extra connection with nothing outstanding: a clean
 * idle one for the next object's requests, one still connecting for the next object on its
 * path to adopt instead of paying a handshake again. Returns 1 when it went (legs[i] is then
 * NULL), 0 when it must be dropped or kept. */
int mh__leg_park(struct mh_split *sp, int i) {
  struct mh__leg *g = sp->legs[i];
  if (!g || g->primary || g->qn || g->out.len || !sp->rq.host[0])
    return 0;
  const char *ifname = sp->net.ifaces[g->iface].name, *xport = mh__xport_of(sp, g->mirror);
  if (g->st == LEG_READY && !g->no_more && llhttp_get_errno(&g->p) == HPE_OK) {
    g->up->ops->watch(g->up, 0);
    /* its window is as warm as its last response byte, not as the time it is parked: an
     * extra taken from the pool and handed back unused is no warmer than it was */
    mh_pool_put(sp->env->paths->pool, g->up, ifname, (struct sockaddr *)&g->dst, xport, mh__host_of(sp, g->mirror),
                g->at.rx_us);
  } else if (g->st == LEG_CONNECTING && g->at.connect_us) {
    g->up->ops->watch(g->up, 0);
    mh_pool_put_connecting(sp->env->paths->pool, g->up, ifname, (struct sockaddr *)&g->dst, xport, g->at.connect_us);
  } else {
    return 0;
  }
  if (g->sid >= 0)
    sched_conn_failed(sp->sched, g->sid); /* nothing outstanding: it only leaves the plan */
  sp->legs[i] = NULL;
  mh__head_free(g);
  mh_buf_free(&g->out);
  free(g);
  return 1;
}

int mh__legs_open(const struct mh_split *sp) {
  int n = 0;
  for (int i = 0; i < sp->nlegs; i++)
    if (sp->legs[i] && sp->legs[i]->st != LEG_DEAD)
      n++;
  return n;
}
