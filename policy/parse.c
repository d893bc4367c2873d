/* Configuration strings: MHTTP_POLICY, the gain thresholds, and the Socket Intents hints. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/internal.h"

static int pol__fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -EINVAL;
}

int pol_parse(const char *spec, struct pol_config *cfg, char *err, size_t errlen) {
  static const struct {
    const char *name;
    enum pol_kind kind;
  } names[] = {
      {"round-robin", POL_ROUND_ROBIN},
      {"eaf", POL_EAF},
      {"threshold", POL_THRESHOLD},
      {"biased", POL_BIASED},
  };
  /* An empty variable is an unset one, as shells make it easy to export "". */
  if (!spec || !*spec)
    return 0;
  if (strncmp(spec, "single:", 7) == 0) {
    const char *ifname = spec + 7;
    size_t len = strlen(ifname);
    if (!len)
      return pol__fail(err, errlen, "policy 'single:' needs an interface name, e.g. single:eth0");
    if (len >= POL_IFNAME_MAX)
      return pol__fail(err, errlen, "policy '%s': interface name longer than %d characters", spec, POL_IFNAME_MAX - 1);
    if (strpbrk(ifname, "/: \t"))
      return pol__fail(err, errlen, "policy '%s': '%s' is not an interface name", spec, ifname);
    cfg->kind = POL_SINGLE;
    memcpy(cfg->single_if, ifname, len + 1);
    return 0;
  }
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    if (strcmp(spec, names[i].name) == 0) {
      cfg->kind = names[i].kind;
      cfg->single_if[0] = 0;
      return 0;
    }
  }
  return pol__fail(err, errlen, "unknown policy '%s' (expected single:IF, round-robin, eaf, threshold or biased)",
                   spec);
}

int pol_parse_gain(const char *what, const char *s, double *out, char *err, size_t errlen) {
  if (!s || !*s)
    return pol__fail(err, errlen, "%s: empty value (expected a fraction like 0.2 or 20%%)", what);
  char *end;
  errno = 0;
  double g = strtod(s, &end);
  if (end != s && *end == '%' && end[1] == 0) {
    g /= 100;
    end++;
  }
  /* g == g rejects NaN; strtod accepts "nan" and "inf", a gain cannot be either. */
  if (end == s || *end || errno || !(g == g) || g < 0 || g >= 1)
    return pol__fail(err, errlen, "%s: '%s' is not a gain in [0, 1) (e.g. 0.2 or 20%%)", what, s);
  *out = g;
  return 0;
}

/* Bytes with an optional binary suffix; rejects signs, spaces, junk and overflow. */
static int pol__parse_size(const char *s, uint64_t *out) {
  uint64_t v = 0;
  const char *c = s;
  if (*c < '0' || *c > '9')
    return -EINVAL;
  for (; *c >= '0' && *c <= '9'; c++) {
    if (v > (UINT64_MAX - (uint64_t)(*c - '0')) / 10)
      return -EINVAL;
    v = v * 10 + (uint64_t)(*c - '0');
  }
  unsigned shift = 0;
  switch (*c) {
  case 0: break;
  case 'k':
  case 'K':
    shift = 10;
    c++;
    break;
  case 'm':
  case 'M':
    shift = 20;
    c++;
    break;
  case 'g':
  case 'G':
    shift = 30;
    c++;
    break;
  default: return -EINVAL;
  }
  if (*c || (shift && v > (UINT64_MAX >> shift)))
    return -EINVAL;
  *out = v << shift;
  return 0;
}

int pol_parse_intent(const char *size, const char *category, uint64_t *size_hint, char *err, size_t errlen) {
  uint64_t hint = POL_SIZE_UNKNOWN;
  /* Socket Intents' traffic categories, as far as path choice goes: a query wants the
   * shortest latency; bulk and stream want capacity (a stream is a transfer that does not
   * end, so only the sustained rate matters). */
  if (category && *category) {
    if (strcmp(category, "query") == 0)
      hint = POL_SIZE_UNKNOWN;
    else if (strcmp(category, "bulk") == 0 || strcmp(category, "stream") == 0)
      hint = POL_SIZE_BULK;
    else
      return pol__fail(err, errlen, "MHTTP_INTENT_CATEGORY: unknown category '%s' (expected query, bulk or stream)",
                       category);
  }
  if (size && *size) {
    if (pol__parse_size(size, &hint) < 0)
      return pol__fail(err, errlen, "MHTTP_INTENT_SIZE: '%s' is not a byte count (e.g. 150000, 64k, 2M, 1G)", size);
  }
  *size_hint = hint;
  return 0;
}
