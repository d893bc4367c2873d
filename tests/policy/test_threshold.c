/* Threshold (IANS §III-C, metrics paper §4.1): latency- vs capacity-dominated, slow-start rounds for new connections. */
#include <criterion/criterion.h>

#include "tests/policy/paths.h"

/*
 * Hand computation, default initial window 14 600 bytes:
 * wifi: free 250 000 B/s, rate·RTT = 5 000 bytes < 14 600, so no slow start:
 *       t = 20 000 (handshake) + 20 000 + 4·S.
 * lte:  free 2 500 000 B/s, rate·RTT = 250 000 bytes; rounds of 14 600, 29 200, 58 400, …
 *       arriving 1, 2, 3… RTTs after the request, each at 0.4 µs/byte:
 *       14 600 < S <= 43 800:  t = 100 000 + 200 000 + 0.4·(S − 14 600)
 *       43 800 < S <= 102 200: t = 100 000 + 300 000 + 0.4·(S − 43 800) = 382 480 + 0.4·S
 * Crossover with wifi (40 000 + 4·S): 3.6·S = 342 480, S = 95 133.3 — more than twice EAF's
 * 44 444, because lte pays its slow start.
 */
Test(threshold, crossover_with_slow_start_rounds) {
  static const struct {
    uint64_t size;
    int iface;
    double pred;
  } rows[] = {
      {44445, 0, 217780},   /* EAF would take lte here; lte with slow start: 400 258 */
      {95133, 0, 420532},   /* lte 382 480 + 38 053.2 = 420 533.2 */
      {95134, 1, 420533.6}, /* wifi 420 536 */
      {1000000, 1, 918960}, /* 100 000 + 600 000 + 0.4·(1 000 000 − 452 600) */
  };
  struct pol p = test_policy(POL_THRESHOLD);
  struct pol_view v = test_view();
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    double pred;
    cr_assert_eq(test_pick(&p, &v, rows[i].size, 0, &pred), rows[i].iface, "size %lu", (unsigned long)rows[i].size);
    cr_assert_float_eq(pred, rows[i].pred, 1e-6, "size %lu: %f", (unsigned long)rows[i].size, pred);
  }
}

/* The small/large threshold on wifi (the lowest-latency path): latency part 2·20 000 =
 * 40 000 µs > capacity part 4·S  <=>  S < 10 000. Below it wifi is chosen whatever the
 * other paths predict; here wifi is congested (median 200 ms) so the load-time comparison
 * would pick lte: wifi 200 000 + 200 000 + 4·S vs lte 200 000 + 0.4·S. */
Test(threshold, small_objects_go_to_lowest_latency) {
  struct pol p = test_policy(POL_THRESHOLD);
  struct pol_view v = test_view();
  v.path[0].srtt_med_us = 200000;
  double pred;
  cr_assert_eq(test_pick(&p, &v, 9999, 0, &pred), 0);
  cr_assert_float_eq(pred, 79996, 1e-6); /* latency + capacity part: 40 000 + 39 996 */
  cr_assert_eq(test_pick(&p, &v, 10000, 0, &pred), 1);
  cr_assert_float_eq(pred, 204000, 1e-6); /* 100 000 + 100 000 + 4 000 */
}

/* Reused connection: median SRTT + size/free, no slow start (the papers' bonus for reuse).
 * lte reused: 100 000 + 0.4·S vs wifi new 40 000 + 4·S: crossover S = 16 666.7. */
Test(threshold, reuse_changes_the_decision) {
  struct pol p = test_policy(POL_THRESHOLD);
  struct pol_view v = test_view();
  cr_assert_eq(test_pick(&p, &v, 20000, 0, NULL), 0); /* wifi 120 000 vs lte 300 000 + 2 160 */
  v.path[1].reusable = true;
  double pred;
  cr_assert_eq(test_pick(&p, &v, 16666, 0, &pred), 0);
  cr_assert_float_eq(pred, 106664, 1e-6);
  cr_assert_eq(test_pick(&p, &v, 16667, 0, &pred), 1);
  cr_assert_float_eq(pred, 106666.8, 1e-6);
}

/* Load times use the median SRTT, the latency check the minimum. */
Test(threshold, median_srtt_for_load_time) {
  struct pol p = test_policy(POL_THRESHOLD);
  struct pol_view v = test_view();
  v.path[1].reusable = true;
  v.path[1].srtt_med_us = 150000;
  double pred;
  cr_assert_eq(test_pick(&p, &v, 50000, 0, &pred), 1);
  cr_assert_float_eq(pred, 170000, 1e-6); /* 150 000 + 20 000, not 100 000 + 20 000 */
}

