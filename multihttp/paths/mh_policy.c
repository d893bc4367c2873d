/* Policy glue between policy/ (pure decisions) and the engine: views, the per-object plan, leg admission, connect-time pick. */
#include "mh_policy.h"
#include "mh_config.h"
#include "mh_log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

double mh_policy_draw(void) {
  /* splitmix64 over an atomic counter: lock-free, any thread, no libc random state. One
   * sequence for the process, shared by its engines: each draw is still uniform, which is
   * all a decision asks of it */
  static _Atomic uint64_t ctr;
  uint64_t z = atomic_fetch_add(&ctr, 0x9e3779b97f4a7c15ULL);
  if (!z) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    z = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL + 1;
  }
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0; /* 53 bits: [0, 1) */
}

void mh_policy_view(const struct mh_config *cfg, unsigned n, const char *const *names, const struct pol_path *metrics,
                    uint32_t usable, uint32_t reusable, const uint32_t *self, struct pol_view *out) {
  memset(out, 0, sizeof *out);
  out->n = n > POL_MAX_IFACES ? POL_MAX_IFACES : n;
  for (unsigned i = 0; i < out->n; i++) {
    struct pol_path *pp = &out->path[i];
    if (metrics)
      *pp = metrics[i];
    /* the connection fields are the caller's to set after this, never a snapshot's */
    pp->idle_us = pp->window = pp->busy = 0;
    pp->name = names[i];
    pp->usable = (usable >> i) & 1;
    pp->reusable = (reusable >> i) & 1;
    pp->metered = names[i] && mh_config_metered(cfg, names[i]);
    /* a rate no busier than one initial window per bucket says what was asked, not what
     * the path can do: unmeasured for every decision (pol_rate_trusted) */
    if (!pol_rate_trusted(pp, cfg->pol.init_window))
      pp->max_rate = 0;
    uint32_t own = self ? self[i] : 0;
    pp->transfers = pp->transfers > own ? pp->transfers - own : 0;
  }
}

int mh_policy_plan(struct pol *p, const struct pol_view *v, uint64_t remaining, double draw, struct mh_policy_obj *o) {
  memset(o, 0, sizeof *o);
  for (unsigned i = 0; i < POL_MAX_IFACES; i++)
    o->pred_us[i] = -1;
  for (unsigned i = 0; i < v->n; i++)
    if (v->path[i].usable)
      o->pred_us[i] = p->ops->predict(p, &v->path[i], remaining);
  int rc = pol_plan(p, v, remaining, draw, &o->plan);
  if (rc < 0)
    return rc;
  /* eaf, threshold and biased without a prediction fell back to "lowest latency": with no
   * rate known that says nothing about where bytes arrive first, so the engine keeps its
   * own behaviour (probe path plus every extra path) and lets traffic create the metrics */
  int pi = o->plan.primary.iface;
  o->has_plan = !p->ops->splits || (pi >= 0 && pi < POL_MAX_IFACES && o->pred_us[pi] >= 0);
  return 0;
}

int mh_policy_leg_allowed(const struct pol *p, const struct pol_view *v, const struct mh_policy_obj *o, unsigned i,
                          int primary, uint32_t on, uint64_t missing, uint64_t floor) {
  return pol_admit_policy(p, v, o && o->has_plan ? &o->plan : NULL, i, primary, on, missing, floor);
}

int mh_policy_connect_pick(struct pol *p, const struct pol_view *v, uint64_t size_hint, double draw, int kernel,
                           struct pol_choice *c) {
  unsigned usable = 0;
  for (unsigned i = 0; i < v->n; i++)
    usable += v->path[i].usable;
  if (usable < 2)
    return -1;
  if (pol_choose(p, v, size_hint, draw, c) < 0)
    return -1;
  return c->iface == kernel ? -1 : c->iface;
}

