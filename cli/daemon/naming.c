/* File names and aria2 error codes of downloads (naming.h). */
#include "naming.h"

#include <stdio.h>
#include <string.h>

#include "url.h"

/* aria2's util::isUtf8: RFC 3629's UTF-8 (no overlong form, no surrogate, nothing past
 * U+10FFFF) whose one-byte characters are printable or \b \t \n \f \r */
static int aria2_utf8(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned c = s[i], lo = 0x80, hi = 0xbf;
    size_t len;
    if ((c >= 0x20 && c <= 0x7e) || c == '\b' || c == '\t' || c == '\n' || c == '\f' || c == '\r') {
      i++;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf)
      len = 2;
    else if (c >= 0xe0 && c <= 0xef)
      len = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4)
      len = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else
      return 0;
    if (n - i < len || s[i + 1] < lo || s[i + 1] > hi)
      return 0;
    for (size_t k = 2; k < len; k++)
      if (s[i + k] < 0x80 || s[i + k] > 0xbf)
        return 0;
    i += len;
  }
  return 1;
}

/* RFC 3986's unreserved characters: what aria2's util::percentEncode leaves as they are */
static int unreserved(unsigned c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

/* out = the decoded name s as aria2's util::createSafePath writes it: valid UTF-8 keeps its
 * characters but '/' and the control characters (\b \t \n \f \r), written %XX
 * (fixTaintedBasename); anything else is written %XX but for the unreserved characters
 * (percentEncode). Either way no '/', no NUL, no control character is left. Truncated to
 * outlen - 1, never inside a %XX. */
static void safe_name(const unsigned char *s, size_t n, char *out, size_t outlen) {
  int utf8 = aria2_utf8(s, n);
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned c = s[i];
    int keep = utf8 ? c != '/' && c >= 0x20 && c != 0x7f : unreserved(c);
    char enc[4] = {(char)c, 0};
    if (!keep)
      snprintf(enc, sizeof enc, "%%%02X", c);
    size_t w = keep ? 1 : 3;
    if (o + w >= outlen)
      break;
    memcpy(out + o, enc, w);
    o += w;
  }
  out[o] = '\0';
}

void dmn_name_from_uri(const char *uri, char *out, size_t outlen) {
  /* aria2 names from the path as written: dot segments left, a space allowed */
  char *path = cli_url_part(uri, CURLU_NON_SUPPORT_SCHEME | CURLU_PATH_AS_IS | CURLU_ALLOW_SPACE, CURLUPART_PATH, 0);
  const char *seg = path ? strrchr(path, '/') : NULL;
  int len = 0;
  char *name = seg ? curl_easy_unescape(NULL, seg + 1, 0, &len) : NULL;
  if (name && len > 0)
    safe_name((const unsigned char *)name, (size_t)len, out, outlen);
  else
    snprintf(out, outlen, "index.html"); /* aria2's Request::DEFAULT_FILE */
  curl_free(name);
  curl_free(path);
}

int dmn_names_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  return !strcmp(base, ".") || !strcmp(base, "..");
}

int dmn_dir_name_error(int dir_existed, int cont, int overwrite) {
  if (!dir_existed)
    return 16; /* aria2 found no such file, made the directory, could not create the file */
  if (cont)
    return 15; /* it "resumed" the existing file, could not open it */
  return overwrite ? 16 : 0;
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
