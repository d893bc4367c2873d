/* Interface discovery (getifaddrs, filtered by MHTTP_IFACES) and the idle-connection pool. */
#include "mh_clock.h"
#include "mh_path.h"
#include "mh_config.h"
#include "mh_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static int mh__global(const struct sockaddr *sa) {
  if (sa->sa_family == AF_INET) {
    uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
    return (a >> 24) != 127 && (a >> 16) != 0xa9fe && a != 0;
  }
  if (sa->sa_family == AF_INET6) {
    const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    return !IN6_IS_ADDR_LOOPBACK(a) && !IN6_IS_ADDR_LINKLOCAL(a) && !IN6_IS_ADDR_UNSPECIFIED(a) &&
           !IN6_IS_ADDR_MULTICAST(a);
  }
  return 0;
}

static socklen_t mh__salen(int family) {
  return family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* Appends interface `name`'s first global address of `family` unless it is listed already. */
static int mh__add(const struct ifaddrs *all, const char *name, int family, struct mh_iface *out, int n, int max) {
  if (n >= max)
    return n;
  for (int i = 0; i < n; i++)
    if (!strcmp(out[i].name, name))
      return n;
  for (const struct ifaddrs *ifa = all; ifa; ifa = ifa->ifa_next) {
    if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != family || strcmp(ifa->ifa_name, name) ||
        !(ifa->ifa_flags & IFF_UP) || !(ifa->ifa_flags & IFF_RUNNING) || /* no carrier: no path */
        (ifa->ifa_flags & IFF_LOOPBACK) || !mh__global(ifa->ifa_addr))
      continue;
    if (strlen(name) >= sizeof out[n].name)
      return n;
    memset(&out[n], 0, sizeof out[n]);
    strcpy(out[n].name, name);
    memcpy(&out[n].addr, ifa->ifa_addr, mh__salen(family));
    return n + 1;
  }
  return n;
}

int mh_path_ifaces(const struct mh_config *cfg, int family, struct mh_iface *out, int max) {
  struct ifaddrs *all;
  if (getifaddrs(&all) < 0)
    return -errno;
  int n = 0;
  if (cfg && cfg->ifaces[0]) {
    char list[sizeof cfg->ifaces];
    strcpy(list, cfg->ifaces);
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
      n = mh__add(all, tok, family, out, n, max);
  } else {
    for (const struct ifaddrs *ifa = all; ifa; ifa = ifa->ifa_next)
      if (ifa->ifa_addr && ifa->ifa_addr->sa_family == family)
        n = mh__add(all, ifa->ifa_name, family, out, n, max);
  }
  freeifaddrs(all);
  return n;
}

int mh_path_has_addr(const char *ifname, const struct sockaddr *a) {
  struct ifaddrs *all;
  if (getifaddrs(&all) < 0)
    return 1; /* cannot tell: not a reason to cut a connection */
  int found = 0;
  for (const struct ifaddrs *ifa = all; ifa && !found; ifa = ifa->ifa_next) {
    if (!ifa->ifa_addr || strcmp(ifa->ifa_name, ifname) || !(ifa->ifa_flags & IFF_UP) ||
        !(ifa->ifa_flags & IFF_RUNNING))
      continue;
    struct mh_iface f;
    memset(&f, 0, sizeof f);
    if (ifa->ifa_addr->sa_family == a->sa_family && (a->sa_family == AF_INET || a->sa_family == AF_INET6)) {
      memcpy(&f.addr, ifa->ifa_addr, mh__salen(a->sa_family));
      found = mh_path_iface_of(&f, 1, a) == 0;
    }
  }
  freeifaddrs(all);
  return found;
}

static int mh__find(const struct mh_iface *v, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(v[i].name, name))
      return i;
  return -1;
}

