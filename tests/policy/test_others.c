/* The simple policies: single:IF, round-robin, and biased (probability ∝ 1/predicted time, fixed draws). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>

#include "tests/policy/paths.h"

/* Three paths whose small-object arrival (2 × min SRTT, new connections) is 10, 20 and
 * 40 ms: weights 1/10 : 1/20 : 1/40 = 4 : 2 : 1, so path 0 owns draws [0, 4/7), path 1
 * [4/7, 6/7), path 2 [6/7, 1). */
static struct pol_view three_paths(void) {
  struct pol_view v = {.n = 3};
  static const char *names[] = {"a", "b", "c"};
  for (unsigned i = 0; i < 3; i++)
    v.path[i] = (struct pol_path){
        .name = names[i], .usable = true, .srtt_min_us = 5000u << i, .srtt_med_us = 5000u << i, .max_rate = 1e6};
  return v;
}

Test(biased, fixed_draws_hit_the_slices) {
  static const struct {
    double draw;
    int iface;
  } rows[] = {
      {0.0, 0}, {0.5714, 0}, {0.5715, 1}, {0.8571, 1}, {0.8572, 2}, {0.9999999, 2},
  };
  struct pol p = test_policy(POL_BIASED);
  struct pol_view v = three_paths();
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
    cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, rows[i].draw, NULL), rows[i].iface, "draw %f", rows[i].draw);
}

/* Slices are half-open: with two equal paths, draw 0.5 is the first draw of the second. */
Test(biased, slices_are_half_open) {
  struct pol p = test_policy(POL_BIASED);
  struct pol_view v = three_paths();
  v.n = 2;
  v.path[1] = v.path[0];
  cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, 0.4999, NULL), 0);
  cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, 0.5, NULL), 1);
}

/* 7000 evenly spaced draws land 4000 / 2000 / 1000 times. */
Test(biased, distribution_is_inverse_to_predicted_time) {
  struct pol p = test_policy(POL_BIASED);
  struct pol_view v = three_paths();
  int count[3] = {0};
  for (int i = 0; i < 7000; i++) {
    int k = test_pick(&p, &v, POL_SIZE_UNKNOWN, (i + 0.5) / 7000, NULL);
    cr_assert(k >= 0 && k < 3);
    count[k]++;
  }
  cr_assert_eq(count[0], 4000);
  cr_assert_eq(count[1], 2000);
  cr_assert_eq(count[2], 1000);
}

/* With a size, the EAF prediction is the weight. wifi/lte at 1 MB: 4 040 000 vs 600 000:
 * P(wifi) = (1/4.04) / (1/4.04 + 1/0.6) = 0.6 / 4.64 = 0.12931. */
Test(biased, sized_object_uses_eaf_prediction) {
  struct pol p = test_policy(POL_BIASED);
  struct pol_view v = test_view();
  cr_assert_eq(test_pick(&p, &v, 1000000, 0.1293, NULL), 0);
  cr_assert_eq(test_pick(&p, &v, 1000000, 0.1294, NULL), 1);
  /* Metered lte without enough gain drops out of the draw entirely. */
  v.path[1].metered = true;
  cr_assert_eq(test_pick(&p, &v, 50000, 0.99, NULL), 0);
}

Test(biased, draw_must_be_in_unit_interval) {
  struct pol p = test_policy(POL_BIASED);
  struct pol_view v = test_view();
  cr_assert_eq(test_pick(&p, &v, 0, 1.0, NULL), -EINVAL);
  cr_assert_eq(test_pick(&p, &v, 0, -0.1, NULL), -EINVAL);
  cr_assert_eq(test_pick(&p, &v, 0, NAN, NULL), -EINVAL);
}

Test(round_robin, order_skips_unusable_and_gated_paths) {
  struct pol p = test_policy(POL_ROUND_ROBIN);
  struct pol_view v = three_paths();
  static const int all[] = {0, 1, 2, 0, 1};
  for (int i = 0; i < 5; i++)
    cr_assert_eq(test_pick(&p, &v, 1000, 0, NULL), all[i], "step %d", i);
  /* Cursor is at 2 now. */
  v.path[0].usable = false;
  static const int no0[] = {2, 1, 2, 1};
  for (int i = 0; i < 4; i++)
    cr_assert_eq(test_pick(&p, &v, 1000, 0, NULL), no0[i], "step %d", i);
  /* Cursor at 2; c is metered and its 40 ms arrival is no gain over a's 10 ms. */
  v.path[0].usable = true;
  v.path[2].metered = true;
  static const int no2[] = {0, 1, 0, 1};
  for (int i = 0; i < 4; i++)
    cr_assert_eq(test_pick(&p, &v, 1000, 0, NULL), no2[i], "step %d", i);
  /* Size does not matter to round-robin. */
  cr_assert_eq(test_pick(&p, &v, 1ULL << 40, 0, NULL), 0);
  v.path[0].usable = v.path[1].usable = v.path[2].usable = false;
  cr_assert_eq(test_pick(&p, &v, 1000, 0, NULL), -ENETUNREACH);
}

Test(single, always_the_named_interface) {
  struct pol p = test_policy(POL_SINGLE); /* single:lte */
  struct pol_view v = test_view();
  cr_assert_eq(test_pick(&p, &v, POL_SIZE_UNKNOWN, 0, NULL), 1); /* EAF would say wifi */
  cr_assert_eq(test_pick(&p, &v, 1000, 0, NULL), 1);
  cr_assert_eq(test_pick(&p, &v, 1ULL << 30, 0, NULL), 1);
  /* The user's explicit choice is not gated by cost. */
  v.path[1].metered = true;
  cr_assert_eq(test_pick(&p, &v, 1000, 0, NULL), 1);
  v.path[1].usable = false;
  cr_assert_eq(test_pick(&p, &v, 1000, 0, NULL), -ENETDOWN);
  v.path[1].name = "eth9";
  cr_assert_eq(test_pick(&p, &v, 1000, 0, NULL), -ENODEV);
}
