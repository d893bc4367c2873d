/* The metrics store: SRTT min/median per connection, max rate over 5 minutes of 100 ms buckets, expiry, counters. */
#include <criterion/criterion.h>
#include <errno.h>

#include "policy/metrics.h"

#define S (1000000ULL) /* one second in µs */

static struct pol_metrics *m;
static void setup(void) { cr_assert_eq(pol_metrics_new(&m), 0); }
static void teardown(void) { pol_metrics_free(m); }

static struct pol_path snap(unsigned iface, uint64_t now) {
  struct pol_path p = {0};
  cr_assert_eq(pol_metrics_snapshot(m, iface, now, &p), 0);
  return p;
}

TestSuite(metrics, .init = setup, .fini = teardown);

Test(metrics, empty_is_unknown) {
  struct pol_path p = snap(0, 10 * S);
  cr_assert_eq(p.srtt_min_us, 0);
  cr_assert_eq(p.srtt_med_us, 0);
  cr_assert_eq(p.max_rate, 0);
  cr_assert_eq(p.cur_rate, 0);
}

Test(metrics, srtt_min_and_median) {
  cr_assert_eq(pol_metrics_rtt(m, 1, 100, 30000, 0), 0);
  cr_assert_eq(pol_metrics_rtt(m, 1, 101, 10000, 0), 0);
  cr_assert_eq(pol_metrics_rtt(m, 1, 102, 20000, 0), 0);
  struct pol_path p = snap(1, S);
  cr_assert_eq(p.srtt_min_us, 10000);
  cr_assert_eq(p.srtt_med_us, 20000);
  cr_assert_eq(pol_metrics_rtt(m, 1, 103, 40000, 0), 0);
  p = snap(1, S);
  cr_assert_eq(p.srtt_med_us, 25000); /* mean of 20 000 and 30 000 */
  /* A connection's new sample replaces its old one for the median: 10 000 → 50 000; the
   * minimum keeps the lowest it has shown (its SRTT grew with the queue it filled). */
  cr_assert_eq(pol_metrics_rtt(m, 1, 101, 50000, 0), 0);
  p = snap(1, S);
  cr_assert_eq(p.srtt_min_us, 10000);
  cr_assert_eq(p.srtt_med_us, 35000); /* 20, 30, 40, 50 */
  /* Once that connection's slot expires, its minimum goes with it. */
  p = snap(1, POL_METRICS_EXPIRY_US);
  cr_assert_eq(p.srtt_min_us, 0);
  /* Other interfaces are separate. */
  cr_assert_eq(snap(0, S).srtt_min_us, 0);
}

Test(metrics, handshake_is_the_first_estimate_only) {
  cr_assert_eq(pol_metrics_handshake(m, 0, 7, 50000, 0), 0);
  cr_assert_eq(snap(0, 0).srtt_min_us, 50000);
  cr_assert_eq(pol_metrics_rtt(m, 0, 7, 40000, 1000), 0);
  cr_assert_eq(snap(0, 1000).srtt_min_us, 40000);
  /* A later handshake report for the same connection must not undo the SRTT. */
  cr_assert_eq(pol_metrics_handshake(m, 0, 7, 90000, 2000), 0);
  cr_assert_eq(snap(0, 2000).srtt_min_us, 40000);
  cr_assert_eq(snap(0, 2000).srtt_med_us, 40000);
  /* The queue it fills inflates its SRTT: the minimum stays at the handshake-era value. */
  cr_assert_eq(pol_metrics_rtt(m, 0, 7, 70000, 3000), 0);
  cr_assert_eq(snap(0, 3000).srtt_min_us, 40000);
  cr_assert_eq(snap(0, 3000).srtt_med_us, 70000);
}

/* The kernel's minimum RTT of a connection lowers its minimum even when every SRTT the
 * engine read was already lifted by the queue; the median stays on the latest SRTT. */
