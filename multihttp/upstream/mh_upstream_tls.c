/* TLS upstream: libcurl connects and shakes hands (connect-only easy handle in its env's multi handle, driven by uv polls and a uv timer), then carries the plaintext with curl_easy_send/recv. */
#include "mh_upstream_tls.h"
#include "mh_fdgate.h"
#include "mh_clock.h"
#include "mh_log.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One per env (env->tls): the multi handle every TLS connection of that loop connects
 * through, and the timer libcurl asks for (CURLMOPT_TIMERFUNCTION). */
struct mh__tls_multi {
  CURLM *multi;
  uv_timer_t timer;
  struct mh_upstream_env *env;
  unsigned refs; /* connections made with it and not yet closed */
};

/* A connection's phases: libcurl's while it connects and shakes hands (its socket callback
 * drives our poll), then the owner's (the poll reports to the owner). */
enum mh__tls_phase {
  TLS_CONNECTING, /* in the multi handle; libcurl says which events it needs */
  TLS_OPEN,       /* handshake done (CURLMSG_DONE, CURLE_OK): send/recv; the owner watches */
  TLS_FAILED,     /* connect or handshake failed, or libcurl closed the socket: code tells */
};

struct mh__tls {
  struct mh_upstream base; /* first: the vtable methods cast back */
  struct mh__tls_multi *m;
  CURL *easy;
  enum mh__tls_phase phase;
  uv_poll_t *poll; /* on poll_fd, the one socket libcurl uses; freed in its close cb */
  int poll_fd;
  uv_idle_t idle;  /* events the socket will not give: the outcome, held plaintext */
  int want;        /* the owner's watch() */
  int outcome_due; /* the connect's outcome is owed to a watching owner */
  int rx_more;     /* the last recv gave data: TLS may hold more (mh_tls_owes_readable) */
  int closing;
  /* A write OpenSSL was told to retry must be retried with the same buffer and length (else
   * "bad write retry"): what the owner offered is copied here and retried from here. */
  char wbuf[16384];
  size_t wpend;  /* bytes of wbuf a refused write left to retry; 0: none */
  CURLcode code; /* of the connect, or of the send/recv that failed */
  char errbuf[CURL_ERROR_SIZE];
  char ifname[16]; /* SO_BINDTODEVICE in the open-socket callback */
  struct curl_slist *connect_to;
  uint64_t t0_us, handshake_us;
};

static pthread_once_t mh__tls_once = PTHREAD_ONCE_INIT;
static CURLcode mh__tls_global_rc = CURLE_FAILED_INIT;

/* curl_global_init is not thread-safe in 7.88: once per process, from the first connection (the
 * API library's; the preload library never links this file). */
static void mh__tls_global(void) { mh__tls_global_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

void mh_tls_init(struct mh_tls *t, const char *host, unsigned port, const char *cafile, int insecure) {
  *t = (struct mh_tls){
      .host = host, .port = port, .cafile = cafile, .insecure = insecure, .connect = mh_upstream_tls_connect};
}

int mh_tls_owes_readable(int watching, int rx_more) { return (watching & UV_READABLE) && rx_more; }

int mh_tls_connect_to(char *buf, size_t cap, const struct mh_tls *tls, const struct sockaddr *dst) {
  char a[INET6_ADDRSTRLEN];
  unsigned port;
  int n;
  if (dst->sa_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)dst;
    inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof a);
    port = ntohs(s6->sin6_port);
    n = snprintf(buf, cap, "%s:%u:[%s]:%u", tls->host, tls->port, a, port);
  } else {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)dst;
    inet_ntop(AF_INET, &s4->sin_addr, a, sizeof a);
    port = ntohs(s4->sin_port);
    n = snprintf(buf, cap, "%s:%u:%s:%u", tls->host, tls->port, a, port);
  }
  return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int mh_tls_interface(char *buf, size_t cap, const struct sockaddr *src) {
  char a[INET6_ADDRSTRLEN] = "";
  if (src && src->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)src)->sin6_addr, a, sizeof a);
  else if (src)
    inet_ntop(AF_INET, &((const struct sockaddr_in *)src)->sin_addr, a, sizeof a);
  int n = snprintf(buf, cap, "%s%s", a[0] ? "host!" : "", a);
  return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* libcurl's outcome as the engine's -errno (mh_upstream_error); the code itself stays
 * available (MH_UPQ_CURL_CODE) for a report in curl's words. */
