/* The engine's one DNS store: the program's lookups queued for the loop and their answers kept per host, the per-interface resolvers run there, the split answered per interface. */
#include "mh_clock.h"
#include "mh_dns.h"
#include "mh_config.h"
#include "mh_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "multidns/servers.h"

/* A note older than this is not harvested: the program's answer behind it has expired in the
 * cache (multiDNS keeps it 60 s) and the program has long connected. */
#define MH__DNS_NOTE_MAX_AGE_US (60ULL * 1000000ULL)

/* ---- pure parts --------------------------------------------------------------------------- */

int mh_dns_ring_push(struct mh_dns_ring *r, const char *host, const struct sockaddr_storage *a, size_t n,
                     uint64_t t_us) {
  if (!r || !host || !*host || strlen(host) >= MH_DNS_HOST_MAX || !a || !n)
    return -EINVAL;
  int dropped = 0;
  if (r->len == MH_DNS_QUEUE) {
    r->head = (r->head + 1) % MH_DNS_QUEUE;
    r->len--;
    r->dropped++;
    dropped = 1;
  }
  struct mh_dns_note *e = &r->v[(r->head + r->len) % MH_DNS_QUEUE];
  e->t_us = t_us;
  strcpy(e->host, host);
  e->n = 0;
  for (size_t i = 0; i < n && e->n < MH_DNS_NOTE_ADDRS; i++)
    if (a[i].ss_family == AF_INET || a[i].ss_family == AF_INET6)
      e->addr[e->n++] = a[i];
  if (!e->n)
    return -EINVAL;
  r->len++;
  return dropped;
}

int mh_dns_ring_pop(struct mh_dns_ring *r, struct mh_dns_note *out) {
  if (!r || !r->len)
    return 0;
  *out = r->v[r->head];
  r->head = (r->head + 1) % MH_DNS_QUEUE;
  r->len--;
  return 1;
}

int mh_dns_iface_list(const struct mh_iface *v4, int n4, const struct mh_iface *v6, int n6,
                      struct mdns_iface_config *out, int max) {
  int n = 0;
  for (int i = 0; i < n4 && n < max; i++) {
    memset(&out[n], 0, sizeof out[n]);
    out[n].name = v4[i].name;
    memcpy(&out[n].src4, &v4[i].addr, sizeof out[n].src4);
    n++;
  }
  for (int i = 0; i < n6; i++) {
    int k = 0;
    while (k < n && strcmp(out[k].name, v6[i].name))
      k++;
    if (k == n) {
      if (n == max)
        continue;
      memset(&out[n], 0, sizeof out[n]);
      out[n].name = v6[i].name;
      n++;
    }
    memcpy(&out[k].src6, &v6[i].addr, sizeof out[k].src6);
  }
  /* an entry without an address of a family keeps family 0 there: multiDNS then looks the
   * interface's own address up, and finds none for a family the split does not use either */
  return n;
}

static int mh__same_host_addr(const struct sockaddr *a, const struct sockaddr *b) {
  if (a->sa_family != b->sa_family)
    return 0;
  if (a->sa_family == AF_INET)
    return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
  return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
                 sizeof(struct in6_addr));
}

int mh_dns_select(const struct sockaddr_storage *in, int n, const struct sockaddr *dst, struct sockaddr_storage *out,
                  int max) {
  int k = 0;
  if (dst->sa_family != AF_INET && dst->sa_family != AF_INET6)
    return 0;
  for (int i = 0; i < n && k < max; i++) {
    const struct sockaddr *a = (const struct sockaddr *)&in[i];
    if (a->sa_family != dst->sa_family || mh__same_host_addr(a, dst))
      continue;
    int dup = 0;
    for (int j = 0; j < k && !dup; j++)
      dup = mh__same_host_addr(a, (const struct sockaddr *)&out[j]);
    if (dup)
      continue;
    out[k] = in[i];
    /* the program's port: a resolver answer carries none */
    if (a->sa_family == AF_INET)
      ((struct sockaddr_in *)&out[k])->sin_port = ((const struct sockaddr_in *)dst)->sin_port;
    else
      ((struct sockaddr_in6 *)&out[k])->sin6_port = ((const struct sockaddr_in6 *)dst)->sin6_port;
    k++;
  }
  return k;
}

/* ---- one engine's notes and resolvers ----------------------------------------------------- */

/* The ring is per engine, not per process: a lookup is noted by the embedding that saw it (the
 * shim's getaddrinfo hook feeds its one engine) and harvested by the engine that will connect
 * to the name; a process-wide ring would be drained by whichever engine woke first. */
