/* Unit tests of the link emulator's pure core: parsing, shaper timing, loss, ring, commands,
 * GSO segmentation. Time is always an argument, so every trace here is exact. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/linkemu/le_core.h"

#define MS LE_NS_PER_MS

/* ---- parsing ---- */

Test(parse, rates) {
  static const struct {
    const char *in;
    int rc;
    uint64_t bps;
  } t[] = {
      {"20mbit", 0, 20000000}, {"500kbit", 0, 500000},    {"1gbit", 0, 1000000000}, {"0", 0, 0},
      {"64000", 0, 64000},     {"2.5mbit", 0, 2500000},   {"1mbps", 0, 8000000},    {"10M", 0, 10000000},
      {"20MBit", 0, 20000000}, {"", -EINVAL, 0},          {"-5mbit", -EINVAL, 0},   {"abc", -EINVAL, 0},
      {"5 mbit", -EINVAL, 0},  {"5furlongs", -EINVAL, 0}, {"nan", -EINVAL, 0},      {"inf", -EINVAL, 0},
      {"10bit", -EINVAL, 0},   {"0x10mbit", -EINVAL, 0},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    uint64_t v = 12345;
    int rc = le_parse_rate(t[i].in, &v);
    cr_expect_eq(rc, t[i].rc, "rate '%s': rc %d", t[i].in, rc);
    if (!rc)
      cr_expect_eq(v, t[i].bps, "rate '%s' -> %lu", t[i].in, (unsigned long)v);
  }
}

Test(parse, sizes_ms_probs) {
  uint64_t v;
  cr_expect_eq(le_parse_size("64k", &v), 0);
  cr_expect_eq(v, 65536u);
  cr_expect_eq(le_parse_size("1500", &v), 0);
  cr_expect_eq(v, 1500u);
  cr_expect_eq(le_parse_size("2MiB", &v), 0);
  cr_expect_eq(v, 2u << 20);
  cr_expect_eq(le_parse_size("12x", &v), -EINVAL);
  cr_expect_eq(le_parse_ms("10", &v), 0);
  cr_expect_eq(v, 10 * MS);
  cr_expect_eq(le_parse_ms("0.25", &v), 0);
  cr_expect_eq(v, 250000u);
  cr_expect_eq(le_parse_ms("7ms", &v), 0);
  cr_expect_eq(v, 7 * MS);
  cr_expect_eq(le_parse_ms("7s", &v), -EINVAL);
  cr_expect_eq(le_parse_ms("-1", &v), -EINVAL);
  double p;
  cr_expect_eq(le_parse_prob("0.01", &p), 0);
  cr_expect_float_eq(p, 0.01, 1e-12);
  cr_expect_eq(le_parse_prob("1%", &p), 0);
  cr_expect_float_eq(p, 0.01, 1e-12);
  cr_expect_eq(le_parse_prob("1.5", &p), -EINVAL);
  cr_expect_eq(le_parse_prob("", &p), -EINVAL);
}

/* ---- shaper ---- */

static le_shaper mk(uint64_t rate, uint64_t delay_ms, uint64_t queue) {
  le_cfg c = {.rate_bps = rate, .delay_ns = delay_ms * MS, .queue_bytes = queue};
  le_shaper sh;
  le_shaper_init(&sh, &c, 42);
  return sh;
}

Test(shaper, tx_time) {
  cr_expect_eq(le_tx_ns(1500, 12000000), 1 * MS); /* 1500 B at 12 Mbit/s = 1 ms */
  cr_expect_eq(le_tx_ns(1500, 0), 0u);
  cr_expect_eq(le_tx_ns(125, 1000000000), 1000u);
}

