/* Scheduler tests: Algorithm 1's four cases, the probe, pipelining, re-split and failure against hand-computed values. */
#include <criterion/criterion.h>
#include <errno.h>

#include "scheduler/sched.h"

/* Small round numbers so every expected value can be worked out by hand:
 * initial 20000 B, min_chunk 1000 B, T_max = 20·rtl; Algorithm 1 alone, without the bound on
 * requests per object (tests/scheduler/test_bound.c). */
static void no_bound(struct sched_config *cfg) {
  cfg->steady_chunk = 0;
  cfg->floor_rtts = 0;
  cfg->steady_share = 0;
  cfg->tail_chunk = 0;
}

static struct sched *mk(uint64_t total) {
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.initial_chunk = 20000;
  cfg.min_chunk = 1000;
  cfg.hm_window = 0;
  no_bound(&cfg);
  struct sched *s = NULL;
  cr_assert_eq(sched_new(&cfg, total, &s), 0);
  return s;
}

static struct sched_conn_stats st(struct sched *s, int c) {
  struct sched_conn_stats x;
  cr_assert_eq(sched_conn_stats(s, c, &x), 0);
  return x;
}

static void expect_range(struct sched *s, int c, uint64_t now, uint64_t off, uint64_t len, enum sched_case k) {
  struct sched_range r = {0, 0};
  int rc = sched_next_range(s, c, now, &r);
  cr_assert_eq(rc, 0, "conn %d: rc %d", c, rc);
  cr_assert(r.off == off && r.len == len, "conn %d: got %lu+%lu, want %lu+%lu", c, r.off, r.len, off, len);
  cr_assert_eq(st(s, c).last_case, k, "conn %d: case %d, want %d", c, st(s, c).last_case, k);
}

/* Receives the probe [off, off+20000) on c in two reads `dt` µs apart, so R̄ = 10000 B / dt
 * exactly (one sample; the first read only marks the start). */
static void prime(struct sched *s, int c, uint64_t off, uint64_t t0, uint64_t dt) {
  cr_assert_eq(sched_on_data(s, c, off, 10000, t0), 10000);
  cr_assert_eq(sched_on_data(s, c, off + 10000, 10000, t0 + dt), 10000);
  cr_assert_eq(st(s, c).queued, 0);
}

/* ---- Algorithm 1, one connection (β = ∞) ---- */

Test(cases, case3_far_from_the_end_takes_tmax_worth) {
  /* R̄ = 1e7 B/s, rtl = 10 ms → T_max = 0.2 s → 2,000,000 B. */
  struct sched *s = mk(100000000);
  int c = sched_conn_add(s, 0);
  sched_on_rtt(s, c, 10000);
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  prime(s, c, 0, 0, 1000);
  cr_assert_float_eq(st(s, c).rate_Bps, 1e7, 1e-3);
  expect_range(s, c, 1000, 20000, 2000000, SCHED_CASE_TMAX);
  sched_free(s);
}

Test(cases, case1_alone_takes_all_that_fits_in_tmax) {
  /* 1,000,000 left ≤ 2,000,000 = T_max·R̄ and β = ∞. */
  struct sched *s = mk(1020000);
  int c = sched_conn_add(s, 0);
  sched_on_rtt(s, c, 10000);
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  prime(s, c, 0, 0, 1000);
  expect_range(s, c, 1000, 20000, 1000000, SCHED_CASE_ALL);
  sched_free(s);
}

Test(cases, small_leftover_is_taken_with_the_chunk) {
  /* Case 3 would leave 500 B < min_chunk behind: it takes 2,000,500 instead. */
  struct sched *s = mk(20000 + 2000000 + 500);
  int c = sched_conn_add(s, 0);
  sched_on_rtt(s, c, 10000);
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  prime(s, c, 0, 0, 1000);
  expect_range(s, c, 1000, 20000, 2000500, SCHED_CASE_TMAX);
  sched_free(s);
}

/* ---- Algorithm 1, two connections ----
 * c0: rtl 10 ms, R̄0 = 1e7 B/s (T_max 0.2 s). c1: rtl 5 ms, R̄1 = 5e6 B/s (T_max 0.1 s).
 * Probes: c0 [0,20000), c1 [20000,40000). At t = 2000 µs c1 asks first while c0 is idle
 * (β = 0, ΣR̄_k = 1e7): with more than 1.5e6 left, (left)/(1.5e7) > 0.1 → case 3, 500,000 B.
 * c1 then is busy for β = 5 ms (first byte) + 500,000/5e6 = 0.105 s. Then c0 decides with
 * left' = L − 540,000. */
static struct sched *two(uint64_t L, int *c0, int *c1) {
  struct sched *s = mk(L);
  *c0 = sched_conn_add(s, 0);
  *c1 = sched_conn_add(s, 0);
  sched_on_rtt(s, *c0, 10000);
  sched_on_rtt(s, *c1, 5000);
  expect_range(s, *c0, 0, 0, 20000, SCHED_CASE_PROBE);
  expect_range(s, *c1, 0, 20000, 20000, SCHED_CASE_PROBE);
  prime(s, *c0, 0, 0, 1000);
  prime(s, *c1, 20000, 0, 2000);
  cr_assert_float_eq(st(s, *c1).rate_Bps, 5e6, 1e-3);
  expect_range(s, *c1, 2000, 40000, 500000, SCHED_CASE_TMAX);
  return s;
}

Test(cases, case2_balances_the_last_chunks) {
  /* left' = 1,500,000 > β·R̄0 = 1,050,000, so not case 1; T = (1,500,000 + 0.105·5e6)/1.5e7
   * = 0.135 s ≤ 0.2 → case 2: 1,350,000 B. Check: c0 ends at 0.135 s; c1 ends its chunk at
   * 0.105 s and the 150,000 B left take it 0.03 s more: both end at 0.135 s. */
  int c0, c1;
  struct sched *s = two(2040000, &c0, &c1);
  expect_range(s, c0, 2000, 540000, 1350000, SCHED_CASE_BALANCE);
  sched_free(s);
}

Test(cases, case3_with_two_connections) {
  /* left' = 5,000,000: T = (5e6 + 525,000)/1.5e7 = 0.368 s > 0.2 → T_max: 2,000,000 B. */
  int c0, c1;
  struct sched *s = two(5540000, &c0, &c1);
  expect_range(s, c0, 2000, 540000, 2000000, SCHED_CASE_TMAX);
  sched_free(s);
}

Test(cases, case1_when_done_before_the_other_connection_is_free) {
  /* left' = 1,040,000 ≤ β·R̄0 = 1,050,000 and ≤ T_max·R̄0: c0 takes all of it. */
  int c0, c1;
  struct sched *s = two(1580000, &c0, &c1);
  expect_range(s, c0, 2000, 540000, 1040000, SCHED_CASE_ALL);
  sched_free(s);
}

