/* Configuration parsing: strict values, one clear line on the first bad one, unknown file keys left to other modules. */
#include "mh_config.h"
#include "mh_log.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void mh_config_defaults(struct mh_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->ports[80 >> 3] |= 1u << (80 & 7);
  cfg->ports[8080 >> 3] |= 1u << (8080 & 7);
  cfg->log_level = MH_LOG_ERROR;
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
  };
  for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
    const char *v = get(map[i].env);
    if (v && mh_config_set(cfg, map[i].key, v, map[i].env, err, errlen) < 0)
      return -1;
  }
  return 0;
}
