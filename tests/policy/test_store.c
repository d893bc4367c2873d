/* The host-wide metrics records: slot expiry, best-of merge, other-namespace isolation, the file image's validation. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "policy/store.h"

#define S (1000000ULL)
#define T0 (1000 * S) /* a monotonic clock well past boot */
#define BOOT 0x1234abcdULL

static struct pol_store st;
static uint8_t img[POL_STORE_FILE_SIZE];

static struct pol_store_key key(uint64_t netns, const char *name, uint8_t last) {
  struct pol_store_key k;
  memset(&k, 0, sizeof k);
  k.netns = netns;
  k.ifindex = 3;
  strcpy(k.ifname, name);
  k.family = 2;
  k.addr[0] = 10, k.addr[3] = last;
  return k;
}

static void put(const struct pol_store_key *k, uint64_t min, uint64_t med, double rate, uint64_t now) {
  struct pol_store_obs o = {.srtt_min_us = min, .srtt_med_us = med, .max_rate = rate};
  cr_assert_eq(pol_store_put(&st, k, &o, now), 0);
}

static void init(void) { pol_store_init(&st); }
TestSuite(store, .init = init);

Test(store, best_values_within_five_minutes) {
  struct pol_store_key k = key(7, "lte0", 2);
  put(&k, 120000, 150000, 1e6, T0);
  put(&k, 100000, 160000, 2e6, T0 + 40 * S); /* next slot */
  put(&k, 110000, 140000, 1.5e6, T0 + 100 * S);
  struct pol_store_obs o;
  cr_assert_eq(pol_store_get(&st, &k, T0 + 120 * S, &o), 0);
  cr_assert_eq(o.srtt_min_us, 100000);
  cr_assert_eq(o.srtt_min_at, T0 + 40 * S);
  cr_assert_eq(o.srtt_med_us, 140000); /* the latest median, not the lowest */
  cr_assert_eq(o.max_rate, 2e6);
  cr_assert_eq(o.max_rate_at, T0 + 40 * S);
}

Test(store, a_value_older_than_five_minutes_is_gone) {
  struct pol_store_key k = key(7, "lte0", 2);
  put(&k, 100000, 100000, 2e6, T0);
  put(&k, 130000, 0, 1e6, T0 + 200 * S);
  struct pol_store_obs o;
  /* just under 5 minutes: the first observation still counts */
  cr_assert_eq(pol_store_get(&st, &k, T0 + 300 * S - 1, &o), 0);
  cr_assert_eq(o.srtt_min_us, 100000);
  cr_assert_eq(o.max_rate, 2e6);
  /* at 5 minutes it is gone: only the later one is left, its median none */
  cr_assert_eq(pol_store_get(&st, &k, T0 + 300 * S, &o), 0);
  cr_assert_eq(o.srtt_min_us, 130000);
  cr_assert_eq(o.max_rate, 1e6);
  cr_assert_eq(o.srtt_med_us, 0);
  cr_assert_eq(pol_store_get(&st, &k, T0 + 500 * S, &o), -ENOENT);
  cr_assert_eq(o.srtt_min_us, 0);
}

Test(store, a_slot_of_an_older_round_is_cleared_before_reuse) {
  struct pol_store_key k = key(7, "lte0", 2);
  put(&k, 50000, 0, 9e6, T0);
  /* 10 slots later the same slot index: the old values must not survive as "now" */
  put(&k, 90000, 0, 1e6, T0 + POL_STORE_SLOTS * POL_STORE_SLOT_US);
  struct pol_store_obs o;
  cr_assert_eq(pol_store_get(&st, &k, T0 + POL_STORE_SLOTS * POL_STORE_SLOT_US, &o), 0);
  cr_assert_eq(o.srtt_min_us, 90000);
  cr_assert_eq(o.max_rate, 1e6);
}

Test(store, another_namespace_or_address_or_ifindex_is_another_path) {
  struct pol_store_key k = key(7, "lte0", 2);
  put(&k, 100000, 100000, 2e6, T0);
  struct pol_store_obs o;
  struct pol_store_key other = key(8, "lte0", 2); /* same name and address, new namespace */
  cr_assert_eq(pol_store_get(&st, &other, T0 + S, &o), -ENOENT);
  other = key(7, "lte0", 3);
  cr_assert_eq(pol_store_get(&st, &other, T0 + S, &o), -ENOENT);
  other = key(7, "lte0", 2);
  other.ifindex = 4;
  cr_assert_eq(pol_store_get(&st, &other, T0 + S, &o), -ENOENT);
  other = key(7, "wifi0", 2);
  cr_assert_eq(pol_store_get(&st, &other, T0 + S, &o), -ENOENT);
  cr_assert_eq(pol_store_get(&st, &k, T0 + S, &o), 0);
}

