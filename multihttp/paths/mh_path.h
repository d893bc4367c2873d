/* Paths of the multi-homed host: configured interfaces with their source addresses, and the pool of idle keep-alive upstream connections per (interface, address, port, transport), shared by the Hosts on that address. */
#ifndef MH_PATH_H
#define MH_PATH_H
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "mh_upstream.h"

#define MH_MAX_IFACES 8

/* One usable interface: up, with carrier, with a global address of the wanted family. */
struct mh_iface {
  char name[16];
  struct sockaddr_storage addr; /* its source address (port 0) */
};

struct mh_config;
struct mh_upstream_env;

/* Fills out with the interfaces of `family` in preference order: cfg->ifaces when set (names
 * not up or without such an address are skipped), else every up interface with a global
 * address in the kernel's order. Returns how many (0..max) or -errno. Any thread. */
int mh_path_ifaces(const struct mh_config *cfg, int family, struct mh_iface *out, int max);

/* What became of one interface of a split's table at a refresh (mh_path_refresh). */
enum mh_path_event {
  MH_PATH_SAME,   /* unchanged (up, or still gone) */
  MH_PATH_GONE,   /* was up, is no longer in the kernel's table (down, no carrier, no address) */
  MH_PATH_BACK,   /* was gone, is back (maybe with another address) */
  MH_PATH_READDR, /* up, but its address changed: connections from the old one are dead */
  MH_PATH_NEW,    /* appeared: appended to the table */
};
/* Pure: brings table cur (n entries; bit i of *down: cur[i] is gone) up to the kernel's now (m
 * entries, as mh_path_ifaces gives them). Entries keep their index (a split's legs, stats and
 * metrics name interfaces by it): ev[i] says what became of cur[i], whose address takes the new
 * one on BACK and READDR; an interface of now that cur lacks is appended (up to max, ev NEW).
 * *down is updated. Returns the new count. */
int mh_path_refresh(struct mh_iface *cur, int n, int max, uint32_t *down, const struct mh_iface *now, int m,
                    enum mh_path_event *ev);
const char *mh_path_event_str(enum mh_path_event ev);

/* 1 when interface ifname is up with carrier and still holds address a (port ignored): a
 * connection from it still has a way back, though the interface's first address (its
 * mh_iface) may be another now (a second address, IPv6 privacy addresses). Any thread. */
int mh_path_has_addr(const char *ifname, const struct sockaddr *a);

/* Index in v of the interface owning local address `local`, or -1. */
int mh_path_iface_of(const struct mh_iface *v, int n, const struct sockaddr *local);

/* 1 when two socket addresses name the same address and port. */
int mh_path_same_addr(const struct sockaddr *a, const struct sockaddr *b);
/* Formats "10.0.0.1" / "fd00::1" into buf (port omitted). */
const char *mh_path_ntop(const struct sockaddr *sa, char *buf, size_t len);

/* An engine's pool of idle keep-alive connections (loop thread). 0 or -ENOMEM. */
struct mh_pool;
int mh_pool_new(struct mh_pool **out);
/* Closes every pooled connection (the engine is stopping). Loop thread. */
void mh_pool_close_all(struct mh_pool *pool);
/* Frees the pool, which must be empty (mh_pool_close_all) or abandoned with its loop. */
void mh_pool_free(struct mh_pool *pool);

/* Every pooled connection is keyed by its transport too (xport): "" for plain TCP, else
 * mh_pool_xport_key's string for its struct mh_tls (host, port, CA file, insecure), so a plain
 * connection never carries a TLS transfer's request, nor one host's TLS connection (its
 * certificate was checked for that name) another's. */
#define MH_POOL_XPORT_MAX 320
/* Pure: the transport key of tls (NULL: plain, "") into buf. 0 or -ENAMETOOLONG. */
int mh_pool_xport_key(const struct mh_tls *tls, char *buf, size_t cap);
/* Pure: 1 when an entry of transport ent_xport may serve a request over xport (equal keys). */
int mh_pool_same_xport(const char *ent_xport, const char *xport);

/* mh_pool_put takes ownership of an idle
 * upstream whose last response ended cleanly; it is closed when the server closes it, after
 * 30 s, or when the pool (16 entries) needs room. mh_pool_take returns one for the same
 * (interface, address, port) with on_event/owner set to the caller's, or NULL: plain HTTP, so
 * a connection that served one Host may carry another's request when both resolved to that
 * address (RFC 7540 §9.1.1). Callers only ever pass an address that a DNS answer for host
 * named (the program's own connection, or multiDNS on that interface). used_us: when its last
 * response byte arrived (CLOCK_MONOTONIC), which is how warm its window is; 0 if it never
 * carried one. */
void mh_pool_put(struct mh_pool *pool, struct mh_upstream *up, const char *ifname, const struct sockaddr *dst,
                 const char *xport, const char *host, uint64_t used_us);
/* Takes ownership of a connection whose handshake (begun at t_start_us, CLOCK_MONOTONIC) is in
 * flight and which never carried a request: parked as a pre-connected entry (any Host). */
void mh_pool_put_connecting(struct mh_pool *pool, struct mh_upstream *up, const char *ifname,
                            const struct sockaddr *dst, const char *xport, uint64_t t_start_us);
