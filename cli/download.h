/* `mhttp [OPTIONS] URL [MIRROR...]`: one transfer through the public API, driven from the command's own poll loop. */
#ifndef CLI_DOWNLOAD_H
#define CLI_DOWNLOAD_H

#include "opts.h"

/* Runs the transfer o describes; returns the exit code (0, or curl's code for the failure,
 * whose message went to stderr). */
int cli_download(const struct cli_opts *o);

#endif
