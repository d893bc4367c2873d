/* Admission rules (policy/admit.h): one row per decision, its inputs and the exact answer. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "policy/admit.h"
#include "tests/policy/paths.h"

/*
 * The paths are tests/policy/paths.h's: 0 = wifi (20 ms, 250 000 B/s), 1 = lte (100 ms,
 * 2 500 000 B/s); eaf, which splits. The floor is 256 KiB. A new lte connection is worth
 * adding to a transfer on wifi from 52 910.05 bytes left (policy/README.md, worked example),
 * so 80 000 missing lets a planned lte leg in below the floor and 40 000 does not.
 */
#define FLOOR (256 * 1024)
#define SMALL 100000 /* rest after the probe below the floor: the share rules apply */
#define LARGE (1 << 20)

enum rule { SMALL_PLAN, ON_MASK, ALIVE, EXPLORER, ALLOWED, YIELDS, OVER_SHARE, SHARE_LEFT, WORTH, EARLY, BUDGET };
static const char *const rule_names[] = {"small",       "on_mask",      "alive_count", "explorer_waiting",
                                         "leg_allowed", "yields",       "over_share",  "share_left",
                                         "worth_using", "early_finish", "early_budget"};

enum tweak { AS_IS, LTE_COLD, WIFI_FAST };

enum plan { NONE, WIFI_BOTH, LTE_BOTH, WIFI_ONLY, LTE_ONLY, WIFI_AND_THIRD };

struct row {
  const char *why;
  enum rule rule;
  unsigned k;    /* the leg asked about (ALIVE: the path) */
  uint64_t want; /* the answer: 0/1, bytes, a mask, a count, a finish time */
  enum plan plan;
  uint64_t rest, missing; /* BUDGET rows: missing is the bytes not arrived (unreceived) */
  uint32_t counted;
  uint64_t asked[2];
  double share[2];
  double predicted_us;
  enum tweak tweak; /* the view: as paths.h, lte unmeasured, or wifi so fast no path is worth adding */
  struct pol_admit_leg leg[4];
};

/* The program's connection on wifi, an extra lte one, a connecting lte one. */
/* clang-format off */
#define PROG(q, j) {.state = POL_ADMIT_READY, .path = 0, .primary = true, .scheduled = true, .queued = q, .joined = j}
#define PROBE_PROG {.state = POL_ADMIT_READY, .path = 0, .primary = true, .probe_leg = true, .scheduled = true, .queued = 1}
#define LTE(q, j) {.state = POL_ADMIT_READY, .path = 1, .scheduled = true, .queued = q, .joined = j}
#define LTE_CONNECTING {.state = POL_ADMIT_CONNECTING, .path = 1}
/* clang-format on */
/* The program's connection with a rate sample (it streams), a connecting lte one 50 ms into its
 * handshake, an lte one that asked already. */
/* clang-format off */
#define PROG_MEASURED {.state = POL_ADMIT_READY, .path = 0, .primary = true, .scheduled = true, .queued = 1, .joined = true, .measured = true}
#define LTE_HALFWAY {.state = POL_ADMIT_CONNECTING, .path = 1, .age_us = 50000}
#define LTE_ASKED {.state = POL_ADMIT_READY, .path = 1, .scheduled = true, .queued = 1, .joined = true, .age_us = 10000}
/* clang-format on */

