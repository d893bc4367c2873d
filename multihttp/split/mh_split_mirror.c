/* A split's mirrors and pinned replicas: taken from its owner at start, their addresses per interface, and a mirror that answers otherwise leaving the object. */
#include "split_core.h"
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

/* The owner's mirrors, each with its pool key; one whose key does not fit never joins. */
void mh__mirrors_copy(struct mh_split *sp, const struct mh_split_owner *own) {
  sp->sv.nmirrors = own->nmirrors < MH_SPLIT_MIRRORS ? own->nmirrors : MH_SPLIT_MIRRORS;
  for (unsigned m = 0; m < sp->sv.nmirrors; m++)
    if (mh_pool_xport_key(own->mirrors[m].tls, sp->sv.mxport[m], sizeof sp->sv.mxport[m]) < 0)
      sp->sv.mirror_bad |= 1u << m;
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
