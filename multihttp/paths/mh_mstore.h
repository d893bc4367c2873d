/* The host-wide metrics store's file: where it lives, its owner and lock checks, the namespace cookie, and an engine's copy re-read at most once a second. */
#ifndef MH_MSTORE_H
#define MH_MSTORE_H
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "policy/store.h"

struct mh_config;
struct mh_mstore;

/*
 * The records and their rules are policy/store.h's; this is the I/O around them. The file is
 * opened, locked (flock), read or rewritten and closed within one call: the preload library
 * keeps no descriptor open in the program. A lock held by another process for more than a
 * few milliseconds (a stopped program) makes the call give up, never wait. Every function
 * may run on any thread (the engine loop, a program thread inside connect()); the engine's
 * loop and the program threads share the engine's copy of the store (struct mh_mstore) behind
 * a mutex that nobody holds across a blocking call.
 */

/* An empty copy. 0 or -ENOMEM. */
int mh_mstore_new(struct mh_mstore **out);
/* NULL: no-op. */
void mh_mstore_free(struct mh_mstore *ms);

/* The store's path for cfg: MHTTP_METRICS_STORE / metrics_store when set, else
 * $XDG_RUNTIME_DIR/mhttp/metrics, /run/mhttp/metrics (root), /tmp/mhttp-UID/metrics.
 * Returns 1 when it is a default path (its directory is created 0700 and checked), 0 for a
 * configured one, -1 when the store is off (or the path does not fit in cap). */
int mh_mstore_path(const struct mh_config *cfg, char *buf, size_t cap);

/* The network namespace cookie of socket fd (SO_NETNS_COOKIE), or 0 when the kernel cannot
 * tell: then nothing is shared (a record could belong to another namespace). */
uint64_t mh_mstore_netns(int fd);

/* Fills k for one path; addr is the interface's local address (AF_INET or AF_INET6). */
void mh_mstore_key(struct pol_store_key *k, uint64_t netns, const char *ifname, unsigned ifindex,
                   const struct sockaddr_storage *addr);

/* The host-wide values of n paths as of now_us (CLOCK_MONOTONIC µs) into out[] (zeroed when
 * unknown), from the copy ms, re-read from the file when older than one second.
 * Returns how many paths have values (0 when the store is off, unreadable or not ours), or
 * -EBUSY with out[] untouched when another thread is using the copy (never waits). */
int mh_mstore_lookup(struct mh_mstore *ms, const struct mh_config *cfg, const struct pol_store_key *keys, unsigned n,
                     uint64_t now_us, struct pol_store_obs *out);

/* Adds observations of n paths (keys[i] with netns 0 or nothing observed are skipped) to the
 * file under an exclusive lock (read, merge, write), creating it 0600 when missing; garbage
 * or another version in the file is replaced. The copy ms becomes what was written.
 * Returns 0 or -errno (-EPERM: not our file; -EWOULDBLOCK: lock busy). */
int mh_mstore_put(struct mh_mstore *ms, const struct mh_config *cfg, const struct pol_store_key *keys,
                  const struct pol_store_obs *obs, unsigned n, uint64_t now_us);

/* Notes path k's trust for destination dest (policy/trust.h) in this process's own view (by
 * k->ifname, also with the store off) and, when that changed what a reader sees, in the file
 * (k->netns 0: not shared). Returns 1 (changed), 0 (nothing new) or -errno / -1. Any thread;
 * may wait for the copy's mutex and a few ms for the file's lock. */
int mh_mstore_trust_note(struct mh_mstore *ms, const struct mh_config *cfg, const struct pol_store_key *k,
                         uint64_t dest, enum pol_trust_state st, uint64_t now_us);

/* The trust of n paths for dest as of now_us into out[]: this process's notes merged with the
 * host-wide file's (re-read when older than one second), the newer word per path. -EBUSY
 * (out[] all unknown) when another thread holds the copy: never waits. Any thread. */
int mh_mstore_trust(struct mh_mstore *ms, const struct mh_config *cfg, const struct pol_store_key *keys, unsigned n,
                    uint64_t dest, uint64_t now_us, enum pol_trust_state *out);

/* Forces the next lookup to re-read the file (tests). */
void mh_mstore_invalidate(struct mh_mstore *ms);

#endif