/* clang-format off */
static const struct row rows[] = {
    /* pol_admit_small */
    {"a plan and less than the floor left", SMALL_PLAN, 0, 1, WIFI_BOTH, FLOOR - 1, 0, 0, {0}, {0}, 0, AS_IS, {{0}}},
    {"the floor left is not small", SMALL_PLAN, 0, 0, WIFI_BOTH, FLOOR, 0, 0, {0}, {0}, 0, AS_IS, {{0}}},
    {"no plan is never small", SMALL_PLAN, 0, 0, NONE, SMALL, 0, 0, {0}, {0}, 0, AS_IS, {{0}}},

    /* pol_admit_on_mask */
    {"legs carrying requests, plus the plan's primary", ON_MASK, 0, 0x3, LTE_BOTH, SMALL, 0, 0, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0)}},
    {"an idle leg does not count", ON_MASK, 0, 0x1, NONE, SMALL, 0, 0, {0}, {0}, 0, AS_IS, {PROG(1, 1), LTE(0, 0)}},
    {"a connecting leg does not count", ON_MASK, 0, 0x0, NONE, SMALL, 0, 0, {0}, {0}, 0, AS_IS,
     {{.state = POL_ADMIT_CONNECTING, .path = 0, .queued = 1}}},

    /* pol_admit_alive_count (k = the path) */
    {"ready and connecting legs are alive", ALIVE, 1, 2, NONE, SMALL, 0, 0, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0), LTE_CONNECTING}},
    {"dead, closing and empty slots are not", ALIVE, 1, 0, NONE, SMALL, 0, 0, {0}, {0}, 0, AS_IS,
     {{.state = POL_ADMIT_DEAD, .path = 1}, {.state = POL_ADMIT_READY, .path = 1, .no_more = true},
      {.state = POL_ADMIT_NONE, .path = 1}}},

    /* pol_admit_explorer_waiting */
    {"an idle leg on an unmeasured path, 64 KiB missing", EXPLORER, 0, 1, NONE, SMALL, 65536, 0, {0}, {0}, 0, LTE_COLD,
     {PROG(1, 1), LTE(0, 0)}},
    {"below 64 KiB it does not explore", EXPLORER, 0, 0, NONE, SMALL, 65535, 0, {0}, {0}, 0, LTE_COLD,
     {PROG(1, 1), LTE(0, 0)}},
    {"an explorer with a request out is not waiting", EXPLORER, 0, 0, NONE, SMALL, 65536, 0, {0}, {0}, 0, LTE_COLD,
     {PROG(1, 1), LTE(1, 1)}},
    {"a measured path does not explore", EXPLORER, 0, 0, NONE, SMALL, 65536, 0, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0)}},

    /* pol_admit_leg_allowed */
    {"small plan: the program's leg waits for the plan's primary", ALLOWED, 0, 0, LTE_BOTH, SMALL, 80000, 0x1, {0},
     {0}, 0, AS_IS, {PROG(1, 1), LTE_CONNECTING}},
    {"small plan: once the primary carried a request it may go", ALLOWED, 0, 1, LTE_BOTH, SMALL, 80000, 0x3, {0},
     {0}, 0, AS_IS, {PROG(1, 1), LTE_CONNECTING}},
    {"small plan: no primary leg alive, no wait", ALLOWED, 0, 1, LTE_BOTH, SMALL, 80000, 0x1, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), {.state = POL_ADMIT_DEAD, .path = 1}}},
    {"an explorer ready to go goes before the program's leg", ALLOWED, 0, 0, NONE, SMALL, 80000, 0, {0}, {0}, 0,
     LTE_COLD, {PROG(1, 1), LTE(0, 0)}},
    {"large plan: a measured extra path keeps the floor", ALLOWED, 1, 0, WIFI_BOTH, LARGE, 80000, 0x1, {0}, {0},
     0, AS_IS, {PROG(1, 1), LTE(0, 0)}},
    {"large plan: an unmeasured extra path explores below the floor", ALLOWED, 1, 1, WIFI_BOTH, LARGE, 80000, 0x1,
     {0}, {0}, 0, LTE_COLD, {PROG(1, 1), LTE(0, 0)}},
    {"small plan: a planned path joins below the floor when worth it", ALLOWED, 1, 1, WIFI_BOTH, SMALL, 80000, 0x1,
     {0}, {0}, 0, AS_IS, {PROG(1, 1), LTE(0, 0)}},
    {"small plan: not worth it for 40 000 B", ALLOWED, 1, 0, WIFI_BOTH, SMALL, 40000, 0x1, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0)}},
    {"large plan: a planned path from the floor on, without weighing", ALLOWED, 1, 1, WIFI_BOTH, LARGE, FLOOR, 0x1,
     {0}, {0}, 0, WIFI_FAST, {PROG(1, 1), LTE(0, 0)}},
    {"small plan: a measured path off the plan waits for the floor", ALLOWED, 1, 0, WIFI_ONLY, SMALL, 80000, 0x1,
     {0}, {0}, 0, AS_IS, {PROG(1, 1), LTE(0, 0)}},
    {"no plan: an extra path from the floor on", ALLOWED, 1, 1, NONE, LARGE, FLOOR, 0x1, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0)}},
    {"no plan: not below it", ALLOWED, 1, 0, NONE, LARGE, FLOOR - 1, 0x1, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0)}},

    /* pol_admit_yields */
    {"a joined leg yields to a ready planned path that has not joined", YIELDS, 0, 1, WIFI_BOTH, SMALL, 80000, 0x1,
     {0}, {0}, 0, AS_IS, {PROG(1, 1), LTE(0, 0)}},
    {"not to one that joined", YIELDS, 0, 0, WIFI_BOTH, SMALL, 80000, 0x3, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(1, 1)}},
    {"not to one still connecting", YIELDS, 0, 0, WIFI_BOTH, SMALL, 80000, 0x1, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE_CONNECTING}},
    {"not to one the policy keeps out", YIELDS, 0, 0, WIFI_BOTH, SMALL, 40000, 0x1, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0)}},
    {"not when nothing is missing", YIELDS, 0, 0, WIFI_BOTH, SMALL, 0, 0x1, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0)}},
    {"lte is the plan's primary: it goes first", YIELDS, 0, 1, LTE_BOTH, SMALL, 1, 0x3, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0)}},
    {"not when nothing is missing, even to the primary", YIELDS, 0, 0, LTE_BOTH, SMALL, 0, 0x3, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0)}},
    {"not on a one-path plan, even to its primary", YIELDS, 0, 0, LTE_ONLY, SMALL, 80000, 0x3, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0)}},
    {"not for a large object", YIELDS, 0, 0, WIFI_BOTH, LARGE, 300000, 0x1, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0)}},

    /* pol_admit_over_share */
    {"asked its share while lte is below its own", OVER_SHARE, 0, 1, WIFI_BOTH, SMALL, 80000, 0x3, {30000, 0},
     {30000, 50000}, 0, AS_IS, {PROG(1, 1), LTE(1, 1)}},
    {"below its share", OVER_SHARE, 0, 0, WIFI_BOTH, SMALL, 80000, 0x3, {29999, 0}, {30000, 50000}, 0, AS_IS,
     {PROG(1, 1), LTE(1, 1)}},
    {"the other path has its share too", OVER_SHARE, 0, 0, WIFI_BOTH, SMALL, 80000, 0x3, {30000, 50000},
     {30000, 50000}, 0, AS_IS, {PROG(1, 1), LTE(1, 1)}},
    {"the other path's queue is full", OVER_SHARE, 0, 0, WIFI_BOTH, SMALL, 80000, 0x3, {30000, 0}, {30000, 50000},
     0, AS_IS, {PROG(1, 1), {.state = POL_ADMIT_READY, .path = 1, .scheduled = true, .queue_full = true, .queued = 8, .joined = true}}},

    /* pol_admit_share_left */
    {"what is left of the path's share, rounded up", SHARE_LEFT, 1, 30001, WIFI_BOTH, SMALL, 80000, 0x3,
     {30000, 20000}, {30000, 50000.4}, 0, AS_IS, {PROG(1, 1), LTE(1, 1)}},
    {"nothing left: no limit", SHARE_LEFT, 1, 0, WIFI_BOTH, SMALL, 80000, 0x3, {30000, 50000}, {30000, 50000},
     0, AS_IS, {PROG(1, 1), LTE(1, 1)}},
    {"a path off the plan: no limit", SHARE_LEFT, 1, 0, WIFI_ONLY, SMALL, 80000, 0x3, {30000, 0}, {30000, 50000},
     0, AS_IS, {PROG(1, 1), LTE(1, 1)}},
    {"a path off a two-path plan: no limit", SHARE_LEFT, 1, 0, WIFI_AND_THIRD, SMALL, 80000, 0x3, {30000, 20000},
     {30000, 50000}, 0, AS_IS, {PROG(1, 1), LTE(1, 1)}},
    {"a large object: no limit", SHARE_LEFT, 1, 0, WIFI_BOTH, LARGE, 80000, 0x3, {30000, 0}, {30000, 50000},
     0, AS_IS, {PROG(1, 1), LTE(1, 1)}},

    /* pol_admit_worth_using */
    {"a joined leg that yields waits", WORTH, 0, 0, WIFI_BOTH, SMALL, 80000, 0x1, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(0, 0)}},
    {"so does the probe's leg before it joined", WORTH, 0, 0, WIFI_BOTH, SMALL, 80000, 0x1, {0}, {0}, 0, AS_IS,
     {PROBE_PROG, LTE(0, 0)}},
    {"a joined leg over its share waits", WORTH, 0, 0, WIFI_BOTH, SMALL, 80000, 0x3, {30000, 0}, {30000, 50000},
     0, AS_IS, {PROG(1, 1), LTE(1, 1)}},
    {"a joined leg goes on below the floor", WORTH, 1, 1, NONE, LARGE, 1000, 0x3, {0}, {0}, 0, AS_IS,
     {PROG(1, 1), LTE(1, 1)}},
    {"a leg the policy keeps out waits while another is allowed", WORTH, 1, 0, NONE, LARGE, 1000, 0x1, {0}, {0},
     0, AS_IS, {PROG(1, 1), LTE(0, 0)}},
    {"any leg serves when no allowed one is alive", WORTH, 1, 1, NONE, LARGE, 1000, 0x1, {0}, {0}, 0, AS_IS,
     {{.state = POL_ADMIT_DEAD, .path = 0, .primary = true}, LTE(0, 0)}},

    /* pol_admit_early_finish (want: the finish, 0 = false) */
    {"a large object's plan bounds the early depth", EARLY, 0, 1300000, WIFI_BOTH, LARGE, 80000, 0, {0}, {0},
     300000, AS_IS, {{0}}},
    {"not a small object's", EARLY, 0, 0, WIFI_BOTH, SMALL, 80000, 0, {0}, {0}, 300000, AS_IS, {{0}}},
    {"not without a prediction", EARLY, 0, 0, WIFI_BOTH, LARGE, 80000, 0, {0}, {0}, 0, AS_IS, {{0}}},
    {"not without a plan", EARLY, 0, 0, NONE, LARGE, 80000, 0, {0}, {0}, 300000, AS_IS, {{0}}},

    /* pol_admit_early_budget (the tests' IW 14 600 B, no round overhead). wifi streams 0.25 B/us
     * from now; a new lte leg's rounds of 14 600, 29 200, 58 400 B come 100, 200, 300 ms from now
     * at 2.5 B/us. 190 000 B: wifi brings 87 800 by 351.2 ms, while lte has its three rounds
     * (102 200 B, the third ended at 323.36 ms) */
    {"a new leg asks its slow start's bytes by the joint finish", BUDGET, 1, 102200, WIFI_BOTH, LARGE, 190000, 0, {0},
     {0}, 0, AS_IS, {PROG_MEASURED, LTE(0, 0)}},
    /* a second lte leg, 50 ms into its handshake, sends its first round 150 ms from now; each
     * leg's share is 1.25 B/us, its rounds still come at the path's 2.5. At 309.96 ms wifi has
     * 77 490.9 B, the second leg its two rounds (43 800), the new one 43 800 + 24 909.1 of its third */
    {"the legs of a path split its rounds", BUDGET, 1, 68709, WIFI_BOTH, LARGE, 190000, 0, {0}, {0}, 0, AS_IS,
     {PROG_MEASURED, LTE(0, 0), LTE_HALFWAY}},
    /* alone on lte its rounds reach 250 000 B a round trip (its share) from 600 ms on: at 650 ms
     * wifi has 162 500 B, lte 452 600 + 125 000 */
    {"not when its slow start would reach its share before the finish", BUDGET, 1, 0, WIFI_BOTH, LARGE, 740100, 0,
     {0}, {0}, 0, AS_IS, {PROG_MEASURED, LTE(0, 0)}},
    {"not past eight of its round trips (its rate settles)", BUDGET, 1, 0, WIFI_BOTH, LARGE, 10000000, 0, {0}, {0}, 0,
     AS_IS, {PROG_MEASURED, LTE(0, 0)}},
    {"not when a path has no trusted rate", BUDGET, 1, 0, WIFI_BOTH, LARGE, 190000, 0, {0}, {0}, 0, LTE_COLD,
     {PROG_MEASURED, LTE(0, 0)}},
    {"not for a leg that asked already", BUDGET, 1, 0, WIFI_BOTH, LARGE, 190000, 0, {0}, {0}, 0, AS_IS,
     {PROG_MEASURED, LTE_ASKED}},
    {"not for the probe's leg", BUDGET, 0, 0, WIFI_BOTH, LARGE, 190000, 0, {0}, {0}, 0, AS_IS,
     {PROBE_PROG, LTE(0, 0)}},
    {"not for a small object", BUDGET, 1, 0, WIFI_BOTH, SMALL, 90000, 0, {0}, {0}, 0, AS_IS,
     {PROG_MEASURED, LTE(0, 0)}},
    {"not without a plan", BUDGET, 1, 0, NONE, LARGE, 190000, 0, {0}, {0}, 0, AS_IS, {PROG_MEASURED, LTE(0, 0)}},
};
/* clang-format on */

