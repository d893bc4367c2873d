/* The API's options by name (mhttp.h's table: the mhttp command's long options): each value checked whole before anything changes. */
#include "mh_api_int.h"
#include "mh_path.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <net/if.h>
#include <unistd.h>

enum mh__level { MH__L_SESSION = 1, MH__L_XFER = 2, MH__L_BOTH = 3 };

void mh__opts_defaults(struct mh__opts *o) {
  memset(o, 0, sizeof *o);
  o->max_redirs = 10;
  o->progress_ms = 200;
  snprintf(o->user_agent, sizeof o->user_agent, "libmhttp/%s", mhttp_version());
}

mhttp_code mh__opts_copy(struct mh__opts *dst, const struct mh__opts *src) {
  *dst = *src;
  dst->headers = NULL;
  if (src->headers_len) {
    if (!(dst->headers = malloc(src->headers_len)))
      return MHTTP_E_NOMEM;
    memcpy(dst->headers, src->headers, src->headers_len);
  }
  return MHTTP_OK;
}

void mh__opts_free(struct mh__opts *o) {
  free(o->headers);
  o->headers = NULL;
  o->headers_len = 0;
}

/* "1"/"0", "yes"/"no", "true"/"false" (any case): 1, 0, or -1. */
static int mh__bool(const char *v) {
  if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true"))
    return 1;
  if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false"))
    return 0;
  return -1;
}

/* A decimal number of seconds > 0 (and sane: under a year). */
static int mh__seconds(const char *v, double *out) {
  char *end;
  errno = 0;
  double d = strtod(v, &end);
  if (end == v || *end || errno || !isfinite(d) || d <= 0 || d > 365 * 86400.0)
    return -1;
  *out = d;
  return 0;
}

/* A whole number in [lo, hi]. */
static int mh__int(const char *v, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (end == v || *end || errno || n < lo || n > hi || !isdigit((unsigned char)v[0]))
    return -1;
  *out = n;
  return 0;
}

int mh__speed(const char *v, uint64_t *out) {
  char *end;
  errno = 0;
  double d = strtod(v, &end);
  if (end == v || errno || !isfinite(d) || d < 0 || !isdigit((unsigned char)v[0]))
    return -1;
  double unit = !*end                   ? 1
                : !strcasecmp(end, "k") ? 1024.0
                : !strcasecmp(end, "m") ? 1048576.0
                : !strcasecmp(end, "g") ? 1073741824.0
                                        : 0;
  if (!unit || d * unit > (double)MH_BUCKET_RATE_MAX)
    return -1;
  *out = (uint64_t)(d * unit);
  return 0;
}

/* Text for a header value: printable, no CR/LF (a value must never start another header). */
static int mh__text(const char *v, size_t max) {
  size_t n = strlen(v);
  if (n >= max)
    return -1;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)v[i] < 0x20 && v[i] != '\t')
      return -1;
  return 0;
}

/* "Name: value": a token name (RFC 9110 §5.1), then text. */
static int mh__header_ok(const char *v) {
  const char *c = strchr(v, ':');
  if (!c || c == v || mh__text(v, MH__API_REQ_MAX / 2) < 0)
    return -1;
  for (const char *p = v; p < c; p++)
    if (!isalnum((unsigned char)*p) && !strchr("!#$%&'*+-.^_`|~", *p))
      return -1;
  return 0;
}

static mhttp_code mh__add_header(struct mh__opts *o, const char *v) {
  size_t n = strlen(v);
  if (o->headers_len + n + 2 > MH__API_REQ_MAX / 2)
    return MHTTP_E_OPTION;
  char *h = realloc(o->headers, o->headers_len + n + 2);
  if (!h)
    return MHTTP_E_NOMEM;
  memcpy(h + o->headers_len, v, n);
  memcpy(h + o->headers_len + n, "\r\n", 2);
  o->headers = h;
  o->headers_len += n + 2;
  return MHTTP_OK;
}

/* The options a session gives its transfers and a transfer may change ("both"), and the
 * transfer's own. MHTTP_E_OPTION for a bad value, -1 for a name that is not one of them. */
