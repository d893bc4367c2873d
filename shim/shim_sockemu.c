/* Socket emulation on taken-over fds: real TCP addresses, TCP-level options applied upstream, the rest answered by the socketpair end. */
#include "shim.h"
#include "mh_conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

/* The connection behind a TAKEN fd, with a reference; NULL when fd is not TAKEN. */
static struct mh_conn *shim__conn(int fd) {
  struct shim_fd *e = shim_fd_peek(fd);
  if (!e || atomic_load(&e->state) != SHIM_FD_TAKEN)
    return NULL;
  shim_fd_lock(e);
  struct mh_conn *c = e->conn;
  if (c)
    mh_conn_ref(c);
  shim_fd_unlock(e);
  return c;
}

int shim_emu_getpeername(int fd, struct sockaddr *sa, socklen_t *len, int peer) {
  struct mh_conn *c = shim__conn(fd);
  if (!c)
    return peer ? shim_real.getpeername(fd, sa, len) : shim_real.getsockname(fd, sa, len);
  if (!sa || !len) {
    mh_conn_unref(c);
    errno = EFAULT;
    return -1;
  }
  const struct sockaddr_storage *a = peer ? &c->peer : &c->local;
  socklen_t alen = peer ? c->peer_len : c->local_len;
  /* libc semantics: copy at most *len bytes, report the real length */
  memcpy(sa, a, *len < alen ? *len : alen);
  *len = alen;
  mh_conn_unref(c);
  return 0;
}

static int shim__tcp_level(int level) { return level == IPPROTO_TCP || level == IPPROTO_IP || level == IPPROTO_IPV6; }

/* SOL_SOCKET options that mean something for the TCP connection itself. */
static int shim__mirrored(int name) {
  return name == SO_KEEPALIVE || name == SO_LINGER || name == SO_PRIORITY || name == SO_MARK;
}

int shim_emu_getsockopt(int fd, int level, int name, void *val, socklen_t *len) {
  struct mh_conn *c = shim__conn(fd);
  if (!c)
    return shim_real.getsockopt(fd, level, name, val, len);
  int rc = 0, answer = -1;
  if (level == SOL_SOCKET && name == SO_DOMAIN)
    answer = c->family;
  else if (level == SOL_SOCKET && name == SO_PROTOCOL)
    answer = IPPROTO_TCP;
  else if (level == IPPROTO_TCP && name == TCP_NODELAY)
    answer = c->nodelay; /* a split sets it on the connection for its own requests */
  if (answer >= 0) {
    if (!val || !len || *len < (socklen_t)sizeof(int)) {
      errno = EINVAL;
      rc = -1;
    } else {
      *(int *)val = answer;
      *len = sizeof(int);
    }
  } else if (shim__tcp_level(level)) {
    pthread_mutex_lock(&c->mu);
    if (c->up_fd >= 0)
      rc = shim_real.getsockopt(c->up_fd, level, name, val, len);
    pthread_mutex_unlock(&c->mu);
    if (c->up_fd < 0 && val && len && *len >= (socklen_t)sizeof(int)) {
      /* the engine already closed the connection (TCP_NODELAY is answered above) */
      *(int *)val = 0;
      *len = sizeof(int);
    }
  } else {
    rc = shim_real.getsockopt(fd, level, name, val, len);
  }
  mh_conn_unref(c);
  return rc;
}

int shim_emu_setsockopt(int fd, int level, int name, const void *val, socklen_t len) {
  struct mh_conn *c = shim__conn(fd);
  if (!c)
    return shim_real.setsockopt(fd, level, name, val, len);
  int rc = 0;
  if (shim__tcp_level(level) || (level == SOL_SOCKET && shim__mirrored(name))) {
    pthread_mutex_lock(&c->mu);
    if (c->up_fd >= 0)
      rc = shim_real.setsockopt(c->up_fd, level, name, val, len);
    pthread_mutex_unlock(&c->mu);
    if (rc == 0 && level == IPPROTO_TCP && name == TCP_NODELAY && val && len >= (socklen_t)sizeof(int))
      c->nodelay = *(const int *)val != 0;
    if (level == SOL_SOCKET && rc == 0) {
      int saved = errno;
      shim_real.setsockopt(fd, level, name, val, len); /* so getsockopt reads it back */
      errno = saved;
    }
  } else {
    rc = shim_real.setsockopt(fd, level, name, val, len);
  }
  mh_conn_unref(c);
  return rc;
}
