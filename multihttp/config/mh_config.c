/* Configuration parsing: strict values, one clear line on the first bad one, unknown file keys left to other modules. */
#include "mh_config.h"
#include "mh_log.h"
#include "mh_url.h"
#include "mh_rwnd.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void mh_config_defaults(struct mh_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->ports[80 >> 3] |= 1u << (80 & 7);
  cfg->ports[8080 >> 3] |= 1u << (8080 & 7);
  cfg->log_level = MH_LOG_ERROR;
  cfg->split = 1;
  /* on: the extra paths' handshakes overlap the program's own and its probe, so their
   * slow start begins about one of their round trips sooner (bench/split/README.md) */
  cfg->preconnect = 1;
  cfg->probe_move = 1;
  cfg->networkmanager = 1;
  strcpy(cfg->portal_check, "off");
  cfg->rwnd_k = MH_RWND_K_DEFAULT;
  cfg->init_chunk = 32 * 1024;
  /* what the shim adds to a program stays under 32 MiB: a slow reader holds the whole window
   * plus about 4 MiB of the engine's own (libraries, read buffers, allocator) */
  cfg->window = 24 * 1024 * 1024;
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
  case 'k':
  case 'K':
    mul = 1024;
    end++;
    break;
  case 'm':
  case 'M':
    mul = 1024 * 1024;
    end++;
    break;
  case 'g':
  case 'G':
    mul = 1024ULL * 1024 * 1024;
    end++;
    break;
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