static int mh__tls_errno(CURLcode c) {
  switch (c) {
  case CURLE_OK: return 0;
  case CURLE_COULDNT_RESOLVE_HOST: return -EHOSTUNREACH;
  case CURLE_COULDNT_CONNECT: return -ECONNREFUSED;
  case CURLE_OPERATION_TIMEDOUT: return -ETIMEDOUT;
  case CURLE_INTERFACE_FAILED: return -EADDRNOTAVAIL;
  case CURLE_OUT_OF_MEMORY: return -ENOMEM;
  case CURLE_PEER_FAILED_VERIFICATION: return -EKEYREJECTED;
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_SSL_CERTPROBLEM:
  case CURLE_SSL_CIPHER:
  case CURLE_SSL_CACERT_BADFILE: return -EPROTO;
  default: return -ECONNABORTED;
  }
}

static void mh__tls_idle_cb(uv_idle_t *h);

/* Whether the loop owes the owner an event the socket will not give; the idle handle runs only
 * then (one loop turn without blocking per owed event, never a spin: each is paid for by the
 * owner's own read or watch). */
static void mh__tls_idle_update(struct mh__tls *t) {
  int due = !t->closing && t->phase != TLS_CONNECTING &&
            ((t->outcome_due && (t->phase == TLS_FAILED ? t->want : t->want & UV_WRITABLE)) ||
             mh_tls_owes_readable(t->want, t->rx_more));
  if (due)
    uv_idle_start(&t->idle, mh__tls_idle_cb);
  else
    uv_idle_stop(&t->idle);
}

static void mh__tls_idle_cb(uv_idle_t *h) {
  struct mh__tls *t = h->data;
  int ev = 0;
  if (t->outcome_due) {
    ev = t->phase == TLS_FAILED ? t->want : t->want & UV_WRITABLE;
    if (ev)
      t->outcome_due = 0;
  }
  if (mh_tls_owes_readable(t->want, t->rx_more)) {
    ev |= UV_READABLE;
    t->rx_more = 0; /* one event per read that gave data */
  }
  mh__tls_idle_update(t);
  if (ev && t->base.on_event)
    t->base.on_event(&t->base, 0, ev); /* may close t: nothing of it after this */
}

/* libcurl's transfers that ended: a connect-only one ends when its handshake does. */
static void mh__tls_done(struct mh__tls_multi *m);

static void mh__tls_poll_cb(uv_poll_t *h, int status, int events) {
  struct mh__tls *t = h->data;
  if (t->phase == TLS_CONNECTING) {
    int flags = status < 0
                    ? CURL_CSELECT_ERR
                    : (events & UV_READABLE ? CURL_CSELECT_IN : 0) | (events & UV_WRITABLE ? CURL_CSELECT_OUT : 0);
    struct mh__tls_multi *m = t->m;
    int running;
    curl_multi_socket_action(m->multi, t->poll_fd, flags, &running);
    mh__tls_done(m);
    return;
  }
  if (events & UV_READABLE)
    mh_upstream_readable(&t->base); /* the arrival curve before the owner reads (capacity) */
  if (t->base.on_event)
    t->base.on_event(&t->base, status, events);
}

static void mh__tls_poll_free(uv_handle_t *h) { free(h); }

/* t's poll on socket fd (the one libcurl connects with), made when first needed; a poll on
 * another socket (libcurl gave up on it) is closed first. 0 or -errno. */
static int mh__tls_poll_on(struct mh__tls *t, int fd) {
  if (t->poll && t->poll_fd == fd)
    return 0;
  if (t->poll) {
    uv_close((uv_handle_t *)t->poll, mh__tls_poll_free);
    t->poll = NULL;
  }
  uv_poll_t *p = calloc(1, sizeof *p);
  if (!p)
    return -ENOMEM;
  int rc = uv_poll_init_socket(t->idle.loop, p, fd);
  if (rc < 0) {
    free(p);
    return rc;
  }
  p->data = t;
  t->poll = p;
  t->poll_fd = fd;
  return 0;
}