static int mh__opt_common(struct mh__opts *o, const char *name, const char *v) {
  long n;
  double d;
  int b;
  if (!strcmp(name, "cacert")) {
    if (!*v || strlen(v) >= sizeof o->cacert)
      return MHTTP_E_OPTION;
    if (access(v, R_OK) < 0)
      return MHTTP_E_CACERT; /* curl finds it out at the first connection; the caller now */
    return snprintf(o->cacert, sizeof o->cacert, "%s", v), MHTTP_OK;
  }
  if (!strcmp(name, "insecure"))
    return (b = mh__bool(v)) < 0 ? MHTTP_E_OPTION : (o->insecure = b, MHTTP_OK);
  if (!strcmp(name, "connect-timeout"))
    return mh__seconds(v, &d) < 0 ? MHTTP_E_OPTION : (o->connect_timeout = d, MHTTP_OK);
  if (!strcmp(name, "max-time"))
    return mh__seconds(v, &d) < 0 ? MHTTP_E_OPTION : (o->max_time = d, MHTTP_OK);
  if (!strcmp(name, "max-redirs"))
    return mh__int(v, 0, 50, &n) < 0 ? MHTTP_E_OPTION : (o->max_redirs = (int)n, MHTTP_OK);
  if (!strcmp(name, "user-agent"))
    return mh__text(v, sizeof o->user_agent) < 0 ? MHTTP_E_OPTION
                                                 : (snprintf(o->user_agent, sizeof o->user_agent, "%s", v), MHTTP_OK);
  return -1;
}

static int mh__opt_own(struct mh__opts *o, const char *name, const char *v) {
  long n;
  int b;
  uint8_t sum[32];
  if (!strcmp(name, "header"))
    return mh__header_ok(v) < 0 ? MHTTP_E_OPTION : mh__add_header(o, v);
  if (!strcmp(name, "output"))
    return *v && strlen(v) < sizeof o->output ? (snprintf(o->output, sizeof o->output, "%s", v), MHTTP_OK)
                                              : MHTTP_E_OPTION;
  if (!strcmp(name, "continue"))
    return (b = mh__bool(v)) < 0 ? MHTTP_E_OPTION : (o->cont = b, MHTTP_OK);
  if (!strcmp(name, "checksum")) {
    if (strncasecmp(v, "sha-256=", 8) || mh_sha256_parse_hex(v + 8, sum) < 0)
      return MHTTP_E_OPTION;
    memcpy(o->checksum, sum, 32);
    o->has_checksum = 1;
    return MHTTP_OK;
  }
  if (!strcmp(name, "limit-rate"))
    return mh__speed(v, &o->limit_rate) < 0 ? MHTTP_E_OPTION : MHTTP_OK;
  if (!strcmp(name, "progress-interval"))
    return mh__int(v, 10, 3600000, &n) < 0 ? MHTTP_E_OPTION : (o->progress_ms = (unsigned)n, MHTTP_OK);
  return -1;
}

/* "interface NAME": appended to the configured list (the engine's ifaces key). */
static mhttp_code mh__opt_iface(struct mh_config *cfg, const char *v) {
  char list[sizeof cfg->ifaces], err[MH_CONFIG_ERR_MAX];
  if (!*v || strlen(v) >= 16 || strpbrk(v, ", \t/:"))
    return MHTTP_E_OPTION;
  if (!if_nametoindex(v))
    return MHTTP_E_INTERFACE;
  if (snprintf(list, sizeof list, "%s%s%s", cfg->ifaces, cfg->ifaces[0] ? "," : "", v) >= (int)sizeof list)
    return MHTTP_E_OPTION;
  struct mh_config c = *cfg;
  if (mh_config_set(&c, "ifaces", list, "option", err, sizeof err) != 0)
    return MHTTP_E_OPTION;
  *cfg = c;
  return MHTTP_OK;
}

/* "dns-server IF=ADDR": ADDR (an IP literal) added to IF's servers. */
static mhttp_code mh__opt_dns(struct mh_config *cfg, const char *v) {
  const char *eq = strchr(v, '=');
  char ifn[16], key[24], list[192], err[MH_CONFIG_ERR_MAX];
  unsigned char a[16];
  if (!eq || eq == v || (size_t)(eq - v) >= sizeof ifn)
    return MHTTP_E_OPTION;
  snprintf(ifn, sizeof ifn, "%.*s", (int)(eq - v), v);
  if (strpbrk(ifn, ", \t/:") || (inet_pton(AF_INET, eq + 1, a) != 1 && inet_pton(AF_INET6, eq + 1, a) != 1))
    return MHTTP_E_OPTION;
  const char *old = mh_config_dns(cfg, ifn);
  if (snprintf(list, sizeof list, "%s%s%s", old ? old : "", old ? "," : "", eq + 1) >= (int)sizeof list)
    return MHTTP_E_OPTION;
  snprintf(key, sizeof key, "dns_%s", ifn);
  struct mh_config c = *cfg;
  if (mh_config_set(&c, key, list, "option", err, sizeof err) != 0)
    return MHTTP_E_OPTION;
  *cfg = c;
  return MHTTP_OK;
}

