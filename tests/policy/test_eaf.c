/* EAF (Socket Intents §V-F 3): t = size / (max_rate/(active+1)) + min SRTT × (1 reused | 2 new). */
#include <criterion/criterion.h>
#include <errno.h>

#include "tests/policy/paths.h"

/* wifi new: 40 000 + 4·S µs; lte new: 200 000 + 0.4·S µs.
 * Equal at 3.6·S = 160 000, S = 44 444.4 bytes: below it wifi, above it lte. */
Test(eaf, crossover_small_to_low_rtt_large_to_high_rate) {
  static const struct {
    uint64_t size;
    int iface;
    double pred;
  } rows[] = {
      {1000, 0, 44000},     /* 40 000 + 4 000 vs 200 400 */
      {44444, 0, 217776},   /* 40 000 + 177 776 vs 200 000 + 17 777.6 */
      {44445, 1, 217778},   /* 40 000 + 177 780 vs 200 000 + 17 778 */
      {1000000, 1, 600000}, /* 4 040 000 vs 200 000 + 400 000 */
  };
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    double pred;
    cr_assert_eq(test_pick(&p, &v, rows[i].size, 0, &pred), rows[i].iface, "size %lu", (unsigned long)rows[i].size);
    cr_assert_float_eq(pred, rows[i].pred, 1e-6, "size %lu: %f", (unsigned long)rows[i].size, pred);
  }
}

/* An idle connection on lte saves its handshake: lte = 100 000 + 0.4·S, and the crossover
 * moves down to 3.6·S = 60 000, S = 16 666.7. At 20 000 bytes the decision flips. */
Test(eaf, reuse_beats_new_connection) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  double pred;
  cr_assert_eq(test_pick(&p, &v, 20000, 0, &pred), 0);
  cr_assert_float_eq(pred, 120000, 1e-6); /* wifi 40 000 + 80 000 vs lte 208 000 */
  v.path[1].reusable = true;
  struct pol_choice c;
  cr_assert_eq(pol_choose(&p, &v, 20000, 0, &c), 0);
  cr_assert_eq(c.iface, 1);
  cr_assert(c.reuse);
  cr_assert_float_eq(c.predicted_us, 108000, 1e-6);   /* 100 000 + 8 000 */
  cr_assert_eq(test_pick(&p, &v, 16666, 0, NULL), 0); /* 106 664 vs 106 666.4 */
  cr_assert_eq(test_pick(&p, &v, 16667, 0, NULL), 1); /* 106 668 vs 106 666.8 */
}

/* One transfer already on wifi halves its share: wifi = 40 000 + 8·S; crossover
 * 7.6·S = 160 000, S = 21 052.6. */
Test(eaf, active_transfers_share_the_rate) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[0].transfers = 1;
  cr_assert_eq(test_pick(&p, &v, 21052, 0, NULL), 0); /* 208 416 vs 208 420.8 */
  cr_assert_eq(test_pick(&p, &v, 21053, 0, NULL), 1); /* 208 424 vs 208 421.2 */
}

/* Unknown size: only the latency part counts (2 RTT new, 1 RTT reused). */
Test(eaf, unknown_size_latency_wins) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  double pred;
  cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, 0, &pred), 0);
  cr_assert_float_eq(pred, 40000, 1e-6);
  /* Even with lte far faster in rate, an unknown size goes where the first bytes land. */
  v.path[1].max_rate = 1e9;
  cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, 0, NULL), 0);
  /* wifi new 2·60 000 = 120 000 vs lte reused 100 000. */
  v.path[0].srtt_min_us = 60000;
  v.path[1].reusable = true;
  cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, 0, &pred), 1);
  cr_assert_float_eq(pred, 100000, 1e-6);
}

/* A path without a rate has no prediction for a sized object (the metrics paper's default
 * 0 is ignored); with no prediction anywhere the lowest latency wins, then preference. */
