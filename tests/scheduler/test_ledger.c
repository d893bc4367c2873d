/* Ledger tests: exact extents after each operation, and random sequences that must never lose or duplicate a byte. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "scheduler/ledger.h"

static struct sched_ledger *mk(uint64_t total) {
  struct sched_ledger *l = NULL;
  cr_assert_eq(sched_ledger_new(total, &l), 0);
  return l;
}

static void expect_extents(const struct sched_ledger *l, const struct sched_extent *want, size_t n) {
  cr_assert_eq(sched_ledger_check(l), 0);
  cr_assert_eq(sched_ledger_count(l), n, "count %zu, want %zu", sched_ledger_count(l), n);
  for (size_t i = 0; i < n; i++) {
    struct sched_extent e;
    cr_assert_eq(sched_ledger_get(l, i, &e), 0);
    cr_assert(e.off == want[i].off && e.len == want[i].len && e.state == want[i].state && e.owner == want[i].owner,
              "extent %zu: %lu+%lu s%d o%d", i, e.off, e.len, e.state, e.owner);
  }
}

#define M SCHED_MISSING
#define A SCHED_ASSIGNED
#define R SCHED_RECEIVED
#define NB SCHED_NOBODY

Test(ledger, assign_takes_lowest_missing_bytes) {
  struct sched_ledger *l = mk(1000);
  struct sched_range r;
  cr_assert_eq(sched_ledger_assign(l, 0, 300, &r), 0);
  cr_assert(r.off == 0 && r.len == 300);
  cr_assert_eq(sched_ledger_assign(l, 1, 300, &r), 0);
  cr_assert(r.off == 300 && r.len == 300);
  expect_extents(l, (struct sched_extent[]){{0, 300, A, 0}, {300, 300, A, 1}, {600, 400, M, NB}}, 3);
  sched_ledger_free(l);
}

Test(ledger, assign_stops_at_end_of_a_missing_run) {
  struct sched_ledger *l = mk(1000);
  struct sched_range r;
  sched_ledger_assign(l, 0, 100, &r);
  sched_ledger_assign(l, 1, 100, &r);
  cr_assert_eq(sched_ledger_release(l, 0), 100);
  cr_assert_eq(sched_ledger_assign(l, 2, 500, &r), 0);
  cr_assert(r.off == 0 && r.len == 100, "a hole is filled, never spanned: %lu+%lu", r.off, r.len);
  sched_ledger_free(l);
}

Test(ledger, assign_last_takes_the_end_of_the_highest_missing_run) {
  struct sched_ledger *l = mk(1000);
  struct sched_range r;
  cr_assert_eq(sched_ledger_assign(l, 0, 300, &r), 0);
  cr_assert_eq(sched_ledger_assign_last(l, 1, 100, &r), 0);
  cr_assert(r.off == 900 && r.len == 100, "%lu+%lu", r.off, r.len);
  cr_assert_eq(sched_ledger_assign(l, 2, 1000, &r), 0);
  cr_assert(r.off == 300 && r.len == 600, "the lowest-first owner stops at the end's bytes: %lu+%lu", r.off, r.len);
  expect_extents(l, (struct sched_extent[]){{0, 300, A, 0}, {300, 600, A, 2}, {900, 100, A, 1}}, 3);
  cr_assert_eq(sched_ledger_assign_last(l, 1, 100, &r), -ENODATA);
  /* the end released: asked again from the end, never spanning a hole */
  cr_assert_eq(sched_ledger_release(l, 1), 100);
  cr_assert_eq(sched_ledger_release(l, 0), 300);
  cr_assert_eq(sched_ledger_assign_last(l, 3, 500, &r), 0);
  cr_assert(r.off == 900 && r.len == 100, "%lu+%lu", r.off, r.len);
  cr_assert_eq(sched_ledger_assign_last(l, 3, 500, &r), 0);
  cr_assert(r.off == 0 && r.len == 300, "%lu+%lu", r.off, r.len);
  sched_ledger_free(l);
}

Test(ledger, assign_last_needs_a_known_size) {
  struct sched_ledger *l = mk(SCHED_LEN_UNKNOWN);
  struct sched_range r;
  cr_assert_eq(sched_ledger_assign_last(l, 0, 100, &r), -EINVAL);
  sched_ledger_free(l);
}