int mh_path_refresh(struct mh_iface *cur, int n, int max, uint32_t *down, const struct mh_iface *now, int m,
                    enum mh_path_event *ev) {
  for (int i = 0; i < n; i++) {
    int k = mh__find(now, m, cur[i].name);
    uint32_t bit = 1u << i;
    int was_down = (*down & bit) != 0;
    ev[i] = MH_PATH_SAME;
    if (k < 0) {
      if (!was_down)
        ev[i] = MH_PATH_GONE;
      *down |= bit;
      continue;
    }
    /* the port of a source address is 0 in both tables: equal addresses compare equal */
    int moved = !mh_path_same_addr((const struct sockaddr *)&cur[i].addr, (const struct sockaddr *)&now[k].addr);
    if (was_down)
      ev[i] = MH_PATH_BACK;
    else if (moved)
      ev[i] = MH_PATH_READDR;
    cur[i].addr = now[k].addr;
    *down &= ~bit;
  }
  for (int k = 0; k < m && n < max && n < 32; k++)
    if (mh__find(cur, n, now[k].name) < 0) {
      cur[n] = now[k];
      *down &= ~(1u << n);
      ev[n++] = MH_PATH_NEW;
    }
  return n;
}

const char *mh_path_event_str(enum mh_path_event ev) {
  static const char *const names[] = {"same", "gone", "back", "new address", "new"};
  return (unsigned)ev < sizeof names / sizeof *names ? names[ev] : "?";
}

int mh_path_same_addr(const struct sockaddr *a, const struct sockaddr *b) {
  if (a->sa_family != b->sa_family)
    return 0;
  if (a->sa_family == AF_INET) {
    const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
    return x->sin_addr.s_addr == y->sin_addr.s_addr && x->sin_port == y->sin_port;
  }
  if (a->sa_family == AF_INET6) {
    const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
    return !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) && x->sin6_port == y->sin6_port;
  }
  return 0;
}

int mh_path_iface_of(const struct mh_iface *v, int n, const struct sockaddr *local) {
  for (int i = 0; i < n; i++) {
    const struct sockaddr *a = (const struct sockaddr *)&v[i].addr;
    if (a->sa_family != local->sa_family)
      continue;
    if (a->sa_family == AF_INET &&
        ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)local)->sin_addr.s_addr)
      return i;
    if (a->sa_family == AF_INET6 && !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                                            &((const struct sockaddr_in6 *)local)->sin6_addr, sizeof(struct in6_addr)))
      return i;
  }
  return -1;
}

const char *mh_path_ntop(const struct sockaddr *sa, char *buf, size_t len) {
  const void *a = sa->sa_family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
                                            : (const void *)&((const struct sockaddr_in *)sa)->sin_addr;
  if (!inet_ntop(sa->sa_family, a, buf, (socklen_t)len))
    snprintf(buf, len, "?");
  return buf;
}

/* ---- pool -------------------------------------------------------------------------------- */

#define MH__POOL_MAX 16
#define MH__POOL_IDLE_S 30

/* host "" marks a pre-connected entry (mh_pool_preconnect): it never carried a request, so
 * any Host may take it. connecting: its handshake is still in flight (taken over as such). */
struct mh__pool_ent {
  struct mh_upstream *up;
  char ifname[16];
  struct sockaddr_storage dst;
  char host[256];
  char xport[MH_POOL_XPORT_MAX]; /* its transport (mh_pool_xport_key): "" plain TCP */
  time_t since;
  int connecting;
  uint64_t t_start_us;   /* pre-connect: when connect() began */
  uint64_t handshake_us; /* pre-connect: its handshake time once connected, else 0 */
  uint64_t used_us;      /* its last response byte before it was parked (its window was open
                           * then); 0 for a pre-connect, whose window is the initial one */
};

/* One engine's pool (loop thread). */
struct mh_pool {
  struct mh__pool_ent ent[MH__POOL_MAX];
};

int mh_pool_new(struct mh_pool **out) {
  *out = calloc(1, sizeof **out);
  return *out ? 0 : -ENOMEM;
}

