/* Hands the program's resolver answers to the engine's one DNS store (mh_dns_note: multiDNS and the split's replicas), and the resolvers' socket calls; the answer itself is never altered. */
#include "shim.h"
#include "mh_fdgate.h"
#include "mh_dns.h"
#include "multidns/mdns.h"

#include <errno.h>

void shim_dns_record(const char *host, const struct sockaddr_storage *addrs, size_t n) {
  int err = errno;
  struct mh_engine *eng = shim_engine();
  if (eng)
    mh_dns_note(mh_engine_dns(eng), host, addrs, n);
  errno = err;
}

/* ---- the resolvers' sockets ---------------------------------------------------------------- */

/* socket() and bind() are not interposed, so libc's are the real ones. */
static int shim__dns_socket(int domain, int type, int protocol) {
  mh_fdgate(1);
  int fd = socket(domain, type, protocol);
  if (fd >= 0)
    shim_fd_mark_engine(fd); /* a forked child closes it; the program cannot close it */
  mh_fdgate(0);
  return fd;
}

static int shim__dns_close(int fd) { return shim_forget_close(fd); }

static int shim__dns_connect(int fd, const struct sockaddr *sa, socklen_t len) {
  return shim_real.connect(fd, sa, len);
}
static int shim__dns_setsockopt(int fd, int level, int name, const void *val, socklen_t len) {
  return shim_real.setsockopt(fd, level, name, val, len);
}
static ssize_t shim__dns_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *sa, socklen_t *salen) {
  return shim_real.recvfrom(fd, buf, len, flags, sa, salen);
}
static ssize_t shim__dns_sendmsg(int fd, const struct msghdr *msg, int flags) {
  return shim_real.sendmsg(fd, msg, flags);
}

/* Wrappers rather than the table's pointers: the table is filled after this initialiser. */
const struct mdns_sockfns shim_dns_sockfns = {
    .socket = shim__dns_socket,
    .close = shim__dns_close,
    .connect = shim__dns_connect,
    .bind = NULL,
    .setsockopt = shim__dns_setsockopt,
    .recvfrom = shim__dns_recvfrom,
    .sendmsg = shim__dns_sendmsg,
};
