/* pol_path_conns: how many connections a path gets for the bytes the plan gives it (slow-start rounds model). */
#include <criterion/criterion.h>

#include "tests/policy/paths.h"

/*
 * lte (tests/policy/paths.h): 100 ms, 2 500 000 B/s = 2.5 B/µs, IW 14 600 (whole windows: the
 * test policy has no round overhead); rate · RTT = 250 000 B per round at the path's share.
 * k connections each get 2.5 / k B/µs and fill at most 250 000 / k per round. New: the first
 * round starts at 200 000 µs (handshake + request). A doubled set must gain >= 50 000 µs.
 */

/* 29 200 B: one connection 14 600 by 205 840, the rest in round 2 (300 000 + 14 600 / 2.5 =
 * 305 840); two: 29 200 in round 1 at 2.5 B/µs together, 211 680. 94 160 µs sooner: 2. */
Test(conns, second_connection_saves_a_round) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 29200, 2), 2);
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 29200, 8), 2); /* 4 x 14 600 > 29 200: 4 gain nothing */
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 29200, 1), 1);
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 29200, 0), 1);
}

/* 43 800 B: one connection 14 600 + 29 200 = two rounds, 300 000 + 29 200 / 2.5 = 311 680; two:
 * 29 200 in round 1, the last 14 600 in round 2 at 305 840. 5 840 µs: not worth it. */
Test(conns, same_round_count_not_worth_it) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 43800, 2), 1);
}

/* Before the size is known (pol_extra_conns), IW 14 600: lte 100 ms × 2 500 000 B/s = 250 000 B
 * per round trip >= 4 × 14 600 = 58 400: max; wifi 20 ms × 250 000 = 5 000: 1. At the line:
 * 58 400 B per round (584 000 B/s on lte) gets max, 583 999 B/s one. */
Test(conns, extra_connections_with_the_probe) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  cr_assert_eq(pol_extra_conns(&p, &v.path[1], 2), 2);
  cr_assert_eq(pol_extra_conns(&p, &v.path[1], 4), 4);
  cr_assert_eq(pol_extra_conns(&p, &v.path[1], 1), 1);
  cr_assert_eq(pol_extra_conns(&p, &v.path[1], 0), 1);
  cr_assert_eq(pol_extra_conns(&p, &v.path[0], 2), 1);
  struct pol_path lte = v.path[1];
  lte.max_rate = 584000;
  cr_assert_eq(pol_extra_conns(&p, &lte, 2), 2);
  lte.max_rate = 583999;
  cr_assert_eq(pol_extra_conns(&p, &lte, 2), 1);
  lte.max_rate = 100000; /* not trusted (< one initial window per 100 ms): unmeasured */
  cr_assert_eq(pol_extra_conns(&p, &lte, 2), 1);
  lte = v.path[1];
  lte.srtt_min_us = 0;
  cr_assert_eq(pol_extra_conns(&p, &lte, 2), 1);
  cr_assert_eq(pol_extra_conns(&p, NULL, 2), 1);
}

/* 1 000 000 B. One: tests/policy/test_model.c's slow_start_rounds + 100 000 (handshake):
 * 918 960. Two (125 000 B per round each): rounds of 29 200, 58 400, 116 800, 233 600 together
 * from 200 000 (438 000 by 593 440), then windows of 233 600 >= 125 000 stream from 600 000:
 * 600 000 + 562 000 / 2.5 = 824 800 (94 160 sooner). Four (62 500 each): 58 400, 116 800,
 * 233 600 from 200 000 (408 800), streaming from 500 000: 500 000 + 591 200 / 2.5 = 736 480
 * (88 320 sooner than two). */
Test(conns, doubles_while_it_pays) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 1000000, 2), 2);
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 1000000, 3), 2); /* doubles: 3 is not tried */
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 1000000, 4), 4);
}

/* wifi: 20 ms · 250 000 B/s = 5 000 B per round < IW: no slow start to shorten. */
Test(conns, path_past_slow_start_keeps_one) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  cr_assert_eq(pol_path_conns(&p, &v.path[0], 1000000, 8), 1);
}

/* A reused connection with its window open streams: never a second one beside it. */
Test(conns, open_pooled_window_keeps_one) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[1].reusable = true;
  v.path[1].idle_us = 1000;
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 1000000, 8), 1);
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 29200, 8), 1);
}

/* A pooled connection past its RTO (or a pre-connect) restarts from IW one RTT after the
 * request; an added one starts a round later (handshake). 1 000 000 B: one alone 818 960.
 * Two: A rounds of 14 600 ... 116 800 from 100 000 (219 000), streaming at 1.25 B/µs from
 * 500 000; B the same from 200 000, streaming from 600 000. At 600 000: 219 000 + 125 000 +
 * 219 000 = 563 000, the rest at 2.5: 774 800, 44 160 sooner: one. 29 200 B: A's 14 600 by
 * 111 680, the other 14 600 from 200 000 at 2.5 B/µs either way: 205 840, no gain. */
Test(conns, cold_pooled_connection_second_comes_late) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[1].reusable = true;
  v.path[1].idle_us = POL_IDLE_COLD;
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 1000000, 2), 1);
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 29200, 2), 1);
  v.path[1].reusable = false;
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 1000000, 2), 2);
}

Test(conns, unknown_path_or_nothing_to_carry_keeps_one) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 0, 8), 1);
  cr_assert_eq(pol_path_conns(&p, NULL, 1000000, 8), 1);
  struct pol_path q = v.path[1];
  q.max_rate = 0;
  cr_assert_eq(pol_path_conns(&p, &q, 1000000, 8), 1);
  q = v.path[1];
  q.srtt_min_us = q.srtt_med_us = 0;
  cr_assert_eq(pol_path_conns(&p, &q, 1000000, 8), 1);
}

/* The rate share counts the path's other transfers: lte with one other transfer has
 * 1.25 B/µs and 125 000 B per round; 1 000 000 B: one connection rounds 14 600 ... 116 800
 * (219 000) from 200 000, streaming from 600 000: 600 000 + 781 000 / 1.25 = 1 224 800; two
 * (62 500 each): 29 200, 58 400, 116 800 (204 400) from 200 000, streaming from 500 000:
 * 500 000 + 795 600 / 1.25 = 1 136 480, 88 320 sooner: two. */
Test(conns, share_of_a_loaded_path) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[1].transfers = 1;
  cr_assert_eq(pol_path_conns(&p, &v.path[1], 1000000, 2), 2);
}
