/* The progress output of one download on stderr: the redrawn bar on a terminal, JSON lines with --progress-json, nothing otherwise. */
#ifndef CLI_DISPLAY_H
#define CLI_DISPLAY_H
#include <stdint.h>

#include "mhttp.h"
#include "statsjson.h"

#define CLI_MAX_CAUSES 32

struct cli_display {
  int bar;                                  /* drawing the bar (stderr is a terminal, not -q, --progress=bar) */
  int json;                                 /* --progress-json */
  int drawn;                                /* a frame was drawn */
  unsigned lines;                           /* lines of the last frame */
  uint64_t last_ms;                         /* when it was drawn */
  struct cli_cause dropped[CLI_MAX_CAUSES]; /* why paths, mirrors, replicas left (the first ones) */
  unsigned ndropped;
};

/* Decides what to show: bar only when stderr is a terminal. */
void cli_display_init(struct cli_display *d, int want_bar, int want_json);

/* An event of the transfer x: a JSON line for progress/path/complete/error events with
 * --progress-json (cause: a path-down event's, else NULL); a redraw of the bar (at most every
 * CLI_PROGRESS_MIN_MS unless force). */
void cli_display_event(struct cli_display *d, const mhttp_xfer *x, const char *event, const struct cli_cause *cause,
                       int force);

/* A line for the user (a warning) on stderr: the bar is erased first and drawn again below it. */
void cli_display_note(struct cli_display *d, const char *line);

/* The JSON object of x's stats now with d's recorded causes (--stats, --progress-json). */
size_t cli_display_json(const struct cli_display *d, const mhttp_xfer *x, const char *event,
                        const struct cli_cause *cause, char *buf, size_t cap);

/* The transfer ended: a last frame stays on screen when it completed, is erased when not. */
void cli_display_end(struct cli_display *d, const mhttp_xfer *x, int ok);

/* The transfer's stats (up to 16 paths) into *xs / ps; returns the number of paths. */
unsigned cli_display_snapshot(const mhttp_xfer *x, mhttp_xfer_stats *xs, mhttp_path_stats *ps);

#endif
