/* Session engine: pumps the program's socketpair end and the upstream socket, frames requests and responses with llhttp, keeps its exchanges in order. */
#include "mh_session_int.h"
#include "mh_fdgate.h"
#include "mh_buf.h"
#include "mh_conn.h"
#include "mh_engine_int.h"
#include "mh_config.h"
#include "mh_log.h"
#include "mh_split.h"
#include "mh_exchange.h"
#include "mh_upstream.h"

#include <errno.h>
#include <fcntl.h>
#include <llhttp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* One read's worth of bytes before framing goes to the engine's scratch buffer: every session
 * of an engine runs on its loop thread and a read is framed completely before the next one. */
#define MH__IO_CHUNK MH_ENGINE_IO
#define MH__BUF_CAP (256 * 1024)    /* ceiling of each direction's pending bytes */
#define MH__PIPE_SIZE (1024 * 1024) /* splice pipe; the kernel may grant less */
#define MH__PUMP_ROUNDS 16          /* per event, so one busy session cannot starve others */
static const char *const mh__sess_state_names[] = {"RELAY", "TUNNEL", "CLOSING"};

static void mh__sess_pump(struct mh_session *s);
static void mh__prog_poll_cb(uv_poll_t *h, int status, int events);

/* Watches the program's end for pw (0: not at all), touching the poll only on a change. */
void mh__prog_watch(struct mh_session *s, int pw) {
  if (pw == s->prog.watch)
    return;
  s->prog.watch = pw;
  if (pw)
    uv_poll_start(&s->prog.poll, pw, mh__prog_poll_cb);
  else
    uv_poll_stop(&s->prog.poll);
}

unsigned mh_session_id(const struct mh_session *s) { return s->id; }

int mh_session_peer(const struct mh_session *s, struct sockaddr_storage *out) {
  if (!s->conn || !s->conn->peer_len)
    return -ENOTCONN;
  *out = s->conn->peer;
  return 0;
}
struct mh_session *mh_session_next(struct mh_session *s) {
  return s->next;
}

void mh_session_link(struct mh_session **head, struct mh_session *s) {
  s->prev = NULL;
  s->next = *head;
  if (*head)
    (*head)->prev = s;
  *head = s;
}

void mh_session_unlink(struct mh_session **head, struct mh_session *s) {
  if (s->prev)
    s->prev->next = s->next;
  else if (*head == s)
    *head = s->next;
  if (s->next)
    s->next->prev = s->prev;
  s->prev = s->next = NULL;
}

static void mh__sess_set_state(struct mh_session *s, enum mh__sess_state st) {
  if (s->state == st)
    return;
  mh_dbg("session %u: %s -> %s", s->id, mh__sess_state_names[s->state], mh__sess_state_names[st]);
  s->state = st;
}

int mh_session_emit(struct mh_session *s, const char *data, size_t len) {
  return mh_buf_append(&s->prog_out, data, len);
}

int mh_session_send_upstream(struct mh_session *s, const char *data, size_t len) {
  if (s->up_wr_dead)
    return 0; /* a reset server discards them, as the kernel would have */
  return mh_buf_append(&s->up_out, data, len);
}

int mh_session_flushed(struct mh_session *s) {
  if (s->state == MH_SESS_CLOSING || s->up_wr_dead)
    return 1;
  if (s->up_out.len)
    return 0;
  int avail = 0;
  if (!s->prog.eof && ioctl(s->prog.fd, FIONREAD, &avail) == 0 && avail > 0)
    return 0;
  return 1;
}

/* ---- exchange queue ---------------------------------------------------------------------- */

static struct mh_exchange *mh__exch_add(struct mh_session *s) {
  /* a request may be split only when it is alone: nothing before it still answering, the
   * session framing HTTP, and nothing of an earlier request waiting for the upstream */
  int hold = !s->exch_head && s->state == MH_SESS_RELAY && !s->http.req_raw && !s->up_eof && !s->up_wr_dead &&
             !s->up_out.len && s->eng->cfg->split;
  struct mh_exchange *t = mh_exchange_new(s, s->next_exch_id++, hold ? &mh_strategy_hold : &mh_strategy_relay);
  if (!t)
    return NULL;
  if (s->exch_tail)
    s->exch_tail->next = t;
  else
    s->exch_head = t;
  s->exch_tail = t;
  return t;
}

