/* The engine: one libuv loop on one thread, started lazily, fed taken-over connections by program threads. */
#ifndef MH_ENGINE_H
#define MH_ENGINE_H

struct mh_conn;
struct mh_config;
struct sockaddr_storage;
struct mdns_sockfns;

/* 1 on the engine's loop thread, 0 elsewhere. The shim's hooks read it first so the engine's
 * own libc calls (libuv's included) go straight to libc. initial-exec: no allocation on access. */
extern __thread int mh_engine_thread_flag __attribute__((tls_model("initial-exec")));

/* Hooks the embedding (the shim) sets before the first submit. own_fd is told about every
 * descriptor the engine creates (loop, pipes), so a forked child can close them. */
struct mh_engine_hooks {
  void (*own_fd)(int fd);
  /* The configuration the engine reads (splitting, interfaces, window…); NULL = defaults.
   * Must outlive the engine. */
  const struct mh_config *cfg;
  /* The program's own getaddrinfo answer for host: up to max addresses into out, returns how
   * many (0 when unknown). Called on the loop thread; NULL = none known. multiDNS later adds
   * per-interface answers behind the same question. */
  int (*lookup)(const char *host, struct sockaddr_storage *out, int max);
  /* The socket calls multiDNS's resolvers make: the embedding's real (un-interposed) libc
   * symbols, so resolver sockets never pass through the shim's hooks. NULL = libc. */
  const struct mdns_sockfns *dns_sock;
  /* Tests only: split even when the program's connection is the one path to its server (a
   * loopback origin), so the probe's state machine runs against canned answers. */
  int split_one_path;
};
void mh_engine_set_hooks(const struct mh_engine_hooks *hooks);

/* The configuration in force (the embedding's, else built-in defaults). Loop thread. */
const struct mh_config *mh_engine_config(void);
/* The addresses the program resolved for host (see mh_engine_hooks.lookup). Loop thread. */
int mh_engine_lookup(const char *host, struct sockaddr_storage *out, int max);

/* mh_engine_hooks.split_one_path. */
int mh_engine_split_one_path(void);

/* mh_engine_hooks.dns_sock (NULL when unset). */
const struct mdns_sockfns *mh_engine_dns_sock(void);

/* Wakes the loop when it runs (queued DNS notes, mh_dns.h); never starts it. Any thread. */
void mh_engine_poke(void);

/* Tells the embedding about an engine-owned descriptor (engine code calls this). */
void mh_engine_own_fd(int fd);

/* Hands a taken-over connection to the engine: prog_fd is the engine's end of the program's
 * socketpair, up_fd the connected TCP socket. On success ownership of both fds and of one
 * conn reference passes to the engine; on failure the caller keeps them. Starts the loop
 * thread on first use. 0 or -errno. Any thread. */
int mh_engine_submit(int prog_fd, int up_fd, struct mh_conn *conn);

/* The program connected to dst (an eligible port) from local: asks the loop, without waiting
 * for it, to pre-connect every other interface to dst and park those connections in the pool
 * (mh_pool_preconnect), so a split's extra legs find them established. Starts the loop thread
 * on first use. 0 or -errno. Any thread. */
struct sockaddr;
int mh_engine_preconnect(const struct sockaddr *dst, unsigned dst_len, const struct sockaddr *local,
                         unsigned local_len);

/* Waits up to timeout_ms until every session handed the program's written bytes to the
 * kernel (used at exit). 0 when drained, -ETIMEDOUT otherwise, 0 when never started.
 * Any thread but the loop thread. */
int mh_engine_drain(unsigned timeout_ms);

/* In a forked child: forget the parent's engine (its thread does not exist here) so the next
 * submit starts a fresh one. The embedding closes the parent's engine fds itself. */
void mh_engine_forget_after_fork(void);

/* Number of live sessions (tests, logs). Loop thread or racy read. */
unsigned mh_engine_sessions(void);

#endif