struct mh_dns {
  /* program threads -> loop */
  pthread_mutex_t mu;
  struct mh_dns_ring ring; /* 64 notes, allocated with the engine: the hook never allocates */
  const struct mh_config *cfg;
  void (*poke)(void *);
  void *poke_arg;
  /* the resolvers (loop thread) */
  uv_loop_t *loop;
  const struct mdns_sockfns *sock;
  struct mdns *m;
  int failed;  /* mdns_new refused, or one interface: off until the interfaces change */
  int primary; /* where the program's own answer is recorded */
  /* the program's own answers, newest wins, kept whether or not the resolvers run (one
   * interface, a failed start): its other addresses are replicas on its own interface */
  struct mh_dns_note prog[MH_DNS_PROGRAM_HOSTS];
  unsigned prog_next;
  /* the interfaces the resolvers were made for, in the resolvers' order (an interface's index
   * in mdns is its index here), with the addresses their queries leave from; or the one
   * interface of a failed start. mh_dns_net_changed compares them with the interfaces of now */
  int made_n;
  struct mh__dns_made {
    char name[16];
    struct sockaddr_in src4;
    struct sockaddr_in6 src6;
  } made[MDNS_IFACES_MAX];
};

int mh_dns_new(uv_loop_t *loop, const struct mh_config *cfg, const struct mdns_sockfns *sock, void (*poke)(void *),
               void *poke_arg, struct mh_dns **out) {
  struct mh_dns *d = calloc(1, sizeof *d);
  if (!d)
    return -ENOMEM;
  pthread_mutex_init(&d->mu, NULL);
  d->cfg = cfg;
  d->poke = poke;
  d->poke_arg = poke_arg;
  d->loop = loop;
  d->sock = sock;
  d->primary = -1;
  *out = d;
  return 0;
}

void mh_dns_free(struct mh_dns *d) {
  if (!d)
    return;
  pthread_mutex_destroy(&d->mu);
  free(d);
}

void mh_dns_note(struct mh_dns *d, const char *host, const struct sockaddr_storage *addrs, size_t n) {
  int err = errno;
  if (!d->cfg->split || !host || !n) {
    errno = err;
    return; /* nothing would ever use the harvest */
  }
  uint64_t now = mh_now_us();
  pthread_mutex_lock(&d->mu);
  int rc = mh_dns_ring_push(&d->ring, host, addrs, n, now);
  pthread_mutex_unlock(&d->mu);
  if (rc >= 0 && d->poke)
    d->poke(d->poke_arg);
  errno = err;
}

static void mh__dns_log(int level, const char *msg, void *ud) {
  (void)ud;
  /* a resolver going silent is news for whoever reads the info log, never for the program's
   * stderr (the default level is "error"); only a malformed MHTTP_DNS_<iface> is an error */
  int lvl = level == MDNS_LOG_ERROR ? MH_LOG_ERROR : level == MDNS_LOG_DEBUG ? MH_LOG_DEBUG : MH_LOG_INFO;
  mh_log(lvl, "%s", msg);
}

static void mh__dns_learned(struct mdns *m, int iface, const char *host, void *ud) {
  (void)m;
  struct mh_dns *d = ud;
  mh_dbg("multidns: %s learned new addresses for %s", d->made[iface].name, host);
}
/* The interfaces to resolve on now (names pointing into v4 and v6). */
static int mh__dns_ifaces(const struct mh_dns *d, struct mh_iface *v4, struct mh_iface *v6,
                          struct mdns_iface_config *ic) {
  int n4 = mh_path_ifaces(d->cfg, AF_INET, v4, MH_MAX_IFACES);
  int n6 = mh_path_ifaces(d->cfg, AF_INET6, v6, MH_MAX_IFACES);
  int n = mh_dns_iface_list(v4, n4 > 0 ? n4 : 0, v6, n6 > 0 ? n6 : 0, ic, 2 * MH_MAX_IFACES);
  return n < MDNS_IFACES_MAX ? n : MDNS_IFACES_MAX;
}

static void mh__dns_made_set(struct mh__dns_made *m, const struct mdns_iface_config *ic) {
  memset(m, 0, sizeof *m);
  snprintf(m->name, sizeof m->name, "%s", ic->name);
  m->src4 = ic->src4;
  m->src6 = ic->src6;
}

/* 1 when ic (n entries) is the set the resolvers were made for. */
static int mh__dns_same(const struct mh_dns *d, const struct mdns_iface_config *ic, int n) {
  if (n != d->made_n)
    return 0;
  for (int i = 0; i < n; i++) {
    struct mh__dns_made m;
    mh__dns_made_set(&m, &ic[i]);
    if (memcmp(&m, &d->made[i], sizeof m))
      return 0;
  }
  return 1;
}

