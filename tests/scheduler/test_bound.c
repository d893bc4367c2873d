/* Scheduler tests: the bound on requests per object (steady-state floor, first rounds, tail, reused connection ids), as a table of exact decisions. */
#include <criterion/criterion.h>
#include <errno.h>

#include "scheduler/sched.h"

#define KIB 1024ull
#define MIB (1024ull * 1024ull)

/* The defaults (the bound on) with round numbers for the rest: initial 20000 B, min_chunk
 * 1000 B, a harmonic mean over every sample. */
static struct sched *mk_pieces(uint64_t total, double tmax_rtts, double piece_rtts) {
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.resplit_piece_rtts = piece_rtts;
  cfg.initial_chunk = 20000;
  cfg.min_chunk = 1000;
  cfg.hm_window = 0;
  if (tmax_rtts > 0)
    cfg.tmax_rtts = tmax_rtts;
  struct sched *s = NULL;
  cr_assert_eq(sched_new(&cfg, total, &s), 0);
  return s;
}

static struct sched *mk(uint64_t total, double tmax_rtts) { return mk_pieces(total, tmax_rtts, 0); }

/* A connection with rtl rtl_us whose probe (20000 B at off, at t = 0) arrived in two reads dt
 * apart: R̄ = 10000 B / dt exactly. */
static int measured(struct sched *s, uint32_t rtl_us, uint64_t dt) {
  int c = sched_conn_add(s, 0);
  struct sched_range r;
  cr_assert_eq(sched_on_rtt(s, c, rtl_us), 0);
  cr_assert_eq(sched_next_range(s, c, 0, &r), 0);
  cr_assert_eq(r.len, 20000);
  cr_assert_eq(sched_on_data(s, c, r.off, 10000, 0), 10000);
  cr_assert_eq(sched_on_data(s, c, r.off + 10000, 10000, dt), 10000);
  return c;
}

static enum sched_case last_case(struct sched *s, int c) {
  struct sched_conn_stats x;
  cr_assert_eq(sched_conn_stats(s, c, &x), 0);
  return x.last_case;
}

/* One connection alone (β = ∞: it ends the object at its own rate), its next range. */
struct alone_row {
  const char *why;
  uint64_t total;
  double tmax_rtts; /* 0: the default 20 */
  uint32_t rtl_us;
  uint64_t dt; /* R̄ = 10000 / dt B/µs */
  uint64_t want;
  enum sched_case kase;
};

/* clang-format off */
static const struct alone_row alone[] = {
    /* R̄ 1e5 B/s, rtl 10 ms: T_max is worth 20,000 B */
    {"large object: one range per MiB", 100000000, 0, 10000, 100000, MIB, SCHED_CASE_TMAX},
    {"32 MiB: object / 64", 32 * MIB, 0, 10000, 100000, 512 * KIB, SCHED_CASE_TMAX},
    {"8 MiB: 256 KiB, more than object / 64", 8 * MIB, 0, 10000, 100000, 256 * KIB, SCHED_CASE_TMAX},
    /* T_max of one round trip (rtl 100 ms, R̄ 1e7 B/s: 1,000,000 B): 2 round trips, 2,000,000 B */
    {"two round trips of its path", 1000000000, 1, 100000, 1000, 2000000, SCHED_CASE_TMAX},
    /* R̄ 1e7 B/s, rtl 10 ms: T_max is worth 2,000,000 B, more than any floor */
    {"T_max above the floor", 100000000, 0, 10000, 1000, 2000000, SCHED_CASE_TMAX},
    /* 200,000 B left ≤ T_max·R̄: case 1 takes it all */
    {"case 1: all that is left", 220000, 0, 10000, 1000, 200000, SCHED_CASE_ALL},
    /* 300,000 B left at R̄ 1e5: case 3's 20,000 B lengthened to the floor; the last 37,856 B
     * are the tail's */
    {"the object's last bytes", 320000, 0, 10000, 100000, 256 * KIB, SCHED_CASE_TMAX},
    {"never past the object's end", 270000, 0, 10000, 100000, 250000, SCHED_CASE_TMAX},
};
/* clang-format on */

Test(bound, one_connection_table) {
  for (size_t i = 0; i < sizeof alone / sizeof alone[0]; i++) {
    const struct alone_row *t = &alone[i];
    struct sched *s = mk(t->total, t->tmax_rtts);
    int c = measured(s, t->rtl_us, t->dt);
    struct sched_range r;
    cr_assert_eq(sched_next_range(s, c, t->dt, &r), 0, "%s", t->why);
    cr_expect(r.off == 20000 && r.len == t->want, "%s: got %lu+%lu, want %lu", t->why, r.off, r.len, t->want);
    cr_expect_eq(last_case(s, c), t->kase, "%s: case %d", t->why, last_case(s, c));
    sched_free(s);
  }
}

