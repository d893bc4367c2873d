/* What the mhttp command checks before any transfer starts, as curl fails before its first byte: interfaces, the CA file, the output and --stats paths. */
#ifndef CLI_PREFLIGHT_H
#define CLI_PREFLIGHT_H
#include <stddef.h>

#include "opts.h"

/* 0 when path can be written: an existing writable file, or a new name in a writable
 * directory; else -1 with the reason (strerror) in why. Creates nothing. */
int cli_path_writable(const char *path, char *why, size_t cap);

/* Checks o before the first transfer: an unknown -i interface is curl's 45 ("Couldn't bind
 * to 'IF'"), an unreadable --cacert 77, an unwritable -o/-O file or --stats file 23; warns
 * (unless -s) of outputs given beyond the URLs. 0, or the exit code with its message printed
 * (unless -s). */
int cli_preflight(const struct cli_opts *o);

#endif