/* What the taker of a pooled connection must know (mh_pool_take's how, may be NULL). */
struct mh_pool_taken {
  int connecting;        /* a pre-connect whose handshake is in flight: wait for writable */
  uint64_t t_start_us;   /* pre-connect: when its connect() began (CLOCK_MONOTONIC), else 0 */
  uint64_t handshake_us; /* pre-connect already established: its handshake time, else 0 */
  uint64_t used_us;      /* CLOCK_MONOTONIC µs of its last response's end; 0 = never used */
};
/* Order among the entries on (interface, address, port): a connected one before one still
 * connecting, then one that served this Host, then the warmest (latest last response; a
 * pre-connect that never carried a request is the coldest). */
struct mh_upstream *mh_pool_take(struct mh_pool *pool, const char *ifname, const struct sockaddr *dst,
                                 const char *xport, const char *host, mh_upstream_event_cb on_event, void *owner,
                                 struct mh_pool_taken *how);
/* Pure matching rule of the pool for an entry with host ent_host ("" = pre-connected, never
 * carried a request) and a request for host: MH_POOL_SAME_HOST (same Host, or a pre-connect),
 * MH_POOL_OTHER_HOST (it served another Host on the same address), 0 = no match;
 * want_connected (mh_pool_has) excludes one still connecting. */
#define MH_POOL_OTHER_HOST 1
#define MH_POOL_SAME_HOST 2
int mh_pool_entry_matches(const char *ent_host, int ent_connecting, const char *host, int want_connected);
/* An entry on the wanted (interface, address, port), as mh_pool_pick sees it. */
struct mh_pool_cand {
  const char *host; /* "" = pre-connect */
  int connecting;
  uint64_t used_us; /* CLOCK_MONOTONIC µs of its last response's end; 0 = never used */
};
/* Pure: index of the candidate mh_pool_take hands out for host (order above), or -1. */
int mh_pool_pick(const struct mh_pool_cand *c, int n, const char *host, int want_connected);
/* Pure: which interfaces (indexes into ifaces) get a pre-connect to dst for a program
 * connection from local: every one but the program's own, at most max_conns - 1; none when
 * fewer than two interfaces, dst is not global (loopback, link-local), or local is on none.
 * out has room for n. Returns how many. */
int mh_preconnect_plan(const struct mh_iface *ifaces, int n, const struct sockaddr *local, const struct sockaddr *dst,
                       unsigned max_conns, int *out);
/* Opens the planned pre-connects (bound like split legs) and parks them in the pool as fresh
 * connecting entries, skipping an (interface, address) that has a pooled connection already. A failed one is
 * dropped silently; unused ones close after the pool's idle timeout. Returns how many were
 * opened. Loop thread. */
int mh_pool_preconnect(struct mh_pool *pool, uv_loop_t *loop, struct mh_upstream_env *env, const struct mh_config *cfg,
                       const struct sockaddr *dst, const struct sockaddr *local);
/* A connection's way to its server, as an owner asks for one again (mh_split_result.route):
 * the interface it leaves on ("": none the engine knows, or no Host to match a pooled one by),
 * its source and server addresses, and the Host its requests name. */
struct mh_route {
  char iface[16];
  char host[256];
  struct sockaddr_storage src, dst;
};
/* A connection on route over tls (NULL: plain TCP): an idle pooled one when there is one, else
 * a new one, still connecting (its owner sets on_event and owner, and watches for writable).
 * NULL and *err when it could not even be begun. Loop thread. */
struct mh_upstream *mh_pool_dial(struct mh_pool *pool, uv_loop_t *loop, struct mh_upstream_env *env,
                                 const struct mh_route *route, const struct mh_tls *tls, int *err);
/* Closes every pooled connection whose interface is not in ifaces (n entries, any family) or
 * whose local address is no longer its interface's: a network change (mh_netwatch) made them
 * dead, and a taker would wait for a timeout to learn it. Returns how many. Loop thread. */
int mh_pool_prune(struct mh_pool *pool, const struct mh_iface *ifaces, int n);
/* 1 when mh_pool_take would return a connected connection for (ifname, dst, host) now (the
 * policy's "reusable": no handshake, no slow start). Loop thread. */
int mh_pool_has(struct mh_pool *pool, const char *ifname, const struct sockaddr *dst, const char *xport,
                const char *host);
/* mh_pool_has, counting a connection still connecting too. Loop thread. */
int mh_pool_holds(struct mh_pool *pool, const char *ifname, const struct sockaddr *dst, const char *xport,
                  const char *host);
/* mh_pool_has, and in *idle_us (may be NULL) the idle time in µs of the connection it would
 * hand out since its last response, UINT64_MAX for a pre-connect that never carried one (the
 * policy's idle_us: whether the server still has the window open), in *window (may be NULL)
 * its window (mh_upstream_window: the receiver's estimate of one round trip's delivery, the
 * policy's pol_path.window; 0 unknown). Loop thread. */
int mh_pool_idle(struct mh_pool *pool, const char *ifname, const struct sockaddr *dst, const char *xport,
                 const char *host, uint64_t *idle_us, uint64_t *window);

#endif
