/* Receive-window clamp for a split's extra upstream connections: what their senders may have in flight, from the path's recorded bandwidth-delay product (DRWA on the receiver side). */
#ifndef MH_RWND_H
#define MH_RWND_H
#include <stdint.h>

/* Smallest clamp ever set: Linux's default initial receive window. Below it a badly measured
 * path would be held under what an unclamped connection opens with. */
#define MH_RWND_MIN (64u * 1024u)
/* Largest: past this the clamp bounds nothing a testbed or a real access link needs. */
#define MH_RWND_MAX (64u * 1024u * 1024u)

/* The factor by default (MHTTP_RWND_CLAMP): see bench/split/README.md for the measurements. */
#define MH_RWND_K_DEFAULT 1.5

/* The TCP_WINDOW_CLAMP in bytes for a connection on a path whose minimum SRTT is srtt_min_us
 * and maximum recent download rate max_rate (bytes/s): k x their product, in
 * [MH_RWND_MIN, MH_RWND_MAX]. 0 (set nothing) when k <= 0 or either metric is unknown (0) or
 * not a finite positive number. With k >= 2 the path can always show twice its recorded rate,
 * so an under-measured rate is not pinned by the clamp it produced. Pure. */
uint32_t mh_rwnd_clamp(uint64_t srtt_min_us, double max_rate, double k);

/* The clamp after a connection clamped at w delivered `bytes` over `elapsed_us` (at least
 * two srtt_min_us, else w is kept): doubled (up to MH_RWND_MAX) when that is at least 90 % of
 * what w allows at the minimum RTT, since then the window, not the path, was the limit (the
 * recorded rate was too low); else w. A correctly measured path never gets there: it cannot
 * deliver more than its rate, i.e. w / k per srtt_min. Pure. */
uint32_t mh_rwnd_grow(uint32_t w, uint64_t bytes, uint64_t elapsed_us, uint64_t srtt_min_us);

#endif