/* The head exchange's response is complete: it leaves the queue. */
void mh__exch_pop(struct mh_session *s) {
  struct mh_exchange *t = s->exch_head;
  mh_exchange_set_state(t, MH_EXCH_DONE);
  s->exch_head = t->next;
  if (!s->exch_head)
    s->exch_tail = NULL;
  if (s->req_cur == t)
    s->req_cur = NULL;
  mh_exchange_free(t);
}

/* ---- request framing (program -> upstream) ----------------------------------------------- */

static int mh__req_on_begin(llhttp_t *p) {
  struct mh_session *s = p->data;
  s->req_cur = mh__exch_add(s);
  return s->req_cur ? 0 : -1;
}

static int mh__req_on_headers(llhttp_t *p) {
  struct mh_session *s = p->data;
  if (s->req_cur) {
    s->req_cur->method = llhttp_get_method(p);
    s->req_cur->upgrade = p->upgrade;
    mh_dbg("session %u exchange %u: %s request", s->id, s->req_cur->id,
           llhttp_method_name((llhttp_method_t)s->req_cur->method));
    if (s->req_cur->strat == &mh_strategy_hold && (s->req_cur->method != HTTP_GET || s->req_cur->upgrade) &&
        mh_exchange_release(s->req_cur) < 0)
      return -1;
  }
  return 0;
}

static int mh__req_on_complete(llhttp_t *p) {
  struct mh_session *s = p->data;
  s->http.req_msg_done = 1;
  /* pause so the feed loop learns where this message ends; an upgrade pauses by itself */
  return p->upgrade ? 0 : HPE_PAUSED;
}

/* Hands request bytes to the exchange they belong to (or straight upstream when the
 * request side is no longer HTTP). */
static int mh__req_deliver(struct mh_session *s, const char *data, size_t len) {
  if (!len)
    return 0;
  struct mh_exchange *t = s->req_cur;
  return t ? t->strat->req_data(t, data, len) : mh_session_send_upstream(s, data, len);
}

static int mh__req_feed(struct mh_session *s, const char *data, size_t len) {
  while (len) {
    if (s->http.req_raw)
      return mh__req_deliver(s, data, len);
    llhttp_errno_t err = llhttp_execute(&s->http.req_p, data, len);
    size_t used = err == HPE_OK ? len : (size_t)(llhttp_get_error_pos(&s->http.req_p) - data);
    if (err != HPE_OK && err != HPE_PAUSED && err != HPE_PAUSED_UPGRADE)
      used = 0; /* the bytes of a bad request go on raw, below */
    int rc = mh__req_deliver(s, data, used);
    if (rc < 0)
      return rc;
    data += used;
    len -= used;
    if (s->http.req_msg_done) {
      s->http.req_msg_done = 0;
      if (s->req_cur && s->req_cur->state == MH_EXCH_REQUEST)
        mh_exchange_set_state(s->req_cur, MH_EXCH_WAITING);
      if (s->req_cur && s->req_cur->strat == &mh_strategy_hold) {
        rc = mh__hold_decide(s, s->req_cur, len > 0);
        if (rc < 0)
          return rc;
      }
      s->req_cur = NULL;
    }
    if (err == HPE_PAUSED) {
      llhttp_resume(&s->http.req_p);
    } else if (err == HPE_PAUSED_UPGRADE) {
      s->http.req_raw = 1; /* after Upgrade/CONNECT the program's bytes may not be HTTP */
    } else if (err != HPE_OK) {
      mh_dbg("session %u: request not parsable (%s); relaying raw", s->id, llhttp_errno_name(err));
      s->http.req_raw = 1;
      s->req_cur = NULL;
    }
  }
  return 0;
}

/* ---- response framing (upstream -> program) --------------------------------------------- */

