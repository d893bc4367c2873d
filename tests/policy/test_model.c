/* The slow-start rounds model and pol_worth_adding: is an extra path worth its handshake and slow start? */
#include <criterion/criterion.h>
#include <errno.h>

#include "tests/policy/paths.h"

/* lte: RTT 100 ms, 2 500 000 B/s, window 14 600: rate·RTT = 250 000, so rounds of 14 600,
 * 29 200, 58 400, 116 800, 233 600 (cumulative 14 600, 43 800, 102 200, 219 000, 452 600)
 * start 1..5 RTTs after the request, each arriving at 0.4 µs/byte; the 6th (467 200 >=
 * 250 000) never stops: the rest streams from 6 RTTs on. */
Test(model, slow_start_rounds) {
  static const struct {
    uint64_t size;
    double t;
  } rows[] = {
      {0, 100000},        {10000, 104000}, {14600, 105840},
      {14601, 200000.4},  {43800, 211680}, {452600, 593440}, /* 5 rounds: 500 000 + 233 600 · 0.4 */
      {452601, 600000.4},                                    /* slow start over */
      {1000000, 818960},                                     /* 600 000 + 547 400 · 0.4 */
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    double t = pol_slow_start_time(rows[i].size, 100000, 2500000, 14600);
    cr_assert_float_eq(t, rows[i].t, 1e-6, "size %lu: %f", (unsigned long)rows[i].size, t);
  }
  /* wifi: 20 ms · 250 000 B/s = 5 000 bytes per RTT < 14 600: already at the rate share. */
  cr_assert_float_eq(pol_slow_start_time(10000, 20000, 250000, 14600), 60000, 1e-6);
  cr_assert_lt(pol_slow_start_time(10000, 0, 250000, 14600), 0);
  cr_assert_lt(pol_slow_start_time(10000, 20000, 0, 14600), 0);
}

/*
 * A transfer streaming on wifi alone (its one transfer: 250 000 B/s = 0.25 B/µs) has R
 * bytes left: alone it needs 4·R µs. lte, new, delivers nothing before 200 000 µs
 * (handshake + request), then round 1 at 2.5 B/µs until 205 840. Worth it (split gain
 * 0.05) when with <= 0.95 · 4·R = 3.8·R. If that happens in round 1 at t:
 * 0.25·t + 2.5·(t − 200 000) = R = t / 3.8  →  189·t = 38·10⁶, t = 201 058.2,
 * R = 10⁷ / 189 = 52 910.05 bytes.
 */
Test(model, worth_adding_new_connection) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[0].transfers = 1;
  struct pol_gain g;
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 52910, &g), 0);
  cr_assert_float_eq(g.without_us, 211640, 1e-6);
  cr_assert_float_eq(g.with_us, 552910 / 2.75, 1e-6); /* 201 058.18 > 201 058 */
  cr_assert_not(g.worth);
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 52911, &g), 0);
  cr_assert_float_eq(g.with_us, 552911 / 2.75, 1e-6); /* 201 058.55 <= 201 061.8 */
  cr_assert(g.worth);
  /* Too small to wait for lte's first byte at all. */
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 50000, &g), 0);
  cr_assert_float_eq(g.with_us, 200000, 1e-6);
  cr_assert_not(g.worth);
  /* 10 MB: slow start done at 700 000 (lte 452 600, wifi 175 000 bytes), then both:
   * 700 000 + 9 372 400 / 2.75. */
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 10000000, &g), 0);
  cr_assert_float_eq(g.without_us, 40000000, 1e-6);
  cr_assert_float_eq(g.with_us, 700000 + 9372400 / 2.75, 1e-3);
  cr_assert(g.worth);
}

/* An idle connection on lte: no handshake, no slow start, 2.5 B/µs from 100 000 µs:
 * 189·t = 19·10⁶, R = 5·10⁶ / 189 = 26 455.03 bytes. */
