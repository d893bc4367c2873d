/* The upstream connection as a small vtable (curl connection-filter style): plain TCP (mh_upstream_tcp.c) or TLS through libcurl (mh_upstream_tls.c). */
#ifndef MH_UPSTREAM_H
#define MH_UPSTREAM_H
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

struct mh_conn;
struct mh_upstream;

/* Readiness for the owner: events is a mask of UV_READABLE | UV_WRITABLE; status < 0 is a
 * poll error (the owner then reads to learn the socket error). Loop thread. */
typedef void (*mh_upstream_event_cb)(struct mh_upstream *up, int status, int events);
/* Called once after close() finished; the owner may free what it embeds the upstream in. */
typedef void (*mh_upstream_closed_cb)(struct mh_upstream *up);

/* What an owner may ask an upstream (query, curl's CF_QUERY_*). A transport answers what it
 * knows and -ENOTSUP to the rest; every caller has a fallback for -ENOTSUP (no metrics sample,
 * no window clamp, an unknown window), so a transport without a socket of its own (TLS through
 * libcurl) needs none of them. Answers are 0 or -errno. */
enum mh_upstream_query {
  MH_UPQ_FD = 1,       /* *ival: the socket descriptor (for the transport's own use and the
                          shim's record; nothing outside the transport uses it on the fd) */
  MH_UPQ_PEER,         /* pval: struct sockaddr_storage *, the server's address; *ival (when
                          ival is not NULL): its length. -ENOTCONN while still connecting */
  MH_UPQ_LOCAL,        /* pval: struct sockaddr_storage *, our address; *ival: its length */
  MH_UPQ_ERROR,        /* *ival: the connection's pending error as -errno, 0 when none */
  MH_UPQ_HANDSHAKE_US, /* pval: uint64_t *, the connect's TCP handshake time, one round trip
                          of its path (TLS: without the TLS round trips after it; 0: not timed
                          here, e.g. the program's own connection) */
  MH_UPQ_SRTT_US,      /* *ival: the kernel's smoothed round-trip time in µs (0: no sample) */
  MH_UPQ_RCV_SPACE,    /* pval: uint64_t *, the receiver's estimate of the most the connection
                          delivered in one round trip (TCP_INFO tcpi_rcv_space); 0 unknown */
  MH_UPQ_TCP_INFO,     /* pval: a struct tcp_info buffer; *ival: in its size, out the length
                          the kernel filled */
  MH_UPQ_NETNS,        /* pval: uint64_t *, the network namespace's cookie (0 unknown) */
  MH_UPQ_CURL_CODE,    /* *ival: the libcurl CURLcode of the connect or the last failed
                          send/recv (0 = CURLE_OK); a TLS upstream only */
  MH_UPQ_ERRMSG,       /* pval: const char **, libcurl's error text for it ("" when none);
                           valid until the upstream is closed; a TLS upstream only */
};

/* What an owner may set on an upstream (control). Unknown: -ENOTSUP. */
enum mh_upstream_control {
  MH_UPC_RCVBUF = 1,   /* arg: const int *, the receive buffer in bytes (SO_RCVBUF) */
  MH_UPC_WINDOW_CLAMP, /* arg: const int *, the most the receiver advertises (TCP_WINDOW_CLAMP) */
  MH_UPC_NODELAY,      /* arg: const int *, 1: each send goes out at once (TCP_NODELAY), 0: Nagle */
  MH_UPC_ABORT,        /* arg: NULL. The connection is reset now (connect(AF_UNSPEC): an RST
                          to its server, which stops sending); the upstream stays the owner's
                          to close, and reads and writes on it fail from now on */
};

