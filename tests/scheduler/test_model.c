/* Scheduler over the discrete-event link model: completion vs ideal, finish spread, Figure 7's shape, pipelining, rate changes and failures. */
#include <criterion/criterion.h>

#include "linkmodel.h"

#define MIB (1ull << 20)

static const struct lm_link A0 = {.mbps = 20, .rtt_us = 10000}, A1 = {.mbps = 50, .rtt_us = 50000};
static const struct lm_link B0 = {.mbps = 10, .rtt_us = 20000}, B1 = {.mbps = 10, .rtt_us = 20000};

static struct lm_config two(struct lm_link l0, struct lm_link l1, uint64_t size, bool pipeline) {
  struct lm_config c;
  lm_config_default(&c);
  c.size = size;
  c.nlinks = 2;
  c.link[0] = l0;
  c.link[1] = l1;
  c.sched.pipeline = pipeline;
  return c;
}

static void run_ok(const struct lm_config *c, struct lm_result *r) {
  int rc = lm_run(c, r);
  cr_assert_eq(rc, 0, "lm_run: %d", rc);
  cr_assert_eq(r->duplicate, 0, "%lu bytes delivered twice", r->duplicate);
  cr_assert_eq(r->missing, 0, "%lu bytes never delivered", r->missing);
  uint64_t useful = 0;
  for (int i = 0; i < c->nlinks; i++)
    useful += r->link[i].useful;
  cr_assert_eq(useful, c->size, "accepted %lu of %lu bytes", useful, c->size);
}

static double spread_us(const struct lm_result *r) {
  double d = r->link[0].finish_us - r->link[1].finish_us;
  return d < 0 ? -d : d;
}

/* ---- the specification: within 5 % of size/Σrates + one setup, finishing together ---- */

struct spec_case {
  const char *name;
  struct lm_link l0, l1;
  uint64_t size;
};

/* clang-format off */
static const struct spec_case spec[] = {
    {"A 4 MiB", {.mbps = 20, .rtt_us = 10000}, {.mbps = 50, .rtt_us = 50000}, 4 * MIB},
    {"A 32 MiB", {.mbps = 20, .rtt_us = 10000}, {.mbps = 50, .rtt_us = 50000}, 32 * MIB},
    {"A 128 MiB", {.mbps = 20, .rtt_us = 10000}, {.mbps = 50, .rtt_us = 50000}, 128 * MIB},
    {"A 1 GiB", {.mbps = 20, .rtt_us = 10000}, {.mbps = 50, .rtt_us = 50000}, 1024 * MIB},
    {"B 4 MiB", {.mbps = 10, .rtt_us = 20000}, {.mbps = 10, .rtt_us = 20000}, 4 * MIB},
    {"B 32 MiB", {.mbps = 10, .rtt_us = 20000}, {.mbps = 10, .rtt_us = 20000}, 32 * MIB},
    {"B 128 MiB", {.mbps = 10, .rtt_us = 20000}, {.mbps = 10, .rtt_us = 20000}, 128 * MIB},
    {"B 1 GiB", {.mbps = 10, .rtt_us = 20000}, {.mbps = 10, .rtt_us = 20000}, 1024 * MIB},
};
/* clang-format on */

Test(model, pipelined_completion_within_5_percent_of_ideal) {
  for (size_t i = 0; i < sizeof(spec) / sizeof(spec[0]); i++) {
    struct lm_config c = two(spec[i].l0, spec[i].l1, spec[i].size, true);
    struct lm_result r;
    run_ok(&c, &r);
    double ratio = r.completion_us / r.ideal_us;
    cr_expect(ratio <= 1.05, "%s: %.3f s vs ideal %.3f s (x%.4f)", spec[i].name, r.completion_us / 1e6,
              r.ideal_us / 1e6, ratio);
    lm_result_free(&r);
  }
}