Test(ledger, receive_merges_adjacent_received_runs) {
  struct sched_ledger *l = mk(1000);
  struct sched_range r;
  sched_ledger_assign(l, 0, 500, &r);
  sched_ledger_assign(l, 1, 500, &r);
  cr_assert_eq(sched_ledger_receive(l, 1, 500, 200), 0);
  cr_assert_eq(sched_ledger_receive(l, 0, 0, 500), 0);
  expect_extents(l, (struct sched_extent[]){{0, 700, R, NB}, {700, 300, A, 1}}, 2);
  cr_assert_eq(sched_ledger_prefix(l), 700);
  cr_assert(!sched_ledger_complete(l));
  cr_assert_eq(sched_ledger_receive(l, 1, 700, 300), 0);
  cr_assert(sched_ledger_complete(l));
  sched_ledger_free(l);
}

Test(ledger, receive_refuses_bytes_not_assigned_to_that_owner) {
  struct sched_ledger *l = mk(1000);
  struct sched_range r;
  sched_ledger_assign(l, 0, 500, &r);
  cr_assert_eq(sched_ledger_receive(l, 1, 0, 10), -EINVAL, "wrong owner");
  cr_assert_eq(sched_ledger_receive(l, 0, 490, 20), -EINVAL, "runs into missing bytes");
  cr_assert_eq(sched_ledger_receive(l, 0, 0, 10), 0);
  cr_assert_eq(sched_ledger_receive(l, 0, 0, 10), -EINVAL, "duplicate");
  cr_assert_eq(sched_ledger_receive(l, 0, 990, 20), -EINVAL, "past the end");
  expect_extents(l, (struct sched_extent[]){{0, 10, R, NB}, {10, 490, A, 0}, {500, 500, M, NB}}, 3);
  sched_ledger_free(l);
}

Test(ledger, release_returns_only_unreceived_bytes) {
  struct sched_ledger *l = mk(1000);
  struct sched_range r;
  sched_ledger_assign(l, 0, 400, &r);
  sched_ledger_assign(l, 1, 400, &r);
  sched_ledger_receive(l, 0, 0, 150);
  cr_assert_eq(sched_ledger_release(l, 0), 250);
  expect_extents(l, (struct sched_extent[]){{0, 150, R, NB}, {150, 250, M, NB}, {400, 400, A, 1}, {800, 200, M, NB}},
                 4);
  cr_assert_eq(sched_ledger_release(l, 1), 400);
  expect_extents(l, (struct sched_extent[]){{0, 150, R, NB}, {150, 850, M, NB}}, 2);
  sched_ledger_free(l);
}

Test(ledger, transfer_moves_a_tail_between_owners) {
  struct sched_ledger *l = mk(1000);
  struct sched_range r;
  sched_ledger_assign(l, 0, 1000, &r);
  cr_assert_eq(sched_ledger_transfer(l, 0, 1, 600, 400), 0);
  cr_assert_eq(sched_ledger_transfer(l, 0, 1, 500, 200), -EINVAL, "600.. is no longer owner 0's");
  expect_extents(l, (struct sched_extent[]){{0, 600, A, 0}, {600, 400, A, 1}}, 2);
  cr_assert_eq(sched_ledger_bytes(l, A, 1), 400);
  cr_assert_eq(sched_ledger_bytes(l, A, NB), 1000);
  sched_ledger_free(l);
}

Test(ledger, unknown_total_then_set_cuts_the_probe) {
  struct sched_ledger *l = mk(SCHED_LEN_UNKNOWN);
  struct sched_range r;
  cr_assert_eq(sched_ledger_assign(l, 0, 32768, &r), 0);
  cr_assert(r.off == 0 && r.len == 32768);
  cr_assert_eq(sched_ledger_check(l), 0);
  cr_assert_eq(sched_ledger_receive(l, 0, 0, 100), 0);
  cr_assert_eq(sched_ledger_set_total(l, 50), -ERANGE, "byte 99 was already received");
  cr_assert_eq(sched_ledger_set_total(l, 1000), 0);
  cr_assert_eq(sched_ledger_set_total(l, 2000), -EALREADY);
  expect_extents(l, (struct sched_extent[]){{0, 100, R, NB}, {100, 900, A, 0}}, 2);
  cr_assert_eq(sched_ledger_assign(l, 1, 10, &r), -ENODATA);
  sched_ledger_free(l);
}

