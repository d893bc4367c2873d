/* Configuration parsing: strict values, one clear line on the first bad one, unknown file keys left to other modules. */
#include "mh_config.h"
#include "mh_log.h"
#include "mh_rwnd.h"

#include <ctype.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void mh_config_defaults(struct mh_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->ports[80 >> 3] |= 1u << (80 & 7);
  cfg->ports[8080 >> 3] |= 1u << (8080 & 7);
  cfg->log_level = MH_LOG_ERROR;
  cfg->split = 1;
  /* on: the extra paths' handshakes overlap the program's own and its probe, so their
   * slow start begins about one of their round trips sooner (demo, interleaved, 7 runs:
   * 1 MiB 0.372 -> 0.346 s, 4 MiB 0.750 -> 0.739 s). It was off while it pushed 4 MiB's
   * chunk plan into its slower mode (0.765 -> 0.784 s), which 72e49b5 removed. */
  cfg->preconnect = 1;
  cfg->probe_move = 1;
  cfg->rwnd_k = MH_RWND_K_DEFAULT;
  cfg->init_chunk = 32 * 1024;
  cfg->window = 32 * 1024 * 1024;
  cfg->max_conns = 8;
  cfg->path_conns = 2;
  cfg->min_split_size = 256 * 1024;
  pol_config_default(&cfg->pol);
  cfg->intent_hint = POL_SIZE_UNKNOWN;
}

int mh_config_metered(const struct mh_config *cfg, const char *name) {
  size_t n = strlen(name);
  for (const char *p = cfg->metered; *p;) {
    size_t l = strcspn(p, ",");
    if (l == n && !strncmp(p, name, n))
      return 1;
    p += l + (p[l] == ',');
  }
  return 0;
}

/* "32768", "32k", "32K", "32KiB", "4M", "1G": bytes; -1 when not a size. */
static int mh__config_size(const char *v, uint64_t *out) {
  if (!isdigit((unsigned char)*v))
    return -1;
  char *end;
  unsigned long long n = strtoull(v, &end, 10);
  uint64_t mul = 1;
  switch (*end) {
  case 'k': case 'K': mul = 1024; end++; break;
  case 'm': case 'M': mul = 1024 * 1024; end++; break;
  case 'g': case 'G': mul = 1024ULL * 1024 * 1024; end++; break;
  default: break;
  }
  if (mul > 1 && (!strcmp(end, "iB") || !strcmp(end, "B") || !strcmp(end, "b")))
    end += strlen(end);
  if (*end || n > UINT64_MAX / mul)
    return -1;
  *out = n * mul;
  return 0;
}

/* Interface names: comma list of 1..15-character names without spaces. */
static int mh__config_ifaces(const char *v) {
  size_t n = 0;
  int any = 0;
  for (const char *p = v;; p++) {
    if (*p == ',' || *p == '\0') {
      if (n == 0 || n > 15)
        return -1;
      any = 1;
      n = 0;
      if (!*p)
        break;
    } else if (isspace((unsigned char)*p) || *p == '/') {
      return -1;
    } else {
      n++;
    }
  }
  return any ? 0 : -1;
}

int mh_config_check_owner(const char *path, unsigned mode, unsigned uid, unsigned gid, unsigned euid,
                          char *err, size_t errlen) {
  if (uid != 0 && uid != euid) {
    snprintf(err, errlen, "%.200s: owned by uid %u, not by root or the user (uid %u): refused", path, uid, euid);
    return -1;
  }
  if (mode & 0002) {
    snprintf(err, errlen, "%.200s: writable by others (mode %04o): refused (chmod o-w)", path, mode & 07777);
    return -1;
  }
  if ((mode & 0020) && gid != 0) {
    snprintf(err, errlen, "%.200s: writable by group %u (mode %04o): refused (chmod g-w)", path, gid,
             mode & 07777);
    return -1;
  }
  return 0;
}

int mh_config_parse_bool(const char *v) {
  static const char *const yes[] = {"1", "yes", "true", "on"};
  static const char *const no[] = {"0", "no", "false", "off", ""};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
    if (!strcasecmp(v, yes[i]))
      return 1;
  for (size_t i = 0; i < sizeof no / sizeof *no; i++)
    if (!strcasecmp(v, no[i]))
      return 0;
  return -1;
}

