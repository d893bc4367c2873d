/* An API transfer: the public calls on it, and on the loop its lifecycle as a split's owner: resolve, connect, hand the request to a split (or read it itself), end exactly once. */
#include "mh_api_int.h"
#include "mh_engine_int.h"
#include "mh_clock.h"
#include "mh_dns.h"
#include "mh_engine.h"
#include "mh_log.h"
#include "mh_path.h"
#include "mh_range.h"
#include "mh_upstream.h"
#include "mh_upstream_tls.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MH__API_CONNECT_TIMEOUT_S 30.0 /* when the option connect-timeout is not given */

static const char *const mh__x_names[] = {"NEW", "RESOLVING", "CONNECTING", "SPLIT", "RELAY", "ENDED"};

void mh__x_set_state(struct mhttp_xfer *x, enum mh__xstate st) {
  if (x->st == st)
    return;
  mh_dbg("api: transfer %p (%.200s): %s -> %s", (void *)x, x->url, mh__x_names[x->st], mh__x_names[st]);
  x->st = st;
}

/* https: the TLS transport for x's URL (the split's legs use the same, struct mh_split_owner.tls);
 * NULL for http. The strings live in x, which outlives every connection made with it. */
static const struct mh_tls *mh__x_tls(struct mhttp_xfer *x) {
  if (!x->u.tls)
    return NULL;
  mh_tls_init(&x->conn.tls, x->u.host, (unsigned)strtoul(x->u.port, NULL, 10), x->o.cacert[0] ? x->o.cacert : NULL,
              x->o.insecure);
  return &x->conn.tls;
}

/* ---- public calls ---------------------------------------------------------------------------- */

MHTTP_API mhttp_code mhttp_xfer_new(mhttp_session *s, const char *url, mhttp_xfer **out) {
  if (!s)
    return MHTTP_E_INVAL;
  if (!url || !out)
    return mh__s_refuse(s, MHTTP_E_INVAL, "mhttp_xfer_new: %s is NULL", !url ? "the URL" : "out");
  *out = NULL;
  struct mhttp_xfer *x = calloc(1, sizeof *x);
  if (!x)
    return MHTTP_E_NOMEM;
  if (strlen(url) >= sizeof x->url || mh_url_parse(url, &x->u) < 0) {
    free(x);
    return mh__s_refuse(s, MHTTP_E_URL, "%.200s: not an http:// or https:// URL this library can fetch", url);
  }
  x->u0 = x->u;
  if (mh__opts_copy(&x->o, &s->opts) != MHTTP_OK) {
    free(x);
    return mh__s_refuse(s, MHTTP_E_NOMEM, "mhttp_xfer_new: out of memory");
  }
  snprintf(x->url, sizeof x->url, "%s", url);
  snprintf(x->url0, sizeof x->url0, "%s", url);
  x->s = s;
  x->dst.fd = -1;
  x->rep.result = MHTTP_E_BUSY;
  x->rep.total = UINT64_MAX;
  pthread_mutex_lock(&s->mu);
  x->next = s->xfers;
  s->xfers = x;
  pthread_mutex_unlock(&s->mu);
  *out = x;
  return MHTTP_OK;
}

mhttp_code mh__x_refuse(struct mhttp_xfer *x, mhttp_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&x->s->mu);
  vsnprintf(x->rep.callmsg, sizeof x->rep.callmsg, fmt, ap);
  pthread_mutex_unlock(&x->s->mu);
  va_end(ap);
  return code;
}

/* MHTTP_OK when a destination may still be set on x (before start, none of another kind). */
static mhttp_code mh__x_dest_free(mhttp_xfer *x, enum mh__dest kind, const char *call) {
  if (x->started)
    return mh__x_refuse(x, MHTTP_E_INVAL, "%s: the transfer has started", call);
  if (x->o.output[0])
    return mh__x_refuse(x, MHTTP_E_INVAL, "%s: the option output was set: one destination only", call);
  if (x->dst.kind && x->dst.kind != kind)
    return mh__x_refuse(x, MHTTP_E_INVAL, "%s: %s was set: one destination only", call,
                        x->dst.kind == MH__DEST_FD ? "an fd" : "a write callback");
  return MHTTP_OK;
}

struct mh__rate_arg {
  struct mhttp_xfer *x;
  uint64_t rate;
};

static void mh__rate_call(void *arg) {
  struct mh__rate_arg *a = arg;
  if (a->x->st != MH__X_ENDED)
    mh__x_rate_set(a->x, a->rate);
}

/* limit-rate on a running transfer: applied on the loop at once. */
static mhttp_code mh__x_rate_live(struct mhttp_xfer *x, const char *value) {
  struct mh__rate_arg a = {x, 0};
  if (mh__speed(value, &a.rate) < 0)
    return mh__x_refuse(x, MHTTP_E_OPTION, "option limit-rate: the value '%.100s' is not accepted", value);
  return mh__api_sync(x->s, mh__rate_call, &a);
}

