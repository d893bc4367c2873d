/* First-write sniffing: known method + space + a request target, and " HTTP/1." before the first line end when it is visible. */
#include "shim_sniff.h"

#include <string.h>

static const char *const shim__methods[] = {"GET ",    "HEAD ",    "POST ",  "PUT ",
                                            "DELETE ", "OPTIONS ", "PATCH ", "TRACE "};

enum shim_sniff shim_sniff_http(const char *p, size_t n) {
  if (n == 0)
    return SHIM_SNIFF_MORE;
  for (size_t i = 0; i < sizeof shim__methods / sizeof *shim__methods; i++) {
    const char *m = shim__methods[i];
    size_t ml = strlen(m);
    if (n <= ml) {
      if (!memcmp(p, m, n))
        return SHIM_SNIFF_HTTP;
      continue;
    }
    if (memcmp(p, m, ml))
      continue;
    char t = p[ml];
    /* origin-form "/", asterisk-form "*", absolute-form "http://" (the program talks to a proxy) */
    if (t != '/' && t != '*' && !(t >= 'a' && t <= 'z') && !(t >= 'A' && t <= 'Z'))
      return SHIM_SNIFF_NO;
    const char *nl = memchr(p + ml, '\n', n - ml);
    if (!nl)
      return SHIM_SNIFF_HTTP;
    size_t line = (size_t)(nl - p);
    if (line > 0 && p[line - 1] == '\r')
      line--;
    if (line < ml + 1 + 9)
      return SHIM_SNIFF_NO;
    const char *v = p + line - 8; /* "HTTP/1.x" */
    return !memcmp(v - 1, " HTTP/1.", 8) && v[7] >= '0' && v[7] <= '9' ? SHIM_SNIFF_HTTP : SHIM_SNIFF_NO;
  }
  return SHIM_SNIFF_NO;
}
