/* The hand-computed scenario shared by the policy tests: the papers' asymmetric pair of links. */
#ifndef MHTTP_TESTS_POLICY_PATHS_H
#define MHTTP_TESTS_POLICY_PATHS_H

#include "policy/policy.h"

/*
 * Index 0, "wifi": 20 ms, 2 Mbit/s  (250 000 B/s: 4 µs per byte)  — low latency, low rate
 * Index 1, "lte": 100 ms, 20 Mbit/s (2 500 000 B/s: 0.4 µs per byte) — high latency, high rate
 * (IANS §V "network 1: 10 ms and 2 Mbit, network 2: 100 ms and 20 Mbit", RTTs rounded so the
 * arithmetic stays exact.) Min and median SRTT are equal unless a test changes them; no
 * other transfers or connections; nothing metered; no idle connection to reuse.
 */
static inline struct pol_view test_view(void) {
  struct pol_view v = {.n = 2};
  v.path[0] =
      (struct pol_path){.name = "wifi", .usable = true, .srtt_min_us = 20000, .srtt_med_us = 20000, .max_rate = 250000};
  v.path[1] = (struct pol_path){
      .name = "lte", .usable = true, .srtt_min_us = 100000, .srtt_med_us = 100000, .max_rate = 2500000};
  return v;
}

static inline struct pol test_policy(enum pol_kind kind) {
  struct pol_config cfg;
  pol_config_default(&cfg);
  cfg.kind = kind;
  /* the hand-computed round models count whole windows; the tests of the overhead (probe
   * floor, round payload) set POL_ROUND_OVERHEAD back */
  cfg.round_overhead = 0;
  if (kind == POL_SINGLE)
    __builtin_strcpy(cfg.single_if, "lte");
  struct pol p;
  if (pol_init(&p, &cfg) != 0)
    __builtin_abort();
  return p;
}

/* The interface chosen for `size`, or the negative error. */
static inline int test_pick(struct pol *p, const struct pol_view *v, uint64_t size, double draw, double *pred) {
  struct pol_choice c;
  int rc = pol_choose(p, v, size, draw, &c);
  if (rc < 0)
    return rc;
  if (pred)
    *pred = c.predicted_us;
  return c.iface;
}

#endif