struct mh_upstream_ops {
  const char *name;
  /* Which events the owner wants next (0 stops watching). 0 or -errno. */
  int (*watch)(struct mh_upstream *up, int events);
  /* Non-blocking I/O: > 0 bytes, 0 EOF (recv only), -EAGAIN, or -errno. */
  ssize_t (*recv)(struct mh_upstream *up, void *buf, size_t len);
  ssize_t (*send)(struct mh_upstream *up, const void *buf, size_t len);
  /* Moves up to len received bytes into a pipe without copying them to user space; NULL when
   * the transport cannot (TLS). Same returns as recv. */
  ssize_t (*splice_to)(struct mh_upstream *up, int pipe_w, size_t len);
  /* Half-close: the server sees EOF, responses still arrive. 0 or -errno. */
  int (*shutdown_wr)(struct mh_upstream *up);
  /* Closes; abort = 1 resets the connection (RST) as a real socket closed with unread data
   * would. Asynchronous: closed_cb runs on a later loop turn. */
  void (*close)(struct mh_upstream *up, int abort, mh_upstream_closed_cb closed_cb);
  /* Answers a query (enum mh_upstream_query): 0, -ENOTSUP when unknown to this transport, or
   * -errno. Loop thread. */
  int (*query)(struct mh_upstream *up, int what, int *ival, void *pval);
  /* Applies a control (enum mh_upstream_control): 0, -ENOTSUP, or -errno. Loop thread. */
  int (*control)(struct mh_upstream *up, int what, const void *arg);
};

/* What watches every connection from outside its owner (the engine's metrics,
 * mh_metrics_observer): told when one is up, when its socket turns readable (before the owner
 * reads it), and just before it closes. Its record of a connection lives in up->observed. */
struct mh_upstream_observer {
  /* up is connected (handshake_us: its TCP handshake, 0 when not timed here): the record to
   * keep for it, NULL when it is not observed */
  void *(*opened)(void *arg, struct mh_upstream *up, uint64_t handshake_us);
  void (*readable)(void *record);
  void (*closing)(void *record); /* the last call with record; it frees it */
  void *arg;
};

/* What the layer above lends the transports it connects with (the engine: its own,
 * mh_engine_int.h; a test: NULL or its own). It outlives every upstream made with it. The
 * transports reach nothing above them but through it. */
struct mh_upstream_env {
  /* announces a socket a transport made (the shim's fork gate closes it in a child); NULL:
   * nobody to tell */
  void (*own_fd)(void *arg, int fd);
  void *own_fd_arg;
  const struct mh_upstream_observer *observer; /* NULL: nobody watches */
  void *tls; /* the TLS transport's state for its loop (its curl multi handle), NULL until its
                first connection and after its last */
};

struct mh_upstream {
  const struct mh_upstream_ops *ops;
  mh_upstream_event_cb on_event;
  mh_upstream_closed_cb on_closed;
  void *owner;
  struct mh_upstream_env *env; /* what it was made with (NULL: none) */
  void *observed;              /* env->observer's record of it, NULL when not observed */
};

/* The transports' calls to their env (no-ops without one). */
static inline void mh_upstream_own_fd(const struct mh_upstream_env *env, int fd) {
  if (fd >= 0 && env && env->own_fd)
    env->own_fd(env->own_fd_arg, fd);
}
static inline void mh_upstream_opened(struct mh_upstream *up, uint64_t handshake_us) {
  const struct mh_upstream_observer *o = up->env ? up->env->observer : NULL;
  if (o && !up->observed)
    up->observed = o->opened(o->arg, up, handshake_us);
}
static inline void mh_upstream_readable(struct mh_upstream *up) {
  if (up->observed)
    up->env->observer->readable(up->observed);
}
static inline void mh_upstream_closing(struct mh_upstream *up) {
  if (up->observed)
    up->env->observer->closing(up->observed);
  up->observed = NULL;
}

/* Adopts an already connected, non-blocking TCP socket (the program's own connection after
 * takeover). conn, when given, gets up_fd published and cleared again before the close.
 * Returns NULL on ENOMEM (fd left open). Loop thread. */
struct mh_upstream *mh_upstream_tcp_adopt(uv_loop_t *loop, struct mh_upstream_env *env, int fd, struct mh_conn *conn,
                                          mh_upstream_event_cb on_event, void *owner);

/* Opens a non-blocking TCP connection to dst from src (port ignored; NULL = any), bound to
 * device ifname when permitted (SO_BINDTODEVICE needs CAP_NET_RAW; without it the source
 * address alone picks the interface through source routing). The outcome arrives as an event
 * with UV_WRITABLE once the owner watches for it: then mh_upstream_error() tells.
 * Returns NULL with *err = -errno on an immediate failure. Loop thread. */