int mh_config_check_owner(const char *path, unsigned mode, unsigned uid, unsigned gid, unsigned euid, char *err,
                          size_t errlen) {
  if (uid != 0 && uid != euid) {
    snprintf(err, errlen, "%.200s: owned by uid %u, not by root or the user (uid %u): refused", path, uid, euid);
    return -1;
  }
  if (mode & 0002) {
    snprintf(err, errlen, "%.200s: writable by others (mode %04o): refused (chmod o-w)", path, mode & 07777);
    return -1;
  }
  if ((mode & 0020) && gid != 0) {
    snprintf(err, errlen, "%.200s: writable by group %u (mode %04o): refused (chmod g-w)", path, gid, mode & 07777);
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

/* One configuration key: how its value is parsed and where it goes. A setter returns 0, or -1
 * with err set; mh__bad writes the common "bad value" line from the row's expect. */
struct mh__key {
  const char *key;
  int (*set)(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
             size_t errlen);
  size_t off;         /* the field in struct mh_config */
  size_t cap;         /* strings: the field's size */
  uint64_t lo, hi;    /* sizes and counts: the accepted range */
  const char *expect; /* what the error line says is expected (some add the bounds) */
};

#define MH__FIELD(cfg, k, type) ((type *)((char *)(cfg) + (k)->off))

static int mh__bad(const struct mh__key *k, const char *value, const char *src, const char *expect, char *err,
                   size_t errlen) {
  snprintf(err, errlen, "%s: %s: bad value '%.64s' (expected %s)", src, k->key, value, expect);
  return -1;
}

/* 0|1|yes|no|true|false|on|off into an int field. */
static int mh__set_bool(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                        size_t errlen) {
  int b = mh_config_parse_bool(value);
  if (b < 0)
    return mh__bad(k, value, src, k->expect, err, errlen);
  *MH__FIELD(cfg, k, int) = b;
  return 0;
}

/* A non-empty string shorter than the field (a path). */
static int mh__set_path(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                        size_t errlen) {
  if (!*value || strlen(value) >= k->cap) {
    char expect[64];
    snprintf(expect, sizeof expect, "a path shorter than %zu", k->cap);
    return mh__bad(k, value, src, expect, err, errlen);
  }
  strcpy(MH__FIELD(cfg, k, char), value);
  return 0;
}

/* A comma list of interface names; empty only when lo is 1 (metered: "nothing is metered",
 * which overrides a file's list). */
static int mh__set_ifaces(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                          size_t errlen) {
  if (strlen(value) >= k->cap || ((*value || !k->lo) && mh__config_ifaces(value) < 0))
    return mh__bad(k, value, src, k->expect, err, errlen);
  strcpy(MH__FIELD(cfg, k, char), value);
  return 0;
}

/* A size (k/M/G suffixes) within [lo, hi]; init_chunk also records that it was configured. */
static int mh__set_size(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                        size_t errlen) {
  uint64_t n;
  if (mh__config_size(value, &n) < 0 || n < k->lo || n > k->hi) {
    char expect[96];
    snprintf(expect, sizeof expect, "a size such as 32k or 4M, %llu..%llu bytes", (unsigned long long)k->lo,
             (unsigned long long)k->hi);
    return mh__bad(k, value, src, expect, err, errlen);
  }
  *MH__FIELD(cfg, k, uint64_t) = n;
  if (k->off == offsetof(struct mh_config, init_chunk))
    cfg->init_chunk_set = 1;
  return 0;
}

/* A decimal count within [lo, hi] into an unsigned field. */
static int mh__set_count(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                         size_t errlen) {
  char *end;
  unsigned long n = strtoul(value, &end, 10);
  if (!isdigit((unsigned char)*value) || *end || n < k->lo || n > k->hi) {
    char expect[48];
    snprintf(expect, sizeof expect, "%u..%u", (unsigned)k->lo, (unsigned)k->hi);
    return mh__bad(k, value, src, expect, err, errlen);
  }
  *MH__FIELD(cfg, k, unsigned) = (unsigned)n;
  return 0;
}

static int mh__set_ports(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                         size_t errlen) {
  return mh__config_ports(cfg, value) < 0 ? mh__bad(k, value, src, k->expect, err, errlen) : 0;
}

static int mh__set_log(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                       size_t errlen) {
  static const char *const names[] = {"off", "error", "info", "debug"};
  for (int i = 0; i < 4; i++)
    if (!strcasecmp(value, names[i])) {
      cfg->log_level = i;
      return 0;
    }
  return mh__bad(k, value, src, k->expect, err, errlen);
}

/* off, or a factor in [1, 16]. */
static int mh__set_rwnd(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                        size_t errlen) {
  char *end;
  double f = strtod(value, &end);
  if (mh_config_parse_bool(value) == 0)
    f = 0;
  else if (!*value || *end || !(f >= 1 && f <= 16))
    return mh__bad(k, value, src, k->expect, err, errlen);
  cfg->rwnd_k = f;
  return 0;
}

static int mh__set_policy(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                          size_t errlen) {
  struct pol_config pc = cfg->pol;
  char why[160];
  if (pol_parse(value, &pc, why, sizeof why) < 0) {
    snprintf(err, errlen, "%s: %s: %s", src, k->key, why);
    return -1;
  }
  cfg->pol = pc;
  return 0;
}

/* A gain (0.2 or 20%, in [0, 1)) into a double field. */
static int mh__set_gain(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                        size_t errlen) {
  double g;
  char why[160];
  if (pol_parse_gain(k->key, value, &g, why, sizeof why) < 0) {
    snprintf(err, errlen, "%s: %s", src, why);
    return -1;
  }
  *MH__FIELD(cfg, k, double) = g;
  return 0;
}

/* intent_size or intent_category: each is checked together with the other, which it may
 * change the meaning of (the size wins when both are set). */
static int mh__set_intent(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                          size_t errlen) {
  int is_size = k->off == offsetof(struct mh_config, intent_size);
  char why[160];
  uint64_t hint;
  if (strlen(value) >= k->cap) {
    snprintf(err, errlen, "%s: %s: bad value '%.64s' (too long)", src, k->key, value);
    return -1;
  }
  if (pol_parse_intent(is_size ? value : cfg->intent_size, is_size ? cfg->intent_category : value, &hint, why,
                       sizeof why) < 0) {
    snprintf(err, errlen, "%s: %s: %s", src, k->key, why);
    return -1;
  }
  strcpy(MH__FIELD(cfg, k, char), value);
  cfg->intent_hint = hint;
  return 0;
}

/* off, or an absolute path: a relative one would name a different file in each program's
 * working directory. */
static int mh__set_store(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                         size_t errlen) {
  if (strcmp(value, "off") && (value[0] != '/' || strlen(value) >= k->cap)) {
    char expect[80];
    snprintf(expect, sizeof expect, "off or an absolute path shorter than %zu", k->cap);
    return mh__bad(k, value, src, expect, err, errlen);
  }
  strcpy(MH__FIELD(cfg, k, char), value);
  return 0;
}

int mh_config_portal_url(const char *url, struct mh_url *out) {
  return mh_url_parse(url, out) == 0 && !out->tls ? 0 : -1;
}

/* portal_check: off, or a URL mh_config_portal_url takes. */
static int mh__set_portal(struct mh_config *cfg, const struct mh__key *k, const char *value, const char *src, char *err,
                          size_t errlen) {
  struct mh_url u;
  if (strcmp(value, "off") && (strlen(value) >= k->cap || mh_config_portal_url(value, &u) < 0))
    return mh__bad(k, value, src, "off or http://HOST[:PORT]/PATH", err, errlen);
  strcpy(MH__FIELD(cfg, k, char), value);
  return 0;
}

/* dns_<iface>: that interface's servers. The list's syntax is multidns/'s (mdns_servers_parse):
 * it reports a bad one by name. */
static int mh__set_dns(struct mh_config *cfg, const char *key, const char *value, const char *src, char *err,
                       size_t errlen) {
  const char *ifn = key + 4;
  unsigned k = 0;
  while (k < cfg->ndns && strcmp(cfg->dns[k].iface, ifn))
    k++;
  if (!*ifn || strlen(ifn) >= sizeof cfg->dns[0].iface || strlen(value) >= sizeof cfg->dns[0].servers ||
      (k == cfg->ndns && k == sizeof cfg->dns / sizeof cfg->dns[0])) {
    snprintf(err, errlen,
             "%s: %.40s: bad value '%.64s' (expected an interface name under 16 "
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

#define MH__OFF(f) offsetof(struct mh_config, f)
#define MH__STR(f) MH__OFF(f), sizeof(((struct mh_config *)0)->f)

/* Every key but dns_<iface> (mh__set_dns). */
static const struct mh__key mh__keys[] = {
    {"disable", mh__set_bool, MH__OFF(disabled), 0, 0, 0, "0 or 1"},
    {"ports", mh__set_ports, 0, 0, 0, 0, "a comma list of 1-65535, or *"},
    {"log", mh__set_log, 0, 0, 0, 0, "off, error, info or debug"},
    {"log_file", mh__set_path, MH__STR(log_file), 0, 0, NULL},
    {"split", mh__set_bool, MH__OFF(split), 0, 0, 0, "on or off"},
    {"preconnect", mh__set_bool, MH__OFF(preconnect), 0, 0, 0, "on or off"},
    {"probe_move", mh__set_bool, MH__OFF(probe_move), 0, 0, 0, "on or off"},
    {"networkmanager", mh__set_bool, MH__OFF(networkmanager), 0, 0, 0, "on or off"},
    {"portal_check", mh__set_portal, MH__STR(portal_check), 0, 0, NULL},
    {"rwnd_clamp", mh__set_rwnd, 0, 0, 0, 0, "off or a factor 1..16"},
    {"ifaces", mh__set_ifaces, MH__STR(ifaces), 0, 0, "a comma list of interface names"},
    {"init_chunk", mh__set_size, MH__OFF(init_chunk), 0, 1024, 64ULL << 20, NULL},
    {"window", mh__set_size, MH__OFF(window), 0, 1ULL << 20, 4ULL << 30, NULL},
    {"min_split_size", mh__set_size, MH__OFF(min_split_size), 0, 0, UINT64_MAX, NULL},
    {"max_conns", mh__set_count, MH__OFF(max_conns), 0, 1, 64, NULL},
    {"path_conns", mh__set_count, MH__OFF(path_conns), 0, 1, 8, NULL},
    {"policy", mh__set_policy, 0, 0, 0, 0, NULL},
    {"metered", mh__set_ifaces, MH__STR(metered), 1, 0, "a comma list of interface names"},
    {"metered_gain", mh__set_gain, MH__OFF(pol.metered_gain), 0, 0, 0, NULL},
    {"split_gain", mh__set_gain, MH__OFF(pol.split_gain), 0, 0, 0, NULL},
    {"intent_size", mh__set_intent, MH__STR(intent_size), 0, 0, NULL},
    {"intent_category", mh__set_intent, MH__STR(intent_category), 0, 0, NULL},
    {"metrics", mh__set_path, MH__STR(metrics), 0, 0, NULL},
    {"metrics_store", mh__set_store, MH__STR(metrics_store), 0, 0, NULL},
    {"stats", mh__set_path, MH__STR(stats), 0, 0, NULL},
};

int mh_config_set(struct mh_config *cfg, const char *key, const char *value, const char *src, char *err,
                  size_t errlen) {
  for (size_t i = 0; i < sizeof mh__keys / sizeof mh__keys[0]; i++)
    if (!strcmp(key, mh__keys[i].key))
      return mh__keys[i].set(cfg, &mh__keys[i], value, src, err, errlen);
  if (!strncmp(key, "dns_", 4))
    return mh__set_dns(cfg, key, value, src, err, errlen);
  return 1;
}

int mh_config_parse_text(struct mh_config *cfg, const char *text, size_t len, const char *src, char *err,
                         size_t errlen) {
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

int mh_config_apply_env(struct mh_config *cfg, const char *(*get)(const char *name), char *err, size_t errlen) {
  static const struct {
    const char *env, *key;
  } map[] = {
      {"MHTTP_DISABLE", "disable"},
      {"MHTTP_PORTS", "ports"},
      {"MHTTP_LOG", "log"},
      {"MHTTP_LOG_FILE", "log_file"},
      {"MHTTP_SPLIT", "split"},
      {"MHTTP_PRECONNECT", "preconnect"},
      {"MHTTP_PROBE_MOVE", "probe_move"},
      {"MHTTP_NETWORKMANAGER", "networkmanager"},
      {"MHTTP_PORTAL_CHECK", "portal_check"},
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

/* Reads the config file at path into buf (cap bytes) once its owner and mode are trusted. 0
 * (*len set), -errno of the open or read, -EACCES with err set (not trusted), -EFBIG. */
static int mh__config_read(const struct mh_config_io *io, const char *path, char *buf, size_t cap, size_t *len,
                           char *err, size_t errlen) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  struct stat st;
  int bad = fstat(fd, &st) < 0;
  if (bad)
    snprintf(err, errlen, "%.200s: cannot stat: %s", path, strerror(errno));
  else
    bad = mh_config_check_owner(path, st.st_mode, st.st_uid, st.st_gid, geteuid(), err, errlen) < 0;
  size_t n = 0;
  int rc = bad ? -EACCES : 0;
  while (!bad && n < cap) {
    ssize_t r = io->read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      rc = -errno;
    if (r <= 0)
      break;
    n += (size_t)r;
  }
  if (!bad && !rc && n == cap)
    rc = -EFBIG;
  io->close(fd);
  *len = n;
  return rc;
}

static const char *mh__config_getenv(const char *name) { return getenv(name); }

int mh_config_load(struct mh_config *cfg, const struct mh_config_io *io, char *err, size_t errlen) {
  static char text[64 * 1024];
  const struct mh_config_io libc = {.read = read, .close = close};
  if (!io)
    io = &libc;
  mh_config_defaults(cfg);
  const char *path = getenv("MHTTP_CONFIG");
  int explicit_path = path && *path;
  if (!explicit_path)
    path = "/etc/mhttp.conf";
  size_t len = 0;
  err[0] = 0;
  int rc = mh__config_read(io, path, text, sizeof text, &len, err, errlen);
  if (rc == -EACCES && err[0])
    return -1;
  if (rc == 0) {
    if (mh_config_parse_text(cfg, text, len, path, err, errlen) < 0)
      return -1;
  } else if (explicit_path || rc != -ENOENT) {
    snprintf(err, errlen, "MHTTP_CONFIG: cannot read '%.200s': %s", path, strerror(-rc));
    return -1;
  }
  return mh_config_apply_env(cfg, mh__config_getenv, err, errlen) < 0 ? -1 : 0;
}
