/* The session's side of a split: handing a held request to it, the program's socket as its sink, pumping it, and taking the program's connection back when it ends. */
#include "mh_session_int.h"
#include "mh_clock.h"
#include "mh_conn.h"
#include "mh_engine_int.h"
#include "mh_log.h"
#include "mh_taint.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

/* ---- the program's socket as a sink (mh_sink.h) ------------------------------------------ */

#define MH__SESS_OF(k) ((struct mh_session *)((char *)(k)-offsetof(struct mh_session, sink)))

/* The session is the only writer of the program's socket: what it still holds for the program
 * (the end of an earlier response, spliced or buffered) goes first, then p as far as the socket
 * takes it without blocking. Bytes taken, 0 when full (the session watches for writable), or
 * -errno (EPIPE: the program closed its end). */
static ssize_t mh__sock_put(struct mh_sink *k, const char *p, size_t len) {
  struct mh_session *s = MH__SESS_OF(k);
  int f;
  while ((f = mh__flush_step(s)) == 1)
    ;
  if (f <= 0)
    return f;
  ssize_t n;
  do
    n = send(s->prog.fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
  return n;
}

static ssize_t mh__sock_head(struct mh_sink *k, const struct mh_sink_head *h, size_t from) {
  return mh__sock_put(k, h->bytes + from, h->len - from);
}

/* The body's offset is the socket's position: the sink is ordered, so it is the next byte. */
static ssize_t mh__sock_data(struct mh_sink *k, uint64_t off, const char *p, size_t len) {
  (void)off;
  return mh__sock_put(k, p, len);
}

/* The socket's fate (a shutdown, a reset, the program's next request on a replacement
 * connection) is the session's to decide once the split's pump returned (mh__split_end). */
static void mh__sock_end(struct mh_sink *k, const struct mh_split_result *r) { MH__SESS_OF(k)->split_res = *r; }

static const struct mh_sink_ops mh__sock_sink_ops = {
    .name = "program-socket",
    .ordered = 1,
    .interim = mh__sock_put,
    .head = mh__sock_head,
    .data = mh__sock_data,
    .end = mh__sock_end,
};

void mh__sock_sink_init(struct mh_session *s) { s->sink.ops = &mh__sock_sink_ops; }

/* ---- the split's lifecycle ---------------------------------------------------------------- */

/* The held request is complete: split it, or send it on unchanged. A request with more bytes
 * behind it in the same read (pipelining) is relayed: its successors must follow it on the
 * program's connection, where the split wants to put its own range requests. */
/* A request for an object whose split failed the origin's digest on this engine: the program
 * holds all but the last byte of a splice. A Range or If-Range of it is a retry continuing
 * those bytes (wget, curl -C): any answer would complete them (wget even skips the head of a
 * 200), so the program's connection is reset, as a network failure would; it never gets
 * other bytes with success. A whole request goes out unchanged and is relayed, never split
 * again. 1 when relayed, 0 when it is not such a request, -ECONNRESET. */
static int mh__hold_tainted(struct mh_session *s, struct mh_exchange *t) {
  struct mh_req_view v;
  struct mh_hdr h[64];
  int host = -1, ranged = 0;
  if (!s->eng || mh_rr_parse_request(mh_buf_head(&t->hold), t->hold.len, &v, h, 64) < 0)
    return 0;
  for (size_t i = 0; i < v.nhdrs; i++) {
    if (h[i].name_len == 4 && !strncasecmp(h[i].name, "Host", 4))
      host = (int)i;
    ranged |= (h[i].name_len == 5 && !strncasecmp(h[i].name, "Range", 5)) ||
              (h[i].name_len == 8 && !strncasecmp(h[i].name, "If-Range", 8));
  }
  if (host < 0 || !mh_taint_has(&s->eng->splits.taint,
                                mh_taint_key(h[host].value, h[host].value_len, v.target, v.target_len), mh_now_us()))
    return 0;
  mh_info("session %u: that object failed its digest here before: %s", s->id,
          ranged ? "a range of it would complete a splice, the program's connection is reset" : "relayed, not split");
  if (ranged) {
    s->up_reset = 1;
    return -ECONNRESET;
  }
  int rc = mh_exchange_release(t);
  return rc < 0 ? rc : 1;
}

/* The session as a split's owner: its kick, the program's server (peer, when the connection
 * can tell), and where plain would have put the program's connection (the connect-time choice
 * re-bound it). */
static void mh__sess_owner(struct mh_session *s, struct mh_split_owner *own, struct sockaddr_storage *peer) {
  *own = (struct mh_split_owner){.env = mh_engine_split_env(s->eng),
                                 .kick = mh__sess_kick,
                                 .arg = s,
                                 .peer = mh_session_peer(s, peer) == 0 ? peer : NULL,
                                 .plain_src =
                                     s->conn && s->conn->plain_src.ss_family != AF_UNSPEC ? &s->conn->plain_src : NULL};
}

int mh__hold_decide(struct mh_session *s, struct mh_exchange *t, int more) {
  if (!more) {
    int rc = mh__hold_tainted(s, t);
    if (rc)
      return rc < 0 ? rc : 0;
  }
  struct mh_split *sp = NULL;
  struct sockaddr_storage peer;
  struct mh_split_owner own;
  mh__sess_owner(s, &own, &peer);
  if (more || s->split)
    return mh_exchange_release(t);
  unsigned gen = s->eng ? s->eng->paths.net_gen : 0;
  s->split_res = (struct mh_split_result){0};
  int rc = mh_split_start(&own, s->loop, s->up, mh_buf_head(&t->hold), t->hold.len, &s->sink, &sp);
  if (rc == 0) {
    s->split = sp;
    t->strat = &mh_strategy_split;
    mh_buf_free(&t->hold);
    return 0;
  }
  if (rc == -ENETUNREACH && (t->adopt_req = malloc(t->hold.len))) {
    memcpy(t->adopt_req, mh_buf_head(&t->hold), t->hold.len);
    t->adopt_req_len = t->hold.len;
    t->adopt_gen = gen;
  }
  return mh_exchange_release(t);
}

/* ---- a relayed answer taken over when a path appears (mh_split_adopt) ----------------------- */

/* Response bytes the session's parser used for t's answer before its body (len of data): kept
 * as its head while it comes. An interim answer's head (msg_done before the final status) is
 * dropped; an answer that cannot be split, or a head past the buffer, drops what was kept. */
void mh__adopt_head_seen(struct mh_exchange *t, const char *data, size_t len, int msg_done) {
  if (t->state != MH_EXCH_RESPONSE && msg_done) {
    t->adopt_head.len = t->adopt_head.off = 0;
    return;
  }
  if (mh_buf_append(&t->adopt_head, data, len) < 0 ||
      (t->state == MH_EXCH_RESPONSE && (t->status != 200 || !t->body_left)))
    mh_exchange_adopt_forget(t);
}

/* A path appeared (the engine's net_gen moved) while t's answer is relayed: the rest of it
 * becomes a split. 1 when it did; else 0, and t's kept request is dropped unless there is
 * still one path only, or a request is behind it (then it waits for the next change). */
int mh__adopt(struct mh_session *s, struct mh_exchange *t) {
  unsigned gen = s->eng->paths.net_gen;
  /* a request the program sent behind this one is answered on this connection after it: the
   * split could not give that answer back (it may reset this connection) */
  if (t != s->exch_head || t->next || s->up_out.len)
    return 0;
  struct sockaddr_storage peer;
  struct mh_split_owner own;
  mh__sess_owner(s, &own, &peer);
  struct mh_split_relayed rel = {.head = mh_buf_head(&t->adopt_head),
                                 .head_len = t->adopt_head.len,
                                 .total = t->body_len,
                                 .pos = t->body_len - t->body_left,
                                 .closes = t->adopt_closes};
  struct mh_split *sp = NULL;
  s->split_res = (struct mh_split_result){0};
  int rc = mh_split_adopt(&own, s->loop, s->up, t->adopt_req, t->adopt_req_len, &rel, &s->sink, &sp);
  s->up_watch = -1; /* the split may have changed what the upstream watches */
  if (rc == 0) {
    mh_exchange_adopt_forget(t);
    s->split = sp;
    t->strat = &mh_strategy_split;
    return 1;
  }
  if (rc == -ENETUNREACH)
    t->adopt_gen = gen;
  else
    mh_exchange_adopt_forget(t);
  return 0;
}

/* The program's connection cannot carry its next request: a replacement on the route the split
 * named (its idle connections are in the pool by now, one of them may be it) is the session's
 * from here on, and the old one is closed. 0, or -1 when none could be begun. */
static int mh__split_replace(struct mh_session *s, const struct mh_split_result *r) {
  int err = 0;
  struct mh_upstream *up =
      mh_pool_dial(s->eng->paths.pool, s->loop, mh_engine_upstream_env(s->eng), &r->route, NULL, &err);
  if (!up) {
    mh_info("session %u: no connection to the program's server for its next request: %s", s->id, strerror(-err));
    return -1;
  }
  mh_dbg("session %u: the program's connection continues on another connection to its server", s->id);
  struct mh_upstream *old = s->up;
  s->up = up;
  up->on_event = mh__up_event_cb;
  up->owner = s;
  old->ops->close(old, 1, NULL);
  return 0;
}

/* The split asked for a replacement: it is freed first (its idle connections go to the pool),
 * keeping a copy of the request a resend needs; then the replacement. The result as the
 * session acts on it: a resend with no connection to go out on is a reset. */
static void mh__split_end_replace(struct mh_session *s, struct mh_split *sp, struct mh_split_result *r, char **req) {
  if (r->resend && (*req = malloc(r->req_len)))
    memcpy(*req, r->req, r->req_len);
  r->req = *req;
  mh_split_free(sp, 0);
  if ((r->resend && !*req) || mh__split_replace(s, r) < 0) {
    if (r->end == MH_SPLIT_END_RELAY)
      r->end = MH_SPLIT_END_RESET;
    return;
  }
  r->up_dead = 0;
}

/* The split ended (its result is in s->split_res): the session takes its upstream back and acts
 * on the result. */
static void mh__split_end(struct mh_session *s) {
  struct mh_split *sp = s->split;
  struct mh_split_result r = s->split_res;
  struct mh_exchange *t = s->exch_head;
  char *req = NULL;
  s->split = NULL;
  if (!t) { /* cannot happen: the split's exchange stays at the head until it ends */
    mh_split_free(sp, 1);
    mh__sess_close(s, 1);
    return;
  }
  if (r.replace) {
    mh__split_end_replace(s, sp, &r, &req);
    sp = NULL;
  }
  s->up_watch = -1; /* the split changed what the upstream watches */
  /* the split set TCP_NODELAY on the program's connection (mh__start_probe): the program's own
   * setting again for what it sends next */
  if (s->conn)
    (void)mh_upstream_control(s->up, MH_UPC_NODELAY, &(int){s->conn->nodelay});
  int rc = 0;
  switch (r.end) {
  case MH_SPLIT_END_RELAY:
    t->strat = &mh_strategy_relay;
    if (r.resend)
      rc = mh_session_send_upstream(s, r.req, r.req_len);
    if (rc == 0 && r.raw_len)
      rc = mh__resp_feed(s, r.raw, r.raw_len);
    if (r.up_eof) {
      s->up_eof = 1;
      if (r.up_reset)
        s->up_reset = s->up_wr_dead = 1;
      mh__resp_eof(s);
    }
    break;
  case MH_SPLIT_END_DONE:
    mh__exch_pop(s);
    if (r.up_dead) {
      /* the program's connection cannot carry another request: it sees the server close it
       * after this complete response, as a keep-alive connection may */
      s->up_eof = s->up_wr_dead = 1;
    }
    break;
  case MH_SPLIT_END_EOF: s->up_eof = s->up_wr_dead = 1; break;
  default: s->up_eof = s->up_reset = s->up_wr_dead = 1; break;
  }
  if (sp)
    mh_split_free(sp, r.end == MH_SPLIT_END_RESET || r.end == MH_SPLIT_END_EOF);
  free(req);
  if (rc < 0)
    mh__sess_close(s, 1);
}

/* While a split runs: it delivers into the session's socket sink; the program is not read (its
 * next request waits in the socketpair, in order). */
int mh__sess_pump_split(struct mh_session *s) {
  int rc = mh_split_pump(s->split);
  if (rc < 0) {
    mh_dbg("session %u: program gone during split: %s", s->id, strerror(-rc));
    mh__sess_close(s, 1);
    return -1;
  }
  if (s->split_res.end != MH_SPLIT_RUNNING) {
    mh__split_end(s);
    return s->state == MH_SESS_CLOSING ? -1 : 0;
  }
  int pw = mh_split_want_write(s->split) ? UV_WRITABLE : 0;
  mh__prog_watch(s, pw);
  return 1;
}
