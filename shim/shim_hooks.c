/* The interposed libc calls: each checks the fd table and passes through, or calls the real logic in shim_takeover.c / shim_sockemu.c. */
#include "shim.h"
#include "mh_fdgate.h"
#include "mh_log.h"
#include "multidns/answer.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Before the table is filled: initialise, unless this thread is filling it right now (a
 * hook re-entered from inside dlsym), in which case the raw system call answers. A symbol
 * that stays missing fails like an unsupported call instead of crashing. */
#define SHIM_NEED_RAW(name, raw)                \
  do {                                          \
    if (__builtin_expect(!shim_real.name, 0)) { \
      if (shim_resolving)                       \
        return (raw);                           \
      shim_init();                              \
      if (!shim_real.name) {                    \
        errno = ENOSYS;                         \
        return -1;                              \
      }                                         \
    }                                           \
  } while (0)
#define SHIM_NEED(name, failval) SHIM_NEED_RAW(name, (errno = ENOSYS, failval))

/* 1 when the table may change for fd: the shim is active, fd has an entry worth editing,
 * and we are not a vfork child (it shares our memory, table included, but not our fds). */
static inline int shim__may_edit(int fd) {
  if (shim_status != SHIM_ACTIVE)
    return 0;
  struct shim_fd *e = shim_fd_peek(fd);
  if (!e || (atomic_load(&e->state) == SHIM_FD_NONE && !e->nep && !e->ep_overflow))
    return 0;
  return getpid() == shim_pid;
}

static inline int shim__wants_write(int fd) {
  int st = shim_fd_state(fd);
  return st == SHIM_FD_ELIGIBLE || st == SHIM_FD_SWAPPING;
}

static inline void shim__before_read(int fd) {
  if (shim_fd_state(fd) == SHIM_FD_ELIGIBLE)
    shim_read_first(fd);
}

/* ---- connect ----------------------------------------------------------------------------- */

SHIM_EXPORT int connect(int fd, const struct sockaddr *sa, socklen_t len) {
  SHIM_NEED_RAW(connect, syscall(SYS_connect, fd, sa, len));
  int pre = 0;
  if (shim_active()) {
    struct sockaddr_storage from;
    int nif = shim_bind_choose(fd, sa, len, &from);
    /* before the real connect: a blocking connect would cost the other paths its handshake.
     * With one interface there is nothing to pre-connect (and no engine to start for it). */
    pre = (nif == 0 || nif == 1) ? 1 : shim_preconnect_early(sa, len, &from);
  }
  int rc = shim_real.connect(fd, sa, len);
  if (!shim_active())
    return rc;
  int err = errno;
  /* a non-blocking (EINPROGRESS) or interrupted (EINTR) connect goes on in the kernel */
  if (rc == 0 || err == EINPROGRESS || err == EINTR || err == EISCONN)
    shim_connect_done(fd, sa, len, pre);
  errno = err;
  return rc;
}

/* ---- the write family: first-write sniffing ------------------------------------------------ */

SHIM_EXPORT ssize_t write(int fd, const void *buf, size_t n) {
  SHIM_NEED_RAW(write, syscall(SYS_write, fd, buf, n));
  if (shim_active() && shim__wants_write(fd)) {
    struct iovec iov = {(void *)buf, n};
    shim_first_write(fd, &iov, 1);
  }
  return shim_real.write(fd, buf, n);
}

SHIM_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt) {
  SHIM_NEED_RAW(writev, syscall(SYS_writev, fd, iov, cnt));
  if (shim_active() && shim__wants_write(fd) && iov && cnt > 0)
    shim_first_write(fd, iov, cnt);
  return shim_real.writev(fd, iov, cnt);
}

SHIM_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags) {
  SHIM_NEED_RAW(send, syscall(SYS_sendto, fd, buf, n, flags, NULL, 0));
  if (shim_active() && shim__wants_write(fd)) {
    struct iovec iov = {(void *)buf, n};
    shim_first_write(fd, &iov, 1);
  }
  return shim_real.send(fd, buf, n, flags);
}

