/* Connections the shim placed on each interface that the engine's published metrics cannot count yet (pure, lock-free). */
#ifndef SHIM_LOAD_H
#define SHIM_LOAD_H

#include <stdatomic.h>
#include <stdint.h>

#define SHIM_LOAD_IFACES 8
#define SHIM_LOAD_SLOTS 32

/* Why: a browser-like program opens its six connections within a millisecond, before any of
 * them carries a transfer; the engine's published transfers (every 100 ms) then say every
 * path is idle and the policy sends all six to the same path. Each placement is noted here
 * with its time; a placement after the snapshot's time (less the time a connection takes to
 * carry its first transfer) is load the snapshot does not show. */
struct shim_load {
  _Atomic uint64_t t[SHIM_LOAD_IFACES][SHIM_LOAD_SLOTS];  /* placement times, µs; 0 = none */
  _Atomic unsigned next[SHIM_LOAD_IFACES];
};

/* A connection was placed on interface iface at time now_us (monotonic, > 0). Any thread; the
 * oldest of an interface's SHIM_LOAD_SLOTS notes is overwritten. */
void shim_load_note(struct shim_load *l, int iface, uint64_t now_us);

/* Placements on iface strictly after since_us and not after now_us (notes from the future,
 * a clock read before a racing note, do not count twice). */
unsigned shim_load_pending(struct shim_load *l, int iface, uint64_t since_us, uint64_t now_us);

/* since_us for an interface: placed before the snapshot at pub_us by more than the time a new
 * connection needs to start its transfer (handshake and request: 2 round trips of srtt_us;
 * 200 ms when the path has no round trip yet), the snapshot counts it. */
uint64_t shim_load_since(uint64_t pub_us, uint64_t srtt_us);

#endif