Test(ledger, set_total_larger_than_probe_leaves_rest_missing) {
  struct sched_ledger *l = mk(SCHED_LEN_UNKNOWN);
  struct sched_range r;
  sched_ledger_assign(l, 0, 32768, &r);
  cr_assert_eq(sched_ledger_set_total(l, 100000), 0);
  expect_extents(l, (struct sched_extent[]){{0, 32768, A, 0}, {32768, 100000 - 32768, M, NB}}, 2);
  sched_ledger_free(l);
}

Test(ledger, empty_object_is_complete) {
  struct sched_ledger *l = mk(0);
  struct sched_range r;
  cr_assert(sched_ledger_complete(l));
  cr_assert_eq(sched_ledger_assign(l, 0, 10, &r), -ENODATA);
  cr_assert_eq(sched_ledger_check(l), 0);
  sched_ledger_free(l);
}

/* ---- property: random operation sequences against a per-byte shadow ---- */

#define PTOTAL 3000
#define POWNERS 4

static uint64_t rng_state;
static uint64_t rnd(void) { /* xorshift64*: seeded, so a failure replays exactly */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ULL;
}
static uint64_t rnd_in(uint64_t n) { return n ? rnd() % n : 0; }

struct shadow {
  signed char state[PTOTAL]; /* enum sched_state */
  signed char owner[PTOTAL];
  unsigned char got[PTOTAL]; /* times each byte was received */
};

static void shadow_matches(const struct sched_ledger *l, const struct shadow *sh, uint64_t seed, int step) {
  cr_assert_eq(sched_ledger_check(l), 0, "seed %lu step %d: invariants", seed, step);
  uint64_t at = 0;
  for (size_t i = 0; i < sched_ledger_count(l); i++) {
    struct sched_extent e;
    sched_ledger_get(l, i, &e);
    for (uint64_t b = e.off; b < e.off + e.len; b++)
      cr_assert(sh->state[b] == (int)e.state && sh->owner[b] == e.owner, "seed %lu step %d byte %lu", seed, step, b);
    at = e.off + e.len;
  }
  cr_assert_eq(at, PTOTAL);
}

/* Does [off, off+len) lie wholly in state/owner in the shadow? */
static bool shadow_all(const struct shadow *sh, uint64_t off, uint64_t len, int state, int owner) {
  if (len == 0 || off + len > PTOTAL)
    return false;
  for (uint64_t b = off; b < off + len; b++)
    if (sh->state[b] != state || sh->owner[b] != owner)
      return false;
  return true;
}

static void shadow_set(struct shadow *sh, uint64_t off, uint64_t len, int state, int owner) {
  for (uint64_t b = off; b < off + len; b++) {
    sh->state[b] = (signed char)state;
    sh->owner[b] = (signed char)owner;
    if (state == R)
      sh->got[b]++;
  }
}

/* A random sub-range of a random assigned extent (sometimes deliberately wrong). */
static void pick_assigned(const struct sched_ledger *l, uint64_t *off, uint64_t *len, int *owner) {
  size_t n = sched_ledger_count(l);
  struct sched_extent e = {0, 1, M, NB};
  for (int tries = 0; tries < 8; tries++) {
    sched_ledger_get(l, rnd_in(n), &e);
    if (e.state == A)
      break;
  }
  uint64_t a = rnd_in(e.len), b = rnd_in(e.len);
  if (a > b) {
    uint64_t t = a;
    a = b;
    b = t;
  }
  *off = e.off + a;
  *len = b - a + 1;
  *owner = e.owner >= 0 ? e.owner : (int)rnd_in(POWNERS);
  if (rnd_in(10) == 0)
    *owner = (int)rnd_in(POWNERS); /* wrong owner now and then */
  if (rnd_in(10) == 0)
    *len += rnd_in(50); /* spill into the neighbour now and then */
}