SHIM_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t tolen) {
  SHIM_NEED_RAW(sendto, syscall(SYS_sendto, fd, buf, n, flags, to, tolen));
  if (shim_active()) {
    if (flags & MSG_FASTOPEN) {
      struct iovec iov = {(void *)buf, n};
      int fo = shim_fastopen(fd, &iov, 1, to, tolen);
      if (fo < 0)
        return -1;
      if (fo > 0)
        return shim_real.sendto(fd, buf, n, flags & ~MSG_FASTOPEN, NULL, 0);
    }
    if (shim__wants_write(fd)) {
      struct iovec iov = {(void *)buf, n};
      shim_first_write(fd, &iov, 1);
    }
    /* TCP ignores a destination on a connected socket; AF_UNIX would fail with EISCONN */
    if (shim_fd_state(fd) == SHIM_FD_TAKEN)
      return shim_real.sendto(fd, buf, n, flags, NULL, 0);
  }
  return shim_real.sendto(fd, buf, n, flags, to, tolen);
}

SHIM_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
  SHIM_NEED_RAW(sendmsg, syscall(SYS_sendmsg, fd, msg, flags));
  if (shim_active() && msg) {
    if ((flags & MSG_FASTOPEN) && msg->msg_name) {
      int fo = shim_fastopen(fd, msg->msg_iov, (int)msg->msg_iovlen, msg->msg_name, msg->msg_namelen);
      if (fo < 0)
        return -1;
      if (fo > 0) {
        struct msghdr m = *msg;
        m.msg_name = NULL;
        m.msg_namelen = 0;
        return shim_real.sendmsg(fd, &m, flags & ~MSG_FASTOPEN);
      }
    }
    if (shim__wants_write(fd) && msg->msg_iov && msg->msg_iovlen > 0)
      shim_first_write(fd, msg->msg_iov, (int)msg->msg_iovlen);
    if (shim_fd_state(fd) == SHIM_FD_TAKEN && msg->msg_name) {
      struct msghdr m = *msg;
      m.msg_name = NULL;
      m.msg_namelen = 0;
      return shim_real.sendmsg(fd, &m, flags);
    }
  }
  return shim_real.sendmsg(fd, msg, flags);
}

/* ---- the read family: a read before any write means "not an HTTP client" ------------------ */

SHIM_EXPORT ssize_t read(int fd, void *buf, size_t n) {
  SHIM_NEED_RAW(read, syscall(SYS_read, fd, buf, n));
  if (shim_active())
    shim__before_read(fd);
  return shim_real.read(fd, buf, n);
}

SHIM_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt) {
  SHIM_NEED_RAW(readv, syscall(SYS_readv, fd, iov, cnt));
  if (shim_active())
    shim__before_read(fd);
  return shim_real.readv(fd, iov, cnt);
}

SHIM_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags) {
  SHIM_NEED_RAW(recv, syscall(SYS_recvfrom, fd, buf, n, flags, NULL, NULL));
  if (shim_active())
    shim__before_read(fd);
  return shim_real.recv(fd, buf, n, flags);
}

SHIM_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *fromlen) {
  SHIM_NEED_RAW(recvfrom, syscall(SYS_recvfrom, fd, buf, n, flags, from, fromlen));
  if (shim_active()) {
    shim__before_read(fd);
    /* a TCP socket reports no source address; the socketpair would report an AF_UNIX one */
    if (shim_fd_state(fd) == SHIM_FD_TAKEN && from && fromlen) {
      ssize_t r = shim_real.recvfrom(fd, buf, n, flags, NULL, NULL);
      if (r >= 0)
        *fromlen = 0;
      return r;
    }
  }
  return shim_real.recvfrom(fd, buf, n, flags, from, fromlen);
}

SHIM_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags) {
  SHIM_NEED_RAW(recvmsg, syscall(SYS_recvmsg, fd, msg, flags));
  if (shim_active()) {
    shim__before_read(fd);
    if (msg && msg->msg_name && shim_fd_state(fd) == SHIM_FD_TAKEN) {
      /* TCP reports no source address; the socketpair would report an AF_UNIX one */
      void *name = msg->msg_name;
      msg->msg_name = NULL;
      ssize_t r = shim_real.recvmsg(fd, msg, flags);
      msg->msg_name = name;
      if (r >= 0)
        msg->msg_namelen = 0;
      return r;
    }
  }
  return shim_real.recvmsg(fd, msg, flags);
}

/* ---- descriptor lifetime ------------------------------------------------------------------ */

/* Forgotten before closing: once closed, the number can be reused by another thread at once;
 * inside the fork gate, so a child never inherits a descriptor forgotten but still open. */
int shim_forget_close(int fd) {
  mh_fdgate(1);
  shim_fd_forget(fd);
  int r = shim_real.close(fd);
  mh_fdgate(0);
  return r;
}

