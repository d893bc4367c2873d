/* Estimator tests: the harmonic mean and the latency EWMA against worked examples. */
#include <criterion/criterion.h>

#include "scheduler/estimate.h"

struct hm_case {
  uint32_t window;
  double samples[4];
  int n;
  double want;
};

/* Worked by hand: 10, 20, 40 → 3 / (1/10 + 1/20 + 1/40) = 3 / 0.175 = 17.142857…;
 * window 2 keeps n at 1: after 10, 20 → 13.333…; then 2 / (1/13.333… + 1/40) = 2 / 0.1 = 20. */
/* clang-format off */
static const struct hm_case hm_cases[] = {
    {0, {10}, 1, 10.0},
    {0, {10, 20}, 2, 40.0 / 3.0},
    {0, {10, 20, 40}, 3, 3.0 / 0.175},
    {2, {10, 20, 40}, 3, 20.0},
    {1, {10, 20, 40}, 3, 40.0},           /* window 1: only the last sample */
    {0, {10, 0, -5, 20}, 4, 40.0 / 3.0},  /* empty or negative samples carry no information */
};
/* clang-format on */

Test(estimate, harmonic_mean_worked_examples) {
  for (size_t i = 0; i < sizeof(hm_cases) / sizeof(hm_cases[0]); i++) {
    struct sched_hmean h;
    sched_hmean_init(&h, hm_cases[i].window);
    for (int k = 0; k < hm_cases[i].n; k++)
      sched_hmean_add(&h, hm_cases[i].samples[k]);
    cr_assert_float_eq(h.mean, hm_cases[i].want, 1e-9, "case %zu: %.12f", i, h.mean);
  }
}

Test(estimate, harmonic_mean_is_pulled_down_by_a_slow_read_more_than_up_by_a_burst) {
  struct sched_hmean lo, hi;
  sched_hmean_init(&lo, 0);
  sched_hmean_init(&hi, 0);
  for (int k = 0; k < 9; k++) {
    sched_hmean_add(&lo, 100);
    sched_hmean_add(&hi, 100);
  }
  sched_hmean_add(&lo, 10);   /* 10 / (9/100 + 1/10) = 52.63 */
  sched_hmean_add(&hi, 1000); /* 10 / (9/100 + 1/1000) = 109.89 */
  cr_assert_float_eq(lo.mean, 10.0 / 0.19, 1e-9);
  cr_assert_float_eq(hi.mean, 10.0 / 0.091, 1e-9);
}

Test(estimate, latency_ewma_worked_example) {
  /* 100 → 0.8·100 + 0.2·50 = 90 → 0.8·90 + 0.2·200 = 112 */
  double r = sched_rtl_ewma(100, 50);
  cr_assert_float_eq(r, 90.0, 1e-12);
  cr_assert_float_eq(sched_rtl_ewma(r, 200), 112.0, 1e-12);
}
