/* The policy-independent part of a decision: config, metered gate, fallback, and the split plan. */
#include <errno.h>
#include <string.h>

#include "policy/internal.h"

void pol_config_default(struct pol_config *cfg) {
  *cfg = (struct pol_config){
      .kind = POL_EAF,
      .init_window = 10 * 1460, /* RFC 6928: IW10 of 1460-byte segments */
      .round_overhead = POL_ROUND_OVERHEAD,
      .metered_gain = 0.2,
      .split_gain = 0.05, /* a connection costs the server too: want a visible gain */
  };
}

static const struct pol_ops *pol__ops_of(enum pol_kind kind) {
  switch (kind) {
  case POL_SINGLE: return &pol__single_ops;
  case POL_ROUND_ROBIN: return &pol__round_robin_ops;
  case POL_EAF: return &pol__eaf_ops;
  case POL_THRESHOLD: return &pol__threshold_ops;
  case POL_BIASED: return &pol__biased_ops;
  }
  return NULL;
}

static bool pol__gain_ok(double g) { return g >= 0 && g < 1; }

int pol_init(struct pol *p, const struct pol_config *cfg) {
  const struct pol_ops *ops = pol__ops_of(cfg->kind);
  if (!ops || !cfg->init_window || !pol__gain_ok(cfg->metered_gain) || !pol__gain_ok(cfg->split_gain))
    return -EINVAL;
  if (cfg->kind == POL_SINGLE && (!cfg->single_if[0] || !memchr(cfg->single_if, 0, sizeof(cfg->single_if))))
    return -EINVAL;
  *p = (struct pol){.ops = ops, .cfg = *cfg, .rr_next = 0};
  return 0;
}

/* The metered gate (issue item 5): a metered path is eligible only when it beats the best
 * unmetered prediction by metered_gain, or when there is no usable unmetered path at all.
 * Without a prediction a metered path cannot show a gain, so it waits. */
static void pol__eligible(const struct pol *p, const struct pol_view *v, const double *t, bool *eligible) {
  bool any_unmetered = false;
  double best = -1;
  for (unsigned i = 0; i < v->n; i++) {
    const struct pol_path *pp = &v->path[i];
    if (!pp->usable || pp->metered)
      continue;
    any_unmetered = true;
    if (t[i] >= 0 && (best < 0 || t[i] < best))
      best = t[i];
  }
  for (unsigned i = 0; i < v->n; i++) {
    const struct pol_path *pp = &v->path[i];
    eligible[i] = pp->usable && (!pp->metered || !any_unmetered ||
                                 (t[i] >= 0 && best >= 0 && t[i] <= (1 - p->cfg.metered_gain) * best));
  }
}

int pol_choose(struct pol *p, const struct pol_view *v, uint64_t size, double draw, struct pol_choice *out) {
  if (!(draw >= 0 && draw < 1) || v->n > POL_MAX_IFACES)
    return -EINVAL;
  double t[POL_MAX_IFACES];
  bool eligible[POL_MAX_IFACES];
  for (unsigned i = 0; i < v->n; i++)
    t[i] = v->path[i].usable ? p->ops->predict(p, &v->path[i], size) : -1;
  pol__eligible(p, v, t, eligible);
  double pred = -1;
  int i = p->ops->pick(p, v, eligible, t, size, draw, &pred);
  if (i < 0)
    return i;
  *out = (struct pol_choice){.iface = i, .reuse = v->path[i].reusable, .predicted_us = pred};
  return 0;
}

int pol_plan(struct pol *p, const struct pol_view *v, uint64_t size, double draw, struct pol_plan *out) {
  int rc = pol_choose(p, v, size, draw, &out->primary);
  if (rc < 0)
    return rc;
  unsigned first = (unsigned)out->primary.iface;
  out->paths = 1u << first;
  out->predicted_us = out->primary.predicted_us;
  for (unsigned i = 0; i < POL_MAX_IFACES; i++)
    out->share[i] = 0;
  struct pol__curve set[POL_MAX_IFACES];
  unsigned idx[POL_MAX_IFACES];
  unsigned n = 0;
  idx[0] = first;
  if (!p->ops->splits || size == POL_SIZE_UNKNOWN || !pol__path_curve(p, &v->path[first], &set[n++]))
    return 0;
  double best_us = pol__finish_us(set, n, (double)size);

  /* Candidates fastest-alone first, so the greedy order tries the most useful path first. */
  struct pol__curve cand[POL_MAX_IFACES];
  double alone[POL_MAX_IFACES];
  bool left[POL_MAX_IFACES] = {false};
  for (unsigned i = 0; i < v->n; i++) {
    if (i == first || !v->path[i].usable || !pol__path_curve(p, &v->path[i], &cand[i]))
      continue;
    alone[i] = pol__finish_us(&cand[i], 1, (double)size);
    left[i] = true;
  }
  for (;;) {
    int next = -1;
    for (unsigned i = 0; i < v->n; i++)
      if (left[i] && (next < 0 || alone[i] < alone[next]))
        next = (int)i;
    if (next < 0)
      break;
    left[next] = false;
    set[n] = cand[next];
    double with_us = pol__finish_us(set, n + 1, (double)size);
    double gain = v->path[next].metered ? p->cfg.metered_gain : p->cfg.split_gain;
    if (pol__worth(best_us, with_us, gain)) {
      idx[n++] = (unsigned)next;
      out->paths |= 1u << next;
      best_us = with_us;
    }
  }
  out->predicted_us = best_us;
  /* What each path carries if all end together: its curve's bytes at the joint finish (the
   * last path's share is the rest, so the shares add up to the size exactly). */
  double given = 0;
  for (unsigned k = 0; k + 1 < n; k++) {
    double b = pol__curve_bytes(&set[k], best_us);
    if (b > (double)size - given)
      b = (double)size - given;
    out->share[idx[k]] = b;
    given += b;
  }
  out->share[idx[n - 1]] = (double)size - given;
  return 0;
}
