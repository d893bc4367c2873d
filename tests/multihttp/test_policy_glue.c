/* Policy glue: the new config keys (good and bad values), views from metrics and pool state, per-object plans, leg admission and the connect-time pick on hand-computed links. */
#include <criterion/criterion.h>

#include <string.h>

#include "mh_config.h"
#include "mh_metrics.h"
#include "mh_policy.h"

/* ---- config --------------------------------------------------------------------------- */

#include "fakeenv.h"

/* Sets one environment variable alone and applies the environment; returns the result. */
static int apply1(struct mh_config *c, const char *k, const char *v, char *err, size_t errlen) {
  memset(env_tab, 0, sizeof env_tab);
  set_env(k, v);
  mh_config_defaults(c);
  err[0] = 0;
  return mh_config_apply_env(c, fake_getenv, err, errlen);
}

Test(policy_config, defaults) {
  struct mh_config c;
  mh_config_defaults(&c);
  cr_assert_eq(c.pol.kind, POL_EAF);
  cr_assert_float_eq(c.pol.metered_gain, 0.2, 1e-12);
  cr_assert_float_eq(c.pol.split_gain, 0.05, 1e-12);
  cr_assert_eq(c.intent_hint, POL_SIZE_UNKNOWN);
  cr_assert_str_eq(c.metered, "");
  cr_assert_str_eq(c.metrics, "");
}

/* A configured init_chunk is the user's probe size: the engine keeps it fixed
 * (mh__probe_size); left unset, the probe is sized per path (pol_probe_size). */
Test(policy_config, init_chunk_configured_is_marked) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(&c);
  cr_assert_eq(c.init_chunk, 32 * 1024);
  cr_assert(!c.init_chunk_set);
  cr_assert_eq(apply1(&c, "MHTTP_INIT_CHUNK", "16k", err, sizeof err), 0, "%s", err);
  cr_assert_eq(c.init_chunk, 16 * 1024);
  cr_assert(c.init_chunk_set);
  cr_assert_eq(apply1(&c, "MHTTP_INIT_CHUNK", "12", err, sizeof err), -1); /* below 1 KiB */
  cr_assert_eq(apply1(&c, "MHTTP_WINDOW", "64M", err, sizeof err), 0, "%s", err);
  cr_assert(!c.init_chunk_set);
}

Test(policy_config, good_values_from_env) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  cr_assert_eq(apply1(&c, "MHTTP_POLICY", "single:lte0", err, sizeof err), 0, "%s", err);
  cr_assert_eq(c.pol.kind, POL_SINGLE);
  cr_assert_str_eq(c.pol.single_if, "lte0");
  cr_assert_eq(apply1(&c, "MHTTP_POLICY", "threshold", err, sizeof err), 0);
  cr_assert_eq(c.pol.kind, POL_THRESHOLD);
  cr_assert_eq(apply1(&c, "MHTTP_METERED_GAIN", "30%", err, sizeof err), 0);
  cr_assert_float_eq(c.pol.metered_gain, 0.3, 1e-12);
  cr_assert_eq(apply1(&c, "MHTTP_SPLIT_GAIN", "0.1", err, sizeof err), 0);
  cr_assert_float_eq(c.pol.split_gain, 0.1, 1e-12);
  cr_assert_eq(apply1(&c, "MHTTP_INTENT_SIZE", "64k", err, sizeof err), 0);
  cr_assert_eq(c.intent_hint, 65536);
  cr_assert_eq(apply1(&c, "MHTTP_INTENT_CATEGORY", "bulk", err, sizeof err), 0);
  cr_assert_eq(c.intent_hint, POL_SIZE_BULK);
  cr_assert_eq(apply1(&c, "MHTTP_METRICS", "/tmp/m.json", err, sizeof err), 0);
  cr_assert_str_eq(c.metrics, "/tmp/m.json");
  cr_assert_eq(apply1(&c, "MHTTP_METERED", "lte0,sat0", err, sizeof err), 0);
  cr_assert(mh_config_metered(&c, "lte0"));
  cr_assert(mh_config_metered(&c, "sat0"));
  cr_assert(!mh_config_metered(&c, "lte")); /* whole names only */
  cr_assert(!mh_config_metered(&c, "wifi0"));
}

