/* Which legs a split has: extra paths, replicas (multiDNS and pinned), mirrors, reconnects, and legs handed to the pool. */
#include "split_core.h"
#include "split_leg.h"
#include "split_legs.h"
#include "mh_clock.h"
#include "mh_config.h"
#include "mh_dns.h"
#include "mh_log.h"
#include "mh_upstream.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opens one leg on interface i to each address of mirror (0: the program's server's
 * replicas) not given one there before (a replica whose leg failed is not retried every tick). */
void mh__replica_legs(struct mh_split *sp, int i, int mirror, const char *host, const struct sockaddr_storage *a,
                      int n) {
  for (int k = 0; k < n; k++) {
    if ((unsigned)mh__legs_open(sp) >= sp->cfg->max_conns)
      return;
    int added = mh__tried_add(sp, i, mirror, &a[k]);
    if (added < 0)
      return;
    if (!added)
      continue;
    char buf[64];
    mh_dbg("split %u: %s %s of %s joins on %s (strong validator)", sp->id, mirror ? "mirror" : "replica",
           mh_path_ntop((const struct sockaddr *)&a[k], buf, sizeof buf), host, sp->net.ifaces[i].name);
    mh__leg_open_to(sp, i, mirror, (const struct sockaddr *)&a[k]);
  }
}

/* Per interface, the replicas learned through it (multiDNS) get legs there, and only there:
 * a CDN maps clients per network, so an address from another network's resolver may be far
 * away or unreachable (socket-intents §V-E2). On the primary the program's own answer joins
 * too. The legs mh__open_extras gave another interface towards the program's server (an
 * address of the primary's network) are held while that interface's resolver is still
 * answering, and retired once it named replicas of its own; when it names none, is silent
 * past MH__DNS_HOLD_US, or has no resolver, they serve the program's server as before. */
/* The program's Host without its port: the name the resolvers are asked for. */
static void mh__host_name(const struct mh_split *sp, char *host, size_t cap) {
  snprintf(host, cap, "%s", sp->rq.host);
  char *colon = strrchr(host, ':'); /* Host may carry a port ("a.test:8080"); not for [v6] */
  if (colon && !strchr(host, ']') && colon == strchr(host, ':'))
    *colon = 0;
}

/* 1 while interface i has a replica leg (not to the program's server, not a mirror's) that is
 * alive: its first answer is still to tell whether that network's replicas agree. */
static int mh__replica_pending(const struct mh_split *sp, int i) {
  for (int j = 0; j < sp->nlegs; j++) {
    const struct mh__leg *g = sp->legs[j];
    if (g && g->iface == i && !g->mirror && g->st != LEG_DEAD &&
        !mh_path_same_addr((const struct sockaddr *)&g->dst, (const struct sockaddr *)&sp->prog.dst))
      return 1;
  }
  return 0;
}

/* 1 while an address interface i's resolver named (other than the program's server) has had
 * no leg there yet (mh__replica_legs opens them in the same tick, within its limits). */
static int mh__replica_untried(const struct mh_split *sp, int i, const struct sockaddr_storage *got, int n) {
  for (int k = 0; k < n; k++) {
    struct sockaddr_storage a = got[k]; /* named without a port: the program's server's */
    if (a.ss_family == AF_INET && sp->prog.dst.ss_family == AF_INET)
      ((struct sockaddr_in *)&a)->sin_port = ((const struct sockaddr_in *)&sp->prog.dst)->sin_port;
    else if (a.ss_family == AF_INET6 && sp->prog.dst.ss_family == AF_INET6)
      ((struct sockaddr_in6 *)&a)->sin6_port = ((const struct sockaddr_in6 *)&sp->prog.dst)->sin6_port;
    if (mh__tried_new(sp, i, 0, &a) && (unsigned)mh__legs_open(sp) < sp->cfg->max_conns)
      return 1;
  }
  return 0;
}

