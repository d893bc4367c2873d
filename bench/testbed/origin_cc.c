/* Preloaded into the testbed's MPTCP origins: each listening socket gets the congestion control MHTTP_TESTBED_CC names, as the plain origins get theirs from their route (congctl). */
/*
 * Why a preload: an MPTCP connection's subflows run the connection's algorithm, which starts
 * as the namespace's default (the host's: namespaces inherit it), and a join subflow is moved
 * to it even when its route says otherwise. The default cannot be set per namespace to an
 * algorithm outside the host's allowed list, and nginx has no directive for it; a root
 * process may set any available algorithm on its own socket (TCP_CONGESTION, which an MPTCP
 * socket passes on to every subflow, and an accepted connection inherits from its listener).
 */
#ifndef _GNU_SOURCE /* RTLD_NEXT; the project's flags define it */
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*listen_fn)(int, int);

/* exported: the project builds with -fvisibility=hidden, and a hidden listen interposes nothing */
__attribute__((visibility("default"))) int listen(int fd, int backlog) {
  static listen_fn real;
  if (!real)
    real = (listen_fn)dlsym(RTLD_NEXT, "listen");
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  const char *cc = getenv("MHTTP_TESTBED_CC");
  int type = 0;
  socklen_t len = sizeof type;
  /* a UNIX or UDP socket has no congestion control: only stream sockets of the inet families */
  if (cc && *cc && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM &&
      setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) != 0 && errno != EOPNOTSUPP &&
      errno != ENOPROTOOPT) {
    /* the origin would run another algorithm than the testbed says: refuse to serve */
    fprintf(stderr, "origin_cc: TCP_CONGESTION %s on fd %d: %s\n", cc, fd, strerror(errno));
    return -1;
  }
  return real(fd, backlog);
}