Test(eaf, missing_metrics) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[1].max_rate = 0;
  cr_assert_eq(test_pick(&p, &v, 1000000, 0, NULL), 0);
  v.path[0].max_rate = 0;
  v.path[0].srtt_min_us = 120000; /* 240 000 vs 200 000 latency */
  double pred;
  cr_assert_eq(test_pick(&p, &v, 1000000, 0, &pred), 1);
  cr_assert_float_eq(pred, 200000, 1e-6);
  v.path[0].srtt_min_us = v.path[1].srtt_min_us = 0;
  cr_assert_eq(test_pick(&p, &v, 1000000, 0, &pred), 0);
  cr_assert_lt(pred, 0);
}

/* Cold start (no path measured): connections opened together take the paths in turn, so
 * six parallel connects spread over both links instead of all taking the first; a path
 * that is not usable is passed over; once one path has a latency it wins again. */
Test(eaf, cold_start_takes_the_paths_in_turn) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  for (unsigned i = 0; i < v.n; i++)
    v.path[i].srtt_min_us = 0, v.path[i].max_rate = 0;
  int got[6];
  for (int k = 0; k < 6; k++)
    got[k] = test_pick(&p, &v, POL_SIZE_UNKNOWN, 0, NULL);
  cr_assert(got[0] == 0 && got[1] == 1 && got[2] == 0 && got[3] == 1 && got[4] == 0 && got[5] == 1, "%d %d %d %d %d %d",
            got[0], got[1], got[2], got[3], got[4], got[5]);
  v.path[0].usable = false;
  cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, 0, NULL), 1);
  cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, 0, NULL), 1);
  v.path[0].usable = true;
  v.path[1].srtt_min_us = 50000;
  cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, 0, NULL), 1, "the measured path");
  cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, 0, NULL), 1);
}

Test(eaf, unusable_paths_are_skipped) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[1].usable = false;
  cr_assert_eq(test_pick(&p, &v, 1000000, 0, NULL), 0);
  v.path[0].usable = false;
  cr_assert_eq(test_pick(&p, &v, 1000000, 0, NULL), -ENETUNREACH);
}

/* Issue item 5: lte metered, default gain 0.2: lte only if t_lte <= 0.8 · t_wifi.
 * 200 000 + 0.4·S <= 32 000 + 3.2·S  <=>  S >= 60 000. */
Test(eaf, metered_gate) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[1].metered = true;
  cr_assert_eq(test_pick(&p, &v, 50000, 0, NULL), 0); /* 220 000 vs 0.8·240 000 = 192 000 */
  cr_assert_eq(test_pick(&p, &v, 59999, 0, NULL), 0); /* 223 999.6 vs 223 996.8 */
  cr_assert_eq(test_pick(&p, &v, 60001, 0, NULL), 1); /* 224 000.4 vs 224 003.2 */
  cr_assert_eq(test_pick(&p, &v, 1000000, 0, NULL), 1);
  /* Without the gate, plain EAF would take lte from 44 445 bytes. */
  v.path[1].metered = false;
  cr_assert_eq(test_pick(&p, &v, 50000, 0, NULL), 1);
  /* With no unmetered path usable, a metered one is still better than nothing. */
  v.path[1].metered = true;
  v.path[0].usable = false;
  cr_assert_eq(test_pick(&p, &v, 1000, 0, NULL), 1);
  /* A metered path without metrics cannot show a gain: the unmetered one goes first. */
  v = test_view();
  v.path[1].metered = true;
  v.path[1].max_rate = 0;
  v.path[0].max_rate = 0;
  cr_assert_eq(test_pick(&p, &v, 1000000, 0, NULL), 0);
}

Test(eaf, metered_gain_is_configurable) {
  struct pol_config cfg;
  pol_config_default(&cfg);
  cfg.metered_gain = 0.5;
  struct pol p;
  cr_assert_eq(pol_init(&p, &cfg), 0);
  struct pol_view v = test_view();
  v.path[1].metered = true;
  /* 200 000 + 0.4·S <= 20 000 + 2·S  <=>  S >= 112 500 */
  cr_assert_eq(test_pick(&p, &v, 112499, 0, NULL), 0);
  cr_assert_eq(test_pick(&p, &v, 112501, 0, NULL), 1);
}