Test(store, unknown_namespace_or_nothing_observed_is_refused) {
  struct pol_store_key k = key(0, "lte0", 2);
  struct pol_store_obs o = {.srtt_min_us = 1000};
  cr_assert_eq(pol_store_put(&st, &k, &o, T0), -EINVAL);
  k = key(7, "lte0", 2);
  struct pol_store_obs none = {0};
  cr_assert_eq(pol_store_put(&st, &k, &none, T0), -EINVAL);
  for (unsigned i = 0; i < POL_STORE_RECORDS; i++)
    cr_assert_eq(st.rec[i].updated_us, 0);
}

Test(store, full_store_evicts_dead_then_least_recent) {
  for (unsigned i = 0; i < POL_STORE_RECORDS; i++) {
    struct pol_store_key k = key(100 + i, "eth0", 1);
    put(&k, 1000 + i, 0, 0, T0 + i * S);
  }
  struct pol_store_key n = key(999, "eth0", 1);
  put(&n, 5000, 0, 0, T0 + 100 * S);
  struct pol_store_obs o;
  struct pol_store_key first = key(100, "eth0", 1), second = key(101, "eth0", 1);
  cr_assert_eq(pol_store_get(&st, &first, T0 + 100 * S, &o), -ENOENT); /* least recent went */
  cr_assert_eq(pol_store_get(&st, &second, T0 + 100 * S, &o), 0);
  cr_assert_eq(pol_store_get(&st, &n, T0 + 100 * S, &o), 0);
  cr_assert_eq(o.srtt_min_us, 5000);
}

Test(store, merge_takes_the_better_of_local_and_host) {
  struct pol_path p = {
      .srtt_min_us = 120000, .srtt_med_us = 0, .max_rate = 3e5, .cur_rate = 1, .transfers = 2, .conns = 3};
  struct pol_store_obs h = {.srtt_min_us = 100000, .srtt_med_us = 130000, .max_rate = 2e6};
  pol_store_merge(&p, &h);
  cr_assert_eq(p.srtt_min_us, 100000);
  cr_assert_eq(p.srtt_med_us, 130000); /* no local median: the host's */
  cr_assert_eq(p.max_rate, 2e6);
  cr_assert_eq(p.cur_rate, 1);
  cr_assert_eq(p.transfers, 2);
  cr_assert_eq(p.conns, 3);
  struct pol_path q = {.srtt_min_us = 90000, .srtt_med_us = 95000, .max_rate = 3e6};
  pol_store_merge(&q, &h);
  cr_assert_eq(q.srtt_min_us, 90000);
  cr_assert_eq(q.srtt_med_us, 95000); /* the local median wins when there is one */
  cr_assert_eq(q.max_rate, 3e6);
  struct pol_path e = {0};
  struct pol_store_obs none = {0};
  pol_store_merge(&e, &none);
  cr_assert_eq(e.srtt_min_us, 0);
  cr_assert_eq(e.max_rate, 0);
}

Test(store, image_round_trip) {
  struct pol_store_key a = key(7, "lte0", 2), b = key(7, "wifi0", 3);
  put(&a, 100000, 110000, 2.5e6, T0);
  put(&b, 10000, 12000, 2.5e5, T0 + 31 * S);
  cr_assert_eq(pol_store_encode(&st, BOOT, img, sizeof img - 1), -ENOSPC);
  cr_assert_eq(pol_store_encode(&st, BOOT, img, sizeof img), (int)POL_STORE_FILE_SIZE);
  struct pol_store d;
  cr_assert_eq(pol_store_decode(&d, img, sizeof img, BOOT, T0 + 40 * S), 2);
  struct pol_store_obs o;
  cr_assert_eq(pol_store_get(&d, &b, T0 + 40 * S, &o), 0);
  cr_assert_eq(o.srtt_min_us, 10000);
  cr_assert_eq(o.srtt_med_us, 12000);
  cr_assert_eq(o.max_rate, 2.5e5);
  cr_assert_eq(o.max_rate_at, T0 + 31 * S);
  cr_assert_eq(pol_store_get(&d, &a, T0 + 40 * S, &o), 0);
  cr_assert_eq(o.max_rate, 2.5e6);
}

