/* Discovery of each interface's own DNS servers: config/env, systemd-resolved, resolv.conf. */
#include "multidns/servers.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define MDNS__ROUTE_UP 0x0001u     /* RTF_UP */
#define MDNS__ROUTE_REJECT 0x0200u /* RTF_REJECT: the "unreachable" IPv6 default on lo */

static const char *mdns__path(const char *p, const char *def) { return p ? p : def; }

static const char *mdns__default_getenv(const char *name) { return secure_getenv(name); }

static bool mdns__same_server(const struct mdns_server *a, const struct mdns_server *b) {
  if (a->family != b->family || a->port != b->port)
    return false;
  return a->family == AF_INET ? a->addr.v4.s_addr == b->addr.v4.s_addr
                              : memcmp(&a->addr.v6, &b->addr.v6, sizeof a->addr.v6) == 0;
}

/* Parses one token; returns 1 (parsed), 0 (valid but skipped) or -EINVAL. */
static int mdns__parse_one(char *tok, struct mdns_server *out) {
  char *hash = strchr(tok, '#');
  if (hash)
    *hash = '\0'; /* resolved's "addr#server-name" (DNS-over-TLS name) */
  char *host = tok;
  char *port = NULL;
  if (*tok == '[') {
    char *close = strchr(tok, ']');
    if (!close)
      return -EINVAL;
    *close = '\0';
    host = tok + 1;
    if (close[1] == ':')
      port = close + 2;
    else if (close[1] != '\0' && close[1] != '%')
      return -EINVAL;
  } else {
    char *first = strchr(tok, ':');
    if (first && !strchr(first + 1, ':')) { /* exactly one colon: IPv4 with a port */
      *first = '\0';
      port = first + 1;
    }
  }
  char *pct = strchr(host, '%');
  if (pct)
    *pct = '\0'; /* an interface scope; only link-local needs it, and those are skipped */
  if (port) {
    char *pct2 = strchr(port, '%');
    if (pct2)
      *pct2 = '\0';
  }

  memset(out, 0, sizeof *out);
  out->port = 53;
  if (port) {
    char *end;
    errno = 0;
    unsigned long p = strtoul(port, &end, 10);
    if (errno || end == port || *end != '\0' || p == 0 || p > 65535)
      return -EINVAL;
    out->port = (uint16_t)p;
  }
  if (inet_pton(AF_INET, host, &out->addr.v4) == 1) {
    out->family = AF_INET;
    return 1;
  }
  if (inet_pton(AF_INET6, host, &out->addr.v6) == 1) {
    out->family = AF_INET6;
    /* fe80::/10 needs a scope id that ares_set_servers_ports (1.18) cannot carry */
    if (out->addr.v6.s6_addr[0] == 0xfe && (out->addr.v6.s6_addr[1] & 0xc0) == 0x80)
      return 0;
    return 1;
  }
  return -EINVAL;
}

int mdns_servers_parse(const char *text, struct mdns_server_list *out) {
  if (!text || !out)
    return -EINVAL;
  memset(out, 0, sizeof *out);
  char *copy = strdup(text);
  if (!copy)
    return -ENOMEM;
  int rc = 0;
  char *save = NULL;
  for (char *tok = strtok_r(copy, ", \t\r\n", &save); tok; tok = strtok_r(NULL, ", \t\r\n", &save)) {
    struct mdns_server s;
    int r = mdns__parse_one(tok, &s);
    if (r < 0) {
      rc = r;
      break;
    }
    if (r == 0 || out->n == MDNS_SERVERS_MAX)
      continue;
    bool dup = false;
    for (size_t i = 0; i < out->n && !dup; i++)
      dup = mdns__same_server(&out->s[i], &s);
    if (!dup)
      out->s[out->n++] = s;
  }
  free(copy);
  if (rc < 0) {
    out->n = 0;
    return rc;
  }
  return (int)out->n;
}

