/* Paths that come and go during an object: the split's interface table brought up to the kernel's (mh_netwatch), legs on a gone path or address cut at once, a returning, changed or new path re-admitted, and a bounded re-probe of a path lost without any event. */
#include "split_core.h"
#include "split_leg.h"
#include "split_legs.h"
#include "mh_config.h"
#include "mh_dns.h"
#include "mh_log.h"

#include <inttypes.h>
#include <string.h>

/* A path whose connections all failed with no kernel event (a link that silently stops
 * forwarding) is tried again MH__REPROBE_US after its loss, then twice as long after each
 * try that fails, at most MH__REPROBE_MAX times per object: each try is one connection (its
 * connect timeout bounds it), so a dead path costs a handshake attempt a few seconds apart.
 * The first comes soon: right after a link comes back, a connection may fail at once
 * (EHOSTUNREACH while its gateway's neighbour entry is still the failed one) and the next
 * one a moment later works. */
#define MH__REPROBE_US 250000ULL
#define MH__REPROBE_MAX 5

static int mh__net_on(const struct mh_split *sp) { return sp->state == SP_VERIFY || sp->state == SP_MANAGED; }

/* Leg g is failing (mh__leg_fail): when its path went silent, the path is re-probed later
 * (mh__net_reprobe) unless a kernel event or another leg there says more first. */
void mh__net_lost(struct mh_split *sp, const struct mh__leg *g, uint64_t now) {
  if (g->end.eof || g->iface < 0 || g->iface >= MH_MAX_IFACES || !mh__net_on(sp))
    return; /* a server's close is not the path's fault */
  /* a leg whose server sent it bytes within the stall limit (then reset it, or answered
   * otherwise) failed on a path that works: only silence says the path itself went away. A
   * connect that fails fast says nothing: right after a link comes back its gateway's
   * neighbour entry may still be the failed one (EHOSTUNREACH) */
  if (g->at.rx_us && mh__since(now, g->at.rx_us) < MH__STALL_MIN_US)
    return;
  mh__net_silent(sp, g->iface, now);
}

/* Interface i's leg went silent (a stall): the path is re-probed (mh__net_reprobe) unless
 * another leg there carries, whatever that leg's last bytes said. A server that paces each
 * answer (nginx limit_rate) holds a long range's last bytes until its budget allows them, for
 * seconds; the stall ends that connection, and its path must not leave the object with it
 * (128 MiB from such a server: 6.4 MB on the path that stalled, the rest on the other). */
void mh__net_silent(struct mh_split *sp, int i, uint64_t now) {
  if (i < 0 || i >= MH_MAX_IFACES || !mh__net_on(sp))
    return;
  sp->net.lost |= 1u << i;
  sp->net.lost_us[i] = now;
}

/* Every leg on interface i whose source address i no longer holds (all of them when i is
 * gone: down_now) fails at once: its packets have no way back, and waiting for its stall or
 * connect timeout would hold its ranges for seconds. */
static void mh__net_cut(struct mh_split *sp, int i, int down_now, const char *why) {
  for (int k = 0; k < sp->nlegs && mh__net_on(sp); k++) {
    struct mh__leg *g = sp->legs[k];
    struct sockaddr_storage local;
    if (!g || g->iface != i || g->st == LEG_DEAD)
      continue;
    if (!down_now && mh_upstream_query(g->up, MH_UPQ_LOCAL, NULL, &local) == 0 &&
        (mh_path_iface_of(&sp->net.ifaces[i], 1, (const struct sockaddr *)&local) == 0 ||
         mh_path_has_addr(sp->net.ifaces[i].name, (const struct sockaddr *)&local)))
      continue; /* from the new address, or from one the interface still holds */
    mh__leg_fail(g, why);
  }
}

/* Interface i is usable again (back, new, or with a new address): when the admission rules
 * would give a connection there ranges of what is missing (pol_admit_policy: the plan, the
 * floor, pol_worth_adding, exploring), it gets as many as a path gets at the start
 * (pol_extra_conns); the drive loop asks their ranges as for any leg. */
static void mh__net_admit(struct mh_split *sp, int i) {
  mh__build_view(sp);
  struct mh__admit a;
  const struct pol_admit_obj *o = mh__admit(sp, &a);
  const struct pol_path *pp = mh__view_path(sp, i);
  if (!pp || !pp->usable ||
      !pol_admit_policy(o->pol, o->view, o->plan, (unsigned)i, false, pol_admit_on_mask(o), o->missing, o->floor)) {
    mh_info("split %u: %s is usable but takes no part in the rest (%" PRIu64 " B not asked yet)", sp->id,
            sp->net.ifaces[i].name, o->missing);
    return;
  }
  unsigned want = pol_extra_conns(&sp->env->paths->pol, pp, sp->cfg->path_conns);
  mh_info("split %u: %s re-admitted for the rest (%" PRIu64 " B not asked yet): %u connection(s)", sp->id,
          sp->net.ifaces[i].name, o->missing, want);
  for (unsigned have = mh__alive_count(sp, i); have < want && (unsigned)mh__legs_open(sp) < sp->cfg->max_conns; have++)
    if (!mh__leg_open(sp, i))
      break;
}