MHTTP_API mhttp_code mhttp_xfer_setopt(mhttp_xfer *x, const char *name, const char *value) {
  if (!x)
    return MHTTP_E_INVAL;
  if (!name || !value)
    return mh__x_refuse(x, MHTTP_E_INVAL, "mhttp_xfer_setopt: %s is NULL", name ? "the value" : "the name");
  if (x->started && !strcmp(name, "limit-rate"))
    return mh__x_rate_live(x, value);
  if (x->started)
    return mh__x_refuse(x, MHTTP_E_INVAL, "option %.64s: the transfer has started", name);
  if (!strcmp(name, "output") && x->dst.kind)
    return mh__x_refuse(x, MHTTP_E_INVAL, "option output: %s was set: one destination only",
                        x->dst.kind == MH__DEST_FD ? "an fd" : "a write callback");
  char why[sizeof x->rep.callmsg] = "";
  mhttp_code c = mh__opt_xfer(&x->o, name, value, why, sizeof why);
  return c == MHTTP_OK ? c : mh__x_refuse(x, c, "%s", why);
}

MHTTP_API mhttp_code mhttp_xfer_set_fd(mhttp_xfer *x, int fd) {
  if (!x)
    return MHTTP_E_INVAL;
  mhttp_code c = fd < 0 ? mh__x_refuse(x, MHTTP_E_INVAL, "mhttp_xfer_set_fd: fd %d is negative", fd)
                        : mh__x_dest_free(x, MH__DEST_FD, "mhttp_xfer_set_fd");
  if (c != MHTTP_OK)
    return c;
  x->dst.kind = MH__DEST_FD;
  x->dst.fd = fd;
  return MHTTP_OK;
}

MHTTP_API mhttp_code mhttp_xfer_set_write_cb(mhttp_xfer *x, mhttp_write_cb cb, int ordered, void *arg) {
  if (!x)
    return MHTTP_E_INVAL;
  mhttp_code c = !cb ? mh__x_refuse(x, MHTTP_E_INVAL, "mhttp_xfer_set_write_cb: the callback is NULL")
                     : mh__x_dest_free(x, MH__DEST_CB, "mhttp_xfer_set_write_cb");
  if (c != MHTTP_OK)
    return c;
  x->dst.kind = MH__DEST_CB;
  x->dst.cb = cb;
  x->dst.cb_ordered = ordered != 0;
  x->dst.cb_arg = arg;
  return MHTTP_OK;
}

MHTTP_API mhttp_code mhttp_xfer_set_event_cb(mhttp_xfer *x, mhttp_event_cb cb, void *arg) {
  if (!x)
    return MHTTP_E_INVAL;
  if (x->started)
    return mh__x_refuse(x, MHTTP_E_INVAL, "mhttp_xfer_set_event_cb: the transfer has started");
  x->ev_cb = cb;
  x->ev_arg = arg;
  return MHTTP_OK;
}

static void mh__start_call(void *arg) { mh__x_begin(arg); }

MHTTP_API mhttp_code mhttp_xfer_start(mhttp_xfer *x) {
  if (!x)
    return MHTTP_E_INVAL;
  if (x->started)
    return mh__x_refuse(x, MHTTP_E_INVAL, "mhttp_xfer_start: the transfer was started already");
  if (x->dst.kind == MH__DEST_NONE && !x->o.output[0]) /* exactly one (the setters see to at most one) */
    return mh__x_refuse(x, MHTTP_E_INVAL,
                        "mhttp_xfer_start: no destination: set the option output, an fd "
                        "(mhttp_xfer_set_fd) or a write callback (mhttp_xfer_set_write_cb)");
  if (x->o.output[0])
    x->dst.kind = MH__DEST_FILE;
  x->started = 1;
  pthread_mutex_lock(&x->s->mu);
  x->s->running++;
  pthread_mutex_unlock(&x->s->mu);
  mhttp_code c = mh__api_sync(x->s, mh__start_call, x);
  if (c != MHTTP_OK) {
    x->started = 0;
    mh__api_ended(x->s);
  }
  return c;
}

struct mh__pause_arg {
  struct mhttp_xfer *x;
  int pause;
};

static void mh__pause_call(void *arg) {
  struct mh__pause_arg *a = arg;
  struct mhttp_xfer *x = a->x;
  if (x->st == MH__X_ENDED)
    return;
  x->dst.paused = a->pause;
  if (!a->pause)
    mh__x_writable(x);
}

MHTTP_API mhttp_code mhttp_xfer_pause(mhttp_xfer *x, int pause) {
  if (!x)
    return MHTTP_E_INVAL;
  if (!x->started || mhttp_xfer_result(x) != MHTTP_E_BUSY)
    return mh__x_refuse(x, MHTTP_E_INVAL, "mhttp_xfer_pause: the transfer is not running");
  struct mh__pause_arg a = {x, pause != 0};
  return mh__api_sync(x->s, mh__pause_call, &a);
}