/* Ports are parsed into a scratch set first so a bad list never leaves a half-applied one. */
static int mh__config_ports(struct mh_config *cfg, const char *v) {
  uint8_t set[sizeof cfg->ports];
  memset(set, 0, sizeof set);
  const char *p = v;
  while (*p == ' ' || *p == '\t')
    p++;
  if (p[0] == '*' && p[1 + strspn(p + 1, " \t")] == '\0') {
    cfg->all_ports = 1;
    return 0;
  }
  int any = 0;
  for (;;) {
    while (*p == ' ' || *p == '\t')
      p++;
    if (!isdigit((unsigned char)*p))
      return -1;
    char *end;
    unsigned long port = strtoul(p, &end, 10);
    if (port == 0 || port > 65535 || end - p > 5)
      return -1;
    set[port >> 3] |= (uint8_t)(1u << (port & 7));
    any = 1;
    p = end;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == '\0')
      break;
    if (*p++ != ',')
      return -1;
  }
  if (!any)
    return -1;
  cfg->all_ports = 0;
  memcpy(cfg->ports, set, sizeof set);
  return 0;
}

int mh_config_set(struct mh_config *cfg, const char *key, const char *value, const char *src,
                  char *err, size_t errlen) {
  if (!strcmp(key, "disable")) {
    int b = mh_config_parse_bool(value);
    if (b < 0) {
      snprintf(err, errlen, "%s: disable: bad value '%.64s' (expected 0 or 1)", src, value);
      return -1;
    }
    cfg->disabled = b;
    return 0;
  }
  if (!strcmp(key, "ports")) {
    if (mh__config_ports(cfg, value) < 0) {
      snprintf(err, errlen, "%s: ports: bad value '%.64s' (expected a comma list of 1-65535, or *)",
               src, value);
      return -1;
    }
    return 0;
  }
  if (!strcmp(key, "log")) {
    static const char *const names[] = {"off", "error", "info", "debug"};
    for (int i = 0; i < 4; i++)
      if (!strcasecmp(value, names[i])) {
        cfg->log_level = i;
        return 0;
      }
    snprintf(err, errlen, "%s: log: bad value '%.64s' (expected off, error, info or debug)", src,
             value);
    return -1;
  }
  if (!strcmp(key, "log_file")) {
    if (!*value || strlen(value) >= sizeof cfg->log_file) {
      snprintf(err, errlen, "%s: log_file: bad value '%.64s' (expected a path shorter than %zu)",
               src, value, sizeof cfg->log_file);
      return -1;
    }
    strcpy(cfg->log_file, value);
    return 0;
  }
  /* the on/off switches */
  const struct { const char *key; int *field; } sw[] = {
      {"split", &cfg->split}, {"preconnect", &cfg->preconnect}, {"probe_move", &cfg->probe_move}};
  for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
    if (strcmp(key, sw[i].key))
      continue;
    int b = mh_config_parse_bool(value);
    if (b < 0) {
      snprintf(err, errlen, "%s: %s: bad value '%.64s' (expected on or off)", src, key, value);
      return -1;
    }
    *sw[i].field = b;
    return 0;
  }
  if (!strcmp(key, "rwnd_clamp")) {
    char *end;
    double k = strtod(value, &end);
    if (mh_config_parse_bool(value) == 0) {
      k = 0;
    } else if (!*value || *end || !(k >= 1 && k <= 16)) {
      snprintf(err, errlen, "%s: rwnd_clamp: bad value '%.64s' (expected off or a factor 1..16)", src, value);
      return -1;
    }
    cfg->rwnd_k = k;
    return 0;
  }
  if (!strcmp(key, "ifaces")) {
    if (strlen(value) >= sizeof cfg->ifaces || mh__config_ifaces(value) < 0) {
      snprintf(err, errlen, "%s: ifaces: bad value '%.64s' (expected a comma list of interface names)",
               src, value);
      return -1;
    }
    strcpy(cfg->ifaces, value);
    return 0;
  }
  static const struct { const char *key; uint64_t min, max; } sizes[] = {
      {"init_chunk", 1024, 64ULL << 20},
      {"window", 1ULL << 20, 4ULL << 30},
      {"min_split_size", 0, UINT64_MAX},
  };
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    if (strcmp(key, sizes[i].key))
      continue;
    uint64_t n;
    if (mh__config_size(value, &n) < 0 || n < sizes[i].min || n > sizes[i].max) {
      snprintf(err, errlen, "%s: %s: bad value '%.64s' (expected a size such as 32k or 4M, %llu..%llu bytes)",
               src, key, value, (unsigned long long)sizes[i].min, (unsigned long long)sizes[i].max);
      return -1;
    }
    if (i == 0) {
      cfg->init_chunk = n;
      cfg->init_chunk_set = 1;
    } else if (i == 1) {
      cfg->window = n;
    } else {
      cfg->min_split_size = n;
    }
    return 0;
  }
  /* connection counts: a decimal integer within bounds */
  static const struct {
    const char *key;
    unsigned lo, hi;
    size_t off;
  } counts[] = {
      {"max_conns", 1, 64, offsetof(struct mh_config, max_conns)},
      {"path_conns", 1, 8, offsetof(struct mh_config, path_conns)},
  };
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    if (strcmp(key, counts[i].key))
      continue;
    char *end;
    unsigned long n = strtoul(value, &end, 10);
    if (!isdigit((unsigned char)*value) || *end || n < counts[i].lo || n > counts[i].hi) {
      snprintf(err, errlen, "%s: %s: bad value '%.64s' (expected %u..%u)", src, key, value, counts[i].lo,
               counts[i].hi);
      return -1;
    }
    *(unsigned *)((char *)cfg + counts[i].off) = (unsigned)n;
    return 0;
  }
  if (!strcmp(key, "policy")) {
    struct pol_config pc = cfg->pol;
    char why[160];
    if (pol_parse(value, &pc, why, sizeof why) < 0) {
      snprintf(err, errlen, "%s: policy: %s", src, why);
      return -1;
    }
    cfg->pol = pc;
    return 0;
  }
  if (!strcmp(key, "metered")) {
    /* empty is allowed here: it says "nothing is metered" (overrides a file's list) */
    if (strlen(value) >= sizeof cfg->metered || (*value && mh__config_ifaces(value) < 0)) {
      snprintf(err, errlen, "%s: metered: bad value '%.64s' (expected a comma list of interface names)",
               src, value);
      return -1;
    }
    strcpy(cfg->metered, value);
    return 0;
  }
  if (!strcmp(key, "metered_gain") || !strcmp(key, "split_gain")) {
    double g;
    char why[160];
    if (pol_parse_gain(key, value, &g, why, sizeof why) < 0) {
      snprintf(err, errlen, "%s: %s", src, why);
      return -1;
    }
    if (key[0] == 'm')
      cfg->pol.metered_gain = g;
    else
      cfg->pol.split_gain = g;
    return 0;
  }
  if (!strcmp(key, "intent_size") || !strcmp(key, "intent_category")) {
    int is_size = key[7] == 's';
    char *slot = is_size ? cfg->intent_size : cfg->intent_category;
    size_t cap = is_size ? sizeof cfg->intent_size : sizeof cfg->intent_category;
    char why[160];
    uint64_t hint;
    if (strlen(value) >= cap) {
      snprintf(err, errlen, "%s: %s: bad value '%.64s' (too long)", src, key, value);
      return -1;
    }
    if (pol_parse_intent(is_size ? value : cfg->intent_size, is_size ? cfg->intent_category : value,
                         &hint, why, sizeof why) < 0) {
      snprintf(err, errlen, "%s: %s: %s", src, key, why);
      return -1;
    }
    strcpy(slot, value);
    cfg->intent_hint = hint;
    return 0;
  }
  if (!strcmp(key, "metrics")) {
    if (!*value || strlen(value) >= sizeof cfg->metrics) {
      snprintf(err, errlen, "%s: metrics: bad value '%.64s' (expected a path shorter than %zu)",
               src, value, sizeof cfg->metrics);
      return -1;
    }
    strcpy(cfg->metrics, value);
    return 0;
  }
  if (!strcmp(key, "metrics_store")) {
    /* a relative path would name a different file in each program's working directory */
    if (strcmp(value, "off") && (value[0] != '/' || strlen(value) >= sizeof cfg->metrics_store)) {
      snprintf(err, errlen, "%s: metrics_store: bad value '%.64s' (expected off or an absolute "
               "path shorter than %zu)", src, value, sizeof cfg->metrics_store);
      return -1;
    }
    strcpy(cfg->metrics_store, value);
    return 0;
  }
  if (!strncmp(key, "dns_", 4)) {
    /* the list's syntax is multidns/'s (mdns_servers_parse): it reports a bad one by name */
    const char *ifn = key + 4;
    unsigned k = 0;
    while (k < cfg->ndns && strcmp(cfg->dns[k].iface, ifn))
      k++;
    if (!*ifn || strlen(ifn) >= sizeof cfg->dns[0].iface || strlen(value) >= sizeof cfg->dns[0].servers ||
        (k == cfg->ndns && k == sizeof cfg->dns / sizeof cfg->dns[0])) {
      snprintf(err, errlen, "%s: %.40s: bad value '%.64s' (expected an interface name under 16 "
               "characters, at most 8 of them, and a server list under %zu characters)",
               src, key, value, sizeof cfg->dns[0].servers);
      return -1;
    }
    if (k == cfg->ndns)
      cfg->ndns++;
    strcpy(cfg->dns[k].iface, ifn);
    strcpy(cfg->dns[k].servers, value);
    return 0;
  }
  if (!strcmp(key, "stats")) {
    if (!*value || strlen(value) >= sizeof cfg->stats) {
      snprintf(err, errlen, "%s: stats: bad value '%.64s' (expected a path shorter than %zu)",
               src, value, sizeof cfg->stats);
      return -1;
    }
    strcpy(cfg->stats, value);
    return 0;
  }
  return 1;
}

