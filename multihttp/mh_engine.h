/* The engine: one instance (struct mh_engine) with one libuv loop on one thread, started lazily, fed taken-over connections by program threads. */
#ifndef MH_ENGINE_H
#define MH_ENGINE_H

struct mh_engine;
struct mh_conn;
struct mh_config;
struct mh_metrics;
struct mh_mstore;
struct mh_dns;
struct mh_upstream_env;
struct mh_paths;
struct mh_split_env;
struct sockaddr;
struct sockaddr_storage;
struct mdns_sockfns;
struct uv_loop_s;
typedef struct uv_loop_s uv_loop_t;

/* 1 on any engine's loop thread, 0 elsewhere. The shim's hooks read it first so the engine's
 * own libc calls (libuv's included) go straight to libc. initial-exec: no allocation on access. */
extern __thread int mh_engine_thread_flag __attribute__((tls_model("initial-exec")));

/* What the embedding (the shim, a test, the API) gives an engine when it creates it. own_fd
 * is told about every descriptor the engine creates (loop, wake-up, pipes, sockets), so the
 * embedding can keep its hooks off them and a forked child can close them. */
struct mh_engine_hooks {
  void (*own_fd)(int fd);
  /* The configuration the engine reads (splitting, interfaces, window…); NULL = defaults.
   * Must outlive the engine. */
  const struct mh_config *cfg;
  /* The socket calls multiDNS's resolvers make: the embedding's real (un-interposed) libc
   * symbols, so resolver sockets never pass through the shim's hooks. NULL = libc. */
  const struct mdns_sockfns *dns_sock;
  /* Tests only: split even when the program's connection is the one path to its server (a
   * loopback origin), so the probe's state machine runs against canned answers. */
  int split_one_path;
  /* The embedding runs the loop itself (the API's embedded sessions: mh_engine_loop, then
   * uv_run on the caller's thread): no loop thread is ever started, submissions and calls wait
   * in the queue until the embedding runs the loop, and the orphan check (which ends a process
   * whose threads are all gone but the loop's) is off, since the caller's thread is the loop's. */
  int embedded;
  /* Called first on the loop thread when it starts (NULL: nothing): the API library tells a
   * preloaded shim there that this thread's libc calls are an engine's. */
  void (*thread_init)(void);
};

/* Creates an engine (hooks copied; may be NULL). Its loop thread starts on the first submit
 * or pre-connect, so an engine nobody uses costs no thread and no descriptor. 0 or -ENOMEM.
 * Any thread. */
int mh_engine_new(const struct mh_engine_hooks *hooks, struct mh_engine **out);
/* Stops the loop thread (every session reset, every pooled connection and resolver closed),
 * closes every descriptor the engine owns and frees everything. No other call on e may run or
 * follow. Any thread but e's loop thread. NULL is a no-op. */
void mh_engine_free(struct mh_engine *e);

/* The configuration in force (the embedding's, else built-in defaults). Any thread. */
const struct mh_config *mh_engine_config(const struct mh_engine *e);

/* The engine's parts program threads may use (the shim's connect-time choice reads the
 * published metrics and the store; its getaddrinfo hook feeds the resolvers): each is
 * documented in its own header (mh_metrics.h, mh_mstore.h, mh_dns.h). Any thread. */
struct mh_metrics *mh_engine_metrics(struct mh_engine *e);
struct mh_mstore *mh_engine_mstore(struct mh_engine *e);
struct mh_dns *mh_engine_dns(struct mh_engine *e);

/* The engine's paths (mh_paths.h): what the shim's connect-time choice (mh_choose_source) and
 * an owner's replacement connection (mh_pool_dial) use. Any thread (each part says which). */
struct mh_paths *mh_engine_paths(struct mh_engine *e);
/* What an owner lends every split it starts (mh_split_owner.env). Loop thread. */
struct mh_split_env *mh_engine_split_env(struct mh_engine *e);

/* What an owner makes the engine's upstreams with (mh_upstream.h): their sockets announced
 * to the embedding, the metrics observing them. Loop thread. */
struct mh_upstream_env *mh_engine_upstream_env(struct mh_engine *e);

/* Wakes the loop when it runs (queued DNS notes, mh_dns.h); never starts it. Any thread. */
void mh_engine_poke(struct mh_engine *e);

/* Tells the embedding about a descriptor the engine owns (engine code calls this). */
void mh_engine_own_fd(const struct mh_engine *e, int fd);

/* Hands a taken-over connection to the engine: prog_fd is the engine's end of the program's
 * socketpair, up_fd the connected TCP socket. On success ownership of both fds and of one
 * conn reference passes to the engine; on failure the caller keeps them. Starts the loop
 * thread on first use. 0 or -errno. Any thread. */
int mh_engine_submit(struct mh_engine *e, int prog_fd, int up_fd, struct mh_conn *conn);

/* The program connected to dst (an eligible port) from local: asks the loop, without waiting
 * for it, to pre-connect every other interface to dst and park those connections in the pool
 * (mh_pool_preconnect), so a split's extra legs find them established. Starts the loop thread
 * on first use. 0 or -errno. Any thread. */
int mh_engine_preconnect(struct mh_engine *e, const struct sockaddr *dst, unsigned dst_len,
                         const struct sockaddr *local, unsigned local_len);

/* Queues fn(arg) to run on the loop (in order with submissions) and wakes it; starts the loop
 * thread on first use unless embedded. A call still queued when the engine is freed is dropped
 * without running. 0 or -errno. Any thread. */
int mh_engine_call(struct mh_engine *e, void (*fn)(void *), void *arg);

/* The engine's loop, initialised on first need (its wake-up and timers in it), without
 * starting a thread: for an embedding that runs it (hooks.embedded) and for code on the loop
 * thread. NULL when it cannot be made. Any thread. */
uv_loop_t *mh_engine_loop(struct mh_engine *e);

/* Waits up to timeout_ms until every session handed the program's written bytes to the
 * kernel (used at exit). 0 when drained, -ETIMEDOUT otherwise, 0 when never started.
 * Any thread but the loop thread. */
int mh_engine_drain(struct mh_engine *e, unsigned timeout_ms);

/* The one fork handler: in a forked child (a program thread; the parent's loop thread does
 * not exist here and any lock it held stays held), forgets everything e had: its loop,
 * sessions, pooled connections, metrics, resolvers, queued lookups and the store copy
 * (their memory is abandoned on purpose: touching it could deadlock or follow pointers a
 * dying thread left half-changed). The next submit starts a fresh loop thread. Descriptors:
 * every one e owned was announced through hooks.own_fd when it was made, so the embedding
 * closes those it learned of and did not see closed (the shim's close() hook sees the engine's
 * own closes; an embedding that cannot must not fork without exec). The engine does not: the
 * numbers it would read from its abandoned state are what is in doubt. 0, or -ENOMEM when the fresh parts could not be
 * made: then the embedding must not use e again (submits fail, parts may be missing). */
int mh_engine_fork_child(struct mh_engine *e);

/* Number of live sessions (tests, logs). Loop thread or racy read. */
unsigned mh_engine_sessions(const struct mh_engine *e);

#endif