Test(cases, after_a_balancing_chunk_end_lets_anyone_take_all_that_fits) {
  /* After case 2 (END), c1 gets the last 150,000 B at once though β·R̄1 < 150,000. */
  int c0, c1;
  struct sched *s = two(2040000, &c0, &c1);
  expect_range(s, c0, 2000, 540000, 1350000, SCHED_CASE_BALANCE);
  cr_assert_eq(sched_next_range(s, c1, 2000, &(struct sched_range){0}), 0);
  cr_assert_eq(st(s, c1).last_case, SCHED_CASE_ALL);
  cr_assert_eq(st(s, c1).last_len, 150000);
  sched_free(s);
}

Test(cases, beta_counts_from_when_the_own_queue_drains) {
  /* L = 4,040,000: c0 first takes 2,000,000 B [540000, 2540000) (case 3: T = 0.268 s).
   * It reads 10,000 B per ms (R̄0 stays 1e7) until it owes 100,000 B (0.01 s) at t = 201 ms;
   * c1 got nothing, so it is busy for 500,000/5e6 = 0.1 s. The pipelined chunk starts when c0
   * drains: β = 0.1 − 0.01 = 0.09, T = (1,500,000 + 0.09·5e6)/1.5e7 = 0.13 s → 1,300,000 B
   * (counting β from now would give 1,333,333). */
  int c0, c1;
  struct sched *s = two(4040000, &c0, &c1);
  expect_range(s, c0, 2000, 540000, 2000000, SCHED_CASE_TMAX);
  uint64_t off = 540000, t = 12000;
  for (int k = 0; k < 190; k++, off += 10000, t += 1000)
    cr_assert_eq(sched_on_data(s, c0, off, 10000, t), 10000);
  t -= 1000;
  cr_assert_eq(st(s, c0).outstanding, 100000);
  cr_assert_float_eq(st(s, c0).rate_Bps, 1e7, 1e-3);
  cr_assert(sched_want_pipeline(s, c0, t));
  expect_range(s, c0, t, 2540000, 1300000, SCHED_CASE_BALANCE);
  sched_free(s);
}

/* ---- case 4 and the probe ---- */

Test(cases, case4_new_connection_gets_min_of_initial_and_left) {
  struct {
    uint64_t total;
    uint64_t want1;
  } t[] = {{100000, 20000}, {30000, 10000}, {21000, 1000}};
  for (size_t i = 0; i < 3; i++) {
    struct sched *s = mk(t[i].total);
    int c0 = sched_conn_add(s, 0), c1 = sched_conn_add(s, 0);
    expect_range(s, c0, 0, 0, 20000, SCHED_CASE_PROBE);
    expect_range(s, c1, 0, 20000, t[i].want1, SCHED_CASE_PROBE);
    sched_free(s);
  }
}

Test(cases, upto_caps_a_range_and_zero_means_no_cap) {
  /* 100000 B; c0's probe 20000; c1 capped at 7000 of its case-4 20000, then uncapped it takes
   * the next 20000 (case 4 again: no sample yet) from where the cap left off. A cap above the
   * scheduler's size changes nothing. */
  struct sched *s = mk(100000);
  int c0 = sched_conn_add(s, 0), c1 = sched_conn_add(s, 0);
  expect_range(s, c0, 0, 0, 20000, SCHED_CASE_PROBE);
  struct sched_range r = {0, 0};
  cr_assert_eq(sched_next_range_upto(s, c1, 0, 7000, &r), 0);
  cr_assert(r.off == 20000 && r.len == 7000, "got %lu+%lu", r.off, r.len);
  cr_assert_eq(sched_next_range_upto(s, c1, 0, 0, &r), 0);
  cr_assert(r.off == 27000 && r.len == 40000, "got %lu+%lu", r.off, r.len);
  cr_assert_eq(sched_next_range_upto(s, c0, 0, 1000000, &r), 0);
  cr_assert(r.off == 67000 && r.len == 33000, "got %lu+%lu", r.off, r.len);
  sched_free(s);
}

Test(cases, sized_takes_what_the_caller_says_as_case_4) {
  /* 100000 B: before the size only the probe; then c1 asks 55000 (past its case-4 20000), the
   * lowest missing bytes, recorded as case 4 and counted as a chunk (its next case 4 doubles);
   * a size past what is missing gets the rest. */
  struct sched *s = mk(SCHED_LEN_UNKNOWN);
  int c0 = sched_conn_add(s, 0), c1 = sched_conn_add(s, 0);
  struct sched_range r = {0, 0};
  expect_range(s, c0, 0, 0, 20000, SCHED_CASE_PROBE);
  cr_assert_eq(sched_next_range_sized(s, c1, 0, 55000, &r), -EAGAIN, "the size is not known yet");
  cr_assert_eq(sched_set_total(s, 100000), 0);
  cr_assert_eq(sched_next_range_sized(s, c1, 0, 0, &r), -EINVAL);
  cr_assert_eq(sched_next_range_sized(s, c1, 0, 55000, &r), 0);
  cr_assert(r.off == 20000 && r.len == 55000, "got %lu+%lu", r.off, r.len);
  cr_assert_eq(st(s, c1).last_case, SCHED_CASE_PROBE);
  cr_assert_eq(st(s, c1).chunks, 1);
  cr_assert_eq(sched_next_range_sized(s, c1, 0, 1000000, &r), 0);
  cr_assert(r.off == 75000 && r.len == 25000, "got %lu+%lu", r.off, r.len);
  cr_assert_eq(sched_next_range_sized(s, c0, 0, 1000, &r), -ENODATA);
  sched_free(s);
}

Test(cases, last_takes_the_end_sized_as_next_would_be) {
  /* 100000 B; after the probe, c0 asks the end first (capped at 5000), then lowest-first
   * fills the middle up to it; the data of the end counts as any other read. */
  struct sched *s = mk(SCHED_LEN_UNKNOWN);
  int c0 = sched_conn_add(s, 0), c1 = sched_conn_add(s, 0);
  struct sched_range r = {0, 0};
  cr_assert_eq(sched_next_range_last(s, c0, 0, 0, &r), -EINVAL, "no end before the size is known");
  expect_range(s, c0, 0, 0, 20000, SCHED_CASE_PROBE);
  cr_assert_eq(sched_set_total(s, 100000), 0);
  cr_assert_eq(sched_next_range_last(s, c0, 0, 5000, &r), 0);
  cr_assert(r.off == 95000 && r.len == 5000, "got %lu+%lu", r.off, r.len);
  cr_assert_eq(sched_next_range_upto(s, c1, 0, 0, &r), 0);
  cr_assert(r.off == 20000 && r.len == 20000, "got %lu+%lu", r.off, r.len);
  cr_assert_eq(sched_next_range_upto(s, c1, 0, 100000, &r), 0);
  cr_assert(r.off == 40000 && r.len == 40000, "got %lu+%lu", r.off, r.len);
  cr_assert_eq(sched_next_range_upto(s, c1, 0, 100000, &r), 0);
  cr_assert(r.off == 80000 && r.len == 15000, "stops at the end's bytes: %lu+%lu", r.off, r.len);
  cr_assert_eq(sched_on_data(s, c0, 0, 20000, 1000), 20000);
  cr_assert_eq(sched_on_data(s, c0, 95000, 5000, 2000), 5000);
  cr_assert_eq(st(s, c0).queued, 0);
  sched_free(s);
}

