/* Formats a transfer's and its paths' stats as one JSON object, escaping the strings that come from the system (interface names). */
#include "statsjson.h"

#include <stdarg.h>
#include <stdio.h>

struct cli__out {
  char *buf;
  size_t cap, len;
};

static void cli__printf(struct cli__out *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(o->len < o->cap ? o->buf + o->len : NULL, o->len < o->cap ? o->cap - o->len : 0, fmt, ap);
  va_end(ap);
  if (n > 0)
    o->len += (size_t)n;
}

static void cli__string(struct cli__out *o, const char *s) {
  cli__printf(o, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      cli__printf(o, "\\%c", c);
    else if (c < 0x20)
      cli__printf(o, "\\u%04x", c);
    else
      cli__printf(o, "%c", c);
  }
  cli__printf(o, "\"");
}

static void cli__cause(struct cli__out *o, const struct cli_cause *c) {
  cli__printf(o, "{\"iface\":");
  cli__string(o, c->iface);
  cli__printf(o, ",\"replica\":");
  cli__string(o, c->replica);
  cli__printf(o, ",\"mirror\":%u,\"exit\":%d,\"message\":", c->mirror, c->exit);
  cli__string(o, c->message);
  cli__printf(o, "}");
}

static void cli__paths(struct cli__out *o, const mhttp_path_stats *paths, unsigned np) {
  for (unsigned i = 0; i < np; i++) {
    const mhttp_path_stats *p = &paths[i];
    cli__printf(o, "%s{\"iface\":", i ? "," : "");
    cli__string(o, p->iface);
    cli__printf(o, ",\"replica\":");
    cli__string(o, p->replica);
    cli__printf(o, ",\"mirror\":%u,\"up\":%d,\"bytes\":%llu,\"rate\":%.0f,\"srtt_us\":%u,\"in_flight\":%u}", p->mirror,
                p->up, (unsigned long long)p->bytes, p->rate, p->srtt_us, p->in_flight);
  }
}

size_t cli_stats_json(const struct cli_stats_doc *d, char *buf, size_t cap) {
  struct cli__out o = {buf, cap, 0};
  const mhttp_xfer_stats *x = d->x;
  if (cap)
    buf[0] = 0;
  cli__printf(&o, "{\"event\":");
  cli__string(&o, d->event);
  if (d->cause) {
    cli__printf(&o, ",\"cause\":");
    cli__cause(&o, d->cause);
  }
  cli__printf(&o, ",\"http_status\":%d,\"total\":", x->http_status);
  if (x->total == UINT64_MAX)
    cli__printf(&o, "null");
  else
    cli__printf(&o, "%llu", (unsigned long long)x->total);
  cli__printf(&o,
              ",\"done\":%llu,\"fetched\":%llu,\"resumed\":%llu,\"rate\":%.0f,\"elapsed\":%.3f,"
              "\"split\":%d,\"paths\":[",
              (unsigned long long)x->done, (unsigned long long)x->fetched, (unsigned long long)x->resumed, x->rate,
              x->elapsed, x->split);
  cli__paths(&o, d->paths, d->np);
  cli__printf(&o, "],\"dropped\":[");
  for (unsigned i = 0; i < d->ndropped; i++) {
    cli__printf(&o, "%s", i ? "," : "");
    cli__cause(&o, &d->dropped[i]);
  }
  cli__printf(&o, "]}");
  return o.len;
}