Test(policy_config, explicit_size_wins_over_category_either_order) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  mh_config_defaults(&c);
  cr_assert_eq(mh_config_set(&c, "intent_category", "bulk", "t", err, sizeof err), 0);
  cr_assert_eq(mh_config_set(&c, "intent_size", "1k", "t", err, sizeof err), 0);
  cr_assert_eq(c.intent_hint, 1024);
  mh_config_defaults(&c);
  cr_assert_eq(mh_config_set(&c, "intent_size", "1k", "t", err, sizeof err), 0);
  cr_assert_eq(mh_config_set(&c, "intent_category", "stream", "t", err, sizeof err), 0);
  cr_assert_eq(c.intent_hint, 1024);
  mh_config_defaults(&c);
  cr_assert_eq(mh_config_set(&c, "intent_category", "query", "t", err, sizeof err), 0);
  cr_assert_eq(c.intent_hint, POL_SIZE_UNKNOWN);
}

Test(policy_config, bad_values_name_the_variable_and_change_nothing) {
  static const struct {
    const char *env, *val, *want;
  } bad[] = {
      {"MHTTP_POLICY", "fastest", "MHTTP_POLICY: policy: unknown policy 'fastest'"},
      {"MHTTP_POLICY", "single:", "MHTTP_POLICY: policy: policy 'single:' needs"},
      {"MHTTP_METERED", "lte0,,wifi0", "MHTTP_METERED: metered: bad value"},
      {"MHTTP_METERED", "a very long name", "MHTTP_METERED: metered: bad value"},
      {"MHTTP_METERED_GAIN", "1.5", "MHTTP_METERED_GAIN: metered_gain"},
      {"MHTTP_SPLIT_GAIN", "-1", "MHTTP_SPLIT_GAIN: split_gain"},
      {"MHTTP_SPLIT_GAIN", "abc", "MHTTP_SPLIT_GAIN: split_gain"},
      {"MHTTP_INTENT_SIZE", "12q", "MHTTP_INTENT_SIZE: intent_size"},
      {"MHTTP_INTENT_CATEGORY", "huge", "MHTTP_INTENT_CATEGORY: intent_category"},
      {"MHTTP_METRICS", "", "MHTTP_METRICS: metrics: bad value"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct mh_config c, d;
    char err[MH_CONFIG_ERR_MAX];
    cr_assert_eq(apply1(&c, bad[i].env, bad[i].val, err, sizeof err), -1, "%s=%s accepted", bad[i].env, bad[i].val);
    cr_assert(!strncmp(err, bad[i].want, strlen(bad[i].want)), "%s=%s: '%s'", bad[i].env, bad[i].val, err);
    mh_config_defaults(&d);
    cr_assert(!memcmp(&c.pol, &d.pol, sizeof c.pol), "%s: policy changed", bad[i].env);
    cr_assert_eq(c.intent_hint, d.intent_hint);
    cr_assert_str_eq(c.metered, "");
  }
}

Test(policy_config, file_keys_are_lowercase) {
  struct mh_config c;
  char err[MH_CONFIG_ERR_MAX];
  const char *text = "policy = round-robin\nmetered = lte0\nsplit_gain = 10%\nmetrics = /tmp/x\n";
  mh_config_defaults(&c);
  cr_assert_eq(mh_config_parse_text(&c, text, strlen(text), "f", err, sizeof err), 0, "%s", err);
  cr_assert_eq(c.pol.kind, POL_ROUND_ROBIN);
  cr_assert(mh_config_metered(&c, "lte0"));
  cr_assert_float_eq(c.pol.split_gain, 0.1, 1e-12);
  const char *bad = "policy = fastest\n";
  mh_config_defaults(&c);
  cr_assert_eq(mh_config_parse_text(&c, bad, strlen(bad), "f", err, sizeof err), -1);
  cr_assert(strstr(err, "f:1: policy: unknown policy"), "%s", err);
}

/* ---- the asymmetric links of the papers: wifi0 10 ms / 2 Mbit, lte0 100 ms / 20 Mbit ---- */

static const char *const names[2] = {"wifi0", "lte0"};

/* Metric fields as the store would give them after traffic on both links. */
static void asym_metrics(struct pol_path m[2]) {
  memset(m, 0, 2 * sizeof *m);
  m[0] = (struct pol_path){.srtt_min_us = 10000, .srtt_med_us = 10000, .max_rate = 250000};
  m[1] = (struct pol_path){.srtt_min_us = 100000, .srtt_med_us = 100000, .max_rate = 2500000};
}

static struct pol mkpol(enum pol_kind k, const char *single) {
  struct pol_config cfg;
  pol_config_default(&cfg);
  cfg.kind = k;
  if (single)
    strcpy(cfg.single_if, single);
  struct pol p;
  cr_assert_eq(pol_init(&p, &cfg), 0);
  return p;
}

Test(policy_view, metrics_pool_metered_and_own_transfer) {
  struct mh_config c;
  mh_config_defaults(&c);
  strcpy(c.metered, "lte0");
  struct pol_path m[2];
  asym_metrics(m);
  m[0].transfers = 3;
  m[1].transfers = 0;
  m[0].conns = 2;
  /* a snapshot carries no connection state: whatever it holds there is not taken */
  m[1].idle_us = 123, m[1].window = 4567, m[1].busy = 89;
  uint32_t self[2] = {1, 1}; /* this object counts itself on both (it cannot go below 0) */
  struct pol_view v;
  mh_policy_view(&c, 2, names, m, 0x3, 0x2, self, &v);
  cr_assert(!v.path[1].idle_us && !v.path[1].window && !v.path[1].busy);
  cr_assert_eq(v.n, 2);
  cr_assert_str_eq(v.path[0].name, "wifi0");
  cr_assert(v.path[0].usable && v.path[1].usable);
  cr_assert(!v.path[0].reusable && v.path[1].reusable);
  cr_assert(!v.path[0].metered && v.path[1].metered);
  cr_assert_eq(v.path[0].transfers, 2);
  cr_assert_eq(v.path[1].transfers, 0);
  cr_assert_eq(v.path[0].conns, 2);
  cr_assert_eq(v.path[0].srtt_min_us, 10000);
  cr_assert_float_eq(v.path[1].max_rate, 2500000, 1e-9);
  mh_policy_view(&c, 2, names, NULL, 0x1, 0, NULL, &v); /* nothing measured, lte0 unusable */
  cr_assert(v.path[0].usable && !v.path[1].usable);
  cr_assert_eq(v.path[0].max_rate, 0);
}

/* A rate from objects smaller than one initial window per bucket is no measurement: the
 * view carries it as unmeasured (asym: 1 KiB objects read 13 170 B/s on lte0). */
Test(policy_view, untrusted_rate_is_unmeasured) {
  struct mh_config c;
  mh_config_defaults(&c);
  struct pol_path m[2];
  asym_metrics(m);
  m[1].max_rate = 13170;
  struct pol_view v;
  mh_policy_view(&c, 2, names, m, 0x3, 0, NULL, &v);
  cr_assert_float_eq(v.path[0].max_rate, 250000, 1e-9);
  cr_assert_eq(v.path[1].max_rate, 0);
  cr_assert_eq(v.path[1].srtt_min_us, 100000); /* the RTT stays */
  m[1].max_rate = 146000;
  mh_policy_view(&c, 2, names, m, 0x3, 0, NULL, &v);
  cr_assert_float_eq(v.path[1].max_rate, 146000, 1e-9);
}

static struct pol_view asym_view(uint32_t reusable) {
  struct mh_config c;
  mh_config_defaults(&c);
  struct pol_path m[2];
  asym_metrics(m);
  struct pol_view v;
  mh_policy_view(&c, 2, names, m, 0x3, reusable, NULL, &v);
  return v;
}

Test(policy_plan, small_object_stays_on_the_short_link) {
  /* EAF, new connections: wifi0 1024/250000 s + 2·10 ms = 24 096 µs; lte0 409.6 + 200 000 */
  struct pol p = mkpol(POL_EAF, NULL);
  struct pol_view v = asym_view(0);
  struct mh_policy_obj o;
  cr_assert_eq(mh_policy_plan(&p, &v, 1024, 0.5, &o), 0);
  cr_assert(o.has_plan);
  cr_assert_eq(o.plan.primary.iface, 0);
  cr_assert_eq(o.plan.paths, 0x1);
  cr_assert_float_eq(o.pred_us[0], 24096, 0.5);
  cr_assert_float_eq(o.pred_us[1], 200409.6, 0.5);
}

Test(policy_plan, large_object_goes_wide_and_splits) {
  /* 1 MiB: wifi0 4 194 304 + 20 000 µs; lte0 419 430.4 + 200 000 = 619 430.4 µs: lte0 first,
   * and wifi0 (streaming 250 kB/s from 20 ms on) still cuts the plan by more than 5 % */
  struct pol p = mkpol(POL_EAF, NULL);
  struct pol_view v = asym_view(0);
  struct mh_policy_obj o;
  cr_assert_eq(mh_policy_plan(&p, &v, 1 << 20, 0.5, &o), 0);
  cr_assert(o.has_plan);
  cr_assert_eq(o.plan.primary.iface, 1);
  cr_assert_float_eq(o.plan.primary.predicted_us, 619430.4, 0.5);
  cr_assert_eq(o.plan.paths, 0x3);
  /* the plan's own delivery model: both paths beat lte0 alone by at least split_gain */
  struct pol_view alone = v;
  alone.path[0].usable = false;
  struct mh_policy_obj a;
  cr_assert_eq(mh_policy_plan(&p, &alone, 1 << 20, 0.5, &a), 0);
  cr_assert_eq(a.plan.paths, 0x2);
  cr_assert_leq(o.plan.predicted_us, 0.95 * a.plan.predicted_us);
}

Test(policy_plan, reuse_beats_a_new_connection) {
  /* 30 000 B: new lte0 12 000 + 200 000 = 212 000 µs loses to wifi0 120 000 + 20 000; an idle
   * lte0 connection makes it 12 000 + 100 000 = 112 000 µs and wins (crossover 22 222 B) */
  struct pol p = mkpol(POL_EAF, NULL);
  struct mh_policy_obj o;
  struct pol_view v = asym_view(0);
  cr_assert_eq(mh_policy_plan(&p, &v, 30000, 0.5, &o), 0);
  cr_assert_eq(o.plan.primary.iface, 0);
  v = asym_view(0x2);
  cr_assert_eq(mh_policy_plan(&p, &v, 30000, 0.5, &o), 0);
  cr_assert_eq(o.plan.primary.iface, 1);
  cr_assert(o.plan.primary.reuse);
  cr_assert_float_eq(o.plan.primary.predicted_us, 112000, 0.5);
  v = asym_view(0x2);
  cr_assert_eq(mh_policy_plan(&p, &v, 20000, 0.5, &o), 0); /* below the crossover */
  cr_assert_eq(o.plan.primary.iface, 0);
}

Test(policy_plan, no_rate_known_means_no_plan_but_single_always_plans) {
  struct mh_config c;
  mh_config_defaults(&c);
  struct pol_path m[2] = {{.srtt_min_us = 10000}, {.srtt_min_us = 5000}};
  struct pol_view v;
  mh_policy_view(&c, 2, names, m, 0x3, 0, NULL, &v);
  struct pol p = mkpol(POL_EAF, NULL);
  struct mh_policy_obj o;
  cr_assert_eq(mh_policy_plan(&p, &v, 1 << 20, 0.5, &o), 0);
  cr_assert(!o.has_plan); /* lowest latency is no evidence for 1 MiB: engine's own rule */
  struct pol s = mkpol(POL_SINGLE, "lte0");
  cr_assert_eq(mh_policy_plan(&s, &v, 1 << 20, 0.5, &o), 0);
  cr_assert(o.has_plan);
  cr_assert_eq(o.plan.primary.iface, 1);
  cr_assert_eq(o.plan.paths, 0x2);
  struct pol bad = mkpol(POL_SINGLE, "eth9");
  cr_assert_eq(mh_policy_plan(&bad, &v, 1 << 20, 0.5, &o), -ENODEV);
  cr_assert(!o.has_plan);
}

/* ---- which legs may take ranges ------------------------------------------------------- */

#define FLOOR (256 * 1024)

Test(policy_legs, without_plan_the_engine_rule) {
  struct pol p = mkpol(POL_EAF, NULL);
  struct pol_view v = asym_view(0);
  cr_assert(mh_policy_leg_allowed(&p, &v, NULL, 0, 1, 0, 1000, FLOOR));
  cr_assert(!mh_policy_leg_allowed(&p, &v, NULL, 1, 0, 0, FLOOR - 1, FLOOR));
  cr_assert(mh_policy_leg_allowed(&p, &v, NULL, 1, 0, 0, FLOOR, FLOOR));
}

Test(policy_legs, single_elsewhere_stops_the_program_connection) {
  struct pol p = mkpol(POL_SINGLE, "lte0");
  struct pol_view v = asym_view(0x1);
  struct mh_policy_obj o;
  cr_assert_eq(mh_policy_plan(&p, &v, 4 << 20, 0.5, &o), 0);
  cr_assert(!mh_policy_leg_allowed(&p, &v, &o, 0, 1, 0x2, 4 << 20, FLOOR)); /* program's, wifi0 */
  cr_assert(mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x2, 1000, FLOOR));     /* lte0: any size */
  struct pol_view v3 = asym_view(0);
  v3.n = 3;
  v3.path[2] = v3.path[1];
  v3.path[2].name = "eth0";
  cr_assert(!mh_policy_leg_allowed(&p, &v3, &o, 2, 0, 0x2, 4 << 20, FLOOR)); /* never splits */
}