Test(model, links_finish_within_one_rtt_of_each_other) {
  for (size_t i = 0; i < sizeof(spec) / sizeof(spec[0]); i++) {
    struct lm_config c = two(spec[i].l0, spec[i].l1, spec[i].size, true);
    struct lm_result r;
    run_ok(&c, &r);
    double rtt = spec[i].l0.rtt_us > spec[i].l1.rtt_us ? spec[i].l0.rtt_us : spec[i].l1.rtt_us;
    cr_expect(spread_us(&r) <= rtt, "%s: last bytes %.1f ms apart", spec[i].name, spread_us(&r) / 1e3);
    lm_result_free(&r);
  }
}

Test(model, one_link_alone_costs_at_most_2_percent_over_plain_http) {
  /* Plain HTTP on one link: handshake + request round trip + size/rate. */
  struct lm_config c;
  lm_config_default(&c);
  c.size = 32 * MIB;
  c.nlinks = 1;
  c.link[0] = B0;
  struct lm_result r;
  run_ok(&c, &r);
  double plain = c.size * 8.0 / 10e6 * 1e6 + 2 * 20000;
  cr_assert(r.completion_us <= 1.02 * plain, "%.3f s vs %.3f s", r.completion_us / 1e6, plain / 1e6);
  lm_result_free(&r);
}

/* ---- Figure 7: probe, large chunks in the middle, smaller ones at the end ---- */

Test(model, chunk_sizes_grow_then_shrink_like_figure_7) {
  const struct spec_case *cases[] = {&spec[0], &spec[4]};
  for (size_t k = 0; k < 2; k++) {
    struct lm_config c = two(cases[k]->l0, cases[k]->l1, cases[k]->size, true);
    struct lm_result r;
    run_ok(&c, &r);
    size_t peak = 0;
    for (size_t i = 0; i < r.nchunks; i++)
      if (r.chunks[i].len > r.chunks[peak].len)
        peak = i;
    cr_assert_eq(r.chunks[0].len, 32768, "%s: starts with the probe", cases[k]->name);
    cr_assert(r.chunks[peak].len >= 8 * 32768, "%s: grows (peak %lu)", cases[k]->name, r.chunks[peak].len);
    cr_assert(peak > 0 && peak < r.nchunks - 1, "%s: the peak is in the middle", cases[k]->name);
    /* Each link's last chunk is small: the tail is balanced, not a full T_max chunk. */
    for (int l = 0; l < 2; l++) {
      uint64_t max = 0, last = 0;
      for (size_t i = 0; i < r.nchunks; i++)
        if (r.chunks[i].link == l) {
          last = r.chunks[i].len;
          if (last > max)
            max = last;
        }
      if (max > 32768)
        cr_assert(last <= max / 2 || l == 1, "%s link %d: last %lu of peak %lu", cases[k]->name, l, last, max);
    }
    lm_result_free(&r);
  }
}

/* ---- pipelining is what removes the per-chunk round trip ---- */

Test(model, without_pipelining_every_chunk_waits_one_rtt) {
  struct lm_config c = two(B0, B1, 32 * MIB, false);
  struct lm_result r;
  run_ok(&c, &r);
  for (int l = 0; l < 2; l++) {
    cr_assert_eq(r.link[l].gaps, r.link[l].chunks - 1, "link %d: an idle gap before every chunk but the first", l);
    double per = r.link[l].gap_us / r.link[l].gaps;
    cr_assert(per >= 0.95 * 20000 && per <= 1.05 * 20000, "link %d: %.2f ms idle per chunk, want one RTT", l,
              per / 1e3);
  }
  lm_result_free(&r);
}

Test(model, with_pipelining_only_the_probe_costs_a_round_trip) {
  struct lm_config c = two(B0, B1, 32 * MIB, true);
  struct lm_result r;
  run_ok(&c, &r);
  for (int l = 0; l < 2; l++)
    cr_assert(r.link[l].gap_us <= 1.1 * 20000, "link %d: %.2f ms idle over %u chunks", l, r.link[l].gap_us / 1e3,
              r.link[l].chunks);
  lm_result_free(&r);
}

