/* Formats one interface of `mhttp ifaces` (addresses with their host-wide metrics, DNS servers and where they came from) as text. Pure. */
#include <stdio.h>

#include "ifaces.h"
#include "progress.h"

static size_t cli__add(char *buf, size_t cap, size_t len, const char *fmt, const char *a, const char *b) {
  int n = snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, fmt, a, b);
  return n > 0 ? len + (size_t)n : len;
}

static void cli__metrics(const struct cli_iface_addr *a, char *out, size_t cap) {
  if (!a->has_metrics) {
    snprintf(out, cap, "no shared metrics");
    return;
  }
  char rate[16], min[24] = "-", med[24] = "-";
  cli_fmt_bytes(a->max_rate, rate, sizeof rate);
  if (a->srtt_min_us)
    snprintf(min, sizeof min, "%.1f ms", a->srtt_min_us / 1000.0);
  if (a->srtt_med_us)
    snprintf(med, sizeof med, "%.1f ms", a->srtt_med_us / 1000.0);
  snprintf(out, cap, "srtt min %s, median %s, max %s/s", min, med, a->max_rate > 0 ? rate : "-");
}

size_t cli_ifaces_format(const struct cli_iface_row *r, char *buf, size_t cap) {
  size_t len = cli__add(buf, cap, 0, "%s%s\n", r->name, "");
  for (unsigned i = 0; i < r->naddr; i++) {
    char m[96], lead[64];
    cli__metrics(&r->addr[i], m, sizeof m);
    snprintf(lead, sizeof lead, "  address  %-15s", r->addr[i].addr);
    len = cli__add(buf, cap, len, "%s  %s\n", lead, m);
  }
  if (r->dns[0])
    len = cli__add(buf, cap, len, "  dns      %s (%s)\n", r->dns, r->dns_src);
  else
    len = cli__add(buf, cap, len, "  dns      %s%s\n", "none (no per-interface resolution)", "");
  if (cap)
    buf[len < cap ? len : cap - 1] = 0;
  return len;
}