void mh_pool_free(struct mh_pool *pool) { free(pool); }

int mh_pool_entry_matches(const char *ent_host, int ent_connecting, const char *host, int want_connected) {
  if (want_connected && ent_connecting)
    return 0;
  /* Every entry matched here goes to the same (interface, address, port), and that address
   * came from a DNS answer for host (the program's, or multiDNS's on that interface): plain
   * HTTP may carry another authority's request on it (RFC 7540 §9.1.1; HTTP/1.1 proxies do) */
  return !ent_host[0] || !strcasecmp(ent_host, host) ? MH_POOL_SAME_HOST : MH_POOL_OTHER_HOST;
}

int mh_pool_pick(const struct mh_pool_cand *c, int n, const char *host, int want_connected) {
  int best = -1, best_rank = 0;
  for (int i = 0; i < n; i++) {
    int rank = mh_pool_entry_matches(c[i].host, c[i].connecting, host, want_connected);
    if (!rank)
      continue;
    /* a pre-connect never carried a request: its "same Host" only means "any Host", and its
     * window is the initial one, so it ranks with the other Hosts' entries, by idle time */
    if (rank == MH_POOL_SAME_HOST && !c[i].host[0])
      rank = MH_POOL_OTHER_HOST;
    if (best >= 0) {
      const struct mh_pool_cand *b = &c[best];
      if (b->connecting != c[i].connecting) { /* a connected one first: no wait */
        if (c[i].connecting)
          continue;
      } else if (rank != best_rank) { /* then one that served this Host */
        if (rank < best_rank)
          continue;
      } else if (c[i].used_us <= b->used_us) { /* then the warmest: last response latest */
        continue;
      }
    }
    best = i;
    best_rank = rank;
  }
  return best;
}

static void mh__pool_drop(struct mh__pool_ent *e) {
  e->up->ops->close(e->up, 0, NULL);
  e->up = NULL;
}

void mh_pool_close_all(struct mh_pool *pool) {
  for (int i = 0; i < MH__POOL_MAX; i++)
    if (pool->ent[i].up)
      mh__pool_drop(&pool->ent[i]);
}

/* An idle connection has nothing to say: any event is the server closing it (or garbage).
 * A pre-connect's first writable event ends its handshake instead. */
static void mh__pool_event(struct mh_upstream *up, int status, int events) {
  struct mh__pool_ent *ent = ((struct mh_pool *)up->owner)->ent;
  for (int i = 0; i < MH__POOL_MAX; i++)
    if (ent[i].up == up) {
      struct mh__pool_ent *e = &ent[i];
      if (e->connecting && (events & UV_WRITABLE || status < 0)) {
        int err = mh_upstream_error(up);
        if (err < 0) { /* a failed pre-connect goes silently: the split opens its own */
          mh_dbg("pool: pre-connect on %s failed: %s", e->ifname, strerror(-err));
          mh__pool_drop(e);
          return;
        }
        e->connecting = 0;
        e->handshake_us = mh_now_us() - e->t_start_us;
        up->ops->watch(up, UV_READABLE);
        mh_dbg("pool: pre-connect on %s established in %llu us", e->ifname, (unsigned long long)e->handshake_us);
        return;
      }
      /* TLS delivers records that carry no data (a TLS 1.3 session ticket arrives after the
       * handshake): the connection is idle still when reading it gives nothing. Anything
       * else, data included, ends it. */
      char b;
      if (status == 0 && up->ops->recv(up, &b, 1) == -EAGAIN)
        return;
      mh_dbg("pool: %s connection closed by the server", ent[i].ifname);
      mh__pool_drop(&ent[i]);
      return;
    }
}

/* Parks up in a free (or the oldest) slot. connecting: a handshake in flight since t_start_us,
 * watched for its end. Returns the slot, or NULL when up was closed instead. */