SHIM_EXPORT int close(int fd) {
  SHIM_NEED_RAW(close, (int)syscall(SYS_close, fd));
  if (shim_active() && shim_fd_state(fd) == SHIM_FD_ENGINE) {
    /* never handed to the program (it can only have guessed the number): closing it under
     * the engine would break a session, or crash libuv on its next poll change */
    errno = EBADF;
    return -1;
  }
  return shim__may_edit(fd) ? shim_forget_close(fd) : shim_real.close(fd);
}

SHIM_EXPORT int shutdown(int fd, int how) {
  SHIM_NEED_RAW(shutdown, (int)syscall(SYS_shutdown, fd, how));
  if (shim_active())
    shim__before_read(fd); /* shutting down before writing: not a request we relay */
  return shim_real.shutdown(fd, how);
}

SHIM_EXPORT int dup(int fd) {
  SHIM_NEED_RAW(dup, (int)syscall(SYS_dup, fd));
  int r = shim_real.dup(fd);
  if (r >= 0 && shim__may_edit(fd))
    shim_fd_dup(fd, r);
  return r;
}

SHIM_EXPORT int dup2(int fd, int fd2) {
  SHIM_NEED_RAW(dup2, (int)syscall(SYS_dup2, fd, fd2));
  int r = shim_real.dup2(fd, fd2);
  if (r >= 0 && fd != fd2) {
    if (shim__may_edit(fd2))
      shim_fd_forget(fd2); /* dup2 closed whatever fd2 was */
    if (shim__may_edit(fd))
      shim_fd_dup(fd, fd2);
  }
  return r;
}

SHIM_EXPORT int dup3(int fd, int fd2, int flags) {
  SHIM_NEED_RAW(dup3, (int)syscall(SYS_dup3, fd, fd2, flags));
  int r = shim_real.dup3(fd, fd2, flags);
  if (r >= 0) {
    if (shim__may_edit(fd2))
      shim_fd_forget(fd2);
    if (shim__may_edit(fd))
      shim_fd_dup(fd, fd2);
  }
  return r;
}

/* fcntl's third argument is an int or a pointer depending on cmd; on the x86-64/aarch64
 * ABIs both travel in the same register, so it is forwarded as a pointer-sized value. */
static int shim__fcntl(int (*real)(int, int, ...), int fd, int cmd, void *arg) {
  int r = real(fd, cmd, arg);
  if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && shim__may_edit(fd))
    shim_fd_dup(fd, r);
  return r;
}

SHIM_EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  SHIM_NEED_RAW(fcntl, (int)syscall(SYS_fcntl, fd, cmd, arg));
  return shim__fcntl(shim_real.fcntl, fd, cmd, arg);
}

SHIM_EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  SHIM_NEED_RAW(fcntl64, (int)syscall(SYS_fcntl, fd, cmd, arg));
  return shim__fcntl(shim_real.fcntl64, fd, cmd, arg);
}

/* The child-side cleanup runs from a pthread_atfork handler (shim_init.c), which also covers
 * forks that do not come through this symbol; the hook only makes sure we are initialised
 * (so the handler is registered) before the first fork. */
SHIM_EXPORT pid_t fork(void) {
  SHIM_NEED(fork, -1);
  return shim_real.fork();
}

/* ---- socket emulation --------------------------------------------------------------------- */

SHIM_EXPORT int getpeername(int fd, struct sockaddr *sa, socklen_t *len) {
  SHIM_NEED_RAW(getpeername, (int)syscall(SYS_getpeername, fd, sa, len));
  if (shim_active() && shim_fd_state(fd) == SHIM_FD_TAKEN)
    return shim_emu_getpeername(fd, sa, len, 1);
  return shim_real.getpeername(fd, sa, len);
}

SHIM_EXPORT int getsockname(int fd, struct sockaddr *sa, socklen_t *len) {
  SHIM_NEED_RAW(getsockname, (int)syscall(SYS_getsockname, fd, sa, len));
  if (shim_active() && shim_fd_state(fd) == SHIM_FD_TAKEN)
    return shim_emu_getpeername(fd, sa, len, 0);
  return shim_real.getsockname(fd, sa, len);
}

SHIM_EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len) {
  SHIM_NEED_RAW(getsockopt, (int)syscall(SYS_getsockopt, fd, level, name, val, len));
  if (shim_active() && shim_fd_state(fd) == SHIM_FD_TAKEN)
    return shim_emu_getsockopt(fd, level, name, val, len);
  return shim_real.getsockopt(fd, level, name, val, len);
}

