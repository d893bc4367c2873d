/* Fuzz target: a raw DNS answer through mdns_answer_from_dns (c-ares's A/AAAA parser plus our TTL and family conversion) into the harvest cache. */
#include <arpa/inet.h>
#include <ares.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "fuzz.h"
#include "multidns/answer.h"
#include "multidns/cache.h"

#define MAX_TTL 86400 /* multidns's default cap (mdns.h) */

/* Input: one byte (bit 0: A or AAAA), then the DNS message as a resolver sent it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 65536)
    return 0;
  int family = data[0] & 1 ? AF_INET6 : AF_INET;
  struct mdns_rr rrs[MDNS_ADDRS_MAX];
  size_t n = 99;
  int st = mdns_answer_from_dns(data + 1, (int)(size - 1), family, 0, MAX_TTL, rrs, &n);
  FUZZ_CHECK(st == ARES_SUCCESS ? n <= MDNS_ADDRS_MAX : n == 0);
  size_t live = 0;
  for (size_t i = 0; i < n; i++) {
    FUZZ_CHECK(rrs[i].addr.ss_family == family && rrs[i].ttl_s <= MAX_TTL);
    if (family == AF_INET)
      FUZZ_CHECK(((struct sockaddr_in *)&rrs[i].addr)->sin_port == 0);
    else
      FUZZ_CHECK(((struct sockaddr_in6 *)&rrs[i].addr)->sin6_port == 0 &&
                 ((struct sockaddr_in6 *)&rrs[i].addr)->sin6_scope_id == 0);
    live += rrs[i].ttl_s > 0;
  }

  /* the cache takes what the resolver callback gives it: every address returned is one of
   * the answer's with a TTL > 0, none twice, and the reverse map leads back to the host */
  struct mdns_cache *c;
  FUZZ_CHECK(mdns_cache_new(4, &c) == 0);
  const uint64_t now = 1000000;
  int added = mdns_cache_put(c, 1, "fuzz.example", MDNS_SRC_HARVEST, family, rrs, n, 30, now);
  FUZZ_CHECK(added >= 0 && (size_t)added <= n);
  if (!n) /* NODATA: asked and answered, not asked again for neg_ttl_s */
    FUZZ_CHECK(mdns_cache_fresh(c, 1, "fuzz.example", family, now) == 1);
  struct sockaddr_storage out[MDNS_ADDRS_MAX * 2];
  size_t got = mdns_cache_get(c, 1, "fuzz.example", now, out, MDNS_ADDRS_MAX * 2);
  FUZZ_CHECK(got <= live);
  for (size_t i = 0; i < got; i++) {
    int found = 0;
    for (size_t k = 0; k < n && !found; k++)
      found = rrs[k].ttl_s > 0 && mdns_cache_same_addr((struct sockaddr *)&out[i], (struct sockaddr *)&rrs[k].addr);
    if (!found && family == AF_INET6 && out[i].ss_family == AF_INET) {
      /* an IPv4-mapped AAAA (::ffff:a.b.c.d) is its IPv4 address in the cache */
      struct sockaddr_in6 m = {.sin6_family = AF_INET6};
      m.sin6_addr.s6_addr[10] = m.sin6_addr.s6_addr[11] = 0xff;
      memcpy(&m.sin6_addr.s6_addr[12], &((struct sockaddr_in *)&out[i])->sin_addr, 4);
      for (size_t k = 0; k < n && !found; k++)
        found = rrs[k].ttl_s > 0 && !memcmp(&((struct sockaddr_in6 *)&rrs[k].addr)->sin6_addr, &m.sin6_addr, 16);
    }
    FUZZ_CHECK(found);
    for (size_t k = 0; k < i; k++)
      FUZZ_CHECK(!mdns_cache_same_addr((struct sockaddr *)&out[i], (struct sockaddr *)&out[k]));
    char host[MDNS_HOST_MAX];
    int iface = -1;
    FUZZ_CHECK(mdns_cache_host_of(c, (struct sockaddr *)&out[i], now, host, sizeof host, &iface) == 0 &&
               !strcmp(host, "fuzz.example") && iface == 1);
  }
  /* one second past the largest TTL nothing is left */
  FUZZ_CHECK(mdns_cache_get(c, 1, "fuzz.example", now + (MAX_TTL + 1) * 1000000ULL, out, MDNS_ADDRS_MAX * 2) == 0);
  mdns_cache_free(c);
  return 0;
}