int mh_policy_probe_pick(struct pol *p, const struct pol_view *v, uint64_t probe_size, double draw, int kernel,
                         struct pol_choice *c) {
  unsigned usable = 0;
  for (unsigned i = 0; i < v->n; i++)
    usable += v->path[i].usable;
  if (usable < 2 || pol_choose(p, v, probe_size, draw, c) < 0)
    return -1;
  /* Optimism for a path with a round trip (an extra leg's handshake) but no rate yet: its
   * probe cannot arrive before its latency part, and might arrive right then. When that
   * beats the prediction of the best measured path, loaded as it is, the connection goes
   * there and the path gets measured; when it does not, exploring would cost this object
   * (a sequential client's next connection on asym: wifi0 78 ms vs lte0's 200 ms alone). */
  if (p->ops->splits && c->predicted_us >= 0) {
    int best = -1;
    double best_us = c->predicted_us;
    for (unsigned i = 0; i < v->n; i++) {
      double lat = v->path[i].srtt_min_us ? (double)v->path[i].srtt_min_us * (v->path[i].reusable ? 1 : 2) : -1;
      if (pol_admit_explorable(v, i) && lat >= 0 && lat < best_us) {
        best = (int)i;
        best_us = lat;
      }
    }
    if (best >= 0)
      *c = (struct pol_choice){.iface = best, .reuse = v->path[best].reusable, .predicted_us = best_us};
  }
  return c->iface == kernel ? -1 : c->iface;
}

int mh_policy_probe_move(struct pol *p, const struct pol_view *v, int self, uint64_t probe_size, double draw,
                         struct pol_choice *c) {
  /* round-robin takes its turn per object in the plan (mh_policy_plan): a turn for the probe
   * too would move its cursor twice per object */
  if (p->cfg.kind == POL_ROUND_ROBIN || self < 0 || (unsigned)self >= v->n || !v->path[self].usable)
    return -1;
  int j = mh_policy_probe_pick(p, v, probe_size, draw, self, c);
  if (j < 0 || (unsigned)j >= v->n || !v->path[j].usable || !v->path[j].reusable)
    return -1;
  return j;
}

size_t mh_policy_json(char *buf, size_t cap, size_t len, const struct pol *p, const struct pol_view *v,
                      const struct mh_policy_obj *o) {
  char tmp[1024];
  int n;
  const char *pname = p->ops->name;
  char single[POL_IFNAME_MAX + 8];
  if (p->cfg.kind == POL_SINGLE) {
    snprintf(single, sizeof single, "single:%s", p->cfg.single_if);
    pname = single;
  }
  if (!o || !o->has_plan) {
    n = snprintf(tmp, sizeof tmp, ",\"policy\":\"%s\",\"plan\":null", pname);
  } else {
    const struct pol_plan *pl = &o->plan;
    n = snprintf(tmp, sizeof tmp, ",\"policy\":\"%s\",\"plan\":{\"primary\":\"%s\",\"paths\":[", pname,
                 v->path[pl->primary.iface].name ? v->path[pl->primary.iface].name : "?");
    for (unsigned i = 0, first = 1; i < v->n && n > 0 && (size_t)n < sizeof tmp; i++)
      if ((pl->paths >> i) & 1) {
        n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%s\"%s\"", first ? "" : ",",
                      v->path[i].name ? v->path[i].name : "?");
        first = 0;
      }
    if (n > 0 && (size_t)n < sizeof tmp)
      n += snprintf(tmp + n, sizeof tmp - (size_t)n, "],\"predicted_us\":%.0f}", pl->predicted_us);
  }
  if (n > 0 && (size_t)n < sizeof tmp)
    n += snprintf(tmp + n, sizeof tmp - (size_t)n, ",\"predictions\":[");
  for (unsigned i = 0; o && i < v->n && n > 0 && (size_t)n < sizeof tmp; i++)
    n += snprintf(tmp + n, sizeof tmp - (size_t)n,
                  "%s{\"iface\":\"%s\",\"pred_us\":%.0f,\"srtt_min_us\":%llu,\"max_rate_Bps\":%.0f,"
                  "\"reusable\":%s,\"warm\":%s,\"window\":%llu,\"metered\":%s}",
                  i ? "," : "", v->path[i].name ? v->path[i].name : "?", o->pred_us[i],
                  (unsigned long long)v->path[i].srtt_min_us, v->path[i].max_rate,
                  v->path[i].reusable ? "true" : "false", pol_window_open(&v->path[i]) ? "true" : "false",
                  (unsigned long long)v->path[i].window, v->path[i].metered ? "true" : "false");
  if (n > 0 && (size_t)n < sizeof tmp)
    n += snprintf(tmp + n, sizeof tmp - (size_t)n, "]");
  if (n < 0 || (size_t)n >= sizeof tmp || len + (size_t)n >= cap)
    return len;
  memcpy(buf + len, tmp, (size_t)n + 1);
  return len + (size_t)n;
}
