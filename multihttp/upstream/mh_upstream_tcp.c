/* Plain TCP upstream: a uv_poll_t over a connected socket, with splice(2) for zero-copy bodies. */
#include "mh_clock.h"
#include "mh_fdgate.h"
#include "mh_upstream.h"
#include "mh_conn.h"
#include "mh_log.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <string.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71 /* Linux 5.14; Debian 12's headers predate it */
#endif

struct mh__tcp {
  struct mh_upstream base; /* first: the vtable methods cast back */
  uv_poll_t poll;
  int fd;
  int watching;
  struct mh_conn *conn;
  int sticky_err;        /* a connect error read by the handshake timing */
  uint64_t connect_us;   /* when connect() began; 0 once established (or adopted) */
  uint64_t handshake_us; /* how long the handshake took (0: not timed here) */
};

static void mh__tcp_poll_cb(uv_poll_t *h, int status, int events) {
  struct mh__tcp *t = h->data;
  if (t->connect_us && (events & UV_WRITABLE || status < 0)) {
    /* the first writable event ends the handshake: its time is the path's first RTT estimate */
    int e = 0;
    socklen_t l = sizeof e;
    if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &e, &l) == 0 && e == 0) {
      t->handshake_us = mh_now_us() - t->connect_us;
      mh_upstream_opened(&t->base, t->handshake_us);
      t->connect_us = 0;
    } else if (e) {
      /* SO_ERROR is read once: put it back where the owner looks (MH_UPQ_ERROR) */
      t->connect_us = 0;
      t->sticky_err = e;
    }
  }
  if (events & UV_READABLE)
    mh_upstream_readable(&t->base); /* the arrival curve before the owner reads (capacity) */
  t->base.on_event(&t->base, status, events);
}

static int mh__tcp_watch(struct mh_upstream *up, int events) {
  struct mh__tcp *t = (struct mh__tcp *)up;
  if (events == t->watching)
    return 0;
  t->watching = events;
  return events ? uv_poll_start(&t->poll, events, mh__tcp_poll_cb) : uv_poll_stop(&t->poll);
}

