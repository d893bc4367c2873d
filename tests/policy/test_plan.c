/* pol_plan: after the probe, does the object stay on one path (which) or split (onto which extra paths)? */
#include <criterion/criterion.h>

#include "policy/metrics.h"
#include "tests/policy/paths.h"

/* The probe went out on wifi (latency wins for an unknown size), so wifi has an idle
 * connection to reuse: this is the view the engine has when the 206 tells the size. */
static struct pol_view after_probe(void) {
  struct pol_view v = test_view();
  v.path[0].reusable = true;
  return v;
}

Test(plan, probe_goes_to_lowest_latency) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  struct pol_plan plan;
  cr_assert_eq(pol_plan(&p, &v, POL_SIZE_UNKNOWN, 0, &plan), 0);
  cr_assert_eq(plan.primary.iface, 0);
  cr_assert_eq(plan.paths, 1u << 0); /* no split without a size */
}

/* 20 000 bytes: wifi reused 20 000 + 80 000 = 100 000 µs; lte's first byte would come at
 * 200 000: single path on wifi. */
Test(plan, small_object_stays_single_path) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = after_probe();
  struct pol_plan plan;
  cr_assert_eq(pol_plan(&p, &v, 20000, 0, &plan), 0);
  cr_assert_eq(plan.primary.iface, 0);
  cr_assert(plan.primary.reuse);
  cr_assert_eq(plan.paths, 1u << 0);
  cr_assert_float_eq(plan.predicted_us, 100000, 1e-6);
}

/* 1 MB: EAF puts it on lte (200 000 + 400 000 vs wifi 4 020 000). The plan models lte with
 * slow start: alone 918 960 µs (see test_model). Adding wifi's idle connection (0.25 B/µs
 * from 20 000 µs): at 700 000 lte has 452 600, wifi 170 000; 377 400 left at 2.75 B/µs:
 * 837 236.4 µs, 8.9 % sooner: past the 5 % split gain. */
Test(plan, large_object_splits) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = after_probe();
  struct pol_plan plan;
  cr_assert_eq(pol_plan(&p, &v, 1000000, 0, &plan), 0);
  cr_assert_eq(plan.primary.iface, 1);
  cr_assert_float_eq(plan.primary.predicted_us, 600000, 1e-6);
  cr_assert_eq(plan.paths, (1u << 0) | (1u << 1));
  cr_assert_float_eq(plan.predicted_us, 700000 + 377400 / 2.75, 1e-3);
}

/* The same object with wifi metered: 8.9 % is below the 20 % metered gain. */
Test(plan, metered_extra_path_needs_more_gain) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = after_probe();
  v.path[0].metered = true;
  struct pol_plan plan;
  cr_assert_eq(pol_plan(&p, &v, 1000000, 0, &plan), 0);
  cr_assert_eq(plan.primary.iface, 1);
  cr_assert_eq(plan.paths, 1u << 1);
  cr_assert_float_eq(plan.predicted_us, 918960, 1e-3);
}

/* Greedy order: a third path as fast as lte is tried before slow wifi, which matters at a
 * split gain of 6 %. lte + lte2: 905 200 bytes by 693 440, then 5 B/µs from 700 000:
 * 718 960 µs (21.8 % better than 918 960: added). Then wifi would finish it at 679 428.6
 * (583 000 bytes at 600 000, 5.25 B/µs): 5.5 % < 6 %, not added. Had wifi been tried
 * first (8.9 %), all three would have been taken. */
Test(plan, extra_paths_fastest_first) {
  struct pol_config cfg;
  pol_config_default(&cfg);
  cfg.split_gain = 0.06;
  cfg.round_overhead = 0; /* whole windows, as counted above */
  struct pol p;
  cr_assert_eq(pol_init(&p, &cfg), 0);
  struct pol_view v = after_probe();
  v.n = 3;
  v.path[2] = v.path[1];
  v.path[2].name = "lte2";
  struct pol_plan plan;
  cr_assert_eq(pol_plan(&p, &v, 1000000, 0, &plan), 0);
  cr_assert_eq(plan.primary.iface, 1);
  cr_assert_eq(plan.paths, (1u << 1) | (1u << 2));
  cr_assert_float_eq(plan.predicted_us, 718960, 1e-3);
  /* At the default 5 % wifi makes it too. */
  p = test_policy(POL_EAF);
  cr_assert_eq(pol_plan(&p, &v, 1000000, 0, &plan), 0);
  cr_assert_eq(plan.paths, 7u);
  cr_assert_float_eq(plan.predicted_us, 600000 + 417000 / 5.25, 1e-3);
}