Test(model, worth_adding_reused_connection) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[1].reusable = true;
  struct pol_gain g;
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 26455, &g), 0);
  cr_assert_not(g.worth);
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 26456, &g), 0);
  cr_assert(g.worth);
  cr_assert_float_eq(g.with_us, 276456 / 2.75, 1e-6);
  /* 10 MB: no slow start on the idle connection: 2.5 B/µs from 100 000 µs on, so
   * 100 000 + (10⁷ − 25 000) / 2.75. */
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 10000000, &g), 0);
  cr_assert_float_eq(g.with_us, 100000 + 9975000 / 2.75, 1e-3);
  /* The same 26 456 bytes are not worth a new connection. */
  v.path[1].reusable = false;
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 26456, &g), 0);
  cr_assert_not(g.worth);
}

/* Metered lte needs gain 0.2: with <= 3.2·R: t·(2.75 − 1/3.2) = 500 000, t = 205 128.2,
 * R = 64 102.56. */
Test(model, worth_adding_metered_path) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[1].metered = true;
  struct pol_gain g;
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 64102, &g), 0);
  cr_assert_not(g.worth);
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 64103, &g), 0);
  cr_assert(g.worth);
  /* The same size on an unmetered lte is well past the 5 % split gain. */
  v.path[1].metered = false;
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 64102, &g), 0);
  cr_assert(g.worth);
}

/* Shares: two transfers on wifi halve the current rate (so more is left to gain); two on
 * lte leave j a third. R = 100 000: without = 800 000. lte share 2.5/3 B/µs from 200 000,
 * rounds still 14 600, 29 200, … (rate·RTT = 83 333): wifi 0.125 B/µs throughout. */
Test(model, worth_adding_counts_other_transfers) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[0].transfers = 2;
  v.path[1].transfers = 2;
  struct pol_gain g;
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 100000, &g), 0);
  cr_assert_float_eq(g.without_us, 800000, 1e-6);
  /* Round 1: 14 600 by 217 520; round 2 from 300 000: 29 200 by 335 040; round 3 from
   * 400 000: 58 400 (still < 83 333, so still a burst). At 400 000 wifi has 50 000 and lte
   * 43 800: 6 200 left at 0.125 + 0.8333 B/µs. */
  cr_assert_float_eq(g.with_us, 400000 + 6200 / (0.125 + 2.5 / 3), 1e-3);
  cr_assert(g.worth);
}

Test(model, worth_adding_errors) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  struct pol_gain g;
  cr_assert_eq(pol_worth_adding(&p, &v, 0, 1, 1000, &g), -EINVAL);       /* nothing on */
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 1, 1, 1000, &g), -EINVAL); /* j already on */
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 2, 1000, &g), -EINVAL); /* j out of view */
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 5, 1, 1000, &g), -EINVAL); /* on out of view */
  v.path[1].usable = false;
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 1000000, &g), -ENETDOWN);
  cr_assert_not(g.worth);
  v = test_view();
  v.path[1].max_rate = 0;
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 1000000, &g), -ENODATA);
  cr_assert_not(g.worth);
  cr_assert_float_eq(g.without_us, 4000000, 1e-6);
  v = test_view();
  v.path[0].max_rate = 0;
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 1000000, &g), -ENODATA);
  /* Nothing left: nothing to gain. */
  v = test_view();
  cr_assert_eq(pol_worth_adding(&p, &v, 1u << 0, 1, 0, &g), 0);
  cr_assert_not(g.worth);
}

/* ---- probe size: about one round trip of the probe's path ------------------------------- */

/* BDP = min SRTT × max_rate, clamped to [what one initial window carries with the 206's
 * head = 10 × 1448 - 1024 = 13 456, max]. */