Test(shaper, burst_is_serialised_at_the_rate_then_delayed) {
  le_shaper sh = mk(12000000, 10, 1 << 20);
  for (int i = 0; i < 20; i++) {
    uint64_t due = 0;
    cr_assert_eq(le_admit(&sh, 0, 1500, &due), LE_PASS);
    cr_expect_eq(due, (uint64_t)(i + 1) * MS + 10 * MS, "frame %d due %lu", i, (unsigned long)due);
  }
  /* 20 frames of 1 ms each: at t=5 ms, 15 remain (in bytes, rounded up). */
  cr_expect_eq(le_backlog(&sh, 5 * MS), 15u * 1500);
  cr_expect_eq(le_backlog(&sh, 30 * MS), 0u);
}

Test(shaper, idle_link_sends_at_arrival) {
  le_shaper sh = mk(12000000, 0, 0);
  uint64_t due;
  le_admit(&sh, 0, 1500, &due);
  cr_expect_eq(due, 1 * MS);
  le_admit(&sh, 100 * MS, 1500, &due); /* long after: no credit saved up */
  cr_expect_eq(due, 101 * MS);
}

Test(shaper, unlimited_rate_is_pure_delay) {
  le_shaper sh = mk(0, 25, 0);
  uint64_t due;
  for (int i = 0; i < 1000; i++) {
    cr_assert_eq(le_admit(&sh, (uint64_t)i * 1000, 9000, &due), LE_PASS);
    cr_assert_eq(due, (uint64_t)i * 1000 + 25 * MS);
  }
  cr_expect_eq(le_backlog(&sh, 0), 0u);
}

Test(shaper, drop_tail_at_queue_limit) {
  le_shaper sh = mk(12000000, 0, 10 * 1500);
  uint64_t due;
  int pass = 0, drop = 0;
  for (int i = 0; i < 30; i++) {
    le_verdict v = le_admit(&sh, 0, 1500, &due);
    pass += v == LE_PASS;
    drop += v == LE_DROP_QUEUE;
  }
  cr_expect_eq(pass, 10);
  cr_expect_eq(drop, 20);
  /* One frame has left after 1 ms: room for exactly one more. */
  cr_expect_eq(le_admit(&sh, 1 * MS, 1500, &due), LE_PASS);
  cr_expect_eq(le_admit(&sh, 1 * MS, 1500, &due), LE_DROP_QUEUE);
}

Test(shaper, empty_queue_takes_a_frame_above_the_limit) {
  le_shaper sh = mk(1000000, 0, 1000);
  uint64_t due;
  cr_expect_eq(le_admit(&sh, 0, 1500, &due), LE_PASS);
  cr_expect_eq(le_admit(&sh, 0, 100, &due), LE_DROP_QUEUE);
}

Test(shaper, default_queue_is_bdp_min_64k) {
  le_cfg c = {.rate_bps = 50000000, .delay_ns = 100 * MS};
  cr_expect_eq(le_queue_limit(&c), 1250000u); /* 50 Mbit/s x 200 ms / 8 */
  c = (le_cfg){.rate_bps = 5000000, .delay_ns = 10 * MS};
  cr_expect_eq(le_queue_limit(&c), LE_QUEUE_MIN_DEFAULT);
  c.queue_bytes = 3000;
  cr_expect_eq(le_queue_limit(&c), 3000u);
}

Test(shaper, long_run_rate_is_exact) {
  /* 100 000 frames of 1514-14 bytes at 50 Mbit/s: the last leaves at exactly n x 240 us. */
  le_shaper sh = mk(50000000, 0, 1u << 30);
  uint64_t due = 0;
  for (int i = 0; i < 100000; i++)
    le_admit(&sh, (uint64_t)i * 100000, 1500, &due); /* offered at 120 Mbit/s */
  cr_expect_eq(due, 100000ull * 240000);
}