static void encoded(void) {
  struct pol_store_key a = key(7, "lte0", 2);
  put(&a, 100000, 110000, 2.5e6, T0);
  cr_assert_eq(pol_store_encode(&st, BOOT, img, sizeof img), (int)POL_STORE_FILE_SIZE);
}

Test(store, wrong_header_is_ignored_whole) {
  encoded();
  struct pol_store d;
  struct pol_store_obs o;
  struct pol_store_key a = key(7, "lte0", 2);
  cr_assert_eq(pol_store_decode(&d, img, sizeof img - 1, BOOT, T0 + S), -EINVAL); /* length */
  cr_assert_eq(pol_store_decode(&d, img, sizeof img, BOOT + 1, T0 + S), -EINVAL); /* rebooted */
  cr_assert_eq(pol_store_get(&d, &a, T0 + S, &o), -ENOENT);
  img[4] = POL_STORE_VERSION + 1; /* another version */
  cr_assert_eq(pol_store_decode(&d, img, sizeof img, BOOT, T0 + S), -EINVAL);
  img[4] = POL_STORE_VERSION;
  img[0] ^= 1; /* magic */
  cr_assert_eq(pol_store_decode(&d, img, sizeof img, BOOT, T0 + S), -EINVAL);
  img[0] ^= 1;
  cr_assert_eq(pol_store_decode(&d, img, sizeof img, BOOT, T0 + S), 1);
}

Test(store, a_damaged_record_is_dropped_the_others_kept) {
  struct pol_store_key a = key(7, "lte0", 2), b = key(7, "wifi0", 3);
  put(&a, 100000, 110000, 2.5e6, T0);
  put(&b, 10000, 12000, 2.5e5, T0);
  cr_assert_eq(pol_store_encode(&st, BOOT, img, sizeof img), (int)POL_STORE_FILE_SIZE);
  /* flip one byte of the first record's rate (record 0 = lte0) */
  img[POL_STORE_HDR_SIZE + 56 + ((T0 / POL_STORE_SLOT_US) % POL_STORE_SLOTS) * 48 + 33] ^= 0x40;
  struct pol_store d;
  cr_assert_eq(pol_store_decode(&d, img, sizeof img, BOOT, T0 + S), 1);
  struct pol_store_obs o;
  cr_assert_eq(pol_store_get(&d, &a, T0 + S, &o), -ENOENT);
  cr_assert_eq(pol_store_get(&d, &b, T0 + S, &o), 0);
}

/* A record with a valid checksum but values no measurement has (another writer's bug): the
 * checksum is re-computed after the damage so only the bounds checks can catch it. */
static int decode_with(unsigned off, uint64_t v) {
  encoded();
  uint8_t *r = img + POL_STORE_HDR_SIZE;
  for (int i = 0; i < 8; i++)
    r[off + i] = (uint8_t)(v >> (8 * i));
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < POL_STORE_REC_SIZE - 8; i++)
    h = (h ^ r[i]) * 0x100000001b3ULL;
  for (int i = 0; i < 8; i++)
    r[POL_STORE_REC_SIZE - 8 + i] = (uint8_t)(h >> (8 * i));
  struct pol_store d;
  return pol_store_decode(&d, img, sizeof img, BOOT, T0 + S);
}

Test(store, values_out_of_bounds_are_never_trusted) {
  unsigned slot = 56 + (unsigned)((T0 / POL_STORE_SLOT_US) % POL_STORE_SLOTS) * 48;
  double nan = __builtin_nan(""), neg = -5, inf = __builtin_inf();
  uint64_t bits;
  cr_assert_eq(decode_with(slot + 8, T0 + 10 * S), 0, "a time after now");
  cr_assert_eq(decode_with(48, T0 + 10 * S), 0, "updated after now");
  memcpy(&bits, &nan, 8);
  cr_assert_eq(decode_with(slot + 32, bits), 0, "rate NaN");
  memcpy(&bits, &neg, 8);
  cr_assert_eq(decode_with(slot + 32, bits), 0, "negative rate");
  memcpy(&bits, &inf, 8);
  cr_assert_eq(decode_with(slot + 32, bits), 0, "infinite rate");
  cr_assert_eq(decode_with(slot, 0), 0, "a min without a value but with a time");
  cr_assert_eq(decode_with(slot, 400 * S), 0, "an SRTT of 400 s");
  cr_assert_eq(decode_with(0, 0), 0, "namespace 0");
  cr_assert_eq(decode_with(slot, 90000), 1, "a sane change is kept (the test can pass)");
}

