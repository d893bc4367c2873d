/* Configuration strings: MHTTP_POLICY, gains, MHTTP_INTENT_SIZE / MHTTP_INTENT_CATEGORY, pol_init checks. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "policy/policy.h"

Test(parse, every_policy_name) {
  static const struct {
    const char *spec;
    enum pol_kind kind;
  } rows[] = {
      {"round-robin", POL_ROUND_ROBIN}, {"eaf", POL_EAF}, {"threshold", POL_THRESHOLD}, {"biased", POL_BIASED},
      {"single:wlan0", POL_SINGLE},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    struct pol_config cfg;
    pol_config_default(&cfg);
    cfg.kind = POL_SINGLE; /* so that a parse that does nothing fails for eaf too */
    char err[128] = "";
    cr_assert_eq(pol_parse(rows[i].spec, &cfg, err, sizeof(err)), 0, "%s: %s", rows[i].spec, err);
    cr_assert_eq(cfg.kind, rows[i].kind, "%s", rows[i].spec);
    struct pol p;
    cr_assert_eq(pol_init(&p, &cfg), 0, "%s", rows[i].spec);
  }
  struct pol_config cfg;
  pol_config_default(&cfg);
  cr_assert_eq(pol_parse("single:wlan0", &cfg, NULL, 0), 0);
  cr_assert_str_eq(cfg.single_if, "wlan0");
  /* Another policy leaves no interface name behind. */
  cr_assert_eq(pol_parse("threshold", &cfg, NULL, 0), 0);
  cr_assert_str_eq(cfg.single_if, "");
}

Test(parse, unset_keeps_the_default) {
  struct pol_config cfg;
  pol_config_default(&cfg);
  cr_assert_eq(cfg.kind, POL_EAF);
  cr_assert_eq(cfg.init_window, 14600);
  cr_assert_eq(pol_parse(NULL, &cfg, NULL, 0), 0);
  cr_assert_eq(pol_parse("", &cfg, NULL, 0), 0);
  cr_assert_eq(cfg.kind, POL_EAF);
}

Test(parse, bad_values_say_why_in_one_line) {
  static const struct {
    const char *spec;
    const char *needle;
  } rows[] = {
      {"fastest", "unknown policy 'fastest'"},
      {"EAF", "unknown policy 'EAF'"},
      {"eaf ", "unknown policy 'eaf '"},
      {"single:", "needs an interface name"},
      {"single:averyveryverylongname", "longer than 15"},
      {"single:a/b", "not an interface name"},
      {"round robin", "expected single:IF, round-robin, eaf, threshold or biased"},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    struct pol_config cfg;
    pol_config_default(&cfg);
    char err[160] = "";
    cr_assert_eq(pol_parse(rows[i].spec, &cfg, err, sizeof(err)), -EINVAL, "%s", rows[i].spec);
    cr_assert(strstr(err, rows[i].needle), "%s: %s", rows[i].spec, err);
    cr_assert_null(strchr(err, '\n'));
    cr_assert_eq(cfg.kind, POL_EAF, "a failed parse changes nothing");
  }
  /* A short buffer is truncated, never overrun; NULL err is fine. */
  char small[8];
  memset(small, 'x', sizeof(small));
  cr_assert_eq(pol_parse("fastest", &(struct pol_config){0}, small, sizeof(small)), -EINVAL);
  cr_assert_eq(strlen(small), 7);
  cr_assert_eq(pol_parse("fastest", &(struct pol_config){0}, NULL, 0), -EINVAL);
}

Test(parse, gains) {
  static const struct {
    const char *s;
    int rc;
    double g;
  } rows[] = {
      {"0.3", 0, 0.3},      {"30%", 0, 0.3},      {"0", 0, 0},          {"0.999", 0, 0.999},
      {"1", -EINVAL, 0},    {"100%", -EINVAL, 0}, {"-0.1", -EINVAL, 0}, {"abc", -EINVAL, 0},
      {"0.3x", -EINVAL, 0}, {"nan", -EINVAL, 0},  {"", -EINVAL, 0},     {"30%%", -EINVAL, 0},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    double g = -1;
    char err[128] = "";
    cr_assert_eq(pol_parse_gain("MHTTP_METERED_GAIN", rows[i].s, &g, err, sizeof(err)), rows[i].rc, "'%s'", rows[i].s);
    if (rows[i].rc == 0)
      cr_assert_float_eq(g, rows[i].g, 1e-12, "'%s'", rows[i].s);
    else
      cr_assert(strstr(err, "MHTTP_METERED_GAIN") && g == -1, "'%s': %s", rows[i].s, err);
  }
}

Test(parse, intents) {
  static const struct {
    const char *size, *cat;
    int rc;
    uint64_t hint;
  } rows[] = {
      {NULL, NULL, 0, POL_SIZE_UNKNOWN},
      {"150000", NULL, 0, 150000},
      {"64k", NULL, 0, 65536},
      {"2M", "", 0, 2097152},
      {"1G", NULL, 0, 1073741824},
      {"", "query", 0, POL_SIZE_UNKNOWN},
      {NULL, "bulk", 0, POL_SIZE_BULK},
      {NULL, "stream", 0, POL_SIZE_BULK},
      {"4096", "bulk", 0, 4096}, /* an explicit size wins */
      {"0", NULL, 0, 0},
      {"18446744073709551615", NULL, 0, UINT64_MAX},
      {"-1", NULL, -EINVAL, 0},
      {"12q", NULL, -EINVAL, 0},
      {"64kk", NULL, -EINVAL, 0},
      {" 64", NULL, -EINVAL, 0},
      {"18446744073709551616", NULL, -EINVAL, 0},
      {"17179869184G", NULL, -EINVAL, 0}, /* 2^34 GiB overflows */
      {NULL, "video", -EINVAL, 0},
      {"100", "Bulk", -EINVAL, 0},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    uint64_t hint = 12345;
    char err[160] = "";
    int rc = pol_parse_intent(rows[i].size, rows[i].cat, &hint, err, sizeof(err));
    cr_assert_eq(rc, rows[i].rc, "row %zu: %s", i, err);
    if (rc == 0)
      cr_assert_eq(hint, rows[i].hint, "row %zu", i);
    else
      cr_assert(hint == 12345 && strstr(err, "MHTTP_INTENT_"), "row %zu: %s", i, err);
  }
}

Test(parse, init_rejects_nonsense) {
  struct pol p;
  struct pol_config cfg;
  pol_config_default(&cfg);
  cr_assert_eq(pol_init(&p, &cfg), 0);
  cfg.init_window = 0;
  cr_assert_eq(pol_init(&p, &cfg), -EINVAL);
  pol_config_default(&cfg);
  cfg.metered_gain = 1;
  cr_assert_eq(pol_init(&p, &cfg), -EINVAL);
  pol_config_default(&cfg);
  cfg.split_gain = -0.5;
  cr_assert_eq(pol_init(&p, &cfg), -EINVAL);
  pol_config_default(&cfg);
  cfg.kind = (enum pol_kind)99;
  cr_assert_eq(pol_init(&p, &cfg), -EINVAL);
  pol_config_default(&cfg);
  cfg.kind = POL_SINGLE; /* no interface named */
  cr_assert_eq(pol_init(&p, &cfg), -EINVAL);
}