Test(shaper, loss_rate_and_determinism) {
  le_cfg c = {.loss = 0.01};
  le_shaper a, b;
  le_shaper_init(&a, &c, 7);
  le_shaper_init(&b, &c, 7);
  int lost = 0;
  for (int i = 0; i < 200000; i++) {
    uint64_t d1, d2;
    le_verdict va = le_admit(&a, (uint64_t)i, 100, &d1);
    le_verdict vb = le_admit(&b, (uint64_t)i, 100, &d2);
    cr_assert_eq(va, vb);
    lost += va == LE_DROP_LOSS;
  }
  /* Binomial(200000, 0.01): sd ~ 44.5; allow 5 sd. */
  cr_expect(abs(lost - 2000) < 225, "lost %d of 200000", lost);
}

Test(shaper, jitter_stays_in_bounds_and_never_reorders) {
  le_cfg c = {.delay_ns = 20 * MS, .jitter_ns = 5 * MS};
  le_shaper sh;
  le_shaper_init(&sh, &c, 3);
  uint64_t prev = 0, min_off = UINT64_MAX, max_off = 0;
  for (int i = 0; i < 10000; i++) {
    uint64_t now = (uint64_t)i * 1 * MS, due;
    cr_assert_eq(le_admit(&sh, now, 100, &due), LE_PASS);
    cr_assert_geq(due, prev);
    prev = due;
    uint64_t off = due - now;
    min_off = off < min_off ? off : min_off;
    max_off = off > max_off ? off : max_off;
  }
  cr_expect_geq(min_off, 15 * MS);
  cr_expect_leq(max_off, 25 * MS + 5 * MS); /* clamping to keep order may add to an offset */
  cr_expect_lt(min_off, 16 * MS);
}

Test(shaper, reset_forgets_backlog) {
  le_shaper sh = mk(1000000, 0, 1 << 20);
  uint64_t due;
  for (int i = 0; i < 100; i++)
    le_admit(&sh, 0, 1500, &due);
  cr_expect_gt(le_backlog(&sh, 0), 0u);
  le_shaper_reset(&sh, 10 * MS);
  cr_expect_eq(le_backlog(&sh, 10 * MS), 0u);
  le_admit(&sh, 10 * MS, 125, &due);
  cr_expect_eq(due, 11 * MS);
}

Test(shaper, l3_bytes) {
  uint8_t f[64] = {0};
  f[12] = 0x08;
  cr_expect_eq(le_l3_bytes(f, 64, 1, 0), 50u);
  f[12] = 0x81;
  f[13] = 0x00;
  cr_expect_eq(le_l3_bytes(f, 64, 1, 0), 46u);
  f[12] = 0x08;
  f[13] = 0x00;
  /* GSO: 3 segments with 66 bytes of L2-L4 headers: 2 more copies of 52 L3 header bytes. */
  cr_expect_eq(le_l3_bytes(f, 64, 3, 66), 50u + 2 * 52);
}

/* ---- ring ---- */

Test(ring, fifo_wrap_and_full) {
  static uint8_t mem[4096] __attribute__((aligned(8)));
  le_ring r;
  le_ring_init(&r, mem, sizeof mem);
  /* Model: a FIFO of (due, len); random pushes and pops for many rounds. */
  uint64_t mdue[1024];
  uint32_t mlen[1024];
  size_t mh = 0, mt = 0;
  unsigned seed = 1;
  uint64_t due = 0;
  int pushed = 0, refused = 0;
  for (int step = 0; step < 200000; step++) {
    seed = seed * 1103515245u + 12345u;
    if ((seed >> 16) % 3 != 0) {
      uint32_t len = 1 + (seed >> 8) % 700;
      uint8_t *p = le_ring_push(&r, ++due, len, len);
      if (!p) {
        refused++;
        cr_assert_gt(r.frames, 0u, "an empty ring must take a small frame");
        continue;
      }
      memset(p, (int)(due & 0xff), len);
      mdue[mt % 1024] = due;
      mlen[mt % 1024] = len;
      mt++;
      pushed++;
      cr_assert_lt(mt - mh, 1024u);
    } else if (mh < mt) {
      const uint8_t *data;
      const le_rec *rec = le_ring_peek(&r, &data);
      cr_assert_not_null(rec);
      cr_assert_eq(rec->due, mdue[mh % 1024]);
      cr_assert_eq(rec->len, mlen[mh % 1024]);
      cr_assert_eq(data[0], (uint8_t)(rec->due & 0xff));
      cr_assert_eq(data[rec->len - 1], (uint8_t)(rec->due & 0xff));
      /* le_ring_next walks the same order as successive pops. */
      size_t k = mh + 1;
      for (const le_rec *n = le_ring_next(&r, rec, NULL); n; n = le_ring_next(&r, n, NULL), k++)
        cr_assert_eq(n->due, mdue[k % 1024]);
      cr_assert_eq(k, mt);
      le_ring_pop(&r);
      mh++;
    }
    cr_assert_eq(r.frames, mt - mh);
    cr_assert_leq(r.used, r.cap);
  }
  cr_expect_gt(pushed, 1000);
  cr_expect_gt(refused, 10);
}

