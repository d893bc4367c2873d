/* A split's planning: the policy's view of the object's paths, the plan made once the size is known, and what each interface carried and was asked (its metrics-store index, counted as carrying the transfer); their state is this file's own. */
#include "split_core.h"
#include "mh_clock.h"
#include "mh_metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

_Static_assert(MH_MAX_IFACES == POL_MAX_IFACES, "asked[] is read as POL_MAX_IFACES paths");

struct mh__path_stats {
  uint64_t bytes; /* body bytes the object used from this interface */
  unsigned chunks;
};

/* Policy (mh_policy.h): the view is rebuilt every tick (mh_split_view.c hands in what it
 * found); the plan is made once, when the probe tells the size (mh_split_drive.c). Made with
 * the split (mh__planning_new), seen by this file only. */
struct mh__planning {
  int planned;
  uint64_t plan_at_us; /* when the plan was made (its predicted_us counts from then) */
  struct pol_view view;
  struct pol_view plan_view; /* the view the plan was made on (stats, logs) */
  struct mh_policy_obj pobj;
  int midx[MH_MAX_IFACES]; /* metrics store index of each interface, -1 */
  uint32_t counted;        /* interfaces counted as carrying this transfer */
  struct mh__path_stats pst[MH_MAX_IFACES];
  uint64_t asked[MH_MAX_IFACES]; /* bytes of the object requested per interface, the probe
                                    excepted */
};

static int mh__iface_ok(int i) { return i >= 0 && i < MH_MAX_IFACES; }

int mh__planning_new(struct mh_split *sp) {
  struct mh__planning *pl = calloc(1, sizeof *pl);
  if (!pl)
    return -ENOMEM;
  for (int i = 0; i < MH_MAX_IFACES; i++)
    pl->midx[i] = i < sp->net.nifaces && sp->net.primary_iface >= 0
                      ? mh_metrics_iface(sp->env->paths->metrics, sp->net.ifaces[i].name)
                      : -1;
  sp->pl = pl;
  return 0;
}

void mh__planning_free(struct mh_split *sp) {
  free(sp->pl);
  sp->pl = NULL;
}

void mh__iface_added(struct mh_split *sp, int i) {
  sp->pl->midx[i] = mh_metrics_iface(sp->env->paths->metrics, sp->net.ifaces[i].name);
}

int mh__iface_metrics(const struct mh_split *sp, int i, struct pol_path *m) {
  return mh_metrics_snapshot(sp->env->paths->metrics, mh__iface_ok(i) ? sp->pl->midx[i] : -1, m);
}

void mh__transfer_count(struct mh_split *sp, int i) {
  struct mh__planning *pl = sp->pl;
  if (mh__iface_ok(i) && !(pl->counted >> i & 1)) {
    pl->counted |= 1u << i; /* paired in mh__transfer_uncount */
    mh_metrics_transfer(sp->env->paths->metrics, pl->midx[i], +1);
  }
}

void mh__transfer_uncount(struct mh_split *sp) {
  for (int i = 0; i < MH_MAX_IFACES; i++)
    if (sp->pl->counted >> i & 1)
      mh_metrics_transfer(sp->env->paths->metrics, sp->pl->midx[i], -1);
}

void mh__path_asked(struct mh_split *sp, int i, int64_t n) {
  if (mh__iface_ok(i))
    sp->pl->asked[i] += (uint64_t)n;
}

void mh__path_body(struct mh_split *sp, int i, uint64_t n) {
  if (mh__iface_ok(i))
    sp->pl->pst[i].bytes += n;
}

void mh__path_chunk(struct mh_split *sp, int i) {
  if (mh__iface_ok(i))
    sp->pl->pst[i].chunks++;
}

void mh__view_set(struct mh_split *sp, const struct pol_path *m, uint32_t usable, uint32_t reusable,
                  const uint64_t *idle_us, const uint64_t *window) {
  struct mh__planning *pl = sp->pl;
  const char *names[MH_MAX_IFACES];
  uint32_t self[MH_MAX_IFACES];
  for (int i = 0; i < sp->net.nifaces; i++) {
    names[i] = sp->net.ifaces[i].name;
    self[i] = pl->counted >> i & 1;
  }
  mh_policy_view(sp->cfg, (unsigned)sp->net.nifaces, names, m, usable, reusable, self, &pl->view);
  for (unsigned i = 0; i < pl->view.n; i++) {
    pl->view.path[i].idle_us = pl->view.path[i].reusable ? idle_us[i] : 0;
    pl->view.path[i].window = pl->view.path[i].reusable ? window[i] : 0;
  }
}

const struct pol_view *mh__view(const struct mh_split *sp) { return &sp->pl->view; }

const struct pol_path *mh__view_path(const struct mh_split *sp, int i) {
  return i >= 0 && (unsigned)i < sp->pl->view.n ? &sp->pl->view.path[i] : NULL;
}

void mh__plan_admit(const struct mh_split *sp, struct pol_admit_obj *o) {
  const struct mh__planning *pl = sp->pl;
  o->view = &pl->view;
  o->plan = pl->planned && sp->net.primary_iface >= 0 && pl->pobj.has_plan ? &pl->pobj.plan : NULL;
  o->plan_at_us = pl->plan_at_us;
  o->counted = pl->counted;
  o->asked = pl->asked;
}

int mh__plan_make(struct mh_split *sp, uint64_t remaining, int busy_i, uint64_t busy) {
  struct mh__planning *pl = sp->pl;
  if (busy_i >= 0 && (unsigned)busy_i < pl->view.n && pl->view.path[busy_i].reusable)
    pl->view.path[busy_i].busy = busy;
  int rc = mh_policy_plan(&sp->env->paths->pol, &pl->view, remaining, mh_policy_draw(), &pl->pobj);
  pl->planned = 1;
  pl->plan_at_us = mh_now_us();
  pl->plan_view = pl->view;
  return rc;
}

int mh__planned(const struct mh_split *sp) { return sp->pl->planned; }

const struct pol_plan *mh__plan_of(const struct mh_split *sp) {
  return sp->pl->planned && sp->pl->pobj.has_plan ? &sp->pl->pobj.plan : NULL;
}

int mh__plan_on(const struct mh_split *sp, int i) {
  const struct pol_plan *p = mh__plan_of(sp);
  return !p || (p->paths >> i & 1);
}

size_t mh__plan_json(const struct mh_split *sp, char *buf, size_t cap, size_t len) {
  const struct mh__planning *pl = sp->pl;
  return pl->planned ? mh_policy_json(buf, cap, len, &sp->env->paths->pol, &pl->plan_view, &pl->pobj) : len;
}

int mh__path_stats_json(const struct mh_split *sp, char *buf, size_t cap, int n) {
  for (int i = 0; i < sp->net.nifaces && n < (int)cap - 200; i++)
    n += snprintf(buf + n, cap - (size_t)n, "%s{\"iface\":\"%s\",\"bytes\":%" PRIu64 ",\"chunks\":%u}", i ? "," : "",
                  sp->net.ifaces[i].name, sp->pl->pst[i].bytes, sp->pl->pst[i].chunks);
  return n;
}
