/* Pure logic of the link emulator: parsing, shaper arithmetic, frame ring, command parser. */
#include "le_core.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- value parsing ---- */

/* Parses a non-negative decimal number followed by a unit suffix; *unit points at the
 * suffix (possibly empty). Rejects empty input, signs, NaN and trailing garbage is left to
 * the caller's unit check. */
static int parse_num(const char *s, double *v, const char **unit) {
  if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+')
    return -EINVAL;
  char *end = NULL;
  errno = 0;
  double d = strtod(s, &end);
  if (end == s || errno || !isfinite(d) || d < 0)
    return -EINVAL;
  /* strtod accepts "inf", "nan" and hex floats: allow only plain decimals. */
  for (const char *p = s; p < end; p++)
    if (!isdigit((unsigned char)*p) && *p != '.' && *p != 'e' && *p != 'E' && *p != '-' && *p != '+')
      return -EINVAL;
  *v = d;
  *unit = end;
  return 0;
}

int le_parse_rate(const char *s, uint64_t *bps) {
  double v;
  const char *u;
  if (parse_num(s, &v, &u))
    return -EINVAL;
  static const struct {
    const char *name;
    double mult;
  } units[] = {
      {"", 1},       {"bit", 1},    {"bps", 8},        {"kbit", 1e3},        {"k", 1e3},
      {"kbps", 8e3}, {"mbit", 1e6}, {"m", 1e6},        {"mbps", 8e6},        {"gbit", 1e9},
      {"g", 1e9},    {"gbps", 8e9}, {"kibit", 1024.0}, {"mibit", 1048576.0}, {"gibit", 1073741824.0},
  };
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcasecmp(u, units[i].name) == 0) {
      double r = v * units[i].mult;
      if (r > 1e12 || (r > 0 && r < 1000)) /* 1 kbit/s .. 1 Tbit/s, or 0 = unlimited */
        return -EINVAL;
      *bps = (uint64_t)llround(r);
      return 0;
    }
  }
  return -EINVAL;
}

int le_parse_size(const char *s, uint64_t *bytes) {
  double v;
  const char *u;
  if (parse_num(s, &v, &u))
    return -EINVAL;
  double mult;
  if (!*u || !strcasecmp(u, "b"))
    mult = 1;
  else if (!strcasecmp(u, "k") || !strcasecmp(u, "kb") || !strcasecmp(u, "kib"))
    mult = 1024;
  else if (!strcasecmp(u, "m") || !strcasecmp(u, "mb") || !strcasecmp(u, "mib"))
    mult = 1024.0 * 1024;
  else if (!strcasecmp(u, "g") || !strcasecmp(u, "gb") || !strcasecmp(u, "gib"))
    mult = 1024.0 * 1024 * 1024;
  else
    return -EINVAL;
  double r = v * mult;
  if (r > 4.0 * 1024 * 1024 * 1024)
    return -EINVAL;
  *bytes = (uint64_t)llround(r);
  return 0;
}

int le_parse_ms(const char *s, uint64_t *ns) {
  double v;
  const char *u;
  if (parse_num(s, &v, &u))
    return -EINVAL;
  if (*u && strcasecmp(u, "ms"))
    return -EINVAL;
  if (v > 3600e3)
    return -EINVAL;
  *ns = (uint64_t)llround(v * 1e6);
  return 0;
}

int le_parse_prob(const char *s, double *p) {
  double v;
  const char *u;
  if (parse_num(s, &v, &u))
    return -EINVAL;
  if (!strcmp(u, "%"))
    v /= 100.0;
  else if (*u)
    return -EINVAL;
  if (v > 1.0)
    return -EINVAL;
  *p = v;
  return 0;
}

