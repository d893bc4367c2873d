/* Turning resolver answers (the program's addrinfo/hostent, a harvest query's DNS message) into address arrays. */
#include "multidns/answer.h"

#include <ares.h>
#include <netinet/in.h>
#include <string.h>

static size_t mdns__append(struct sockaddr_storage *out, size_t n, size_t max, const struct sockaddr_storage *ss) {
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

static uint32_t mdns__ttl(int ttl, uint32_t min_ttl_s, uint32_t max_ttl_s) {
  uint32_t t = ttl < 0 ? 0 : (uint32_t)ttl; /* RFC 2181 §8: a TTL with the top bit set is zero */
  if (t > max_ttl_s)
    t = max_ttl_s;
  return t < min_ttl_s ? min_ttl_s : t;
}

int mdns_answer_from_dns(const unsigned char *abuf, int alen, int family, uint32_t min_ttl_s, uint32_t max_ttl_s,
                         struct mdns_rr rrs[MDNS_ADDRS_MAX], size_t *n) {
  int parsed;
  *n = 0;
  if (family == AF_INET) {
    struct ares_addrttl at[MDNS_ADDRS_MAX];
    int na = MDNS_ADDRS_MAX;
    parsed = ares_parse_a_reply(abuf, alen, NULL, at, &na);
    for (int i = 0; parsed == ARES_SUCCESS && i < na; i++, (*n)++) {
      struct sockaddr_in *s4 = (struct sockaddr_in *)&rrs[*n].addr;
      memset(&rrs[*n], 0, sizeof rrs[*n]);
      s4->sin_family = AF_INET;
      s4->sin_addr = at[i].ipaddr;
      rrs[*n].ttl_s = mdns__ttl(at[i].ttl, min_ttl_s, max_ttl_s);
    }
  } else {
    struct ares_addr6ttl at[MDNS_ADDRS_MAX];
    int na = MDNS_ADDRS_MAX;
    parsed = ares_parse_aaaa_reply(abuf, alen, NULL, at, &na);
    for (int i = 0; parsed == ARES_SUCCESS && i < na; i++, (*n)++) {
      struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&rrs[*n].addr;
      memset(&rrs[*n], 0, sizeof rrs[*n]);
      s6->sin6_family = AF_INET6;
      memcpy(&s6->sin6_addr, &at[i].ip6addr, sizeof s6->sin6_addr);
      rrs[*n].ttl_s = mdns__ttl(at[i].ttl, min_ttl_s, max_ttl_s);
    }
  }
  return parsed;
}
