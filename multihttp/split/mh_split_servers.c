/* A split's servers besides the program's: replicas per interface, the owner's mirrors and pins, the (interface, mirror, address) triples given a leg, and the (interface, server) paths its owner is told of; their state is this file's own. */
#include "split_core.h"
#include "mh_clock.h"
#include "mh_dns.h"
#include "mh_log.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* (interface, mirror, address) triples given a leg beyond the program's server's; each once */
#define MH__MAX_TRIED 32
/* (interface, server) paths a split reports: the program's server on each interface, and each
 * triple tried */
#define MH__MAX_SRV (MH_MAX_IFACES + MH__MAX_TRIED)
/* How long the extra legs of an interface wait for its own resolver before serving the
 * program's server after all. A working resolver answers within one round trip of its
 * network, and the harvest started when the program resolved the name; a silent one would
 * hold the link idle for c-ares's whole timeout (2 x 2 s). */
#define MH__DNS_HOLD_US 300000ULL
/* How long those legs wait for the first answer of a replica that network named: a replica
 * that disagrees (a portal's 302) answers within a round trip; one that never answers must not
 * keep the network's working connections idle for the whole object. */
#define MH__REPLICA_WAIT_US 2000000ULL

/* One (interface, server) path of the object, as mh_split_paths reports it. */
struct mh__srv {
  int iface;
  int mirror; /* as mh__leg.mirror */
  struct sockaddr_storage addr;
  uint64_t bytes; /* body bytes the object used from it */
  int dropped;    /* mh_split_path.dropped */
  const char *why;
};

/* The servers besides the program's: replicas per interface (bit i = net.ifaces[i]), the
 * owner's mirrors and pinned replicas, and the (interface, server) paths the owner is told of.
 * Made with the split (mh__servers_new), seen by this file only. */
struct mh__servers {
  int replicas_on; /* strong validator seen: replica legs may join */
  unsigned dns_hold, dns_released;
  unsigned replica_ok; /* bit i: a replica named by i's resolver answered a range as the probe
                          did (its legs to the program's server may retire) */
  uint64_t dns_hold_until_us;
  int ntried; /* (interface, mirror, address) triples given a leg */
  int tried_iface[MH__MAX_TRIED];
  int tried_mirror[MH__MAX_TRIED];
  struct sockaddr_storage tried[MH__MAX_TRIED];
  unsigned nmirrors;                                   /* own.mirrors used */
  char xport[1 + MH_SPLIT_MIRRORS][MH_POOL_XPORT_MAX]; /* each server's pool key (as mh__leg.mirror) */
  uint32_t mirror_bad;                                 /* bit k - 1: mirror k answered otherwise and left the object */
  int npins;
  struct sockaddr_storage pin[MH_SPLIT_PINS];
  uint32_t pin_ifaces[MH_SPLIT_PINS]; /* bit i: the pin serves on net.ifaces[i] */
  struct mh__srv srv[MH__MAX_SRV];    /* (interface, server) paths, in the order their first
                                         leg opened (mh__srv_of) */
  int nsrv;
};

/* The owner's pins, each with the interfaces it serves on (those of the split it names; a pin
 * on an interface the split does not use is left out). */
static void mh__pins_copy(struct mh_split *sp, const struct mh_split_owner *own) {
  struct mh__servers *sv = sp->sv;
  for (unsigned k = 0; k < own->npins && sv->npins < MH_SPLIT_PINS; k++) {
    const struct mh_split_pin *p = &own->pins[k];
    uint32_t on = 0;
    for (int i = 0; i < sp->net.nifaces; i++)
      if (!p->iface || !strcmp(p->iface, sp->net.ifaces[i].name))
        on |= 1u << i;
    if (!on)
      continue;
    sv->pin[sv->npins] = p->addr;
    sv->pin_ifaces[sv->npins++] = on;
  }
  sp->own.pins = NULL; /* copied: the owner's array need not outlive the start */
  sp->own.npins = 0;
}