static int mh__resp_on_headers(llhttp_t *p) {
  struct mh_session *s = p->data;
  struct mh_exchange *t = s->exch_head;
  int status = llhttp_get_status_code(p);
  if (!t || (status >= 100 && status < 200 && status != 101))
    return 0; /* interim (100 Continue, 103): llhttp ends it without a body, exchange stays */
  t->status = status;
  mh_exchange_set_state(t, MH_EXCH_RESPONSE);
  mh_dbg("session %u exchange %u: response %d", s->id, t->id, status);
  if (t->method == HTTP_HEAD)
    return 1; /* no body whatever the headers say */
  if (t->method == HTTP_CONNECT && status / 100 == 2)
    return 2; /* tunnel established */
  if (status == 101 || status == 204 || status == 304)
    return 0; /* llhttp knows these have no body (101 ends HTTP) */
  if (p->flags & F_CHUNKED)
    return 0; /* llhttp walks the chunks */
  if (p->flags & F_CONTENT_LENGTH) {
    t->body_left = t->body_len = p->content_length; /* the body bypasses the parser (and maybe user space) */
    t->adopt_closes = !llhttp_should_keep_alive(p);
    return 1;
  }
  t->body_until_eof = 1; /* no length, not chunked: the body ends when the server closes */
  return 1;
}

static int mh__resp_on_complete(llhttp_t *p) {
  struct mh_session *s = p->data;
  s->http.resp_msg_done = 1;
  return p->upgrade ? 0 : HPE_PAUSED;
}

static int mh__resp_deliver(struct mh_session *s, struct mh_exchange *t, const char *data, size_t len) {
  if (!len)
    return 0;
  return t ? t->strat->resp_data(t, data, len) : mh_session_emit(s, data, len);
}

/* After a message ended in the parser: a final response without a raw body completes the
 * head exchange; interim responses leave it in place. */
static void mh__resp_message_done(struct mh_session *s) {
  struct mh_exchange *t = s->exch_head;
  s->http.resp_msg_done = 0;
  if (t && t->state == MH_EXCH_RESPONSE && !t->body_left && !t->body_until_eof)
    mh__exch_pop(s);
}

int mh__resp_feed(struct mh_session *s, const char *data, size_t len) {
  while (len) {
    struct mh_exchange *t = s->exch_head;
    if (s->state == MH_SESS_TUNNEL)
      return mh__resp_deliver(s, t, data, len);
    if (t && t->state == MH_EXCH_RESPONSE && (t->body_left || t->body_until_eof)) {
      size_t n = t->body_until_eof || t->body_left > len ? len : (size_t)t->body_left;
      int rc = mh__resp_deliver(s, t, data, n);
      if (rc < 0)
        return rc;
      data += n;
      len -= n;
      if (!t->body_until_eof && !(t->body_left -= n))
        mh__exch_pop(s);
      continue;
    }
    if (!t) {
      mh_dbg("session %u: response bytes with no request outstanding; tunnel", s->id);
      mh__sess_set_state(s, MH_SESS_TUNNEL);
      continue;
    }
    llhttp_errno_t err = llhttp_execute(&s->http.resp_p, data, len);
    size_t used = err == HPE_OK ? len : (size_t)(llhttp_get_error_pos(&s->http.resp_p) - data);
    if (err != HPE_OK && err != HPE_PAUSED && err != HPE_PAUSED_UPGRADE)
      used = 0;
    if (t->adopt_req)
      mh__adopt_head_seen(t, data, used, s->http.resp_msg_done);
    int rc = mh__resp_deliver(s, t, data, used);
    if (rc < 0)
      return rc;
    data += used;
    len -= used;
    if (err == HPE_PAUSED_UPGRADE) {
      s->http.resp_msg_done = 0;
      mh__exch_pop(s);
      mh__sess_set_state(s, MH_SESS_TUNNEL);
      continue;
    }
    if (s->http.resp_msg_done)
      mh__resp_message_done(s);
    if (err == HPE_PAUSED) {
      llhttp_resume(&s->http.resp_p);
    } else if (err != HPE_OK) {
      mh_dbg("session %u: response not parsable (%s); tunnel", s->id, llhttp_errno_name(err));
      mh__sess_set_state(s, MH_SESS_TUNNEL);
    }
  }
  return 0;
}