/* "policy": eaf, rr (round-robin), threshold, biased, single (the first interface option, else
 * the host's first interface) or single:IF. */
static mhttp_code mh__opt_policy(struct mh_config *cfg, const char *v) {
  char spec[64], err[MH_CONFIG_ERR_MAX];
  if (!strcmp(v, "rr"))
    v = "round-robin";
  if (!strcmp(v, "single")) {
    struct mh_iface f[MH_MAX_IFACES];
    size_t k = strcspn(cfg->ifaces, ",");
    if (k)
      snprintf(spec, sizeof spec, "single:%.*s", (int)k, cfg->ifaces);
    else if (mh_path_ifaces(cfg, AF_INET, f, MH_MAX_IFACES) > 0)
      snprintf(spec, sizeof spec, "single:%s", f[0].name);
    else
      return MHTTP_E_OPTION;
    v = spec;
  }
  if (!*v)
    return MHTTP_E_OPTION;
  struct mh_config c = *cfg;
  if (mh_config_set(&c, "policy", v, "option", err, sizeof err) != 0)
    return MHTTP_E_OPTION;
  *cfg = c;
  return MHTTP_OK;
}

/* The message of a refused option: what is wrong with it. */
static void mh__opt_why(mhttp_code rc, int known, const char *other, const char *name, const char *v, char *why,
                        size_t cap) {
  if (!known)
    snprintf(why, cap, other ? "option %.64s: a %s option" : "unknown option '%.64s'", name, other);
  else if (rc == MHTTP_E_INTERFACE)
    snprintf(why, cap, "option interface: no interface named '%.64s' on this host", v);
  else if (rc == MHTTP_E_CACERT)
    snprintf(why, cap, "option cacert: cannot read %.200s: %s", v, strerror(errno));
  else if (rc == MHTTP_E_NOMEM)
    snprintf(why, cap, "option %.64s: out of memory", name);
  else
    snprintf(why, cap, "option %.64s: the value '%.100s' is not accepted", name, v);
}

static int mh__opt_is_session(const char *name) {
  return !strcmp(name, "interface") || !strcmp(name, "dns-server") || !strcmp(name, "policy");
}

mhttp_code mh__opt_session(mhttp_session *s, const char *name, const char *value, char *why, size_t cap) {
  int rc = !strcmp(name, "interface")    ? (int)mh__opt_iface(&s->cfg, value)
           : !strcmp(name, "dns-server") ? (int)mh__opt_dns(&s->cfg, value)
           : !strcmp(name, "policy")     ? (int)mh__opt_policy(&s->cfg, value)
                                         : mh__opt_common(&s->opts, name, value);
  if (rc < 0) { /* not a session's: a transfer's own (tried on a scratch copy), or none */
    struct mh__opts scratch;
    mh__opts_defaults(&scratch);
    int xfer = mh__opt_own(&scratch, name, value) >= 0;
    mh__opts_free(&scratch);
    mh__opt_why(MHTTP_E_OPTION, 0, xfer ? "transfer" : NULL, name, value, why, cap);
    return MHTTP_E_OPTION;
  }
  if (rc != MHTTP_OK)
    mh__opt_why((mhttp_code)rc, 1, NULL, name, value, why, cap);
  return (mhttp_code)rc;
}

mhttp_code mh__opt_xfer(struct mh__opts *o, const char *name, const char *value, char *why, size_t cap) {
  int rc = mh__opt_common(o, name, value);
  if (rc < 0)
    rc = mh__opt_own(o, name, value);
  if (rc < 0) {
    mh__opt_why(MHTTP_E_OPTION, 0, mh__opt_is_session(name) ? "session" : NULL, name, value, why, cap);
    return MHTTP_E_OPTION;
  }
  if (rc != MHTTP_OK)
    mh__opt_why((mhttp_code)rc, 1, NULL, name, value, why, cap);
  return (mhttp_code)rc;
}

/* ---- URLs ------------------------------------------------------------------------------------ */
