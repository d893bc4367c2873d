/* eaf — earliest arrival first: the path where the object is predicted to arrive first (Socket Intents §IV-D, §V-F 3). */
#include "policy/internal.h"

/* t = size / (max_rate / (transfers+1)) + min_srtt · (1 reused | 2 new), slow-start rounds for
 * a reused connection idle past its RTO (pol_eaf_time); for an unknown
 * size only the latency part, so latency wins. */
static double pol__eaf_predict(const struct pol *p, const struct pol_path *pp, uint64_t size) {
  return pol_eaf_time(pp, size, p->cfg.init_window);
}

static int pol__eaf_pick(struct pol *p, const struct pol_view *v, const bool *eligible, const double *t, uint64_t size,
                         double draw, double *pred) {
  (void)p, (void)size, (void)draw;
  int i = pol__argmin(v, eligible, t);
  if (i < 0)
    return pol__fallback(p, v, eligible, pred);
  *pred = t[i];
  return i;
}

const struct pol_ops pol__eaf_ops = {
    .name = "eaf",
    .splits = true,
    .predict = pol__eaf_predict,
    .pick = pol__eaf_pick,
};