/* ---- PRNG ---- */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void le_rng_seed(le_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t le_rng_next(le_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double le_rng_unit(le_rng *r) { return (double)(le_rng_next(r) >> 11) * 0x1.0p-53; }

/* ---- shaper ---- */

void le_shaper_init(le_shaper *sh, const le_cfg *cfg, uint64_t seed) {
  memset(sh, 0, sizeof *sh);
  sh->cfg = *cfg;
  le_rng_seed(&sh->rng, seed);
}

uint64_t le_queue_limit(const le_cfg *cfg) {
  if (cfg->queue_bytes)
    return cfg->queue_bytes;
  /* rate (bit/s) x RTT (2 x one-way delay) / 8 */
  double bdp = (double)cfg->rate_bps * (2.0 * (double)cfg->delay_ns / 1e9) / 8.0;
  uint64_t q = (uint64_t)bdp;
  return q < LE_QUEUE_MIN_DEFAULT ? LE_QUEUE_MIN_DEFAULT : q;
}

uint64_t le_tx_ns(uint64_t bytes, uint64_t rate_bps) {
  if (!rate_bps)
    return 0;
  /* 128-bit: bytes x 8e9 overflows 64 bits for frames above ~2 GB of queue. */
  unsigned __int128 num = (unsigned __int128)bytes * 8u * LE_NS_PER_SEC + rate_bps / 2;
  return (uint64_t)(num / rate_bps);
}

uint64_t le_backlog(const le_shaper *sh, uint64_t now) {
  if (!sh->cfg.rate_bps || sh->busy_until <= now)
    return 0;
  unsigned __int128 b = (unsigned __int128)(sh->busy_until - now) * sh->cfg.rate_bps;
  return (uint64_t)((b + 8 * LE_NS_PER_SEC - 1) / (8 * LE_NS_PER_SEC));
}

le_verdict le_admit(le_shaper *sh, uint64_t now, uint64_t l3_bytes, uint64_t *deliver_at) {
  const le_cfg *c = &sh->cfg;
  /* Loss first, as netem does: a lost frame never occupies the queue. */
  if (c->loss > 0 && le_rng_unit(&sh->rng) < c->loss)
    return LE_DROP_LOSS;
  uint64_t start = now;
  if (c->rate_bps) {
    uint64_t backlog = le_backlog(sh, now);
    /* Drop-tail: an empty queue always takes one frame, even one above the limit. */
    if (backlog > 0 && backlog + l3_bytes > le_queue_limit(c))
      return LE_DROP_QUEUE;
    if (sh->busy_until > start)
      start = sh->busy_until;
    sh->busy_until = start + le_tx_ns(l3_bytes, c->rate_bps);
    start = sh->busy_until;
  }
  uint64_t delay = c->delay_ns;
  if (c->jitter_ns) {
    /* Uniform in [delay - jitter, delay + jitter], floored at 0. */
    double off = (le_rng_unit(&sh->rng) * 2.0 - 1.0) * (double)c->jitter_ns;
    double d = (double)delay + off;
    delay = d < 0 ? 0 : (uint64_t)d;
  }
  uint64_t due = start + delay;
  /* Never reorder: a frame leaves no earlier than the one before it. */
  if (due < sh->last_deliver)
    due = sh->last_deliver;
  sh->last_deliver = due;
  *deliver_at = due;
  return LE_PASS;
}

void le_shaper_reset(le_shaper *sh, uint64_t now) {
  sh->busy_until = now;
  sh->last_deliver = now;
}

uint64_t le_l3_bytes(const uint8_t *frame, size_t len, unsigned gso_segs, size_t hdr_len) {
  size_t l2 = 14;
  if (len >= 18 && ((frame[12] == 0x81 && frame[13] == 0x00) || (frame[12] == 0x88 && frame[13] == 0xa8)))
    l2 = 18;
  if (len <= l2)
    return 1; /* runt: still costs something so it cannot bypass the rate limiter */
  uint64_t l3 = len - l2;
  if (gso_segs > 1 && hdr_len > l2)
    l3 += (uint64_t)(gso_segs - 1) * (hdr_len - l2);
  return l3;
}

/* ---- GSO segmentation ---- */

uint32_t le_csum_add(uint32_t sum, const uint8_t *data, size_t len) {
  uint64_t s = sum;
  size_t i = 0;
  for (; i + 1 < len; i += 2)
    s += (uint32_t)(data[i] << 8 | data[i + 1]);
  if (i < len)
    s += (uint32_t)data[i] << 8;
  /* Folded to 16 bits (+carry) so callers may add small terms without overflow. */
  while (s >> 16)
    s = (s & 0xffff) + (s >> 16);
  return (uint32_t)s;
}

uint16_t le_csum_fold(uint32_t sum) {
  while (sum >> 16)
    sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t)~sum;
}

static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline void wr16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}
static inline uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void wr32(uint8_t *p, uint32_t v) {
  wr16(p, (uint16_t)(v >> 16));
  wr16(p + 2, (uint16_t)v);
}