int mh_config_parse_text(struct mh_config *cfg, const char *text, size_t len, const char *src,
                         char *err, size_t errlen) {
  size_t i = 0;
  unsigned lineno = 0;
  while (i < len) {
    size_t start = i;
    while (i < len && text[i] != '\n')
      i++;
    size_t end = i++;
    lineno++;
    char line[512];
    size_t n = end - start;
    if (n >= sizeof line) {
      snprintf(err, errlen, "%s:%u: line too long", src, lineno);
      return -1;
    }
    memcpy(line, text + start, n);
    line[n] = '\0';
    char *hash = strchr(line, '#');
    if (hash)
      *hash = '\0';
    char *k = line;
    while (isspace((unsigned char)*k))
      k++;
    if (!*k)
      continue;
    char *eq = strchr(k, '=');
    if (!eq) {
      snprintf(err, errlen, "%s:%u: expected 'key = value'", src, lineno);
      return -1;
    }
    char *kend = eq;
    while (kend > k && isspace((unsigned char)kend[-1]))
      kend--;
    *kend = '\0';
    char *v = eq + 1;
    while (isspace((unsigned char)*v))
      v++;
    char *vend = v + strlen(v);
    while (vend > v && isspace((unsigned char)vend[-1]))
      vend--;
    *vend = '\0';
    char where[300];
    snprintf(where, sizeof where, "%s:%u", src, lineno);
    if (mh_config_set(cfg, k, v, where, err, errlen) < 0)
      return -1;
  }
  return 0;
}