Test(metrics, kernel_min_rtt_is_the_connections_floor) {
  cr_assert_eq(pol_metrics_min_rtt(m, 0, 9, 10000, 0), -ENOENT); /* no SRTT of it yet */
  cr_assert_eq(pol_metrics_rtt(m, 0, 9, 12900, 1000), 0);
  cr_assert_eq(pol_metrics_min_rtt(m, 0, 9, 10100, 1000), 0);
  cr_assert_eq(snap(0, 1000).srtt_min_us, 10100);
  cr_assert_eq(snap(0, 1000).srtt_med_us, 12900);
  /* Never raised: a higher report (another window) leaves the floor. */
  cr_assert_eq(pol_metrics_rtt(m, 0, 9, 30000, 2000), 0);
  cr_assert_eq(pol_metrics_min_rtt(m, 0, 9, 11000, 2000), 0);
  cr_assert_eq(snap(0, 2000).srtt_min_us, 10100);
  cr_assert_eq(snap(0, 2000).srtt_med_us, 30000);
  /* "None yet" (~0U), 0 and a bad interface are no samples. */
  cr_assert_eq(pol_metrics_min_rtt(m, 0, 9, UINT32_MAX, 2000), -EINVAL);
  cr_assert_eq(pol_metrics_min_rtt(m, 0, 9, 0, 2000), -EINVAL);
  cr_assert_eq(pol_metrics_min_rtt(m, POL_MAX_IFACES, 9, 5000, 2000), -EINVAL);
  cr_assert_eq(snap(0, 2000).srtt_min_us, 10100);
  /* It goes with the connection's slot. */
  cr_assert_eq(snap(0, 2000 + POL_METRICS_EXPIRY_US).srtt_min_us, 0);
}

/* Metrics paper §3.2: kept 5 minutes, then back to 0. */
Test(metrics, srtt_expires_after_five_minutes) {
  cr_assert_eq(pol_metrics_rtt(m, 2, 1, 10000, 0), 0);
  cr_assert_eq(pol_metrics_rtt(m, 2, 2, 30000, 60 * S), 0);
  struct pol_path p = snap(2, 300 * S - 1);
  cr_assert_eq(p.srtt_min_us, 10000);
  cr_assert_eq(p.srtt_med_us, 20000);
  p = snap(2, 300 * S);
  cr_assert_eq(p.srtt_min_us, 30000);
  cr_assert_eq(p.srtt_med_us, 30000);
  p = snap(2, 360 * S);
  cr_assert_eq(p.srtt_min_us, 0);
  cr_assert_eq(p.srtt_med_us, 0);
  /* A refreshed sample lives on. */
  cr_assert_eq(pol_metrics_rtt(m, 2, 2, 30000, 359 * S), 0);
  cr_assert_eq(snap(2, 400 * S).srtt_min_us, 30000);
}

/* 17 connections, 16 slots: the least recently updated goes. Conn 0 (1 000 µs) was
 * refreshed last, so conn 1 (2 000 µs) is the one dropped. */
Test(metrics, srtt_slots_are_bounded) {
  for (uint64_t c = 0; c < 16; c++)
    cr_assert_eq(pol_metrics_rtt(m, 3, c, (c + 1) * 1000, c), 0);
  cr_assert_eq(pol_metrics_rtt(m, 3, 0, 1000, 20), 0);
  cr_assert_eq(pol_metrics_rtt(m, 3, 16, 17000, 21), 0);
  struct pol_path p = snap(3, 100);
  cr_assert_eq(p.srtt_min_us, 1000);
  cr_assert_eq(p.srtt_med_us, 9500); /* 1 000, 3 000 … 17 000: mean of 9 000 and 10 000 */
  /* Next to go is conn 2 (3 000 µs, updated at 2). */
  cr_assert_eq(pol_metrics_rtt(m, 3, 17, 50000, 22), 0);
  p = snap(3, 100);
  cr_assert_eq(p.srtt_min_us, 1000);
  cr_assert_eq(p.srtt_med_us, 10500); /* 1, 4 … 17, 50 (thousands): mean of 10 and 11 */
}

