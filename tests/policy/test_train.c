/* Packet-train capacity: busy stretches of hand-made arrival curves (gaps, coalesced reads, late reads, tiny trains) and their exact rates. */
#include <criterion/criterion.h>

#include "policy/train.h"

/* A link of 2 MB/s with 1000-byte segments: one every 500 µs; RTT 100 ms. */
#define MSS 1000u
#define SEG_US 500u
#define RTT 100000u

static struct pol_train tr;
static void setup(void) { tr = (struct pol_train){0}; }

/* A sample of full segments: segs so far, as many × MSS in order. */
static double at(uint64_t segs, uint64_t now) { return pol_train_sample(&tr, segs, segs * MSS, MSS, RTT, now); }

/* One segment per sample from segment `first` (already counted at t0) to `last`. */
static double train(uint64_t first, uint64_t last, uint64_t t0) {
  double r = 0;
  for (uint64_t s = first + 1; s <= last; s++)
    r += at(s, t0 + (s - first) * SEG_US);
  return r;
}

TestSuite(train, .init = setup);

Test(train, a_round_of_twenty_gives_the_bottleneck_rate_when_the_next_round_begins) {
  cr_assert_eq(at(0, 0), 0);             /* the handshake's baseline */
  cr_assert_eq(at(1, 100000), 0);        /* the round's first segment: no duration */
  cr_assert_eq(train(1, 21, 100000), 0); /* 20 more, one per 500 µs: still open */
  /* 90 ms later the next round: the stretch closes with 20 000 B in 10 000 µs */
  cr_assert_float_eq(at(22, 200000), 2e6, 1e-6);
  cr_assert_eq(tr.closed_bytes, 20000);
  cr_assert_eq(tr.closed_us, 10000);
}

Test(train, an_idle_gap_splits_two_trains_that_each_count) {
  at(0, 0);
  at(1, 100000);
  train(1, 21, 100000); /* ends at 110 000 */
  /* 30 ms idle then another 20: a stretch spanning both would read 40 000 B / 40.5 ms */
  cr_assert_float_eq(at(22, 140000), 2e6, 1e-6);
  train(22, 42, 140000);
  cr_assert_float_eq(pol_train_end(&tr), 2e6, 1e-6);
}

Test(train, coalesced_reads_keep_the_rate) {
  /* a busy reader collects four segments per sample, every 2 ms: no gap, same rate */
  at(0, 0);
  at(4, 100000);
  for (uint64_t k = 1; k <= 8; k++)
    cr_assert_eq(at(4 + 4 * k, 100000 + 2000 * k), 0);
  cr_assert_float_eq(pol_train_end(&tr), 32000 / 0.016, 1e-6);
}

Test(train, a_late_read_in_the_middle_stays_in_the_train) {
  at(0, 0);
  at(1, 100000);
  train(1, 11, 100000); /* 105 000 */
  /* the loop was away 20 ms while 40 segments arrived: exact at its time, not a gap */
  cr_assert_eq(at(51, 125000), 0);
  train(51, 61, 125000);
  cr_assert_float_eq(pol_train_end(&tr), 2e6, 1e-6);
}

Test(train, a_late_first_read_cannot_over_read) {
  /* the round's first six segments are read together 2.5 ms late: they arrived before the
   * stretch's first sample, so they are not counted, and the rest keeps its spacing */
  at(0, 0);
  at(6, 102500);
  train(6, 26, 102500);
  cr_assert_float_eq(pol_train_end(&tr), 2e6, 1e-6);
}

Test(train, a_late_last_read_only_lowers_the_rate) {
  at(0, 0);
  at(1, 100000);
  train(1, 17, 100000); /* 108 000 */
  /* the last three segments arrived by 109 500 but were read at 112 000 */
  cr_assert_eq(at(20, 112000), 0);
  double r = pol_train_end(&tr);
  cr_assert_float_eq(r, 19000 / 0.012, 1e-6);
  cr_assert_lt(r, 2e6);
}

Test(train, a_single_initial_window_does_not_count) {
  /* IW of 10 segments, perfectly spaced: 9 after the first, under POL_TRAIN_MIN_SEGS */
  at(0, 0);
  at(1, 100000);
  train(1, 10, 100000);
  cr_assert_eq(at(11, 200000), 0);
  cr_assert_eq(tr.closed_bytes, 9000); /* it was seen, and refused */
}

Test(train, a_fast_burst_shorter_than_the_minimum_time_does_not_count) {
  /* 30 segments within 600 µs (a fast link or a receiver catching up): too short to time */
  at(0, 0);
  at(1, 100000);
  for (uint64_t s = 2; s <= 31; s++)
    at(s, 100000 + (s - 1) * 20);
  cr_assert_eq(pol_train_end(&tr), 0);
}