Test(policy_legs, eaf_plan_extras_floor_and_exploring) {
  struct pol p = mkpol(POL_EAF, NULL);
  struct pol_view v = asym_view(0x1);
  struct mh_policy_obj o;
  cr_assert_eq(mh_policy_plan(&p, &v, 1024, 0.5, &o), 0); /* 1 KiB: wifi0 only */
  cr_assert_eq(o.plan.paths, 0x1);
  cr_assert(mh_policy_leg_allowed(&p, &v, &o, 0, 1, 0x1, 1024, FLOOR));
  cr_assert(!mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, 1024, FLOOR)); /* below the floor */
  /* above the floor, a measured lte0 not in the plan must pass pol_worth_adding: 4 MiB left
   * on wifi0 (16.8 s) is cut by far with lte0 */
  cr_assert(mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, 4 << 20, FLOOR));
  /* unmeasured lte0 explores above the floor, unless metered */
  v.path[1].max_rate = 0;
  v.path[1].srtt_min_us = v.path[1].srtt_med_us = 0;
  cr_assert(mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, FLOOR, FLOOR));
  v.path[1].metered = true;
  cr_assert(!mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, FLOOR, FLOOR));
}

Test(policy_legs, worth_adding_refuses_a_path_that_gains_nothing) {
  /* 300 KiB left on lte0 (streaming 2.5 MB/s: 123 ms); a new wifi0 connection brings 250 kB/s
   * after 20 ms plus slow start: completion drops under 5 %? compute with pol_worth_adding */
  struct pol p = mkpol(POL_EAF, NULL);
  struct pol_view v = asym_view(0x2);
  struct mh_policy_obj o;
  cr_assert_eq(mh_policy_plan(&p, &v, 300 * 1024, 0.5, &o), 0);
  cr_assert_eq(o.plan.primary.iface, 1);
  struct pol_gain g;
  cr_assert_eq(pol_worth_adding(&p, &v, 0x2, 0, 300 * 1024, &g), 0);
  int allowed = mh_policy_leg_allowed(&p, &v, &o, 0, 0, 0x2, 300 * 1024, FLOOR);
  cr_assert_eq(allowed, ((o.plan.paths & 1) || g.worth), "the glue follows the plan and the model");
  v.path[0].metered = true; /* metered: 20 % gain needed, which wifi0 cannot bring here */
  cr_assert_eq(pol_worth_adding(&p, &v, 0x2, 0, 300 * 1024, &g), 0);
  cr_assert(!g.worth);
}

