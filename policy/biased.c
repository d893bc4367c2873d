/* biased — a random path, probability ∝ 1 / EAF-predicted time (metrics paper §4.3), the draw given by the caller. */
#include "policy/internal.h"

/* Predictions can be wrong and metrics stale (the paper's reason for this policy): a path
 * 5 times slower is still chosen, 5 times less often, so its metrics stay fresh. */
static double pol__biased_predict(const struct pol *p, const struct pol_path *pp, uint64_t size) {
  return pol_eaf_time(pp, size, p->cfg.init_window);
}

static int pol__biased_pick(struct pol *p, const struct pol_view *v, const bool *eligible, const double *t,
                            uint64_t size, double draw, double *pred) {
  (void)p, (void)size;
  double sum = 0;
  int last = -1;
  for (unsigned i = 0; i < v->n; i++) {
    if (eligible[i] && t[i] > 0) {
      sum += 1 / t[i];
      last = (int)i;
    }
  }
  if (last < 0)
    return pol__fallback(p, v, eligible, pred);
  /* Path i owns the slice [cum_{i-1}, cum_i) of [0, sum): draw·sum falls in exactly one.
   * The last weighted path takes whatever rounding leaves at the top. */
  double x = draw * sum, cum = 0;
  for (unsigned i = 0; i < v->n; i++) {
    if (!eligible[i] || !(t[i] > 0))
      continue;
    cum += 1 / t[i];
    if (x < cum || (int)i == last) {
      *pred = t[i];
      return (int)i;
    }
  }
  return last; /* not reached: the loop returns at `last` at the latest */
}

const struct pol_ops pol__biased_ops = {
    .name = "biased",
    .splits = true,
    .predict = pol__biased_predict,
    .pick = pol__biased_pick,
};
