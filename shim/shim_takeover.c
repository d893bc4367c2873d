/* Takeover on first write: the connected TCP socket moves to the engine and the program's fd becomes a socketpair end with the same flags. */
#include "shim.h"
#include "mh_fdgate.h"
#include "mh_conn.h"
#include "mh_log.h"
#include "shim_sniff.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>

/* A split's extra legs would open their connections only at the program's first request, one
 * handshake after its own; asked now, they are established (or nearly) when the probe goes
 * out. The engine decides which interfaces (mh_pool_preconnect); here only the cheap checks:
 * loopback never gains a path, and the local address tells the program's interface. */
int shim_sa_port(const struct sockaddr *sa, socklen_t len) {
  if (!sa)
    return -1;
  if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in))
    return ntohs(((const struct sockaddr_in *)sa)->sin_port);
  if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))
    return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
  return -1;
}

/* Loopback never gains a path (the engine re-checks with its interface list). */
static int shim__preconnect_wanted(const struct sockaddr *sa) {
  if (!shim_config.split || !shim_config.preconnect)
    return 0;
  if (sa->sa_family == AF_INET)
    return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) != 127;
  const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
  return !IN6_IS_ADDR_LOOPBACK(a) && !IN6_IS_ADDR_V4MAPPED(a);
}

int shim_preconnect_early(const struct sockaddr *sa, socklen_t len, const struct sockaddr_storage *from) {
  int port = shim_sa_port(sa, len);
  if (from->ss_family != (sa ? sa->sa_family : AF_UNSPEC) || port < 0 ||
      !mh_config_port_eligible(&shim_config, (unsigned)port) || !shim__preconnect_wanted(sa))
    return 0;
  int err = errno;
  socklen_t fl = from->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
  struct mh_engine *eng = shim_engine();
  int rc = eng ? mh_engine_preconnect(eng, sa, len, (const struct sockaddr *)from, fl) : -ENOMEM;
  errno = err;
  return rc == 0;
}

void shim_connect_done(int fd, const struct sockaddr *sa, socklen_t len, int preconnected) {
  int port = shim_sa_port(sa, len);
  if (port < 0 || !mh_config_port_eligible(&shim_config, (unsigned)port))
    return;
  int type = 0, proto = 0;
  socklen_t l = sizeof type;
  /* SOCK_STREAM|SOCK_NONBLOCK|SOCK_CLOEXEC reads back as plain SOCK_STREAM here */
  if (shim_real.getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_STREAM)
    return;
  l = sizeof proto;
  if (shim_real.getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) < 0 || proto != IPPROTO_TCP)
    return;
  struct shim_fd *e = shim_fd_get(fd);
  if (!e)
    return;
  uint8_t none = SHIM_FD_NONE;
  if (!atomic_compare_exchange_strong(&e->state, &none, SHIM_FD_ELIGIBLE))
    return;
  mh_dbg("fd %d: eligible (port %d)", fd, port);
  /* the program bound the socket itself, or the shim could not tell its interface before the
   * connect: its local address tells now (one handshake later for a blocking connect) */
  struct sockaddr_storage local;
  socklen_t ll = sizeof local;
  struct mh_engine *eng;
  if (!preconnected && shim__preconnect_wanted(sa) && shim_real.getsockname(fd, (struct sockaddr *)&local, &ll) == 0 &&
      local.ss_family == sa->sa_family && (eng = shim_engine()))
    (void)mh_engine_preconnect(eng, sa, len, (struct sockaddr *)&local, ll);
}

void shim_read_first(int fd) {
  struct shim_fd *e = shim_fd_peek(fd);
  uint8_t el = SHIM_FD_ELIGIBLE;
  if (e && atomic_compare_exchange_strong(&e->state, &el, SHIM_FD_NONE))
    mh_dbg("fd %d: read before write; left alone", fd);
}

/* Everything carried from the program's socket to its replacement. */
struct shim__saved {
  int fl, fdfl, owner, lowat;
  struct timeval rcvtimeo, sndtimeo;
};

static void shim__carry_flags(int fd, const struct shim__saved *sv) {
  int keep = sv->fl & (O_NONBLOCK | O_ASYNC);
  if (keep)
    shim_real.fcntl(fd, F_SETFL, keep);
  if ((sv->fl & O_ASYNC) && sv->owner)
    shim_real.fcntl(fd, F_SETOWN, sv->owner);
  if (sv->rcvtimeo.tv_sec || sv->rcvtimeo.tv_usec)
    shim_real.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &sv->rcvtimeo, sizeof sv->rcvtimeo);
  if (sv->lowat > 1)
    shim_real.setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &sv->lowat, sizeof sv->lowat);
  if (sv->sndtimeo.tv_sec || sv->sndtimeo.tv_usec)
    shim_real.setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sv->sndtimeo, sizeof sv->sndtimeo);
}

/* Puts `src` in place of fd (dup3 keeps the number), moving epoll registrations along:
 * a registration is keyed by (file, fd), so the old one would keep reporting the old socket. */