Test(plan, single_and_round_robin_never_split) {
  struct pol_view v = after_probe();
  struct pol_plan plan;
  struct pol p = test_policy(POL_SINGLE);
  cr_assert_eq(pol_plan(&p, &v, 1000000, 0, &plan), 0);
  cr_assert_eq(plan.paths, 1u << 1);
  p = test_policy(POL_ROUND_ROBIN);
  cr_assert_eq(pol_plan(&p, &v, 1000000, 0, &plan), 0);
  cr_assert_eq(plan.paths, 1u << 0);
}

static struct pol_view view_from(struct pol_metrics *m, uint64_t now) {
  struct pol_view v = {.n = 2};
  static const char *names[] = {"wifi", "lte"};
  for (unsigned i = 0; i < 2; i++) {
    v.path[i] = (struct pol_path){.name = names[i], .usable = true};
    cr_assert_eq(pol_metrics_snapshot(m, i, now, &v.path[i]), 0);
  }
  return v;
}

/* The whole path: collectors feed the store, the engine snapshots it into a view, the
 * policy decides; after 5 minutes of silence lte's metrics are gone and it is no longer
 * taken into account. */
Test(plan, decisions_from_the_metrics_store) {
  struct pol_metrics *m;
  cr_assert_eq(pol_metrics_new(&m), 0);
  cr_assert_eq(pol_metrics_handshake(m, 0, 1, 20000, 0), 0);
  cr_assert_eq(pol_metrics_bytes(m, 0, 25000, 0), 0); /* 250 000 B/s */
  cr_assert_eq(pol_metrics_handshake(m, 1, 2, 100000, 0), 0);
  cr_assert_eq(pol_metrics_bytes(m, 1, 250000, 0), 0); /* 2 500 000 B/s */
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = view_from(m, 1000000);
  cr_assert_float_eq(v.path[1].max_rate, 2500000, 1e-9);
  double pred;
  cr_assert_eq(test_pick(&p, &v, 44444, 0, &pred), 0);
  cr_assert_float_eq(pred, 217776, 1e-6);
  cr_assert_eq(test_pick(&p, &v, 44445, 0, &pred), 1);
  cr_assert_float_eq(pred, 217778, 1e-6);
  /* wifi keeps being used; lte falls silent. */
  cr_assert_eq(pol_metrics_rtt(m, 0, 1, 20000, 200000000), 0);
  cr_assert_eq(pol_metrics_bytes(m, 0, 25000, 200000000), 0);
  v = view_from(m, 299999999);
  cr_assert_eq(test_pick(&p, &v, 1000000, 0, NULL), 1);
  v = view_from(m, 300000000);
  cr_assert_eq(v.path[1].srtt_min_us, 0);
  cr_assert_eq(v.path[1].max_rate, 0);
  cr_assert_eq(test_pick(&p, &v, 1000000, 0, &pred), 0);
  cr_assert_float_eq(pred, 4040000, 1e-6);
  pol_metrics_free(m);
}

/* 100 000 B, both reused, lte idle past its RTO. EAF: wifi 20 000 + 400 000; lte slow-starts
 * (14 600 at 100 000, 29 200 at 200 000, the rest at 300 000: 300 000 + 56 200·0.4 =
 * 322 480) → primary lte, and wifi joins. Together: by 211 680 wifi has 0.25·191 680 = 47 920
 * and lte 43 800 (91 720); lte then waits for 300 000, wifi needs 8 280 more: 33 120 µs →
 * 244 800. With lte's window open: 0.25·(t − 20 000) + 2.5·(t − 100 000) = 100 000 →
 * t = 355 000 / 2.75 = 129 090.9. */
Test(plan, reused_path_idle_past_rto_pays_slow_start) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[0].reusable = v.path[1].reusable = true;
  v.path[1].idle_us = 1000000;
  struct pol_plan pl;
  cr_assert_eq(pol_plan(&p, &v, 100000, 0, &pl), 0);
  cr_assert_eq(pl.primary.iface, 1);
  cr_assert_float_eq(pl.primary.predicted_us, 322480, 1e-6);
  cr_assert_eq(pl.paths, 0x3);
  cr_assert_float_eq(pl.predicted_us, 244800, 1e-3);
  /* shares at 244 800: lte its two rounds, 43 800; wifi the rest, 0.25·224 800 = 56 200 */
  cr_assert_float_eq(pl.share[1], 43800, 1e-3);
  cr_assert_float_eq(pl.share[0], 56200, 1e-3);
  v.path[1].idle_us = 0;
  cr_assert_eq(pol_plan(&p, &v, 100000, 0, &pl), 0);
  cr_assert_eq(pl.paths, 0x3);
  cr_assert_float_eq(pl.predicted_us, 355000.0 / 2.75, 1e-3);
  cr_assert_float_eq(pl.share[0] + pl.share[1], 100000, 1e-6);
  cr_assert_float_eq(pl.share[0], 0.25 * (355000.0 / 2.75 - 20000), 1e-3);
  /* one path: all of it; a policy that does not split: no shares */
  cr_assert_eq(pol_plan(&p, &v, 1000, 0, &pl), 0);
  cr_assert_eq(pl.paths, 0x1);
  cr_assert_float_eq(pl.share[0], 1000, 1e-9);
  cr_assert_float_eq(pl.share[1], 0, 1e-9);
}

