/* Keeps the program's resolver answers per host (bounded, newest wins) for the engine's later path choice, and hands the names to multiDNS; the answer itself is never altered. */
#include "shim.h"
#include "mh_fdgate.h"
#include "mh_dns.h"
#include "multidns/mdns.h"

#include <errno.h>

#include <netdb.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define SHIM_DNS_HOSTS 64
#define SHIM_DNS_ADDRS 8

struct shim__dns_entry {
  char host[256];
  time_t when;
  int n;
  struct sockaddr_storage addr[SHIM_DNS_ADDRS];
};

static pthread_mutex_t shim__dns_mu = PTHREAD_MUTEX_INITIALIZER;
static struct shim__dns_entry shim__dns[SHIM_DNS_HOSTS];
static unsigned shim__dns_next;

void shim_dns_record(const char *host, const struct sockaddr_storage *addrs, size_t n) {
  if (!host || !n || strlen(host) >= sizeof shim__dns[0].host)
    return;
  int err = errno;
  struct shim__dns_entry tmp = {.when = time(NULL)};
  strcpy(tmp.host, host);
  for (size_t i = 0; i < n && tmp.n < SHIM_DNS_ADDRS; i++)
    tmp.addr[tmp.n++] = addrs[i];
  pthread_mutex_lock(&shim__dns_mu);
  unsigned slot = shim__dns_next;
  for (unsigned i = 0; i < SHIM_DNS_HOSTS; i++)
    if (!strcmp(shim__dns[i].host, host)) {
      slot = i;
      break;
    }
  if (slot == shim__dns_next)
    shim__dns_next = (shim__dns_next + 1) % SHIM_DNS_HOSTS;
  shim__dns[slot] = tmp;
  pthread_mutex_unlock(&shim__dns_mu);
  struct mh_engine *eng = shim_engine();
  if (eng)
    mh_dns_note(mh_engine_dns(eng), host, addrs, n);
  errno = err;
}

int shim_dns_lookup(const char *host, struct sockaddr_storage *out, int max) {
  int n = 0;
  if (!host)
    return 0;
  pthread_mutex_lock(&shim__dns_mu);
  for (unsigned i = 0; i < SHIM_DNS_HOSTS; i++)
    if (shim__dns[i].n && !strcasecmp(shim__dns[i].host, host)) {
      for (; n < shim__dns[i].n && n < max; n++)
        out[n] = shim__dns[i].addr[n];
      break;
    }
  pthread_mutex_unlock(&shim__dns_mu);
  return n;
}

void shim_dns_after_fork(void) {
  /* another thread may have held the lock at fork time; it does not exist in the child */
  pthread_mutex_init(&shim__dns_mu, NULL);
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