/* Free capacity = max / (conns · usage + 1), usage = cur/max (IANS fn. 7): two idle
 * connections cost nothing, two busy at half the maximum halve the share. Seen at 9 999
 * bytes: latency-dominated (40 000 > 39 996) with free 250 000, not with free 125 000. */
Test(threshold, free_capacity_weighs_connections_by_usage) {
  struct pol p = test_policy(POL_THRESHOLD);
  struct pol_view v = test_view();
  v.path[0].conns = 2;
  double pred;
  cr_assert_eq(test_pick(&p, &v, 9999, 0, &pred), 0);
  cr_assert_float_eq(pred, 79996, 1e-6);
  v.path[0].cur_rate = 125000;
  cr_assert_eq(test_pick(&p, &v, 9999, 0, &pred), 0);
  /* Capacity-dominated now: 20 000 + 20 000 + 9 999 · 8 (no slow start: 2 500 < 14 600). */
  cr_assert_float_eq(pred, 119992, 1e-6);
  v.path[0].cur_rate = 1e9; /* usage above 1 counts as 1: free = 250 000 / 3 */
  cr_assert_eq(test_pick(&p, &v, 9999, 0, &pred), 0);
  cr_assert_float_eq(pred, 40000 + 9999 * 12.0, 1e-6);
}

Test(threshold, unknown_size_latency_wins) {
  struct pol p = test_policy(POL_THRESHOLD);
  struct pol_view v = test_view();
  double pred;
  cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, 0, &pred), 0);
  cr_assert_float_eq(pred, 40000, 1e-6);
  v.path[0].srtt_min_us = 60000; /* wifi new 120 000 vs lte reused 100 000 */
  v.path[1].reusable = true;
  cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, 0, &pred), 1);
  cr_assert_float_eq(pred, 100000, 1e-6);
}

/* Capacity unknown on the lowest-latency path: latency wins (the paper's default 0). */
Test(threshold, unknown_capacity_latency_wins) {
  struct pol p = test_policy(POL_THRESHOLD);
  struct pol_view v = test_view();
  v.path[0].max_rate = 0;
  cr_assert_eq(test_pick(&p, &v, 1000000, 0, NULL), 0);
}

Test(threshold, metered_gate) {
  struct pol p = test_policy(POL_THRESHOLD);
  struct pol_view v = test_view();
  v.path[1].metered = true;
  /* 1 MB: lte 918 960 <= 0.8 · 4 040 000: gain enough. 100 000 bytes: lte 100 000 +
   * 300 000 + 0.4·56 200 = 422 480 vs wifi 440 000: faster, but by 4 %, not 20 %. */
  cr_assert_eq(test_pick(&p, &v, 1000000, 0, NULL), 1);
  cr_assert_eq(test_pick(&p, &v, 100000, 0, NULL), 0);
  v.path[1].metered = false;
  cr_assert_eq(test_pick(&p, &v, 100000, 0, NULL), 1);
}

/* 30 000 B on reused connections (no other connections: free = max_rate; median = min).
 * L = wifi (20 000 < 100 000); capacity part 4·S = 120 000 > 20 000: not latency-dominated.
 * wifi 20 000 + 120 000 = 140 000; lte open 100 000 + 12 000 = 112 000 → lte; lte idle past
 * its RTO: slow-start rounds with no handshake, 206 160 → wifi. */
Test(threshold, reused_connection_idle_past_rto_slow_starts) {
  struct pol p = test_policy(POL_THRESHOLD);
  struct pol_view v = test_view();
  v.path[0].reusable = v.path[1].reusable = true;
  double pred;
  cr_assert_eq(test_pick(&p, &v, 30000, 0, &pred), 1);
  cr_assert_float_eq(pred, 112000, 1e-6);
  v.path[1].idle_us = POL_IDLE_COLD;
  cr_assert_eq(test_pick(&p, &v, 30000, 0, &pred), 0);
  cr_assert_float_eq(pred, 140000, 1e-6);
  v.path[0].idle_us = 300000; /* wifi too: 5 000 B per RTT < 14 600, its rate caps at once */
  cr_assert_eq(test_pick(&p, &v, 30000, 0, &pred), 0);
  cr_assert_float_eq(pred, 140000, 1e-6);
}
