/* Connect-time path usability: which interfaces a new connection may be bound to, from the kernel's route answers (pure). */
#ifndef MHTTP_POLICY_CONNECT_H
#define MHTTP_POLICY_CONNECT_H

#include <stdint.h>

/*
 * Why a route check: binding the source address of a non-default interface makes packets
 * leave through it only where source-based policy routing exists (`ip rule from ADDR lookup
 * T`, as the testbed sets up and as multi-homed hosts should). On a host without such rules
 * the kernel would route the packet out of the default interface with a foreign source
 * address (dropped by rp_filter or the ISP). So an interface is usable for a destination
 * only when the kernel's route for (that source, destination) leaves through that very
 * interface; and nothing is bound when the pick is the kernel's own choice anyway.
 *
 * The engine asks the kernel (multihttp/paths/mh_choose.c: rtnetlink RTM_GETROUTE) and passes the
 * answers here; this file decides.
 */

/* The kernel's answers for one destination and n interfaces (n <= 32). */
struct pol_routes {
  unsigned n;
  const unsigned *ifindex; /* ifindex[i] of interface i, 0 unknown */
  const int *oif;          /* oif[i]: output ifindex of the route from interface i's address, -1 none */
  int kernel_oif;          /* output ifindex of the route without a source, -1 none */
  int kernel_via;          /* that route goes through a gateway (0: dst is on one of our links) */
};

/* Fills *usable (bit i: the route from interface i's address leaves through interface i)
 * and *kernel (the index of the interface the kernel's own route takes, -1 when it is none
 * of them). Returns 0, or -1 when the connection must be left to the kernel: no route, or a
 * destination on one of our links (a gateway, the local resolver), which is reachable
 * through that link only, whatever another interface's table says. */
int pol_connect_usable(const struct pol_routes *r, uint32_t *usable, int *kernel);

#endif
