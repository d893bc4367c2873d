/* A path's trust per destination: notes, expiry, eviction, merging two views, the paths a program's connection may be bound to, and the trust kept in the host-wide store's image. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "policy/store.h"
#include "policy/trust.h"

#define S (1000000ULL)
#define T0 (1000 * S)
#define BOOT 0x77ULL

static const uint8_t A1[4] = {10, 0, 0, 1}, A2[4] = {10, 0, 0, 2};

Test(trust, dest_key_separates_families_and_is_never_zero) {
  cr_assert_neq(pol_trust_dest(2, A1, 4), pol_trust_dest(2, A2, 4));
  cr_assert_neq(pol_trust_dest(2, A1, 4), pol_trust_dest(10, A1, 4));
  cr_assert_neq(pol_trust_dest(2, NULL, 0), 0);
}

/* each row: notes in order, then what is known at `at` */
struct note_row {
  enum pol_trust_state st[3];
  uint64_t t[3];
  uint64_t at;
  enum pol_trust_state want;
};

Test(trust, last_note_counts_until_it_expires) {
  const struct note_row rows[] = {
      {{POL_TRUST_UNKNOWN}, {0}, T0, POL_TRUST_UNKNOWN},
      {{POL_TRUST_AGREED}, {T0}, T0 + 1, POL_TRUST_AGREED},
      {{POL_TRUST_AGREED, POL_TRUST_DISAGREED}, {T0, T0 + S}, T0 + 2 * S, POL_TRUST_DISAGREED},
      {{POL_TRUST_DISAGREED, POL_TRUST_AGREED}, {T0, T0 + S}, T0 + 2 * S, POL_TRUST_AGREED},
      /* an agreement lasts POL_TRUST_AGREED_US, a disagreement POL_TRUST_DISAGREED_US */
      {{POL_TRUST_AGREED}, {T0}, T0 + POL_TRUST_AGREED_US, POL_TRUST_UNKNOWN},
      {{POL_TRUST_DISAGREED}, {T0}, T0 + POL_TRUST_AGREED_US, POL_TRUST_DISAGREED},
      {{POL_TRUST_DISAGREED}, {T0}, T0 + POL_TRUST_DISAGREED_US, POL_TRUST_UNKNOWN},
      /* a note from the future (another clock) is not taken */
      {{POL_TRUST_AGREED}, {T0 + S}, T0, POL_TRUST_UNKNOWN},
  };
  uint64_t d = pol_trust_dest(2, A1, 4);
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    struct pol_trust t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 3 && rows[r].st[i]; i++)
      cr_assert_eq(pol_trust_note(&t, d, rows[r].st[i], rows[r].t[i]), 1, "row %zu note %d", r, i);
    cr_assert_eq(pol_trust_get(&t, d, rows[r].at), rows[r].want, "row %zu", r);
    cr_assert_eq(pol_trust_get(&t, d + 1, rows[r].at), POL_TRUST_UNKNOWN, "row %zu other dest", r);
  }
}

Test(trust, note_says_when_readers_see_a_change) {
  struct pol_trust t;
  memset(&t, 0, sizeof t);
  uint64_t d = pol_trust_dest(2, A1, 4);
  cr_assert_eq(pol_trust_note(&t, 0, POL_TRUST_AGREED, T0), -1);
  cr_assert_eq(pol_trust_note(&t, d, POL_TRUST_UNKNOWN, T0), -1);
  cr_assert_eq(pol_trust_note(&t, d, POL_TRUST_AGREED, T0), 1);
  cr_assert_eq(pol_trust_note(&t, d, POL_TRUST_AGREED, T0 + S), 0);                    /* fresh: no write */
  cr_assert_eq(pol_trust_note(&t, d, POL_TRUST_AGREED, T0 + POL_TRUST_REFRESH_US), 1); /* renewed */
  cr_assert_eq(pol_trust_note(&t, d, POL_TRUST_DISAGREED, T0 + 61 * S), 1);
  cr_assert_eq(pol_trust_note(&t, d, POL_TRUST_DISAGREED, T0 + 900 * S), 0); /* a mark stays as it was */
}

Test(trust, a_full_table_forgets_the_oldest_first) {
  struct pol_trust t;
  memset(&t, 0, sizeof t);
  for (uint8_t i = 0; i < POL_TRUST_DESTS; i++) {
    uint8_t a[4] = {10, 1, 0, i};
    pol_trust_note(&t, pol_trust_dest(2, a, 4), POL_TRUST_DISAGREED, T0 + i * S);
  }
  uint8_t nw[4] = {10, 2, 0, 0}, first[4] = {10, 1, 0, 0}, second[4] = {10, 1, 0, 1};
  cr_assert_eq(pol_trust_note(&t, pol_trust_dest(2, nw, 4), POL_TRUST_AGREED, T0 + 20 * S), 1);
  cr_assert_eq(pol_trust_get(&t, pol_trust_dest(2, first, 4), T0 + 21 * S), POL_TRUST_UNKNOWN);
  cr_assert_eq(pol_trust_get(&t, pol_trust_dest(2, second, 4), T0 + 21 * S), POL_TRUST_DISAGREED);
  cr_assert_eq(pol_trust_get(&t, pol_trust_dest(2, nw, 4), T0 + 21 * S), POL_TRUST_AGREED);
}