Test(ring, frames_sum_and_clear) {
  static uint8_t mem[1024] __attribute__((aligned(8)));
  le_ring r;
  le_ring_init(&r, mem, sizeof mem);
  cr_expect_null(le_ring_peek(&r, NULL));
  cr_expect_not_null(le_ring_push(&r, 1, 100, 86));
  cr_expect_not_null(le_ring_push(&r, 2, 100, 86));
  cr_expect_eq(r.l3_bytes, 172u);
  cr_expect_null(le_ring_push(&r, 3, 2000, 2000)); /* larger than the area */
  le_ring_clear(&r);
  cr_expect_eq(r.frames, 0u);
  cr_expect_null(le_ring_peek(&r, NULL));
}

/* ---- commands ---- */

Test(cmd, parse_table) {
  static const struct {
    const char *line;
    int rc;
    le_cmd_kind kind;
    int dirs, mask;
  } t[] = {
      {"set ab delay=10 rate=20mbit", 0, LE_CMD_SET, LE_DIR_AB, LE_SET_DELAY | LE_SET_RATE},
      {"set ba loss=1%", 0, LE_CMD_SET, LE_DIR_BA, LE_SET_LOSS},
      {"set both queue=64k jitter=2", 0, LE_CMD_SET, LE_DIR_BOTH, LE_SET_QUEUE | LE_SET_JITTER},
      {"set rate=0\n", 0, LE_CMD_SET, LE_DIR_BOTH, LE_SET_RATE},
      {"down", 0, LE_CMD_DOWN, 0, 0},
      {"up\r\n", 0, LE_CMD_UP, 0, 0},
      {"stats", 0, LE_CMD_STATS, 0, 0},
      {"quit", 0, LE_CMD_QUIT, 0, 0},
      {"", -EINVAL, 0, 0, 0},
      {"set", -EINVAL, 0, 0, 0},
      {"set ab", -EINVAL, 0, 0, 0},
      {"set xy rate=1mbit", -EINVAL, 0, 0, 0},
      {"set rate=fast", -EINVAL, 0, 0, 0},
      {"set color=red", -EINVAL, 0, 0, 0},
      {"set rate", -EINVAL, 0, 0, 0},
      {"down now", -EINVAL, 0, 0, 0},
      {"reboot", -EINVAL, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    le_cmd c;
    char err[128] = "";
    int rc = le_cmd_parse(t[i].line, &c, err, sizeof err);
    cr_expect_eq(rc, t[i].rc, "'%s': rc %d (%s)", t[i].line, rc, err);
    if (rc) {
      cr_expect_gt(strlen(err), 0u, "'%s' needs a reason", t[i].line);
      cr_expect_null(strchr(err, '\n'));
      continue;
    }
    cr_expect_eq(c.kind, t[i].kind, "'%s'", t[i].line);
    if (c.kind == LE_CMD_SET) {
      cr_expect_eq(c.dirs, t[i].dirs, "'%s'", t[i].line);
      cr_expect_eq(c.mask, t[i].mask, "'%s'", t[i].line);
    }
  }
}

Test(cmd, apply_changes_only_given_keys) {
  le_cfg cfg = {.rate_bps = 1000000, .delay_ns = 5 * MS, .loss = 0.5, .queue_bytes = 9000};
  le_cmd c;
  cr_assert_eq(le_cmd_parse("set rate=20mbit loss=0", &c, NULL, 0), 0);
  le_cfg_apply(&cfg, &c);
  cr_expect_eq(cfg.rate_bps, 20000000u);
  cr_expect_eq(cfg.loss, 0.0);
  cr_expect_eq(cfg.delay_ns, 5 * MS);
  cr_expect_eq(cfg.queue_bytes, 9000u);
}

Test(cmd, stats_line) {
  le_stats st = {.frames = 3, .bytes = 4500, .drops_loss = 1, .drops_queue = 2, .drops_down = 4};
  char out[512];
  le_stats_format(out, sizeof out, "ab", &st, 77, 5);
  cr_expect_not_null(
      strstr(out, "ab.frames=3 ab.bytes=4500 ab.drops_loss=1 ab.drops_queue=2 ab.drops_down=4 ab.queue_bytes=77"));
  cr_expect_null(strchr(out, '\n'));
}

/* ---- GSO segmentation ---- */

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) << 16 | rd16(p + 2); }