static struct mh__pool_ent *mh__pool_park(struct mh_pool *pool, struct mh_upstream *up, const char *ifname,
                                          const struct sockaddr *dst, const char *xport, const char *host,
                                          int connecting, uint64_t t_start_us, uint64_t used_us) {
  struct mh__pool_ent *slot = NULL, *ent = pool->ent;
  time_t now = time(NULL);
  for (int i = 0; i < MH__POOL_MAX; i++) {
    struct mh__pool_ent *e = &ent[i];
    if (e->up && now - e->since > MH__POOL_IDLE_S)
      mh__pool_drop(e);
    if (!e->up && !slot)
      slot = e;
  }
  if (!slot) { /* full: the oldest goes */
    slot = &ent[0];
    for (int i = 1; i < MH__POOL_MAX; i++)
      if (ent[i].since < slot->since)
        slot = &ent[i];
    mh__pool_drop(slot);
  }
  if (strlen(host) >= sizeof slot->host || strlen(ifname) >= sizeof slot->ifname ||
      strlen(xport) >= sizeof slot->xport) {
    up->ops->close(up, 0, NULL);
    return NULL;
  }
  slot->up = up;
  strcpy(slot->ifname, ifname);
  strcpy(slot->host, host);
  strcpy(slot->xport, xport);
  memcpy(&slot->dst, dst, mh__salen(dst->sa_family));
  slot->since = now;
  slot->connecting = connecting;
  slot->t_start_us = t_start_us;
  slot->handshake_us = 0;
  slot->used_us = used_us;
  up->on_event = mh__pool_event;
  up->owner = pool;
  up->ops->watch(up, connecting ? UV_WRITABLE : UV_READABLE);
  mh_dbg("pool: keeps a %s%s connection for %s", connecting ? "connecting " : "", ifname, host[0] ? host : "any Host");
  return slot;
}

void mh_pool_put(struct mh_pool *pool, struct mh_upstream *up, const char *ifname, const struct sockaddr *dst,
                 const char *xport, const char *host, uint64_t used_us) {
  mh__pool_park(pool, up, ifname, dst, xport, host, 0, 0, used_us);
}

void mh_pool_put_connecting(struct mh_pool *pool, struct mh_upstream *up, const char *ifname,
                            const struct sockaddr *dst, const char *xport, uint64_t t_start_us) {
  mh__pool_park(pool, up, ifname, dst, xport, "", 1, t_start_us, 0);
}

int mh_pool_xport_key(const struct mh_tls *tls, char *buf, size_t cap) {
  if (!tls) {
    if (cap)
      buf[0] = 0;
    return cap ? 0 : -ENAMETOOLONG;
  }
  int n = snprintf(buf, cap, "tls %s:%u ca=%s%s", tls->host ? tls->host : "", tls->port,
                   tls->cafile ? tls->cafile : "-", tls->insecure ? " insecure" : "");
  if (n < 0 || (size_t)n >= cap)
    return -ENAMETOOLONG;
  for (char *c = buf + 4; *c && *c != ':'; c++) /* a host name is case-insensitive */
    if (*c >= 'A' && *c <= 'Z')
      *c = (char)(*c - 'A' + 'a');
  return 0;
}

int mh_pool_same_xport(const char *ent_xport, const char *xport) { return !strcmp(ent_xport, xport); }

/* A handshake in flight this long is not worth adopting: the taker's connect timeout counts
 * from its start (mh_split.c), and a fresh connect may fare better. */
#define MH__POOL_CONNECTING_MAX_US 2000000ULL

static int mh__pool_stale(const struct mh__pool_ent *e, time_t now) {
  return now - e->since > MH__POOL_IDLE_S ||
         (e->connecting && mh_now_us() - e->t_start_us > MH__POOL_CONNECTING_MAX_US);
}