/* The engine saw the interface table change: this object's copy follows (indexes kept). */
static void mh__net_refresh(struct mh_split *sp) {
  struct mh_iface now[MH_MAX_IFACES];
  enum mh_path_event ev[MH_MAX_IFACES];
  int m = mh_path_ifaces(sp->cfg, sp->prog.dst.ss_family, now, MH_MAX_IFACES);
  if (m < 0 || sp->net.primary_iface < 0)
    return; /* (a split on no configured interface has a pseudo-interface only) */
  int n = mh_path_refresh(sp->net.ifaces, sp->net.nifaces, MH_MAX_IFACES, &sp->net.down, now, m, ev), asked = 0;
  sp->net.nifaces = n;
  for (int i = 0; i < n && mh__net_on(sp); i++) {
    if (ev[i] == MH_PATH_SAME)
      continue;
    /* the resolvers follow the interfaces (mh_dns_net_changed): a new or changed path's own
     * resolver is asked for the host, its replicas join at a later tick (mh__replicas_update) */
    if (ev[i] != MH_PATH_GONE && mh__replicas_allowed(sp) && sp->rq.host[0] && !asked++)
      mh_dns_host_header(sp->env->paths->dns, sp->rq.host, strlen(sp->rq.host));
    uint32_t bit = 1u << i;
    mh_info("split %u: %s: %s", sp->id, sp->net.ifaces[i].name, mh_path_event_str(ev[i]));
    mh__note(sp, ev[i] == MH_PATH_GONE ? "path-gone" : "path-back");
    if (ev[i] == MH_PATH_GONE || ev[i] == MH_PATH_READDR || ev[i] == MH_PATH_BACK)
      mh__net_cut(sp, i, ev[i] == MH_PATH_GONE,
                  ev[i] == MH_PATH_GONE ? "its interface is gone" : "its address is gone");
    if (ev[i] == MH_PATH_GONE)
      continue;
    if (ev[i] == MH_PATH_NEW)
      mh__iface_added(sp, i);
    if (i == sp->net.primary_iface)
      memcpy(&sp->prog.local, &sp->net.ifaces[i].addr, sizeof sp->prog.local); /* a replacement leaves from there */
    sp->net.lost &= ~bit;                                                      /* its legs were cut above, not lost */
    sp->net.reprobes[i] = 0;
    mh__net_admit(sp, i);
  }
}

/* A path lost without an event gets a connection again, MH__REPROBE_US after its loss. */
static void mh__net_reprobe(struct mh_split *sp, uint64_t now) {
  for (int i = 0; i < sp->net.nifaces && sp->state == SP_MANAGED; i++) {
    uint32_t bit = 1u << i;
    if (sp->net.lost & bit && mh__alive_count(sp, i))
      sp->net.lost &= ~bit; /* it carries again (another leg there, or one the drive opened) */
    if (!(sp->net.lost & bit) || (sp->net.down & bit) || mh__slow_on(sp, i) ||
        mh__since(now, sp->net.lost_us[i]) < (MH__REPROBE_US << sp->net.reprobes[i]))
      continue;
    sp->net.lost &= ~bit;
    if (sp->net.reprobes[i] >= MH__REPROBE_MAX ||
        sched_ledger_bytes(sched_ledger(sp->sched), SCHED_MISSING, SCHED_NOBODY) < sp->cfg->min_split_size)
      continue;
    sp->net.reprobes[i]++;
    mh_info("split %u: %s lost its connections: tried again (%u of %d)", sp->id, sp->net.ifaces[i].name,
            sp->net.reprobes[i], MH__REPROBE_MAX);
    mh__note(sp, "reprobe");
    mh__net_admit(sp, i);
  }
}

/* Every tick of a split that fetches ranges (mh__tick): the engine's network changes since the
 * last one, then the re-probes due. */
void mh__net_tick(struct mh_split *sp, uint64_t now) {
  if (!mh__net_on(sp))
    return;
  if (sp->net.gen != sp->env->paths->net_gen) {
    sp->net.gen = sp->env->paths->net_gen;
    mh__net_refresh(sp);
  }
  mh__net_reprobe(sp, now);
}