/* CURLMOPT_SOCKETFUNCTION: which events libcurl wants on a socket while it connects. Once the
 * connection is the owner's, libcurl's wishes no longer matter (it does not read it again). */
static int mh__tls_sock_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp) {
  (void)userp;
  (void)socketp;
  struct mh__tls *t = NULL;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t);
  if (!t || t->phase != TLS_CONNECTING || t->closing)
    return 0;
  if (what == CURL_POLL_REMOVE) {
    if (t->poll && t->poll_fd == s)
      uv_poll_stop(t->poll);
    return 0;
  }
  if (mh__tls_poll_on(t, s) < 0)
    return -1;
  int ev = (what & CURL_POLL_IN ? UV_READABLE : 0) | (what & CURL_POLL_OUT ? UV_WRITABLE : 0);
  return uv_poll_start(t->poll, ev, mh__tls_poll_cb) < 0 ? -1 : 0;
}

static void mh__tls_timer_cb(uv_timer_t *h) {
  struct mh__tls_multi *m = h->data;
  int running;
  curl_multi_socket_action(m->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  mh__tls_done(m);
}

/* CURLMOPT_TIMERFUNCTION: one timer for the whole multi handle; -1 stops it. A 0 ms timeout
 * runs on the next loop turn, never from inside libcurl. */
static int mh__tls_timer_fn(CURLM *multi, long timeout_ms, void *userp) {
  (void)multi;
  struct mh__tls_multi *m = userp;
  if (timeout_ms < 0)
    return uv_timer_stop(&m->timer);
  return uv_timer_start(&m->timer, mh__tls_timer_cb, (uint64_t)timeout_ms, 0);
}

/* The handshake of t ended with code: the socket becomes the owner's (OPEN), or the failure
 * waits for the owner to watch (FAILED). */
static void mh__tls_connected(struct mh__tls *t, CURLcode code) {
  curl_socket_t s = CURL_SOCKET_BAD;
  if (code == CURLE_OK && (curl_easy_getinfo(t->easy, CURLINFO_ACTIVESOCKET, &s) != CURLE_OK || s == CURL_SOCKET_BAD ||
                           mh__tls_poll_on(t, s) < 0))
    code = CURLE_RECV_ERROR;
  t->code = code;
  t->outcome_due = 1;
  if (code != CURLE_OK) {
    t->phase = TLS_FAILED;
    mh_dbg("tls: connect failed: %s (%d: %s)", t->errbuf, (int)code, curl_easy_strerror(code));
  } else {
    t->phase = TLS_OPEN;
    uv_poll_stop(t->poll); /* libcurl's watch ends; the owner's begins (watch) */
    /* the TCP handshake alone is one round trip of the path (MH_UPQ_HANDSHAKE_US): the TLS
     * round trips after it would make the scheduler's first latency and the receive-window
     * clamp's BDP two or three times too large */
    curl_off_t tcp_us = 0;
    curl_easy_getinfo(t->easy, CURLINFO_CONNECT_TIME_T, &tcp_us);
    t->handshake_us = tcp_us > 0 ? (uint64_t)tcp_us : mh_now_us() - t->t0_us;
    mh_upstream_opened(&t->base, t->handshake_us);
    if (t->want)
      uv_poll_start(t->poll, t->want, mh__tls_poll_cb);
  }
  mh__tls_idle_update(t);
}

static void mh__tls_done(struct mh__tls_multi *m) {
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(m->multi, &left))) {
    struct mh__tls *t = NULL;
    if (msg->msg != CURLMSG_DONE)
      continue;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
    if (t && t->phase == TLS_CONNECTING)
      mh__tls_connected(t, msg->data.result);
  }
}

/* CURLOPT_OPENSOCKETFUNCTION: the socket is announced to the env (close-on-exec) and bound
 * to the path's device when permitted, as a TCP upstream's is. */