Test(metrics, bad_arguments) {
  struct pol_path p;
  cr_assert_eq(pol_metrics_rtt(m, POL_MAX_IFACES, 1, 1000, 0), -EINVAL);
  cr_assert_eq(pol_metrics_rtt(m, 0, 1, 0, 0), -EINVAL); /* SYN-SENT reports 0 */
  cr_assert_eq(pol_metrics_handshake(m, 0, 1, 0, 0), -EINVAL);
  cr_assert_eq(pol_metrics_bytes(m, POL_MAX_IFACES, 1, 0), -EINVAL);
  cr_assert_eq(pol_metrics_rx_counter(m, POL_MAX_IFACES, 1, 0), -EINVAL);
  cr_assert_eq(pol_metrics_snapshot(m, POL_MAX_IFACES, 0, &p), -EINVAL);
  cr_assert_eq(pol_metrics_transfers(m, POL_MAX_IFACES, 1), -EINVAL);
  cr_assert_eq(pol_metrics_reset(m, POL_MAX_IFACES), -EINVAL);
  cr_assert_eq(snap(0, 0).srtt_min_us, 0);
}

/* 100 ms buckets: 1 000 bytes in one bucket is 10 000 B/s. */
Test(metrics, rate_buckets) {
  cr_assert_eq(pol_metrics_bytes(m, 0, 500, 0), 0);
  cr_assert_eq(pol_metrics_bytes(m, 0, 500, 99999), 0);
  struct pol_path p = snap(0, 50000);
  cr_assert_eq(p.max_rate, 10000); /* the bucket still filling counts for the max */
  cr_assert_eq(p.cur_rate, 0);     /* but is not complete yet */
  p = snap(0, 100000);
  cr_assert_eq(p.max_rate, 10000);
  cr_assert_eq(p.cur_rate, 10000); /* bucket 0 is the last complete one */
  cr_assert_eq(pol_metrics_bytes(m, 0, 3000, 150000), 0);
  p = snap(0, 250000);
  cr_assert_eq(p.max_rate, 30000);
  cr_assert_eq(p.cur_rate, 30000);
  p = snap(0, 300000);
  cr_assert_eq(p.cur_rate, 0); /* bucket 2 had no bytes */
  cr_assert_eq(p.max_rate, 30000);
}

/* A bucket counts until 5 minutes after it began: [0, 300 s). */
Test(metrics, rate_expires_at_exactly_five_minutes) {
  cr_assert_eq(pol_metrics_bytes(m, 0, 1000, 0), 0);
  cr_assert_eq(snap(0, 300 * S - 1).max_rate, 10000);
  cr_assert_eq(snap(0, 300 * S).max_rate, 0);
}

/* 1 000 @ 0 s, 500 @ 1 s, 2 000 @ 2 s, 100 @ 3 s: the 2 000 rules until 302 s, then 100. */
Test(metrics, sliding_max) {
  cr_assert_eq(pol_metrics_bytes(m, 4, 1000, 0), 0);
  cr_assert_eq(pol_metrics_bytes(m, 4, 500, 1 * S), 0);
  cr_assert_eq(pol_metrics_bytes(m, 4, 2000, 2 * S), 0);
  cr_assert_eq(pol_metrics_bytes(m, 4, 100, 3 * S), 0);
  cr_assert_eq(snap(4, 10 * S).max_rate, 20000);
  cr_assert_eq(snap(4, 240 * S).max_rate, 20000);
  cr_assert_eq(snap(4, 302 * S - 1).max_rate, 20000);
  cr_assert_eq(snap(4, 302 * S).max_rate, 1000);
  cr_assert_eq(snap(4, 303 * S).max_rate, 0);
  /* New traffic after a long silence starts afresh. */
  cr_assert_eq(pol_metrics_bytes(m, 4, 700, 1000 * S), 0);
  cr_assert_eq(snap(4, 1000 * S).max_rate, 7000);
}

/* The deque against a brute-force maximum over every bucket in the window, on a
 * pseudo-random trace of 20 minutes with bursts and silences. */