/* An independent checksum: sum of 16-bit words, folded, complemented. */
static uint16_t ref_csum(const uint8_t *pseudo, size_t plen, const uint8_t *d, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i + 1 < plen; i += 2)
    s += rd16(pseudo + i);
  for (size_t i = 0; i < n; i += 2)
    s += i + 1 < n ? rd16(d + i) : (uint32_t)d[i] << 8;
  while (s >> 16)
    s = (s & 0xffff) + (s >> 16);
  return (uint16_t)~s;
}

/* Ethernet + IPv4/IPv6 + TCP(with 12 option bytes)/UDP super-frame with `pay` payload bytes. */
static size_t build_super(uint8_t *f, int v6, int tcp, size_t pay, size_t *l4off) {
  memset(f, 0, 14);
  f[12] = v6 ? 0x86 : 0x08;
  f[13] = v6 ? 0xdd : 0x00;
  uint8_t *ip = f + 14;
  size_t iph = v6 ? 40 : 20, l4h = tcp ? 32 : 8;
  memset(ip, 0, iph + l4h);
  if (v6) {
    ip[0] = 0x60;
    ip[6] = tcp ? 6 : 17;
    ip[7] = 64;
    for (int i = 0; i < 32; i++)
      ip[8 + i] = (uint8_t)(i * 7 + 1);
  } else {
    ip[0] = 0x45;
    ip[4] = 0x12;
    ip[5] = 0x34;
    ip[6] = 0x40;
    ip[8] = 64;
    ip[9] = tcp ? 6 : 17;
    memcpy(ip + 12, "\x0a\xd5\x01\x02\x0a\xd5\x01\x01", 8);
  }
  uint8_t *l4 = ip + iph;
  l4[0] = 0x1f;
  l4[1] = 0x90;
  l4[2] = 0xc3;
  l4[3] = 0x50;
  if (tcp) {
    memcpy(l4 + 4, "\xff\xff\xf0\x00", 4); /* seq close to wrapping */
    l4[12] = 8 << 4;                       /* 32-byte header */
    l4[13] = 0x80 | 0x10 | 0x08 | 0x01;    /* CWR ACK PSH FIN */
  }
  *l4off = 14 + iph;
  size_t hdr = *l4off + l4h;
  for (size_t i = 0; i < pay; i++)
    f[hdr + i] = (uint8_t)(i * 31 + 7);
  return hdr + pay;
}