static curl_socket_t mh__tls_open_cb(void *clientp, curlsocktype purpose, struct curl_sockaddr *a) {
  struct mh__tls *t = clientp;
  (void)purpose;
  mh_fdgate(1); /* made and announced before a fork can copy it */
  int fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
  mh_upstream_own_fd(t->base.env, fd);
  mh_fdgate(0);
  if (fd < 0)
    return CURL_SOCKET_BAD;
  if (t->ifname[0]) /* EPERM without CAP_NET_RAW: the source address still routes it */
    (void)setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, t->ifname, (socklen_t)strlen(t->ifname) + 1);
  return fd;
}

/* CURLOPT_CLOSESOCKETFUNCTION: the poll on fd stops before the number can be reused. A socket
 * libcurl closes under an open connection (it judged it dead) fails the connection. */
static int mh__tls_close_cb(void *clientp, curl_socket_t fd) {
  struct mh__tls *t = clientp;
  if (t->poll && t->poll_fd == fd) {
    uv_close((uv_handle_t *)t->poll, mh__tls_poll_free);
    t->poll = NULL;
  }
  if (!t->closing && t->phase == TLS_OPEN) {
    t->phase = TLS_FAILED;
    t->code = CURLE_RECV_ERROR;
    t->outcome_due = 1;
    mh__tls_idle_update(t);
  }
  return close(fd);
}

static struct mh__tls_multi *mh__tls_multi_ref(uv_loop_t *loop, struct mh_upstream_env *env) {
  if (!env)
    return NULL;
  struct mh__tls_multi *m = env->tls;
  if (m) {
    m->refs++;
    return m;
  }
  pthread_once(&mh__tls_once, mh__tls_global);
  if (mh__tls_global_rc != CURLE_OK || !(m = calloc(1, sizeof *m)))
    return NULL;
  if (!(m->multi = curl_multi_init())) {
    free(m);
    return NULL;
  }
  curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, mh__tls_sock_cb);
  curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, mh__tls_timer_fn);
  curl_multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
  uv_timer_init(loop, &m->timer);
  m->timer.data = m;
  m->env = env;
  m->refs = 1;
  env->tls = m;
  return m;
}

static void mh__tls_multi_free(uv_handle_t *h) { free(h->data); }

static void mh__tls_multi_unref(struct mh__tls_multi *m) {
  if (--m->refs)
    return;
  curl_multi_cleanup(m->multi);
  m->env->tls = NULL;
  uv_close((uv_handle_t *)&m->timer, mh__tls_multi_free);
}

static int mh__tls_watch(struct mh_upstream *up, int events) {
  struct mh__tls *t = (struct mh__tls *)up;
  t->want = events;
  if (t->phase == TLS_FAILED)
    t->outcome_due = 1; /* each watch of a failed connection gets one event: it learns why */
  int rc = 0;
  if (t->phase == TLS_OPEN && t->poll)
    rc = events ? uv_poll_start(t->poll, events, mh__tls_poll_cb) : uv_poll_stop(t->poll);
  mh__tls_idle_update(t);
  return rc;
}

static ssize_t mh__tls_recv(struct mh_upstream *up, void *buf, size_t len) {
  struct mh__tls *t = (struct mh__tls *)up;
  if (t->phase != TLS_OPEN)
    return t->phase == TLS_CONNECTING ? -EAGAIN : -ECONNRESET;
  size_t n = 0;
  CURLcode rc = curl_easy_recv(t->easy, buf, len, &n);
  t->rx_more = rc == CURLE_OK && n > 0;
  mh__tls_idle_update(t);
  if (rc == CURLE_AGAIN)
    return -EAGAIN;
  if (rc != CURLE_OK) {
    t->code = rc;
    return -ECONNRESET;
  }
  return (ssize_t)n; /* 0: the server ended the TLS session */
}

/* The owner offers its buffer again after -EAGAIN, starting with the same bytes (it consumed
 * none of them): a pending retry completes from wbuf and counts as those bytes. */
static ssize_t mh__tls_send(struct mh_upstream *up, const void *buf, size_t len) {
  struct mh__tls *t = (struct mh__tls *)up;
  if (t->phase != TLS_OPEN)
    return t->phase == TLS_CONNECTING ? -EAGAIN : -EPIPE;
  size_t m = t->wpend;
  if (!m) {
    m = len < sizeof t->wbuf ? len : sizeof t->wbuf;
    memcpy(t->wbuf, buf, m);
  }
  size_t n = 0;
  CURLcode rc = curl_easy_send(t->easy, t->wbuf, m, &n);
  if (rc == CURLE_AGAIN) {
    t->wpend = m;
    return -EAGAIN;
  }
  t->wpend = 0;
  if (rc != CURLE_OK) {
    t->code = rc;
    return -EPIPE;
  }
  return (ssize_t)n;
}