/* The owner's mirrors, each with its pool key; one whose key does not fit never joins. */
static void mh__mirrors_copy(struct mh_split *sp, const struct mh_split_owner *own) {
  struct mh__servers *sv = sp->sv;
  sv->nmirrors = own->nmirrors < MH_SPLIT_MIRRORS ? own->nmirrors : MH_SPLIT_MIRRORS;
  for (unsigned m = 0; m < sv->nmirrors; m++)
    if (mh_pool_xport_key(own->mirrors[m].tls, sv->xport[1 + m], sizeof sv->xport[1 + m]) < 0)
      sv->mirror_bad |= 1u << m;
}

int mh__servers_new(struct mh_split *sp, const struct mh_split_owner *own) {
  if (!(sp->sv = calloc(1, sizeof *sp->sv)))
    return -ENOMEM;
  if (mh_pool_xport_key(own->tls, sp->sv->xport[0], sizeof sp->sv->xport[0]) < 0)
    return -ENOTSUP; /* the program's transport has no pool key: not split */
  mh__pins_copy(sp, own);
  mh__mirrors_copy(sp, own);
  return 0;
}

void mh__servers_free(struct mh_split *sp) {
  free(sp->sv);
  sp->sv = NULL;
}

const char *mh__xport_of(const struct mh_split *sp, int mirror) { return sp->sv->xport[mirror]; }

int mh__mirror_in(const struct mh_split *sp, int mirror) {
  return mirror >= 1 && (unsigned)mirror <= sp->sv->nmirrors && !(sp->sv->mirror_bad >> (mirror - 1) & 1);
}

/* Mirror k answered for another representation or unusably (why): it leaves the object on
 * every interface, its ranges in flight are asked again elsewhere (sched_conn_failed through
 * mh__leg_fail), and it never gets a leg again. Never different bytes: a body byte counts only
 * after its answer's head matched the probe's length and validator (mh__range_head). */
void mh__mirror_drop(struct mh_split *sp, int mirror, const char *why) {
  if (!(sp->sv->mirror_bad >> (mirror - 1) & 1)) {
    sp->sv->mirror_bad |= 1u << (mirror - 1);
    mh_info("split %u: mirror %s answered otherwise (%s): it leaves the object", sp->id,
            sp->own.mirrors[mirror - 1].host, why);
    mh__note(sp, "bad-mirror");
  }
  for (int j = 0; j < sp->nlegs; j++) {
    struct mh__leg *g = sp->legs[j];
    if (!g || g->mirror != mirror || g->st == LEG_DEAD)
      continue;
    mh__srv_drop(sp, g, MH_SPLIT_PATH_BAD, why);
    mh__leg_fail(g, why);
  }
}

int mh__owner_servers(const struct mh_split *sp) { return sp->sv->nmirrors || sp->sv->npins; }

int mh__pins_on(const struct mh_split *sp, int i, struct sockaddr_storage *out, int max) {
  int n = 0;
  for (int k = 0; k < sp->sv->npins && n < max; k++)
    if (sp->sv->pin_ifaces[k] >> i & 1)
      out[n++] = sp->sv->pin[k];
  return n;
}

void mh__replicas_allow(struct mh_split *sp) {
  sp->sv->replicas_on = 1;
  sp->sv->dns_hold_until_us = mh_now_us() + MH__DNS_HOLD_US;
}

int mh__replicas_allowed(const struct mh_split *sp) { return sp->sv->replicas_on; }

void mh__replica_agreed(struct mh_split *sp, int i) { sp->sv->replica_ok |= 1u << i; }

int mh__replica_ok(const struct mh_split *sp, int i) { return sp->sv->replica_ok >> i & 1; }

int mh__replica_wait_due(const struct mh_split *sp, uint64_t now) {
  return now < sp->sv->dns_hold_until_us + MH__REPLICA_WAIT_US;
}

int mh__dns_hold_due(const struct mh_split *sp, int i, uint64_t now) {
  return now < sp->sv->dns_hold_until_us && mh_dns_waiting(sp->env->paths->dns, sp->net.ifaces[i].name);
}

int mh__dns_hold(struct mh_split *sp, int i, int hold) {
  unsigned bit = 1u << i, was = sp->sv->dns_hold & bit;
  if (hold) {
    sp->sv->dns_hold |= bit;
  } else {
    sp->sv->dns_hold &= ~bit;
    sp->sv->dns_released |= bit;
  }
  return !was != !hold;
}