int mdns_servers_env_name(const char *ifname, char *out, size_t len) {
  int n = snprintf(out, len, "MHTTP_DNS_%s", ifname);
  if (n < 0 || (size_t)n >= len)
    return -ENOSPC;
  for (char *p = out + strlen("MHTTP_DNS_"); *p; p++) {
    bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9');
    if (!ok)
      *p = '_';
  }
  return 0;
}

int mdns_servers_default_iface(const struct mdns_discovery *d, char *ifname, size_t len) {
  struct mdns_discovery none = {0};
  if (!d)
    d = &none;
  char best[64] = "";
  unsigned long best_metric = 0;
  char line[512];
  int err = 0;

  /* IPv4 first: on a dual-stack host the IPv4 default is what resolv.conf was written for. */
  FILE *f = fopen(mdns__path(d->proc_route, "/proc/net/route"), "re");
  if (f) {
    while (fgets(line, sizeof line, f)) {
      char ifn[64];
      unsigned long dest, gw, flags, refcnt, use, metric, mask;
      if (sscanf(line, "%63s %lx %lx %lx %lu %lu %lu %lx", ifn, &dest, &gw, &flags, &refcnt, &use, &metric, &mask) != 8)
        continue; /* the header line */
      if (dest != 0 || mask != 0 || !(flags & MDNS__ROUTE_UP) || (flags & MDNS__ROUTE_REJECT))
        continue;
      if (!best[0] || metric < best_metric) {
        snprintf(best, sizeof best, "%s", ifn);
        best_metric = metric;
      }
    }
    fclose(f);
  } else {
    err = -errno;
  }
  if (!best[0]) {
    f = fopen(mdns__path(d->proc_ipv6_route, "/proc/net/ipv6_route"), "re");
    if (f) {
      err = 0;
      while (fgets(line, sizeof line, f)) {
        char dst[40], src[40], nh[40], ifn[64];
        unsigned dplen, splen;
        unsigned long metric, refcnt, use, flags;
        if (sscanf(line, "%39s %x %39s %x %39s %lx %lx %lx %lx %63s", dst, &dplen, src, &splen, nh, &metric, &refcnt,
                   &use, &flags, ifn) != 10)
          continue;
        if (dplen != 0 || strspn(dst, "0") != strlen(dst) || strcmp(ifn, "lo") == 0 || !(flags & MDNS__ROUTE_UP) ||
            (flags & MDNS__ROUTE_REJECT))
          continue;
        if (!best[0] || metric < best_metric) {
          snprintf(best, sizeof best, "%s", ifn);
          best_metric = metric;
        }
      }
      fclose(f);
    } else if (!err) {
      err = -errno;
    }
  }
  if (!best[0])
    return err ? err : -ENOENT;
  if (strlen(best) >= len)
    return -ENOSPC;
  memcpy(ifname, best, strlen(best) + 1);
  return 0;
}

/* systemd-resolved writes one state file per link; "when it runs" is "the file exists and
 * names servers" (a stale file from a stopped resolved lives in /run, which is wiped at boot). */
static int mdns__from_resolved(const struct mdns_discovery *d, unsigned ifindex, struct mdns_server_list *out) {
  char path[512];
  snprintf(path, sizeof path, "%s/%u", mdns__path(d->resolved_netif, "/run/systemd/resolve/netif"), ifindex);
  FILE *f = fopen(path, "re");
  if (!f)
    return 0;
  char line[2048];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "SERVERS=", 8) == 0) {
      n = mdns_servers_parse(line + 8, out);
      break;
    }
  }
  fclose(f);
  return n < 0 ? 0 : n; /* an unparsable private file is not the user's typo: fall through */
}