/* On the loop: every transfer whose cancel was asked ends. */
static void mh__sweep(void *arg) {
  mhttp_session *s = arg;
  atomic_store(&s->sweep_queued, 0);
  for (;;) {
    pthread_mutex_lock(&s->mu);
    struct mhttp_xfer *x = s->xfers;
    while (x && !(atomic_load(&x->cancel_req) && x->st != MH__X_ENDED && x->st != MH__X_NEW))
      x = x->next;
    pthread_mutex_unlock(&s->mu);
    if (!x)
      return;
    mh__x_cancel(x);
  }
}

MHTTP_API mhttp_code mhttp_xfer_cancel(mhttp_xfer *x) {
  if (!x)
    return MHTTP_E_INVAL;
  if (!x->started)
    return mh__x_refuse(x, MHTTP_E_INVAL, "mhttp_xfer_cancel: the transfer was not started");
  if (mhttp_xfer_result(x) != MHTTP_E_BUSY)
    return MHTTP_OK;
  atomic_store(&x->cancel_req, 1);
  mhttp_session *s = x->s;
  if (!atomic_exchange(&s->sweep_queued, 1) && mh_engine_call(s->eng, mh__sweep, s) < 0) {
    atomic_store(&s->sweep_queued, 0);
    return MHTTP_E_SYSTEM;
  }
  return MHTTP_OK;
}

MHTTP_API mhttp_code mhttp_xfer_result(const mhttp_xfer *x) {
  if (!x)
    return MHTTP_E_INVAL;
  pthread_mutex_lock(&x->s->mu);
  mhttp_code c = x->started ? x->rep.result : MHTTP_E_INVAL;
  pthread_mutex_unlock(&x->s->mu);
  return c;
}

MHTTP_API const char *mhttp_xfer_errmsg(const mhttp_xfer *x) {
  if (!x)
    return "";
  pthread_mutex_lock(&x->s->mu);
  /* the failure, fixed once it ended; before, the last refused call's */
  const char *m = x->rep.result != MHTTP_E_BUSY       ? x->rep.errmsg
                  : !x->started && !x->rep.callmsg[0] ? "the transfer was not started"
                                                      : x->rep.callmsg;
  pthread_mutex_unlock(&x->s->mu);
  return m;
}

static void mh__free_call(void *arg) {
  mh__x_cancel(arg);
  mh__x_release(arg);
}

MHTTP_API void mhttp_xfer_free(mhttp_xfer *x) {
  if (!x)
    return;
  if (!x->s->eng) { /* never started: nothing on a loop */
    mh__x_release(x);
    return;
  }
  mh__api_sync(x->s, mh__free_call, x);
}

/* ---- on the loop: events, failure, the end ---------------------------------------------------- */

/* Hands ev to the caller's callback with the transfer's figures. A path that goes down with the
 * transfer's failure says why, unless it has its own cause (ev->code); otherwise it was retired. */
static void mh__x_emit(struct mhttp_xfer *x, mhttp_event *ev) {
  pthread_mutex_lock(&x->s->mu);
  ev->http_status = x->rep.http_status;
  ev->total = x->rep.total;
  ev->done = x->rep.done;
  int failed = x->st == MH__X_ENDED && x->rep.result != MHTTP_OK;
  if (ev->type == MHTTP_EV_ERROR || (ev->type == MHTTP_EV_PATH_DOWN && failed && ev->code == MHTTP_OK)) {
    ev->code = x->rep.result;
    ev->message = x->rep.errmsg;
  }
  pthread_mutex_unlock(&x->s->mu);
  int d = mh__api_user_begin();
  x->ev_cb(ev, x->ev_arg);
  mh__api_user_end(d);
}

void mh__x_event(struct mhttp_xfer *x, mhttp_event_type type, const char *iface, const char *replica) {
  if (!x->ev_cb)
    return;
  mhttp_event ev = {.size = sizeof ev, .type = type, .xfer = x, .iface = iface, .replica = replica};
  mh__x_emit(x, &ev);
}

/* Path p came up (up = 1) or went down, with its own cause when code is not MHTTP_OK. */
void mh__x_path_event(struct mhttp_xfer *x, int up, const struct mh__xpath *p, mhttp_code code, const char *message) {
  if (!x->ev_cb)
    return;
  mhttp_event ev = {.size = sizeof ev,
                    .type = up ? MHTTP_EV_PATH_UP : MHTTP_EV_PATH_DOWN,
                    .xfer = x,
                    .iface = p->iface,
                    .replica = p->replica,
                    .mirror = p->mirror,
                    .code = code,
                    .message = code != MHTTP_OK ? message : NULL};
  mh__x_emit(x, &ev);
}

void mh__x_fail(struct mhttp_xfer *x, mhttp_code code, const char *fmt, ...) {
  if (x->rep.pending_code != MHTTP_OK || x->st == MH__X_ENDED)
    return; /* the first cause is the one reported */
  x->rep.pending_code = code;
  pthread_mutex_lock(&x->s->mu);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(x->rep.errmsg, sizeof x->rep.errmsg, fmt, ap);
  va_end(ap);
  pthread_mutex_unlock(&x->s->mu);
}