Test(cases, case4_doubles_while_a_connection_gives_no_sample) {
  /* Each chunk arrives in a single read (a fast path): 20000, 40000, 80000, then a sample
   * (two reads 1 ms apart) switches to Algorithm 1 proper. */
  struct sched *s = mk(100000000);
  int c = sched_conn_add(s, 0);
  sched_on_rtt(s, c, 10000);
  uint64_t off = 0;
  for (uint64_t len = 20000; len <= 80000; len *= 2) {
    expect_range(s, c, 0, off, len, SCHED_CASE_PROBE);
    cr_assert_eq(sched_on_data(s, c, off, len, 100), (int)len);
    off += len;
  }
  expect_range(s, c, 200, off, 160000, SCHED_CASE_PROBE);
  sched_on_data(s, c, off, 150000, 1000);
  sched_on_data(s, c, off + 150000, 10000, 2000); /* 1e7 B/s */
  off += 160000;
  expect_range(s, c, 2000, off, 2000000, SCHED_CASE_TMAX);
  sched_free(s);
}

Test(probe, unknown_size_allows_only_the_probe_until_set_total) {
  struct sched *s = mk(SCHED_LEN_UNKNOWN);
  int c0 = sched_conn_add(s, 0), c1 = sched_conn_add(s, 0);
  struct sched_range r;
  expect_range(s, c0, 0, 0, 20000, SCHED_CASE_PROBE);
  cr_assert_eq(sched_next_range(s, c1, 0, &r), -EAGAIN);
  cr_assert(!sched_want_pipeline(s, c1, 0));
  cr_assert_eq(sched_set_total(s, 50000), 0);
  cr_assert(sched_want_pipeline(s, c1, 0));
  expect_range(s, c1, 0, 20000, 20000, SCHED_CASE_PROBE);
  sched_free(s);
}

/* probe_chunk sizes the probe alone: a 14600 B probe (one round trip of its own path) leaves
 * another path's first chunks at initial_chunk, doubling: 20000 then 40000, and the rest
 * (100000 - 14600 - 20000 - 40000 = 25400) (hand-computed). */
Test(probe, probe_chunk_sizes_only_the_probe) {
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.initial_chunk = 20000;
  cfg.probe_chunk = 14600;
  cfg.min_chunk = 1000;
  cfg.hm_window = 0;
  struct sched *s = NULL;
  cr_assert_eq(sched_new(&cfg, SCHED_LEN_UNKNOWN, &s), 0);
  int c0 = sched_conn_add(s, 0), c1 = sched_conn_add(s, 0);
  expect_range(s, c0, 0, 0, 14600, SCHED_CASE_PROBE);
  cr_assert_eq(sched_set_total(s, 100000), 0);
  expect_range(s, c1, 0, 14600, 20000, SCHED_CASE_PROBE);
  expect_range(s, c1, 0, 34600, 40000, SCHED_CASE_PROBE);
  expect_range(s, c1, 0, 74600, 25400, SCHED_CASE_PROBE);
  sched_free(s);
}

/* A probe larger than initial_chunk (a long round trip's worth) covers a whole small object:
 * nothing is left for another path. */
Test(probe, probe_chunk_larger_than_initial_covers_the_object) {
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.initial_chunk = 20000;
  cfg.probe_chunk = 150000;
  struct sched *s = NULL;
  cr_assert_eq(sched_new(&cfg, SCHED_LEN_UNKNOWN, &s), 0);
  int c0 = sched_conn_add(s, 0), c1 = sched_conn_add(s, 0);
  expect_range(s, c0, 0, 0, 150000, SCHED_CASE_PROBE);
  cr_assert_eq(sched_set_total(s, 102400), 0);
  cr_assert_eq(sched_next_range(s, c1, 0, &(struct sched_range){0}), -ENODATA);
  sched_free(s);
}

/* A probe that moves to another path's connection is resized before it is asked; the other
 * paths' first chunks stay at initial_chunk (hand-computed: 68227, then 20000 and 14173). Once
 * a range is out, or the size is known, the probe's size can no longer change. */
Test(probe, probe_chunk_set_before_the_probe_goes_out) {
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.initial_chunk = 20000;
  cfg.probe_chunk = 13456;
  cfg.min_chunk = 1000;
  struct sched *s = NULL;
  cr_assert_eq(sched_new(&cfg, SCHED_LEN_UNKNOWN, &s), 0);
  int c0 = sched_conn_add(s, 0), c1 = sched_conn_add(s, 0);
  cr_assert_eq(sched_set_probe_chunk(s, 0), -EINVAL);
  cr_assert_eq(sched_set_probe_chunk(s, 68227), 0);
  expect_range(s, c1, 0, 0, 68227, SCHED_CASE_PROBE);
  cr_assert_eq(sched_set_probe_chunk(s, 13456), -EBUSY);
  cr_assert_eq(sched_set_total(s, 102400), 0);
  cr_assert_eq(sched_set_probe_chunk(s, 13456), -EINVAL);
  expect_range(s, c0, 0, 68227, 20000, SCHED_CASE_PROBE);
  expect_range(s, c0, 0, 88227, 14173, SCHED_CASE_PROBE);
  sched_free(s);
}

Test(probe, object_smaller_than_the_probe_completes_with_it) {
  struct sched *s = mk(SCHED_LEN_UNKNOWN);
  int c0 = sched_conn_add(s, 0);
  expect_range(s, c0, 0, 0, 20000, SCHED_CASE_PROBE);
  cr_assert_eq(sched_set_total(s, 5000), 0);
  cr_assert_eq(st(s, c0).outstanding, 5000, "the server sends only 5000 B");
  cr_assert_eq(sched_on_data(s, c0, 0, 5000, 100), 5000);
  cr_assert(sched_done(s));
  cr_assert_eq(st(s, c0).queued, 0);
  sched_free(s);
}

/* ---- estimators through the API ---- */

Test(estimate_api, throughput_is_harmonic_mean_of_read_samples) {
  /* Samples 10000 B/1 ms, 5000 B/1 ms, 20000 B/1 ms → 3/(1e-7 + 2e-7 + 0.5e-7) = 8,571,428.57 B/s */
  struct sched *s = mk(1000000);
  int c = sched_conn_add(s, 0);
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  sched_on_data(s, c, 0, 1000, 0);
  sched_on_data(s, c, 1000, 10000, 1000);
  sched_on_data(s, c, 11000, 5000, 2000);
  cr_assert_eq(sched_on_data(s, c, 16000, 4000, 3000), 4000);
  cr_assert_float_eq(st(s, c).rate_Bps, 3 / (1e-7 + 2e-7 + 2.5e-7), 1e-3, "%f", st(s, c).rate_Bps);
  cr_assert_eq(st(s, c).samples, 3);
  sched_free(s);
}

