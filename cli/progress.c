/* Renders the progress bar and per-path lines from a stats snapshot, and the terminal frame that redraws them, without touching the terminal. */
#include "progress.h"

#include <stdio.h>
#include <string.h>

void cli_fmt_bytes(double bytes, char *buf, size_t cap) {
  static const char *unit[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) {
    snprintf(buf, cap, "%.0f B", bytes < 0 ? 0 : bytes);
    return;
  }
  int u = -1;
  while (bytes >= 1024 && u < 3) {
    bytes /= 1024;
    u++;
  }
  snprintf(buf, cap, "%.1f %s", bytes, unit[u]);
}

static void cli__fmt_eta(const mhttp_xfer_stats *x, char *buf, size_t cap) {
  if (x->rate <= 0 || x->total == UINT64_MAX || x->done > x->total) {
    snprintf(buf, cap, "--:--");
    return;
  }
  unsigned long s = (unsigned long)((double)(x->total - x->done) / x->rate + 0.5);
  if (s >= 3600)
    snprintf(buf, cap, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
  else
    snprintf(buf, cap, "%lu:%02lu", s / 60, s % 60);
}

/* Appends line (cut to width - 1 columns) and '\n' at *len. */
static void cli__put(char *buf, size_t cap, size_t *len, const char *line, unsigned width) {
  size_t n = strlen(line), max = width > 1 ? width - 1 : 0;
  if (n > max)
    n = max;
  if (*len + n + 2 > cap)
    return;
  memcpy(buf + *len, line, n);
  *len += n;
  buf[(*len)++] = '\n';
  buf[*len] = 0;
}

/* " 45% [=====>    ] 12.3 MiB/27.0 MiB 4.1 MiB/s eta 0:03": the bar takes what is left. */
static void cli__bar_line(const mhttp_xfer_stats *x, unsigned width, char *line, size_t cap) {
  char done[16], total[16], rate[16], eta[32], tail[128];
  cli_fmt_bytes((double)x->done, done, sizeof done);
  cli_fmt_bytes(x->rate, rate, sizeof rate);
  if (x->total == UINT64_MAX) {
    snprintf(line, cap, "  ?%% %s %s/s", done, rate);
    return;
  }
  cli_fmt_bytes((double)x->total, total, sizeof total);
  cli__fmt_eta(x, eta, sizeof eta);
  unsigned pct = x->total ? (unsigned)(x->done >= x->total ? 100 : x->done * 100 / x->total) : 100;
  snprintf(tail, sizeof tail, " %s/%s %s/s eta %s", done, total, rate, eta);
  int bar = (int)width - 1 - 5 - 2 - (int)strlen(tail);
  if (bar < 5) {
    snprintf(line, cap, "%3u%%%s", pct, tail);
    return;
  }
  if (bar > 200)
    bar = 200;
  char fill[201];
  int full = (int)(pct * (unsigned)bar / 100);
  for (int i = 0; i < bar; i++)
    fill[i] = i < full ? '=' : i == full ? '>' : ' ';
  fill[bar] = 0;
  snprintf(line, cap, "%3u%% [%s]%s", pct, fill, tail);
}

/* A path's server as its line names it: the address, a mirror's marked with its number. */
static void cli__server(const mhttp_path_stats *p, char *out, size_t cap) {
  if (p->mirror)
    snprintf(out, cap, "%s (mirror %u)", p->replica[0] ? p->replica : "-", p->mirror);
  else
    snprintf(out, cap, "%s", p->replica);
}

/* One path: interface, server (in a column `col` wide), rate, SRTT, share of the bytes. */
static void cli__path_line(const mhttp_path_stats *p, uint64_t sum, int col, char *line, size_t cap) {
  char rate[16], srtt[24], server[72];
  cli_fmt_bytes(p->rate, rate, sizeof rate);
  if (p->srtt_us)
    snprintf(srtt, sizeof srtt, "%.1f ms", p->srtt_us / 1000.0);
  else
    snprintf(srtt, sizeof srtt, "-");
  unsigned share = sum ? (unsigned)(p->bytes * 100 / sum) : 0;
  cli__server(p, server, sizeof server);
  snprintf(line, cap, "  %-8s %-*s %10s/s  srtt %-9s %3u%%%s", p->iface, col, server, rate, srtt, share,
           p->up ? "" : "  (down)");
}

unsigned cli_progress_lines(const mhttp_xfer_stats *x, const mhttp_path_stats *paths, unsigned np, unsigned width,
                            char *buf, size_t cap) {
  char line[512];
  size_t len = 0;
  if (!cap)
    return 0;
  buf[0] = 0;
  cli__bar_line(x, width, line, sizeof line);
  cli__put(buf, cap, &len, line, width);
  uint64_t sum = 0;
  int col = 15; /* an IPv4 address; wider when a server's name is (IPv6, a mirror's mark) */
  for (unsigned i = 0; i < np; i++) {
    char server[72];
    sum += paths[i].bytes;
    cli__server(&paths[i], server, sizeof server);
    if ((int)strlen(server) > col)
      col = (int)strlen(server);
  }
  unsigned lines = len ? 1 : 0;
  for (unsigned i = 0; i < np && lines; i++, lines++) {
    cli__path_line(&paths[i], sum, col, line, sizeof line);
    size_t before = len;
    cli__put(buf, cap, &len, line, width);
    if (len == before)
      break;
  }
  return lines;
}

size_t cli_progress_frame(unsigned prev_lines, const char *lines, char *buf, size_t cap) {
  size_t len = 0;
  int n = prev_lines ? snprintf(buf, cap, "\r\033[%uA", prev_lines) : 0;
  if (n < 0 || (size_t)n >= cap)
    return 0;
  len = (size_t)n;
  unsigned drawn = 0;
  for (const char *p = lines; *p;) {
    const char *nl = strchr(p, '\n');
    size_t l = nl ? (size_t)(nl - p) : strlen(p);
    if (len + l + 5 > cap)
      break;
    memcpy(buf + len, p, l);
    memcpy(buf + len + l, "\033[K\n", 4);
    len += l + 4;
    drawn++;
    p += l + (nl ? 1 : 0);
  }
  if (drawn < prev_lines && len + 4 <= cap) {
    memcpy(buf + len, "\033[J", 3);
    len += 3;
  }
  buf[len < cap ? len : cap - 1] = 0;
  return len;
}

int cli_progress_due(int never_drawn, uint64_t last_ms, uint64_t now_ms) {
  return never_drawn || now_ms - last_ms >= CLI_PROGRESS_MIN_MS;
}
