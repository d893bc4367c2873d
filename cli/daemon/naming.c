/* File names and aria2 error codes of downloads (naming.h). */
#include "naming.h"

#include <stdio.h>
#include <string.h>

#include "url.h"

/* out = name, with a '/' or NUL in it (decoded from %2F, %00) made '_'; truncated to fit */
static void copy_safe(const char *name, size_t len, char *out, size_t outlen) {
  size_t n = 0;
  for (; n < len && n + 1 < outlen; n++)
    out[n] = name[n] == '/' || name[n] == 0 ? '_' : name[n];
  out[n] = '\0';
}

void dmn_name_from_uri(const char *uri, char *out, size_t outlen) {
  /* aria2 names from the path as written: dot segments left, a space allowed */
  char *path = cli_url_part(uri, CURLU_NON_SUPPORT_SCHEME | CURLU_PATH_AS_IS | CURLU_ALLOW_SPACE, CURLUPART_PATH, 0);
  const char *seg = path ? strrchr(path, '/') : NULL;
  int len = 0;
  char *name = seg ? curl_easy_unescape(NULL, seg + 1, 0, &len) : NULL;
  copy_safe(name ? name : "", name ? (size_t)len : 0, out, outlen);
  curl_free(name);
  curl_free(path);
  if (!*out || !strcmp(out, ".") || !strcmp(out, ".."))
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