/* Upstream EOF: a close-delimited body ends here; anything else unfinished stays unfinished
 * (the program sees the same truncated stream it would have seen). */
void mh__resp_eof(struct mh_session *s) {
  struct mh_exchange *t = s->exch_head;
  if (s->state == MH_SESS_RELAY && t && t->body_until_eof)
    mh__exch_pop(s);
}

/* ---- closing ----------------------------------------------------------------------------- */

static void mh__sess_free(struct mh_session *s) {
  while (s->exch_head)
    mh__exch_pop(s);
  mh_buf_free(&s->up_out);
  mh_buf_free(&s->prog_out);
  mh_conn_unref(s->conn);
  mh_dbg("session %u: freed", s->id);
  if (s->gone.cb)
    s->gone.cb(s, s->gone.arg);
  free(s);
}

static void mh__sess_closed_one(struct mh_session *s) {
  if (--s->closes_left == 0)
    mh__sess_free(s);
}

static void mh__prog_closed(uv_handle_t *h) {
  struct mh_session *s = h->data;
  close(s->prog.fd);
  if (s->pipe.r >= 0) {
    close(s->pipe.r);
    close(s->pipe.w);
  }
  mh__sess_closed_one(s);
}

static void mh__up_closed(struct mh_upstream *up) { mh__sess_closed_one(up->owner); }

/* Makes the program's end report ECONNRESET, as its TCP socket would after the server's RST:
 * an AF_UNIX end closed with unread bytes in its receive queue gives its peer ECONNRESET.
 * When our receive queue is empty we put one byte there through a private dup of the
 * program's end, verified by inode so a recycled fd number is never written to. */