static uint64_t decide(const struct row *r) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  if (r->tweak == LTE_COLD)
    v.path[1].max_rate = 0;
  if (r->tweak == WIFI_FAST)
    v.path[0].max_rate = 250e6;
  static const uint32_t paths[] = {
      [WIFI_BOTH] = 0x3, [LTE_BOTH] = 0x3, [WIFI_ONLY] = 0x1, [LTE_ONLY] = 0x2, [WIFI_AND_THIRD] = 0x5};
  struct pol_plan plan = {.predicted_us = r->predicted_us};
  plan.primary.iface = r->plan == LTE_BOTH || r->plan == LTE_ONLY ? 1 : 0;
  plan.paths = paths[r->plan];
  plan.share[0] = r->share[0];
  plan.share[1] = r->share[1];
  uint64_t asked[POL_MAX_IFACES] = {r->asked[0], r->asked[1]};
  unsigned n = 0;
  while (n < 4 && r->leg[n].state != POL_ADMIT_NONE)
    n++;
  if (r->rule == ALIVE)
    n = 4; /* the empty slots count too: they must not */
  struct pol_admit_obj o = {.pol = &p,
                            .view = &v,
                            .plan = r->plan == NONE ? NULL : &plan,
                            .plan_at_us = 1000000,
                            .rest = r->rest,
                            .floor = FLOOR,
                            .missing = r->missing,
                            .unreceived = r->rule == BUDGET ? r->missing : 0,
                            .counted = r->counted,
                            .asked = asked,
                            .leg = r->leg,
                            .nleg = n};
  uint64_t fin = 0;
  switch (r->rule) {
  case SMALL_PLAN: return pol_admit_small(&o);
  case ON_MASK: return pol_admit_on_mask(&o);
  case ALIVE: return pol_admit_alive_count(&o, (int)r->k);
  case EXPLORER: return pol_admit_explorer_waiting(&o);
  case ALLOWED: return pol_admit_leg_allowed(&o, r->k);
  case YIELDS: return pol_admit_yields(&o, r->k);
  case OVER_SHARE: return pol_admit_over_share(&o, r->k);
  case SHARE_LEFT: return pol_admit_share_left(&o, r->k);
  case WORTH: return pol_admit_worth_using(&o, r->k);
  case EARLY: return pol_admit_early_finish(&o, &fin) ? fin : 0;
  case BUDGET: return pol_admit_early_budget(&o, r->k);
  }
  return UINT64_MAX;
}