/* One of the transfer's handles closed (or a lookup ended after its end): the memory goes with
 * the last, once mhttp_xfer_free asked for it. */
void mh__x_closed(struct mhttp_xfer *x) {
  if (--x->closing == 0 && x->freed && !x->conn.gai_busy && !x->mir.mgai_busy) {
    mh__opts_free(&x->o);
    mh__runs_free(&x->rs.written);
    mh__runs_free(&x->rs.have.runs);
    mh__x_mirrors_free(x);
    free(x->rd.hold);
    free(x);
  }
}
static void mh__handle_closed(uv_handle_t *h) { mh__x_closed(h->data); }
static void mh__up_closed(struct mh_upstream *up) { mh__x_closed(up->owner); }

/* Closes the transfer's connection (its close completes on a later turn). */
void mh__x_drop_up(struct mhttp_xfer *x, int abort) {
  if (!x->conn.up)
    return;
  struct mh_upstream *up = x->conn.up;
  x->conn.up = NULL;
  up->owner = x;
  x->closing++;
  up->ops->close(up, abort, mh__up_closed);
}

/* Tears down what runs and reports the outcome, once: the result, then its event. */
static void mh__x_finish(struct mhttp_xfer *x, mhttp_code code) {
  if (x->st == MH__X_ENDED)
    return;
  mh__x_tick_stats(x, mh_now_us()); /* the paths as they were: a short transfer's come up */
  if (x->sp) {
    mh_split_free(x->sp, code != MHTTP_OK);
    x->sp = NULL;
  }
  mh__x_drop_up(x, code != MHTTP_OK);
  if (x->conn.gai_busy)
    uv_cancel((uv_req_t *)&x->conn.gai);
  mh__x_mirrors_stop(x);
  if (x->dst.fd_poll_on)
    uv_poll_stop(&x->dst.fd_poll), x->dst.fd_poll_on = 0;
  uv_timer_stop(&x->timer);
  uv_timer_stop(&x->rl_timer);
  if (code == MHTTP_OK && (code = mh__x_verify(x)) != MHTTP_OK)
    x->rep.pending_code = MHTTP_OK; /* mh__x_verify wrote its message through mh__x_fail */
  if (x->dst.kind == MH__DEST_FILE && x->dst.fd >= 0) {
    if (code == MHTTP_OK) { /* a resumed output may have been longer than the object */
      if (x->rep.total != UINT64_MAX && ftruncate(x->dst.fd, (off_t)x->rep.total) < 0)
        mh_info("api: %s: %s", x->o.output, strerror(errno));
      mh__resume_done(x);
    } else if (code != MHTTP_E_CHECKSUM) {
      mh__resume_save(x); /* what it holds, so that it can be continued */
    }
    close(x->dst.fd), x->dst.fd = -1;
  }
  pthread_mutex_lock(&x->s->mu);
  x->rep.result = code;
  if (code == MHTTP_OK)
    x->rep.errmsg[0] = 0;
  pthread_mutex_unlock(&x->s->mu);
  mh__x_set_state(x, MH__X_ENDED);
  x->t_end_us = mh_now_us();
  mh__x_tick_stats(x, x->t_end_us); /* every path down (with the cause), then the end */
  mh__x_event(x, code == MHTTP_OK ? MHTTP_EV_COMPLETE : MHTTP_EV_ERROR, NULL, NULL);
  mh__api_ended(x->s);
}

void mh__x_done(struct mhttp_xfer *x) { mh__x_finish(x, MHTTP_OK); }

/* A failure recorded (mh__x_fail) ends the transfer here, at a point where nothing of it is on
 * the stack (never inside the split's pump). */
void mh__x_settle(struct mhttp_xfer *x) {
  if (x->st != MH__X_ENDED && x->rep.pending_code != MHTTP_OK) {
    mhttp_code c = x->rep.pending_code;
    x->rep.pending_code = MHTTP_OK;
    mh__x_finish(x, c);
    x->rep.pending_code = c;
  }
}

void mh__x_cancel(struct mhttp_xfer *x) {
  if (x->st == MH__X_ENDED || x->st == MH__X_NEW)
    return;
  x->rep.pending_code = MHTTP_OK; /* a cancel is what the caller sees, whatever was pending */
  mh__x_fail(x, MHTTP_E_CANCELED, "canceled");
  mh__x_settle(x);
}

void mh__x_release(struct mhttp_xfer *x) {
  mhttp_session *s = x->s;
  pthread_mutex_lock(&s->mu);
  struct mhttp_xfer **pp = &s->xfers;
  while (*pp && *pp != x)
    pp = &(*pp)->next;
  if (*pp)
    *pp = x->next;
  pthread_mutex_unlock(&s->mu);
  x->freed = 1;
  x->closing++; /* held while the handles below are closed */
  if (x->st != MH__X_NEW) {
    x->closing++;
    uv_close((uv_handle_t *)&x->timer, mh__handle_closed);
    x->closing++;
    uv_close((uv_handle_t *)&x->rl_timer, mh__handle_closed);
  }
  if (x->dst.fd_poll_init) {
    x->closing++;
    uv_close((uv_handle_t *)&x->dst.fd_poll, mh__handle_closed);
  }
  mh__x_closed(x);
}

