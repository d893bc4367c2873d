/* Absolute http and https URLs parsed into what a request needs: host, port, Host header, origin-form target. */
#include "mh_url.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The port after the authority's colon (n digits at p): 0, or -1 when it is not 1-65535. An
 * empty port keeps the scheme's default. */
static int mh__url_port(const char *p, size_t n, struct mh_url *u) {
  unsigned long v = 0;
  if (!n)
    return 0;
  for (size_t i = 0; i < n; i++) {
    if (p[i] < '0' || p[i] > '9' || i >= 5)
      return -1;
    v = v * 10 + (unsigned long)(p[i] - '0');
  }
  if (v < 1 || v > 65535)
    return -1;
  u->portnum = (unsigned)v;
  return 0;
}

/* The authority "host[:port]" or "[v6][:port]" (n bytes at a) into u. 0 or -1. */
static int mh__url_authority(const char *a, size_t n, struct mh_url *u) {
  const char *colon, *hs = a, *he;
  if (n && a[0] == '[') {
    const char *rb = memchr(a, ']', n);
    if (!rb)
      return -1;
    hs = a + 1, he = rb;
    colon = rb + 1 < a + n ? rb + 1 : NULL;
    if (colon && *colon != ':')
      return -1;
  } else {
    colon = memchr(a, ':', n);
    he = colon ? colon : a + n;
  }
  if (he == hs || (size_t)(he - hs) >= sizeof u->host || memchr(a, '@', n) || n >= sizeof u->hostport)
    return -1;
  snprintf(u->host, sizeof u->host, "%.*s", (int)(he - hs), hs);
  u->portnum = u->tls ? 443 : 80;
  if (colon && mh__url_port(colon + 1, (size_t)(a + n - colon - 1), u) < 0)
    return -1;
  snprintf(u->port, sizeof u->port, "%u", u->portnum);
  snprintf(u->hostport, sizeof u->hostport, "%.*s", (int)n, a);
  for (const char *p = u->host; *p; p++)
    if ((unsigned char)*p <= ' ' || (unsigned char)*p == 0x7f || strchr("/?#%\\[]@", *p))
      return -1;
  return 0;
}

int mh_url_parse(const char *url, struct mh_url *u) {
  memset(u, 0, sizeof *u);
  const char *rest;
  if (!strncasecmp(url, "http://", 7))
    rest = url + 7;
  else if (!strncasecmp(url, "https://", 8))
    rest = url + 8, u->tls = 1;
  else
    return -1;
  size_t alen = strcspn(rest, "/?#");
  if (mh__url_authority(rest, alen, u) < 0)
    return -1;
  const char *path = rest + alen;
  size_t plen = strcspn(path, "#");
  for (size_t i = 0; i < plen; i++)
    if ((unsigned char)path[i] <= ' ' || path[i] == 0x7f)
      return -1;
  if (plen + 2 > sizeof u->path)
    return -1;
  snprintf(u->path, sizeof u->path, "%s%.*s", path[0] == '/' ? "" : "/", (int)plen, path);
  return 0;
}

int mh_url_same_origin(const struct mh_url *a, const struct mh_url *b) {
  return a->tls == b->tls && !strcasecmp(a->host, b->host) && a->portnum == b->portnum;
}
