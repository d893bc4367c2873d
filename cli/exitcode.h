/* A transfer's outcome (mhttp_code) as the mhttp command reports it: curl's exit code and curl's kind of message. Pure. */
#ifndef CLI_EXITCODE_H
#define CLI_EXITCODE_H
#include <stddef.h>
#include <stdint.h>

#include "mhttp.h"

/* curl's exit code for code (aria2's 32 for a checksum mismatch); 0 for MHTTP_OK. */
int cli_exit_code(mhttp_code code);

/* What is known of a failure when it is reported. */
struct cli_failure {
  mhttp_code code;
  const char *host;   /* the URL's host, for resolve and connect errors ("" or NULL: none) */
  int port;           /* the URL's port, for connect errors (0: none) */
  int http_status;    /* for MHTTP_E_HTTP */
  const char *detail; /* mhttp_xfer_errmsg: the library's detail; "" or NULL when none */
  double elapsed;     /* seconds since the transfer started (connect errors, timeouts) */
  uint64_t received;  /* body bytes received by this transfer (timeouts) */
  uint64_t total;     /* the body's length, UINT64_MAX when unknown (timeouts) */
};

/* Writes "mhttp: (N) MESSAGE" (no newline) into buf in curl's words with what f knows:
 * "Failed to connect to HOST port PORT after N ms: REASON", "Operation timed out after N
 * milliseconds with X out of Y bytes received", the library's detail once (never curl's words
 * twice). Returns the exit code, as cli_exit_code. */
int cli_exit_message(const struct cli_failure *f, char *buf, size_t cap);

/* The host of an http(s) URL into out ("" when there is none): "a.test" from
 * "http://user@a.test:8080/x", "::1" from "http://[::1]/". */
void cli_url_host(const char *url, char *out, size_t cap);

/* The port of an http(s) URL: the one it names, else the scheme's (80, 443); 0 when neither. */
int cli_url_port(const char *url);

#endif