/* ---- on the loop: resolve, connect ---------------------------------------------------------- */

static void mh__x_connect_next(struct mhttp_xfer *x);

static void mh__x_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
  struct mhttp_xfer *x = req->data;
  x->conn.gai_busy = 0;
  if (x->st != MH__X_RESOLVING) { /* ended meanwhile (canceled, freed) */
    uv_freeaddrinfo(res);
    x->closing++;
    mh__x_closed(x);
    return;
  }
  x->conn.naddrs = x->conn.next_addr = 0;
  for (struct addrinfo *a = res; a && x->conn.naddrs < MH__API_ADDRS; a = a->ai_next)
    if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) && a->ai_addrlen <= sizeof x->conn.addrs[0])
      memcpy(&x->conn.addrs[x->conn.naddrs++], a->ai_addr, a->ai_addrlen);
  uv_freeaddrinfo(res);
  if (status < 0 || !x->conn.naddrs) {
    mh__x_fail(x, MHTTP_E_RESOLVE, "could not resolve host: %s (%s)", x->u.host,
               status < 0 ? uv_strerror(status) : "no address");
    mh__x_settle(x);
    return;
  }
  /* what the program's own getaddrinfo would tell the shim: multiDNS harvests the name on
   * the other interfaces, so the split finds replicas there */
  struct mh_dns *d = mh_engine_dns(x->s->eng);
  mh_dns_note(d, x->u.host, x->conn.addrs, (size_t)x->conn.naddrs);
  mh_dns_run(d);
  mh__x_connect_next(x);
}

/* Resolves the URL's host off the loop (libuv's resolver threads), as the program's lookup. */
void mh__x_resolve(struct mhttp_xfer *x) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG};
  mh__x_set_state(x, MH__X_RESOLVING);
  x->conn.last_err = 0;
  x->conn.timed_out = 0;
  x->conn.gai.data = x;
  int rc = uv_getaddrinfo(x->s->loop, &x->conn.gai, mh__x_resolved, x->u.host, x->u.port, &hints);
  if (rc < 0) {
    mh__x_fail(x, MHTTP_E_RESOLVE, "could not resolve host: %s (%s)", x->u.host, uv_strerror(rc));
    return;
  }
  x->conn.gai_busy = 1;
}

static int mh__loopback(const struct sockaddr_storage *a) {
  if (a->ss_family == AF_INET)
    return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
  return a->ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)a)->sin6_addr);
}

static void mh__x_up_event(struct mh_upstream *up, int status, int events);

/* Connects to the next address, from the first configured interface of its family (the
 * preferred path; the split adds the others); a loopback server unbound. */
static void mh__x_connect_next(struct mhttp_xfer *x) {
  int err = -ENOENT;
  while (x->conn.next_addr < x->conn.naddrs) {
    const struct sockaddr_storage *dst = &x->conn.addrs[x->conn.next_addr++];
    struct mh_iface f[MH_MAX_IFACES];
    int n = mh__loopback(dst) ? 0 : mh_path_ifaces(&x->s->cfg, dst->ss_family, f, MH_MAX_IFACES);
    x->conn.up = mh_upstream_connect(x->s->loop, mh_engine_upstream_env(x->s->eng),
                                     n > 0 ? (struct sockaddr *)&f[0].addr : NULL, n > 0 ? f[0].name : NULL,
                                     (const struct sockaddr *)dst, mh__x_tls(x), mh__x_up_event, x, &err);
    if (!x->conn.up) {
      x->conn.last_err = err;
      continue;
    }
    snprintf(x->conn.iface, sizeof x->conn.iface, "%s", n > 0 ? f[0].name : "default");
    mh__x_set_state(x, MH__X_CONNECTING);
    x->conn.t_connect_us = mh_now_us();
    x->conn.up->ops->watch(x->conn.up, UV_WRITABLE);
    return;
  }
  char a[64] = "";
  if (x->conn.naddrs)
    mh_path_ntop((const struct sockaddr *)&x->conn.addrs[x->conn.naddrs - 1], a, sizeof a);
  if (x->conn.last_err)
    err = x->conn.last_err;
  if (x->conn.timed_out)
    mh__x_fail(x, MHTTP_E_TIMEOUT, "connection to %s (%s) timed out", x->u.host, a);
  else
    mh__x_fail(x, MHTTP_E_CONNECT, "could not connect to %s (%s): %s", x->u.host, a, strerror(-err));
  mh__x_settle(x);
}