/* A half-close would end the TLS session for both directions: not offered. */
static int mh__tls_shutdown_wr(struct mh_upstream *up) {
  (void)up;
  return -ENOTSUP;
}

static void mh__tls_closed(uv_handle_t *h) {
  struct mh__tls *t = h->data;
  mh_upstream_closed_cb cb = t->base.on_closed;
  struct mh__tls_multi *m = t->m;
  if (cb)
    cb(&t->base);
  curl_slist_free_all(t->connect_to);
  free(t);
  mh__tls_multi_unref(m);
}

/* libcurl closes the connection in curl_multi_remove_handle (a connect-only connection cannot
 * be found again once its handle leaves the multi), its socket through mh__tls_close_cb. */
static void mh__tls_close(struct mh_upstream *up, int abort, mh_upstream_closed_cb closed_cb) {
  struct mh__tls *t = (struct mh__tls *)up;
  mh_upstream_closing(&t->base);
  t->closing = 1;
  t->base.on_closed = closed_cb;
  if (abort && t->phase == TLS_OPEN && t->poll) {
    struct linger lg = {1, 0}; /* RST, as a TCP upstream closed with unread data */
    setsockopt(t->poll_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  }
  curl_multi_remove_handle(t->m->multi, t->easy);
  curl_easy_cleanup(t->easy);
  if (t->poll) { /* libcurl had closed its socket already */
    uv_close((uv_handle_t *)t->poll, mh__tls_poll_free);
    t->poll = NULL;
  }
  uv_close((uv_handle_t *)&t->idle, mh__tls_closed);
}

static int mh__tls_query(struct mh_upstream *up, int what, int *ival, void *pval) {
  struct mh__tls *t = (struct mh__tls *)up;
  switch (what) {
  case MH_UPQ_ERROR: *ival = t->phase == TLS_FAILED ? mh__tls_errno(t->code) : 0; return 0;
  case MH_UPQ_HANDSHAKE_US: *(uint64_t *)pval = t->handshake_us; return 0;
  case MH_UPQ_CURL_CODE: *ival = (int)t->code; return 0;
  case MH_UPQ_ERRMSG:
    *(const char **)pval = t->errbuf[0] || t->code == CURLE_OK ? t->errbuf : curl_easy_strerror(t->code);
    return 0;
  }
  if (t->phase != TLS_OPEN || !t->poll)
    return -ENOTCONN;
  return mh_upstream_sock_query(t->poll_fd, what, ival, pval);
}

static int mh__tls_control(struct mh_upstream *up, int what, const void *arg) {
  struct mh__tls *t = (struct mh__tls *)up;
  if (t->phase != TLS_OPEN || !t->poll)
    return -ENOTCONN;
  return mh_upstream_sock_control(t->poll_fd, what, arg);
}

static const struct mh_upstream_ops mh__tls_ops = {
    .name = "tls",
    .watch = mh__tls_watch,
    .recv = mh__tls_recv,
    .send = mh__tls_send,
    .splice_to = NULL,
    .shutdown_wr = mh__tls_shutdown_wr,
    .close = mh__tls_close,
    .query = mh__tls_query,
    .control = mh__tls_control,
};

/* The easy handle's options: connect only, to dst under tls's name, from src, HTTP/1.1 in
 * ALPN (the engine frames HTTP/1.1 itself), no proxy from the environment, never a connection
 * of another handle (each connect-only connection belongs to its handle alone). 0 or -errno. */
static int mh__tls_options(struct mh__tls *t, const struct sockaddr *src, const struct sockaddr *dst,
                           const struct mh_tls *tls) {
  char url[300], to[400], ifc[64];
  int v6 = strchr(tls->host, ':') != NULL; /* an IPv6 literal host is bracketed in the URL */
  int n = snprintf(url, sizeof url, "https://%s%s%s:%u/", v6 ? "[" : "", tls->host, v6 ? "]" : "", tls->port);
  if (n < 0 || (size_t)n >= sizeof url || mh_tls_connect_to(to, sizeof to, tls, dst) < 0 ||
      mh_tls_interface(ifc, sizeof ifc, src) < 0)
    return -ENAMETOOLONG;
  if (!(t->connect_to = curl_slist_append(NULL, to)))
    return -ENOMEM;
  CURL *e = t->easy;
  CURLcode rc = CURLE_OK;
#define MH__SET(opt, val) (rc = rc ? rc : curl_easy_setopt(e, opt, val))
  MH__SET(CURLOPT_URL, url);
  MH__SET(CURLOPT_CONNECT_ONLY, 1L);
  MH__SET(CURLOPT_CONNECT_TO, t->connect_to);
  MH__SET(CURLOPT_PROXY, "");
  MH__SET(CURLOPT_PROTOCOLS_STR, "https");
  MH__SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  MH__SET(CURLOPT_CONNECTTIMEOUT_MS, (long)MH_TLS_CONNECT_TIMEOUT_MS);
  MH__SET(CURLOPT_NOSIGNAL, 1L);
  MH__SET(CURLOPT_ERRORBUFFER, t->errbuf);
  MH__SET(CURLOPT_PRIVATE, (void *)t);
  MH__SET(CURLOPT_FRESH_CONNECT, 1L);
  /* libcurl prunes connections idle (to it) longer than this when another handle connects:
   * ours are in use, and the engine's pool bounds their idle time itself */
  MH__SET(CURLOPT_MAXAGE_CONN, (long)INT_MAX);
  MH__SET(CURLOPT_OPENSOCKETFUNCTION, mh__tls_open_cb);
  MH__SET(CURLOPT_OPENSOCKETDATA, (void *)t);
  MH__SET(CURLOPT_CLOSESOCKETFUNCTION, mh__tls_close_cb);
  MH__SET(CURLOPT_CLOSESOCKETDATA, (void *)t);
  if (ifc[0])
    MH__SET(CURLOPT_INTERFACE, ifc);
  if (tls->cafile)
    MH__SET(CURLOPT_CAINFO, tls->cafile);
  if (tls->insecure) {
    MH__SET(CURLOPT_SSL_VERIFYPEER, 0L);
    MH__SET(CURLOPT_SSL_VERIFYHOST, 0L);
  }
#undef MH__SET
  return rc == CURLE_OK ? 0 : rc == CURLE_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
}

struct mh_upstream *mh_upstream_tls_connect(uv_loop_t *loop, struct mh_upstream_env *env, const struct sockaddr *src,
                                            const char *ifname, const struct sockaddr *dst, const struct mh_tls *tls,
                                            mh_upstream_event_cb on_event, void *owner, int *err) {
  if (!tls || !tls->host || !tls->host[0] || (ifname && strlen(ifname) >= sizeof((struct mh__tls *)0)->ifname)) {
    *err = -EINVAL;
    return NULL;
  }
  struct mh__tls *t = calloc(1, sizeof *t);
  if (!t || !(t->m = mh__tls_multi_ref(loop, env))) {
    free(t);
    *err = -ENOMEM;
    return NULL;
  }
  t->base.ops = &mh__tls_ops;
  t->base.on_event = on_event;
  t->base.owner = owner;
  t->base.env = env;
  if (ifname)
    strcpy(t->ifname, ifname);
  uv_idle_init(loop, &t->idle);
  t->idle.data = t;
  int rc = (t->easy = curl_easy_init()) ? mh__tls_options(t, src, dst, tls) : -ENOMEM;
  if (rc == 0 && curl_multi_add_handle(t->m->multi, t->easy) != CURLM_OK)
    rc = -ENOMEM;
  if (rc < 0) {
    curl_easy_cleanup(t->easy); /* NULL is a no-op */
    t->easy = NULL;
    t->closing = 1;
    uv_close((uv_handle_t *)&t->idle, mh__tls_closed);
    *err = rc;
    return NULL;
  }
  t->t0_us = mh_now_us();
  return &t->base;
}