static int shim__swap(int fd, int src, struct shim_fd *e, const struct shim__saved *sv) {
  int deleted[SHIM_EPOLL_MAX] = {0};
  for (int i = 0; i < e->nep; i++)
    deleted[i] = shim_real.epoll_ctl(e->ep[i].epfd, EPOLL_CTL_DEL, fd, NULL) == 0;
  if (shim_real.dup3(src, fd, (sv->fdfl & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0) {
    int err = errno;
    for (int i = 0; i < e->nep; i++)
      if (deleted[i])
        shim_real.epoll_ctl(e->ep[i].epfd, EPOLL_CTL_ADD, fd, &e->ep[i].ev);
    errno = err;
    return -1;
  }
  shim__carry_flags(fd, sv);
  /* only registrations we really removed come back: a stale epfd number is left alone */
  for (int i = 0; i < e->nep; i++)
    if (deleted[i])
      shim_real.epoll_ctl(e->ep[i].epfd, EPOLL_CTL_ADD, fd, &e->ep[i].ev);
  return 0;
}

/* What the program set on socket fd, kept for its socketpair end (sv), and its TCP_NODELAY for
 * the engine's connection (c). */
static void shim__save(int fd, struct shim__saved *sv, struct mh_conn *c) {
  sv->fl = shim_real.fcntl(fd, F_GETFL);
  sv->fdfl = shim_real.fcntl(fd, F_GETFD);
  if (sv->fl & O_ASYNC)
    sv->owner = shim_real.fcntl(fd, F_GETOWN);
  socklen_t l = sizeof sv->rcvtimeo;
  shim_real.getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &sv->rcvtimeo, &l);
  l = sizeof sv->sndtimeo;
  shim_real.getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sv->sndtimeo, &l);
  l = sizeof sv->lowat;
  shim_real.getsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &sv->lowat, &l);
  int nodelay = 0;
  l = sizeof nodelay;
  shim_real.getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &l);
  c->nodelay = nodelay;
}

/* The source address the program bound its socket to (e's record of it), for c's plain
 * fetches; AF_UNSPEC when it bound none. */
static void shim__plain_src(struct mh_conn *c, const struct shim_fd *e) {
  c->plain_src.ss_family = AF_UNSPEC;
  if (e->plain_family == AF_INET) {
    c->plain_src.ss_family = AF_INET;
    memcpy(&((struct sockaddr_in *)&c->plain_src)->sin_addr, e->plain_addr, 4);
  } else if (e->plain_family == AF_INET6) {
    c->plain_src.ss_family = AF_INET6;
    memcpy(&((struct sockaddr_in6 *)&c->plain_src)->sin6_addr, e->plain_addr, 16);
  }
}

/* The engine refused connection c (no engine thread: its creation failed): the program gets
 * its own socket (now up) back in fd, and the engine's end of the socketpair (eng_end) goes. */
static void shim__give_back(int fd, struct shim_fd *e, struct mh_conn *c, int up, int eng_end,
                            const struct shim__saved *sv) {
  e->conn = NULL;
  mh_conn_unref(c);
  if (shim__swap(fd, up, e, sv) == 0) {
    shim_forget_close(up);
    shim_forget_close(eng_end);
    mh_conn_unref(c);
    return;
  }
  mh_err("fd %d: cannot restore the socket: %s", fd, strerror(errno));
}

/* The engine's descriptors for taking socket fd over: a duplicate of it (returned, -1 on
 * failure) and a socketpair (sp[1] the engine's end; sp[0] stays -1 when it failed). They are
 * marked before anything can close them, and made and marked inside the fork gate so that no
 * child inherits them unmarked. */
static int shim__engine_fds(int fd, int sp[2]) {
  mh_fdgate(1);
  int up = shim_real.fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (up >= 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0) {
    shim_fd_mark_engine(up);
    shim_fd_mark_engine(sp[1]);
  }
  mh_fdgate(0);
  return up;
}

