/* Keeps the program's getaddrinfo answers per host (bounded, newest wins) for the engine's later path choice; the answer itself is never altered. */
#include "shim.h"

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

void shim_dns_record(const char *host, const struct addrinfo *res) {
  if (!host || !res || strlen(host) >= sizeof shim__dns[0].host)
    return;
  struct shim__dns_entry tmp = {.when = time(NULL)};
  strcpy(tmp.host, host);
  for (const struct addrinfo *ai = res; ai && tmp.n < SHIM_DNS_ADDRS; ai = ai->ai_next) {
    if (!ai->ai_addr || ai->ai_addrlen > sizeof tmp.addr[0] ||
        (ai->ai_family != AF_INET && ai->ai_family != AF_INET6))
      continue;
    int dup = 0;
    for (int i = 0; i < tmp.n && !dup; i++)
      dup = !memcmp(&tmp.addr[i], ai->ai_addr, ai->ai_addrlen);
    if (!dup)
      memcpy(&tmp.addr[tmp.n++], ai->ai_addr, ai->ai_addrlen);
  }
  if (!tmp.n)
    return;
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
