/* Metrics collectors: feed policy/'s per-interface store from the engine's upstream sockets, publish a snapshot any thread may read, write MHTTP_METRICS. */
#ifndef MH_METRICS_H
#define MH_METRICS_H
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "policy/policy.h"
#include "policy/train.h"

struct mh_config;
struct mh_upstream;
struct mh_upstream_observer;
struct mh_mstore;
struct mh_metrics;

/*
 * One store per engine (policy/metrics.h), owned by its loop thread. Interface index
 * = position in the engine's interface list: mh_path_ifaces() order for IPv4, then IPv6-only
 * names; an interface seen later is appended (up to POL_MAX_IFACES). Every function but
 * mh_metrics_new, mh_metrics_free, mh_metrics_read and mh_metrics_dump runs on the loop
 * thread; before mh_metrics_start every collector is a no-op.
 */

/* One upstream connection as the collectors know it, zeroed (mh_metrics_observer makes one per
 * counted connection). */
struct mh_metrics_conn {
  struct mh_metrics_conn *prev, *next;
  struct mh_metrics *m;   /* the collectors that counted it (mh_metrics_conn_open) */
  struct mh_upstream *up; /* the connection it describes (asked through mh_upstream_query) */
  int iface;              /* store index, -1 when the local address is on no known interface */
  int registered;
  uint64_t id;
  uint64_t rx;            /* data segments in at the last sample */
  uint64_t rx_at_us;      /* when it was read (0: not yet) */
  struct pol_train train; /* its arrival curve's busy stretches (capacity) */
  uint64_t train_at_us;   /* the last TCP_INFO sample fed to it */
};

/* Collectors with nothing published yet; mstore (the engine's copy of the host-wide store)
 * must outlive them. 0 or -ENOMEM. */
int mh_metrics_new(struct mh_mstore *mstore, struct mh_metrics **out);
/* Creates the store and the 100 ms sampling timer on loop (unref'd: it never keeps the loop
 * alive, and it stops while no connection is open). Called by the engine when its loop is
 * created, before the loop thread runs. 0 or -ENOMEM. */
int mh_metrics_start(struct mh_metrics *m, uv_loop_t *loop, const struct mh_config *cfg);
/* Closes the timer (the engine is stopping): nothing is collected from here on. Loop thread. */
void mh_metrics_stop(struct mh_metrics *m);
/* Frees m (after mh_metrics_stop and the loop's end, or when it never started). NULL: no-op. */
void mh_metrics_free(struct mh_metrics *m);

/* A connection is established on up: counts it on its interface (local address), records
 * handshake_us (0: unknown, e.g. the program's own connection) as its first RTT estimate and
 * a first TCP_INFO sample (m NULL: not counted, a loop without engine). An upstream that cannot tell its local address (MH_UPQ_LOCAL) is
 * not counted; one without TCP_INFO is counted but never sampled. */
void mh_metrics_conn_open(struct mh_metrics *m, struct mh_metrics_conn *c, struct mh_upstream *up,
                          uint64_t handshake_us);
/* c is about to close: a last TCP_INFO sample, then the connection count drops. Idempotent. */
void mh_metrics_conn_close(struct mh_metrics_conn *c);
/* c's socket is readable, before its owner reads: a sample of its arrival curve for the
 * capacity estimate (policy/train.h), at most one per 250 µs per connection (a getsockopt
 * each). No-op for an unregistered connection. */
void mh_metrics_conn_readable(struct mh_metrics_conn *c);

/* The collectors as the observer of every upstream made with the engine's env (struct
 * mh_upstream_observer, mh_upstream.h): each counted connection gets a record of its own,
 * freed when it closes (the three calls above). */
void mh_metrics_observer(struct mh_metrics *m, struct mh_upstream_observer *o);

/* The network namespace cookie the collectors learned from the engine's first connection (0:
 * not known yet, or the kernel cannot tell). Loop thread. */
uint64_t mh_metrics_netns(const struct mh_metrics *m);

/* The store index of interface `name` (added when new), or -1 (store not started or full). */
int mh_metrics_iface(struct mh_metrics *m, const char *name);
/* Active object transfers on an interface: +1 / -1, paired by the caller. */
void mh_metrics_transfer(struct mh_metrics *m, int iface, int delta);
/* The metric fields of *out for interface `iface` as of now; 0 or -EINVAL (unknown index or
 * store not started: *out's metric fields are then zero). */
int mh_metrics_snapshot(struct mh_metrics *m, int iface, struct pol_path *out);

/* What program threads may read (the shim's connect-time choice, the metrics file). */
struct mh_metrics_pub {
  unsigned n;
  char name[POL_MAX_IFACES][POL_IFNAME_MAX];
  struct pol_path path[POL_MAX_IFACES]; /* name pointers NULL: use name[] */
  uint64_t t_us;                        /* when it was published (CLOCK_MONOTONIC, µs) */
};
/* Copies the last published snapshot (published every 100 ms while connections exist, when one
 * closes, and at drain). Non-blocking: a copy under a mutex held only for memcpy. Any thread.
 * 0, or -ENODATA when nothing was published yet (engine never started). */
int mh_metrics_read(struct mh_metrics *m, struct mh_metrics_pub *out);
/* Publishes the store now (loop thread). */
void mh_metrics_publish(struct mh_metrics *m);

/* Appends one JSON line per interface of the published snapshot to cfg->metrics (when set):
 * {"metrics":1,"pid":N,"iface":"wifi0","srtt_min_us":N,"srtt_med_us":N,"max_rate_Bps":N,
 *  "cur_rate_Bps":N,"transfers":N,"conns":N}. Any thread. */
void mh_metrics_dump(struct mh_metrics *m);
/* The last session ended: publish and dump, at most once per second (loop thread); the
 * host-wide store gets this process's observations now. */
void mh_metrics_idle(struct mh_metrics *m);
/* The program is exiting (drain, loop thread): what it observed since its last write goes to
 * the host-wide store now (connections still open would otherwise hold it back up to 1 s). */
void mh_metrics_store_flush(struct mh_metrics *m);

/* Formats one metrics line (pure; tests). Returns its length (< cap) or -1. */
int mh_metrics_format(char *buf, size_t cap, int pid, const char *iface, const struct pol_path *p);

#endif
