/* Receive-window clamp for a split's extra upstream connections: what their senders may have in flight, from the path's recorded bandwidth-delay product (DRWA on the receiver side). */
#ifndef MH_RWND_H
#define MH_RWND_H
#include <stdint.h>

/* Smallest clamp ever set: Linux's default initial receive window. Below it a badly measured
 * path would be held under what an unclamped connection opens with. */
#define MH_RWND_MIN (64u * 1024u)
/* Largest: past this the clamp bounds nothing a testbed or a real access link needs. */
#define MH_RWND_MAX (64u * 1024u * 1024u)

/* Off by default (MHTTP_RWND_CLAMP): the metrics store's max rate is often a fraction of the
 * path's (a short transfer records what it reached), and then the clamp binds and slows the
 * object down (bench/split/README.md has the measurements). */
#define MH_RWND_K_DEFAULT 0.0

/* Objects below this many of the path's BDPs are not clamped: a connection given part of one
 * ends before its slow start can overshoot a 1-BDP queue (that takes about 4 BDP sent), and
 * with bbr origins the clamp made such objects slower (bench/split/README.md). */
#define MH_RWND_MIN_BDPS 8

/* The TCP_WINDOW_CLAMP in bytes for a connection fetching part of an object of `size` bytes on
 * a path whose minimum SRTT is srtt_min_us and maximum recent download rate max_rate
 * (bytes/s): k x their product, in [MH_RWND_MIN, MH_RWND_MAX]. 0 (set nothing) when k <= 0,
 * either metric is unknown (0) or not a finite positive number, size is below
 * MH_RWND_MIN_BDPS x the product, or the record does not look like this path: the
 * connection's own handshake time hs_us is unknown (0) or not within a factor 2 of
 * srtt_min_us (an interface name that now leads elsewhere, e.g. another Wi-Fi network). The path can show k times its recorded rate, and
 * mh_rwnd_grow lifts the clamp when it does, so an under-measured rate is not pinned by the
 * clamp it produced. Pure. */
uint32_t mh_rwnd_clamp(uint64_t size, uint64_t srtt_min_us, uint64_t hs_us, double max_rate, double k);

/* The clamp after a connection clamped at w delivered `bytes` over `elapsed_us` (at least
 * srtt_min_us, else w is kept): doubled (up to MH_RWND_MAX) when that is at least 90 % of what
 * w allows at the minimum RTT, since then the window, not the path, was the limit (the
 * recorded rate was too low: a short transfer records a fraction of the path's rate); else w.
 * Doubling per round trip is slow start's pace, so a low record costs little. A correctly
 * measured path never gets there: it cannot deliver more than its rate, w / k per srtt_min.
 * Pure. */
uint32_t mh_rwnd_grow(uint32_t w, uint64_t bytes, uint64_t elapsed_us, uint64_t srtt_min_us);

#endif
