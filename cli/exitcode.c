/* The mhttp command's words for every mhttp_code: curl's message beside the library's exit status (mhttp_exit_code), so scripts written for curl read mhttp's failures the same way. */
#include "exitcode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "url.h"

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

/* The words after the library's last ": " ("could not connect to h (a): Connection refused"). */
static const char *cli__reason(const char *detail, const char *otherwise) {
  const char *colon = detail ? strrchr(detail, ':') : NULL;
  return colon && colon[1] == ' ' && colon[2] ? colon + 2 : otherwise;
}

static void cli__timeout(const struct cli_failure *f, const struct cli__exit *e, char *buf, size_t cap) {
  unsigned long long ms = (unsigned long long)(f->elapsed * 1000 + 0.5);
  if (f->detail && !strncmp(f->detail, "connection to", 13))
    snprintf(buf, cap, "mhttp: (%d) Connection timed out after %llu milliseconds", e->code, ms);
  else if (f->total != UINT64_MAX)
    snprintf(buf, cap, "mhttp: (%d) Operation timed out after %llu milliseconds with %llu out of %llu bytes received",
             e->code, ms, (unsigned long long)f->received, (unsigned long long)f->total);
  else
    snprintf(buf, cap, "mhttp: (%d) Operation timed out after %llu milliseconds with %llu bytes received", e->code, ms,
             (unsigned long long)f->received);
}

int cli_exit_message(const struct cli_failure *f, char *buf, size_t cap) {
  const struct cli__exit ex = cli__lookup(f->code), *e = &ex;
  const char *detail = f->detail && *f->detail ? f->detail : NULL;
  int has_host = f->host && *f->host;
  if (f->code == MHTTP_E_RESOLVE && has_host)
    snprintf(buf, cap, "mhttp: (%d) %s: %s", e->code, e->text, f->host);
  else if (f->code == MHTTP_E_CONNECT && has_host)
    snprintf(buf, cap, "mhttp: (%d) %s to %s port %d after %llu ms: %s", e->code, e->text, f->host, f->port,
             (unsigned long long)(f->elapsed * 1000 + 0.5), cli__reason(detail, "Couldn't connect to server"));
  else if (f->code == MHTTP_E_TIMEOUT)
    cli__timeout(f, e, buf, cap);
  else if (f->code == MHTTP_E_HTTP && f->http_status > 0)
    snprintf(buf, cap, "mhttp: (%d) %s: %d", e->code, e->text, f->http_status);
  else if (detail && !strncasecmp(detail, e->text, strlen(e->text)))
    snprintf(buf, cap, "mhttp: (%d) %s%s", e->code, e->text, detail + strlen(e->text)); /* said once */
  else
    snprintf(buf, cap, "mhttp: (%d) %s%s%s", e->code, e->text, detail ? ": " : "", detail ? detail : "");
  return e->code;
}

int cli_url_port(const char *url) {
  char *p = cli_url_part(url, 0, CURLUPART_PORT, CURLU_DEFAULT_PORT);
  int port = p ? atoi(p) : 0;
  curl_free(p);
  return port;
}

void cli_url_host(const char *url, char *out, size_t cap) {
  char *h = cli_url_part(url, 0, CURLUPART_HOST, 0);
  const char *v = h ? h : "";
  size_t len = strlen(v);
  if (len >= 2 && v[0] == '[' && v[len - 1] == ']') /* an IPv6 literal, named without brackets */
    v++, len -= 2;
  if (cap)
    snprintf(out, cap, "%.*s", (int)len, v);
  curl_free(h);
}
