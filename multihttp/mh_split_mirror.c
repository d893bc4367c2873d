/* A split's mirrors and pinned replicas: taken from its owner at start, their addresses per interface, and a mirror that answers otherwise leaving the object. */
#include "mh_split_int.h"
#include "mh_dns.h"
#include "mh_log.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

/* The owner's pins, each with the interfaces it serves on (those of the split it names; a pin
 * on an interface the split does not use is left out). */
void mh__pins_copy(struct mh_split *sp, const struct mh_split_owner *own) {
  for (unsigned k = 0; k < own->npins && sp->sv.npins < MH_SPLIT_PINS; k++) {
    const struct mh_split_pin *p = &own->pins[k];
    uint32_t on = 0;
    for (int i = 0; i < sp->net.nifaces; i++)
      if (!p->iface || !strcmp(p->iface, sp->net.ifaces[i].name))
        on |= 1u << i;
    if (!on)
      continue;
    sp->sv.pin[sp->sv.npins] = p->addr;
    sp->sv.pin_ifaces[sp->sv.npins++] = on;
  }
  sp->own.pins = NULL; /* copied: the owner's array need not outlive the start */
  sp->own.npins = 0;
}

/* Pinned replicas serving on interface i (ports zero, as a resolver's answer): up to max. */
int mh__pins_on(const struct mh_split *sp, int i, struct sockaddr_storage *out, int max) {
  int n = 0;
  for (int k = 0; k < sp->sv.npins && n < max; k++)
    if (sp->sv.pin_ifaces[k] >> i & 1)
      out[n++] = sp->sv.pin[k];
  return n;
}

/* The owner's mirrors, each with its pool key; one whose key does not fit never joins. */
void mh__mirrors_copy(struct mh_split *sp, const struct mh_split_owner *own) {
  sp->sv.nmirrors = own->nmirrors < MH_SPLIT_MIRRORS ? own->nmirrors : MH_SPLIT_MIRRORS;
  for (unsigned m = 0; m < sp->sv.nmirrors; m++)
    if (mh_pool_xport_key(own->mirrors[m].tls, sp->sv.mxport[m], sizeof sp->sv.mxport[m]) < 0)
      sp->sv.mirror_bad |= 1u << m;
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
  int n = mh_dns_addrs(sp->eng->dns, mr->name, ifname, got, 16);
  int waiting = now < sp->sv.dns_hold_until_us && mh_dns_waiting(sp->eng->dns, ifname);
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
  for (unsigned m = 0; m < sp->sv.nmirrors; m++) {
    if (sp->sv.mirror_bad >> m & 1)
      continue;
    const struct mh_split_mirror *mr = &sp->own.mirrors[m];
    for (int i = 0; i < sp->net.nifaces; i++) {
      struct sockaddr_storage use[16];
      int k = mh__mirror_addrs(sp, mr, i, now, use, 16);
      mh__replica_legs(sp, i, (int)m + 1, mr->name, use, k);
    }
  }
}

/* Mirror k answered for another representation or unusably (why): it leaves the object on
 * every interface, its ranges in flight are asked again elsewhere (sched_conn_failed through
 * mh__leg_fail), and it never gets a leg again. Never different bytes: a body byte counts only
 * after its answer's head matched the probe's length and validator (mh__range_head). */
void mh__mirror_drop(struct mh_split *sp, int mirror, const char *why) {
  if (!(sp->sv.mirror_bad >> (mirror - 1) & 1)) {
    sp->sv.mirror_bad |= 1u << (mirror - 1);
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