/* Interface i's own resolver named the host (n addresses in got): its legs held for that answer
 * are released, and the legs it has towards the program's server retire unless it named that
 * server too (a leg with ranges in flight finishes them first), and only once one of the
 * replicas it named answered a range as the probe did (mh__replica_ok): a resolver that
 * names a portal or a stale cache for every host loses those replicas (they disagree and
 * leave), never the network's working connections to the server the others named. */
static void mh__replicas_named(struct mh_split *sp, int i, const char *host, const struct sockaddr_storage *got,
                               int n) {
  mh__dns_hold(sp, i, 0);
  int dst_named = 0; /* it names the program's server too: that leg stays */
  for (int j = 0; j < n && !dst_named; j++) {
    struct sockaddr_storage a = got[j];
    if (a.ss_family == AF_INET && sp->prog.dst.ss_family == AF_INET)
      ((struct sockaddr_in *)&a)->sin_port = ((struct sockaddr_in *)&sp->prog.dst)->sin_port;
    else if (a.ss_family == AF_INET6 && sp->prog.dst.ss_family == AF_INET6)
      ((struct sockaddr_in6 *)&a)->sin6_port = ((struct sockaddr_in6 *)&sp->prog.dst)->sin6_port;
    dst_named = mh_path_same_addr((const struct sockaddr *)&a, (const struct sockaddr *)&sp->prog.dst);
  }
  /* until one of its replicas agreed, its legs to the program's server wait (given nothing)
   * while a replica it named is still to get a leg or to answer, at most MH__REPLICA_WAIT_US
   * past the resolver's hold */
  int waiting = !mh__replica_ok(sp, i) && !dst_named &&
                (mh__replica_pending(sp, i) || mh__replica_untried(sp, i, got, n)) &&
                mh__replica_wait_due(sp, mh_now_us());
  for (int j = 0; j < sp->nlegs; j++) {
    struct mh__leg *g = sp->legs[j];
    if (!g || g->iface != i || g->primary || g->mirror || g == mh__probe_leg(sp) || g->st == LEG_DEAD)
      continue;
    if (g->dns_held && !waiting) {
      g->dns_held = 0;
      g->no_more = 0;
    } else if (waiting && !g->dns_held && !g->qn && !g->no_more &&
               mh_path_same_addr((const struct sockaddr *)&g->dst, (const struct sockaddr *)&sp->prog.dst)) {
      g->dns_held = 1;
      g->no_more = 1;
    }
  }
  for (int j = 0; j < sp->nlegs && !dst_named && mh__replica_ok(sp, i); j++) {
    struct mh__leg *g = sp->legs[j];
    if (!g || g->primary || g->mirror || g == mh__probe_leg(sp) || g->iface != i || g->st == LEG_DEAD ||
        (g->no_more && !g->dns_held) ||
        !mh_path_same_addr((const struct sockaddr *)&g->dst, (const struct sockaddr *)&sp->prog.dst))
      continue;
    if (g->dns_held || !g->qn) {
      mh_dbg("split %u: leg %d (%s) retired: that network names its own replicas of %s", sp->id, g->idx,
             sp->net.ifaces[i].name, host);
      if (g->sid >= 0)
        sched_conn_failed(sp->sched, g->sid);
      mh__leg_set_state(g, LEG_DEAD);
      mh__leg_drop(g, 0);
    } else {
      g->no_more = 1; /* finishes the ranges it has, takes no more */
    }
  }
}

/* Interface i's resolver has not answered yet: its idle legs towards the program's server are
 * held (given nothing) until it does, or until MH__DNS_HOLD_US after the probe's 206. */
static void mh__replicas_hold(struct mh_split *sp, int i, const char *host, uint64_t now) {
  int hold = mh__dns_hold_due(sp, i, now);
  for (int j = 0; j < sp->nlegs; j++) {
    struct mh__leg *g = sp->legs[j];
    if (!g || g->primary || g->mirror || g == mh__probe_leg(sp) || g->iface != i || g->st == LEG_DEAD)
      continue;
    if (hold && !g->qn && !g->no_more && !g->dns_held) {
      g->dns_held = 1;
      g->no_more = 1; /* mh__drive gives it nothing meanwhile */
    } else if (!hold && g->dns_held) {
      g->dns_held = 0;
      g->no_more = 0;
    }
  }
  if (!mh__dns_hold(sp, i, hold))
    return;
  if (hold)
    mh_dbg("split %u: %s waits for its resolver's answer for %s", sp->id, sp->net.ifaces[i].name, host);
  else
    mh_dbg("split %u: %s: no replica of its own for %s; serving the program's server", sp->id, sp->net.ifaces[i].name,
           host);
}