Test(metrics, sliding_max_matches_brute_force) {
  enum { N = 12000 }; /* buckets in 20 minutes */
  static uint64_t bytes[N];
  uint64_t x = 88172645463325252ULL;
  for (uint64_t b = 0; b < N; b++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    bytes[b] = (x % 4 == 0) ? 0 : (x >> 8) % 100000; /* a quarter of the buckets silent */
    if (bytes[b]) {
      /* Two reports inside the bucket: counts add up. */
      cr_assert_eq(pol_metrics_bytes(m, 5, bytes[b] / 2, b * 100000 + 10), 0);
      cr_assert_eq(pol_metrics_bytes(m, 5, bytes[b] - bytes[b] / 2, b * 100000 + 99999), 0);
    }
    if (b % 7)
      continue;
    uint64_t max = 0;
    for (uint64_t k = b >= 2999 ? b - 2999 : 0; k <= b; k++)
      if (bytes[k] > max)
        max = bytes[k];
    cr_assert_eq(snap(5, b * 100000 + 50000).max_rate, (double)max * 10, "bucket %lu", (unsigned long)b);
  }
}

Test(metrics, rx_counter_deltas) {
  cr_assert_eq(pol_metrics_rx_counter(m, 6, 1000000, 0), 0); /* baseline only */
  cr_assert_eq(snap(6, 50000).max_rate, 0);
  cr_assert_eq(pol_metrics_rx_counter(m, 6, 1002000, 100000), 0); /* 2 000 bytes */
  cr_assert_eq(snap(6, 150000).max_rate, 20000);
  cr_assert_eq(pol_metrics_rx_counter(m, 6, 500, 200000), 0);  /* counter reset */
  cr_assert_eq(pol_metrics_rx_counter(m, 6, 1500, 300000), 0); /* 1 000 bytes */
  struct pol_path p = snap(6, 400000);
  cr_assert_eq(p.max_rate, 20000);
  cr_assert_eq(p.cur_rate, 10000);
}

Test(metrics, counters_never_expire_and_never_go_negative) {
  cr_assert_eq(pol_metrics_transfers(m, 0, 1), 0);
  cr_assert_eq(pol_metrics_transfers(m, 0, 1), 0);
  cr_assert_eq(pol_metrics_transfers(m, 0, -1), 0);
  cr_assert_eq(pol_metrics_conns(m, 0, 3), 0);
  cr_assert_eq(pol_metrics_transfers(m, 0, -2), -EINVAL);
  cr_assert_eq(pol_metrics_conns(m, 0, -4), -EINVAL);
  struct pol_path p = snap(0, 3600 * S);
  cr_assert_eq(p.transfers, 1);
  cr_assert_eq(p.conns, 3);
}

Test(metrics, reset_forgets_one_interface) {
  cr_assert_eq(pol_metrics_rtt(m, 0, 1, 1000, 0), 0);
  cr_assert_eq(pol_metrics_rtt(m, 1, 1, 2000, 0), 0);
  cr_assert_eq(pol_metrics_bytes(m, 0, 1000, 0), 0);
  cr_assert_eq(pol_metrics_conns(m, 0, 1), 0);
  cr_assert_eq(pol_metrics_reset(m, 0), 0);
  struct pol_path p = snap(0, 1);
  cr_assert_eq(p.srtt_min_us, 0);
  cr_assert_eq(p.max_rate, 0);
  cr_assert_eq(p.conns, 0);
  cr_assert_eq(snap(1, 1).srtt_min_us, 2000);
}

/* The snapshot fills only metric fields: what the engine set stays. */
Test(metrics, snapshot_leaves_engine_fields) {
  struct pol_path p = {.name = "wifi", .usable = true, .reusable = true, .metered = true};
  cr_assert_eq(pol_metrics_snapshot(m, 0, 0, &p), 0);
  cr_assert_str_eq(p.name, "wifi");
  cr_assert(p.usable && p.reusable && p.metered);
}