int mh_pool_prune(struct mh_pool *pool, const struct mh_iface *ifaces, int n) {
  int dropped = 0;
  for (int i = 0; i < MH__POOL_MAX; i++) {
    struct mh__pool_ent *e = &pool->ent[i];
    if (!e->up)
      continue;
    struct sockaddr_storage local;
    int known = mh_upstream_query(e->up, MH_UPQ_LOCAL, NULL, &local) == 0;
    int k = known ? mh_path_iface_of(ifaces, n, (struct sockaddr *)&local) : -1;
    if ((k >= 0 && !strcmp(ifaces[k].name, e->ifname)) ||
        (known && mh__find(ifaces, n, e->ifname) >= 0 && mh_path_has_addr(e->ifname, (struct sockaddr *)&local)))
      continue;
    mh_dbg("pool: %s connection dropped: its interface or address is gone", e->ifname);
    mh__pool_drop(e);
    dropped++;
  }
  return dropped;
}

int mh_pool_has(struct mh_pool *pool, const char *ifname, const struct sockaddr *dst, const char *xport,
                const char *host) {
  return mh_pool_idle(pool, ifname, dst, xport, host, NULL, NULL);
}

/* The live entries on (ifname, dst, xport) as candidates for mh_pool_pick; slot[k] is candidate k's
 * entry. take drops the stale ones it meets on the way. Returns how many. */
static int mh__pool_cands(struct mh_pool *pool, const char *ifname, const struct sockaddr *dst, const char *xport,
                          int drop_stale, struct mh_pool_cand *c, struct mh__pool_ent **slot) {
  time_t now = time(NULL);
  int n = 0;
  for (int i = 0; i < MH__POOL_MAX; i++) {
    struct mh__pool_ent *e = &pool->ent[i];
    if (!e->up)
      continue;
    if (mh__pool_stale(e, now)) {
      if (drop_stale)
        mh__pool_drop(e);
      continue;
    }
    if (strcmp(e->ifname, ifname) || !mh_path_same_addr((const struct sockaddr *)&e->dst, dst) ||
        !mh_pool_same_xport(e->xport, xport))
      continue;
    c[n] = (struct mh_pool_cand){.host = e->host, .connecting = e->connecting, .used_us = e->used_us};
    slot[n++] = e;
  }
  return n;
}

int mh_pool_idle(struct mh_pool *pool, const char *ifname, const struct sockaddr *dst, const char *xport,
                 const char *host, uint64_t *idle_us, uint64_t *window) {
  struct mh_pool_cand c[MH__POOL_MAX];
  struct mh__pool_ent *slot[MH__POOL_MAX];
  int n = mh__pool_cands(pool, ifname, dst, xport, 0, c, slot);
  /* the state of the very connection mh_pool_take would hand out, so the policy models it */
  int k = mh_pool_pick(c, n, host, 1);
  if (idle_us)
    *idle_us = k < 0 || !c[k].used_us ? UINT64_MAX : mh_now_us() - c[k].used_us;
  if (window)
    *window = k < 0 ? 0 : mh_upstream_window(slot[k]->up);
  return k >= 0;
}

int mh_pool_holds(struct mh_pool *pool, const char *ifname, const struct sockaddr *dst, const char *xport,
                  const char *host) {
  struct mh_pool_cand c[MH__POOL_MAX];
  struct mh__pool_ent *slot[MH__POOL_MAX];
  int n = mh__pool_cands(pool, ifname, dst, xport, 0, c, slot);
  return mh_pool_pick(c, n, host, 0) >= 0;
}