SHIM_EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len) {
  SHIM_NEED_RAW(setsockopt, (int)syscall(SYS_setsockopt, fd, level, name, val, len));
  if (shim_active() && shim_fd_state(fd) == SHIM_FD_TAKEN)
    return shim_emu_setsockopt(fd, level, name, val, len);
  return shim_real.setsockopt(fd, level, name, val, len);
}

SHIM_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev) {
  SHIM_NEED_RAW(epoll_ctl, (int)syscall(SYS_epoll_ctl, epfd, op, fd, ev));
  int r = shim_real.epoll_ctl(epfd, op, fd, ev);
  if (r == 0 && shim_active() && (ev || op == EPOLL_CTL_DEL))
    shim_fd_epoll(epfd, op, fd, ev);
  return r;
}

/* ---- name resolution: recorded, never altered ---------------------------------------------
 * The real call answers; only then, on success, the answer is copied into bounded static
 * storage and a non-blocking note goes to the engine (multiDNS harvests the name on the other
 * interfaces from its own loop). The program's answer, errno and h_errno are untouched. */

SHIM_EXPORT int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                            struct addrinfo **res) {
  if (!shim_real.getaddrinfo) {
    shim_init();
    if (!shim_real.getaddrinfo)
      return EAI_SYSTEM;
  }
  int rc = shim_real.getaddrinfo(node, service, hints, res);
  if (rc == 0 && node && res && shim_active()) {
    struct sockaddr_storage a[8];
    shim_dns_record(node, a, mdns_answer_from_addrinfo(*res, a, 8));
  }
  return rc;
}

SHIM_EXPORT void freeaddrinfo(struct addrinfo *ai) {
  if (!shim_real.freeaddrinfo)
    shim_init();
  if (shim_real.freeaddrinfo)
    shim_real.freeaddrinfo(ai);
}

static void shim__note_hostent(const char *name, const struct hostent *he) {
  struct sockaddr_storage a[8];
  if (name && he && shim_active())
    shim_dns_record(name, a, mdns_answer_from_hostent(he, a, 8));
}

/* A missing symbol answers like a resolver that cannot work at all. */
#define SHIM_NEED_RESOLVER(name, failval) \
  do {                                    \
    if (!shim_real.name) {                \
      shim_init();                        \
      if (!shim_real.name) {              \
        h_errno = NO_RECOVERY;            \
        return failval;                   \
      }                                   \
    }                                     \
  } while (0)

SHIM_EXPORT struct hostent *gethostbyname(const char *name) {
  SHIM_NEED_RESOLVER(gethostbyname, NULL);
  struct hostent *he = shim_real.gethostbyname(name);
  shim__note_hostent(name, he);
  return he;
}

SHIM_EXPORT struct hostent *gethostbyname2(const char *name, int af) {
  SHIM_NEED_RESOLVER(gethostbyname2, NULL);
  struct hostent *he = shim_real.gethostbyname2(name, af);
  shim__note_hostent(name, he);
  return he;
}

/* A missing _r symbol answers "no result", as a resolver that cannot work at all. */
static int shim__r_unavailable(struct hostent **result, int *h_errnop) {
  if (result)
    *result = NULL;
  if (h_errnop)
    *h_errnop = NO_RECOVERY;
  return ENOSYS;
}

static int shim__r_done(int rc, const char *name, struct hostent **result) {
  if (rc == 0 && result)
    shim__note_hostent(name, *result);
  return rc;
}

SHIM_EXPORT int gethostbyname_r(const char *name, struct hostent *ret, char *buf, size_t buflen,
                                struct hostent **result, int *h_errnop) {
  if (!shim_real.gethostbyname_r)
    shim_init();
  if (!shim_real.gethostbyname_r)
    return shim__r_unavailable(result, h_errnop);
  return shim__r_done(shim_real.gethostbyname_r(name, ret, buf, buflen, result, h_errnop), name, result);
}

SHIM_EXPORT int gethostbyname2_r(const char *name, int af, struct hostent *ret, char *buf, size_t buflen,
                                 struct hostent **result, int *h_errnop) {
  if (!shim_real.gethostbyname2_r)
    shim_init();
  if (!shim_real.gethostbyname2_r)
    return shim__r_unavailable(result, h_errnop);
  return shim__r_done(shim_real.gethostbyname2_r(name, af, ret, buf, buflen, result, h_errnop), name, result);
}
