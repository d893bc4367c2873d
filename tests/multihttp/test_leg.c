/* A leg's state machine (mh_split_int.h): the transitions mh__leg_set_state allows, and DEAD as the end. */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

#include "split_deliver.h"
#include "split_leg.h"

static struct mh_split sp; /* zeroed: only its id is read (the transition's log line) */

static struct mh__leg leg(enum mh__leg_state st) {
  struct mh__leg g;
  memset(&g, 0, sizeof g);
  g.sp = &sp;
  g.st = st;
  return g;
}

/* Connecting, ready, then dead; setting the state it has is no change. */
Test(leg, connecting_ready_dead) {
  struct mh__leg g = leg(LEG_CONNECTING);
  mh__leg_set_state(&g, LEG_CONNECTING);
  cr_assert_eq(g.st, LEG_CONNECTING);
  mh__leg_set_state(&g, LEG_READY);
  cr_assert_eq(g.st, LEG_READY);
  mh__leg_set_state(&g, LEG_DEAD);
  cr_assert_eq(g.st, LEG_DEAD);
  mh__leg_set_state(&g, LEG_DEAD);
  cr_assert_eq(g.st, LEG_DEAD);
}

/* A connect that fails goes straight to DEAD. */
Test(leg, connecting_dead) {
  struct mh__leg g = leg(LEG_CONNECTING);
  mh__leg_set_state(&g, LEG_DEAD);
  cr_assert_eq(g.st, LEG_DEAD);
}

/* DEAD is final: a dead leg is never read or asked again, so bringing one back is a bug the
 * debug build stops at. */
Test(leg, dead_is_final, .signal = SIGABRT) {
  struct mh__leg g = leg(LEG_DEAD);
  mh__leg_set_state(&g, LEG_READY);
}

/* May a leg read while the window is full? Only the leg that brings the program's next byte,
 * and only while the program waits for it: through whatever its queue holds ahead of that byte
 * (the 1M-window scale run stalled 3 times in 21 when that byte sat behind a range a rescue had
 * already asked elsewhere, on a leg the old rule kept paused). */
struct read_row {
  const char *name;
  size_t used;      /* budget used of max 1 MiB: full when > max - MH__IO */
  int held_at_pos;  /* a run at the program's position waits for it */
  int head_pending; /* the rewritten head is not all sent */
  unsigned qn;
  struct mh__req q[3]; /* the leg's queue: off, len, got */
  int want;
};

static const struct mh_sink_ops ordered_ops = {.name = "test", .ordered = 1};

Test(leg, reads_through_its_queue_to_the_byte_the_program_waits_for) {
  const uint64_t pos = 500000, total = 1048576;
  static const struct read_row rows[] = {
      {"window with room", 0, 0, 0, 1, {{700000, 10000, 0, 0}}, 1},
      {"full: the next byte is its current answer's", 1 << 20, 0, 0, 1, {{pos, 10000, 0, 0}}, 1},
      {"full: inside its current answer, past what came", 1 << 20, 0, 0, 1, {{pos - 4000, 10000, 2000, 0}}, 1},
      {"full: behind a range asked before it", 1 << 20, 0, 0, 2, {{700000, 100000, 0, 0}, {pos, 20000, 0, 0}}, 1},
      {"full: behind the end asked first", 1 << 20, 0, 0, 2, {{total - 32768, 32768, 0, 0}, {pos, 20000, 0, 0}}, 1},
      {"full: third in its queue",
       1 << 20,
       0,
       0,
       3,
       {{600000, 1000, 0, 0}, {700000, 1000, 0, 0}, {pos - 10, 20000, 0, 0}},
       1},
      {"full: it does not bring that byte", 1 << 20, 0, 0, 2, {{700000, 100000, 0, 0}, {800000, 1000, 0, 0}}, 0},
      {"full: that byte came already on it", 1 << 20, 0, 0, 1, {{pos - 4000, 10000, 6000, 0}}, 0},
      {"full: the program has bytes to take first", 1 << 20, 1, 0, 2, {{700000, 100000, 0, 0}, {pos, 20000, 0, 0}}, 0},
      {"full: the head is still going out", 1 << 20, 0, 1, 1, {{pos, 10000, 0, 0}}, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const struct read_row *r = &rows[i];
    struct mh_config cfg;
    memset(&cfg, 0, sizeof cfg);
    struct mh_reasm_budget budget = {.used = r->used, .max = 1 << 20};
    struct mh_sink sink = {.ops = &ordered_ops};
    struct mh_split s;
    memset(&s, 0, sizeof s);
    s.state = SP_MANAGED;
    s.total = total;
    s.cfg = &cfg;
    s.sink = &sink;
    mh_reasm_init(&s.ra, pos, &budget);
    if (r->held_at_pos)
      cr_assert_eq(mh_reasm_put(&s.ra, pos, "x", 1), 0);
    budget.used = r->used; /* the other objects of the engine hold the rest */
    cr_assert_eq(mh__deliver_new(&s), 0);
    if (r->head_pending)
      cr_assert_eq(mh__deliver_head(&s, "H", 1), 0);
    struct mh__leg g;
    memset(&g, 0, sizeof g);
    g.sp = &s;
    g.st = LEG_READY;
    g.ans.resp_started = 1;
    g.qn = r->qn;
    memcpy(g.q, r->q, sizeof r->q);
    cr_expect_eq(mh__leg_may_read(&g), r->want, "%s: may read %d, want %d", r->name, mh__leg_may_read(&g), r->want);
    mh__deliver_free(&s);
    budget.used = 0;
    mh_reasm_free(&s.ra);
  }
}