Test(metrics, a_confirmed_train_rate_lifts_max_rate_above_the_buckets) {
  /* a slow-start round: 29 000 B in one bucket reads 290 kB/s; its trains read ~2.4 MB/s */
  cr_assert_eq(pol_metrics_bytes(m, 1, 29000, 10 * S + 50000), 0);
  cr_assert_eq(pol_metrics_capacity(m, 1, 2.4e6, 10 * S + 60000), 0);
  /* one train alone is not trusted: it may have been timed short */
  cr_assert_float_eq(snap(1, 10 * S + 150000).max_rate, 290000, 1e-6);
  cr_assert_float_eq(pol_metrics_train_rate(m, 1, 10 * S + 150000), 0, 1e-9);
  cr_assert_eq(pol_metrics_capacity(m, 1, 2.3e6, 10 * S + 70000), 0); /* same slot */
  struct pol_path p = snap(1, 10 * S + 150000);
  cr_assert_float_eq(p.max_rate, 2.3e6, 1e-6);  /* the second fastest */
  cr_assert_float_eq(p.cur_rate, 290000, 1e-6); /* what the path carries now: buckets only */
  /* an outlier does not move it; a third train between the two does */
  cr_assert_eq(pol_metrics_capacity(m, 1, 9e6, 12 * S), 0);
  cr_assert_float_eq(snap(1, 12 * S).max_rate, 2.4e6, 1e-6);
  cr_assert_eq(pol_metrics_capacity(m, 1, 2.35e6, 13 * S), 0);
  cr_assert_float_eq(snap(1, 13 * S).max_rate, 2.4e6, 1e-6);
  /* a busier bucket still wins */
  cr_assert_eq(pol_metrics_bytes(m, 1, 300000, 14 * S), 0);
  cr_assert_float_eq(snap(1, 14 * S + 100000).max_rate, 3e6, 1e-6);
  cr_assert_float_eq(snap(0, 14 * S).max_rate, 0, 1e-9); /* per interface */
}

Test(metrics, train_rates_expire_after_five_minutes_per_slot) {
  cr_assert_eq(pol_metrics_capacity(m, 0, 3e6, 10 * S + 500000), 0);
  cr_assert_eq(pol_metrics_capacity(m, 0, 2e6, 10 * S + 600000), 0);
  cr_assert_eq(pol_metrics_capacity(m, 0, 1e6, 200 * S), 0);
  cr_assert_float_eq(snap(0, 309 * S + 999999).max_rate, 2e6, 1e-6);
  /* slot 10 s counts until 310 s (its start + 5 min); then one train is left: none */
  cr_assert_float_eq(snap(0, 310 * S).max_rate, 0, 1e-9);
  /* slot 10 + 300 reuses the ring entry: the old values are gone, the new one counts */
  cr_assert_eq(pol_metrics_capacity(m, 0, 5e5, 310 * S), 0);
  cr_assert_float_eq(snap(0, 400 * S).max_rate, 5e5, 1e-6);
  cr_assert_eq(pol_metrics_capacity(m, 0, 4e5, 501 * S), 0);
  cr_assert_float_eq(snap(0, 501 * S).max_rate, 4e5, 1e-6); /* 200 s slot expired at 500 */
  cr_assert_float_eq(snap(0, 810 * S).max_rate, 0, 1e-9);
}

Test(metrics, train_rate_bad_arguments) {
  cr_assert_eq(pol_metrics_capacity(m, POL_MAX_IFACES, 1e6, 0), -EINVAL);
  cr_assert_eq(pol_metrics_capacity(m, 0, 0, 0), -EINVAL);
  cr_assert_eq(pol_metrics_capacity(m, 0, -1, 0), -EINVAL);
  cr_assert_eq(pol_metrics_capacity(m, 0, 1.0 / 0.0, 0), -EINVAL);
  cr_assert_eq(pol_metrics_capacity(m, 0, 0.0 / 0.0, 0), -EINVAL);
  cr_assert_float_eq(snap(0, S).max_rate, 0, 1e-9);
  cr_assert_float_eq(pol_metrics_train_rate(m, POL_MAX_IFACES, S), 0, 1e-9);
}

Test(metrics, reset_forgets_train_rates) {
  cr_assert_eq(pol_metrics_capacity(m, 2, 2e6, S), 0);
  cr_assert_eq(pol_metrics_capacity(m, 2, 2e6, S), 0);
  cr_assert_float_eq(snap(2, S).max_rate, 2e6, 1e-6);
  cr_assert_eq(pol_metrics_reset(m, 2), 0);
  cr_assert_float_eq(snap(2, S).max_rate, 0, 1e-9);
}
