/* Reassembly buffer: in-order delivery across gaps, duplicates and overlaps dropped, the engine's budget counted exactly. */
#include <criterion/criterion.h>

#include <string.h>

#include "mh_reasm.h"

static char src[1 << 20];

static void fill(void) {
  for (size_t i = 0; i < sizeof src; i++)
    src[i] = (char)(i * 131 + (i >> 8));
}

/* Delivers everything deliverable, checking it against src; returns how many bytes. */
static size_t drain(struct mh_reasm *r) {
  size_t total = 0, n;
  const char *d;
  while ((n = mh_reasm_peek(r, &d))) {
    cr_assert(memcmp(d, src + r->pos, n) == 0, "wrong bytes at %llu", (unsigned long long)r->pos);
    mh_reasm_skip(r, n);
    total += n;
  }
  return total;
}

static struct mh_reasm_budget budget = {.max = 32u << 20};

Test(reasm, in_order_runs_deliver_at_once) {
  fill();
  struct mh_reasm r;
  mh_reasm_init(&r, 0, &budget);
  cr_assert_eq(mh_reasm_put(&r, 0, src, 1000), 0);
  cr_assert_eq(mh_reasm_put(&r, 1000, src + 1000, 5000), 0);
  cr_assert_eq(drain(&r), 6000);
  cr_assert_eq(r.pos, 6000);
  cr_assert_eq(r.held, 0);
  cr_assert_eq(budget.used, 0);
}

Test(reasm, gap_holds_later_bytes_until_filled) {
  fill();
  struct mh_reasm r;
  mh_reasm_init(&r, 0, &budget);
  mh_reasm_put(&r, 70000, src + 70000, 30000);
  mh_reasm_put(&r, 200000, src + 200000, 100);
  const char *d;
  cr_assert_eq(mh_reasm_peek(&r, &d), 0, "never past a gap");
  cr_assert(budget.used >= 30100);
  mh_reasm_put(&r, 0, src, 70000);
  cr_assert_eq(drain(&r), 100000);
  mh_reasm_put(&r, 100000, src + 100000, 100000);
  cr_assert_eq(drain(&r), 100100);
  cr_assert_eq(r.pos, 200100);
  mh_reasm_free(&r);
  cr_assert_eq(budget.used, 0);
}

Test(reasm, duplicates_and_overlaps_keep_the_first_copy) {
  fill();
  struct mh_reasm r;
  mh_reasm_init(&r, 0, &budget);
  char junk[4000];
  memset(junk, 'X', sizeof junk);
  mh_reasm_put(&r, 1000, src + 1000, 2000);
  /* a second copy over [500, 4500): only the bytes not held yet are taken, from it */
  char mix[4000];
  memcpy(mix, src + 500, sizeof mix);
  mh_reasm_put(&r, 500, mix, sizeof mix);
  mh_reasm_put(&r, 1500, junk, 1000); /* all held already: dropped */
  mh_reasm_put(&r, 0, src, 500);
  cr_assert_eq(drain(&r), 4500);
  mh_reasm_put(&r, 100, junk, 4000); /* below pos: dropped */
  const char *d;
  cr_assert_eq(mh_reasm_peek(&r, &d), 0);
  mh_reasm_free(&r);
}

Test(reasm, partial_skips_and_random_order) {
  fill();
  struct mh_reasm r;
  mh_reasm_init(&r, 0, &budget);
  /* 64 pieces of 16 KiB in a scrambled order, delivered in small bites */
  size_t piece = 16384, n = 64, delivered = 0;
  for (size_t k = 0; k < n; k++) {
    size_t i = (k * 37) % n;
    mh_reasm_put(&r, i * piece, src + i * piece, piece);
    const char *d;
    size_t avail;
    while ((avail = mh_reasm_peek(&r, &d))) {
      size_t bite = avail > 3000 ? 3000 : avail;
      cr_assert(memcmp(d, src + r.pos, bite) == 0);
      mh_reasm_skip(&r, bite);
      delivered += bite;
    }
  }
  cr_assert_eq(delivered, piece * n);
  cr_assert_eq(budget.used, 0);
}

Test(reasm, budget_room_reflects_the_window) {
  fill();
  budget.max = 256 * 1024;
  struct mh_reasm r;
  mh_reasm_init(&r, 0, &budget);
  cr_assert(mh_reasm_room(&r, 128 * 1024));
  mh_reasm_put(&r, 100, src + 100, 200000);
  cr_assert(!mh_reasm_room(&r, 128 * 1024), "used %zu", budget.used);
  mh_reasm_put(&r, 0, src, 100);
  drain(&r);
  cr_assert(mh_reasm_room(&r, 128 * 1024));
}

/* Each engine has its own window: bytes one engine's object holds leave another's room. */
Test(reasm, budgets_of_two_engines_are_apart) {
  fill();
  struct mh_reasm_budget other = {.max = 256 * 1024};
  budget.max = 256 * 1024;
  struct mh_reasm r, o;
  mh_reasm_init(&r, 0, &budget);
  mh_reasm_init(&o, 0, &other);
  mh_reasm_put(&r, 100, src + 100, 200000);
  cr_assert(!mh_reasm_room(&r, 128 * 1024));
  cr_assert(mh_reasm_room(&o, 128 * 1024), "the other engine's window is untouched");
  cr_assert_eq(other.used, 0);
  mh_reasm_free(&r);
  cr_assert_eq(budget.used, 0);
}