Test(trust, merge_keeps_the_newer_word_per_destination) {
  struct pol_trust mine, host;
  memset(&mine, 0, sizeof mine);
  memset(&host, 0, sizeof host);
  uint64_t d1 = pol_trust_dest(2, A1, 4), d2 = pol_trust_dest(2, A2, 4);
  pol_trust_note(&mine, d1, POL_TRUST_AGREED, T0 + 5 * S);
  pol_trust_note(&host, d1, POL_TRUST_DISAGREED, T0 + 2 * S); /* older: mine stands */
  pol_trust_note(&host, d2, POL_TRUST_DISAGREED, T0 + 3 * S); /* new to mine: taken */
  pol_trust_merge(&mine, &host);
  cr_assert_eq(pol_trust_get(&mine, d1, T0 + 6 * S), POL_TRUST_AGREED);
  cr_assert_eq(pol_trust_get(&mine, d2, T0 + 6 * S), POL_TRUST_DISAGREED);
  memset(&host, 0, sizeof host);
  pol_trust_note(&host, d1, POL_TRUST_DISAGREED, T0 + 7 * S); /* newer: taken */
  pol_trust_merge(&mine, &host);
  cr_assert_eq(pol_trust_get(&mine, d1, T0 + 8 * S), POL_TRUST_DISAGREED);
}

/* which paths a program's connection may be bound to: the kernel's always, others only when
 * they agreed and the system does not rule their link out */
Test(trust, bindable_paths) {
  const struct {
    enum pol_trust_state st[3];
    enum pol_link link[3];
    int use_link, kernel;
    uint32_t want;
  } rows[] = {
      {{POL_TRUST_UNKNOWN, POL_TRUST_UNKNOWN, POL_TRUST_UNKNOWN}, {0}, 0, 0, 0x1},
      {{POL_TRUST_UNKNOWN, POL_TRUST_AGREED, POL_TRUST_DISAGREED}, {0}, 0, 0, 0x3},
      {{POL_TRUST_DISAGREED, POL_TRUST_DISAGREED, POL_TRUST_AGREED}, {0}, 0, 1, 0x6},
      {{POL_TRUST_AGREED, POL_TRUST_AGREED, POL_TRUST_AGREED}, {0}, 0, -1, 0x7},
      {{POL_TRUST_AGREED, POL_TRUST_AGREED, POL_TRUST_AGREED},
       {POL_LINK_FULL, POL_LINK_PORTAL, POL_LINK_UNKNOWN},
       1,
       0,
       0x5},
      {{POL_TRUST_AGREED, POL_TRUST_AGREED, POL_TRUST_AGREED},
       {POL_LINK_LIMITED, POL_LINK_NONE, POL_LINK_FULL},
       1,
       0,
       0x5}, /* the kernel's stays */
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
    cr_assert_eq(pol_trust_bindable(rows[r].st, rows[r].use_link ? rows[r].link : NULL, 3, rows[r].kernel),
                 rows[r].want, "row %zu", r);
}

static struct pol_store_key key(const char *name) {
  struct pol_store_key k;
  memset(&k, 0, sizeof k);
  k.netns = 9;
  k.ifindex = 4;
  strcpy(k.ifname, name);
  k.family = 2;
  k.addr[0] = 10;
  return k;
}

Test(trust, store_keeps_a_mark_across_processes) {
  static struct pol_store s, d;
  static uint8_t img[POL_STORE_FILE_SIZE];
  pol_store_init(&s);
  struct pol_store_key l0 = key("l0"), w0 = key("w0");
  uint64_t dst = pol_trust_dest(2, A1, 4);
  cr_assert_eq(pol_store_trust_put(&s, &l0, dst, POL_TRUST_DISAGREED, T0), 1);
  cr_assert_eq(pol_store_trust_put(&s, &w0, dst, POL_TRUST_AGREED, T0), 1);
  struct pol_store_obs o = {.srtt_min_us = 1000, .max_rate = 5e6};
  cr_assert_eq(pol_store_put(&s, &l0, &o, T0 + S), 0); /* a good rate does not clear the mark */
  cr_assert_eq(pol_store_trust_put(&s, &l0, 0, POL_TRUST_AGREED, T0), -EINVAL);
  cr_assert_eq(pol_store_encode(&s, BOOT, img, sizeof img), (int)POL_STORE_FILE_SIZE);
  cr_assert_eq(pol_store_decode(&d, img, sizeof img, BOOT, T0 + 2 * S), 2);
  struct pol_trust t;
  pol_store_trust_get(&d, &l0, &t);
  cr_assert_eq(pol_trust_get(&t, dst, T0 + 2 * S), POL_TRUST_DISAGREED);
  pol_store_trust_get(&d, &w0, &t);
  cr_assert_eq(pol_trust_get(&t, dst, T0 + 2 * S), POL_TRUST_AGREED);
  /* an entry with an unknown state (damaged, or another program's) drops its record */
  uint8_t *rec = NULL;
  for (unsigned i = 0; i < POL_STORE_RECORDS && !rec; i++)
    if (s.rec[i].updated_us && !strcmp(s.rec[i].key.ifname, "l0"))
      rec = img + POL_STORE_HDR_SIZE + i * POL_STORE_REC_SIZE;
  cr_assert_not_null(rec);
  rec[POL_STORE_TRUST_OFF + 16] = 7;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < POL_STORE_REC_SIZE - 8; i++)
    h = (h ^ rec[i]) * 0x100000001b3ULL;
  for (int i = 0; i < 8; i++)
    rec[POL_STORE_REC_SIZE - 8 + i] = (uint8_t)(h >> (8 * i));
  cr_assert_eq(pol_store_decode(&d, img, sizeof img, BOOT, T0 + 2 * S), 1);
  pol_store_trust_get(&d, &l0, &t);
  cr_assert_eq(pol_trust_get(&t, dst, T0 + 2 * S), POL_TRUST_UNKNOWN);
}
