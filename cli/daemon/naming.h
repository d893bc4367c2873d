/* How the daemon names a download's file (aria2's rules: the URI's last path segment, index.html, name.N.ext when taken) and numbers a failure (aria2's errorCode for an mhttp_code). Pure. */
#ifndef DMN_NAMING_H
#define DMN_NAMING_H
#include <stddef.h>

#include "mhttp.h"

/* The file name aria2 would give uri: the last segment of its path as libcurl reads it (without
 * query or fragment), percent-decoded; "index.html" when that is empty, "." or "..", or libcurl
 * cannot read uri; a '/' or NUL decoded from %2F or %00 becomes '_'. Always fits out (truncated
 * to outlen - 1). */
void dmn_name_from_uri(const char *uri, char *out, size_t outlen);
/* aria2's auto-file-renaming: "dir/name.ext" -> "dir/name.N.ext" ("dir/name.N" without an
 * extension). -1 when it does not fit out. */
int dmn_renamed(const char *path, unsigned n, char *out, size_t outlen);
/* aria2's errorCode for a transfer's failure (http_status: the origin's status, 0 if none). */
int dmn_aria2_error(mhttp_code code, int http_status);

#endif
