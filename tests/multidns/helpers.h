/* Small address helpers shared by the multidns tests. */
#ifndef MHTTP_TESTS_MULTIDNS_HELPERS_H
#define MHTTP_TESTS_MULTIDNS_HELPERS_H

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "multidns/cache.h"

/* "10.0.0.1" or "2001:db8::1" to a sockaddr_storage (port 0); aborts the test on a typo. */
static inline struct sockaddr_storage t_addr(const char *s) {
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
  if (inet_pton(AF_INET, s, &s4->sin_addr) == 1) {
    s4->sin_family = AF_INET;
  } else if (inet_pton(AF_INET6, s, &s6->sin6_addr) == 1) {
    s6->sin6_family = AF_INET6;
  } else {
    fprintf(stderr, "bad test address %s\n", s);
    abort();
  }
  return ss;
}

static inline struct mdns_rr t_rr(const char *s, uint32_t ttl) {
  struct mdns_rr r;
  r.addr = t_addr(s);
  r.ttl_s = ttl;
  return r;
}

/* Address text without port, into a static rotating buffer (fine for assertions). */
static inline const char *t_str(const struct sockaddr_storage *ss) {
  static char buf[8][INET6_ADDRSTRLEN];
  static int k;
  char *b = buf[k++ % 8];
  if (ss->ss_family == AF_INET)
    inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, b, INET6_ADDRSTRLEN);
  else if (ss->ss_family == AF_INET6)
    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, b, INET6_ADDRSTRLEN);
  else
    snprintf(b, INET6_ADDRSTRLEN, "family %d", ss->ss_family);
  return b;
}

#endif