Test(train, a_timer_sample_without_bytes_closes_an_idle_stretch_only) {
  at(0, 0);
  at(1, 100000);
  train(1, 21, 100000);            /* 110 000 */
  cr_assert_eq(at(21, 111000), 0); /* 1 ms: within the floor, still open */
  cr_assert(tr.on);
  cr_assert_float_eq(at(21, 150000), 2e6, 1e-6); /* 40 ms without a segment: idle */
  cr_assert(!tr.on);
  cr_assert_eq(at(22, 200000), 0); /* the next round starts a new stretch */
  cr_assert(tr.on);
}

Test(train, a_short_last_segment_counts_its_bytes_not_a_full_mss) {
  at(0, 0);
  pol_train_sample(&tr, 1, 1000, MSS, RTT, 100000);
  for (uint64_t s = 2; s <= 17; s++)
    pol_train_sample(&tr, s, s * 1000, MSS, RTT, 100000 + (s - 1) * SEG_US);
  /* the last segment carried 100 bytes */
  pol_train_sample(&tr, 18, 17100, MSS, RTT, 100000 + 17 * SEG_US);
  cr_assert_float_eq(pol_train_end(&tr), 16100 / 0.0085, 1e-6);
}

Test(train, a_filled_hole_releases_no_extra_bytes) {
  at(0, 0);
  at(1, 100000);
  /* segment 2 lost: 3..18 arrive out of order (in-order count stays at 1000) */
  for (uint64_t s = 3; s <= 18; s++)
    pol_train_sample(&tr, s - 1, 1000, MSS, RTT, 100000 + (s - 1) * SEG_US);
  /* the retransmission arrives: 17 000 in-order bytes at once, one segment on the wire */
  pol_train_sample(&tr, 18, 18000, MSS, RTT, 100000 + 18 * SEG_US);
  /* counted: 1 000 B (the retransmission), not the 17 000 it released: too few to count */
  cr_assert_eq(pol_train_end(&tr), 0);
  cr_assert_eq(tr.closed_bytes, 1000);
  cr_assert_eq(tr.closed_us, 9000);
}

Test(train, counters_going_back_restart_the_tracking) {
  at(0, 0);
  at(50, 100000);
  train(50, 70, 100000);
  cr_assert_eq(at(3, 120000), 0); /* another connection's counters: a baseline */
  cr_assert(!tr.on);
  cr_assert_eq(pol_train_end(&tr), 0);
}

Test(train, a_slow_link_streaming_is_one_stretch) {
  /* 250 kB/s (one segment per 4 ms) on a 10 ms RTT: the first interval (4 ms) is within
   * half a round trip... */
  for (uint64_t s = 0; s <= 40; s++)
    pol_train_sample(&tr, s, s * MSS, MSS, 10000, 1000000 + s * 4000);
  cr_assert_float_eq(pol_train_end(&tr), 250000, 1e-6);
  /* ...and one idle round trip splits it, measured either side */
  setup();
  pol_train_sample(&tr, 0, 0, MSS, 10000, 0);
  pol_train_sample(&tr, 1, MSS, MSS, 10000, 1000000);
  cr_assert_eq(pol_train_sample(&tr, 2, 2 * MSS, MSS, 10000, 1008000), 0); /* 8 ms > 5 ms */
  cr_assert_eq(tr.t0_us, 1008000);                                         /* a new stretch began at the late segment */
}

Test(train, a_stall_and_its_catch_up_stay_in_one_stretch) {
  /* the link delivers one segment per 500 µs, but something after it stalls 3 ms and then
   * hands over its backlog at once (6 segments 50 µs apart): the stretch keeps the stall, so
   * the two average to the link's rate; a new stretch at the catch-up would read
   * 15 000 B in 5 250 µs = 2.86 MB/s */
  at(0, 0);
  at(1, 100000);
  train(1, 21, 100000);             /* 110 000 */
  for (uint64_t k = 1; k <= 6; k++) /* due at 110 500 … 113 000 */
    cr_assert_eq(at(21 + k, 113000 + 50 * k), 0);
  cr_assert(tr.on);
  cr_assert_eq(tr.t0_us, 100000);
  train(27, 36, 113000);                                        /* on time again: 113 500 … 117 500 */
  cr_assert_float_eq(pol_train_end(&tr), 35000 / 0.0175, 1e-6); /* 2 MB/s */
}

Test(train, a_pause_under_a_quarter_rtt_is_not_idle) {
  /* 20 ms without a segment on a 100 ms path: kept (an under-read at worst) */
  at(0, 0);
  at(1, 100000);
  train(1, 21, 100000); /* 110 000 */
  cr_assert_eq(at(22, 130000), 0);
  cr_assert_eq(tr.t0_us, 100000);
  cr_assert_float_eq(pol_train_end(&tr), 21000 / 0.03, 1e-6);
}