Test(eaf, model_helper) {
  struct pol_view v = test_view();
  cr_assert_float_eq(pol_eaf_time(&v.path[0], 44444, 14600), 217776, 1e-6);
  cr_assert_float_eq(pol_eaf_time(&v.path[1], 0, 14600), 200000, 1e-6);
  v.path[1].srtt_min_us = 0;
  cr_assert_lt(pol_eaf_time(&v.path[1], 1000, 14600), 0);
}

/* Both connections reused, 30 000 B. wifi 20 000 + 4·S = 140 000. lte with its window open:
 * 100 000 + 0.4·S = 112 000, lte wins; idle past its RTO it restarts slow start: 14 600 in
 * the first round, the other 15 400 from 200 000 on at 0.4 µs/B = 206 160, wifi wins. */
Test(eaf, reused_connection_idle_past_rto_slow_starts) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[0].reusable = v.path[1].reusable = true;
  double pred;
  cr_assert_eq(test_pick(&p, &v, 30000, 0, &pred), 1);
  cr_assert_float_eq(pred, 112000, 1e-6);
  v.path[1].idle_us = 250000;
  cr_assert_eq(test_pick(&p, &v, 30000, 0, &pred), 0);
  cr_assert_float_eq(pred, 140000, 1e-6);
  cr_assert_float_eq(pol_eaf_time(&v.path[1], 30000, 14600), 206160, 1e-6);
  /* within one initial window nothing changes: 100 000 + 0.4·10 000 */
  cr_assert_float_eq(pol_eaf_time(&v.path[1], 10000, 14600), 104000, 1e-6);
  cr_assert_float_eq(pol_eaf_time(&v.path[1], 0, 14600), 100000, 1e-6); /* latency part */
}

/* A reused lte connection 50 ms idle whose responses only ever filled 14 480 B of window
 * (1 KiB objects): 30 000 B arrive in rounds of 14 480 (from 100 000 at 0.4 µs/B: done
 * 105 792, next round from 200 000) and 15 520 (0.4·15 520 = 6 208) = 206 208, so wifi's
 * 140 000 wins; with the window unknown (0) it is taken as open: 112 000, lte wins. */
Test(eaf, reused_connection_with_a_small_window_slow_starts) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[0].reusable = v.path[1].reusable = true;
  v.path[1].idle_us = 50000;
  double pred;
  cr_assert_eq(test_pick(&p, &v, 30000, 0, &pred), 1);
  cr_assert_float_eq(pred, 112000, 1e-6);
  v.path[1].window = 14480;
  cr_assert_float_eq(pol_eaf_time(&v.path[1], 30000, 14600), 206208, 1e-6);
  cr_assert_eq(test_pick(&p, &v, 30000, 0, &pred), 0);
  cr_assert_float_eq(pred, 140000, 1e-6);
}

/* The probe's body still coming on wifi's connection (busy 13 456 B at 0.25 B/µs = 53 824
 * µs, past its 20 000 round trip): 30 000 B asked there now arrive from 53 824 on, at
 * 173 824; without the queue 140 000. lte (new, 200 000 + 0.4·30 000 = 212 000) still loses. */
Test(eaf, a_busy_connection_answers_after_its_queue) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[0].reusable = true;
  cr_assert_float_eq(pol_eaf_time(&v.path[0], 30000, 14600), 140000, 1e-6);
  v.path[0].busy = 13456;
  cr_assert_float_eq(pol_eaf_time(&v.path[0], 30000, 14600), 173824, 1e-6);
  double pred;
  cr_assert_eq(test_pick(&p, &v, 30000, 0, &pred), 0);
  cr_assert_float_eq(pred, 173824, 1e-6);
  /* a queue shorter than the round trip costs nothing */
  v.path[0].busy = 4000;
  cr_assert_float_eq(pol_eaf_time(&v.path[0], 30000, 14600), 140000, 1e-6);
}