/* Exploration: an unmeasured, unmetered path joins from MH_POLICY_EXPLORE_MIN (64 KiB)
 * missing, below the floor; a measured one still waits for the floor. */
Test(policy_legs, unmeasured_path_explores_from_64k) {
  struct pol p = mkpol(POL_EAF, NULL);
  struct pol_view v = asym_view(0x1);
  struct mh_policy_obj o;
  v.path[1].max_rate = 0; /* lte0: a handshake RTT, no rate: only wifi0 predicts */
  cr_assert_eq(mh_policy_plan(&p, &v, 96 * 1024, 0.5, &o), 0);
  cr_assert(o.has_plan);
  cr_assert_eq(o.plan.primary.iface, 0);
  cr_assert_eq(o.plan.paths, 0x1);
  cr_assert(mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, 65536, FLOOR));
  cr_assert(!mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, 65535, FLOOR));
  /* a floor below 64 KiB is the user's: exploring follows it down */
  cr_assert(mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, 32768, 32768));
  cr_assert(!mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, 32767, 32768));
  /* measured lte0 at 96 KiB: below the floor, not explored */
  struct pol_view m = asym_view(0x1);
  cr_assert(!mh_policy_leg_allowed(&p, &m, &o, 1, 0, 0x1, 96 * 1024, FLOOR));
  /* metered: never explored */
  v.path[1].metered = true;
  cr_assert(!mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, 96 * 1024, FLOOR));
  v.path[1].metered = false;
  /* without a plan (the primary had no prediction) the same rule */
  cr_assert(mh_policy_leg_allowed(&p, &v, NULL, 1, 0, 0, 65536, FLOOR));
  cr_assert(!mh_policy_leg_allowed(&p, &v, NULL, 1, 0, 0, 65535, FLOOR));
  /* round-robin never adds a path */
  struct pol rr = mkpol(POL_ROUND_ROBIN, NULL);
  cr_assert_eq(mh_policy_plan(&rr, &v, 100 * 1024, 0.5, &o), 0);
  unsigned other = o.plan.primary.iface == 0 ? 1 : 0;
  cr_assert(!mh_policy_leg_allowed(&rr, &v, &o, other, 0, 1u << o.plan.primary.iface, 96 * 1024, FLOOR));
}