static void mh__sess_arm_reset(struct mh_session *s) {
  int avail = 0;
  if (ioctl(s->prog.fd, FIONREAD, &avail) == 0 && avail > 0)
    return;
  int d = fcntl(s->conn->app_fd, F_DUPFD_CLOEXEC, 0);
  if (d < 0)
    return;
  struct stat st;
  if (fstat(d, &st) == 0 && st.st_ino == s->conn->app_ino && st.st_dev == s->conn->app_dev)
    (void)!send(d, "R", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
  close(d);
}

void mh_session_close(struct mh_session *s) { mh__sess_close(s, 1); }

/* abort_up: reset the upstream (the program closed with unread data or stopped reading). */
void mh__sess_close(struct mh_session *s, int abort_up) {
  if (s->state == MH_SESS_CLOSING)
    return;
  mh_info("session %u: closing%s%s", s->id, abort_up ? " (reset upstream)" : "", s->up_reset ? " (server reset)" : "");
  if (s->split) {
    mh_split_free(s->split, 1);
    s->split = NULL;
  }
  if (s->up_reset)
    mh__sess_arm_reset(s);
  mh__sess_set_state(s, MH_SESS_CLOSING);
  s->closes_left = 2;
  uv_close((uv_handle_t *)&s->prog.poll, mh__prog_closed);
  s->up->ops->close(s->up, abort_up, mh__up_closed);
}

/* ---- pumping ----------------------------------------------------------------------------- */

static int mh__pipe_open(struct mh_session *s) {
  int p[2];
  mh_fdgate(1); /* made and announced before a fork can copy them */
  int rc = pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0 ? -errno : 0;
  if (rc == 0) {
    mh_engine_own_fd(s->eng, p[0]);
    mh_engine_own_fd(s->eng, p[1]);
  }
  mh_fdgate(0);
  if (rc < 0)
    return rc;
  int sz = fcntl(p[1], F_SETPIPE_SZ, MH__PIPE_SIZE);
  if (sz < 0)
    sz = fcntl(p[1], F_GETPIPE_SZ);
  s->pipe.r = p[0];
  s->pipe.w = p[1];
  s->pipe.cap = sz > 0 ? (size_t)sz : 65536;
  return 0;
}

/* Program -> upstream. Returns -1 when the session was closed. */
static int mh__pump_up(struct mh_session *s) {
  for (int i = 0; i < MH__PUMP_ROUNDS && !s->split; i++) {
    if (s->up_out.len) {
      ssize_t n = s->up->ops->send(s->up, mh_buf_head(&s->up_out), s->up_out.len);
      if (n == -EAGAIN)
        return 0;
      if (n < 0) {
        mh_dbg("session %u: upstream send: %s", s->id, strerror((int)-n));
        s->up_wr_dead = 1;
        s->up_out.len = s->up_out.off = 0;
        continue;
      }
      mh_buf_consume(&s->up_out, (size_t)n);
      continue;
    }
    if (s->prog.eof) {
      if (!s->up_shut && !s->up_wr_dead) {
        s->up_shut = 1;
        s->up->ops->shutdown_wr(s->up);
      }
      return 0;
    }
    ssize_t n;
    do
      n = recv(s->prog.fd, s->eng->scratch, MH__IO_CHUNK, MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return 0;
    if (n < 0) {
      /* ECONNRESET: the program closed with response bytes unread; its TCP socket would
       * have sent RST, so the upstream gets one too */
      mh_dbg("session %u: program end: %s", s->id, strerror(errno));
      mh__sess_close(s, 1);
      return -1;
    }
    if (n == 0) {
      mh_dbg("session %u: program EOF", s->id);
      s->prog.eof = 1;
      continue;
    }
    int rc = mh__req_feed(s, s->eng->scratch, (size_t)n);
    if (rc < 0) {
      if (rc != -ECONNRESET) /* a reset is decided and logged where it is (mh__hold_tainted) */
        mh_err("session %u: request buffer overflow", s->id);
      mh__sess_close(s, 1);
      return -1;
    }
  }
  return 0;
}

/* Writes what waits for the program: spliced body bytes first, then buffered ones. 1 when some
 * went, 0 when the program's socket is full, 2 when nothing waits, -errno when the program's
 * end failed (the caller closes the session). */
int mh__flush_step(struct mh_session *s) {
  ssize_t n;
  if (s->pipe.bytes) {
    do
      n = splice(s->pipe.r, NULL, s->prog.fd, NULL, s->pipe.bytes, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
    while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN)
      return 0;
    if (n <= 0)
      return n < 0 ? -errno : -EPIPE;
    s->pipe.bytes -= (size_t)n;
    return 1;
  }
  if (s->prog_out.len) {
    do
      n = send(s->prog.fd, mh_buf_head(&s->prog_out), s->prog_out.len, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return 0;
    if (n < 0)
      return -errno;
    mh_buf_consume(&s->prog_out, (size_t)n);
    return 1;
  }
  return 2;
}

/* mh__flush_step; -1 when the session was closed. */
static int mh__flush_down(struct mh_session *s) {
  int f = mh__flush_step(s);
  if (f < 0) {
    /* the program closed its end: a closed TCP socket answers more data with RST */
    mh_dbg("session %u: program gone: %s", s->id, strerror(-f));
    mh__sess_close(s, 1);
    return -1;
  }
  return f;
}

/* Whether the upstream's next bytes go to the program through the pipe (splice): a relayed
 * body of known extent or to EOF, on a transport that splices. Opens the pipe on first use. */
static int mh__down_raw(struct mh_session *s, struct mh_exchange *t) {
  int raw = !s->pipe.broken && s->state == MH_SESS_RELAY && t && t->state == MH_EXCH_RESPONSE &&
            (t->body_left || t->body_until_eof) && s->up->ops->splice_to && t->strat->can_splice(t);
  return raw && (s->pipe.r >= 0 || mh__pipe_open(s) == 0);
}

/* Splices up to the rest of t's body into the pipe: as recv returns; bytes moved are counted,
 * and a body that ended pops its exchange. */
static ssize_t mh__down_splice(struct mh_session *s, struct mh_exchange *t) {
  size_t want = s->pipe.cap;
  if (!t->body_until_eof && t->body_left < want)
    want = (size_t)t->body_left;
  ssize_t n = s->up->ops->splice_to(s->up, s->pipe.w, want);
  if (n > 0) {
    s->pipe.bytes += (size_t)n;
    if (!t->body_until_eof && !(t->body_left -= (uint64_t)n))
      mh__exch_pop(s);
  }
  return n;
}

/* One read from the upstream toward the program (spliced, or copied through the response
 * parser): 1 to go round, 0 when nothing is to be read now, -1 when the session was closed. */
static int mh__down_once(struct mh_session *s, struct mh_exchange *t) {
  ssize_t n;
  if (mh__down_raw(s, t)) {
    n = mh__down_splice(s, t);
    if (n == -EINVAL || n == -ENOSYS || n == -EOPNOTSUPP) {
      /* splice itself refused (an old kernel, an odd socket): plain reads work. Connection
       * errors are not retried this way: the kernel reports them once, and a read after
       * would see a clean EOF instead of the reset */
      mh_dbg("session %u: splice: %s; plain reads from now on", s->id, strerror((int)-n));
      s->pipe.broken = 1;
      return 1;
    }
  } else {
    n = s->up->ops->recv(s->up, s->eng->scratch, MH__IO_CHUNK);
    if (n > 0 && mh__resp_feed(s, s->eng->scratch, (size_t)n) < 0) {
      mh_err("session %u: response buffer overflow", s->id);
      mh__sess_close(s, 1);
      return -1;
    }
  }
  if (n > 0)
    return 1;
  if (n == -EAGAIN)
    return 0;
  if (n == 0) {
    mh_dbg("session %u: upstream EOF", s->id);
    s->up_eof = 1;
    mh__resp_eof(s);
    return 1;
  }
  mh_dbg("session %u: upstream: %s", s->id, strerror((int)-n));
  s->up_eof = s->up_reset = s->up_wr_dead = 1;
  s->up_out.len = s->up_out.off = 0;
  return 1;
}

/* Upstream -> program. Returns -1 when the session was closed. */
static int mh__pump_down(struct mh_session *s) {
  for (int i = 0; i < MH__PUMP_ROUNDS; i++) {
    int f = mh__flush_down(s);
    if (f <= 0)
      return f;
    if (f == 1)
      continue;
    if (s->up_eof) {
      if (!s->up_reset && !s->prog.shut) {
        s->prog.shut = 1;
        shutdown(s->prog.fd, SHUT_WR); /* the program reads EOF after the last byte */
      }
      return 0;
    }
    struct mh_exchange *t = s->exch_head;
    if (t && t->adopt_req && t->state == MH_EXCH_RESPONSE && t->adopt_gen != s->eng->paths.net_gen && mh__adopt(s, t))
      return 0; /* a split serves the rest of this answer */
    if ((f = mh__down_once(s, t)) <= 0)
      return f;
  }
  return 0;
}

static void mh__sess_watch(struct mh_session *s) {
  int pw = 0, uw = 0;
  if (!s->exch_head) {
    /* idle keep-alive connection: hold no buffer memory until the next request */
    mh_buf_trim(&s->up_out);
    mh_buf_trim(&s->prog_out);
  }
  if (!s->prog.eof && !s->up_out.len)
    pw |= UV_READABLE; /* backpressure: read the program only when upstream took the last bytes */
  if (s->pipe.bytes || s->prog_out.len)
    pw |= UV_WRITABLE;
  if (!s->up_eof && !s->pipe.bytes && !s->prog_out.len)
    uw |= UV_READABLE;
  if (s->up_out.len && !s->up_wr_dead)
    uw |= UV_WRITABLE;
  mh__prog_watch(s, pw);
  if (uw != s->up_watch) {
    s->up_watch = uw;
    s->up->ops->watch(s->up, uw);
  }
}

void mh__sess_kick(void *s) { mh__sess_pump(s); }

static void mh__sess_pump(struct mh_session *s) {
  if (s->state == MH_SESS_CLOSING)
    return;
  if (s->split && mh__sess_pump_split(s) != 0)
    return;
  if (mh__pump_up(s) < 0)
    return;
  if (s->split) { /* the request just read started a split: it owns the upstream now */
    mh__sess_pump(s);
    return;
  }
  if (mh__pump_down(s) < 0)
    return;
  if (s->split) { /* the answer being relayed became a split (mh__adopt) */
    mh__sess_pump(s);
    return;
  }
  /* the down pump may have freed room or learnt of a reset: one more pass upstream */
  if (mh__pump_up(s) < 0)
    return;
  if (s->split) {
    mh__sess_pump(s);
    return;
  }
  int out_done = !s->pipe.bytes && !s->prog_out.len;
  if (s->up_reset && out_done) {
    mh__sess_close(s, 0);
    return;
  }
  if (s->prog.eof && (s->up_shut || s->up_wr_dead) && s->up_eof && out_done) {
    mh__sess_close(s, 0);
    return;
  }
  mh__sess_watch(s);
}

static void mh__prog_poll_cb(uv_poll_t *h, int status, int events) {
  struct mh_session *s = h->data;
  (void)status;
  if (s->split && (events & UV_WRITABLE) && !s->sink.ended)
    mh_sink_writable(&s->sink); /* the split pumps through mh__sess_kick */
  else
    mh__sess_pump(s);
}

/* While a split runs the upstream is its to watch and read: the event is the split's. */
void mh__up_event_cb(struct mh_upstream *up, int status, int events) {
  struct mh_session *s = up->owner;
  if (s->split)
    mh_split_up_event(s->split, status, events);
  else
    mh__sess_pump(s);
}

static llhttp_settings_t mh__req_settings, mh__resp_settings;
static pthread_once_t mh__settings_once = PTHREAD_ONCE_INIT;
static void mh__settings_init(void) {
  llhttp_settings_init(&mh__req_settings);
  mh__req_settings.on_message_begin = mh__req_on_begin;
  mh__req_settings.on_headers_complete = mh__req_on_headers;
  mh__req_settings.on_message_complete = mh__req_on_complete;
  llhttp_settings_init(&mh__resp_settings);
  mh__resp_settings.on_headers_complete = mh__resp_on_headers;
  mh__resp_settings.on_message_complete = mh__resp_on_complete;
}

struct mh_session *mh_session_start(struct mh_engine *eng, unsigned id, int prog_fd, int up_fd, struct mh_conn *conn,
                                    mh_session_gone_cb gone, void *arg) {
  pthread_once(&mh__settings_once, mh__settings_init);
  uv_loop_t *loop = &eng->loop;
  struct mh_session *s = calloc(1, sizeof *s);
  if (!s)
    goto fail;
  s->eng = eng;
  mh_buf_init(&s->up_out, MH__BUF_CAP);
  mh_buf_init(&s->prog_out, MH__BUF_CAP);
  s->id = id;
  s->loop = loop;
  s->conn = conn;
  s->gone.cb = gone;
  s->gone.arg = arg;
  s->prog.fd = prog_fd;
  s->pipe.r = s->pipe.w = -1;
  s->state = MH_SESS_RELAY;
  mh__sock_sink_init(s);
  fcntl(prog_fd, F_SETFL, fcntl(prog_fd, F_GETFL) | O_NONBLOCK);
  /* a deeper socketpair keeps the loopback rate: the default is about 200 KiB */
  int sb = 1 << 20;
  setsockopt(prog_fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof sb);
  llhttp_init(&s->http.req_p, HTTP_REQUEST, &mh__req_settings);
  llhttp_init(&s->http.resp_p, HTTP_RESPONSE, &mh__resp_settings);
  s->http.req_p.data = s->http.resp_p.data = s;
  s->up = mh_upstream_tcp_adopt(loop, &s->eng->upenv, up_fd, conn, mh__up_event_cb, s);
  if (!s->up)
    goto fail;
  if (uv_poll_init(loop, &s->prog.poll, prog_fd) < 0) {
    s->up->ops->close(s->up, 0, NULL); /* closes up_fd on a later turn */
    up_fd = -1;
    goto fail;
  }
  s->prog.poll.data = s;
  s->prog.watch = UV_READABLE;
  uv_poll_start(&s->prog.poll, UV_READABLE, mh__prog_poll_cb);
  s->up_watch = UV_READABLE;
  s->up->ops->watch(s->up, UV_READABLE);
  mh_info("session %u: started (program fd %d)", id, conn ? conn->app_fd : -1);
  return s;
fail:
  free(s);
  close(prog_fd);
  if (up_fd >= 0)
    close(up_fd);
  mh_conn_unref(conn);
  return NULL;
}