static ssize_t mh__tcp_recv(struct mh_upstream *up, void *buf, size_t len) {
  struct mh__tcp *t = (struct mh__tcp *)up;
  ssize_t n;
  do
    n = recv(t->fd, buf, len, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  return n < 0 ? -errno : n;
}

static ssize_t mh__tcp_send(struct mh_upstream *up, const void *buf, size_t len) {
  struct mh__tcp *t = (struct mh__tcp *)up;
  ssize_t n;
  do /* MSG_NOSIGNAL: a reset server must not SIGPIPE the program hosting us */
    n = send(t->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    /* a send soon after a read (a request pipelined behind an answer) puts the kernel in
     * its interactive mode, which delays the ACK of the next small segment by up to 40 ms.
     * A server that waits for its bytes to be acknowledged (a reset or close with a linger,
     * a Nagle-held tail behind a small head) would then wait on us where it does not wait
     * on a client that sent one request: answers are acknowledged at once */
    int one = 1;
    setsockopt(t->fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
  }
  return n < 0 ? -errno : n;
}

static ssize_t mh__tcp_splice_to(struct mh_upstream *up, int pipe_w, size_t len) {
  struct mh__tcp *t = (struct mh__tcp *)up;
  ssize_t n;
  do
    n = splice(t->fd, NULL, pipe_w, NULL, len, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
  while (n < 0 && errno == EINTR);
  return n < 0 ? -errno : n;
}

static int mh__tcp_shutdown_wr(struct mh_upstream *up) {
  struct mh__tcp *t = (struct mh__tcp *)up;
  return shutdown(t->fd, SHUT_WR) < 0 ? -errno : 0;
}

static void mh__tcp_closed(uv_handle_t *h) {
  struct mh__tcp *t = h->data;
  mh_upstream_closed_cb cb = t->base.on_closed;
  /* The fd is closed only now: uv_poll_t must stop watching it before the number is reused. */
  close(t->fd);
  if (cb)
    cb(&t->base);
  free(t);
}

static void mh__tcp_close(struct mh_upstream *up, int abort, mh_upstream_closed_cb closed_cb) {
  struct mh__tcp *t = (struct mh__tcp *)up;
  mh_upstream_closing(&t->base);
  if (t->conn) {
    pthread_mutex_lock(&t->conn->mu);
    t->conn->up_fd = -1;
    pthread_mutex_unlock(&t->conn->mu);
    mh_conn_unref(t->conn);
    t->conn = NULL;
  }
  if (abort) {
    /* linger 0: close sends RST, exactly what the program's socket would have sent */
    struct linger lg = {1, 0};
    setsockopt(t->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  }
  t->base.on_closed = closed_cb;
  uv_close((uv_handle_t *)&t->poll, mh__tcp_closed);
}

/* The socket's pending error (SO_ERROR) as -errno, 0 when none. */
static int mh__tcp_error(struct mh__tcp *t) {
  if (t->sticky_err)
    return -t->sticky_err;
  int e = 0;
  socklen_t l = sizeof e;
  if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
    return -errno;
  return -e;
}

/* tcpi_rcv_space: the receiver's estimate of one round trip's delivery (the initial window
 * until a response filled more); 0 when the kernel does not report it. */
static uint64_t mh__tcp_rcv_space(int fd) {
  struct tcp_info ti;
  socklen_t l = sizeof ti;
  memset(&ti, 0, sizeof ti);
  if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0 ||
      l < offsetof(struct tcp_info, tcpi_rcv_space) + sizeof ti.tcpi_rcv_space)
    return 0;
  return ti.tcpi_rcv_space;
}

int mh_upstream_sock_query(int fd, int what, int *ival, void *pval) {
  socklen_t l;
  struct tcp_info ti;
  switch (what) {
  case MH_UPQ_FD: *ival = fd; return 0;
  case MH_UPQ_PEER:
  case MH_UPQ_LOCAL:
    l = sizeof(struct sockaddr_storage);
    if ((what == MH_UPQ_PEER ? getpeername(fd, pval, &l) : getsockname(fd, pval, &l)) < 0)
      return -errno;
    if (ival)
      *ival = (int)l;
    return 0;
  case MH_UPQ_SRTT_US:
    l = sizeof ti;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0)
      return -errno;
    *ival = (int)ti.tcpi_rtt;
    return 0;
  case MH_UPQ_RCV_SPACE: *(uint64_t *)pval = mh__tcp_rcv_space(fd); return 0;
  case MH_UPQ_TCP_INFO:
    l = (socklen_t)*ival;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, pval, &l) < 0)
      return -errno;
    *ival = (int)l;
    return 0;
  case MH_UPQ_NETNS:
    l = sizeof(uint64_t);
    if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, pval, &l) < 0 || l != sizeof(uint64_t))
      *(uint64_t *)pval = 0; /* a kernel before 5.14 cannot tell: unknown */
    return 0;
  }
  return -ENOTSUP;
}

int mh_upstream_sock_control(int fd, int what, const void *arg) {
  switch (what) {
  case MH_UPC_RCVBUF: return setsockopt(fd, SOL_SOCKET, SO_RCVBUF, arg, sizeof(int)) < 0 ? -errno : 0;
  case MH_UPC_WINDOW_CLAMP: return setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, arg, sizeof(int)) < 0 ? -errno : 0;
  case MH_UPC_NODELAY: return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, arg, sizeof(int)) < 0 ? -errno : 0;
  case MH_UPC_ABORT:
    return connect(fd, &(struct sockaddr){.sa_family = AF_UNSPEC}, sizeof(struct sockaddr)) < 0 ? -errno : 0;
  }
  return -ENOTSUP;
}

