/* Private to multihttp/: struct mh_engine, everything one engine instance owns, reached through a session's, a split's or an upstream's loop. */
#ifndef MH_ENGINE_INT_H
#define MH_ENGINE_INT_H
#include <pthread.h>
#include <uv.h>

#include "mh_choose.h"
#include "mh_config.h"
#include "mh_engine.h"
#include "mh_reasm.h"
#include "mh_taint.h"
#include "mh_upstream.h"
#include "policy/policy.h"

struct mh__pending;
struct mh_session;
struct mh_pool;
struct mh_netwatch;
struct mh_metrics;
struct mh_mstore;
struct mh_netstate;
struct mh_dns;

/* One engine. Nothing in multihttp/ keeps mutable state outside it (read-only tables such as
 * state names and llhttp settings are process-wide constants), so engines in one process
 * share nothing but the log. Who may touch what: */
/* Program threads and the loop: what they share, under mu. */
struct mh__engine_sync {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int started;  /* the loop thread runs */
  int stopping; /* mh_engine_free: the loop closes everything and ends */
  struct mh__pending *q_head, *q_tail;
  int drain_req, drain_done;
};

/* The loop's own handles. */
struct mh__engine_watch {
  uv_poll_t wake;
  uv_timer_t drain_timer;
  uv_timer_t orphan_timer; /* notices when the program's threads are all gone */
  int orphan_ticks;
};

struct mh_engine {
  /* -- set by mh_engine_new, read-only afterwards (any thread) -- */
  struct mh_engine_hooks hooks;
  const struct mh_config *cfg; /* hooks.cfg, else cfg_default */
  struct mh_config cfg_default;

  struct mh__engine_sync sync;

  /* -- any thread, each with its own lock or none needed -- */
  int wake_fd;                  /* eventfd the loop polls (mh_engine_poke); -1 until started */
  struct mh_metrics *metrics;   /* collectors (loop) and the published snapshot (any thread) */
  struct mh_mstore *mstore;     /* the process copy of the host-wide metrics store */
  struct mh_netstate *netstate; /* the system's connectivity per device (refresh: loop; read: any) */
  struct mh_dns *dns;           /* the program's lookups (any thread) and the resolvers (loop) */
  struct mh_choose choose;      /* connect-time choices' shared load and cursor (atomics) */

  /* -- the loop thread only -- */
  uv_loop_t loop; /* loop.data points back here (mh_engine_of) */
  int loop_ok;    /* uv_loop_init succeeded */
  struct mh__engine_watch watch;
  pthread_t thread;
  struct mh_session *sessions;
  unsigned nsessions;
  unsigned next_session_id, next_split_id;
  struct pol pol;                /* the policy (its round-robin cursor moves per object) */
  struct mh_pool *pool;          /* idle keep-alive and pre-connected upstreams */
  struct mh_netwatch *netwatch;  /* rtnetlink events (mh_netwatch.c); NULL: none */
  unsigned net_gen;              /* bumped at each change of the interface table: a split
                                    whose copy is older refreshes it (mh_split_net.c) */
  struct mh_reasm_budget budget; /* bytes every object's reassembly holds, and the window */
  struct mh_taint taint;         /* objects whose split failed the origin's digest */
  char *scratch;                 /* one session read before framing (MH_ENGINE_IO bytes) */
  char *io;                      /* one leg read before framing (MH_ENGINE_IO bytes) */
  struct mh_upstream_env upenv;  /* what every upstream of the engine is made with: its
                                    sockets announced (own_fd), the metrics watching
                                    (upobs), the TLS transport's multi handle (never in
                                    the shim) */
  struct mh_upstream_observer upobs;
};

/* The size of the engine's two read buffers. */
#define MH_ENGINE_IO (128 * 1024)

/* The engine of a loop it runs (libuv leaves loop->data to its user); NULL for a loop no
 * engine owns (unit tests driving a component on their own loop). */
static inline struct mh_engine *mh_engine_of(const uv_loop_t *loop) { return loop ? loop->data : NULL; }

#endif
