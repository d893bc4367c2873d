/* The MHTTP_STATS line of a split and its list of fallbacks. */
#include "split_core.h"
#include "mh_clock.h"
#include "mh_config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void mh__note(struct mh_split *sp, const char *what) {
  size_t l = strlen(sp->report.fallbacks);
  if (l + strlen(what) + 2 < sizeof sp->report.fallbacks)
    snprintf(sp->report.fallbacks + l, sizeof sp->report.fallbacks - l, "%s%s", l ? "," : "", what);
}

void mh__note_pooled(struct mh_split *sp) { sp->report.pooled++; }

/* Writes the object's MHTTP_STATS line, once. */
void mh__stats(struct mh_split *sp, enum mh_split_end end) {
  const char *path = sp->cfg->stats;
  if (!path[0] || sp->report.done)
    return;
  sp->report.done = 1;
  char line[2048], size[24] = "null"; /* null: the probe did not tell (relayed) */
  static const char *const ends[] = {"running", "relay", "ok", "reset", "eof"};
  if (sp->total)
    snprintf(size, sizeof size, "%" PRIu64, sp->total);
  /* the wall-clock start lets the lines of parallel objects (and processes) be laid out on
   * one timeline */
  uint64_t took = mh_now_us() - sp->t_start_us;
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  double start = (double)wall.tv_sec + wall.tv_nsec / 1e9 - took / 1e6;
  int n =
      snprintf(line, sizeof line, "{\"host\":\"%s\",\"size\":%s,\"result\":\"%s\",\"start\":%.3f,\"duration_ms\":%.1f,",
               sp->rq.host, size, ends[end], start, took / 1000.0);
  n += mh__probe_stats(sp, line + n, sizeof line - (size_t)n);
  n += snprintf(line + n, sizeof line - (size_t)n, ",\"paths\":[");
  n = mh__path_stats_json(sp, line, sizeof line, n);
  n += snprintf(line + n, sizeof line - (size_t)n, "],\"connections\":%d,\"pooled\":%d,", sp->nlegs, sp->report.pooled);
  if (sp->rq.span.on && sp->total) /* the program's own Range: size is its span's */
    n += snprintf(line + n, sizeof line - (size_t)n, "\"span\":[%" PRIu64 ",%" PRIu64 "],", sp->rq.span.first,
                  sp->rq.span.first + sp->total - 1);
  n += snprintf(line + n, sizeof line - (size_t)n, "\"fallbacks\":[");
  const char *f = sp->report.fallbacks;
  int first = 1;
  while (*f && n < (int)sizeof line - 64) {
    size_t l = strcspn(f, ",");
    n += snprintf(line + n, sizeof line - (size_t)n, "%s\"%.*s\"", first ? "" : ",", (int)l, f);
    first = 0;
    f += l + (f[l] == ',');
  }
  n += snprintf(line + n, sizeof line - (size_t)n, "]");
  n = (int)mh__plan_json(sp, line, sizeof line - 4, (size_t)n);
  n += snprintf(line + n, sizeof line - (size_t)n, "}\n");
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  (void)!write(fd, line, (size_t)n);
  close(fd);
}