struct mh_upstream *mh_pool_take(struct mh_pool *pool, const char *ifname, const struct sockaddr *dst,
                                 const char *xport, const char *host, mh_upstream_event_cb on_event, void *owner,
                                 struct mh_pool_taken *how) {
  struct mh_pool_cand c[MH__POOL_MAX];
  struct mh__pool_ent *slot[MH__POOL_MAX];
  int n = mh__pool_cands(pool, ifname, dst, xport, 1, c, slot);
  int k = mh_pool_pick(c, n, host, 0);
  if (k < 0)
    return NULL;
  struct mh__pool_ent *best = slot[k];
  struct mh_upstream *up = best->up;
  if (how) {
    how->connecting = best->connecting;
    how->t_start_us = best->t_start_us;
    how->handshake_us = best->handshake_us;
    how->used_us = best->used_us;
  }
  if (best->host[0] && strcasecmp(best->host, host))
    mh_dbg("pool: %s connection of %s carries %s (same address)", ifname, best->host, host);
  best->up = NULL;
  up->on_event = on_event;
  up->owner = owner;
  up->ops->watch(up, 0);
  return up;
}

int mh_preconnect_plan(const struct mh_iface *ifaces, int n, const struct sockaddr *local, const struct sockaddr *dst,
                       unsigned max_conns, int *out) {
  if (n < 2 || !mh__global(dst) || max_conns < 2)
    return 0;
  int primary = mh_path_iface_of(ifaces, n, local);
  if (primary < 0)
    return 0; /* the program's connection is on no configured interface: the split won't add paths */
  int k = 0;
  for (int i = 0; i < n && (unsigned)k + 1 < max_conns; i++)
    if (i != primary)
      out[k++] = i;
  return k;
}

struct mh_upstream *mh_pool_dial(struct mh_pool *pool, uv_loop_t *loop, struct mh_upstream_env *env,
                                 const struct mh_route *route, const struct mh_tls *tls, int *err) {
  const struct sockaddr *dst = (const struct sockaddr *)&route->dst;
  char xport[MH_POOL_XPORT_MAX];
  struct mh_upstream *up = NULL;
  if (mh_pool_xport_key(tls, xport, sizeof xport) < 0) {
    *err = -ENAMETOOLONG;
    return NULL;
  }
  if (route->iface[0] && route->host[0])
    up = mh_pool_take(pool, route->iface, dst, xport, route->host, NULL, NULL, NULL);
  return up ? up
            : mh_upstream_connect(loop, env, (const struct sockaddr *)&route->src, NULL, dst, tls, NULL, NULL, err);
}

int mh_pool_preconnect(struct mh_pool *pool, uv_loop_t *loop, struct mh_upstream_env *env, const struct mh_config *cfg,
                       const struct sockaddr *dst, const struct sockaddr *local) {
  struct mh_iface ifs[MH_MAX_IFACES];
  int idx[MH_MAX_IFACES];
  int n = mh_path_ifaces(cfg, dst->sa_family, ifs, MH_MAX_IFACES);
  int k = n > 0 ? mh_preconnect_plan(ifs, n, local, dst, cfg->max_conns, idx) : 0;
  int opened = 0;
  time_t now = time(NULL);
  for (int j = 0; j < k; j++) {
    const struct mh_iface *f = &ifs[idx[j]];
    /* one pre-connect per (interface, address), in flight or idle; an idle connection there
     * that served a request already will serve the split (same server) */
    int have = 0;
    for (int i = 0; i < MH__POOL_MAX && !have; i++) {
      const struct mh__pool_ent *e = &pool->ent[i];
      have = e->up && !mh__pool_stale(e, now) && !strcmp(e->ifname, f->name) &&
             mh_path_same_addr((const struct sockaddr *)&e->dst, dst) && !e->xport[0];
    }
    if (have)
      continue;
    int err = 0;
    uint64_t t0 = mh_now_us();
    struct mh_upstream *up =
        mh_upstream_tcp_connect(loop, env, (const struct sockaddr *)&f->addr, f->name, dst, mh__pool_event, NULL, &err);
    if (!up) {
      mh_dbg("pool: pre-connect on %s: %s", f->name, strerror(-err));
      continue;
    }
    if (mh__pool_park(pool, up, f->name, dst, "", "", 1, t0, 0))
      opened++;
  }
  return opened;
}