int le_gso_plan_make(le_gso_plan *p, const uint8_t *f, size_t len, int kind, size_t gso_size, size_t csum_start) {
  memset(p, 0, sizeof *p);
  if (len < 14 || !gso_size)
    return -EINVAL;
  size_t l3 = 14;
  uint16_t et = rd16(f + 12);
  if (et == 0x8100 || et == 0x88a8) {
    if (len < 18)
      return -EINVAL;
    l3 = 18;
    et = rd16(f + 16);
  }
  int v6 = et == 0x86dd;
  if (!v6 && et != 0x0800)
    return -EINVAL;
  if ((kind == LE_GSO_TCP4 && v6) || (kind == LE_GSO_TCP6 && !v6))
    return -EINVAL;
  size_t l4 = csum_start;
  if (l4 < l3 + (v6 ? 40 : 20) || l4 >= len)
    return -EINVAL;
  if (!v6 && l4 != l3 + (size_t)(f[l3] & 0xf) * 4)
    return -EINVAL;
  size_t hdr;
  if (kind == LE_GSO_TCP4 || kind == LE_GSO_TCP6) {
    if (l4 + 20 > len)
      return -EINVAL;
    hdr = l4 + (size_t)(f[l4 + 12] >> 4) * 4;
  } else if (kind == LE_GSO_UDP_L4) {
    hdr = l4 + 8;
  } else {
    return -EINVAL;
  }
  if (hdr >= len)
    return -EINVAL;
  p->kind = kind;
  p->l3off = l3;
  p->l4off = l4;
  p->hdr_len = hdr;
  p->seg_size = gso_size;
  p->segs = (unsigned)((len - hdr + gso_size - 1) / gso_size);
  p->ipv6 = v6;
  return 0;
}

size_t le_gso_segment(const le_gso_plan *p, const uint8_t *f, size_t len, unsigned i, uint8_t *out) {
  size_t off = p->hdr_len + (size_t)i * p->seg_size;
  size_t pay = len - off < p->seg_size ? len - off : p->seg_size;
  size_t seglen = p->hdr_len + pay;
  memcpy(out, f, p->hdr_len);
  memcpy(out + p->hdr_len, f + off, pay);
  uint8_t *ip = out + p->l3off, *l4 = out + p->l4off;
  size_t l4len = seglen - p->l4off;
  uint32_t sum;
  int tcp = p->kind != LE_GSO_UDP_L4;
  if (!p->ipv6) {
    wr16(ip + 2, (uint16_t)(seglen - p->l3off));
    wr16(ip + 4, (uint16_t)(rd16(ip + 4) + i)); /* as the kernel's TSO does */
    wr16(ip + 10, 0);
    wr16(ip + 10, le_csum_fold(le_csum_add(0, ip, p->l4off - p->l3off)));
    sum = le_csum_add(0, ip + 12, 8);
  } else {
    wr16(ip + 4, (uint16_t)(seglen - p->l3off - 40));
    sum = le_csum_add(0, ip + 8, 32);
  }
  sum += (uint32_t)(tcp ? 6 : 17) + (uint32_t)l4len;
  if (tcp) {
    wr32(l4 + 4, rd32(l4 + 4) + (uint32_t)(i * p->seg_size));
    uint8_t flags = l4[13];
    if (i + 1 < p->segs)
      flags &= (uint8_t) ~(0x01 | 0x08); /* FIN and PSH only on the last segment */
    if (i > 0)
      flags &= (uint8_t)~0x80; /* CWR only on the first */
    l4[13] = flags;
    wr16(l4 + 16, 0);
    wr16(l4 + 16, le_csum_fold(le_csum_add(sum, l4, l4len)));
  } else {
    wr16(l4 + 4, (uint16_t)l4len);
    wr16(l4 + 6, 0);
    uint16_t c = le_csum_fold(le_csum_add(sum, l4, l4len));
    wr16(l4 + 6, c ? c : 0xffff);
  }
  return seglen;
}

/* ---- frame ring ---- */

#define REC_SIZE sizeof(le_rec)
static inline size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

void le_ring_init(le_ring *r, uint8_t *buf, size_t cap) {
  memset(r, 0, sizeof *r);
  r->buf = buf;
  r->cap = cap & ~(size_t)7;
}

void le_ring_clear(le_ring *r) {
  r->head = r->tail = r->used = r->frames = 0;
  r->l3_bytes = 0;
}