/* ---- connect-time choice -------------------------------------------------------------- */

Test(policy_connect, latency_wins_and_never_rebinds_the_kernel_choice) {
  struct pol p = mkpol(POL_EAF, NULL);
  struct pol_view v = asym_view(0);
  struct pol_choice c;
  /* unknown size: wifi0's 20 ms beats lte0's 200 ms */
  cr_assert_eq(mh_policy_connect_pick(&p, &v, POL_SIZE_UNKNOWN, 0.5, 1, &c), 0);
  cr_assert_eq(mh_policy_connect_pick(&p, &v, POL_SIZE_UNKNOWN, 0.5, 0, &c), -1); /* kernel's */
  /* a bulk hint: lte0 */
  cr_assert_eq(mh_policy_connect_pick(&p, &v, POL_SIZE_BULK, 0.5, 0, &c), 1);
  cr_assert_eq(c.iface, 1);
  /* one usable interface: nothing to choose */
  v.path[1].usable = false;
  cr_assert_eq(mh_policy_connect_pick(&p, &v, POL_SIZE_BULK, 0.5, -1, &c), -1);
}

Test(policy_connect, single_and_metered) {
  struct pol s = mkpol(POL_SINGLE, "lte0");
  struct pol_view v = asym_view(0);
  struct pol_choice c;
  cr_assert_eq(mh_policy_connect_pick(&s, &v, POL_SIZE_UNKNOWN, 0.5, 0, &c), 1);
  struct pol p = mkpol(POL_EAF, NULL);
  v.path[1].metered = true;
  /* 1 MiB: lte0 619 ms vs wifi0 4214 ms: far past the 20 % gate */
  cr_assert_eq(mh_policy_connect_pick(&p, &v, 1 << 20, 0.5, 0, &c), 1);
  /* 60 000 B: lte0 224 ms vs wifi0 260 ms: faster but not by 20 %: stays on wifi0 */
  cr_assert_eq(mh_policy_connect_pick(&p, &v, 60000, 0.5, 1, &c), 0);
  cr_assert_eq(mh_policy_connect_pick(&p, &v, 60000, 0.5, 0, &c), -1);
}

