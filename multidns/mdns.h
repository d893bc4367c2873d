/* multiDNS: one c-ares resolver per interface on the engine's libuv loop, feeding the harvest cache. */
#ifndef MHTTP_MULTIDNS_MDNS_H
#define MHTTP_MULTIDNS_MDNS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <uv.h>

#include "multidns/cache.h"
#include "multidns/servers.h"

/* Threading: everything here runs on the loop thread of the uv_loop_t given to mdns_new()
 * (the engine thread). Nothing is thread-safe; the shim must post work to the engine
 * (uv_async) and never call these from program threads.
 *
 * Errors are 0 or -errno. Answers from the per-interface resolvers arrive later, on a later
 * loop turn, and show up in the cache (mdns_addrs) and through cfg->on_learned.
 *
 * Interfaces are numbered by their position in cfg->ifaces (the engine's interface list,
 * preference order), not by kernel ifindex. */

enum mdns_log_level { MDNS_LOG_ERROR = 0, MDNS_LOG_WARN = 1, MDNS_LOG_INFO = 2, MDNS_LOG_DEBUG = 3 };

/* The socket calls the resolvers make, with libc's signatures so the shim can pass its table
 * of real (un-interposed) symbols: c-ares sockets must never go through the shim's own hooks.
 * A NULL member means libc's function. */
struct mdns_sockfns {
  int (*socket)(int domain, int type, int protocol);
  int (*close)(int fd);
  int (*connect)(int fd, const struct sockaddr *sa, socklen_t len);
  int (*bind)(int fd, const struct sockaddr *sa, socklen_t len);
  int (*setsockopt)(int fd, int level, int name, const void *val, socklen_t len);
  ssize_t (*recvfrom)(int fd, void *buf, size_t len, int flags, struct sockaddr *sa, socklen_t *salen);
  /* called with MSG_NOSIGNAL: a DNS server closing a TCP connection must not SIGPIPE the program */
  ssize_t (*sendmsg)(int fd, const struct msghdr *msg, int flags);
};

struct mdns_iface_config {
  const char *name;                       /* kernel interface name ("wlan0"); queries are bound to it */
  unsigned ifindex;                       /* 0: looked up with if_nametoindex(name) */
  const char *dns;                        /* the config file's server list for it ("1.2.3.4,5.6.7.8"), or NULL */
  const struct mdns_server_list *servers; /* non-NULL: use exactly these, skip discovery */
  /* Source addresses for the resolver's sockets (SO_BINDTODEVICE needs CAP_NET_RAW and fails
   * silently otherwise, so the source address is what keeps queries on this network).
   * sin_family / sin6_family 0: take the interface's first global address (getifaddrs). */
  struct sockaddr_in src4;
  struct sockaddr_in6 src6;
};

struct mdns;

struct mdns_config {
  const struct mdns_iface_config *ifaces; /* copied by mdns_new; need not outlive the call */
  size_t n_ifaces;                        /* 1..MDNS_IFACES_MAX */
  int primary;                            /* where the program's own resolver answers; -1: the default-route one */
  size_t max_entries;                     /* cache bound, (interface, host) pairs; 0: 1024 */
  unsigned timeout_ms;                    /* per try, per server; 0: 2000 */
  unsigned tries;                         /* 0: 2 */
  unsigned max_inflight;                  /* queries in flight per interface; 0: 64 */
  uint32_t neg_ttl_s;                     /* how long NODATA/NXDOMAIN stops re-asking; 0: 30 */
  uint32_t max_ttl_s;                     /* TTLs are capped to this; 0: 86400 */
  /* TTLs below this (TTL 0 above all) are raised to it, so an answer serves the transfer whose
   * lookup it answered (answer.h says why); 0: 2 */
  uint32_t min_ttl_s;
  uint32_t program_ttl_s;                 /* lifetime of the program's own answer (getaddrinfo has no TTL); 0: 60 */
  const struct mdns_discovery *discovery; /* NULL: system files and secure_getenv */
  const struct mdns_sockfns *sock;        /* NULL: libc */
  /* Log hook: one line per call, no trailing newline; `level` is an mdns_log_level. NULL: silent. */
  void (*log)(int level, const char *msg, void *ud);
  /* Called on the loop thread when (iface, host) gains addresses it did not have, so range
   * splitting can add paths mid-transfer. May call mdns_addrs/mdns_harvest; NULL: none. */
  void (*on_learned)(struct mdns *m, int iface, const char *host, void *ud);
  /* Clock in microseconds; NULL: uv_hrtime()/1000. Every now_us passed in must use it. */
  uint64_t (*clock)(void *ud);
  void *ud; /* passed to log, on_learned and clock */
};