static int mdns__from_resolv_conf(const struct mdns_discovery *d, struct mdns_server_list *out) {
  FILE *f = fopen(mdns__path(d->resolv_conf, "/etc/resolv.conf"), "re");
  memset(out, 0, sizeof *out);
  if (!f)
    return 0;
  char line[1024];
  while (fgets(line, sizeof line, f) && out->n < MDNS_SERVERS_MAX) {
    char *p = line + strspn(line, " \t");
    if (strncmp(p, "nameserver", 10) != 0 || (p[10] != ' ' && p[10] != '\t'))
      continue;
    p += 10;
    p += strspn(p, " \t");
    p[strcspn(p, " \t\r\n#;")] = '\0';
    struct mdns_server_list one;
    if (mdns_servers_parse(p, &one) != 1)
      continue; /* resolv.conf takes bare addresses only; skip what glibc would skip */
    bool dup = false;
    for (size_t i = 0; i < out->n && !dup; i++)
      dup = mdns__same_server(&out->s[i], &one.s[0]);
    if (!dup)
      out->s[out->n++] = one.s[0];
  }
  fclose(f);
  return (int)out->n;
}

int mdns_servers_discover(const char *ifname, unsigned ifindex, const char *configured, const struct mdns_discovery *d,
                          struct mdns_server_list *out, enum mdns_server_src *src) {
  struct mdns_discovery none = {0};
  if (!d)
    d = &none;
  if (!ifname || !out || !src)
    return -EINVAL;
  memset(out, 0, sizeof *out);
  *src = MDNS_SERVERS_NONE;

  char env[128];
  const char *(*get)(const char *) = d->getenv ? d->getenv : mdns__default_getenv;
  const char *val = mdns_servers_env_name(ifname, env, sizeof env) == 0 ? get(env) : NULL;
  if (val) { /* set, even to "": MHTTP_DNS_wwan0= turns the harvest off on wwan0 */
    int n = mdns_servers_parse(val, out);
    if (n < 0)
      return n;
    *src = n ? MDNS_SERVERS_ENV : MDNS_SERVERS_NONE;
    return n;
  }
  if (configured && *configured) {
    int n = mdns_servers_parse(configured, out);
    if (n < 0)
      return n;
    *src = n ? MDNS_SERVERS_CONFIG : MDNS_SERVERS_NONE;
    return n;
  }
  if (ifindex && mdns__from_resolved(d, ifindex, out) > 0) {
    *src = MDNS_SERVERS_RESOLVED;
    return (int)out->n;
  }
  char def[64];
  if (mdns_servers_default_iface(d, def, sizeof def) == 0 && strcmp(def, ifname) == 0 &&
      mdns__from_resolv_conf(d, out) > 0) {
    *src = MDNS_SERVERS_RESOLV_CONF;
    return (int)out->n;
  }
  memset(out, 0, sizeof *out);
  return 0;
}

void mdns_servers_format(const struct mdns_server_list *l, char *out, size_t len) {
  if (!len)
    return;
  out[0] = '\0';
  size_t used = 0;
  for (size_t i = 0; l && i < l->n && used < len; i++) {
    char a[INET6_ADDRSTRLEN];
    const struct mdns_server *s = &l->s[i];
    inet_ntop(s->family, &s->addr, a, sizeof a);
    int n;
    if (s->port == 53)
      n = snprintf(out + used, len - used, "%s%s", i ? ", " : "", a);
    else if (s->family == AF_INET6)
      n = snprintf(out + used, len - used, "%s[%s]:%u", i ? ", " : "", a, s->port);
    else
      n = snprintf(out + used, len - used, "%s%s:%u", i ? ", " : "", a, s->port);
    if (n < 0)
      break;
    used += (size_t)n;
  }
}

const char *mdns_servers_src_name(enum mdns_server_src src) {
  switch (src) {
  case MDNS_SERVERS_ENV: return "environment";
  case MDNS_SERVERS_CONFIG: return "config file";
  case MDNS_SERVERS_RESOLVED: return "systemd-resolved";
  case MDNS_SERVERS_RESOLV_CONF: return "resolv.conf (default-route interface)";
  case MDNS_SERVERS_NONE: break;
  }
  return "none";
}
