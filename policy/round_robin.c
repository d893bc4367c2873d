/* round-robin — eligible interfaces in turn, one object or connection each (Socket Intents §V-F 2). */
#include <errno.h>

#include "policy/internal.h"

static double pol__rr_predict(const struct pol *p, const struct pol_path *pp, uint64_t size) {
  return pol_eaf_time(pp, size, p->cfg.init_window); /* only for the metered gate and logs */
}

/* The cursor moves past the path chosen, so a path that was skipped (down, or metered
 * without enough gain) does not shift the order of the others. */
static int pol__rr_pick(struct pol *p, const struct pol_view *v, const bool *eligible, const double *t, uint64_t size,
                        double draw, double *pred) {
  (void)size, (void)draw;
  for (unsigned k = 0; k < v->n; k++) {
    unsigned i = (p->rr_next + k) % v->n;
    if (!eligible[i])
      continue;
    p->rr_next = (i + 1) % v->n;
    *pred = t[i];
    return (int)i;
  }
  return -ENETUNREACH;
}

const struct pol_ops pol__round_robin_ops = {
    .name = "round-robin",
    .splits = false,
    .predict = pol__rr_predict,
    .pick = pol__rr_pick,
};