Test(probe_size, bdp_clamped) {
  struct pol p = test_policy(POL_EAF);
  p.cfg.round_overhead = POL_ROUND_OVERHEAD;
  struct pol_view v = test_view();
  /* wifi 20 ms × 250 000 B/s = 5 000 B: less than one initial window, so 13 456 */
  cr_assert_eq(pol_probe_size(&p, &v.path[0], 32768, 32768), 13456);
  /* that chunk and nginx's ~300-byte 206 head fit the 10 segments of 1448 B (timestamps) a
   * restarted server sends in its first round trip, and so do the doubled chunks after it
   * in their rounds (cumulative 3 and 7 windows); 14 600 spilled into a second round trip */
  uint64_t c = pol_probe_size(&p, &v.path[0], 32768, 32768);
  cr_assert_leq(c + 300, 10 * 1448);
  cr_assert_leq(c + 300 + 2 * c + 300, 30 * 1448);
  cr_assert_leq(c + 2 * c + 4 * c + 3 * 300, 70 * 1448);
  /* 80 ms × 250 000 = 20 000 B: inside the bounds, taken as is */
  v.path[0].srtt_min_us = 80000;
  cr_assert_eq(pol_probe_size(&p, &v.path[0], 32768, 32768), 20000);
  /* the median SRTT is not the path's round trip when idle: the minimum is used */
  v.path[0].srtt_med_us = 300000;
  cr_assert_eq(pol_probe_size(&p, &v.path[0], 32768, 32768), 20000);
  /* lte 100 ms × 2 500 000 = 250 000 B: capped at init_chunk */
  cr_assert_eq(pol_probe_size(&p, &v.path[1], 32768, 32768), 32768);
  cr_assert_eq(pol_probe_size(&p, &v.path[1], 100000, 100000), 100000);
  /* a smaller initial window lowers the floor, down to 4 096 */
  p.cfg.init_window = 2920;
  v = test_view();
  cr_assert_eq(pol_probe_size(&p, &v.path[0], 32768, 32768), 5000);
  v.path[0].srtt_min_us = 10000;
  cr_assert_eq(pol_probe_size(&p, &v.path[0], 32768, 32768), 4096);
}

/* Not measured (no RTT, or no rate): the configured maximum, as before policies (a cold
 * process's small probe cost 1 MiB and 4 MiB splits on demo 8 %); a maximum below the floor
 * is the user's. */
Test(probe_size, cold_and_small_max) {
  struct pol p = test_policy(POL_EAF);
  struct pol_path none = {.usable = true};
  cr_assert_eq(pol_probe_size(&p, &none, 32768, 32768), 32768);
  cr_assert_eq(pol_probe_size(&p, NULL, 32768, 32768), 32768);
  struct pol_path rtt_only = {.usable = true, .srtt_min_us = 100000};
  cr_assert_eq(pol_probe_size(&p, &rtt_only, 32768, 32768), 32768);
  struct pol_view v = test_view();
  cr_assert_eq(pol_probe_size(&p, &v.path[0], 8192, 8192), 8192);
  cr_assert_eq(pol_probe_size(&p, &v.path[0], 2048, 2048), 2048);
}

/* Measured paths may go past the cold size up to max (POL_PROBE_MAX_CHUNKS init_chunks):
 * lte 100 ms × 2 500 000 B/s = 250 000 B with cold 32 768 and max 262 144 -> 250 000; wifi
 * stays at its 13 456 floor; an unmeasured path gets the cold 32 768, not max. */
Test(probe_size, measured_past_cold) {
  struct pol p = test_policy(POL_EAF);
  p.cfg.round_overhead = POL_ROUND_OVERHEAD;
  struct pol_view v = test_view();
  cr_assert_eq(pol_probe_size(&p, &v.path[1], 32768, 32768 * POL_PROBE_MAX_CHUNKS), 250000);
  cr_assert_eq(pol_probe_size(&p, &v.path[0], 32768, 32768 * POL_PROBE_MAX_CHUNKS), 13456);
  struct pol_path none = {.usable = true};
  cr_assert_eq(pol_probe_size(&p, &none, 32768, 32768 * POL_PROBE_MAX_CHUNKS), 32768);
  /* the BDP above max is capped there */
  cr_assert_eq(pol_probe_size(&p, &v.path[1], 32768, 131072), 131072);
}

