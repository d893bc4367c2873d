/* A leg's state machine (mh_split_int.h): the transitions mh__leg_set_state allows, and DEAD as the end. */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

#include "mh_split_int.h"

static struct mh_split sp;  /* zeroed: only its id is read (the transition's log line) */

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