static void check_segments(int v6, int tcp) {
  static uint8_t f[70000], out[2000];
  size_t l4off, pay = 5000, mss = 1448;
  size_t len = build_super(f, v6, tcp, pay, &l4off);
  le_gso_plan p;
  int kind = tcp ? (v6 ? LE_GSO_TCP6 : LE_GSO_TCP4) : LE_GSO_UDP_L4;
  cr_assert_eq(le_gso_plan_make(&p, f, len, kind, mss, l4off), 0);
  cr_assert_eq(p.segs, 4u); /* 1448 x 3 + 656 */
  size_t hdr = p.hdr_len, got = 0;
  for (unsigned i = 0; i < p.segs; i++) {
    size_t n = le_gso_segment(&p, f, len, i, out);
    size_t want = i + 1 < p.segs ? mss : pay - 3 * mss;
    cr_assert_eq(n, hdr + want, "segment %u length %zu", i, n);
    cr_assert_eq(memcmp(out + hdr, f + hdr + got, want), 0);
    uint8_t *ip = out + 14, *l4 = out + l4off;
    size_t l4len = n - l4off;
    uint8_t pseudo[40];
    size_t plen;
    if (v6) {
      cr_expect_eq(rd16(ip + 4), n - 14 - 40);
      memcpy(pseudo, ip + 8, 32);
      memset(pseudo + 32, 0, 8);
      pseudo[34] = (uint8_t)(l4len >> 8);
      pseudo[35] = (uint8_t)l4len;
      pseudo[39] = tcp ? 6 : 17;
      plen = 40;
    } else {
      cr_expect_eq(rd16(ip + 2), n - 14);
      cr_expect_eq(rd16(ip + 4), 0x1234 + i);
      cr_expect_eq(ref_csum(NULL, 0, ip, 20), 0, "IPv4 header checksum");
      memcpy(pseudo, ip + 12, 8);
      pseudo[8] = 0;
      pseudo[9] = tcp ? 6 : 17;
      pseudo[10] = (uint8_t)(l4len >> 8);
      pseudo[11] = (uint8_t)l4len;
      plen = 12;
    }
    cr_expect_eq(ref_csum(pseudo, plen, l4, l4len), 0, "L4 checksum of segment %u", i);
    if (tcp) {
      cr_expect_eq(rd32(l4 + 4), (uint32_t)(0xfffff000u + got), "seq of segment %u", i);
      uint8_t fl = l4[13];
      cr_expect_eq(!!(fl & 0x80), i == 0, "CWR on the first only");
      cr_expect_eq(!!(fl & 0x09), i + 1 == p.segs, "FIN/PSH on the last only");
      cr_expect(fl & 0x10, "ACK on all");
    } else {
      cr_expect_eq(rd16(l4 + 4), l4len);
    }
    got += want;
  }
  cr_expect_eq(got, pay);
}

Test(gso, tcp4) { check_segments(0, 1); }
Test(gso, tcp6) { check_segments(1, 1); }
Test(gso, udp4) { check_segments(0, 0); }
Test(gso, udp6) { check_segments(1, 0); }

Test(gso, rejects_malformed) {
  static uint8_t f[3000];
  size_t l4off;
  size_t len = build_super(f, 0, 1, 2000, &l4off);
  le_gso_plan p;
  cr_expect_eq(le_gso_plan_make(&p, f, len, LE_GSO_TCP6, 1448, l4off), -EINVAL); /* v4 frame */
  cr_expect_eq(le_gso_plan_make(&p, f, len, LE_GSO_TCP4, 0, l4off), -EINVAL);
  cr_expect_eq(le_gso_plan_make(&p, f, len, LE_GSO_TCP4, 1448, 20), -EINVAL);
  cr_expect_eq(le_gso_plan_make(&p, f, 40, LE_GSO_TCP4, 1448, l4off), -EINVAL);
  f[12] = 0x08;
  f[13] = 0x06; /* ARP */
  cr_expect_eq(le_gso_plan_make(&p, f, len, LE_GSO_TCP4, 1448, l4off), -EINVAL);
}