/* A probe moved to a pooled connection is sized for its path. lte 100 ms × 2 500 000 B/s, cold
 * 32 768, max 262 144, base (the program's wifi path's probe) 13 456:
 * - window open, whatever its width (unknown, 69 371, the initial 14 480): the path's BDP,
 *   250 000; with max 100 000: 100 000;
 * - idle 200 ms (past the RTO: slow start again), or never used: the BDP too;
 * - no pooled connection there (not reusable): base;
 * - a base at max already: the path's BDP all the same. */
Test(probe_size, moved_probe_is_sized_for_its_path) {
  struct pol p = test_policy(POL_EAF);
  p.cfg.round_overhead = POL_ROUND_OVERHEAD;
  struct pol_view v = test_view();
  struct pol_path lte = v.path[1];
  uint64_t max = 32768 * POL_PROBE_MAX_CHUNKS;
  lte.reusable = true;
  lte.idle_us = 50000;
  cr_assert_eq(pol_moved_probe_size(&p, &lte, 13456, max), 250000);
  /* the window it opened does not cap it: what the probe leaves costs a round trip more */
  lte.window = 69371;
  cr_assert_eq(pol_moved_probe_size(&p, &lte, 13456, max), 250000);
  lte.window = 14480;
  cr_assert_eq(pol_moved_probe_size(&p, &lte, 13456, max), 250000);
  cr_assert_eq(pol_moved_probe_size(&p, &lte, 13456, 100000), 100000, "up to max");
  /* past its RTO, or never used: slow start again, and the probe streams through its rounds */
  lte.idle_us = POL_RTO_MIN_US;
  cr_assert_eq(pol_moved_probe_size(&p, &lte, 13456, max), 250000);
  lte.idle_us = POL_IDLE_COLD;
  cr_assert_eq(pol_moved_probe_size(&p, &lte, 13456, max), 250000);
  lte.idle_us = 50000;
  lte.reusable = false;
  cr_assert_eq(pol_moved_probe_size(&p, &lte, 13456, max), 13456);
  lte.reusable = true;
  cr_assert_eq(pol_moved_probe_size(&p, &lte, max, max), 250000, "its own BDP, below a base at max");
  /* from a long fat path to a thin one: the thin path's probe (its floor, 14 600 - 1 144),
   * not the fat path's BDP (threshold, asym: a 245 kB probe moved to wifi0 carried a whole
   * 100 KiB object at 2 Mbit/s, 1 s, and filled its queue for the next probes) */
  struct pol_path wifi = v.path[0];
  wifi.reusable = true;
  wifi.idle_us = 50000;
  cr_assert_eq(pol_moved_probe_size(&p, &wifi, 250000, max), 13456);
  /* an unmeasured path, or one whose rate is not trusted (pol_rate_trusted): base */
  struct pol_path cold = {.usable = true, .reusable = true, .idle_us = 50000, .srtt_min_us = 100000};
  cr_assert_eq(pol_moved_probe_size(&p, &cold, 13456, max), 13456);
  cold.max_rate = 100000;
  cr_assert_eq(pol_moved_probe_size(&p, &cold, 13456, max), 13456);
}

/* A rate is trusted once its busiest 100 ms bucket held one initial window: 14 600 B per
 * 100 ms = 146 000 B/s. */
Test(rate_trusted, one_initial_window_per_bucket) {
  struct pol_path pp = {.srtt_min_us = 100000};
  cr_assert(!pol_rate_trusted(&pp, 14600)); /* no rate */
  pp.max_rate = 13170;                      /* a 1 KiB object on lte0 */
  cr_assert(!pol_rate_trusted(&pp, 14600));
  pp.max_rate = 145999;
  cr_assert(!pol_rate_trusted(&pp, 14600));
  pp.max_rate = 146000;
  cr_assert(pol_rate_trusted(&pp, 14600));
  pp.max_rate = 250000; /* asym wifi0, busy */
  cr_assert(pol_rate_trusted(&pp, 14600));
  cr_assert(!pol_rate_trusted(&pp, 4 * 14600)); /* a larger initial window asks more */
}

