/* Turning the program's own resolver answers (addrinfo, hostent) into address arrays for mdns_note_program. */
#include "multidns/answer.h"

#include <netinet/in.h>
#include <string.h>

#include "multidns/cache.h"

static size_t mdns__append(struct sockaddr_storage *out, size_t n, size_t max,
                           const struct sockaddr_storage *ss) {
  if (n >= max)
    return n;
  for (size_t i = 0; i < n; i++)
    if (mdns_cache_same_addr((const struct sockaddr *)&out[i], (const struct sockaddr *)ss))
      return n;
  out[n] = *ss;
  return n + 1;
}

size_t mdns_answer_from_addrinfo(const struct addrinfo *res, struct sockaddr_storage *out, size_t max) {
  size_t n = 0;
  for (const struct addrinfo *ai = res; ai && n < max; ai = ai->ai_next) {
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    if (!ai->ai_addr)
      continue;
    if (ai->ai_family == AF_INET && ai->ai_addrlen >= sizeof(struct sockaddr_in)) {
      memcpy(&ss, ai->ai_addr, sizeof(struct sockaddr_in));
      ((struct sockaddr_in *)&ss)->sin_port = 0;
    } else if (ai->ai_family == AF_INET6 && ai->ai_addrlen >= sizeof(struct sockaddr_in6)) {
      memcpy(&ss, ai->ai_addr, sizeof(struct sockaddr_in6));
      ((struct sockaddr_in6 *)&ss)->sin6_port = 0;
    } else {
      continue;
    }
    n = mdns__append(out, n, max, &ss);
  }
  return n;
}

size_t mdns_answer_from_hostent(const struct hostent *he, struct sockaddr_storage *out, size_t max) {
  size_t n = 0;
  if (!he || !he->h_addr_list)
    return 0;
  for (char *const *a = he->h_addr_list; *a && n < max; a++) {
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    if (he->h_addrtype == AF_INET && he->h_length == 4) {
      ((struct sockaddr_in *)&ss)->sin_family = AF_INET;
      memcpy(&((struct sockaddr_in *)&ss)->sin_addr, *a, 4);
    } else if (he->h_addrtype == AF_INET6 && he->h_length == 16) {
      ((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
      memcpy(&((struct sockaddr_in6 *)&ss)->sin6_addr, *a, 16);
    } else {
      return 0;
    }
    n = mdns__append(out, n, max, &ss);
  }
  return n;
}
