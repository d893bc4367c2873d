/* The progress display: lines rendered as a pure function of a stats snapshot and the terminal width, and the escape sequences that redraw them in place. */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H
#include <stddef.h>
#include <stdint.h>

#include "mhttp.h"

/* Redraws at most this often (5 a second). */
#define CLI_PROGRESS_MIN_MS 200u

/* "512 B", "1.5 KiB", "12.3 MiB", "1.0 GiB" into buf. */
void cli_fmt_bytes(double bytes, char *buf, size_t cap);

/* The display for snapshot (x, paths[0..np)) at width columns: a bar line, then one line per
 * path (interface, server address and "(mirror K)" for the K-th mirror, rate, SRTT, share of
 * the bytes), each '\n'-terminated and at most
 * width - 1 characters (the last column would wrap on some terminals). Returns the number of
 * lines written into buf (0 when cap is too small for anything). */
unsigned cli_progress_lines(const mhttp_xfer_stats *x, const mhttp_path_stats *paths, unsigned np, unsigned width,
                            char *buf, size_t cap);

/* What to write to the terminal to replace the prev_lines drawn last time (0: nothing drawn
 * yet) with lines (cli_progress_lines' output, may be "" to erase): cursor up, each line then
 * clear-to-end-of-line, clear below when the new block is shorter. Returns its length. */
size_t cli_progress_frame(unsigned prev_lines, const char *lines, char *buf, size_t cap);

/* 1 when a redraw at now_ms is allowed after one at last_ms (never_drawn: always). */
int cli_progress_due(int never_drawn, uint64_t last_ms, uint64_t now_ms);

#endif