static struct mdns *mh__dns_get(struct mh_dns *d) {
  if (d->m || d->failed || !d->loop)
    return d->m;
  const struct mh_config *cfg = d->cfg;
  struct mh_iface v4[MH_MAX_IFACES], v6[MH_MAX_IFACES];
  struct mdns_iface_config ic[2 * MH_MAX_IFACES];
  int n = mh__dns_ifaces(d, v4, v6, ic);
  for (int i = 0; i < n; i++) {
    ic[i].dns = mh_config_dns(cfg, ic[i].name);
    mh__dns_made_set(&d->made[i], &ic[i]);
  }
  d->made_n = n;
  if (n < 2) {
    /* the harvest asks every interface but the program's own: with one, there is none */
    d->failed = 1;
    mh_info("multidns: %s; harvest off", n ? "one interface" : "no interface to resolve on");
    return NULL;
  }
  /* The program's resolver answers through the default-route interface (resolv.conf is written
   * for it), which need not be the first in MHTTP_IFACES: its answer is recorded there. */
  int primary = 0;
  char def[64];
  if (mdns_servers_default_iface(NULL, def, sizeof def) == 0)
    for (int i = 0; i < n; i++)
      if (!strcmp(ic[i].name, def))
        primary = i;
  struct mdns_config mc = {
      .ifaces = ic,
      .n_ifaces = (size_t)n,
      .primary = primary,
      .sock = d->sock,
      .log = mh__dns_log,
      .on_learned = mh__dns_learned,
      .ud = d,
  };
  int rc = mdns_new(d->loop, &mc, &d->m);
  if (rc < 0) {
    d->failed = 1;
    d->m = NULL;
    mh_err("multidns: cannot start (%s); harvest off", strerror(-rc));
    return NULL;
  }
  d->primary = primary;
  return d->m;
}

static int mh__dns_index(const struct mh_dns *d, const char *ifname) {
  for (int i = 0; i < d->made_n; i++)
    if (!strcmp(d->made[i].name, ifname))
      return i;
  return -1;
}

/* The slot holding the program's answer for host (case-insensitive), or -1. */
static int mh__dns_prog_find(const struct mh_dns *d, const char *host) {
  for (int i = 0; i < MH_DNS_PROGRAM_HOSTS; i++)
    if (d->prog[i].n && !strcasecmp(d->prog[i].host, host))
      return i;
  return -1;
}

/* Keeps the program's answer in note for mh_dns_program_addrs: its host's slot, else the
 * oldest. */
static void mh__dns_keep(struct mh_dns *d, const struct mh_dns_note *note) {
  int slot = mh__dns_prog_find(d, note->host);
  if (slot < 0) {
    slot = (int)d->prog_next;
    d->prog_next = (d->prog_next + 1) % MH_DNS_PROGRAM_HOSTS;
  }
  d->prog[slot] = *note;
}

void mh_dns_run(struct mh_dns *d) {
  struct mh_dns_note note;
  for (;;) {
    pthread_mutex_lock(&d->mu);
    int got = mh_dns_ring_pop(&d->ring, &note);
    pthread_mutex_unlock(&d->mu);
    if (!got)
      return;
    mh__dns_keep(d, &note);
    struct mdns *m = mh__dns_get(d);
    if (!m)
      continue; /* drained anyway: the ring must not fill with notes nobody reads */
    uint64_t now = mdns_now_us(m);
    if (now > note.t_us + MH__DNS_NOTE_MAX_AGE_US)
      continue;
    mdns_note_program(m, note.host, note.addr, (size_t)note.n, note.t_us);
    int started = mdns_harvest(m, note.host, d->primary, now);
    mh_dbg("multidns: %s resolved by the program (%d address(es)); %d harvest queries", note.host, note.n, started);
  }
}

int mh_dns_program_addrs(struct mh_dns *d, const char *host, struct sockaddr_storage *out, int max) {
  if (!host || max <= 0)
    return 0;
  mh_dns_run(d); /* a note the loop has not taken yet */
  int i = mh__dns_prog_find(d, host);
  if (i < 0)
    return 0;
  int n = d->prog[i].n < max ? d->prog[i].n : max;
  memcpy(out, d->prog[i].addr, (size_t)n * sizeof *out);
  return n;
}

int mh_dns_addrs(struct mh_dns *d, const char *host, const char *ifname, struct sockaddr_storage *out, int max) {
  int i = d->m && host && ifname ? mh__dns_index(d, ifname) : -1;
  if (i < 0 || max <= 0)
    return 0;
  int n = mdns_addrs(d->m, i, host, mdns_now_us(d->m), out, (size_t)max);
  return n > 0 ? n : 0;
}

int mh_dns_waiting(struct mh_dns *d, const char *ifname) {
  int i = d->m && ifname ? mh__dns_index(d, ifname) : -1;
  return i >= 0 && mdns_pending(d->m, i) > 0 && !mdns_failing(d->m, i);
}

void mh_dns_host_header(struct mh_dns *d, const char *value, size_t len) {
  struct mdns *m = value ? mh__dns_get(d) : NULL;
  if (m)
    mdns_harvest_host_header(m, value, len, mdns_now_us(m));
}

void mh_dns_net_changed(struct mh_dns *d) {
  if (!d->m && !d->failed)
    return; /* not made yet: the next note makes them for the interfaces of then */
  struct mh_iface v4[MH_MAX_IFACES], v6[MH_MAX_IFACES];
  struct mdns_iface_config ic[2 * MH_MAX_IFACES];
  int n = mh__dns_ifaces(d, v4, v6, ic);
  if (mh__dns_same(d, ic, n))
    return;
  mh_info("multidns: the interfaces changed (%d now): resolvers made again at the next lookup", n);
  mh_dns_close(d);
}

void mh_dns_close(struct mh_dns *d) {
  if (d->m)
    mdns_close(d->m, NULL, NULL);
  d->m = NULL;
  d->failed = 0;
  d->made_n = 0;
  d->primary = -1;
}