/* Linux restarts slow start after an idle longer than the RTO (>= srtt + 200 ms); the server's
 * idle is ours plus about a round trip, so ours must stay below 200 ms. */
Test(model, window_open_until_200ms_idle) {
  struct pol_view v = test_view();
  struct pol_path *lte = &v.path[1];
  cr_assert(!pol_window_open(lte)); /* not reusable: a new connection */
  lte->reusable = true;
  cr_assert(pol_window_open(lte)); /* idle 0: the engine says nothing, busy until now */
  lte->idle_us = 199999;
  cr_assert(pol_window_open(lte));
  lte->idle_us = 200000;
  cr_assert(!pol_window_open(lte));
  lte->idle_us = POL_IDLE_COLD; /* a pre-connect that never carried a response */
  cr_assert(!pol_window_open(lte));
}

/* pol_worth_adding with a reused lte idle past its RTO: 58 600 B left on wifi (streaming
 * 0.25 B/µs: 234 400 µs alone). Warm lte streams 2.5 B/µs from 100 000: 0.25·t + 2.5·(t −
 * 100 000) = 58 600 → t = 308 600 / 2.75 = 112 218.2. Cold lte sends 14 600 in
 * [100 000, 105 840], then waits for 200 000: 0.25·t + 14 600 = 58 600 → t = 176 000. */
Test(model, worth_adding_a_cold_reused_path) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  v.path[1].reusable = true;
  struct pol_gain g;
  cr_assert_eq(pol_worth_adding(&p, &v, 0x1, 1, 58600, &g), 0);
  cr_assert_float_eq(g.without_us, 234400, 1e-3);
  cr_assert_float_eq(g.with_us, 308600.0 / 2.75, 1e-3);
  v.path[1].idle_us = 1000000;
  cr_assert_eq(pol_worth_adding(&p, &v, 0x1, 1, 58600, &g), 0);
  cr_assert_float_eq(g.with_us, 176000, 1e-3);
  cr_assert(g.worth);
  /* 10 000 B left: wifi alone 40 000 µs, before lte's first byte at 100 000 */
  cr_assert_eq(pol_worth_adding(&p, &v, 0x1, 1, 10000, &g), 0);
  cr_assert_float_eq(g.with_us, 40000, 1e-3);
  cr_assert(!g.worth);
}

/* The window a reused connection starts from (pol_start_window): lte 100 ms × 2.5 MB/s = one
 * round trip of 250 000 B. Idle inside its RTO with an unknown window: open (0); with a
 * window its responses opened to 14 480 B (1 KiB objects only): rounds from 14 480; one at
 * or past the round trip's bytes: open; past its RTO or new: the initial window. */
Test(model, start_window_is_what_the_responses_opened) {
  struct pol_view v = test_view();
  struct pol_path *lte = &v.path[1];
  cr_assert_float_eq(pol_start_window(lte, 14600, 2500000, 100000), 14600, 1e-9); /* new */
  lte->reusable = true;
  lte->idle_us = 50000;
  cr_assert_float_eq(pol_start_window(lte, 14600, 2500000, 100000), 0, 1e-9);
  lte->window = 14480;
  cr_assert_float_eq(pol_start_window(lte, 14600, 2500000, 100000), 14480, 1e-9);
  lte->window = 249999;
  cr_assert_float_eq(pol_start_window(lte, 14600, 2500000, 100000), 249999, 1e-9);
  lte->window = 250000;
  cr_assert_float_eq(pol_start_window(lte, 14600, 2500000, 100000), 0, 1e-9);
  lte->window = 14480;
  lte->idle_us = 300000;
  cr_assert_float_eq(pol_start_window(lte, 14600, 2500000, 100000), 14600, 1e-9);
}