uint8_t *le_ring_push(le_ring *r, uint64_t due, uint32_t len, uint32_t l3) {
  size_t need = REC_SIZE + align8(len);
  if (r->frames == 0)
    le_ring_clear(r); /* restart at 0: keeps the area wrap-free while the link is idle */
  /* Invariant: tail == head only when the ring is empty, so "full" never looks "empty". */
  if (r->tail >= r->head) {
    /* Free space is [tail, cap) then [0, head). */
    if (r->tail + need < r->cap || (r->tail + need == r->cap && r->head > 0)) {
      /* fits before the end */
    } else {
      if (need >= r->head)
        return NULL;
      /* The rest of the area becomes padding: a marker when a header fits there, else the
       * reader treats fewer than REC_SIZE trailing bytes as implicit padding. */
      size_t pad = r->cap - r->tail;
      if (pad >= REC_SIZE) {
        le_rec *m = (le_rec *)(r->buf + r->tail);
        memset(m, 0, sizeof *m);
        m->pad = 1;
      }
      r->used += pad;
      r->tail = 0;
    }
  } else if (r->tail + need >= r->head) {
    return NULL;
  }
  le_rec *rec = (le_rec *)(r->buf + r->tail);
  rec->due = due;
  rec->len = len;
  rec->l3 = l3;
  rec->pad = 0;
  rec->reserved = 0;
  r->tail += need;
  if (r->tail == r->cap)
    r->tail = 0;
  r->used += need;
  r->frames++;
  r->l3_bytes += l3;
  return (uint8_t *)(rec + 1);
}

/* Offset of the first real record at or after `off` (skipping a wrap marker). */
static size_t skip_pad(const le_ring *r, size_t off) {
  if (r->cap - off < REC_SIZE)
    return 0;
  const le_rec *rec = (const le_rec *)(r->buf + off);
  return rec->pad ? 0 : off;
}

const le_rec *le_ring_peek(const le_ring *r, const uint8_t **data) {
  if (!r->frames)
    return NULL;
  const le_rec *rec = (const le_rec *)(r->buf + skip_pad(r, r->head));
  if (data)
    *data = (const uint8_t *)(rec + 1);
  return rec;
}

const le_rec *le_ring_next(const le_ring *r, const le_rec *prev, const uint8_t **data) {
  size_t off = (size_t)((const uint8_t *)prev - r->buf) + REC_SIZE + align8(prev->len);
  if (off >= r->cap)
    off = 0;
  if (off == r->tail)
    return NULL;
  const le_rec *rec = (const le_rec *)(r->buf + skip_pad(r, off));
  if ((const uint8_t *)rec == r->buf + r->tail)
    return NULL;
  if (data)
    *data = (const uint8_t *)(rec + 1);
  return rec;
}

void le_ring_pop(le_ring *r) {
  if (!r->frames)
    return;
  size_t off = skip_pad(r, r->head);
  if (off != r->head) {
    r->used -= r->cap - r->head;
    r->head = 0;
  }
  const le_rec *rec = (const le_rec *)(r->buf + off);
  size_t sz = REC_SIZE + align8(rec->len);
  r->l3_bytes -= rec->l3;
  r->head += sz;
  if (r->head >= r->cap)
    r->head = 0;
  r->used -= sz;
  r->frames--;
  if (!r->frames)
    le_ring_clear(r);
}

/* ---- control commands ---- */

static void set_err(char *err, size_t errlen, const char *fmt, const char *arg) {
  if (err && errlen)
    snprintf(err, errlen, fmt, arg);
}