Test(estimate_api, reads_closer_than_sample_min_are_pooled) {
  /* 4000 B at +400 µs is too soon (sample_min 1000 µs); at +1000 µs 10000 B/1 ms = 1e7. */
  struct sched *s = mk(1000000);
  int c = sched_conn_add(s, 0);
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  sched_on_data(s, c, 0, 1000, 0);
  sched_on_data(s, c, 1000, 4000, 400);
  cr_assert_eq(st(s, c).samples, 0);
  sched_on_data(s, c, 5000, 6000, 1000);
  cr_assert_eq(st(s, c).samples, 1);
  cr_assert_float_eq(st(s, c).rate_Bps, 1e7, 1e-3);
  sched_free(s);
}

Test(estimate_api, first_read_after_idle_is_not_a_sample) {
  /* The gap between chunks is not the path's throughput. */
  struct sched *s = mk(1000000);
  int c = sched_conn_add(s, 0);
  sched_on_rtt(s, c, 10000);
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  prime(s, c, 0, 0, 1000);
  cr_assert_eq(sched_next_range(s, c, 1000, &(struct sched_range){0}), 0);
  sched_on_data(s, c, 20000, 10000, 500000);
  cr_assert_eq(st(s, c).samples, 1);
  cr_assert_float_eq(st(s, c).rate_Bps, 1e7, 1e-3);
  sched_free(s);
}

Test(estimate_api, first_read_of_a_pipelined_response_after_a_gap_is_not_a_sample) {
  /* R̄ 5e6 from the probe; the next response was requested too late and its first read comes
   * 98 ms after the previous one: that interval is server idle time, not the path's rate. */
  struct sched *s = mk(100000000);
  int c = sched_conn_add(s, 0);
  sched_on_rtt(s, c, 10000);
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  sched_on_data(s, c, 0, 10000, 0);
  sched_on_data(s, c, 10000, 5000, 1000);
  cr_assert(sched_want_pipeline(s, c, 1000));
  expect_range(s, c, 1000, 20000, 1000000, SCHED_CASE_TMAX);
  sched_on_data(s, c, 15000, 5000, 2000);
  cr_assert_eq(st(s, c).samples, 2);
  cr_assert_eq(sched_on_data(s, c, 20000, 10000, 100000), 10000);
  cr_assert_eq(st(s, c).samples, 2, "the gap is not a sample");
  cr_assert_float_eq(st(s, c).rate_Bps, 5e6, 1e-3);
  sched_on_data(s, c, 30000, 10000, 102000);
  cr_assert_eq(st(s, c).samples, 3);
  cr_assert_float_eq(st(s, c).rate_Bps, 5e6, 1e-3);
  sched_free(s);
}

Test(estimate_api, a_read_after_the_caller_held_the_connection_is_not_a_sample) {
  /* R̄ 1e7 mid-response; the engine stops reading (its window full) for 2 s and then reads one
   * segment: 1448 B over 2 s would be a sample of 724 B/s. After sched_on_resume that read only
   * starts the next interval; the one after it is the path's. */
  struct sched *s = mk(100000000);
  int c = sched_conn_add(s, 0);
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  sched_on_data(s, c, 0, 1000, 0);
  sched_on_data(s, c, 1000, 10000, 1000);
  cr_assert_eq(st(s, c).samples, 1);
  cr_assert_eq(sched_on_resume(s, c), 0);
  cr_assert_eq(sched_on_data(s, c, 11000, 1448, 2001000), 1448);
  cr_assert_eq(st(s, c).samples, 1, "the hold is not a sample");
  sched_on_data(s, c, 12448, 5000, 2002000);
  cr_assert_eq(st(s, c).samples, 2);
  cr_assert_float_eq(st(s, c).rate_Bps, 2 / (1e-7 + 2e-7), 1e-3, "%f", st(s, c).rate_Bps);
  cr_assert_eq(sched_on_resume(s, 99), -EINVAL);
  sched_free(s);
}

Test(estimate_api, rtt_samples_are_smoothed) {
  struct sched *s = mk(1000000);
  int c = sched_conn_add(s, 0);
  sched_on_rtt(s, c, 100000);
  sched_on_rtt(s, c, 50000);
  cr_assert_float_eq(st(s, c).rtl_us, 90000, 1e-6);
  sched_on_rtt(s, c, 200000);
  cr_assert_float_eq(st(s, c).rtl_us, 112000, 1e-6);
  sched_free(s);
}

Test(estimate_api, first_byte_time_seeds_latency_without_samples) {
  struct sched *s = mk(1000000);
  int c = sched_conn_add(s, 0);
  expect_range(s, c, 1000, 0, 20000, SCHED_CASE_PROBE);
  sched_on_data(s, c, 0, 1000, 31000);
  cr_assert_float_eq(st(s, c).rtl_us, 30000, 1e-6);
  sched_free(s);
}

/* ---- pipelining ---- */

Test(pipeline, idle_connection_with_missing_bytes_wants_a_request) {
  struct sched *s = mk(100000);
  int c = sched_conn_add(s, 0);
  cr_assert(sched_want_pipeline(s, c, 0));
  sched_free(s);
}

Test(pipeline, fires_when_outstanding_falls_below_twice_the_bdp) {
  /* R̄ = 1e7, rtl = 10 ms: BDP 100,000 B, threshold 200,000 B of the 2,000,000 B chunk. */
  struct sched *s = mk(100000000);
  int c = sched_conn_add(s, 0);
  sched_on_rtt(s, c, 10000);
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  prime(s, c, 0, 0, 1000);
  expect_range(s, c, 1000, 20000, 2000000, SCHED_CASE_TMAX);
  uint64_t off = 20000, t = 11000;
  while (off < 20000 + 1800000) {
    cr_assert(!sched_want_pipeline(s, c, t), "outstanding %lu", 2020000 - off);
    cr_assert_eq(sched_on_data(s, c, off, 10000, t), 10000);
    off += 10000;
    t += 1000;
  }
  cr_assert_eq(st(s, c).outstanding, 200000);
  cr_assert(!sched_want_pipeline(s, c, t), "200,000 is not below 200,000");
  sched_on_data(s, c, off, 10000, t);
  cr_assert(sched_want_pipeline(s, c, t + 1000));
  sched_free(s);
}

Test(pipeline, off_means_wait_until_idle) {
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.initial_chunk = 20000;
  cfg.pipeline = false;
  struct sched *s = NULL;
  cr_assert_eq(sched_new(&cfg, 100000000, &s), 0);
  int c = sched_conn_add(s, 0);
  sched_on_rtt(s, c, 10000);
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  sched_on_data(s, c, 0, 10000, 0);
  sched_on_data(s, c, 10000, 9000, 1000);
  cr_assert(!sched_want_pipeline(s, c, 1000), "1000 B outstanding, but pipelining is off");
  sched_on_data(s, c, 19000, 1000, 1100);
  cr_assert(sched_want_pipeline(s, c, 1100));
  sched_free(s);
}

