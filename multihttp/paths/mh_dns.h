/* The engine's one DNS store: the program's lookups (noted from any thread, its answers kept per host) and the per-interface resolvers (multiDNS) on the loop; range splitting asks both per interface. */
#ifndef MH_DNS_H
#define MH_DNS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "mh_path.h"
#include "multidns/mdns.h"

#define MH_DNS_HOST_MAX 256
#define MH_DNS_NOTE_ADDRS 8
#define MH_DNS_QUEUE 64
#define MH_DNS_PROGRAM_HOSTS 64 /* hosts whose program answer is kept (mh_dns_program_addrs) */

/* ---- pure parts (no locks, clock or I/O: callers serialise and pass the time) ------------ */

/* One lookup the program made: the name and its own answer (ports zero), and when (us, the
 * loop's monotonic clock, so its age can be judged on the loop). */
struct mh_dns_note {
  uint64_t t_us;
  char host[MH_DNS_HOST_MAX];
  int n;
  struct sockaddr_storage addr[MH_DNS_NOTE_ADDRS];
};

/* Bounded ring of notes. When full the OLDEST note goes: the lookups that matter are the
 * newest (the program connects right after resolving), and the program never waits. */
struct mh_dns_ring {
  struct mh_dns_note v[MH_DNS_QUEUE];
  unsigned head, len;
  unsigned long dropped;
};
/* 0 queued, 1 queued after dropping the oldest, -EINVAL (NULL/empty/over-long host, or no
 * addresses: a failed lookup teaches nothing). At most MH_DNS_NOTE_ADDRS addresses are kept. */
int mh_dns_ring_push(struct mh_dns_ring *r, const char *host, const struct sockaddr_storage *a, size_t n,
                     uint64_t t_us);
/* Moves the oldest note to *out: 1, or 0 when empty. */
int mh_dns_ring_pop(struct mh_dns_ring *r, struct mh_dns_note *out);

/* The resolvers' interface list from the split's per-family lists (mh_path_ifaces): every
 * IPv4 interface in order, then the IPv6-only ones, one entry per name, with the source
 * address the split uses there (so queries and legs leave the same way). Names point into
 * v4/v6. Returns the number of entries (<= max). */
int mh_dns_iface_list(const struct mh_iface *v4, int n4, const struct mh_iface *v6, int n6,
                      struct mdns_iface_config *out, int max);

/* Addresses one interface may open legs to for the program's server dst: those of dst's
 * family, with dst's port, without dst itself and without repeats, in the given order.
 * Returns how many were written to out (<= max). */
int mh_dns_select(const struct sockaddr_storage *in, int n, const struct sockaddr *dst, struct sockaddr_storage *out,
                  int max);

/* ---- the engine side ---------------------------------------------------------------------- */

struct mh_config;
struct mh_dns;

/* One engine's multiDNS: the queue of the program's lookups and the resolvers on loop (made
 * on first need). poke(poke_arg) wakes the engine's loop after a note (NULL: nobody to wake).
 * cfg and sock (the resolvers' socket calls, NULL = libc) must outlive it. 0 or -ENOMEM. */
int mh_dns_new(uv_loop_t *loop, const struct mh_config *cfg, const struct mdns_sockfns *sock, void (*poke)(void *),
               void *poke_arg, struct mh_dns **out);
/* Frees d; its resolvers must be closed (mh_dns_close, then the loop ran) or abandoned with
 * their loop (a fork child). NULL: no-op. */
void mh_dns_free(struct mh_dns *d);

/* Any thread (the shim calls it on the program's thread right after the real
 * getaddrinfo/gethostbyname* returned): queues (host, the program's answer) for the loop.
 * Never blocks beyond a short critical section, never allocates, never starts the engine:
 * notes wait in the ring until the engine runs (it starts on the first taken-over
 * connection), so a program that only resolves names sees no thread and no extra query.
 * Preserves errno. */
void mh_dns_note(struct mh_dns *d, const char *host, const struct sockaddr_storage *addrs, size_t n);

/* Loop thread, every wake: takes the queued notes, creates the resolvers on first need, records
 * each program answer on the primary interface and harvests the name on the others. */
void mh_dns_run(struct mh_dns *d);

/* Loop thread. The program's own answer for host (its resolver's, noted by mh_dns_note), up to
 * max addresses into out: how many, 0 when it never resolved host. The last answer of each of
 * the MH_DNS_PROGRAM_HOSTS newest hosts is kept, with or without multiDNS, for as long as the
 * engine lives (the program resolved once; its connections may come much later). */
int mh_dns_program_addrs(struct mh_dns *d, const char *host, struct sockaddr_storage *out, int max);

/* Loop thread. Addresses learned for host through interface `ifname` (harvested there; on the
 * primary also the program's own answer), in multiDNS merge order, ports zero. 0 when
 * unknown, when ifname is not one of the resolvers' interfaces, or when multiDNS is off. */
int mh_dns_addrs(struct mh_dns *d, const char *host, const char *ifname, struct sockaddr_storage *out, int max);

/* Loop thread. 1 while `ifname`'s resolver has a harvest in flight and is not known to be
 * failing (an answer is likely to come soon), else 0. */
int mh_dns_waiting(struct mh_dns *d, const char *ifname);

/* Loop thread. A Host header value ("a.test:8080") seen on a connection whose name the
 * program never resolved (a literal-IP connect): harvest it on every interface. */
void mh_dns_host_header(struct mh_dns *d, const char *value, size_t len);

/* Loop thread: closes the resolvers (asynchronously; the engine stopping, and tests). */
/* The engine's interface table changed (mh_netwatch; loop thread). Resolvers made for another
 * set of interfaces or source addresses close, and the next note or Host makes them for the
 * interfaces of then: a network that appears gets its own resolver (the only way multiDNS ever
 * starts in a long-lived engine that began with one interface), a changed address its queries
 * from the new one. Their caches go with them: what the old networks said may no longer hold. */
void mh_dns_net_changed(struct mh_dns *d);

void mh_dns_close(struct mh_dns *d);

#endif
