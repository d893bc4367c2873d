/* Turning resolver answers (the program's addrinfo/hostent, a harvest query's DNS message) into address arrays. */
#ifndef MHTTP_MULTIDNS_ANSWER_H
#define MHTTP_MULTIDNS_ANSWER_H

#include <netdb.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "multidns/cache.h"

/* Pure and thread-safe: the shim calls these on the program's thread, right after the real
 * getaddrinfo/gethostbyname* returned, to copy the answer into its message to the engine
 * (the program keeps ownership of `res`/`he` and may free it as soon as this returns). */

/* Copies the AF_INET/AF_INET6 addresses of a getaddrinfo() result, in its order, skipping
 * repeats (getaddrinfo lists one entry per socket type: TCP, UDP, raw). Ports are zeroed.
 * Returns the number written to out[0..max-1]. `res` may be NULL (0). */
size_t mdns_answer_from_addrinfo(const struct addrinfo *res, struct sockaddr_storage *out, size_t max);

/* The same for a gethostbyname*() / gethostbyname2() result (h_addrtype AF_INET or AF_INET6,
 * h_addr_list NULL-terminated). Returns the number written. `he` may be NULL (0). */
size_t mdns_answer_from_hostent(const struct hostent *he, struct sockaddr_storage *out, size_t max);

/* Turns the raw DNS message of an A (family AF_INET) or AAAA (AF_INET6) query into at most
 * MDNS_ADDRS_MAX records for mdns_cache_put: c-ares parses the wire format, TTLs are kept
 * within [min_ttl_s, max_ttl_s] and a TTL with the top bit set counts as 0 (RFC 2181 §8).
 * The floor exists for TTL-0 answers (common on CDNs that steer per query): stored already
 * expired, the harvest's answer would never serve the split, which asks for replicas only once
 * the probe's answer is in; a couple of seconds covers that gap and never serves it long after. Returns the c-ares
 * status (ARES_SUCCESS, ARES_ENODATA, ARES_EBADRESP...); *n is the number of records written
 * (0 unless ARES_SUCCESS). Pure: the resolver's query callback and the fuzz target call it. */
int mdns_answer_from_dns(const unsigned char *abuf, int alen, int family, uint32_t min_ttl_s, uint32_t max_ttl_s,
                         struct mdns_rr rrs[MDNS_ADDRS_MAX], size_t *n);

#endif
