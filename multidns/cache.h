/* The multiDNS harvest cache: addresses per (interface, host) with DNS TTLs, and the reverse map. */
#ifndef MHTTP_MULTIDNS_CACHE_H
#define MHTTP_MULTIDNS_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Pure module: no I/O, no clock, no threads of its own. Every call takes the current time
 * (`now_us`, any monotonic microsecond clock) as an argument so tests replay exact traces.
 * A cache is used from one thread at a time (the engine loop); it has no locks.
 *
 * Interfaces are small integers (the position in the engine's interface list, 0..63), not
 * kernel ifindexes. An address learned on interface X is only ever returned for X: CDNs map
 * clients per network (socket-intents §V-E2), so an address from another network may be far
 * away or unreachable from X. */

#define MDNS_HOST_MAX 256 /* a DNS name is at most 253 characters; + NUL, rounded */
#define MDNS_ADDRS_MAX 16 /* addresses kept per (interface, host, source, family) */
#define MDNS_IFACES_MAX 64

/* Where an address came from; this is also the merge order (the program's own answer first). */
enum mdns_src {
  MDNS_SRC_PROGRAM = 0, /* the program's getaddrinfo/gethostbyname answer (no TTL known) */
  MDNS_SRC_HARVEST = 1, /* an answer from this interface's own resolver (TTL known) */
};

/* One resource record's address. Only the family and address bytes (and the IPv6 scope) are
 * significant; ports are ignored on input and zero on output. IPv4-mapped IPv6 addresses
 * (::ffff:a.b.c.d) are the IPv4 address everywhere in the cache (stored, compared, looked up). */
struct mdns_rr {
  struct sockaddr_storage addr;
  uint32_t ttl_s; /* 0 means "do not cache" (RFC 1035 §3.2.1): the address is never returned */
};

struct mdns_cache;

/* Creates a cache holding at most `max_entries` (interface, host) entries; when full, the least
 * recently used entry goes, preferring one whose addresses have all expired.
 * The caller owns *out and frees it with mdns_cache_free(). Returns 0, -EINVAL or -ENOMEM. */
int mdns_cache_new(size_t max_entries, struct mdns_cache **out);

/* Frees the cache and everything in it. NULL is accepted. */
void mdns_cache_free(struct mdns_cache *c);

/* Normalises a host name for use as a key: lowercase, one trailing dot dropped. Writes at most
 * MDNS_HOST_MAX bytes to `out`. Returns 0, or -EINVAL for an empty or over-long name. */
int mdns_cache_host_key(const char *host, char out[MDNS_HOST_MAX]);

/* Replaces the addresses of `family` that `src` gave for (iface, host): a DNS answer replaces
 * the whole RRset, it does not add to it. `family` is AF_INET or AF_INET6 for a harvest
 * answer, AF_UNSPEC for the program's answer (both families at once). Records whose family
 * differs from `family` (when not AF_UNSPEC) are ignored; duplicates are dropped; at most
 * MDNS_ADDRS_MAX are kept, in the given order.
 *
 * For MDNS_SRC_HARVEST the call also records that this family has been answered: the answer
 * is fresh until now + the smallest TTL, or now + `neg_ttl_s` when `n` is 0 (NODATA or
 * NXDOMAIN), so mdns_cache_fresh() stops asking again until then.
 *
 * Returns the number of addresses that were not already cached (fresh) for (iface, host)
 * from any source (> 0 means "new addresses learned"), or -EINVAL / -ENOMEM. The call may
 * evict another entry to make room. */
int mdns_cache_put(struct mdns_cache *c, int iface, const char *host, enum mdns_src src, int family,
                   const struct mdns_rr *rrs, size_t n, uint32_t neg_ttl_s, uint64_t now_us);

/* Whether interface `iface` has a fresh harvest answer for `family` (AF_INET or AF_INET6)
 * of `host`, positive or negative. Returns 1 or 0 (0 for invalid arguments too). */
int mdns_cache_fresh(const struct mdns_cache *c, int iface, const char *host, int family, uint64_t now_us);

/* Copies the unexpired addresses of (iface, host) to out[0..max-1] in merge order: the
 * program's own answer first (in its order), then the harvested IPv6 then IPv4 addresses in
 * resolver order (RFC 6724 prefers IPv6), without duplicates. An address expires at exactly
 * learned + TTL: at that instant it is no longer returned. Ports are zero.
 * Marks the entry recently used. Returns the number of addresses copied (0 if none). */
size_t mdns_cache_get(struct mdns_cache *c, int iface, const char *host, uint64_t now_us, struct sockaddr_storage *out,
                      size_t max);

/* The reverse map: finds the host an address was learned for. When several entries hold the
 * address (virtual hosting, several interfaces), an unexpired one beats an expired one and
 * then the most recently learned wins. Expired addresses still answer here until their entry
 * is evicted or replaced, because programs keep using addresses past their TTL.
 * Writes the host (NUL-terminated) and, if `iface` is not NULL, the interface it was learned
 * on. Returns 0, -ENOENT (unknown address), -ENOSPC (`len` too small) or -EINVAL. */
int mdns_cache_host_of(const struct mdns_cache *c, const struct sockaddr *sa, uint64_t now_us, char *host, size_t len,
                       int *iface);

/* Number of entries currently held (for tests and statistics). */
size_t mdns_cache_size(const struct mdns_cache *c);

/* Whether two socket addresses name the same host address (family, bytes, IPv6 scope);
 * ports are ignored. Returns 1 or 0. */
int mdns_cache_same_addr(const struct sockaddr *a, const struct sockaddr *b);

#endif