int le_cmd_parse(const char *line, le_cmd *cmd, char *err, size_t errlen) {
  char buf[512];
  memset(cmd, 0, sizeof *cmd);
  size_t n = strlen(line);
  if (n >= sizeof buf) {
    set_err(err, errlen, "%s", "command too long");
    return -EINVAL;
  }
  memcpy(buf, line, n + 1);
  while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
    buf[--n] = 0;
  char *save = NULL;
  char *tok = strtok_r(buf, " \t", &save);
  if (!tok) {
    set_err(err, errlen, "%s", "empty command");
    return -EINVAL;
  }
  if (!strcmp(tok, "down") || !strcmp(tok, "up") || !strcmp(tok, "stats") || !strcmp(tok, "quit")) {
    cmd->kind = !strcmp(tok, "down")    ? LE_CMD_DOWN
                : !strcmp(tok, "up")    ? LE_CMD_UP
                : !strcmp(tok, "stats") ? LE_CMD_STATS
                                        : LE_CMD_QUIT;
    if (strtok_r(NULL, " \t", &save)) {
      set_err(err, errlen, "'%s' takes no arguments", tok);
      return -EINVAL;
    }
    return 0;
  }
  if (strcmp(tok, "set")) {
    set_err(err, errlen, "unknown command '%s'", tok);
    return -EINVAL;
  }
  cmd->kind = LE_CMD_SET;
  cmd->dirs = LE_DIR_BOTH;
  tok = strtok_r(NULL, " \t", &save);
  if (tok && !strchr(tok, '=')) {
    if (!strcmp(tok, "ab"))
      cmd->dirs = LE_DIR_AB;
    else if (!strcmp(tok, "ba"))
      cmd->dirs = LE_DIR_BA;
    else if (!strcmp(tok, "both"))
      cmd->dirs = LE_DIR_BOTH;
    else {
      set_err(err, errlen, "bad direction '%s' (ab, ba or both)", tok);
      return -EINVAL;
    }
    tok = strtok_r(NULL, " \t", &save);
  }
  for (; tok; tok = strtok_r(NULL, " \t", &save)) {
    char *eq = strchr(tok, '=');
    if (!eq) {
      set_err(err, errlen, "expected key=value, got '%s'", tok);
      return -EINVAL;
    }
    *eq = 0;
    const char *v = eq + 1;
    int rc;
    if (!strcmp(tok, "delay")) {
      rc = le_parse_ms(v, &cmd->val.delay_ns);
      cmd->mask |= LE_SET_DELAY;
    } else if (!strcmp(tok, "rate")) {
      rc = le_parse_rate(v, &cmd->val.rate_bps);
      cmd->mask |= LE_SET_RATE;
    } else if (!strcmp(tok, "loss")) {
      rc = le_parse_prob(v, &cmd->val.loss);
      cmd->mask |= LE_SET_LOSS;
    } else if (!strcmp(tok, "queue")) {
      rc = le_parse_size(v, &cmd->val.queue_bytes);
      cmd->mask |= LE_SET_QUEUE;
    } else if (!strcmp(tok, "jitter")) {
      rc = le_parse_ms(v, &cmd->val.jitter_ns);
      cmd->mask |= LE_SET_JITTER;
    } else {
      set_err(err, errlen, "unknown key '%s' (delay, rate, loss, queue, jitter)", tok);
      return -EINVAL;
    }
    if (rc) {
      char what[160];
      snprintf(what, sizeof what, "%s=%s", tok, v);
      set_err(err, errlen, "bad value in '%s'", what);
      return -EINVAL;
    }
  }
  if (!cmd->mask) {
    set_err(err, errlen, "%s", "set needs at least one of delay=, rate=, loss=, queue=, jitter=");
    return -EINVAL;
  }
  return 0;
}

void le_cfg_apply(le_cfg *cfg, const le_cmd *cmd) {
  if (cmd->mask & LE_SET_RATE)
    cfg->rate_bps = cmd->val.rate_bps;
  if (cmd->mask & LE_SET_DELAY)
    cfg->delay_ns = cmd->val.delay_ns;
  if (cmd->mask & LE_SET_LOSS)
    cfg->loss = cmd->val.loss;
  if (cmd->mask & LE_SET_QUEUE)
    cfg->queue_bytes = cmd->val.queue_bytes;
  if (cmd->mask & LE_SET_JITTER)
    cfg->jitter_ns = cmd->val.jitter_ns;
}

int le_stats_format(char *out, size_t outlen, const char *pfx, const le_stats *st, uint64_t queue_bytes,
                    uint64_t ring_frames) {
  return snprintf(out, outlen,
                  "%s.frames=%" PRIu64 " %s.bytes=%" PRIu64 " %s.drops_loss=%" PRIu64 " %s.drops_queue=%" PRIu64
                  " %s.drops_down=%" PRIu64 " %s.queue_bytes=%" PRIu64 " %s.rx_frames=%" PRIu64 " %s.drops_tx=%" PRIu64
                  " %s.inflight_frames=%" PRIu64,
                  pfx, st->frames, pfx, st->bytes, pfx, st->drops_loss, pfx, st->drops_queue, pfx, st->drops_down, pfx,
                  queue_bytes, pfx, st->rx_frames, pfx, st->drops_tx, pfx, ring_frames);
}