Test(store, an_unterminated_name_is_dropped) {
  encoded();
  uint8_t *r = img + POL_STORE_HDR_SIZE;
  memset(r + 12, 'x', POL_IFNAME_MAX);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < POL_STORE_REC_SIZE - 8; i++)
    h = (h ^ r[i]) * 0x100000001b3ULL;
  for (int i = 0; i < 8; i++)
    r[POL_STORE_REC_SIZE - 8 + i] = (uint8_t)(h >> (8 * i));
  struct pol_store d;
  cr_assert_eq(pol_store_decode(&d, img, sizeof img, BOOT, T0 + S), 0);
}

Test(store, garbage_never_crashes) {
  struct pol_store d;
  uint32_t x = 12345;
  for (int round = 0; round < 50; round++) {
    for (size_t i = 0; i < sizeof img; i++) {
      x = x * 1103515245u + 12345u;
      img[i] = (uint8_t)(x >> 16);
    }
    if (round & 1) { /* a valid header over garbage records */
      img[0] = 0x53, img[1] = 0x54, img[2] = 0x48, img[3] = 0x4d;
      memset(img + 4, 0, 20);
      img[4] = POL_STORE_VERSION, img[8] = POL_STORE_RECORDS, img[12] = POL_STORE_REC_SIZE & 0xff,
      img[13] = POL_STORE_REC_SIZE >> 8;
      for (int i = 0; i < 8; i++)
        img[16 + i] = (uint8_t)(BOOT >> (8 * i));
      cr_assert_eq(pol_store_decode(&d, img, sizeof img, BOOT, T0), 0);
    } else {
      cr_assert_eq(pol_store_decode(&d, img, sizeof img, BOOT, T0), -EINVAL);
    }
  }
}

/* The record of objects whose range answers disagreed with a whole answer
 * (POL_STORE_RANGES_IFNAME): no interface index, address or metrics. Its entries survive the
 * file, are not a path's of the same namespace, and end after POL_TRUST_DISAGREED_US. */
Test(store, objects_whose_ranges_disagreed_survive_the_file_and_expire) {
  struct pol_store_key r = {.netns = 7}, a = key(7, "lte0", 2);
  strcpy(r.ifname, POL_STORE_RANGES_IFNAME);
  uint64_t obj = 0x1234567890abcdefULL;
  cr_assert_eq(pol_store_trust_put(&st, &r, obj, POL_TRUST_DISAGREED, T0), 1);
  cr_assert_eq(pol_store_trust_put(&st, &r, obj, POL_TRUST_DISAGREED, T0 + S), 0, "nothing new to share");
  put(&a, 100000, 110000, 2.5e6, T0);
  cr_assert_eq(pol_store_encode(&st, BOOT, img, sizeof img), (int)POL_STORE_FILE_SIZE);
  struct pol_store d;
  cr_assert_eq(pol_store_decode(&d, img, sizeof img, BOOT, T0 + S), 2);
  struct pol_trust t;
  pol_store_trust_get(&d, &r, &t);
  cr_expect_eq(pol_trust_get(&t, obj, T0 + S), POL_TRUST_DISAGREED);
  cr_expect_eq(pol_trust_get(&t, obj + 1, T0 + S), POL_TRUST_UNKNOWN);
  cr_expect_eq(pol_trust_get(&t, obj, T0 + POL_TRUST_DISAGREED_US - 1), POL_TRUST_DISAGREED);
  cr_expect_eq(pol_trust_get(&t, obj, T0 + POL_TRUST_DISAGREED_US), POL_TRUST_UNKNOWN);
  pol_store_trust_get(&d, &a, &t);
  cr_expect_eq(pol_trust_get(&t, obj, T0 + S), POL_TRUST_UNKNOWN, "a path's record knows nothing of it");
}
