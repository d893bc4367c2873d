/* The daemon's rate limits shared among active downloads (dmn_q_share): equal shares of max-overall-download-limit, a lower own max-download-limit's rest to the others, each its own without an overall limit. */
#include <criterion/criterion.h>

#include "queue.h"

struct share_case {
  uint64_t overall;
  size_t n;
  uint64_t lim[4], want[4];
};

/* clang-format off */
static const struct share_case cases[] = {
    {0, 3, {0, 1000, 0}, {0, 1000, 0}},                  /* no overall limit: each its own */
    {3000, 3, {0, 0, 0}, {1000, 1000, 1000}},            /* equal shares */
    {3000, 3, {500, 0, 0}, {500, 1250, 1250}},           /* 500 left by the first, shared */
    {3000, 3, {5000, 0, 0}, {1000, 1000, 1000}},         /* an own limit above the share */
    {3000, 3, {500, 900, 0}, {500, 900, 1600}},          /* the rest after both */
    {3000, 3, {500, 1100, 0}, {500, 1100, 1400}},        /* 1100 is under its share once 500 left */
    {3000, 3, {500, 1300, 0}, {500, 1250, 1250}},        /* 1300 is not: equal shares of the rest */
    {1000, 1, {4000}, {1000}},                           /* one download: the whole limit */
    {2, 4, {0, 0, 0, 0}, {1, 1, 1, 1}},                  /* never 0, which means no limit */
    {3000, 0, {0}, {0}},                                 /* nothing active */
};
/* clang-format on */

Test(share, table) {
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    uint64_t out[4] = {7, 7, 7, 7};
    dmn_q_share(cases[c].overall, cases[c].n, cases[c].lim, out);
    for (size_t i = 0; i < cases[c].n; i++)
      cr_assert_eq(out[i], cases[c].want[i], "case %zu, download %zu: %llu, want %llu", c, i,
                   (unsigned long long)out[i], (unsigned long long)cases[c].want[i]);
  }
}