void mh__replicas_update(struct mh_split *sp) {
  if (!mh__replicas_allowed(sp) || sp->state == SP_FINISHED || sp->state == SP_PLAIN || sched_done(sp->sched))
    return;
  char host[256];
  mh__host_name(sp, host, sizeof host);
  uint64_t now = mh_now_us();
  int adding = sched_ledger_bytes(sched_ledger(sp->sched), SCHED_MISSING, SCHED_NOBODY) >= sp->cfg->min_split_size;
  for (int i = 0; i < sp->net.nifaces; i++) {
    struct sockaddr_storage got[16 + MH_SPLIT_PINS], use[16 + MH_SPLIT_PINS];
    int n = mh_dns_addrs(sp->env->paths->dns, host, sp->net.ifaces[i].name, got, 16);
    if (i == sp->net.primary_iface)
      n += mh_dns_program_addrs(sp->env->paths->dns, host, got + n, 16 - n);
    n += mh__pins_on(sp, i, got + n, MH_SPLIT_PINS); /* as if this network named them */
    int k = mh_dns_select(got, n, (const struct sockaddr *)&sp->prog.dst, use, 16 + MH_SPLIT_PINS);
    int here = n > 0; /* this interface's own resolver named the host (maybe the same server) */
    if (i != sp->net.primary_iface && here)
      mh__replicas_named(sp, i, host, got, n);
    else if (i != sp->net.primary_iface && !mh__dns_released(sp, i))
      mh__replicas_hold(sp, i, host, now);
    if (adding)
      mh__replica_legs(sp, i, 0, host, use, k);
  }
  if (adding)
    mh__mirror_legs(sp, now);
}

/* After the probe's 206: used only when its validator is strong, so every 206 from another
 * server is checked against it. The Host is harvested now where no resolver answered it yet
 * (the program connected to a literal address, resolved it before the resolvers were made
 * again for a new set of interfaces, or its answer expired; mdns_harvest skips the interfaces
 * that hold a fresh answer or a query in flight). Later answers join from the tick (mh__tick). */
void mh__open_replicas(struct mh_split *sp) {
  size_t vl;
  /* on no configured interface only the owner's mirrors and pins are other servers */
  if ((sp->net.primary_iface < 0 && !mh__owner_servers(sp)) || !sp->rq.host[0] || !mh__probe_if_range(sp, &vl))
    return;
  mh_dns_host_header(sp->env->paths->dns, sp->rq.host, strlen(sp->rq.host));
  mh__replicas_allow(sp);
  mh__replicas_update(sp);
}

/* Opens connections on every other interface (the scheduler's model: handshakes start with
 * the probe, so they are ready when its 206 arrives): MHTTP_PATH_CONNS on a path that spends
 * objects in slow start (pol_extra_conns), one elsewhere; one the object does not need goes
 * to the pool for the next probe (policy/README.md, pol_extra_conns). */
void mh__open_extras(struct mh_split *sp) {
  if (sp->net.primary_iface < 0)
    return;
  unsigned max = sp->cfg->max_conns;
  mh__build_view(sp);
  for (int i = 0; i < sp->net.nifaces && (unsigned)sp->nlegs < max; i++) {
    if (i == sp->net.primary_iface)
      continue;
    /* a moved probe's path has its leg, which counts */
    const struct pol_path *pp = mh__view_path(sp, i);
    unsigned want = pp ? pol_extra_conns(&sp->env->paths->pol, pp, sp->cfg->path_conns) : 1;
    for (unsigned have = mh__alive_count(sp, i); have < want && (unsigned)sp->nlegs < max; have++)
      if (!mh__leg_open(sp, i))
        break;
  }
}