/* Called with e->state == SWAPPING and e locked. 0 when fd now is the socketpair end. */
static int shim__takeover(int fd, struct shim_fd *e) {
  struct mh_conn *c = mh_conn_new();
  if (!c)
    return -1;
  c->peer_len = sizeof c->peer;
  c->local_len = sizeof c->local;
  if (shim_real.getpeername(fd, (struct sockaddr *)&c->peer, &c->peer_len) < 0 ||
      shim_real.getsockname(fd, (struct sockaddr *)&c->local, &c->local_len) < 0) {
    mh_conn_unref(c); /* not connected yet (or failed): the real write reports it */
    return errno == ENOTCONN ? -2 : -1;
  }
  c->family = c->peer.ss_family;
  struct shim__saved sv = {0};
  shim__save(fd, &sv, c);
  shim__plain_src(c, e);
  struct mh_engine *eng = shim_engine();
  if (!eng) {
    mh_conn_unref(c); /* no engine (out of memory): the program keeps its own socket */
    return -1;
  }
  int sp[2] = {-1, -1};
  int up = shim__engine_fds(fd, sp);
  if (up < 0 || sp[0] < 0)
    goto fail;
  if (shim__swap(fd, sp[0], e, &sv) < 0)
    goto fail;
  shim_real.close(sp[0]);
  sp[0] = -1;
  struct stat st;
  if (fstat(fd, &st) == 0) {
    c->app_dev = st.st_dev;
    c->app_ino = st.st_ino;
  }
  c->app_fd = fd;
  /* published now, not when the engine adopts it: the program may tune the socket right
   * after this write returns (the engine clears it under c->mu before closing) */
  c->up_fd = up;
  mh_conn_ref(c); /* one for the fd table, one for the engine */
  e->conn = c;
  if (mh_engine_submit(eng, sp[1], up, c) < 0) {
    shim__give_back(fd, e, c, up, sp[1], &sv);
    return -1;
  }
  mh_info("fd %d: taken over", fd);
  return 0;
fail:
  mh_err("fd %d: takeover failed: %s; left alone", fd, strerror(errno));
  if (up >= 0)
    shim_forget_close(up);
  if (sp[0] >= 0) {
    shim_real.close(sp[0]);
    shim_forget_close(sp[1]);
  }
  mh_conn_unref(c);
  return -1;
}

/* The sniffer's verdict on the first bytes of a write, gathered across its iovecs. */
static enum shim_sniff shim__sniff_iov(const struct iovec *iov, int iovcnt) {
  char head[64];
  size_t n = 0;
  for (int i = 0; i < iovcnt && n < sizeof head; i++) {
    size_t k = iov[i].iov_len < sizeof head - n ? iov[i].iov_len : sizeof head - n;
    if (k)
      memcpy(head + n, iov[i].iov_base, k);
    n += k;
  }
  return shim_sniff_http(head, n);
}

void shim_first_write(int fd, const struct iovec *iov, int iovcnt) {
  struct shim_fd *e = shim_fd_peek(fd);
  if (!e)
    return;
  int saved_errno = errno;
  for (;;) {
    uint8_t st = atomic_load(&e->state);
    if (st == SHIM_FD_SWAPPING) {
      sched_yield(); /* another thread is swapping this fd: its write goes first */
      continue;
    }
    if (st != SHIM_FD_ELIGIBLE)
      break;
    enum shim_sniff verdict = shim__sniff_iov(iov, iovcnt);
    if (verdict == SHIM_SNIFF_MORE)
      break;
    uint8_t el = SHIM_FD_ELIGIBLE;
    if (verdict == SHIM_SNIFF_NO) {
      if (atomic_compare_exchange_strong(&e->state, &el, SHIM_FD_NONE))
        mh_dbg("fd %d: first write is not HTTP; left alone", fd);
      break;
    }
    if (!atomic_compare_exchange_strong(&e->state, &el, SHIM_FD_SWAPPING))
      continue;
    shim_fd_lock(e);
    int rc = e->ep_overflow ? -1 : shim__takeover(fd, e);
    atomic_store(&e->state, rc == 0 ? SHIM_FD_TAKEN : rc == -2 ? SHIM_FD_ELIGIBLE : SHIM_FD_NONE);
    shim_fd_unlock(e);
    break;
  }
  errno = saved_errno;
}

int shim_fastopen(int fd, const struct iovec *iov, int iovcnt, const struct sockaddr *to, socklen_t tolen) {
  if (shim_fd_state(fd) != SHIM_FD_NONE || !to || !iov || iovcnt <= 0)
    return 0;
  if (shim__sniff_iov(iov, iovcnt) != SHIM_SNIFF_HTTP)
    return 0; /* not a request: the program's own TCP Fast Open, untouched */
  int port = shim_sa_port(to, tolen);
  if (port <= 0 || !mh_config_port_eligible(&shim_config, (unsigned)port))
    return 0;
  /* A Fast Open request would put the request on the wire before we could take the socket
   * over. A plain connect is one legal outcome of MSG_FASTOPEN: blocking, it returns once
   * connected and the write goes through the engine; non-blocking, EINPROGRESS with nothing
   * sent, as without a cookie, and the program writes again once connected. */
  struct sockaddr_storage from;
  int nif = shim_bind_choose(fd, to, tolen, &from);
  int pre = (nif == 0 || nif == 1) ? 1 : shim_preconnect_early(to, tolen, &from);
  int rc = shim_real.connect(fd, to, tolen);
  if (rc < 0 && errno != EINPROGRESS && errno != EINTR)
    return -1;
  int err = errno;
  shim_connect_done(fd, to, tolen, pre);
  if (rc < 0) {
    errno = err == EINTR ? EINTR : EINPROGRESS;
    return -1;
  }
  if (shim_fd_state(fd) == SHIM_FD_ELIGIBLE)
    shim_first_write(fd, iov, iovcnt);
  return 1;
}