Test(admit, every_row) {
  int bad = 0;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    uint64_t got = decide(&rows[i]);
    if (got != rows[i].want) {
      fprintf(stderr, "row %zu (%s, %s): got %llu, want %llu\n", i, rule_names[rows[i].rule], rows[i].why,
              (unsigned long long)got, (unsigned long long)rows[i].want);
      bad++;
    }
  }
  cr_assert_eq(bad, 0, "%d rows differ (listed above)", bad);
}

/* The same rows through pol_admit_policy alone: the plan's word, the floor, exploring. */
Test(admit, policy_word) {
  struct pol p = test_policy(POL_EAF);
  struct pol_view v = test_view();
  struct pol_plan plan = {.primary = {.iface = 1}, .paths = 0x2};
  cr_assert(pol_admit_policy(&p, &v, &plan, 1, false, 0, 1, FLOOR));          /* the plan's primary */
  cr_assert_not(pol_admit_policy(&p, &v, &plan, 0, true, 0x2, LARGE, FLOOR)); /* program's, off the plan */
  cr_assert(pol_admit_policy(&p, &v, NULL, 0, true, 0, 0, FLOOR));            /* no plan: the program's */
  v.path[1].max_rate = 0;
  cr_assert(pol_admit_explorable(&v, 1));
  v.path[1].metered = true;
  cr_assert_not(pol_admit_explorable(&v, 1));
  cr_assert_not(pol_admit_explorable(&v, 2)); /* past the view */
}