/* The plan's curve of a reused lte connection inside its RTO starts from the window its
 * responses opened: with 14 480 B (never more than 1 KiB objects) 100 000 B after a probe
 * on wifi are not lte's at 2.5 B/µs from 100 000 (the open-window plan above, 129 090.9),
 * but lte's rounds of 14 480, 28 960, ... from 100 000, 200 000, ...: wifi (0.25 B/µs from
 * 20 000) then carries more. By 211 584 (lte's 2nd round done: 14 480 + 28 960 = 43 440
 * at 200 000 + 28 960/2.5 = 211 584) wifi has 0.25·191 584 = 47 896 (91 336); lte waits for
 * its 3rd round at 300 000, so wifi finishes the 8 664 left alone: 34 656 µs → 246 240. */
Test(plan, reused_path_with_a_small_window_slow_starts) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[0].reusable = v.path[1].reusable = true;
  v.path[1].idle_us = 50000;
  v.path[1].window = 14480;
  struct pol_plan pl;
  cr_assert_eq(pol_plan(&p, &v, 100000, 0, &pl), 0);
  cr_assert_eq(pl.paths, 0x3);
  cr_assert_float_eq(pl.predicted_us, 246240, 1e-3);
  cr_assert_float_eq(pl.share[1], 43440, 1e-3);
  cr_assert_float_eq(pl.share[0], 56560, 1e-3);
}

/* The plan is made when the probe's head arrives on wifi: its 13 456-byte body still holds
 * wifi's connection until 53 824 µs (0.25 B/µs). With lte reused and open (2.5 B/µs from
 * 100 000): 0.25·(t − 53 824) + 2.5·(t − 100 000) = 100 000 → t = 363 456 / 2.75 =
 * 132 165.8, wifi's share 0.25·(t − 53 824) = 19 585.5 (without the queue wifi would be
 * counted from 20 000: 129 090.9, share 27 272.7). */
Test(plan, the_probe_connection_answers_after_the_probe_body) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[0].reusable = v.path[1].reusable = true;
  v.path[0].busy = 13456;
  struct pol_plan pl;
  cr_assert_eq(pol_plan(&p, &v, 100000, 0, &pl), 0);
  cr_assert_eq(pl.paths, 0x3);
  cr_assert_float_eq(pl.predicted_us, 363456.0 / 2.75, 1e-3);
  cr_assert_float_eq(pl.share[0], 0.25 * (363456.0 / 2.75 - 53824), 1e-3);
  cr_assert_float_eq(pl.share[0] + pl.share[1], 100000, 1e-6);
}

/* With the default round overhead (TCP timestamps + one 206 head: 1 144 B of IW10), a round
 * of lte restarting slow start carries the engine's doubling chunks, 13 456 then 26 912 B,
 * not whole windows. wifi reused and open (0.25 B/µs from 20 000), lte reused idle past its
 * RTO (2.5 B/µs, rounds from 100 000 and 200 000), 100 000 B: at 210 764.8 (lte's 2nd round
 * done) lte has 40 368, wifi 47 691.2; lte's 3rd round would start at 300 000, so wifi
 * finishes the 11 940.8 left alone: 258 528, shares lte 40 368 (its two chunks exactly,
 * so no head spills a few bytes into a third round trip) and wifi 59 632. */
Test(plan, rounds_carry_bodies_not_whole_windows) {
  struct pol p = test_policy(POL_EAF);
  p.cfg.round_overhead = POL_ROUND_OVERHEAD;
  struct pol_view v = test_view();
  v.path[0].reusable = v.path[1].reusable = true;
  v.path[1].idle_us = 1000000;
  struct pol_plan pl;
  cr_assert_eq(pol_plan(&p, &v, 100000, 0, &pl), 0);
  cr_assert_eq(pl.paths, 0x3);
  cr_assert_float_eq(pl.predicted_us, 258528, 1e-3);
  cr_assert_float_eq(pl.share[1], 40368, 1e-3);
  cr_assert_float_eq(pl.share[0], 59632, 1e-3);
}