Test(model, pipelining_saves_about_one_rtt_per_twenty) {
  /* T_max = 20 RTT: one idle RTT per chunk costs 1/21 ≈ 4.8 % of the transfer. */
  struct lm_config on = two(A0, A1, 128 * MIB, true), off = two(A0, A1, 128 * MIB, false);
  struct lm_result a, b;
  run_ok(&on, &a);
  run_ok(&off, &b);
  double gain = b.completion_us / a.completion_us;
  cr_assert(gain >= 1.04 && gain <= 1.06, "one-by-one / pipelined = %.4f", gain);
  lm_result_free(&a);
  lm_result_free(&b);
}

/* ---- changing paths ---- */

/* size/Σrates with the rates switching at t_c, plus one setup (2 · max RTT). */
static double ideal_with_change(uint64_t size, double before_mbps, double after_mbps, double t_c_s, double rtt_s) {
  double bits = size * 8.0, done = before_mbps * 1e6 * t_c_s;
  double t = done >= bits ? bits / (before_mbps * 1e6) : t_c_s + (bits - done) / (after_mbps * 1e6);
  return (t + 2 * rtt_s) * 1e6;
}

Test(model, rate_drop_mid_run_still_within_5_percent) {
  struct lm_config c = two(A0, A1, 128 * MIB, true);
  c.link[1].change_at_us = 5000000; /* 50 → 10 Mbit/s at 5 s */
  c.link[1].change_mbps = 10;
  struct lm_result r;
  run_ok(&c, &r);
  double ideal = ideal_with_change(c.size, 70, 30, 5.0, 0.05);
  cr_assert(r.completion_us <= 1.05 * ideal, "%.3f s vs %.3f s", r.completion_us / 1e6, ideal / 1e6);
  cr_assert(spread_us(&r) <= 2 * 50000, "last bytes %.1f ms apart", spread_us(&r) / 1e3);
  lm_result_free(&r);
}

Test(model, rate_rise_mid_run_is_used) {
  struct lm_config c = two(B0, B1, 32 * MIB, true);
  c.link[1].change_at_us = 3000000; /* 10 → 40 Mbit/s at 3 s */
  c.link[1].change_mbps = 40;
  struct lm_result r;
  run_ok(&c, &r);
  double ideal = ideal_with_change(c.size, 20, 50, 3.0, 0.02);
  cr_assert(r.completion_us <= 1.05 * ideal, "%.3f s vs %.3f s", r.completion_us / 1e6, ideal / 1e6);
  cr_assert(r.link[1].useful > 2 * r.link[0].useful, "link 1 carried %lu, link 0 %lu", r.link[1].useful,
            r.link[0].useful);
  lm_result_free(&r);
}

struct fail_case {
  const char *name;
  int link;
  uint64_t at_us;
};

/* clang-format off */
static const struct fail_case fails[] = {
    {"second link mid-run", 1, 1000000},
    {"probe link mid-run", 0, 1000000},
    {"probe link before the size is known", 0, 15000},
    {"second link during its probe", 1, 101000},
};
/* clang-format on */

Test(model, connection_failure_mid_run_loses_and_duplicates_nothing) {
  for (size_t i = 0; i < sizeof(fails) / sizeof(fails[0]); i++) {
    struct lm_config c = two(A0, A1, 32 * MIB, true);
    c.link[fails[i].link].fail_at_us = fails[i].at_us;
    struct lm_result r;
    run_ok(&c, &r); /* completes, every byte exactly once */
    cr_assert(r.link[fails[i].link].failed, "%s", fails[i].name);
    /* The survivor carries the rest at its own rate: no worse than that rate plus setup. */
    const struct lm_link *s = &c.link[1 - fails[i].link];
    double alone = c.size * 8.0 / (s->mbps * 1e6) * 1e6 + 4 * 50000;
    cr_assert(r.completion_us <= alone, "%s: %.3f s vs %.3f s", fails[i].name, r.completion_us / 1e6, alone / 1e6);
    lm_result_free(&r);
  }
}

/* ---- model knobs ---- */

