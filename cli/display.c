/* Draws the progress of one download on stderr: throttled in-place redraws of progress.c's lines on a terminal, or JSON lines. */
#include "display.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "statsjson.h"

#define CLI__MAX_PATHS 16u

static uint64_t cli__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static unsigned cli__width(void) {
  struct winsize ws;
  if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
    return ws.ws_col;
  return 80;
}

void cli_display_init(struct cli_display *d, int want_bar, int want_json) {
  memset(d, 0, sizeof *d);
  d->bar = want_bar && isatty(2);
  d->json = want_json;
}

unsigned cli_display_snapshot(const mhttp_xfer *x, mhttp_xfer_stats *xs, mhttp_path_stats *ps) {
  memset(xs, 0, sizeof *xs);
  xs->size = sizeof *xs;
  xs->total = UINT64_MAX;
  mhttp_xfer_stats_get(x, xs);
  for (unsigned i = 0; i < CLI__MAX_PATHS; i++) {
    memset(&ps[i], 0, sizeof ps[i]);
    ps[i].size = sizeof ps[i];
  }
  unsigned n = 0;
  if (mhttp_xfer_path_stats(x, ps, CLI__MAX_PATHS, &n) != MHTTP_OK)
    return 0;
  return n < CLI__MAX_PATHS ? n : CLI__MAX_PATHS;
}

static void cli__draw(struct cli_display *d, const mhttp_xfer_stats *xs, const mhttp_path_stats *ps, unsigned np) {
  char lines[4096], frame[8192];
  unsigned n = cli_progress_lines(xs, ps, np, cli__width(), lines, sizeof lines);
  size_t len = cli_progress_frame(d->drawn ? d->lines : 0, lines, frame, sizeof frame);
  fwrite(frame, 1, len, stderr);
  fflush(stderr);
  d->lines = n;
  d->drawn = 1;
}

size_t cli_display_json(const struct cli_display *d, const mhttp_xfer *x, const char *event,
                        const struct cli_cause *cause, char *buf, size_t cap) {
  mhttp_xfer_stats xs;
  mhttp_path_stats ps[CLI__MAX_PATHS];
  unsigned np = cli_display_snapshot(x, &xs, ps);
  struct cli_stats_doc doc = {event, cause, &xs, ps, np, d->dropped, d->ndropped};
  return cli_stats_json(&doc, buf, cap);
}

void cli_display_event(struct cli_display *d, const mhttp_xfer *x, const char *event, const struct cli_cause *cause,
                       int force) {
  if (!d->bar && !d->json)
    return;
  uint64_t now = cli__now_ms();
  int draw = d->bar && (force || cli_progress_due(!d->drawn, d->last_ms, now));
  if (d->json) {
    static char line[16384];
    size_t len = cli_display_json(d, x, event, cause, line, sizeof line);
    if (len < sizeof line)
      fprintf(stderr, "%s\n", line);
  }
  if (draw) {
    mhttp_xfer_stats xs;
    mhttp_path_stats ps[CLI__MAX_PATHS];
    unsigned np = cli_display_snapshot(x, &xs, ps);
    cli__draw(d, &xs, ps, np);
    d->last_ms = now;
  }
}

static void cli__erase(struct cli_display *d) {
  char frame[64];
  size_t len = cli_progress_frame(d->lines, "", frame, sizeof frame);
  fwrite(frame, 1, len, stderr);
  d->drawn = 0;
}

void cli_display_note(struct cli_display *d, const char *line) {
  if (d->bar && d->drawn)
    cli__erase(d); /* the next redraw starts below the note */
  fprintf(stderr, "%s\n", line);
  fflush(stderr);
}

void cli_display_end(struct cli_display *d, const mhttp_xfer *x, int ok) {
  if (!d->bar || !d->drawn)
    return;
  if (ok) {
    mhttp_xfer_stats xs;
    mhttp_path_stats ps[CLI__MAX_PATHS];
    unsigned np = cli_display_snapshot(x, &xs, ps);
    for (unsigned i = 0; i < np; i++)
      ps[i].up = 1; /* every path is retired at the end: "(down)" would read as a failure */
    cli__draw(d, &xs, ps, np);
    return;
  }
  cli__erase(d);
  fflush(stderr);
}