Test(pipeline, never_past_max_queue_or_with_nothing_missing) {
  /* T_max = 0.5 rtl makes chunks (25,000 B) far smaller than the threshold (2·5e6·0.01 =
   * 100,000 B): only max_queue (4) stops the pipeline. */
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.initial_chunk = 20000;
  cfg.min_chunk = 1000;
  cfg.tmax_rtts = 0.5;
  no_bound(&cfg);
  struct sched *s = NULL;
  cr_assert_eq(sched_new(&cfg, 100000000, &s), 0);
  int c = sched_conn_add(s, 0);
  sched_on_rtt(s, c, 10000);
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  sched_on_data(s, c, 0, 10000, 0);
  sched_on_data(s, c, 10000, 5000, 1000); /* R̄ 5e6, 5000 B outstanding: wants more */
  struct sched_range r;
  for (int k = 1; k < 4; k++) {
    cr_assert(sched_want_pipeline(s, c, 1000), "k %d", k);
    cr_assert_eq(sched_next_range(s, c, 1000, &r), 0);
    cr_assert_eq(r.len, 25000);
  }
  cr_assert_eq(st(s, c).queued, 4);
  cr_assert(!sched_want_pipeline(s, c, 1000));
  cr_assert_eq(sched_next_range(s, c, 1000, &r), -EBUSY);
  sched_free(s);

  s = mk(30000);
  c = sched_conn_add(s, 0);
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  sched_on_data(s, c, 0, 10000, 0);
  sched_on_data(s, c, 10000, 5000, 1000);
  cr_assert_eq(sched_next_range(s, c, 1000, &r), 0);
  cr_assert(!sched_want_pipeline(s, c, 1000), "all 30000 B are assigned");
  cr_assert_eq(sched_next_range(s, c, 1000, &r), -ENODATA);
  sched_free(s);
}

/* ---- tail re-split ---- */

/* c1 (R̄ 1e6, rtl 10 ms) took the last 200,000 B [40000, 240000) at t = 10 ms, alone
 * (c0 unmeasured: β = ∞, case 1). c0 (R̄ 1e7, rtl 10 ms) measures at t = 11 ms and is idle.
 * cfg NULL: mk()'s settings. */
static struct sched *straggler_cfg(const struct sched_config *cfg, int *c0, int *c1) {
  struct sched *s = NULL;
  if (cfg)
    cr_assert_eq(sched_new(cfg, 240000, &s), 0);
  else
    s = mk(240000);
  *c0 = sched_conn_add(s, 0);
  *c1 = sched_conn_add(s, 0);
  sched_on_rtt(s, *c0, 10000);
  sched_on_rtt(s, *c1, 10000);
  expect_range(s, *c0, 0, 0, 20000, SCHED_CASE_PROBE);
  expect_range(s, *c1, 0, 20000, 20000, SCHED_CASE_PROBE);
  prime(s, *c1, 20000, 0, 10000);
  expect_range(s, *c1, 10000, 40000, 200000, SCHED_CASE_ALL);
  prime(s, *c0, 0, 10000, 1000);
  return s;
}

static struct sched *straggler(int *c0, int *c1) { return straggler_cfg(NULL, c0, c1); }

Test(resplit, idle_fast_connection_takes_a_balanced_tail) {
  /* Victim ends at tv = (10 ms − 1 ms waited) + 200,000/1e6 = 0.209 s. Give y from the end:
   * tv − y/1e6 = 0.010 + y/1e7 → y = 0.199 · 1e13/1.1e7 = 180,909 B → [59091, 240000). */
  int c0, c1, victim = -1;
  struct sched *s = straggler(&c0, &c1);
  struct sched_range r;
  cr_assert_eq(sched_next_range(s, c0, 11000, &r), -ENODATA);
  cr_assert_eq(sched_resplit(s, c0, 11000, &victim, &r), 0);
  cr_assert_eq(victim, c1);
  cr_assert(r.off == 59091 && r.len == 180909, "%lu+%lu", r.off, r.len);
  cr_assert_eq(st(s, c0).last_case, SCHED_CASE_RESPLIT);
  cr_assert_eq(st(s, c1).owed, 19091);
  cr_assert_eq(st(s, c1).outstanding, 200000, "the victim's server still sends it all");
  sched_free(s);
}

Test(resplit, victim_bytes_past_the_split_count_when_they_come_first) {
  /* The victim's server still sends [59091, 240000) after the split: what it brings before
   * c0 does is new to the object, what c0 brought first is not. */
  int c0, c1, victim;
  struct sched *s = straggler(&c0, &c1);
  struct sched_range r;
  cr_assert_eq(sched_resplit(s, c0, 11000, &victim, &r), 0);
  cr_assert(r.off == 59091 && r.len == 180909, "%lu+%lu", r.off, r.len);
  cr_assert_eq(sched_on_data(s, c1, 40000, 19000, 20000), 19000);
  cr_assert_eq(sched_on_data(s, c1, 59000, 1000, 21000), 1000, "59091..59999: c0 has not brought them");
  cr_assert_eq(sched_on_data(s, c0, 59091, 10000, 22000), 9091, "60000..69090 only");
  cr_assert_eq(sched_on_data(s, c1, 60000, 20000, 23000), 10909, "69091..79999: new; the rest c0 brought");
  cr_assert_eq(sched_on_data(s, c0, 69091, 170909, 40000), 160000, "80000..239999");
  cr_assert(sched_done(s));
  cr_assert_eq(sched_ledger_check(sched_ledger(s)), 0);
  sched_free(s);
}

Test(resplit, the_victim_alone_can_finish_what_it_gave_away) {
  /* c0 took the tail but never delivered (slow, or its request went out late): c1's wire
   * bytes complete the object. */
  int c0, c1, victim;
  struct sched *s = straggler(&c0, &c1);
  struct sched_range r;
  cr_assert_eq(sched_resplit(s, c0, 11000, &victim, &r), 0);
  cr_assert_eq(sched_on_data(s, c1, 40000, 200000, 30000), 200000);
  cr_assert(sched_done(s));
  cr_assert_eq(sched_on_data(s, c0, 59091, 180909, 40000), 0, "all of it came already");
  cr_assert_eq(sched_ledger_check(sched_ledger(s)), 0);
  sched_free(s);
}

/* ---- rescue of a stalled connection ---- */