Test(model, slow_start_slows_the_start_only) {
  struct lm_config c = two(A0, A1, 32 * MIB, true), d = c;
  d.slow_start = true;
  struct lm_result a, b;
  run_ok(&c, &a);
  run_ok(&d, &b);
  cr_assert(b.completion_us > a.completion_us, "slow start cannot be free");
  cr_assert(b.completion_us <= 1.05 * b.ideal_us, "%.3f s vs ideal %.3f s", b.completion_us / 1e6, b.ideal_us / 1e6);
  lm_result_free(&a);
  lm_result_free(&b);
}

Test(model, tail_pieces_beat_one_split_point_under_slow_start) {
  /* The demo links with slow start and the engine's estimator settings: the 50 ms link's mean
   * lags its climbing rate, so one balanced split of the tail hands the 10 ms link too much.
   * Taking the tail in 2-RTT pieces ends sooner (1.34 -> 1.21 x ideal when written). */
  struct lm_config c = two(A0, A1, 4 * MIB, true), d;
  c.slow_start = true;
  c.sched.sample_min_us = 5000;
  c.sched.hm_window = 16;
  c.sched.pipeline_rtts = 4;
  d = c;
  d.sched.resplit_piece_rtts = 2;
  struct lm_result a, b;
  run_ok(&c, &a);
  run_ok(&d, &b);
  cr_assert(b.completion_us < 0.95 * a.completion_us, "pieces %.1f ms vs one split %.1f ms", b.completion_us / 1e3,
            a.completion_us / 1e3);
  lm_result_free(&a);
  lm_result_free(&b);
}

Test(model, a_held_back_victim_still_delivers_what_it_gave_away) {
  /* The demo links with slow start, engine settings and 2-RTT pieces; the 50 ms link's reads
   * are held back 100 ms from 550 ms (a loss: nothing readable until the retransmission,
   * then all of it). The 10 ms link takes pieces of its tail meanwhile, but the held bytes,
   * pieces included, then arrive at once: they count, so the object ends when it would have
   * without the hold (701.5 ms). Counting only the taker's copies ended it at 727 ms. */
  struct lm_config c = two(A0, A1, 4 * MIB, true), d;
  c.slow_start = true;
  c.sched.sample_min_us = 5000;
  c.sched.hm_window = 16;
  c.sched.pipeline_rtts = 4;
  c.sched.resplit_piece_rtts = 2;
  d = c;
  d.link[1].hold_at_us = 550000;
  d.link[1].hold_us = 100000;
  struct lm_result a, b;
  run_ok(&c, &a);
  run_ok(&d, &b);
  cr_assert(b.completion_us < a.completion_us * 1.01, "held %.1f ms vs not held %.1f ms", b.completion_us / 1e3,
            a.completion_us / 1e3);
  lm_result_free(&a);
  lm_result_free(&b);
}

Test(model, papers_connect_after_probe_is_slower_than_concurrent_handshakes) {
  struct lm_config c = two(A0, A1, 4 * MIB, true), d = c;
  d.connect_after_probe = true;
  struct lm_result a, b;
  run_ok(&c, &a);
  run_ok(&d, &b);
  /* Link 1's handshake (50 ms) starts 20 ms later: about 20 ms · 50/70 later overall. */
  cr_assert(b.completion_us > a.completion_us + 5000, "%.1f vs %.1f ms", b.completion_us / 1e3, a.completion_us / 1e3);
  lm_result_free(&a);
  lm_result_free(&b);
}

Test(model, object_smaller_than_the_probe) {
  struct lm_config c = two(A0, A1, 10000, true);
  struct lm_result r;
  run_ok(&c, &r);
  cr_assert_eq(r.nchunks, 1);
  cr_assert_eq(r.link[0].useful, 10000);
  /* handshake 10 ms + request 5 ms + 10000 B at 20 Mbit/s (4 ms) + 5 ms */
  cr_assert_float_eq(r.completion_us, 24000, 1, "%.1f", r.completion_us);
  lm_result_free(&r);
}