/* The program's connection takes nothing after the probe's answer (the program asked for
 * close, or that answer says the origin closes it): its path gets a connection of the
 * engine's own, pooled or new, keep-alive like every range request of ours. Nothing else
 * opens one there (mh__open_extras serves the other paths), and the program's path carried
 * the probe alone (urllib, 32 MiB on two equal links: 32 KiB on it, the rest on the other).
 * At the start it opens with the probe, as the other paths' connections do; once planned,
 * only when the plan uses that path. */
void mh__program_path_leg(struct mh_split *sp) {
  const struct mh__leg *g0 = sp->legs[0];
  int i = sp->net.primary_iface < 0 ? 0 : sp->net.primary_iface;
  if ((g0 && g0->st != LEG_DEAD && !g0->no_more) || mh__alive_count(sp, i))
    return;
  if (!mh__plan_on(sp, i))
    return;
  mh_dbg("split %u: the program's connection ends with the probe's answer: a connection of ours on %s", sp->id,
         sp->net.ifaces[i].name);
  mh__leg_open(sp, i);
}

int mh__live_legs(const struct mh_split *sp) {
  int n = 0;
  for (int i = 0; i < sp->nlegs; i++)
    if (sp->legs[i] && sp->legs[i]->st != LEG_DEAD && !sp->legs[i]->no_more)
      n++;
  return n;
}

/* No connection left while bytes are missing: new ones on every interface, a bounded number
 * of times; after that the program sees the reset a broken network would give it. */
void mh__ensure_paths(struct mh_split *sp) {
  if ((sp->state != SP_VERIFY && sp->state != SP_MANAGED) || sched_done(sp->sched) || mh__live_legs(sp))
    return;
  int limit = sp->net.nifaces > 0 ? 2 * sp->net.nifaces : 2;
  if (sp->nlegs >= MH__MAX_LEGS || !mh__reconnect_take(sp, limit)) {
    /* no connection lasts for a range: before the head went out the program's own request
     * serves, after it the rest comes plainly */
    if (sp->state == SP_VERIFY)
      mh__restart(sp, "no-lasting-connection", 1);
    else
      mh__go_plain(sp, "no connection lasts for a range");
    return;
  }
  mh__note(sp, "reconnect");
  int first = sp->net.primary_iface < 0 ? 0 : sp->net.primary_iface;
  for (int k = 0; k < sp->net.nifaces; k++)
    mh__leg_open(sp, (first + k) % sp->net.nifaces);
  if (!mh__live_legs(sp))
    mh__go_plain(sp, "no new connection");
}

/* A standby connection on the program's path, opened when the object splits and parked in
 * the pool: whatever next needs that path without the program's own connection (the request
 * sent again after the probe's answer was reset, the plain fallback when the ranges trickle,
 * the program's next request after a split that used its connection) finds the handshake
 * done instead of paying it then. On the kernel's path when the program's connection was
 * re-bound: a request sent again before the head went out leaves that way (mh__restart).
 * With pre-connects on, within max_conns (one connection per path besides it), and only
 * when the pool holds none there to the server yet. */
void mh__standby_open(struct mh_split *sp) {
  int i = sp->prog.rebound ? sp->prog.plain_iface : sp->net.primary_iface;
  if (i < 0 || !sp->cfg->preconnect || sp->cfg->max_conns <= (unsigned)sp->net.nifaces || !sp->rq.host[0])
    return;
  const char *ifname = sp->net.ifaces[i].name;
  const struct sockaddr *dst = (const struct sockaddr *)&sp->prog.dst;
  if (mh_pool_holds(sp->env->paths->pool, ifname, dst, mh__xport_of(sp, 0), sp->rq.host))
    return;
  int err = 0;
  uint64_t t0 = mh_now_us();
  struct mh_upstream *up =
      mh__connect(sp, 0, (const struct sockaddr *)&sp->net.ifaces[i].addr, ifname, dst, NULL, NULL, &err);
  if (!up) {
    mh_dbg("split %u: no standby connection on %s: %s", sp->id, ifname, strerror(-err));
    return;
  }
  mh_pool_put_connecting(sp->env->paths->pool, up, ifname, dst, mh__xport_of(sp, 0), t0);
  mh_dbg("split %u: a standby connection on %s", sp->id, ifname);
}

