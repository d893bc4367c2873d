/* The mhttp command's words for every mhttp_code: curl's message beside the library's exit status (mhttp_exit_code), so scripts written for curl read mhttp's failures the same way. */
#include "exitcode.h"

#include <stdio.h>
#include <string.h>

/* curl's message for each code (CURLE_* strerror or the line curl prints), indexed by
 * mhttp_code; the exit status itself is the library's mhttp_exit_code. */
static const char *const cli__texts[] = {
    [MHTTP_OK] = "No error",
    [MHTTP_E_INVAL] = "Failed initialization",
    [MHTTP_E_OPTION] = "Failed initialization",
    [MHTTP_E_NOMEM] = "Out of memory",
    [MHTTP_E_URL] = "URL using bad/illegal format or missing URL",
    [MHTTP_E_RESOLVE] = "Could not resolve host",
    [MHTTP_E_CONNECT] = "Failed to connect",
    [MHTTP_E_PROTOCOL] = "Weird server reply",
    [MHTTP_E_PARTIAL] = "Transferred a partial file",
    [MHTTP_E_HTTP] = "The requested URL returned error",
    [MHTTP_E_WRITE] = "Failure writing output to destination",
    [MHTTP_E_TIMEOUT] = "Operation timed out",
    [MHTTP_E_TLS] = "SSL connect error",
    [MHTTP_E_CERT] = "SSL certificate problem",
    [MHTTP_E_CHECKSUM] = "Checksum validation failed",
    [MHTTP_E_RESUME] = "Couldn't resume download",
    [MHTTP_E_CANCELED] = "Operation was aborted",
    [MHTTP_E_REDIRECTS] = "Maximum redirects followed",
    [MHTTP_E_SYSTEM] = "Failed initialization",
    [MHTTP_E_BUSY] = "Failed initialization",
    [MHTTP_E_INTERFACE] = "Failed binding local connection end",
    [MHTTP_E_CACERT] = "Problem with the SSL CA cert (path? access rights?)",
};

struct cli__exit {
  int code;
  const char *text;
};

static struct cli__exit cli__lookup(mhttp_code code) {
  unsigned n = sizeof cli__texts / sizeof cli__texts[0];
  const char *t = (unsigned)code < n && cli__texts[code] ? cli__texts[code] : "Unknown error";
  return (struct cli__exit){mhttp_exit_code(code), t};
}

int cli_exit_code(mhttp_code code) { return mhttp_exit_code(code); }

int cli_exit_message(mhttp_code code, const char *host, int http_status, const char *detail,
                     char *buf, size_t cap) {
  const struct cli__exit ex = cli__lookup(code), *e = &ex;
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
