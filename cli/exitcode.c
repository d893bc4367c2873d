/* Maps every mhttp_code to curl's exit code and words, so scripts written for curl read mhttp's failures the same way. */
#include "exitcode.h"

#include <stdio.h>
#include <string.h>

struct cli__exit {
  int code;
  const char *text;  /* curl's message (CURLE_* strerror or the line curl prints) */
};

/* Indexed by mhttp_code. Codes the header adds later fall back to 2 with the library's name. */
static const struct cli__exit cli__exits[] = {
    [MHTTP_OK] = {0, "No error"},
    [MHTTP_E_INVAL] = {2, "Failed initialization"},
    [MHTTP_E_OPTION] = {2, "Failed initialization"},
    [MHTTP_E_NOMEM] = {27, "Out of memory"},
    [MHTTP_E_URL] = {3, "URL using bad/illegal format or missing URL"},
    [MHTTP_E_RESOLVE] = {6, "Could not resolve host"},
    [MHTTP_E_CONNECT] = {7, "Failed to connect"},
    [MHTTP_E_PROTOCOL] = {8, "Weird server reply"},
    [MHTTP_E_PARTIAL] = {18, "Transferred a partial file"},
    [MHTTP_E_HTTP] = {22, "The requested URL returned error"},
    [MHTTP_E_WRITE] = {23, "Failure writing output to destination"},
    [MHTTP_E_TIMEOUT] = {28, "Operation timed out"},
    [MHTTP_E_TLS] = {35, "SSL connect error"},
    [MHTTP_E_CERT] = {60, "SSL certificate problem"},
    [MHTTP_E_CHECKSUM] = {32, "Checksum validation failed"},
    [MHTTP_E_RESUME] = {36, "Couldn't resume download"},
    [MHTTP_E_CANCELED] = {42, "Operation was aborted"},
    [MHTTP_E_REDIRECTS] = {47, "Maximum redirects followed"},
    [MHTTP_E_SYSTEM] = {2, "Failed initialization"},
    [MHTTP_E_BUSY] = {2, "Failed initialization"},
};
#define CLI__NEXITS (sizeof cli__exits / sizeof cli__exits[0])

static const struct cli__exit *cli__lookup(mhttp_code code) {
  static const struct cli__exit unknown = {2, "Unknown error"};
  return (unsigned)code < CLI__NEXITS ? &cli__exits[code] : &unknown;
}

int cli_exit_code(mhttp_code code) { return cli__lookup(code)->code; }

int cli_exit_message(mhttp_code code, const char *host, int http_status, const char *detail,
                     char *buf, size_t cap) {
  const struct cli__exit *e = cli__lookup(code);
  int has_detail = detail && *detail;
  if (code == MHTTP_E_RESOLVE && host && *host)
    snprintf(buf, cap, "mhttp: (%d) %s: %s", e->code, e->text, host);
  else if (code == MHTTP_E_CONNECT && host && *host)
    snprintf(buf, cap, "mhttp: (%d) %s to %s%s%s", e->code, e->text, host, has_detail ? ": " : "",
             has_detail ? detail : "");
  else if (code == MHTTP_E_HTTP && http_status > 0)
    snprintf(buf, cap, "mhttp: (%d) %s: %d", e->code, e->text, http_status);
  else if (has_detail && !strncmp(detail, e->text, strlen(e->text)))
    snprintf(buf, cap, "mhttp: (%d) %s", e->code, detail);  /* curl's own text already says it */
  else
    snprintf(buf, cap, "mhttp: (%d) %s%s%s", e->code, e->text, has_detail ? ": " : "",
             has_detail ? detail : "");
  return e->code;
}

void cli_url_host(const char *url, char *out, size_t cap) {
  out[0] = 0;
  const char *h = strstr(url, "://");
  if (!h || !cap)
    return;
  h += 3;
  size_t auth = strcspn(h, "/?#");
  const char *at = memchr(h, '@', auth);
  if (at) {
    auth -= (size_t)(at + 1 - h);
    h = at + 1;
  }
  size_t len;
  if (*h == '[') {
    const char *close = memchr(h, ']', auth);
    if (!close)
      return;
    h++;
    len = (size_t)(close - h);
  } else {
    len = strcspn(h, ":/?#");
  }
  if (len >= cap)
    len = cap - 1;
  memcpy(out, h, len);
  out[len] = 0;
}