static int mh__tcp_query(struct mh_upstream *up, int what, int *ival, void *pval) {
  struct mh__tcp *t = (struct mh__tcp *)up;
  switch (what) {
  case MH_UPQ_ERROR: *ival = mh__tcp_error(t); return 0;
  case MH_UPQ_HANDSHAKE_US: *(uint64_t *)pval = t->handshake_us; return 0;
  }
  return mh_upstream_sock_query(t->fd, what, ival, pval);
}

static int mh__tcp_control(struct mh_upstream *up, int what, const void *arg) {
  return mh_upstream_sock_control(((struct mh__tcp *)up)->fd, what, arg);
}

static const struct mh_upstream_ops mh__tcp_ops = {
    .name = "tcp",
    .watch = mh__tcp_watch,
    .recv = mh__tcp_recv,
    .send = mh__tcp_send,
    .splice_to = mh__tcp_splice_to,
    .shutdown_wr = mh__tcp_shutdown_wr,
    .close = mh__tcp_close,
    .query = mh__tcp_query,
    .control = mh__tcp_control,
};

struct mh_upstream *mh_upstream_tcp_adopt(uv_loop_t *loop, struct mh_upstream_env *env, int fd, struct mh_conn *conn,
                                          mh_upstream_event_cb on_event, void *owner) {
  struct mh__tcp *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0 && !(fl & O_NONBLOCK))
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  if (uv_poll_init(loop, &t->poll, fd) < 0) {
    free(t);
    return NULL;
  }
  t->poll.data = t;
  t->fd = fd;
  t->base.ops = &mh__tcp_ops;
  t->base.env = env;
  /* the program may have set its own low-water mark on this socket; it moved to its end of
   * the socketpair at takeover, and the engine wants every byte as soon as it arrives (the
   * program sees data exactly when it would have without us) */
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
  t->base.on_event = on_event;
  t->base.owner = owner;
  if (conn) {
    mh_conn_ref(conn);
    t->conn = conn;
    pthread_mutex_lock(&conn->mu);
    conn->up_fd = fd;
    pthread_mutex_unlock(&conn->mu);
  }
  /* the program's own connection is established already (its handshake time is the
   * program's, unknown here); TCP_INFO gives its first sample. mh_upstream_tcp_connect's
   * sockets are counted once their handshake ends (mh__tcp_poll_cb). */
  if (conn)
    mh_upstream_opened(&t->base, 0);
  return &t->base;
}

static socklen_t mh__salen(const struct sockaddr *sa) {
  return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

struct mh_upstream *mh_upstream_tcp_connect(uv_loop_t *loop, struct mh_upstream_env *env, const struct sockaddr *src,
                                            const char *ifname, const struct sockaddr *dst,
                                            mh_upstream_event_cb on_event, void *owner, int *err) {
  mh_fdgate(1); /* made and announced before a fork can copy it */
  int fd = socket(dst->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  *err = fd < 0 ? -errno : 0;
  mh_upstream_own_fd(env, fd);
  mh_fdgate(0);
  if (fd < 0)
    return NULL;
  if (ifname && *ifname) /* EPERM without CAP_NET_RAW: the source address still routes it */
    (void)setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname) + 1);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (src) {
    struct sockaddr_storage a;
    memcpy(&a, src, mh__salen(src));
    if (a.ss_family == AF_INET)
      ((struct sockaddr_in *)&a)->sin_port = 0;
    else
      ((struct sockaddr_in6 *)&a)->sin6_port = 0;
    if (bind(fd, (struct sockaddr *)&a, mh__salen(src)) < 0) {
      *err = -errno;
      close(fd);
      return NULL;
    }
  }
  if (connect(fd, dst, mh__salen(dst)) < 0 && errno != EINPROGRESS) {
    *err = -errno;
    close(fd);
    return NULL;
  }
  struct mh_upstream *up = mh_upstream_tcp_adopt(loop, env, fd, NULL, on_event, owner);
  if (!up) {
    *err = -ENOMEM;
    close(fd);
    return NULL;
  }
  ((struct mh__tcp *)up)->connect_us = mh_now_us();
  return up;
}
