/* The paths layer's state for one engine (struct mh_paths): what the engine knows of its networks, lent to the split, the shim's connect-time choice and the owners. */
#ifndef MH_PATHS_H
#define MH_PATHS_H
#include <uv.h>

#include "mh_choose.h"
#include "policy/policy.h"

struct mh_config;
struct mh_upstream_env;
struct mh_pool;
struct mh_metrics;
struct mh_mstore;
struct mh_netstate;
struct mh_netwatch;
struct mh_dns;

/* The engine holds one (struct mh_engine.paths) and fills it when it is made; the layers above
 * reach the paths only through it, never through the engine. Who may touch what: */
struct mh_paths {
  /* -- set by the engine, read-only afterwards (any thread) -- */
  const struct mh_config *cfg;
  uv_loop_t *loop;             /* the engine's loop: the portal check's handles */
  struct mh_upstream_env *env; /* what upstreams are made with; announces the layer's own sockets */

  /* -- any thread, each with its own lock or none needed -- */
  struct mh_metrics *metrics;   /* collectors (loop) and the published snapshot (any thread) */
  struct mh_mstore *mstore;     /* the process copy of the host-wide metrics store */
  struct mh_netstate *netstate; /* the system's connectivity per device (refresh: loop; read: any) */
  struct mh_dns *dns;           /* the program's lookups (any thread) and the resolvers (loop) */
  struct mh_choose choose;      /* connect-time choices' shared load and cursor (atomics) */

  /* -- the loop thread only -- */
  struct pol pol;               /* the policy (its round-robin cursor moves per object) */
  struct mh_pool *pool;         /* idle keep-alive and pre-connected upstreams */
  struct mh_netwatch *netwatch; /* rtnetlink events (mh_netwatch.c); NULL: none */
  unsigned net_gen;             /* bumped at each change of the interface table: a split or
                                   owner whose copy is older refreshes it */
};

#endif