/* Delivers everything held in any order (a sink with ordered = 0), checking it against src and
 * counting each byte in seen[]; returns how many bytes. */
static size_t drain_any(struct mh_reasm *r, unsigned char *seen) {
  size_t total = 0, n;
  uint64_t off;
  const char *d;
  while ((n = mh_reasm_peek_any(r, &off, &d))) {
    cr_assert(memcmp(d, src + off, n) == 0, "wrong bytes at %llu", (unsigned long long)off);
    size_t take = n > 3000 ? n / 2 : n; /* a sink that takes part of a run */
    for (size_t i = 0; i < take; i++)
      seen[off + i]++;
    cr_assert_eq(mh_reasm_skip_any(r, take), 0);
    total += take;
  }
  return total;
}

/* Any order: bytes past a gap go at once; a later copy of bytes delivered ahead of pos is
 * dropped; pos and filled_to move over delivered runs when the gap fills. */
Test(reasm, any_order_delivers_past_gaps_and_never_twice) {
  fill();
  static unsigned char seen[300000];
  memset(seen, 0, sizeof seen);
  struct mh_reasm r;
  mh_reasm_init(&r, 0, &budget);
  mh_reasm_put(&r, 200000, src + 200000, 100000);
  mh_reasm_put(&r, 50000, src + 50000, 20000);
  cr_assert_eq(drain_any(&r, seen), 120000, "past the gap at once");
  cr_assert_eq(r.pos, 0);
  cr_assert_eq(mh_reasm_filled_to(&r), 0);
  mh_reasm_put(&r, 40000, src + 40000, 40000);    /* overlaps [50000, 70000) delivered */
  mh_reasm_put(&r, 190000, src + 190000, 110000); /* ends inside a delivered run */
  cr_assert_eq(drain_any(&r, seen), 30000);
  cr_assert_eq(mh_reasm_filled_to(&r), 0);
  mh_reasm_put(&r, 0, src, 40000);
  cr_assert_eq(mh_reasm_filled_to(&r), 80000, "held [0, 40000), then delivered up to 80000");
  cr_assert_eq(drain_any(&r, seen), 40000);
  cr_assert_eq(r.pos, 80000, "over the delivered runs the gap joined");
  mh_reasm_put(&r, 80000, src + 80000, 110000);
  cr_assert_eq(mh_reasm_filled_to(&r), 300000);
  cr_assert_eq(drain_any(&r, seen), 110000);
  cr_assert_eq(r.pos, 300000);
  cr_assert_null(r.done);
  for (size_t i = 0; i < sizeof seen; i++)
    cr_assert_eq(seen[i], 1, "byte %zu delivered %u times", i, seen[i]);
  mh_reasm_free(&r);
  cr_assert_eq(budget.used, 0);
}

/* A resumed object (mh_reasm_mark_done, before anything is held): runs the destination has are
 * delivered already; pos moves over the one at pos and every later one a delivery reaches. */
Test(reasm, resumed_runs_count_as_delivered) {
  fill();
  struct {
    uint64_t off, end;
  } runs[] = {{0, 100}, {300, 400}, {400, 500}, {700, 800}};
  struct mh_reasm r;
  mh_reasm_init(&r, 0, &budget);
  for (size_t i = 0; i < 4; i++)
    cr_assert_eq(mh_reasm_mark_done(&r, runs[i].off, runs[i].end), 0);
  cr_assert_eq(mh_reasm_mark_done(&r, 50, 60), 0, "below pos: nothing");
  cr_assert_eq(r.pos, 100, "the run at 0 is behind pos");
  cr_assert(r.done && r.done->off == 300 && r.done->end == 500, "adjacent runs merge");
  cr_assert(r.done->next && r.done->next->off == 700 && !r.done->next->next);
  /* the gap 100..300 arrives and is delivered in any order: pos jumps over 300..500 */
  uint64_t off;
  const char *d;
  cr_assert_eq(mh_reasm_put(&r, 100, src + 100, 200), 0);
  size_t n = mh_reasm_peek_any(&r, &off, &d);
  cr_assert_eq(off, 100);
  cr_assert_eq(n, 200);
  cr_assert_eq(mh_reasm_skip_any(&r, n), 0);
  cr_assert_eq(r.pos, 500);
  /* 500..700, then 800..: pos reaches the end */
  cr_assert_eq(mh_reasm_put(&r, 500, src + 500, 200), 0);
  cr_assert_eq(mh_reasm_skip_any(&r, mh_reasm_peek_any(&r, &off, &d)), 0);
  cr_assert_eq(r.pos, 800);
  cr_assert_null(r.done);
  cr_assert_eq(mh_reasm_mark_done(&r, 900, 1000), 0);
  cr_assert_eq(mh_reasm_put(&r, 800, src + 800, 100), 0);
  cr_assert_eq(mh_reasm_skip_any(&r, mh_reasm_peek_any(&r, &off, &d)), 0);
  cr_assert_eq(r.pos, 1000);
  mh_reasm_free(&r);
  cr_assert_eq(budget.used, 0);
}