Test(rescue, taker_asks_the_victims_unreceived_bytes_again) {
  /* c1 owes [40000, 240000) and stalls after 19 000 B; idle c0 takes all that is left of it,
   * whatever the rates say, and whichever copy comes first counts. */
  int c0, c1;
  struct sched *s = straggler(&c0, &c1);
  struct sched_range r;
  cr_assert_eq(sched_on_data(s, c1, 40000, 19000, 20000), 19000);
  cr_assert_eq(sched_rescue(s, c0, c1, 400000, &r), 0);
  cr_assert(r.off == 59000 && r.len == 181000, "%lu+%lu", r.off, r.len);
  cr_assert_eq(st(s, c0).last_case, SCHED_CASE_RESCUE);
  cr_assert_eq(st(s, c1).owed, 0);
  cr_assert_eq(st(s, c1).outstanding, 181000, "the victim's server still sends it");
  cr_assert_eq(sched_rescue(s, c0, c1, 400000, &r), -ENODATA, "c1 owes nothing more");
  cr_assert_eq(sched_on_data(s, c1, 59000, 1000, 500000), 1000, "the victim's bytes count when first");
  cr_assert_eq(sched_on_data(s, c0, 59000, 181000, 600000), 180000);
  cr_assert(sched_done(s));
  cr_assert_eq(sched_ledger_check(sched_ledger(s)), 0);
  sched_free(s);
}

Test(rescue, every_request_behind_the_stall_moves_in_order) {
  /* c1 asked [0, 20000) and [20000, 60000) and stalls after 5 000 B: the head's rest first,
   * then the request queued behind it, until c0's queue (max_queue 4) would overflow. */
  struct sched *s = mk(100000);
  int c0 = sched_conn_add(s, 0), c1 = sched_conn_add(s, 0);
  expect_range(s, c1, 0, 0, 20000, SCHED_CASE_PROBE);
  expect_range(s, c1, 0, 20000, 40000, SCHED_CASE_PROBE);
  cr_assert_eq(sched_on_data(s, c1, 0, 5000, 1000), 5000);
  struct sched_range r;
  cr_assert_eq(sched_rescue(s, c0, c1, 400000, &r), 0);
  cr_assert(r.off == 5000 && r.len == 15000, "%lu+%lu", r.off, r.len);
  cr_assert_eq(sched_rescue(s, c0, c1, 400000, &r), 0);
  cr_assert(r.off == 20000 && r.len == 40000, "%lu+%lu", r.off, r.len);
  cr_assert_eq(sched_rescue(s, c0, c1, 400000, &r), -ENODATA);
  cr_assert_eq(st(s, c0).queued, 2);
  cr_assert_eq(st(s, c1).owed, 0);
  cr_assert_eq(sched_on_data(s, c0, 5000, 15000, 500000), 15000);
  cr_assert_eq(sched_on_data(s, c1, 5000, 15000, 510000), 0, "c0's copy came first");
  cr_assert_eq(sched_on_data(s, c0, 20000, 40000, 520000), 40000);
  cr_assert_eq(sched_ledger_bytes(sched_ledger(s), SCHED_MISSING, SCHED_NOBODY), 40000, "the rest is still to ask");
  cr_assert_eq(sched_ledger_check(sched_ledger(s)), 0);
  sched_free(s);
}

Test(rescue, refuses_what_it_cannot_move) {
  int c0, c1;
  struct sched *s = straggler(&c0, &c1);
  struct sched_range r;
  cr_assert_eq(sched_rescue(s, c0, c0, 0, &r), -EINVAL);
  cr_assert_eq(sched_rescue(s, c0, 7, 0, &r), -EINVAL);
  cr_assert_eq(sched_rescue(s, c1, c0, 400000, &r), -ENODATA, "c0 owes nothing");
  cr_assert_eq(sched_on_data(s, c1, 40000, 200000, 30000), 200000);
  int c2 = sched_conn_add(s, 0);
  cr_assert_eq(sched_rescue(s, c2, c1, 400000, &r), -ENODATA, "c1 owes nothing");
  sched_conn_failed(s, c1);
  cr_assert_eq(sched_rescue(s, c2, c1, 400000, &r), -ENOTCONN);
  sched_free(s);
  cr_assert_eq(sched_new(NULL, SCHED_LEN_UNKNOWN, &s), 0);
  c0 = sched_conn_add(s, 0);
  c1 = sched_conn_add(s, 0);
  cr_assert_eq(sched_next_range(s, c1, 0, &r), 0);
  cr_assert_eq(sched_rescue(s, c0, c1, 0, &r), -EAGAIN, "the probe is not rescued");
  sched_free(s);
}

Test(resplit, never_takes_a_tail_another_connection_already_brought) {
  /* c0 takes [59091, 240000) of c1's request, then c1 brings all of it anyway (its server
   * sends it). Idle c1 would take the end of c0's request back by the estimates (with no
   * gain threshold and 1000 B chunks: c0 ends at 0.008 + 0.0181 s, so y = 14,636 B), but
   * those bytes are no longer c0's to give: nothing moves. */
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.initial_chunk = 20000;
  cfg.min_chunk = 1000;
  cfg.hm_window = 0;
  cfg.resplit_gain_rtts = 0;
  int c0, c1, victim;
  struct sched *s = straggler_cfg(&cfg, &c0, &c1);
  struct sched_range r;
  cr_assert_eq(sched_resplit(s, c0, 11000, &victim, &r), 0);
  cr_assert_eq(sched_on_data(s, c1, 40000, 200000, 12000), 200000);
  cr_assert(sched_done(s));
  cr_assert_eq(sched_resplit(s, c1, 13000, &victim, &r), -ENODATA);
  cr_assert_eq(sched_ledger_check(sched_ledger(s)), 0);
  sched_free(s);
}

Test(resplit, not_when_the_gain_is_under_one_rtt) {
  /* Victim owes 15,000 B (15 ms): the split would save less than c0's 10 ms round trip. */
  int c0, c1, victim;
  struct sched *s = straggler(&c0, &c1);
  struct sched_range r;
  cr_assert_eq(sched_on_data(s, c1, 40000, 185000, 12000), 185000);
  cr_assert_eq(sched_resplit(s, c0, 200000, &victim, &r), -ENODATA);
  sched_free(s);
}

Test(resplit, refuses_while_bytes_are_missing_or_the_taker_is_busy) {
  int c0, c1, victim;
  struct sched_range r;
  struct sched *s = two(4040000, &c0, &c1);
  cr_assert_eq(sched_resplit(s, c0, 2000, &victim, &r), -EAGAIN, "next_range is the answer");
  sched_free(s);
  s = straggler(&c0, &c1);
  cr_assert_eq(sched_resplit(s, c1, 11000, &victim, &r), -EBUSY);
  sched_free(s);
}

/* ---- tail re-split by pieces (resplit_piece_rtts) ---- */

/* straggler()'s setting with pieces of 0.5 RTT of c0 (0.5 · 1e7 · 0.01 = 50,000 B). c1's first
 * byte came at t = 0 and its rtl is 10 ms, so it counts as settled after t = 80 ms. */
static struct sched *straggler_pieces(int *c0, int *c1, double pipeline_rtts) {
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.initial_chunk = 20000;
  cfg.min_chunk = 1000;
  cfg.hm_window = 0;
  cfg.resplit_piece_rtts = 0.5;
  cfg.pipeline_rtts = pipeline_rtts;
  no_bound(&cfg);
  return straggler_cfg(&cfg, c0, c1);
}