/* The probe's size with the load counted (asym, P = 14 600 B, new connections):
 * eaf wifi0 = 20 000 + 14 600·(t+1)·4 = 20 000 + 58 400·(t+1) µs,
 *     lte0  = 200 000 + 14 600·(t+1)·0.4 = 200 000 + 5 840·(t+1) µs.
 * t = 2 on wifi0: 195 200 vs 205 840, wifi0; t = 3: 253 600, lte0. An unknown size says
 * wifi0 (20 ms) however loaded it is. */
Test(policy_connect, probe_size_counts_the_load) {
  struct pol p = mkpol(POL_EAF, NULL);
  struct pol_view v = asym_view(0);
  struct pol_choice c;
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, -1, &c), 0);
  cr_assert_float_eq(c.predicted_us, 78400, 1e-6);
  v.path[0].transfers = 2;
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, -1, &c), 0);
  cr_assert_float_eq(c.predicted_us, 195200, 1e-6);
  v.path[0].transfers = 3;
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, -1, &c), 1);
  cr_assert_float_eq(c.predicted_us, 205840, 1e-6);
  cr_assert_eq(mh_policy_connect_pick(&p, &v, POL_SIZE_UNKNOWN, 0.5, -1, &c), 0);
  /* threshold: wifi0 with 3 busy connections (cur = max: usage 1) has 62 500 B/s free;
   * 14 600 B take 233 600 µs there > its 20 ms latency part, so capacity counts:
   * wifi0 10 000 + 10 000 + 233 600 = 253 600 vs lte0 100 000 + 100 000 + 5 840 = 205 840 */
  struct pol t = mkpol(POL_THRESHOLD, NULL);
  v = asym_view(0);
  cr_assert_eq(mh_policy_probe_pick(&t, &v, 14600, 0.5, -1, &c), 0); /* idle: 78 400 */
  v.path[0].conns = 3;
  v.path[0].cur_rate = 250000;
  cr_assert_eq(mh_policy_probe_pick(&t, &v, 14600, 0.5, -1, &c), 1);
  cr_assert_float_eq(c.predicted_us, 205840, 1e-6);
}

/* lte0 with a handshake RTT (100 ms) but no rate: predicted at its latency part, 200 000 µs,
 * and taken once that beats wifi0's load-counted probe (t = 3: 253 600). Without an RTT,
 * or metered, never; round-robin keeps its own turn. */
