/* Connect-time path choice, the shim's part: an unbound TCP socket of the program's is bound to the source address the engine chooses (multihttp/paths/mh_choose.c decides). */
#include "shim.h"
#include "mh_choose.h"
#include "mh_log.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

/* 1 when the program left the source to the kernel: no address, no port. */
static int shim__unbound(int fd, int family) {
  struct sockaddr_storage l;
  socklen_t ll = sizeof l;
  if (shim_real.getsockname(fd, (struct sockaddr *)&l, &ll) < 0 || l.ss_family != family)
    return 0;
  if (family == AF_INET) {
    const struct sockaddr_in *s = (const void *)&l;
    return s->sin_port == 0 && s->sin_addr.s_addr == htonl(INADDR_ANY);
  }
  const struct sockaddr_in6 *s6 = (const void *)&l;
  return s6->sin6_port == 0 && IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr);
}

/* 1 when the choice is ours to make: a complete IPv4/IPv6 destination, a TCP socket, and no
 * source the program bound itself. */
static int shim__handles(int fd, const struct sockaddr *sa, socklen_t len) {
  if (!sa || !((sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) ||
               (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))))
    return 0;
  int type = 0, proto = 0;
  socklen_t l = sizeof type;
  if (shim_real.getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_STREAM)
    return 0;
  l = sizeof proto;
  if (shim_real.getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l) < 0 || proto != IPPROTO_TCP)
    return 0;
  return shim__unbound(fd, sa->sa_family);
}

/* Remembers on fd's entry where the kernel would have put the connection when the choice bound
 * it elsewhere (kernel NULL: it was not re-bound); the engine then sends what its answers make
 * doubtful the way plain would have (multihttp/split/mh_split.c, plain_src). */
static void shim__note_plain(int fd, const struct sockaddr_storage *kernel) {
  struct shim_fd *e = kernel ? shim_fd_get(fd) : shim_fd_peek(fd);
  if (!e)
    return;
  e->plain_family = 0;
  if (kernel && kernel->ss_family == AF_INET)
    memcpy(e->plain_addr, &((const struct sockaddr_in *)kernel)->sin_addr, 4);
  else if (kernel && kernel->ss_family == AF_INET6)
    memcpy(e->plain_addr, &((const struct sockaddr_in6 *)kernel)->sin6_addr, 16);
  else
    return;
  e->plain_family = (uint8_t)kernel->ss_family;
}

int shim_bind_choose(int fd, const struct sockaddr *sa, socklen_t len, struct sockaddr_storage *from) {
  from->ss_family = AF_UNSPEC;
  int err = errno;
  shim__note_plain(fd, NULL);
  if (!shim__handles(fd, sa, len)) {
    errno = err;
    return -1;
  }
  struct mh_engine *eng = shim_engine();
  if (!eng) {
    errno = err;
    return -1;
  }
  struct mh_choice c;
  int n = mh_choose_source(mh_engine_paths(eng), sa, len, &c);
  *from = c.kernel;
  if (c.bind.ss_family != AF_UNSPEC) {
    int one = 1;
    /* the port is picked at connect time, per destination: binding an address must not
     * reserve a port for every destination (ephemeral port exhaustion) */
    shim_real.setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    socklen_t alen = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (bind(fd, (const struct sockaddr *)&c.bind, alen) < 0) {
      mh_info("fd %d: bind to %s failed (%s): left to the kernel", fd, c.ifname, strerror(errno));
    } else {
      *from = c.bind;
      shim__note_plain(fd, &c.kernel);
    }
  }
  errno = err;
  return n;
}
