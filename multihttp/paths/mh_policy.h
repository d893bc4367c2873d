/* Policy glue: the engine's struct pol, views built from metrics and pool state, the per-object plan, and the connect-time pick. */
#ifndef MH_POLICY_H
#define MH_POLICY_H
#include <stddef.h>
#include <stdint.h>

#include "policy/admit.h"
#include "policy/policy.h"

struct mh_config;

/* A uniform draw in [0, 1) from a private generator (the program's rand() state is not
 * ours to move). Any thread. */
double mh_policy_draw(void);

/* Builds a view of n paths (pure): names[i] (borrowed), the metric fields of metrics[i]
 * (mh_metrics_snapshot; NULL = none measured), bit i of usable/reusable, metered from
 * cfg->metered. A max_rate that pol_rate_trusted refuses becomes 0 (unmeasured). self[i]
 * transfers are subtracted: the object being decided counts itself in
 * the store (its probe), and pol_plan wants the others only. */
void mh_policy_view(const struct mh_config *cfg, unsigned n, const char *const *names, const struct pol_path *metrics,
                    uint32_t usable, uint32_t reusable, const uint32_t *self, struct pol_view *out);

/* One object's decision once its size is known. */
struct mh_policy_obj {
  int has_plan; /* 0: the metrics cannot tell; the engine behaves as without policy */
  struct pol_plan plan;
  double pred_us[POL_MAX_IFACES]; /* the policy's prediction per path alone, -1 unknown */
};

/* pol_plan for the `remaining` bytes after the probe. A plan is followed when the policy
 * does not predict (single, round-robin: the user's rule) or when its primary has a
 * prediction for this size (a rate is known; pol_choose's lowest-latency fallback is not
 * evidence); otherwise has_plan = 0. Returns 0 or the errors of pol_plan (has_plan = 0). */
int mh_policy_plan(struct pol *p, const struct pol_view *v, uint64_t remaining, double draw, struct mh_policy_obj *o);

/* Remaining bytes from which an unmeasured path may join an object (policy/admit.h). */
#define MH_POLICY_EXPLORE_MIN POL_ADMIT_EXPLORE_MIN

/* May a connection on path i take ranges now? pol_admit_policy with o's plan (none when o is
 * NULL or has no plan). Pure. */
int mh_policy_leg_allowed(const struct pol *p, const struct pol_view *v, const struct mh_policy_obj *o, unsigned i,
                          int primary, uint32_t on, uint64_t missing, uint64_t floor);

/* Connect-time choice (pure): the path a new connection of `size_hint` bytes should be bound
 * to, or -1 to leave it to the kernel: fewer than two usable paths, no choice, or the choice
 * is `kernel` (the path the kernel would take; -1 unknown). *c gets the choice when made. */
int mh_policy_connect_pick(struct pol *p, const struct pol_view *v, uint64_t size_hint, double draw, int kernel,
                           struct pol_choice *c);

/* Connect-time choice for a connection the engine takes over (an HTTP port, splitting on,
 * no intent hint): its first request will be the probe, so the choice is made for the
 * probe's size with every path's load counted (eaf: size / (max_rate / (transfers+1)) plus
 * 2 RTT; threshold: free capacity), not for an unknown size, where the lowest latency wins
 * however many probes already queue there. Exploration, for policies that split: a usable
 * unmetered path with a round trip but no rate yet is predicted at its latency part alone
 * (min SRTT × 1 reused | 2 new: the earliest its probe could arrive) and is taken when that
 * beats the choice's own prediction. A path with no round trip either waits for the
 * engine's extra legs to give it one; when no path is measured at all, pol_choose's cold
 * start (paths in turn) applies. Returns as mh_policy_connect_pick. */
int mh_policy_probe_pick(struct pol *p, const struct pol_view *v, uint64_t probe_size, double draw, int kernel,
                         struct pol_choice *c);

/* Request-time placement of a probe on a connection that already exists (keep-alive reuse:
 * the connect-time pick cannot move it): the path other than `self` (the program's
 * connection's) that the probe should take instead, or -1 to keep it. A move needs
 * mh_policy_probe_pick to choose that path for probe_size with the load counted AND a ready
 * connection there (v->path[j].reusable: a pooled keep-alive connection, no handshake): the
 * program's connection is open already, so a move that pays a handshake could not beat it
 * by a full round trip of the faster path in the cases that matter (measured: probes queued
 * 18-153 ms behind wifi0's own traffic while a warm lte0 connection idled). *c gets the
 * choice when one is made. Never for round-robin (its turn is per object, in the plan). Pure. */
int mh_policy_probe_move(struct pol *p, const struct pol_view *v, int self, uint64_t probe_size, double draw,
                         struct pol_choice *c);

/* Appends the decision as JSON members to buf ("policy":..,"plan":{..},"predictions":[..]),
 * starting with a comma. Returns the new length, or len unchanged when it does not fit. */
size_t mh_policy_json(char *buf, size_t cap, size_t len, const struct pol *p, const struct pol_view *v,
                      const struct mh_policy_obj *o);

#endif
