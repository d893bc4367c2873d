/* What the policy/ files share among themselves: the policy tables and the model's private helpers. */
#ifndef MHTTP_POLICY_INTERNAL_H
#define MHTTP_POLICY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "policy/policy.h"

extern const struct pol_ops pol__single_ops;
extern const struct pol_ops pol__round_robin_ops;
extern const struct pol_ops pol__eaf_ops;
extern const struct pol_ops pol__threshold_ops;
extern const struct pol_ops pol__biased_ops;

/* Latency part of a small object: min SRTT × (1 if an idle connection is reused, 2 if a new
 * one needs its handshake first). -1 without an RTT estimate. */
double pol__latency_us(const struct pol_path *pp);

/* Threshold's free capacity (IANS fn. 7): max_rate / (conns · usage + 1) with usage =
 * min(1, cur_rate / max_rate), so idle connections do not count as competitors. -1 unknown. */
double pol__free_capacity(const struct pol_path *pp);

/* The RTT a longer load will see: median SRTT, else minimum. 0 unknown. */
uint64_t pol__load_rtt(const struct pol_path *pp);

/* Index of the eligible path with the smallest t[i] >= 0 (lowest index on ties), or -1. */
int pol__argmin(const struct pol_view *v, const bool *eligible, const double *t);

/* When predictions cannot tell: the eligible path with the lowest latency part; when no
 * eligible path has been measured at all (a cold start), the eligible paths in turn from
 * p->rr_next, which then moves past the one chosen. Writes its latency part (or -1) to
 * *pred. Returns the index or -ENETUNREACH. */
int pol__fallback(struct pol *p, const struct pol_view *v, const bool *eligible, double *pred);

/* How long pp's reusable connection needs for the bytes already asked on it (pol_path.busy)
 * at `rate` bytes/s, in µs; 0 when it has none. */
double pol__busy_us(const struct pol_path *pp, double rate);

/* The body bytes a slow-start round of `window` bytes carries: less round_overhead, never
 * below half. */
double pol__round_payload(const struct pol *p, double window);

/* The most connections pol_path_conns models on one path. */
#define POL_CONNS_MAX 8

/* A path's delivery curve: bytes arrive from start_us on, at `rate` bytes/µs, either
 * steadily (init_window 0) or in slow-start rounds of init_window, doubling per rtt_us,
 * each round arriving at `burst` (0: `rate`), until a round reaches rate·rtt_us. A burst above
 * the rate is one connection of several on a path: its round's window comes at the path's
 * rate while the others wait for their next round, and its share of the path is the rate. */
struct pol__curve {
  double start_us;
  double rtt_us;
  double rate;
  double init_window;
  double burst;
};

/* Time at which n curves together have delivered `bytes` (0 if bytes is 0); -1 if their
 * rates are all 0. */
double pol__finish_us(const struct pol__curve *c, unsigned n, double bytes);

/* Bytes one curve has delivered by time t. */
double pol__curve_bytes(const struct pol__curve *c, double t);

/* The curve of a path that is not carrying the transfer yet: its load RTT and the rate
 * share max_rate/(transfers+1); a reused connection streams from 1 RTT on, a new one starts
 * after its handshake (2 RTT) in slow start. Returns false without metrics. */
bool pol__path_curve(const struct pol *p, const struct pol_path *pp, struct pol__curve *c);

/* Is with_us a gain worth paying for: strictly faster, by at least `gain` of without_us. */
bool pol__worth(double without_us, double with_us, double gain);

#endif
