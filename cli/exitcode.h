/* A transfer's outcome (mhttp_code) as the mhttp command reports it: curl's exit code and curl's kind of message. Pure. */
#ifndef CLI_EXITCODE_H
#define CLI_EXITCODE_H
#include <stddef.h>

#include "mhttp.h"

/* curl's exit code for code (aria2's 32 for a checksum mismatch); 0 for MHTTP_OK. */
int cli_exit_code(mhttp_code code);

/* Writes "mhttp: (N) MESSAGE" (no newline) into buf, curl's words filled in with what is known:
 * host (the URL's host, for resolve and connect errors), http_status (for MHTTP_E_HTTP) and
 * detail (mhttp_xfer_errmsg: the library's detail; "" or NULL when none). Returns the exit
 * code, as cli_exit_code. */
int cli_exit_message(mhttp_code code, const char *host, int http_status, const char *detail,
                     char *buf, size_t cap);

/* The host of an http(s) URL into out ("" when there is none): "a.test" from
 * "http://user@a.test:8080/x", "::1" from "http://[::1]/". */
void cli_url_host(const char *url, char *out, size_t cap);

#endif