Test(policy_connect, probe_explores_an_unmeasured_path_when_it_cannot_lose) {
  struct pol p = mkpol(POL_EAF, NULL);
  struct pol_view v = asym_view(0);
  v.path[1].max_rate = 0;
  struct pol_choice c;
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, -1, &c), 0); /* 78 400 < 200 000 */
  v.path[0].transfers = 2;
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, -1, &c), 0); /* 195 200 */
  v.path[0].transfers = 3;
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, -1, &c), 1); /* 253 600 */
  cr_assert_float_eq(c.predicted_us, 200000, 1e-6);
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, 1, &c), -1); /* the kernel's own */
  cr_assert_eq(c.iface, 1);
  v.path[1].reusable = true; /* an idle connection: 1 RTT, taken from t = 1 (136 800) */
  v.path[0].transfers = 1;
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, -1, &c), 1);
  v.path[1].reusable = false;
  v.path[0].transfers = 3;
  v.path[1].metered = true;
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, -1, &c), 0);
  v.path[1].metered = false;
  v.path[1].srtt_min_us = v.path[1].srtt_med_us = 0; /* never connected: no RTT */
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, -1, &c), 0);
  /* nothing measured anywhere: the cold start's turn (wifi0, lte0, wifi0) */
  v = asym_view(0);
  for (int i = 0; i < 2; i++)
    v.path[i].max_rate = 0, v.path[i].srtt_min_us = v.path[i].srtt_med_us = 0;
  p.rr_next = 0;
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, -1, &c), 0);
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, -1, &c), 1);
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, -1, &c), 0);
  /* round-robin: its own turn, no exploring */
  struct pol rr = mkpol(POL_ROUND_ROBIN, NULL);
  v = asym_view(0);
  v.path[1].max_rate = 0;
  int a0 = mh_policy_probe_pick(&rr, &v, 14600, 0.5, -1, &c);
  int a1 = mh_policy_probe_pick(&rr, &v, 14600, 0.5, -1, &c);
  cr_assert(a0 != a1);
}

/* Request-time placement (mh_split.c, mh__probe_move): the program's keep-alive connection
 * on wifi0 (reusable, self = 0) carries 3 other transfers. eaf for the 14 600 B probe:
 * wifi0 reused 10 000 + 58 400·4 = 243 600 µs; lte0 new 200 000 + 5 840 = 205 840 (picked,
 * but a move must not pay a handshake: stays); lte0 pooled 100 000 + 5 840 = 105 840: moves.
 * Unloaded wifi0 (68 400) keeps it, and so does a pick of the program's own path. */
Test(policy_connect, probe_moves_only_to_a_ready_connection_on_the_picked_path) {
  struct pol p = mkpol(POL_EAF, NULL);
  struct pol_view v = asym_view(0x1);
  struct pol_choice c;
  v.path[0].transfers = 3;
  cr_assert_eq(mh_policy_probe_pick(&p, &v, 14600, 0.5, 0, &c), 1);  /* the pick alone */
  cr_assert_eq(mh_policy_probe_move(&p, &v, 0, 14600, 0.5, &c), -1); /* no pooled lte0 */
  v = asym_view(0x3);
  v.path[0].transfers = 3;
  cr_assert_eq(mh_policy_probe_move(&p, &v, 0, 14600, 0.5, &c), 1);
  cr_assert_eq(c.iface, 1);
  cr_assert_float_eq(c.predicted_us, 105840, 1e-6);
  v.path[0].transfers = 0;
  cr_assert_eq(mh_policy_probe_move(&p, &v, 0, 14600, 0.5, &c), -1); /* 68 400: wifi0 */
  /* the program's connection on lte0: its own path, nothing to move */
  v.path[0].transfers = 3;
  cr_assert_eq(mh_policy_probe_move(&p, &v, 1, 14600, 0.5, &c), -1);
  /* a path that went down is no place for it; nor is a bad self index */
  v.path[1].usable = false;
  cr_assert_eq(mh_policy_probe_move(&p, &v, 0, 14600, 0.5, &c), -1);
  v.path[1].usable = true;
  cr_assert_eq(mh_policy_probe_move(&p, &v, -1, 14600, 0.5, &c), -1);
  cr_assert_eq(mh_policy_probe_move(&p, &v, 7, 14600, 0.5, &c), -1);
  /* single:lte0 moves whatever the load; single:wifi0 never */
  struct pol s1 = mkpol(POL_SINGLE, "lte0"), s0 = mkpol(POL_SINGLE, "wifi0");
  v.path[0].transfers = 0;
  cr_assert_eq(mh_policy_probe_move(&s1, &v, 0, 14600, 0.5, &c), 1);
  cr_assert_eq(mh_policy_probe_move(&s0, &v, 0, 14600, 0.5, &c), -1);
  /* round-robin: its turn is the plan's, per object */
  struct pol rr = mkpol(POL_ROUND_ROBIN, NULL);
  for (int k = 0; k < 4; k++)
    cr_assert_eq(mh_policy_probe_move(&rr, &v, 0, 14600, 0.5, &c), -1);
}

