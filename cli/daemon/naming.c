/* File names and aria2 error codes of downloads (naming.h). */
#include "naming.h"

#include <stdio.h>
#include <string.h>

static int hexval(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

void dmn_name_from_uri(const char *uri, char *out, size_t outlen) {
  const char *p = strstr(uri, "://");
  p = p ? p + 3 : uri;
  size_t end = strcspn(p, "?#");
  const char *path = memchr(p, '/', end);
  size_t n = 0;
  if (path) {
    const char *last = path;
    for (const char *s = path; s < p + end; s++)
      if (*s == '/')
        last = s + 1;
    for (const char *s = last; s < p + end && n + 1 < outlen; s++) {
      int c = (unsigned char)*s;
      if (c == '%' && s + 2 < p + end && hexval(s[1]) >= 0 && hexval(s[2]) >= 0) {
        c = hexval(s[1]) * 16 + hexval(s[2]);
        s += 2;
      }
      out[n++] = (char)(c == '/' || c == 0 ? '_' : c);
    }
  }
  out[n] = '\0';
  if (!n || !strcmp(out, ".") || !strcmp(out, ".."))
    snprintf(out, outlen, "index.html");
}

int dmn_renamed(const char *path, unsigned n, char *out, size_t outlen) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  if (dot == base)
    dot = NULL; /* ".hidden" has no extension */
  size_t stem = dot ? (size_t)(dot - path) : strlen(path);
  int w = snprintf(out, outlen, "%.*s.%u%s", (int)stem, path, n, dot ? dot : "");
  return w < 0 || (size_t)w >= outlen ? -1 : 0;
}

int dmn_aria2_error(mhttp_code code, int http_status) {
  switch (code) {
  case MHTTP_OK: return 0;
  case MHTTP_E_TIMEOUT: return 2;
  case MHTTP_E_HTTP:
    if (http_status == 404)
      return 3;
    if (http_status == 401 || http_status == 403)
      return 24;
    return 22;
  case MHTTP_E_CONNECT:
  case MHTTP_E_PARTIAL: return 6;
  case MHTTP_E_RESUME: return 8;
  case MHTTP_E_WRITE:
  case MHTTP_E_SYSTEM: return 17;
  case MHTTP_E_RESOLVE: return 19;
  case MHTTP_E_PROTOCOL: return 22;
  case MHTTP_E_REDIRECTS: return 23;
  case MHTTP_E_CHECKSUM: return 32;
  default: return 1;
  }
}
