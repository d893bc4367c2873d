/* The upstream connection as a small vtable (curl connection-filter style): plain TCP now, interface-bound or TLS later. */
#ifndef MH_UPSTREAM_H
#define MH_UPSTREAM_H
#include <stddef.h>
#include <sys/types.h>
#include <uv.h>

struct mh_conn;
struct mh_upstream;

/* Readiness for the owner: events is a mask of UV_READABLE | UV_WRITABLE; status < 0 is a
 * poll error (the owner then reads to learn the socket error). Loop thread. */
typedef void (*mh_upstream_event_cb)(struct mh_upstream *up, int status, int events);
/* Called once after close() finished; the owner may free what it embeds the upstream in. */
typedef void (*mh_upstream_closed_cb)(struct mh_upstream *up);

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
};

struct mh_upstream {
  const struct mh_upstream_ops *ops;
  mh_upstream_event_cb on_event;
  mh_upstream_closed_cb on_closed;
  void *owner;
};

/* Adopts an already connected, non-blocking TCP socket (the program's own connection after
 * takeover). conn, when given, gets up_fd published and cleared again before the close.
 * Returns NULL on ENOMEM (fd left open). Loop thread. */
struct mh_upstream *mh_upstream_tcp_adopt(uv_loop_t *loop, int fd, struct mh_conn *conn,
                                          mh_upstream_event_cb on_event, void *owner);

/* Opens a non-blocking TCP connection to dst from src (port ignored; NULL = any), bound to
 * device ifname when permitted (SO_BINDTODEVICE needs CAP_NET_RAW; without it the source
 * address alone picks the interface through source routing). The outcome arrives as an event
 * with UV_WRITABLE once the owner watches for it: then mh_upstream_tcp_error() tells.
 * Returns NULL with *err = -errno on an immediate failure. Loop thread. */
struct mh_upstream *mh_upstream_tcp_connect(uv_loop_t *loop, const struct sockaddr *src,
                                            const char *ifname, const struct sockaddr *dst,
                                            mh_upstream_event_cb on_event, void *owner, int *err);
/* The socket's pending error (SO_ERROR) as -errno, 0 when none. */
int mh_upstream_tcp_error(struct mh_upstream *up);
/* The socket descriptor (TCP_INFO, getsockname); -1 for other transports. */
int mh_upstream_fd(struct mh_upstream *up);

#endif
