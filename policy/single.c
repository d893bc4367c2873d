/* single:IF — every object and connection on one configured interface (Socket Intents §V-F 1). */
#include <errno.h>
#include <string.h>

#include "policy/internal.h"

static double pol__single_predict(const struct pol *p, const struct pol_path *pp, uint64_t size) {
  return pol_eaf_time(pp, size, p->cfg.init_window); /* for logs only: the choice does not depend on it */
}

/* The user named the interface: no gate, no fallback to another one. A missing or down
 * interface is an error the engine reports rather than a silent change of path. */
static int pol__single_pick(struct pol *p, const struct pol_view *v, const bool *eligible, const double *t,
                            uint64_t size, double draw, double *pred) {
  (void)eligible, (void)size, (void)draw;
  for (unsigned i = 0; i < v->n; i++) {
    if (!v->path[i].name || strcmp(v->path[i].name, p->cfg.single_if) != 0)
      continue;
    if (!v->path[i].usable)
      return -ENETDOWN;
    *pred = t[i];
    return (int)i;
  }
  return -ENODEV;
}

const struct pol_ops pol__single_ops = {
    .name = "single",
    .splits = false,
    .predict = pol__single_predict,
    .pick = pol__single_pick,
};