/* ---- outputs -------------------------------------------------------------------------- */

Test(policy_out, metrics_line_has_exactly_the_keys) {
  struct pol_path m = {
      .srtt_min_us = 10180, .srtt_med_us = 10500, .max_rate = 2500000.4, .cur_rate = 1000, .transfers = 1, .conns = 2};
  char buf[512];
  int n = mh_metrics_format(buf, sizeof buf, 42, "wifi0", &m);
  cr_assert_gt(n, 0);
  cr_assert_str_eq(buf, "{\"metrics\":1,\"pid\":42,\"iface\":\"wifi0\",\"srtt_min_us\":10180,"
                        "\"srtt_med_us\":10500,\"max_rate_Bps\":2500000,\"cur_rate_Bps\":1000,"
                        "\"transfers\":1,\"conns\":2}\n");
  cr_assert_eq(mh_metrics_format(buf, 20, 42, "wifi0", &m), -1);
}

Test(policy_out, stats_members) {
  struct pol p = mkpol(POL_EAF, NULL);
  struct pol_view v = asym_view(0);
  struct mh_policy_obj o;
  cr_assert_eq(mh_policy_plan(&p, &v, 1024, 0.5, &o), 0);
  char buf[2048] = "{\"a\":1";
  size_t n = mh_policy_json(buf, sizeof buf, strlen(buf), &p, &v, &o);
  cr_assert_gt(n, 6);
  cr_assert(strstr(buf, ",\"policy\":\"eaf\",\"plan\":{\"primary\":\"wifi0\",\"paths\":[\"wifi0\"],"), "%s", buf);
  cr_assert(strstr(buf, "{\"iface\":\"lte0\",\"pred_us\":200410,"), "%s", buf);
  char small[16] = "x";
  cr_assert_eq(mh_policy_json(small, sizeof small, 1, &p, &v, &o), 1); /* does not fit: unchanged */
  cr_assert_str_eq(small, "x");
}

/* A path of the plan below the floor joins only while it still pays off for the bytes left:
 * wifi0 (10 ms, reused, window open) carries a 100 KiB object; lte0's pooled connection has
 * been idle 1 s (slow start again). The plan takes both. 58 600 B missing: wifi0 alone
 * 234 400 µs; with lte0 (14 600 B in [100 000, 105 840]) 0.25·t + 14 600 = 58 600 →
 * 176 000: worth it. 10 000 B missing: lte0 delivers nothing before wifi0 is done. */
Test(policy_legs, planned_path_below_the_floor_joins_while_it_pays) {
  struct pol p = mkpol(POL_EAF, NULL);
  struct pol_view v = asym_view(0x3);
  v.path[1].idle_us = 1000000;
  struct mh_policy_obj o;
  cr_assert_eq(mh_policy_plan(&p, &v, 87800, 0.5, &o), 0);
  cr_assert(o.has_plan);
  cr_assert_eq(o.plan.paths, 0x3);
  unsigned extra = o.plan.primary.iface == 0 ? 1 : 0;
  uint32_t on = 1u << o.plan.primary.iface;
  cr_assert_eq(extra, 0, "EAF ranks wifi0 second here (lte0 %.0f us)", o.pred_us[1]);
  /* lte0 is the primary (always allowed); wifi0, the extra path, streams at once */
  cr_assert(mh_policy_leg_allowed(&p, &v, &o, 1, 0, on, 1000, FLOOR));
  cr_assert(mh_policy_leg_allowed(&p, &v, &o, 0, 1, on, 58600, FLOOR));
  /* swap roles: wifi0 primary (as after the plan in the engine), lte0 the planned extra */
  o.plan.primary.iface = 0;
  cr_assert(mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, 58600, FLOOR));
  cr_assert(!mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, 10000, FLOOR));
  cr_assert(mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, FLOOR, FLOOR)); /* floor: as before */
  /* not in the plan: the floor holds */
  o.plan.paths = 0x1;
  cr_assert(!mh_policy_leg_allowed(&p, &v, &o, 1, 0, 0x1, 58600, FLOOR));
}