/* Two measured connections, R̄ 1e5 B/s each, rtl 10 ms, both idle after their probes: c0 asks.
 * Case 3 (20,000 B) far from the end; the floor, but at most c0's half of what is left (the
 * joint finish) near it: the tail is balanced as Algorithm 1 would, never by the floor. */
struct pair_row {
  const char *why;
  uint64_t left;
  uint64_t want;
};

/* clang-format off */
static const struct pair_row pair[] = {
    {"steady: the floor (256 KiB)", 8 * MIB, 256 * KIB},
    {"steady: the floor, below c0's half", 600000, 256 * KIB},
    {"tail: c0's half of what is left", 400000, 200000},
    {"tail: c0's half, never below min_chunk", 1500, 1500},
};
/* clang-format on */

Test(bound, tail_takes_the_balanced_share) {
  for (size_t i = 0; i < sizeof pair / sizeof pair[0]; i++) {
    const struct pair_row *t = &pair[i];
    struct sched *s = mk(40000 + t->left, 0);
    int c0 = measured(s, 10000, 100000);
    int c1 = measured(s, 10000, 100000);
    struct sched_range r;
    cr_assert_eq(sched_next_range(s, c0, 100000, &r), 0, "%s", t->why);
    cr_expect(r.off == 40000 && r.len == t->want, "%s: got %lu+%lu, want %lu", t->why, r.off, r.len, t->want);
    (void)c1;
    sched_free(s);
  }
}

Test(bound, first_rounds_are_exempt) {
  /* The probe and the doubling first chunks (case 4) keep their sizes. */
  struct sched *s = mk(100000000, 0);
  int c0 = sched_conn_add(s, 0);
  struct sched_range r;
  cr_assert_eq(sched_next_range(s, c0, 0, &r), 0);
  cr_assert_eq(r.len, 20000);
  cr_assert_eq(sched_next_range(s, c0, 0, &r), 0);
  cr_assert_eq(r.len, 40000);
  cr_assert_eq(last_case(s, c0), SCHED_CASE_PROBE);
  sched_free(s);

  /* A measured connection while another one's first chunk is out, on an object with fewer than
   * 16 floors left: T_max's 20,000 B, not the floor (no joint finish can be known; a slow path's
   * floor could outlast the object). */
  s = mk(4 * MIB, 0);
  c0 = measured(s, 10000, 100000);
  int c1 = sched_conn_add(s, 0);
  cr_assert_eq(sched_next_range(s, c1, 0, &r), 0);
  cr_assert_eq(sched_next_range(s, c0, 100000, &r), 0);
  cr_expect_eq(r.len, 20000);
  cr_expect_eq(last_case(s, c0), SCHED_CASE_TMAX);
  /* once it has no request out, the floor is back (c1's chunk came back as a 20,000 B hole
   * first: a range is one missing run) */
  cr_assert_eq(sched_conn_failed(s, c1), 0);
  cr_assert_eq(sched_next_range(s, c0, 100000, &r), 0);
  cr_expect(r.off == 20000 && r.len == 20000, "%lu+%lu", r.off, r.len);
  cr_assert_eq(sched_next_range(s, c0, 100000, &r), 0);
  cr_expect(r.off == 60000 && r.len == 256 * KIB, "%lu+%lu", r.off, r.len);
  sched_free(s);

  /* a large object keeps the floor meanwhile */
  s = mk(100000000, 0);
  c0 = measured(s, 10000, 100000);
  c1 = sched_conn_add(s, 0);
  cr_assert_eq(sched_next_range(s, c1, 0, &r), 0);
  cr_assert_eq(sched_next_range(s, c0, 100000, &r), 0);
  cr_expect_eq(r.len, MIB);
  sched_free(s);

  /* the caller's cap (a small object's share, an early budget) still bounds a range */
  s = mk(100000000, 0);
  c0 = measured(s, 10000, 100000);
  cr_assert_eq(sched_next_range_upto(s, c0, 100000, 50000, &r), 0);
  cr_expect_eq(r.len, 50000);
  sched_free(s);
}