struct mh_upstream *mh_upstream_tcp_connect(uv_loop_t *loop, struct mh_upstream_env *env, const struct sockaddr *src,
                                            const char *ifname, const struct sockaddr *dst,
                                            mh_upstream_event_cb on_event, void *owner, int *err);

/* The answers and controls of a connected TCP socket fd (MH_UPQ_FD, PEER, LOCAL, SRTT_US,
 * RCV_SPACE, TCP_INFO, NETNS; MH_UPC_*), for every transport that has one: -ENOTSUP for the
 * rest. Any thread (only syscalls on fd). */
int mh_upstream_sock_query(int fd, int what, int *ival, void *pval);
int mh_upstream_sock_control(int fd, int what, const void *arg);

/* What a TLS connection is, for the transport that makes it (mh_upstream_tls.h) and for the
 * split, which opens its other connections the same way and keys its pool by it. Plain TCP is
 * a NULL struct mh_tls everywhere. The strings are the owner's; a transport reads them only
 * while it makes a connection (libcurl keeps its own copies), so they must outlive the calls
 * that connect with it: the owner's split (mh_split_owner.tls). */
struct mh_tls;
typedef struct mh_upstream *(*mh_upstream_connect_fn)(uv_loop_t *loop, struct mh_upstream_env *env,
                                                      const struct sockaddr *src, const char *ifname,
                                                      const struct sockaddr *dst, const struct mh_tls *tls,
                                                      mh_upstream_event_cb on_event, void *owner, int *err);
struct mh_tls {
  const char *host;   /* the URL's host: SNI and the certificate's name (never an address
                         the engine picked: replicas are reached with that name) */
  unsigned port;      /* the URL's port (443) */
  const char *cafile; /* CA bundle (PEM), NULL = libcurl's default */
  int insecure;       /* 1: no certificate or host check (curl -k) */
  /* The transport that makes such a connection: mh_upstream_tls_connect. A pointer, so the
   * engine reaches libcurl only through what its owner links (the preload library never does). */
  mh_upstream_connect_fn connect;
};

/* A new connection over tls's transport (plain TCP when tls is NULL): see
 * mh_upstream_tcp_connect, whose contract every transport keeps. Loop thread. */
static inline struct mh_upstream *mh_upstream_connect(uv_loop_t *loop, struct mh_upstream_env *env,
                                                      const struct sockaddr *src, const char *ifname,
                                                      const struct sockaddr *dst, const struct mh_tls *tls,
                                                      mh_upstream_event_cb on_event, void *owner, int *err) {
  if (tls)
    return tls->connect(loop, env, src, ifname, dst, tls, on_event, owner, err);
  return mh_upstream_tcp_connect(loop, env, src, ifname, dst, on_event, owner, err);
}

/* The query and control of any upstream; -ENOTSUP when its transport has none at all. */
static inline int mh_upstream_query(struct mh_upstream *up, int what, int *ival, void *pval) {
  return up->ops->query ? up->ops->query(up, what, ival, pval) : -ENOTSUP;
}
static inline int mh_upstream_control(struct mh_upstream *up, int what, const void *arg) {
  return up->ops->control ? up->ops->control(up, what, arg) : -ENOTSUP;
}

/* The connection's pending error as -errno; 0 when none or when the transport cannot tell
 * (its failure then shows in recv/send). */
static inline int mh_upstream_error(struct mh_upstream *up) {
  int err = 0;
  return mh_upstream_query(up, MH_UPQ_ERROR, &err, NULL) < 0 ? 0 : err;
}
/* MH_UPQ_RCV_SPACE, 0 when unknown (the policy then counts the window as open). */
static inline uint64_t mh_upstream_window(struct mh_upstream *up) {
  uint64_t w = 0;
  return mh_upstream_query(up, MH_UPQ_RCV_SPACE, NULL, &w) < 0 ? 0 : w;
}
/* MH_UPQ_SRTT_US, 0 when unknown. */
static inline uint32_t mh_upstream_srtt_us(struct mh_upstream *up) {
  int rtt = 0;
  return mh_upstream_query(up, MH_UPQ_SRTT_US, &rtt, NULL) < 0 || rtt < 0 ? 0 : (uint32_t)rtt;
}

#endif