/* Once every byte of the object is asked, an extra connection opened with the probe that
 * never got a range has no work here: it goes to the pool now instead of when the object
 * ends, so that the objects in flight meanwhile find it: a probe moved to a path can ask a
 * whole small object there, and a split holding that path's other pooled connection idle sent
 * the next objects' probes to a worse path or a new handshake. A leg that carried ranges stays:
 * it is the one that takes a straggler's tail (sched_resplit). */
void mh__release_spares(struct mh_split *sp, const struct mh__leg *keep) {
  if (sp->state != SP_MANAGED || sched_ledger_bytes(sched_ledger(sp->sched), SCHED_MISSING, SCHED_NOBODY))
    return;
  for (int i = 0; i < sp->nlegs; i++) {
    struct mh__leg *g = sp->legs[i];
    struct sched_conn_stats cs;
    /* a renewed connection keeps its path up to the end (mh__leg_renew) */
    if (g && g != mh__probe_leg(sp) && g != keep && !g->end.renewal &&
        (g->sid < 0 || (sched_conn_stats(sp->sched, g->sid, &cs) == 0 && !cs.chunks)))
      mh__leg_park(sp, i);
  }
}

/* How many legs on interface i can still carry requests. */
unsigned mh__alive_count(const struct mh_split *sp, int i) {
  struct mh__admit a;
  return pol_admit_alive_count(mh__admit(sp, &a), i);
}

/* Mirror m's addresses for interface i, with its port, of the family the split's interfaces
 * carry. The rule of the program's server (mh__replicas_update): what i's own resolver named
 * for the mirror's name is used there only; the owner's own lookup (the program's resolver)
 * is used on the program's interface, and on another one whose resolver named nothing, once
 * that resolver is not about to answer (mh__replicas_hold's wait). */
static int mh__mirror_addrs(struct mh_split *sp, const struct mh_split_mirror *mr, int i, uint64_t now,
                            struct sockaddr_storage *out, int max) {
  struct sockaddr_storage got[32];
  const char *ifname = sp->net.ifaces[i].name;
  int n = mh_dns_addrs(sp->env->paths->dns, mr->name, ifname, got, 16);
  int waiting = mh__dns_hold_due(sp, i, now);
  if (i == sp->net.primary_iface || (!n && !waiting))
    for (int k = 0; k < mr->naddrs && n < (int)(sizeof got / sizeof got[0]); k++)
      got[n++] = mr->addrs[k];
  /* mh_dns_select sets the port of its template and leaves out the template's own address:
   * the unspecified one here, which no server has */
  struct sockaddr_storage tmpl = {.ss_family = sp->prog.dst.ss_family};
  if (tmpl.ss_family == AF_INET)
    ((struct sockaddr_in *)&tmpl)->sin_port = htons((uint16_t)mr->port);
  else
    ((struct sockaddr_in6 *)&tmpl)->sin6_port = htons((uint16_t)mr->port);
  return mh_dns_select(got, n, (const struct sockaddr *)&tmpl, out, max);
}

/* Every mirror still in the object gets a leg per address on every interface (mh__replica_legs:
 * once per triple, within max_conns). From the tick, after the probe's strong validator. */
void mh__mirror_legs(struct mh_split *sp, uint64_t now) {
  for (unsigned m = 0; m < sp->own.nmirrors; m++) {
    if (!mh__mirror_in(sp, (int)m + 1))
      continue;
    const struct mh_split_mirror *mr = &sp->own.mirrors[m];
    for (int i = 0; i < sp->net.nifaces; i++) {
      struct sockaddr_storage use[16];
      int k = mh__mirror_addrs(sp, mr, i, now, use, 16);
      mh__replica_legs(sp, i, (int)m + 1, mr->name, use, k);
    }
  }
}