Test(ledger_property, random_sequences_never_lose_or_duplicate_a_byte) {
  for (uint64_t seed = 1; seed <= 200; seed++) {
    rng_state = seed * 0x9E3779B97F4A7C15ULL;
    struct sched_ledger *l = mk(PTOTAL);
    static struct shadow sh;
    memset(&sh, 0, sizeof(sh));
    memset(sh.owner, NB, sizeof(sh.owner));
    for (int step = 0; step < 400; step++) {
      uint64_t off, len;
      int owner, rc, op = (int)rnd_in(10);
      if (op < 4) { /* assign */
        struct sched_range r;
        owner = (int)rnd_in(POWNERS);
        uint64_t max = 1 + rnd_in(400);
        rc = sched_ledger_assign(l, owner, max, &r);
        uint64_t first = 0;
        while (first < PTOTAL && sh.state[first] != M)
          first++;
        if (first == PTOTAL) {
          cr_assert_eq(rc, -ENODATA);
        } else {
          uint64_t run = 0;
          while (first + run < PTOTAL && sh.state[first + run] == M && run < max)
            run++;
          cr_assert(rc == 0 && r.off == first && r.len == run, "seed %lu step %d assign", seed, step);
          shadow_set(&sh, r.off, r.len, A, owner);
        }
      } else if (op < 8) { /* receive */
        pick_assigned(l, &off, &len, &owner);
        bool ok = shadow_all(&sh, off, len, A, owner);
        rc = sched_ledger_receive(l, owner, off, len);
        cr_assert_eq(rc, ok ? 0 : -EINVAL, "seed %lu step %d receive %lu+%lu o%d", seed, step, off, len, owner);
        if (ok)
          shadow_set(&sh, off, len, R, NB);
      } else if (op < 9) { /* transfer */
        pick_assigned(l, &off, &len, &owner);
        int to = (int)rnd_in(POWNERS);
        bool ok = shadow_all(&sh, off, len, A, owner);
        rc = sched_ledger_transfer(l, owner, to, off, len);
        cr_assert_eq(rc, ok ? 0 : -EINVAL, "seed %lu step %d transfer", seed, step);
        if (ok)
          shadow_set(&sh, off, len, A, to);
      } else { /* a connection fails */
        owner = (int)rnd_in(POWNERS);
        uint64_t want = 0;
        for (uint64_t b = 0; b < PTOTAL; b++)
          if (sh.state[b] == A && sh.owner[b] == owner) {
            want++;
            sh.state[b] = M;
            sh.owner[b] = NB;
          }
        cr_assert_eq(sched_ledger_release(l, owner), want, "seed %lu step %d release", seed, step);
      }
      shadow_matches(l, &sh, seed, step);
    }
    /* Finish the object the way the engine does: fail everyone, then fetch what is missing. */
    for (int o = 0; o < POWNERS; o++)
      sched_ledger_release(l, o);
    struct sched_range r;
    while (sched_ledger_assign(l, 0, 1 + rnd_in(300), &r) == 0) {
      cr_assert_eq(sched_ledger_receive(l, 0, r.off, r.len), 0);
      shadow_set(&sh, r.off, r.len, R, NB);
    }
    cr_assert(sched_ledger_complete(l), "seed %lu", seed);
    for (uint64_t b = 0; b < PTOTAL; b++)
      cr_assert_eq(sh.got[b], 1, "seed %lu byte %lu received %d times", seed, b, sh.got[b]);
    sched_ledger_free(l);
  }
}

Test(ledger, receive_any_takes_what_has_not_arrived_whoever_owns_it) {
  /* [0,300) c0, [300,600) c1, [600,1000) missing; c1 brought 400..499 already. */
  struct sched_ledger *l = mk(1000);
  struct sched_range r;
  cr_assert_eq(sched_ledger_assign(l, 0, 300, &r), 0);
  cr_assert_eq(sched_ledger_assign(l, 1, 300, &r), 0);
  cr_assert_eq(sched_ledger_receive(l, 1, 400, 100), 0);
  cr_assert_eq(sched_ledger_receive_any(l, 200, 500), 400, "200..399 (c0, c1), 500..699 (c1, missing)");
  expect_extents(l, (struct sched_extent[]){{0, 200, A, 0}, {200, 500, R, NB}, {700, 300, M, NB}}, 3);
  cr_assert(sched_ledger_owned(l, 0, 0, 200));
  cr_assert(!sched_ledger_owned(l, 0, 100, 200), "100..299 is partly received");
  cr_assert(!sched_ledger_owned(l, 1, 0, 100));
  cr_assert_eq(sched_ledger_receive_any(l, 300, 300), 0, "nothing new");
  cr_assert_eq(sched_ledger_receive_any(l, 900, 101), -EINVAL, "past the end");
  cr_assert_eq(sched_ledger_receive_any(l, 0, 0), -EINVAL);
  expect_extents(l, (struct sched_extent[]){{0, 200, A, 0}, {200, 500, R, NB}, {700, 300, M, NB}}, 3);
  sched_ledger_free(l);
}
