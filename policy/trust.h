/* Trust of a path per destination: whether its answers agreed with another path's, and which paths a program's connection may be bound to. Pure. */
#ifndef MHTTP_POLICY_TRUST_H
#define MHTTP_POLICY_TRUST_H

/*
 * Why: choosing a path must never change the answer (DESIGN.md, promise 1). A captive portal,
 * a hijacking resolver or a stale transparent cache answers only on its own network, and a
 * fast path measured there looks as good to the policies as an honest one. So an answer on a
 * path other than the kernel's (where plain would have gone) reaches the program only once
 * that path has agreed with another about this destination: one of its range answers matched
 * the representation (status, length, strong validator) another path gave. A disagreement (a
 * redirect, a 511, an answer without the validator or length the other path saw) marks the
 * path for that destination until it agrees again.
 *
 * A destination is the server address a program connects to (pol_trust_dest: a hash of its
 * family and address). Per path, POL_TRUST_DESTS destinations are remembered (the oldest
 * forgotten first). An agreement counts for POL_TRUST_AGREED_US; a disagreement for
 * POL_TRUST_DISAGREED_US (after which the destination is unknown again: unknown is never
 * trusted either, so forgetting a disagreement never makes a path look good). Time is an
 * argument (any monotonic µs clock shared by the processes, CLOCK_MONOTONIC in practice).
 *
 * A path's connectivity as the system knows it (NetworkManager's per-device check) is a
 * separate input: a path in a portal, limited or without connectivity is never used.
 */

#include <stddef.h>
#include <stdint.h>

#define POL_TRUST_DESTS 8u
#define POL_TRUST_AGREED_US (300ULL * 1000000ULL) /* as long as the metrics count */
#define POL_TRUST_DISAGREED_US (1800ULL * 1000000ULL)
#define POL_TRUST_REFRESH_US (60ULL * 1000000ULL) /* an agreement is re-noted at most this often */

enum pol_trust_state {
  POL_TRUST_UNKNOWN = 0,   /* never compared (or forgotten): not trusted */
  POL_TRUST_AGREED = 1,    /* its last answer for the destination agreed with another path's */
  POL_TRUST_DISAGREED = 2, /* its last answer disagreed */
};

/* The system's view of a path's connectivity (NetworkManager's NMConnectivityState). */
enum pol_link {
  POL_LINK_UNKNOWN = 0, /* no system view (no NetworkManager): the answers decide alone */
  POL_LINK_NONE,
  POL_LINK_PORTAL,
  POL_LINK_LIMITED,
  POL_LINK_FULL,
};

struct pol_trust_ent {
  uint64_t dest;  /* pol_trust_dest; 0: free */
  uint64_t at;    /* when it was noted */
  uint32_t state; /* enum pol_trust_state */
};

/* One path's destinations. Zeroed = nothing known. */
struct pol_trust {
  struct pol_trust_ent e[POL_TRUST_DESTS];
};

/* The destination key of a server address (family AF_INET/AF_INET6 as a number, its 4 or 16
 * address bytes): never 0. */
uint64_t pol_trust_dest(int family, const uint8_t *addr, size_t len);

/* Notes that path t's answer for dest at now_us agreed or disagreed (POL_TRUST_UNKNOWN is
 * ignored). Returns 1 when what a reader would see changed (another state, or an agreement
 * older than POL_TRUST_REFRESH_US renewed): the caller then shares it; 0 otherwise, -1 for
 * dest 0 or an unknown state. */
int pol_trust_note(struct pol_trust *t, uint64_t dest, enum pol_trust_state st, uint64_t now_us);

/* What is known of dest on path t at now_us (expired entries are unknown). */
enum pol_trust_state pol_trust_get(const struct pol_trust *t, uint64_t dest, uint64_t now_us);

/* Takes into *into every entry of *from that is newer than into's for the same destination
 * (the host-wide store's view merged with a process's own). */
void pol_trust_merge(struct pol_trust *into, const struct pol_trust *from);

/* 1 when a path's connectivity as the system reports it rules it out. */
int pol_link_bad(enum pol_link l);

/* The paths (bit i) a program's connection to one destination may be bound to, of n: the
 * kernel's own path (index kernel; -1: unknown) always, any other only when it agreed
 * (st[i] == POL_TRUST_AGREED) and its link (link[i]; NULL: all unknown) is not ruled out. */
uint32_t pol_trust_bindable(const enum pol_trust_state *st, const enum pol_link *link, unsigned n, int kernel);

/* 1 when entry e can be kept in a file image read back at now_us: a known state, a time not
 * in the future, a destination set exactly when used. */
int pol_trust_ent_ok(const struct pol_trust_ent *e, uint64_t now_us);

#endif
