/* The multiDNS harvest cache: addresses per (interface, host) with DNS TTLs, and the reverse map. */
#include "multidns/cache.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Entries live in one array scanned linearly. The cache is small (hundreds of entries: the
 * hosts a program talks to, times the interfaces) and both indices (by host and by address)
 * are needed, so a scan that cannot get out of sync beats two hash tables kept consistent
 * under eviction and RRset replacement. */

/* An address in compact form: a sockaddr_storage is 128 bytes, this is 24. */
struct mdns__addr {
  sa_family_t family;
  uint32_t scope; /* IPv6 scope id, 0 otherwise */
  uint8_t bytes[16];
  uint64_t expires_us; /* learned + TTL; the address is valid while now < expires_us */
};

struct mdns__list {
  size_t n;
  struct mdns__addr a[MDNS_ADDRS_MAX];
};

struct mdns__entry {
  bool used;
  int iface;
  char host[MDNS_HOST_MAX];
  uint64_t last_used_us;     /* LRU clock: last put or get */
  uint64_t learned_us;       /* last put with at least one address (reverse-map tie break) */
  struct mdns__list prog;    /* the program's own answer, both families, its order */
  struct mdns__list harv[2]; /* harvested: [0] IPv6, [1] IPv4 (the merge order) */
  uint64_t fresh_until[2];   /* harvest answered (positive or negative) until, per family */
};

struct mdns_cache {
  size_t max;
  size_t n;
  struct mdns__entry *e;
};

static int mdns__fam_idx(int family) { return family == AF_INET6 ? 0 : 1; }

static bool mdns__to_addr(const struct sockaddr *sa, struct mdns__addr *out) {
  memset(out, 0, sizeof *out);
  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
    out->family = AF_INET;
    memcpy(out->bytes, &s4->sin_addr, 4);
    return true;
  }
  if (sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
    if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
      /* ::ffff:a.b.c.d (a program resolving with AI_V4MAPPED, or an AF_INET6 socket's peer)
       * is the IPv4 host: one key, so dedup and the reverse map see through the mapping */
      out->family = AF_INET;
      memcpy(out->bytes, &s6->sin6_addr.s6_addr[12], 4);
      return true;
    }
    out->family = AF_INET6;
    out->scope = s6->sin6_scope_id;
    memcpy(out->bytes, &s6->sin6_addr, 16);
    return true;
  }
  return false;
}

static void mdns__from_addr(const struct mdns__addr *a, struct sockaddr_storage *out) {
  memset(out, 0, sizeof *out);
  if (a->family == AF_INET) {
    struct sockaddr_in *s4 = (struct sockaddr_in *)out;
    s4->sin_family = AF_INET;
    memcpy(&s4->sin_addr, a->bytes, 4);
  } else {
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)out;
    s6->sin6_family = AF_INET6;
    s6->sin6_scope_id = a->scope;
    memcpy(&s6->sin6_addr, a->bytes, 16);
  }
}

static bool mdns__addr_eq(const struct mdns__addr *x, const struct mdns__addr *y) {
  size_t len = x->family == AF_INET ? 4 : 16;
  return x->family == y->family && x->scope == y->scope && memcmp(x->bytes, y->bytes, len) == 0;
}

int mdns_cache_same_addr(const struct sockaddr *a, const struct sockaddr *b) {
  struct mdns__addr x, y;
  if (!a || !b || !mdns__to_addr(a, &x) || !mdns__to_addr(b, &y))
    return 0;
  return mdns__addr_eq(&x, &y);
}