/* Appends the caller's header lines ("Name: value\r\n" each; mh__x_request made room for all
 * of them) at x->rq.req + len; without its credentials (mh_rr_is_credential) once a redirect left
 * the URL's origin, as curl does: they were given for that origin only. The new length. */
static size_t mh__x_headers(struct mhttp_xfer *x, size_t len) {
  int home = mh_url_same_origin(&x->u, &x->u0);
  for (const char *p = x->o.headers, *end = p + x->o.headers_len; p < end;) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    size_t l = eol ? (size_t)(eol + 1 - p) : (size_t)(end - p);
    const char *colon = memchr(p, ':', l);
    if (home || !colon || !mh_rr_is_credential(p, (size_t)(colon - p))) {
      memcpy(x->rq.req + len, p, l);
      len += l;
    }
    p += l;
  }
  return len;
}

/* The request head: GET, Host, User-Agent, Accept, the caller's headers; from > 0 (a continued
 * transfer read by itself): "Range: bytes=FROM-" and If-Range with the resume file's validator
 * (none from a bare output's size, as curl -C -). 0 or -1 (too long). */
static int mh__x_request(struct mhttp_xfer *x, uint64_t from) {
  char range[sizeof x->rs.have.validator + 64] = "";
  if (from)
    snprintf(range, sizeof range, "Range: bytes=%llu-\r\n%s%s%s", (unsigned long long)from,
             x->rs.have.validator[0] ? "If-Range: " : "", x->rs.have.validator, x->rs.have.validator[0] ? "\r\n" : "");
  int n = snprintf(x->rq.req, sizeof x->rq.req, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\nAccept: */*\r\n",
                   x->u.path, x->u.hostport, x->o.user_agent);
  if (n < 0 || (size_t)n + x->o.headers_len + strlen(range) + 2 > sizeof x->rq.req)
    return -1;
  size_t len = mh__x_headers(x, (size_t)n);
  memcpy(x->rq.req + len, range, strlen(range));
  len += strlen(range);
  memcpy(x->rq.req + len, "\r\n", 2);
  x->rq.req_len = len + 2;
  x->rq.req_sent = 0;
  x->rd.range_from = from;
  return 0;
}

static void mh__x_kick(void *arg);

void mh__x_owner(struct mhttp_xfer *x, struct mh_split_owner *own, struct sockaddr_storage *peer) {
  *peer = x->conn.addrs[x->conn.next_addr - 1];
  *own = (struct mh_split_owner){.env = mh_engine_split_env(x->s->eng),
                                 .kick = mh__x_kick,
                                 .arg = x,
                                 .peer = peer,
                                 .tls = x->u.tls ? &x->conn.tls : NULL};
}

/* Connected: the split takes the request (it probes, then fetches ranges over every path), or,
 * when it will not (one path, a loopback server, splitting off), the transfer reads the
 * answer itself. */
static void mh__x_connected(struct mhttp_xfer *x) {
  if (mh__x_request(x, 0) < 0) {
    mh__x_fail(x, MHTTP_E_URL, "request head longer than %zu bytes", sizeof x->rq.req);
    return;
  }
  struct sockaddr_storage peer;
  struct mh_split_have have = {.v = x->rs.have.runs.v,
                               .n = x->rs.have.runs.n,
                               .total = x->rs.have.total,
                               .validator = x->rs.have.validator[0] ? x->rs.have.validator : NULL};
  struct mh_split_pin pins[MH__API_REPLICAS];
  struct mh_split_owner own;
  mh__x_owner(x, &own, &peer);
  own.have = x->rs.resuming ? &have : NULL;
  own.mirrors = x->mir.split_mirrors;
  own.nmirrors = mh__x_split_mirrors(x);
  own.pins = pins;
  own.npins = mh__x_split_pins(x, pins);
  unsigned gen = mh_engine_of(x->s->loop)->paths.net_gen;
  x->split_res = (struct mh_split_result){0};
  int rc = x->chk.refetched
               ? -ENOTSUP
               : mh_split_start(&own, x->s->loop, x->conn.up, x->rq.req, x->rq.req_len, &x->dst.sink, &x->sp);
  if (rc == 0) {
    mh__x_set_state(x, MH__X_SPLIT);
    if (x->o.limit_rate)
      mh_split_set_rate(x->sp, x->o.limit_rate);
    return;
  }
  x->sp = NULL;
  /* one path now: the answer is read here, and a path that appears may take part of it */
  x->rd.adopt_ok = rc == -ENETUNREACH && !x->rs.resuming;
  x->rd.adopt_gen = gen;
  if (x->rs.resuming && mh__x_request(x, mh__resume_from(x)) < 0) {
    mh__x_fail(x, MHTTP_E_URL, "request head longer than %zu bytes", sizeof x->rq.req);
    return;
  }
  mh__x_relay_start(x, NULL, 0, 1, 0);
}

/* A TLS connection that reached the server but failed its handshake or certificate check ends
 * the transfer as curl would (another address of the same name would present the same
 * certificate): MHTTP_E_CERT / MHTTP_E_TLS with libcurl's own words. 1 when it did. */
static int mh__x_tls_failed(struct mhttp_xfer *x, struct mh_upstream *up) {
  int code = 0;
  const char *msg = "";
  if (!x->u.tls || mh_upstream_query(up, MH_UPQ_CURL_CODE, &code, NULL) < 0)
    return 0;
  mhttp_code c = code == CURLE_PEER_FAILED_VERIFICATION ? MHTTP_E_CERT
                 : code == CURLE_SSL_CONNECT_ERROR || code == CURLE_SSL_CERTPROBLEM || code == CURLE_SSL_CIPHER ||
                         code == CURLE_SSL_CACERT_BADFILE || code == CURLE_SSL_ENGINE_INITFAILED
                     ? MHTTP_E_TLS
                     : MHTTP_OK;
  if (c == MHTTP_OK)
    return 0;
  mh_upstream_query(up, MH_UPQ_ERRMSG, NULL, &msg);
  mh__x_fail(x, c, "%s", msg && *msg ? msg : curl_easy_strerror((CURLcode)code));
  mh__x_drop_up(x, 1);
  mh__x_settle(x);
  return 1;
}

static void mh__x_up_event(struct mh_upstream *up, int status, int events) {
  struct mhttp_xfer *x = up->owner;
  if (x->sp) {
    mh_split_up_event(x->sp, status, events); /* the split kicks us when it moved */
    return;
  }
  if (x->st == MH__X_RELAY) {
    mh__x_relay_event(up, status, events);
    return;
  }
  if (x->st != MH__X_CONNECTING)
    return;
  int err = mh_upstream_error(up); /* the socket's own error says more than the poll's */
  if (!err && status < 0)
    err = status;
  up->ops->watch(up, 0);
  if (err < 0 && mh__x_tls_failed(x, up))
    return;
  if (err < 0) { /* refused, unreachable: the next address */
    mh__x_drop_up(x, 1);
    x->conn.last_err = err;
    mh__x_connect_next(x);
    return;
  }
  mh__x_connected(x);
  mh__x_settle(x);
}

/* ---- on the loop: the split's owner ---------------------------------------------------------- */

/* nu replaces the transfer's connection (the split's result): the old one is closed. */
static void mh__x_take_up(struct mhttp_xfer *x, struct mh_upstream *nu) {
  mh__x_drop_up(x, 1);
  x->conn.up = nu;
  nu->on_event = mh__x_up_event;
  nu->owner = x;
}

/* The split ended without managing the object (a small object, no ranges, a redirect, an
 * error status): the transfer reads the answer itself from what the split read so far. */
static void mh__x_split_relay(struct mhttp_xfer *x, const struct mh_split_result *r) {
  char *raw = NULL;
  if (r->raw_len && !(raw = malloc(r->raw_len))) {
    mh__x_fail(x, MHTTP_E_NOMEM, "out of memory");
    return;
  }
  if (r->raw_len)
    memcpy(raw, r->raw, r->raw_len);
  size_t raw_len = r->raw_len;
  int resend = r->resend, eof = r->up_eof, err = 0;
  struct mh_route route = r->route;
  mh_split_free(x->sp, 0); /* its idle connections go to the pool: one may carry the resend */
  x->sp = NULL;
  if (r->replace) { /* our connection cannot carry the request again: another one does */
    struct mh_engine *e = mh_engine_of(x->s->loop);
    struct mh_upstream *nu = mh_pool_dial(e->paths.pool, x->s->loop, mh_engine_upstream_env(e), &route,
                                          x->u.tls ? &x->conn.tls : NULL, &err);
    if (!nu) {
      free(raw);
      mh__x_fail(x, MHTTP_E_CONNECT, "no connection to send the request again: %s", strerror(-err));
      return;
    }
    mh__x_take_up(x, nu);
  }
  mh__x_relay_start(x, raw, raw_len, resend, eof);
  free(raw);
}

/* The file the split wrote did not match the origin's digest: some path served other bytes and
 * which one cannot be told, but nothing was reported yet. The whole object is fetched once
 * more over the file, on the transfer's own path alone (resolved and connected as at the
 * start, read by the transfer itself: no split, no other path), then checked again
 * (mh__x_verify). */
static void mh__x_refetch(struct mhttp_xfer *x) {
  mh_info("api: %s does not match the origin's %s: fetched again on one path", x->url, x->chk.odigest_field);
  x->chk.refetched = 1;
  mh_split_free(x->sp, 1);
  x->sp = NULL;
  mh__x_drop_up(x, 1);
  mh__resume_done(x); /* the runs written are gone with the truncation */
  mh__runs_free(&x->rs.written);
  if (ftruncate(x->dst.fd, 0) < 0) {
    mh__x_fail(x, MHTTP_E_WRITE, "%s: %s", x->o.output, strerror(errno));
    return;
  }
  pthread_mutex_lock(&x->s->mu);
  x->rep.done = 0;
  pthread_mutex_unlock(&x->s->mu);
  mh__x_resolve(x);
}

/* Every byte of a split object was taken: a file written in any order is checked against the
 * origin's digest of the object first (an ordered destination was, by the split). */
static void mh__x_split_done(struct mhttp_xfer *x) {
  if (x->dst.kind == MH__DEST_FILE && !x->chk.refetched &&
      mh_split_digest(x->sp, &x->chk.odigest, &x->chk.odigest_field)) {
    int rc = mh__x_file_check(x, &x->chk.odigest);
    if (rc > 0) {
      mh__x_refetch(x);
      return;
    }
    if (rc < 0) {
      mh__x_digest_fail(x, rc);
      return;
    }
  }
  mh__x_done(x);
}

static void mh__x_split_end(struct mhttp_xfer *x, const struct mh_split_result *r) {
  if (x->rep.pending_code != MHTTP_OK)
    return; /* the sink's own failure (write, checksum) is the cause */
  switch (r->end) {
  case MH_SPLIT_END_RELAY: mh__x_split_relay(x, r); break;
  case MH_SPLIT_END_DONE: /* a transfer has no next request: no replacement connection */ mh__x_split_done(x); break;
  default:
    if (r->digest_bad) {
      struct mh_digest want;
      const char *field = "digest";
      mh_split_digest(x->sp, &want, &field);
      mh__x_fail(x, MHTTP_E_CHECKSUM, "the object does not match the origin's %s (%s)", field,
                 mh_digest_alg_name(want.alg));
      break;
    }
    if (x->dst.head_seen)
      mh__x_fail(x, MHTTP_E_PARTIAL, "transfer closed with %llu bytes remaining",
                 (unsigned long long)(x->rep.total - x->rep.done));
    else
      mh__x_fail(x, MHTTP_E_CONNECT, "no path could fetch %s", x->url);
    break;
  }
}

/* The split has news: pump it, act on its end. */
static void mh__x_kick(void *arg) {
  struct mhttp_xfer *x = arg;
  if (!x->sp)
    return;
  (void)mh_split_pump(x->sp); /* a sink failure was recorded by the sink (mh__x_fail) */
  if (x->rep.pending_code == MHTTP_OK && x->split_res.end != MH_SPLIT_RUNNING)
    mh__x_split_end(x, &x->split_res);
  mh__x_settle(x);
}

/* ---- on the loop: the clock ------------------------------------------------------------------ */

static void mh__x_tick(uv_timer_t *t) {
  struct mhttp_xfer *x = t->data;
  uint64_t now = mh_now_us();
  double ct = x->o.connect_timeout > 0 ? x->o.connect_timeout : MH__API_CONNECT_TIMEOUT_S;
  if (x->st == MH__X_CONNECTING && now - x->conn.t_connect_us > (uint64_t)(ct * 1e6)) {
    mh__x_drop_up(x, 1);
    x->conn.last_err = -ETIMEDOUT;
    x->conn.timed_out = 1;
    mh__x_connect_next(x);
  }
  if (x->o.max_time > 0 && now - x->t_start_us > (uint64_t)(x->o.max_time * 1e6))
    mh__x_fail(x, MHTTP_E_TIMEOUT, "operation timed out after %.0f ms", (now - x->t_start_us) / 1000.0);
  mh__x_settle(x);
  if (x->st == MH__X_ENDED)
    return;
  mh__x_tick_stats(x, now);
  if (x->rs.written_dirty && (now - x->rs.saved_us >= MH__RESUME_SAVE_US || x->rs.unsaved >= MH__RESUME_SAVE_BYTES))
    mh__resume_save_async(x);
  if (now - x->rep.last_prog_us >= x->o.progress_ms * 1000ULL && x->rep.done != x->rep.last_prog_done) {
    x->rep.last_prog_us = now;
    x->rep.last_prog_done = x->rep.done;
    mh__x_event(x, MHTTP_EV_PROGRESS, NULL, NULL);
  }
}

void mh__x_begin(struct mhttp_xfer *x) {
  x->t_start_us = x->rep.last_prog_us = x->rep.rate_t_us = mh_now_us();
  uv_timer_init(x->s->loop, &x->timer);
  x->timer.data = x;
  mh__x_sink_init(x);
  unsigned tick = x->o.progress_ms < 100 ? x->o.progress_ms : 100;
  uv_timer_start(&x->timer, mh__x_tick, tick, tick);
  uv_timer_init(x->s->loop, &x->rl_timer);
  x->rl_timer.data = x;
  if (x->o.limit_rate)
    mh__x_rate_set(x, x->o.limit_rate);
  if (x->o.cont && x->dst.kind == MH__DEST_FILE && mh__resume_load(x) < 0) {
    mh__x_set_state(x, MH__X_RESOLVING); /* running, so that it ends */
    mh__x_settle(x);
    return;
  }
  mh__x_resolve(x);
  mh__x_mirrors_resolve(x);
  mh__x_settle(x);
}
