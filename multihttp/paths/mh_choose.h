/* Connect-time source choice: which interface a program's new TCP connection leaves from (routes, interfaces and metrics gathered here, the decision policy/'s), in one call any thread may make. */
#ifndef MH_CHOOSE_H
#define MH_CHOOSE_H
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include "mh_path.h"
#include "policy/pending.h"
#include "policy/policy.h"
#include "policy/trust.h"

struct mh_config;
struct mh_paths;

/*
 * The shim calls mh_choose_source inside the program's connect(), on the program's thread,
 * before the real connect; it binds the answer itself. Nothing here touches the program's
 * socket: the route look-ups use a netlink socket of their own, closed before returning.
 * Never blocks on the engine (the metrics come from its published snapshot or the host-wide
 * store, neither of which waits), never allocates but inside getifaddrs.
 */

/* What the choices of one engine share, across calls and threads (its struct mh_paths holds
 * one). Zeroed = ready. */
struct mh_choose {
  struct pol_pending pending; /* connections placed since the engine's last metrics snapshot */
  _Atomic unsigned rr;        /* the round-robin cursor: each call runs its own copy of the
                                * policy (a struct pol belongs to one thread), only this moves */
};

/* The answer for one connect(). */
struct mh_choice {
  int n;                          /* usable interfaces of the destination's family; -1 when it
                                    * did not look (loopback, no route, on-link, an error) */
  struct sockaddr_storage bind;   /* the source address to bind (port 0); AF_UNSPEC: leave the
                                    * source to the kernel */
  struct sockaddr_storage kernel; /* the address of the interface the kernel's route takes,
                                    * AF_UNSPEC when unknown: where the connection leaves from
                                    * when nothing is bound (or the bind fails) */
  char ifname[POL_IFNAME_MAX];    /* bind's interface (the caller's log) */
};

/* The choice, with one engine's paths, for a new TCP connection to dst (AF_INET/AF_INET6, len
 * complete) whose source the program left to the kernel: their configuration, published
 * metrics and host-wide store, pending load. Fills *out and returns out->n. Any thread; preserves
 * errno. */
int mh_choose_source(struct mh_paths *paths, const struct sockaddr *dst, socklen_t len, struct mh_choice *out);

/* What mh_choose_source found out about one destination: the pure decision's input. */
struct mh_choose_facts {
  unsigned n; /* interfaces of its family, in preference order */
  const char *names[MH_MAX_IFACES];
  uint32_t usable;                           /* bit i: routable from interface i (pol_connect_usable) */
  int kernel;                                /* index of the kernel's route's interface, -1 unknown */
  struct pol_path m[MH_MAX_IFACES];          /* metrics, this process's pending load included */
  int port;                                  /* destination port */
  enum pol_trust_state trust[MH_MAX_IFACES]; /* each path's word about this destination */
  enum pol_link link[MH_MAX_IFACES];         /* the system's connectivity of each (mh_netstate.h) */
};

/* The decision (mh_choose_decide). */
struct mh_choose_pick {
  int iface;           /* index to bind, -1: leave it to the kernel */
  int probe;           /* decided for the probe of a connection the engine will take over */
  uint64_t size;       /* the size the policy decided for */
  struct pol_choice c; /* the policy's choice when it made one */
  const char *policy;  /* its name */
};

/* Pure: the pick for facts f under cfg, with a uniform draw in [0, 1) and the round-robin
 * cursor *rr (read and moved). Only the kernel's path and paths that agreed with another about
 * this destination and whose link the system does not rule out are candidates
 * (pol_trust_bindable); single:IF is the user's own choice and binds IF regardless. A connection the engine will take over (an eligible port,
 * splitting on, no intent size) is decided for its probe's size with the load counted
 * (mh_policy_probe_pick), any other for the intent size (mh_policy_connect_pick). Returns 0,
 * or -1 when the configured policy cannot be built (out->iface = -1). */
int mh_choose_decide(const struct mh_config *cfg, const struct mh_choose_facts *f, double draw, unsigned *rr,
                     struct mh_choose_pick *out);

#endif