int mdns_cache_host_key(const char *host, char out[MDNS_HOST_MAX]) {
  if (!host)
    return -EINVAL;
  size_t len = strlen(host);
  if (len > 0 && host[len - 1] == '.')
    len--; /* "example.com." and "example.com" are the same name */
  if (len == 0 || len > 253)
    return -EINVAL;
  for (size_t i = 0; i < len; i++) {
    char ch = host[i];
    out[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
  }
  out[len] = '\0';
  return 0;
}

int mdns_cache_new(size_t max_entries, struct mdns_cache **out) {
  if (!out || max_entries == 0)
    return -EINVAL;
  struct mdns_cache *c = calloc(1, sizeof *c);
  if (!c)
    return -ENOMEM;
  c->e = calloc(max_entries, sizeof *c->e);
  if (!c->e) {
    free(c);
    return -ENOMEM;
  }
  c->max = max_entries;
  *out = c;
  return 0;
}

void mdns_cache_free(struct mdns_cache *c) {
  if (!c)
    return;
  free(c->e);
  free(c);
}

size_t mdns_cache_size(const struct mdns_cache *c) { return c ? c->n : 0; }

static struct mdns__entry *mdns__find(const struct mdns_cache *c, int iface, const char *key) {
  for (size_t i = 0; i < c->max; i++) {
    struct mdns__entry *e = &c->e[i];
    if (e->used && e->iface == iface && strcmp(e->host, key) == 0)
      return e;
  }
  return NULL;
}

static bool mdns__list_live(const struct mdns__list *l, uint64_t now_us) {
  for (size_t i = 0; i < l->n; i++)
    if (now_us < l->a[i].expires_us)
      return true;
  return false;
}

/* An entry is dead when nothing in it would be returned or would stop a query: evict those
 * first so a burst of one-off names does not push out the hosts in use. */
static bool mdns__entry_dead(const struct mdns__entry *e, uint64_t now_us) {
  return !mdns__list_live(&e->prog, now_us) && !mdns__list_live(&e->harv[0], now_us) &&
         !mdns__list_live(&e->harv[1], now_us) && now_us >= e->fresh_until[0] && now_us >= e->fresh_until[1];
}

static struct mdns__entry *mdns__slot_for(struct mdns_cache *c, uint64_t now_us) {
  struct mdns__entry *victim = NULL;
  bool victim_dead = false;
  for (size_t i = 0; i < c->max; i++) {
    struct mdns__entry *e = &c->e[i];
    if (!e->used)
      return e;
    bool dead = mdns__entry_dead(e, now_us);
    if (!victim || (dead && !victim_dead) || (dead == victim_dead && e->last_used_us < victim->last_used_us)) {
      victim = e;
      victim_dead = dead;
    }
  }
  memset(victim, 0, sizeof *victim);
  c->n--;
  return victim;
}

/* Whether `a` is cached and unexpired anywhere in the entry (used to report "new" addresses). */
static bool mdns__entry_has_live(const struct mdns__entry *e, const struct mdns__addr *a, uint64_t now_us) {
  const struct mdns__list *lists[3] = {&e->prog, &e->harv[0], &e->harv[1]};
  for (size_t l = 0; l < 3; l++)
    for (size_t i = 0; i < lists[l]->n; i++)
      if (now_us < lists[l]->a[i].expires_us && mdns__addr_eq(&lists[l]->a[i], a))
        return true;
  return false;
}

int mdns_cache_put(struct mdns_cache *c, int iface, const char *host, enum mdns_src src, int family,
                   const struct mdns_rr *rrs, size_t n, uint32_t neg_ttl_s, uint64_t now_us) {
  char key[MDNS_HOST_MAX];
  if (!c || iface < 0 || iface >= MDNS_IFACES_MAX || (n && !rrs) || mdns_cache_host_key(host, key))
    return -EINVAL;
  if (src == MDNS_SRC_HARVEST && family != AF_INET && family != AF_INET6)
    return -EINVAL;
  if (src == MDNS_SRC_PROGRAM && family != AF_UNSPEC)
    return -EINVAL;

  /* Build the new list first so the old one still counts when deciding what is new. */
  struct mdns__list fresh = {0};
  uint64_t min_ttl = UINT32_MAX;
  for (size_t i = 0; i < n && fresh.n < MDNS_ADDRS_MAX; i++) {
    struct mdns__addr a;
    if (!mdns__to_addr((const struct sockaddr *)&rrs[i].addr, &a))
      continue;
    if (family != AF_UNSPEC && a.family != family)
      continue;
    bool dup = false;
    for (size_t j = 0; j < fresh.n && !dup; j++)
      dup = mdns__addr_eq(&fresh.a[j], &a);
    if (dup)
      continue;
    a.expires_us = now_us + (uint64_t)rrs[i].ttl_s * 1000000u;
    if (rrs[i].ttl_s < min_ttl)
      min_ttl = rrs[i].ttl_s;
    fresh.a[fresh.n++] = a;
  }

  struct mdns__entry *e = mdns__find(c, iface, key);
  if (!e) {
    if (fresh.n == 0 && src == MDNS_SRC_PROGRAM)
      return 0; /* nothing to remember */
    e = mdns__slot_for(c, now_us);
    e->used = true;
    e->iface = iface;
    memcpy(e->host, key, sizeof key);
    c->n++;
  }

  int added = 0;
  for (size_t i = 0; i < fresh.n; i++)
    if (fresh.a[i].expires_us > now_us && !mdns__entry_has_live(e, &fresh.a[i], now_us))
      added++;

  if (src == MDNS_SRC_PROGRAM) {
    e->prog = fresh;
  } else {
    int fi = mdns__fam_idx(family);
    e->harv[fi] = fresh;
    e->fresh_until[fi] = now_us + (uint64_t)(fresh.n ? min_ttl : neg_ttl_s) * 1000000u;
  }
  e->last_used_us = now_us;
  if (fresh.n)
    e->learned_us = now_us;
  return added;
}

int mdns_cache_fresh(const struct mdns_cache *c, int iface, const char *host, int family, uint64_t now_us) {
  char key[MDNS_HOST_MAX];
  if (!c || (family != AF_INET && family != AF_INET6) || mdns_cache_host_key(host, key))
    return 0;
  const struct mdns__entry *e = mdns__find(c, iface, key);
  return e && now_us < e->fresh_until[mdns__fam_idx(family)];
}

size_t mdns_cache_get(struct mdns_cache *c, int iface, const char *host, uint64_t now_us, struct sockaddr_storage *out,
                      size_t max) {
  char key[MDNS_HOST_MAX];
  if (!c || !out || mdns_cache_host_key(host, key))
    return 0;
  struct mdns__entry *e = mdns__find(c, iface, key);
  if (!e)
    return 0;
  e->last_used_us = now_us;

  /* Merge order: the program's answer, then IPv6, then IPv4 harvests; first occurrence wins. */
  const struct mdns__list *lists[3] = {&e->prog, &e->harv[0], &e->harv[1]};
  struct mdns__addr taken[3 * MDNS_ADDRS_MAX];
  size_t n = 0;
  for (size_t l = 0; l < 3 && n < max; l++) {
    for (size_t i = 0; i < lists[l]->n && n < max; i++) {
      const struct mdns__addr *a = &lists[l]->a[i];
      if (now_us >= a->expires_us)
        continue;
      bool dup = false;
      for (size_t j = 0; j < n && !dup; j++)
        dup = mdns__addr_eq(&taken[j], a);
      if (dup)
        continue;
      taken[n] = *a;
      mdns__from_addr(a, &out[n]);
      n++;
    }
  }
  return n;
}

int mdns_cache_host_of(const struct mdns_cache *c, const struct sockaddr *sa, uint64_t now_us, char *host, size_t len,
                       int *iface) {
  struct mdns__addr want;
  if (!c || !sa || !host || !mdns__to_addr(sa, &want))
    return -EINVAL;
  const struct mdns__entry *best = NULL;
  bool best_live = false;
  for (size_t i = 0; i < c->max; i++) {
    const struct mdns__entry *e = &c->e[i];
    if (!e->used)
      continue;
    const struct mdns__list *lists[3] = {&e->prog, &e->harv[0], &e->harv[1]};
    bool found = false, live = false;
    for (size_t l = 0; l < 3; l++)
      for (size_t k = 0; k < lists[l]->n; k++)
        if (mdns__addr_eq(&lists[l]->a[k], &want)) {
          found = true;
          live = live || now_us < lists[l]->a[k].expires_us;
        }
    if (!found)
      continue;
    if (!best || (live && !best_live) || (live == best_live && e->learned_us > best->learned_us)) {
      best = e;
      best_live = live;
    }
  }
  if (!best)
    return -ENOENT;
  size_t hl = strlen(best->host);
  if (hl >= len)
    return -ENOSPC;
  memcpy(host, best->host, hl + 1);
  if (iface)
    *iface = best->iface;
  return 0;
}
