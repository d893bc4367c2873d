/* Connect-time decision (mh_choose_decide): one row per case, the facts the engine gathered in, the exact pick, size and round-robin cursor out. */
#include <criterion/criterion.h>

#include <string.h>

#include "mh_choose.h"
#include "mh_config.h"

/*
 * Two interfaces, as tests/multihttp/test_policy_glue.c's asym: 0 = wifi0 (10 ms, 250 000 B/s,
 * 4 µs per byte), 1 = lte0 (100 ms, 2 500 000 B/s, 0.4 µs per byte), both routable. Default
 * config (eaf, splitting on, ports 80 and 8080, probe sized per path).
 *
 * A probe on wifi0's path is its floor, 14 600 - 1 144 = 13 456 B (its BDP, 2 500 B, is less);
 * eaf for 13 456 B on new connections: wifi0 20 000 + 53 824·(t+1), lte0 200 000 + 5 382.4·(t+1).
 * With the kernel's path unknown the probe is the cold 32 KiB: wifi0 151 072, lte0 213 107.2.
 */
/* UNKNOWN_BUSY3, DISAGREED_BUSY3, PORTAL_BUSY3: WIFI_BUSY3 with lte0 not agreed about the
 * destination, disagreed, or agreed but in a portal as the system says (every other row: both
 * paths agreed, connectivity unknown) */
enum tweak { IDLE, WIFI_BUSY3, COLD, WIFI_ONLY, UNKNOWN_BUSY3, DISAGREED_BUSY3, PORTAL_BUSY3 };
enum cfgk { DEFAULTS, SPLIT_OFF, CHUNK_1M, INTENT_BULK, RR, SINGLE_LTE, BAD_POLICY };

struct row {
  const char *why;
  enum cfgk cfg;
  enum tweak tweak;
  int port, kernel;
  unsigned rr;
  int rc, iface, probe;
  uint64_t size;
  double predicted_us; /* < -1: not checked */
  unsigned rr_after;
};

/* clang-format off */
static const struct row rows[] = {
    {"probe, idle paths: wifi0, the kernel's own: left to it", DEFAULTS, IDLE, 80, 0, 0, 0, -1, 1, 13456, 73824, 0},
    {"probe, three transfers queue on wifi0: lte0", DEFAULTS, WIFI_BUSY3, 80, 0, 0, 0, 1, 1, 13456, 205382.4, 0},
    {"port 8080 is eligible too", DEFAULTS, WIFI_BUSY3, 8080, 0, 0, 0, 1, 1, 13456, 205382.4, 0},
    {"kernel unknown: a cold-sized probe, wifi0 bound explicitly", DEFAULTS, IDLE, 80, -1, 0, 0, 0, 1, 32768, 151072, 0},
    {"not an eligible port: unknown size, latency wins however loaded", DEFAULTS, WIFI_BUSY3, 443, 0, 0, 0, -1, 0, 0, -9, 0},
    {"splitting off: no probe, latency wins", SPLIT_OFF, WIFI_BUSY3, 80, 0, 0, 0, -1, 0, 0, -9, 0},
    {"a configured 1 MiB probe: lte0 (619 430.4 vs 4 214 304)", CHUNK_1M, IDLE, 80, 0, 0, 0, 1, 1, 1 << 20, 619430.4, 0},
    {"a bulk intent is no probe: capacity wins", INTENT_BULK, IDLE, 80, 0, 0, 0, 1, 0, 1ULL << 30, -9, 0},
    {"one routable interface: nothing to choose", DEFAULTS, WIFI_ONLY, 80, 0, 0, 0, -1, 1, 13456, -9, 0},
    {"round-robin: its turn on lte0, the cursor moves", RR, IDLE, 80, 0, 1, 0, 1, 1, 13456, -9, 0},
    {"round-robin: its turn on the kernel's wifi0 still moves the cursor", RR, IDLE, 80, 0, 0, 0, -1, 1, 13456, -9, 1},
    {"nothing measured: cold start takes paths in turn (cursor at lte0)", DEFAULTS, COLD, 80, 0, 1, 0, 1, 1, 32768, -9, 0},
    {"single:lte0 binds lte0 whatever the kernel says", SINGLE_LTE, IDLE, 80, 0, 0, 0, 1, 1, 13456, -9, 0},
    {"lte0 would win but never agreed about the server: left to the kernel", DEFAULTS, UNKNOWN_BUSY3, 80, 0, 0, 0, -1, 1, 13456, -9, 0},
    {"lte0 would win but disagreed about the server: left to the kernel", DEFAULTS, DISAGREED_BUSY3, 80, 0, 0, 0, -1, 1, 13456, -9, 0},
    {"lte0 agreed but the system says portal: left to the kernel", DEFAULTS, PORTAL_BUSY3, 80, 0, 0, 0, -1, 1, 13456, -9, 0},
    {"lte0 disagreed, kernel unknown: wifi0 alone is a candidate, nothing to choose", DEFAULTS, DISAGREED_BUSY3, 80, -1, 0, 0, -1, 1, 32768, -9, 0},
    {"single:lte0 is the user's choice: bound although lte0 disagreed", SINGLE_LTE, DISAGREED_BUSY3, 80, 0, 0, 0, 1, 1, 13456, -9, 0},
    {"not taken over (443) either: an untrusted lte0 is never bound", INTENT_BULK, UNKNOWN_BUSY3, 443, 0, 0, 0, -1, 0, 1ULL << 30, -9, 0},
    {"a policy that cannot be built: no decision", BAD_POLICY, IDLE, 80, 0, 0, -1, -1, 0, 0, -9, 0},
};
/* clang-format on */