Test(bound, off_when_zeroed) {
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.initial_chunk = 20000;
  cfg.min_chunk = 1000;
  cfg.hm_window = 0;
  cfg.steady_chunk = 0;
  cfg.floor_rtts = 0;
  cfg.steady_share = 0;
  struct sched *s = NULL;
  cr_assert_eq(sched_new(&cfg, 100000000, &s), 0);
  int c = measured(s, 10000, 100000);
  struct sched_range r;
  cr_assert_eq(sched_next_range(s, c, 100000, &r), 0);
  cr_expect_eq(r.len, 20000);
  sched_free(s);
  cfg.floor_rtts = -1;
  cr_expect_eq(sched_new(&cfg, 100000000, &s), -EINVAL);
}

Test(bound, failed_ids_are_given_again_past_max_conns) {
  struct sched_config cfg;
  sched_config_default(&cfg);
  cfg.max_conns = 2;
  struct sched *s = NULL;
  cr_assert_eq(sched_new(&cfg, 10 * MIB, &s), 0);
  cr_assert_eq(sched_conn_add(s, 0), 0);
  cr_assert_eq(sched_conn_add(s, 0), 1);
  cr_assert_eq(sched_conn_add(s, 0), -ENOSPC);
  struct sched_range r;
  cr_assert_eq(sched_next_range(s, 1, 0, &r), 0);
  cr_assert_eq(sched_conn_failed(s, 1), 0);
  /* id 1 comes back fresh: nothing outstanding, no statistics, its bytes missing again */
  cr_assert_eq(sched_conn_add(s, 0), 1);
  struct sched_conn_stats x;
  cr_assert_eq(sched_conn_stats(s, 1, &x), 0);
  cr_expect(!x.failed && x.chunks == 0 && x.queued == 0 && x.samples == 0);
  cr_assert_eq(sched_next_range(s, 1, 0, &r), 0);
  cr_expect_eq(r.off, 0);
  cr_assert_eq(sched_conn_add(s, 0), -ENOSPC);
  sched_free(s);
}

/* c1 (R̄ 1e5, rtl 10 ms) took the last total − 40,000 B alone while c0's probe was out; c0 (R̄
 * 1e6, rtl 10 ms) is idle, c1 settled (8 round trips since its first byte): the piece c0 takes
 * from the end of c1's range. The balanced tail is (tv − 0.01 s)·1e11/1.1e6 B. */
static struct sched_range tail_piece(uint64_t total) {
  struct sched *s = mk_pieces(total, 1000, 2);
  struct sched_range r;
  int c0 = sched_conn_add(s, 0);
  cr_assert_eq(sched_on_rtt(s, c0, 10000), 0);
  cr_assert_eq(sched_next_range(s, c0, 0, &r), 0); /* its probe, unmeasured while c1 asks */
  int c1 = measured(s, 10000, 100000);
  cr_assert_eq(sched_next_range(s, c1, 100000, &r), 0); /* alone: case 1, all the rest */
  cr_assert(r.off == 40000 && r.len == total - 40000, "%lu+%lu", r.off, r.len);
  cr_assert_eq(sched_on_data(s, c0, 0, 10000, 110000), 10000);
  cr_assert_eq(sched_on_data(s, c0, 10000, 10000, 120000), 10000); /* R̄ 1e6 */
  int victim = -1;
  cr_assert_eq(sched_resplit(s, c0, 200000, &victim, &r), 0);
  cr_expect_eq(victim, c1);
  sched_free(s);
  return r;
}

Test(bound, a_resplit_piece_is_at_least_tail_chunk) {
  /* 120,000 B on c1: the balanced tail is 108,182 B; 2 RTTs of c0 (20,000 B) would be less
   * than tail_chunk: the piece is 64 KiB. */
  struct sched_range r = tail_piece(160000);
  cr_expect(r.off == 160000 - 64 * KIB && r.len == 64 * KIB, "%lu+%lu", r.off, r.len);
}

Test(bound, a_tail_under_a_steady_range_moves_in_tail_chunks) {
  /* 220,000 B on c1: the balanced tail (199,091 B) is less than steady_chunk, so a piece is
   * still 64 KiB, not half of it. */
  struct sched_range r = tail_piece(260000);
  cr_expect(r.off == 260000 - 64 * KIB && r.len == 64 * KIB, "%lu+%lu", r.off, r.len);
}

Test(bound, a_long_tail_moves_in_halves) {
  /* 500,000 B on c1: the balanced tail is 453,636 B, past steady_chunk; a piece is half of it
   * (226,818 B), so a long straggler costs a few requests, not dozens of 64 KiB ones. */
  struct sched_range r = tail_piece(540000);
  cr_expect(r.off == 540000 - 226818 && r.len == 226818, "%lu+%lu", r.off, r.len);
}