int mh_config_apply_env(struct mh_config *cfg, const char *(*get)(const char *name), char *err,
                        size_t errlen) {
  static const struct { const char *env, *key; } map[] = {
      {"MHTTP_DISABLE", "disable"},
      {"MHTTP_PORTS", "ports"},
      {"MHTTP_LOG", "log"},
      {"MHTTP_LOG_FILE", "log_file"},
      {"MHTTP_SPLIT", "split"},
      {"MHTTP_PRECONNECT", "preconnect"},
      {"MHTTP_PROBE_MOVE", "probe_move"},
      {"MHTTP_RWND_CLAMP", "rwnd_clamp"},
      {"MHTTP_IFACES", "ifaces"},
      {"MHTTP_INIT_CHUNK", "init_chunk"},
      {"MHTTP_WINDOW", "window"},
      {"MHTTP_MAX_CONNS", "max_conns"},
      {"MHTTP_PATH_CONNS", "path_conns"},
      {"MHTTP_MIN_SPLIT_SIZE", "min_split_size"},
      {"MHTTP_STATS", "stats"},
      {"MHTTP_POLICY", "policy"},
      {"MHTTP_METERED", "metered"},
      {"MHTTP_METERED_GAIN", "metered_gain"},
      {"MHTTP_SPLIT_GAIN", "split_gain"},
      {"MHTTP_INTENT_SIZE", "intent_size"},
      {"MHTTP_INTENT_CATEGORY", "intent_category"},
      {"MHTTP_METRICS", "metrics"},
      {"MHTTP_METRICS_STORE", "metrics_store"},
  };
  for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
    const char *v = get(map[i].env);
    if (v && mh_config_set(cfg, map[i].key, v, map[i].env, err, errlen) < 0)
      return -1;
  }
  return 0;
}

const char *mh_config_dns(const struct mh_config *cfg, const char *name) {
  for (unsigned k = 0; k < cfg->ndns; k++)
    if (!strcmp(cfg->dns[k].iface, name))
      return cfg->dns[k].servers;
  return NULL;
}