/* Creates the resolvers: discovers each interface's DNS servers (servers.h order), logs what it
 * found at MDNS_LOG_INFO, and creates one c-ares channel per interface that has servers.
 * An interface without servers simply gets no harvest. Runs on the loop thread; `loop` must
 * outlive the mdns. The caller owns *out and releases it with mdns_close().
 * Returns 0, -EINVAL (bad config, or a malformed MHTTP_DNS_<iface>/config value: the caller
 * should print the logged reason and disable itself), -ENOMEM, or -EIO (c-ares failed). */
int mdns_new(uv_loop_t *loop, const struct mdns_config *cfg, struct mdns **out);

/* Starts asynchronous A and AAAA queries for `host` on every interface except `except_iface`
 * (-1: none) whose cache has no fresh answer and no query already in flight for it. Never
 * blocks; the program's own resolution is not involved (the caller passes the primary
 * interface as `except_iface` when the program's getaddrinfo is answering there).
 * IP literals and empty names are ignored. While an interface's servers are failing, at most
 * one query is in flight there (to notice recovery) so a dead resolver costs nothing.
 * Returns the number of queries started (>= 0), -EINVAL or -ESHUTDOWN (closing). */
int mdns_harvest(struct mdns *m, const char *host, int except_iface, uint64_t now_us);

/* The same for a Host header value seen on a connection ("example.com:8080", "[::1]"): for
 * programs that connect to literal IPs without a prior lookup. The primary interface is
 * skipped when it already holds the program's answer. Returns as mdns_harvest. */
int mdns_harvest_host_header(struct mdns *m, const char *value, size_t len, uint64_t now_us);

/* Records the program's own answer (from the real getaddrinfo/gethostbyname*) for `host` on
 * the primary interface, kept for cfg->program_ttl_s. `addrs` are AF_INET/AF_INET6 socket
 * addresses (ports ignored), in the program's order. Returns the number of new addresses
 * (>= 0; on_learned fires when > 0), or -EINVAL / -ENOMEM. */
int mdns_note_program(struct mdns *m, const char *host, const struct sockaddr_storage *addrs, size_t n,
                      uint64_t now_us);

/* Addresses usable on interface `iface` for `host`, in merge order (cache.h: the program's
 * answer first on the primary, then harvested IPv6, IPv4 in resolver order, deduplicated),
 * restricted to the families the interface has a source address for. Ports are zero.
 * Returns the number written to out[0..max-1] (>= 0), or -EINVAL. */
int mdns_addrs(struct mdns *m, int iface, const char *host, uint64_t now_us, struct sockaddr_storage *out, size_t max);

/* The reverse map (cache.h mdns_cache_host_of): the host an address was learned for.
 * Returns 0, -ENOENT, -ENOSPC or -EINVAL. */
int mdns_host_of(struct mdns *m, const struct sockaddr *sa, char *host, size_t len);

/* The clock used for answers (cfg->clock, else uv_hrtime()/1000). */
uint64_t mdns_now_us(const struct mdns *m);

/* Number of interfaces that got a resolver, and whether interface `iface` currently counts as
 * failing (its servers stopped answering). For statistics and tests; loop thread. */
size_t mdns_channels(const struct mdns *m);
int mdns_failing(const struct mdns *m, int iface);
/* Queries in flight on interface `iface`, or on all interfaces when `iface` is -1. */
size_t mdns_pending(const struct mdns *m, int iface);

/* Closes asynchronously: pending queries are cancelled (no on_learned after this call), the
 * handles are closed on later loop turns, memory is freed, then cb(ud) runs on the loop
 * thread. `m` must not be used after this call. Safe to call from on_learned. */
void mdns_close(struct mdns *m, void (*cb)(void *ud), void *ud);

#endif
