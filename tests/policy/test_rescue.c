/* pol_rescue_worth: when a stalled connection's bytes are asked again on another connection. */
#include <criterion/criterion.h>

#include "tests/policy/paths.h"

/*
 * Victim on lte (tests/policy/paths.h: 100 ms, 2.5 B/µs), 45 260 B left = 1 460 × 31: after
 * the timeout its sender goes on from one segment (14 600 / 10), rounds of 1 460, 2 920,
 * 5 840, 11 680 and 23 360 B, the last arriving 5 × 100 000 + 23 360 / 2.5 = 509 344 µs from
 * now. A new wifi connection: handshake and request (40 000), then 45 260 B at 4 µs/B (its
 * initial window is past wifi's 5 000 B per round trip: it streams) = 221 040 µs. A new lte
 * connection: 200 000, then 14 600 + 29 200 in two rounds and the last 1 460 B in a third,
 * 400 000 + 584 = 400 584 µs. The stall must last the victim's round trip + 200 000 µs.
 */
Test(rescue, stalled_past_the_rto_goes_elsewhere) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  double tv, tt;
  cr_assert(pol_rescue_worth(&p, &v.path[1], 300000, &v.path[0], 45260, &tv, &tt));
  cr_assert_float_eq(tv, 509344, 1e-6);
  cr_assert_float_eq(tt, 221040, 1e-6);
  cr_assert_not(pol_rescue_worth(&p, &v.path[1], 299999, &v.path[0], 45260, NULL, NULL));
  /* another connection on the victim's own path is a rescue too */
  cr_assert(pol_rescue_worth(&p, &v.path[1], 300000, &v.path[1], 45260, NULL, &tt));
  cr_assert_float_eq(tt, 400584, 1e-6);
}

/* A loaded queue is part of the round trip: median SRTT 300 000 µs waits 500 000 µs. */
Test(rescue, median_srtt_sets_the_wait) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[1].srtt_med_us = 300000;
  cr_assert_not(pol_rescue_worth(&p, &v.path[1], 499999, &v.path[0], 45260, NULL, NULL));
  cr_assert(pol_rescue_worth(&p, &v.path[1], 500000, &v.path[0], 45260, NULL, NULL));
}

/* Victim on wifi (20 ms, 0.25 B/µs, 5 000 B per round trip), 45 260 B: from one segment,
 * rounds of 1 460 and 2 920 B from 20 000 and 40 000 µs, then from 60 000 it streams the
 * remaining 40 880 B at 4 µs/B: 223 520 µs, sooner than a new lte connection's 400 584: it
 * stays. */
Test(rescue, slower_taker_is_not_worth_it) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  double tv, tt;
  cr_assert_not(pol_rescue_worth(&p, &v.path[0], 1000000, &v.path[1], 45260, &tv, &tt));
  cr_assert_float_eq(tv, 223520, 1e-6);
  cr_assert_float_eq(tt, 400584, 1e-6);
}

/* Nothing left, or a victim or taker without metrics: no rescue. */
Test(rescue, needs_bytes_and_metrics) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  cr_assert_not(pol_rescue_worth(&p, &v.path[1], 1000000, &v.path[0], 0, NULL, NULL));
  struct pol_path bare = {.name = "x", .usable = true};
  cr_assert_not(pol_rescue_worth(&p, &bare, 1000000, &v.path[0], 45260, NULL, NULL));
  double tv, tt;
  cr_assert_not(pol_rescue_worth(&p, &v.path[1], 1000000, &bare, 45260, &tv, &tt));
  cr_assert_float_eq(tv, 509344, 1e-6);
  cr_assert_float_eq(tt, -1, 1e-9);
}