Test(resplit_pieces, not_from_a_victim_still_in_slow_start) {
  /* At 11 ms c1 has had its first byte for 1.1 RTT: its mean may still be climbing. */
  int c0, c1, victim;
  struct sched_range r;
  struct sched *s = straggler_pieces(&c0, &c1, 2);
  cr_assert_eq(sched_resplit(s, c0, 11000, &victim, &r), -ENODATA);
  sched_free(s);
}

Test(resplit_pieces, the_taker_eats_the_tail_a_piece_at_a_time_pipelined) {
  /* t = 81 ms, c1's request not started: tv = 200,000/1e6 = 0.2 s. The balanced y is
   * (0.2 − 0.01)·1e13/1.1e7 = 172,727 B; a piece is half of it, 86,363 B (more than the
   * 50,000 B of 0.5 RTT): [153637, 240000). c0 then has 86,363 B outstanding < 2·R̄·rtl =
   * 200,000: due for its next request. Its queue ends at 0.01 + 0.0086363 s = df; c1 now owes
   * 113,637 B (tv 0.113637 s): y = 0.0950007·1e13/1.1e7 = 86,364, whose half is less than the
   * 50,000 B piece: [103637, 153637). */
  int c0, c1, victim = -1;
  struct sched_range r;
  struct sched *s = straggler_pieces(&c0, &c1, 2);
  cr_assert_eq(sched_resplit(s, c0, 81000, &victim, &r), 0);
  cr_assert_eq(victim, c1);
  cr_assert(r.off == 153637 && r.len == 86363, "%lu+%lu", r.off, r.len);
  cr_assert_eq(sched_resplit(s, c0, 81000, &victim, &r), 0, "pipelined: c0 is due");
  cr_assert(r.off == 103637 && r.len == 50000, "%lu+%lu", r.off, r.len);
  cr_assert_eq(st(s, c1).owed, 63637);
  cr_assert_eq(st(s, c0).queued, 2);
  /* Both deliver; every byte is counted once. */
  cr_assert_eq(sched_on_data(s, c0, 153637, 86363, 90000), 86363);
  cr_assert_eq(sched_on_data(s, c0, 103637, 50000, 95000), 50000);
  cr_assert_eq(sched_on_data(s, c1, 40000, 120000, 100000), 63637, "c1 owes up to 103637 only");
  cr_assert(sched_done(s));
  cr_assert_eq(sched_ledger_check(sched_ledger(s)), 0);
  sched_free(s);
}

Test(resplit_pieces, a_taker_that_is_not_due_waits) {
  /* pipelining at 0.1·R̄·rtl = 10,000 B: with 50,000 B outstanding c0 is not due. */
  int c0, c1, victim;
  struct sched_range r;
  struct sched *s = straggler_pieces(&c0, &c1, 0.1);
  cr_assert_eq(sched_resplit(s, c0, 81000, &victim, &r), 0);
  cr_assert_eq(sched_resplit(s, c0, 81000, &victim, &r), -EBUSY);
  sched_free(s);
}

Test(resplit_pieces, off_keeps_the_whole_balanced_tail_and_the_idle_rule) {
  int c0, c1, victim;
  struct sched_range r;
  struct sched *s = straggler(&c0, &c1);
  cr_assert_eq(sched_resplit(s, c0, 80000, &victim, &r), 0);
  cr_assert(r.off == 240000 - 172727 && r.len == 172727, "%lu+%lu", r.off, r.len);
  cr_assert_eq(sched_resplit(s, c0, 80000, &victim, &r), -EBUSY, "without pieces only an idle taker");
  sched_free(s);
}

/* ---- failure ---- */

Test(failure, unreceived_bytes_go_back_to_the_others_lowest_first) {
  /* c1 received 5000 of [20000, 40000) and dies: [25000, 100000) is missing again, and c0's
   * next request starts at 25000. c0's probe came in one read (no sample), so it is case 4
   * doubled: 40,000 B. */
  struct sched *s = mk(100000);
  int c0 = sched_conn_add(s, 0), c1 = sched_conn_add(s, 0);
  expect_range(s, c0, 0, 0, 20000, SCHED_CASE_PROBE);
  expect_range(s, c1, 0, 20000, 20000, SCHED_CASE_PROBE);
  cr_assert_eq(sched_on_data(s, c1, 20000, 5000, 100), 5000);
  cr_assert_eq(sched_conn_failed(s, c1), 0);
  cr_assert_eq(sched_ledger_bytes(sched_ledger(s), SCHED_MISSING, SCHED_NOBODY), 75000);
  cr_assert_eq(sched_on_data(s, c1, 25000, 10, 200), -ENOTCONN);
  cr_assert_eq(sched_next_range(s, c1, 200, &(struct sched_range){0}), -ENOTCONN);
  cr_assert_eq(sched_on_data(s, c0, 0, 20000, 300), 20000);
  expect_range(s, c0, 300, 25000, 40000, SCHED_CASE_PROBE);
  sched_free(s);
}

Test(failure, probe_connection_dies_before_the_size_is_known) {
  struct sched *s = mk(SCHED_LEN_UNKNOWN);
  int c0 = sched_conn_add(s, 0), c1 = sched_conn_add(s, 0);
  expect_range(s, c0, 0, 0, 20000, SCHED_CASE_PROBE);
  cr_assert_eq(sched_next_range(s, c1, 0, &(struct sched_range){0}), -EAGAIN);
  sched_conn_failed(s, c0);
  expect_range(s, c1, 0, 0, 20000, SCHED_CASE_PROBE);
  sched_free(s);
}

/* ---- API edges ---- */

Test(api, rejects_reads_that_are_not_the_next_bytes) {
  struct sched *s = mk(100000);
  int c = sched_conn_add(s, 0);
  cr_assert_eq(sched_on_data(s, c, 0, 10, 0), -EPROTO, "nothing requested");
  expect_range(s, c, 0, 0, 20000, SCHED_CASE_PROBE);
  cr_assert_eq(sched_on_data(s, c, 10, 10, 0), -ERANGE, "skips bytes 0..9");
  cr_assert_eq(sched_on_data(s, c, 0, 20001, 0), -ERANGE, "past the response");
  cr_assert_eq(sched_on_data(s, c, 0, 0, 0), -EINVAL);
  cr_assert_eq(sched_on_data(s, 7, 0, 10, 0), -EINVAL);
  sched_free(s);
}

Test(api, connection_slots_are_bounded) {
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.max_conns = 2;
  struct sched *s = NULL;
  cr_assert_eq(sched_new(&cfg, 1000, &s), 0);
  cr_assert_eq(sched_conn_add(s, 0), 0);
  cr_assert_eq(sched_conn_add(s, 0), 1);
  cr_assert_eq(sched_conn_add(s, 0), -ENOSPC);
  sched_free(s);
  cfg.max_queue = SCHED_MAX_QUEUE + 1;
  cr_assert_eq(sched_new(&cfg, 1000, &s), -EINVAL);
}

/* ---- sched_early_depth: requests kept queued before the first rate sample ---- */

