/* Pending load: connections placed on each interface at connect time that the engine's published metrics cannot count yet (pure, lock-free). */
#ifndef MHTTP_POLICY_PENDING_H
#define MHTTP_POLICY_PENDING_H

#include <stdatomic.h>
#include <stdint.h>

#include "policy.h"

#define POL_PENDING_IFACES POL_MAX_IFACES
#define POL_PENDING_SLOTS 32

/* Why: a browser-like program opens its six connections within a millisecond, before any of
 * them carries a transfer; the engine's published transfers (every 100 ms) then say every
 * path is idle and the policy sends all six to the same path. Each placement is noted here
 * with its time; a placement after the snapshot's time (less the time a connection takes to
 * carry its first transfer) is load the snapshot does not show. The record is shared by
 * every thread that places connections (connect() runs on the program's threads), hence
 * atomics rather than a lock: a placement never waits. Zeroed = empty. */
struct pol_pending {
  _Atomic uint64_t t[POL_PENDING_IFACES][POL_PENDING_SLOTS]; /* placement times, µs; 0 = none */
  _Atomic unsigned next[POL_PENDING_IFACES];
};

/* A connection was placed on interface iface at time now_us (monotonic, > 0). Any thread; the
 * oldest of an interface's POL_PENDING_SLOTS notes is overwritten. */
void pol_pending_note(struct pol_pending *l, int iface, uint64_t now_us);

/* Placements on iface strictly after since_us and not after now_us (notes from the future,
 * a clock read before a racing note, do not count twice). */
unsigned pol_pending_count(struct pol_pending *l, int iface, uint64_t since_us, uint64_t now_us);

/* since_us for an interface: placed before the snapshot at pub_us by more than the time a new
 * connection needs to start its transfer (handshake and request: 2 round trips of srtt_us;
 * 200 ms when the path has no round trip yet), the snapshot counts it. */
uint64_t pol_pending_since(uint64_t pub_us, uint64_t srtt_us);

#endif
