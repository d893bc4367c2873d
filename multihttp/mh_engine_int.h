/* Private to multihttp/: struct mh_engine, everything one engine instance owns, reached through a session's, a split's or an upstream's loop. */
#ifndef MH_ENGINE_INT_H
#define MH_ENGINE_INT_H
#include <pthread.h>
#include <uv.h>

#include "mh_config.h"
#include "mh_engine.h"
#include "mh_paths.h"
#include "mh_split.h"
#include "mh_upstream.h"

struct mh__pending;
struct mh_session;

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

  /* -- any thread -- */
  int wake_fd; /* eventfd the loop polls (mh_engine_poke); -1 until started */
  /* what is known of the networks: metrics, store, DNS, pool, policy (mh_paths.h says which
     part which thread may touch) */
  struct mh_paths paths;

  /* -- the loop thread only -- */
  uv_loop_t loop; /* loop.data points back here (mh_engine_of) */
  int loop_ok;    /* uv_loop_init succeeded */
  struct mh__engine_watch watch;
  pthread_t thread;
  struct mh_session *sessions;
  unsigned nsessions;
  unsigned next_session_id;
  struct mh_split_env splits;   /* what every split works with (the reassembly budget, the
                                   tainted objects, the leg read buffer) */
  char *scratch;                /* one session read before framing (MH_ENGINE_IO bytes) */
  struct mh_upstream_env upenv; /* what every upstream of the engine is made with: its
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
