/* Unit tests: the pending load (connections placed at connect time since the published metrics snapshot). */
#include "policy/pending.h"

#include <criterion/criterion.h>

/* Six connects 1 ms apart on wifi0 (0) at t = 1000..6000 µs after a snapshot published at
 * t = 500 µs: srtt 10 ms gives since = 0 (500 - 20000 clamps), all six pending; a later
 * snapshot at 40000 µs counts those placed before 40000 - 20000 = 20000: none pending. */
Test(pol_pending, pending_after_snapshot) {
  static struct pol_pending l;
  for (uint64_t t = 1000; t <= 6000; t += 1000)
    pol_pending_note(&l, 0, t);
  cr_assert_eq(pol_pending_since(500, 10000), 0);
  cr_assert_eq(pol_pending_count(&l, 0, pol_pending_since(500, 10000), 6000), 6);
  cr_assert_eq(pol_pending_count(&l, 1, 0, 6000), 0, "another interface has none");
  cr_assert_eq(pol_pending_since(40000, 10000), 20000);
  cr_assert_eq(pol_pending_count(&l, 0, pol_pending_since(40000, 10000), 40000), 0);
  /* a snapshot at 24000 µs: 24000 - 20000 = 4000 -> the ones at 5000 and 6000 are pending */
  cr_assert_eq(pol_pending_count(&l, 0, pol_pending_since(24000, 10000), 24000), 2);
}

/* No round trip measured: 200 ms of grace. A note newer than now (a racing thread) is not
 * counted. */
Test(pol_pending, grace_and_future) {
  static struct pol_pending l;
  cr_assert_eq(pol_pending_since(1000000, 0), 800000);
  pol_pending_note(&l, 2, 900000);
  pol_pending_note(&l, 2, 950000);
  cr_assert_eq(pol_pending_count(&l, 2, 800000, 920000), 1);
  cr_assert_eq(pol_pending_count(&l, 2, 800000, 950000), 2);
}

/* The ring keeps the newest POL_PENDING_SLOTS notes; bad interfaces are ignored. */
Test(pol_pending, ring_and_bounds) {
  static struct pol_pending l;
  for (uint64_t t = 1; t <= POL_PENDING_SLOTS + 5; t++)
    pol_pending_note(&l, 1, t);
  cr_assert_eq(pol_pending_count(&l, 1, 0, 1000), POL_PENDING_SLOTS);
  cr_assert_eq(pol_pending_count(&l, 1, 6, 1000), POL_PENDING_SLOTS - 1, "notes 7.. remain");
  pol_pending_note(&l, -1, 10);
  pol_pending_note(&l, POL_PENDING_IFACES, 10);
  pol_pending_note(&l, 0, 0);
  cr_assert_eq(pol_pending_count(&l, POL_PENDING_IFACES, 0, 1000), 0);
  cr_assert_eq(pol_pending_count(&l, 0, 0, 1000), 0);
}