int mh__dns_released(const struct mh_split *sp, int i) { return sp->sv->dns_released >> i & 1; }

/* 1 when (i, mirror, *a) was given a leg. */
static int mh__tried_has(const struct mh__servers *sv, int i, int mirror, const struct sockaddr_storage *a) {
  for (int t = 0; t < sv->ntried; t++)
    if (sv->tried_iface[t] == i && sv->tried_mirror[t] == mirror &&
        mh_path_same_addr((const struct sockaddr *)&sv->tried[t], (const struct sockaddr *)a))
      return 1;
  return 0;
}

int mh__tried_add(struct mh_split *sp, int i, int mirror, const struct sockaddr_storage *a) {
  struct mh__servers *sv = sp->sv;
  if (sv->ntried == MH__MAX_TRIED)
    return -ENOSPC;
  if (mh__tried_has(sv, i, mirror, a))
    return 0;
  sv->tried_iface[sv->ntried] = i;
  sv->tried_mirror[sv->ntried] = mirror;
  sv->tried[sv->ntried++] = *a;
  return 1;
}

int mh__tried_new(const struct mh_split *sp, int i, int mirror, const struct sockaddr_storage *a) {
  return !mh__tried_has(sp->sv, i, mirror, a) && sp->sv->ntried < MH__MAX_TRIED;
}

/* The index in the paths of (interface, mirror, address), added when new; -1 when the table is
 * full (it cannot be: MH__MAX_SRV counts every path a split opens). */
int mh__srv_of(struct mh_split *sp, int iface, int mirror, const struct sockaddr *addr) {
  struct mh__servers *sv = sp->sv;
  for (int s = 0; s < sv->nsrv; s++)
    if (sv->srv[s].iface == iface && sv->srv[s].mirror == mirror &&
        mh_path_same_addr((const struct sockaddr *)&sv->srv[s].addr, addr))
      return s;
  if (sv->nsrv == MH__MAX_SRV)
    return -1;
  struct mh__srv *v = &sv->srv[sv->nsrv];
  *v = (struct mh__srv){.iface = iface, .mirror = mirror};
  memcpy(&v->addr, addr, addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
  return sv->nsrv++;
}

void mh__srv_count_bytes(struct mh_split *sp, const struct mh__leg *g, uint64_t n) {
  if (g->srv >= 0)
    sp->sv->srv[g->srv].bytes += n;
}

/* g's server left the object on its interface (err, why: mh_split_path.dropped), so the
 * program is told why the path went down. A replica or mirror is never asked again there
 * (mh__tried_add); the program's server may be (mh__ensure_paths, a path that comes back), and
 * its path is then up again. The first cause stays. */
void mh__srv_drop(struct mh_split *sp, const struct mh__leg *g, int err, const char *why) {
  if (g->srv < 0 || sp->sv->srv[g->srv].dropped)
    return;
  sp->sv->srv[g->srv].dropped = err;
  sp->sv->srv[g->srv].why = why;
}

/* Path s's entry: its bytes, and what its legs are now. */
static void mh__path_of(const struct mh_split *sp, int s, struct mh_split_path *p) {
  const struct mh__srv *v = &sp->sv->srv[s];
  *p = (struct mh_split_path){.replica = v->addr,
                              .mirror = (unsigned)v->mirror,
                              .bytes = v->bytes,
                              .dropped = v->dropped,
                              .why = v->why ? v->why : ""};
  snprintf(p->iface, sizeof p->iface, "%s", sp->net.ifaces[v->iface].name);
  for (int j = 0; j < sp->nlegs; j++) {
    struct mh__leg *g = sp->legs[j];
    /* a connection renewed after its server's keep-alive limit keeps the path up */
    if (!g || g->srv != s || (g->st != LEG_READY && !(g->end.renewal && g->st == LEG_CONNECTING)))
      continue;
    p->up = 1;
    p->in_flight += g->qn;
    if (!p->srtt_us)
      p->srtt_us = mh_upstream_srtt_us(g->up);
  }
}

int mh_split_paths(const struct mh_split *sp, struct mh_split_path *out, int max) {
  for (int s = 0; s < sp->sv->nsrv && s < max; s++)
    mh__path_of(sp, s, &out[s]);
  return sp->sv->nsrv;
}
