/* How the daemon names a download's file (aria2's rules: the URI's last path segment made safe as aria2 makes it, index.html, name.N.ext when taken, "." and "..") and numbers a failure (aria2's errorCode for an mhttp_code). Pure. */
#ifndef DMN_NAMING_H
#define DMN_NAMING_H
#include <stddef.h>

#include "mhttp.h"

/* The file name aria2c 1.36 gives uri (no out option, no Content-Disposition): the last segment
 * of its path as libcurl reads it (without query or fragment), percent-decoded, "index.html" when
 * that is empty or libcurl cannot read uri; then written as aria2's util::createSafePath writes
 * it: valid UTF-8 as it is but '/' -> "%2F" and \b \t \n \f \r -> "%08" ... "%0D"; any other
 * byte string percent-encoded but for A-Z a-z 0-9 - . _ ~ ("%00", "%FF", "%20").
 * Safety: the name never holds '/', NUL or a control character, so dir/name stays in dir; but,
 * as aria2's, it can be "." or ".." (from "..", "%2E%2E"): dmn_names_dir tells, and such a path
 * is never a file's (dmn_dir_name_error). Always fits out (truncated to outlen - 1, never inside
 * a %XX). */
void dmn_name_from_uri(const char *uri, char *out, size_t outlen);
/* 1 when path's last component is "." or "..": it names a directory (the one it is in, or that
 * one's parent), never a file the daemon may open. */
int dmn_names_dir(const char *path);
/* What aria2c 1.36 does with a file path whose last component is "." or "..", by what it finds:
 * dir_existed, the directory of that path existed before the download; cont, continue=true;
 * overwrite, allow-overwrite=true. 0: it renames it as a taken name (dmn_renamed: "..1.",
 * "..1"); else its errorCode ("Download aborted."): 16 when the directory did not exist (aria2
 * makes it, then cannot create the file) or with overwrite, 15 with cont (aria2 resumes the
 * "file" when the download is at least the directory's st_size, renames it when smaller: the
 * daemon picks its name before it knows the size). */
int dmn_dir_name_error(int dir_existed, int cont, int overwrite);
/* aria2's auto-file-renaming: "dir/name.ext" -> "dir/name.N.ext" ("dir/name.N" without an
 * extension). -1 when it does not fit out. */
int dmn_renamed(const char *path, unsigned n, char *out, size_t outlen);
/* aria2's errorCode for a transfer's failure (http_status: the origin's status, 0 if none). */
int dmn_aria2_error(mhttp_code code, int http_status);

#endif