/* rtl 50 ms, init_window 10000 B, chunks 20000 doubling. The plan ends 306 ms from now:
 * floor(306/50) − 1 = 5 round trips of data, slow start delivers 10000·(2^5 − 1) = 310000 B,
 * and 20000·(2^n − 1) <= 310000 holds up to n = 4 (hand-computed). */
Test(early_depth, object_ending_in_slow_start_queues_its_rounds) {
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.initial_chunk = 20000;
  cfg.max_queue = 5;
  struct sched *s = NULL;
  cr_assert_eq(sched_new(&cfg, 1000000, &s), 0);
  int c = sched_conn_add(s, 0);
  sched_on_rtt(s, c, 50000);
  cr_assert_eq(sched_early_depth(s, c, 1000, 1000 + 306000, 10000, 3), 4);
  /* one round trip less (256 ms: 4 rounds, 150000 B): 20000·7 = 140000 fits, 300000 does not,
   * so the base depth stands */
  cr_assert_eq(sched_early_depth(s, c, 1000, 1000 + 256000, 10000, 3), 3);
  sched_free(s);
  /* max_queue 4: the fourth slot stays free for the request the first rate sample sizes */
  cfg.max_queue = 4;
  cr_assert_eq(sched_new(&cfg, 1000000, &s), 0);
  c = sched_conn_add(s, 0);
  sched_on_rtt(s, c, 50000);
  cr_assert_eq(sched_early_depth(s, c, 1000, 1000 + 306000, 10000, 3), 3);
  sched_free(s);
}

/* A finish 8 round trips away or more leaves the rate time to settle: the base depth. Neither
 * does a connection with a rate sample, without a latency, or a finish already past change it
 * (7 rounds: 1270000 B fit 6 chunks of 20000 doubling, max_queue 8 leaves room for them). */
Test(early_depth, only_when_the_rate_cannot_settle_in_time) {
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.initial_chunk = 20000;
  cfg.min_chunk = 1000;
  cfg.max_queue = 8;
  struct sched *s = NULL;
  cr_assert_eq(sched_new(&cfg, 10000000, &s), 0);
  int c = sched_conn_add(s, 0), d = sched_conn_add(s, 0);
  cr_assert_eq(sched_early_depth(s, c, 0, 400000, 10000, 3), 3, "no latency yet");
  sched_on_rtt(s, c, 50000);
  cr_assert_eq(sched_early_depth(s, c, 0, 400000, 10000, 3), 6);
  cr_assert_eq(sched_early_depth(s, c, 0, 450000, 10000, 3), 3, "8 rounds: settles in time");
  cr_assert_eq(sched_early_depth(s, c, 500000, 400000, 10000, 3), 3, "finish past");
  cr_assert_eq(sched_early_depth(s, c, 0, 400000, 0, 3), 3, "no initial window");
  cr_assert_eq(sched_early_depth(s, c, 0, 400000, 10000, 12), 8, "base, at most max_queue");
  /* with a rate sample its requests are sized by its rate */
  sched_on_rtt(s, d, 50000);
  expect_range(s, d, 0, 0, 20000, SCHED_CASE_PROBE);
  prime(s, d, 0, 0, 1000);
  cr_assert_eq(sched_early_depth(s, d, 1000, 400000, 10000, 3), 3);
  sched_free(s);
}

/* A resumed object: prefilled bytes are never asked, whatever the connection. */
Test(sched, prefill_is_never_asked) {
  struct sched *s = mk(100000);
  cr_assert_eq(sched_prefill(s, 0, 30000), 30000);
  cr_assert_eq(sched_prefill(s, 50000, 10000), 10000);
  cr_assert_eq(sched_prefill(s, 55000, 10000), 5000, "only the bytes not had yet count");
  cr_assert_eq(sched_prefill(s, 90000, 20000), -EINVAL, "past the end");
  int c = sched_conn_add(s, 0);
  struct sched_range r;
  uint64_t asked = 0;
  for (int i = 0; i < 100 && sched_next_range(s, c, 1000, &r) == 0; i++) {
    cr_assert(r.off >= 30000, "asked %llu+%llu", (unsigned long long)r.off, (unsigned long long)r.len);
    cr_assert(r.off + r.len <= 50000 || r.off >= 65000, "asked %llu+%llu inside the prefill", (unsigned long long)r.off,
              (unsigned long long)r.len);
    asked += r.len;
    cr_assert_eq(sched_on_data(s, c, r.off, r.len, 2000 + i), (int)r.len);
  }
  cr_assert_eq(asked, 100000 - 30000 - 15000, "exactly the missing bytes");
  sched_free(s);
}

Test(sched, prefill_needs_the_size) {
  struct sched *s = mk(SCHED_LEN_UNKNOWN);
  cr_assert_eq(sched_prefill(s, 0, 10), -EINVAL);
  sched_free(s);
}

Test(sched, cede_gives_an_answers_tail_to_the_others) {
  /* An adopted answer: [0, 30000) reached the program, c0's answer runs to the end (70000 B
   * asked in one request, case 4 sized). Ceded at 65000: [65000, 100000) is missing, c1 asks
   * it, and c0 still brings the bytes it kept, and those past its end when they come first. */
  struct sched *s = mk(100000);
  cr_assert_eq(sched_prefill(s, 0, 30000), 30000);
  int c0 = sched_conn_add(s, 0), c1 = sched_conn_add(s, 0);
  struct sched_range r;
  cr_assert_eq(sched_next_range_sized(s, c0, 0, 70000, &r), 0);
  cr_assert(r.off == 30000 && r.len == 70000);
  cr_assert_eq(sched_cede(s, c0, 65000), 35000);
  cr_assert_eq(sched_ledger_bytes(sched_ledger(s), SCHED_MISSING, SCHED_NOBODY), 35000);
  cr_assert_eq(st(s, c0).owed, 35000);
  cr_assert_eq(st(s, c0).outstanding, 70000, "its answer still runs to the end");
  cr_assert_eq(sched_cede(s, c0, 65000), -ENODATA, "nothing owed past that end");
  expect_range(s, c1, 0, 65000, 20000, SCHED_CASE_PROBE);
  /* ceding below what arrived keeps the arrived bytes: c0 has 5000 of them */
  cr_assert_eq(sched_on_data(s, c0, 30000, 5000, 100), 5000);
  cr_assert_eq(sched_cede(s, c0, 31000), 30000, "from its next byte (35000) on");
  cr_assert_eq(st(s, c0).owed, 0);
  expect_range(s, c1, 200, 35000, 30000, SCHED_CASE_PROBE);
  /* c0's answer goes on: bytes nobody brought yet count */
  cr_assert_eq(sched_on_data(s, c0, 35000, 10000, 300), 10000);
  cr_assert_eq(sched_on_data(s, c1, 65000, 20000, 400), 20000);
  cr_assert_eq(sched_ledger_check(sched_ledger(s)), 0);
  cr_assert_eq(sched_cede(s, 7, 0), -EINVAL);
  sched_free(s);
}