static void row_config(const struct row *r, struct mh_config *c) {
  mh_config_defaults(c);
  if (r->cfg == SPLIT_OFF)
    c->split = 0;
  if (r->cfg == CHUNK_1M) {
    c->init_chunk = 1 << 20;
    c->init_chunk_set = 1;
  }
  if (r->cfg == INTENT_BULK)
    c->intent_hint = POL_SIZE_BULK;
  if (r->cfg == RR)
    c->pol.kind = POL_ROUND_ROBIN;
  if (r->cfg == SINGLE_LTE) {
    c->pol.kind = POL_SINGLE;
    strcpy(c->pol.single_if, "lte0");
  }
  if (r->cfg == BAD_POLICY) {
    c->pol.kind = POL_SINGLE;
    c->pol.single_if[0] = 0;
  }
}

static void row_facts(const struct row *r, struct mh_choose_facts *f) {
  memset(f, 0, sizeof *f);
  f->n = 2;
  f->names[0] = "wifi0";
  f->names[1] = "lte0";
  f->usable = r->tweak == WIFI_ONLY ? 0x1 : 0x3;
  f->kernel = r->kernel;
  f->port = r->port;
  if (r->tweak != COLD) {
    f->m[0] = (struct pol_path){.srtt_min_us = 10000, .srtt_med_us = 10000, .max_rate = 250000};
    f->m[1] = (struct pol_path){.srtt_min_us = 100000, .srtt_med_us = 100000, .max_rate = 2500000};
  }
  if (r->tweak != IDLE && r->tweak != COLD && r->tweak != WIFI_ONLY)
    f->m[0].transfers = 3;
  f->trust[0] = f->trust[1] = POL_TRUST_AGREED;
  if (r->tweak == UNKNOWN_BUSY3)
    f->trust[1] = POL_TRUST_UNKNOWN;
  if (r->tweak == DISAGREED_BUSY3)
    f->trust[1] = POL_TRUST_DISAGREED;
  if (r->tweak == PORTAL_BUSY3)
    f->link[1] = POL_LINK_PORTAL;
}

Test(mh_choose, decide_table) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const struct row *r = &rows[i];
    struct mh_config c;
    struct mh_choose_facts f;
    row_config(r, &c);
    row_facts(r, &f);
    unsigned rr = r->rr;
    struct mh_choose_pick pk;
    cr_assert_eq(mh_choose_decide(&c, &f, 0.5, &rr, &pk), r->rc, "%s: rc", r->why);
    cr_assert_eq(pk.iface, r->iface, "%s: iface %d, want %d", r->why, pk.iface, r->iface);
    if (r->rc < 0)
      continue;
    cr_assert_eq(pk.probe, r->probe, "%s: probe", r->why);
    cr_assert_eq(pk.size, r->size, "%s: size %llu", r->why, (unsigned long long)pk.size);
    if (r->predicted_us >= -1)
      cr_assert_float_eq(pk.c.predicted_us, r->predicted_us, 0.01, "%s: predicted %.1f", r->why, pk.c.predicted_us);
    cr_assert_eq(rr, r->rr_after, "%s: cursor %u, want %u", r->why, rr, r->rr_after);
  }
}
