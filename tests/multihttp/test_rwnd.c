/* Receive-window clamp of extra legs: k x recorded BDP within bounds, nothing when unmeasured, doubling only when the clamp (not the path) limited the connection. */
#include <criterion/criterion.h>
#include <math.h>

#include "mh_rwnd.h"

#define BIG (4ULL << 20)

Test(rwnd, clamp_is_k_times_recorded_bdp) {
  /* demo's lte0 as the store records it: 50.1 ms, 6.04 MB/s -> BDP 302.6 kB */
  cr_assert_eq(mh_rwnd_clamp(BIG, 50100, 50000, 6040000.0, 1.5), 453906u);
  cr_assert_eq(mh_rwnd_clamp(BIG, 50100, 50000, 6040000.0, 2.0), 605208u);
}

Test(rwnd, nothing_without_both_metrics_or_factor) {
  cr_assert_eq(mh_rwnd_clamp(BIG, 0, 50000, 6040000.0, 1.5), 0u);
  cr_assert_eq(mh_rwnd_clamp(BIG, 50000, 50000, 0.0, 1.5), 0u);
  cr_assert_eq(mh_rwnd_clamp(BIG, 50000, 50000, -1.0, 1.5), 0u);
  cr_assert_eq(mh_rwnd_clamp(BIG, 50000, 50000, NAN, 1.5), 0u);
  cr_assert_eq(mh_rwnd_clamp(BIG, 50000, 50000, INFINITY, 1.5), 0u);
  cr_assert_eq(mh_rwnd_clamp(BIG, 50000, 50000, 6040000.0, 0.0), 0u);
  cr_assert_eq(mh_rwnd_clamp(BIG, 50000, 50000, 6040000.0, NAN), 0u);
}

Test(rwnd, small_objects_are_not_clamped) {
  /* lte0's BDP 302.6 kB: 1 MiB is under 8 of them, 2.5 MB is not */
  cr_assert_eq(mh_rwnd_clamp(1ULL << 20, 50100, 50000, 6040000.0, 1.5), 0u);
  cr_assert_eq(mh_rwnd_clamp(2420000, 50100, 50000, 6040000.0, 1.5), 0u);
  cr_assert_eq(mh_rwnd_clamp(2430000, 50100, 50000, 6040000.0, 1.5), 453906u);
}

Test(rwnd, record_must_match_the_handshake) {
  /* lte0's record while this connection's handshake took 10 ms or 120 ms: another network */
  cr_assert_eq(mh_rwnd_clamp(BIG, 50100, 0, 6040000.0, 1.5), 0u);
  cr_assert_eq(mh_rwnd_clamp(BIG, 50100, 10000, 6040000.0, 1.5), 0u);
  cr_assert_eq(mh_rwnd_clamp(BIG, 50100, 120000, 6040000.0, 1.5), 0u);
  cr_assert_eq(mh_rwnd_clamp(BIG, 50100, 26000, 6040000.0, 1.5), 453906u);
  cr_assert_eq(mh_rwnd_clamp(BIG, 50100, 100000, 6040000.0, 1.5), 453906u);
}

Test(rwnd, bounded) {
  /* 1 ms x 1 MB/s = 1 kB: never below the default initial window */
  cr_assert_eq(mh_rwnd_clamp(BIG, 1000, 1000, 1e6, 1.5), MH_RWND_MIN);
  cr_assert_eq(mh_rwnd_clamp(UINT64_MAX, 2000000, 2000000, 1e9, 16), MH_RWND_MAX);
}

Test(rwnd, grows_only_when_the_clamp_was_filled) {
  uint32_t w = 453906; /* k = 1.5 on lte0 */
  /* too short an interval to judge */
  cr_assert_eq(mh_rwnd_grow(w, 10u << 20, 49000, 50000), w);
  /* the path at its recorded rate: 6.04 MB/s over 100 ms (or 50) = 2/3 of what w allows */
  cr_assert_eq(mh_rwnd_grow(w, 604000, 100000, 50000), w);
  cr_assert_eq(mh_rwnd_grow(w, 302000, 50000, 50000), w);
  cr_assert_eq(mh_rwnd_grow(w, w, 50000, 50000), 2 * w);
  /* just under 90 % of w per srtt_min: kept; at 90 %: doubled */
  cr_assert_eq(mh_rwnd_grow(w, (uint64_t)(0.89 * 2 * w), 100000, 50000), w);
  cr_assert_eq(mh_rwnd_grow(w, (uint64_t)(0.9 * 2 * w) + 1, 100000, 50000), 2 * w);
  /* at the top it stays there */
  cr_assert_eq(mh_rwnd_grow(MH_RWND_MAX - 1, UINT64_MAX / 4, 100000, 50000), MH_RWND_MAX);
  cr_assert_eq(mh_rwnd_grow(0, 1u << 30, 100000, 50000), 0u);
  cr_assert_eq(mh_rwnd_grow(w, 1u << 30, 100000, 0), w);
}
