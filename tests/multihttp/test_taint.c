/* The engine's table of objects whose split failed the origin's digest: keys, expiry, the oldest forgotten. */
#include "mh_taint.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#define K(h, t) mh_taint_key(h, strlen(h), t, strlen(t))

Test(taint, keys_tell_host_and_target_apart) {
  cr_expect_eq(K("a.test", "/x"), K("a.test", "/x"));
  cr_expect_neq(K("a.test", "/x"), K("a.test", "/y"));
  cr_expect_neq(K("a.test", "/x"), K("b.test", "/x"));
  cr_expect_neq(K("a.test", "b/x"), K("a.testb", "/x"), "the separator keeps host and target apart");
  cr_expect_neq(K("", ""), 0u, "0 is an empty slot");
}

Test(taint, remembered_until_the_ttl) {
  struct mh_taint t = {0};
  uint64_t k = K("cdn.test:8082", "/obj/1"), now = 1000;
  cr_expect_not(mh_taint_has(&t, k, now));
  mh_taint_add(&t, k, now);
  cr_expect(mh_taint_has(&t, k, now));
  cr_expect(mh_taint_has(&t, k, now + MH_TAINT_TTL_US - 1));
  cr_expect_not(mh_taint_has(&t, k, now + MH_TAINT_TTL_US));
  mh_taint_add(&t, k, now + MH_TAINT_TTL_US); /* again: its time starts over, one slot */
  cr_expect(mh_taint_has(&t, k, now + MH_TAINT_TTL_US + 1));
  cr_expect_eq(t.next, 1u);
}

Test(taint, the_oldest_is_forgotten) {
  struct mh_taint t = {0};
  char target[16];
  for (int i = 0; i <= MH_TAINT_MAX; i++) {
    snprintf(target, sizeof target, "/%d", i);
    mh_taint_add(&t, K("h", target), 5);
  }
  cr_expect_not(mh_taint_has(&t, K("h", "/0"), 5));
  cr_expect(mh_taint_has(&t, K("h", "/1"), 5));
  snprintf(target, sizeof target, "/%d", MH_TAINT_MAX);
  cr_expect(mh_taint_has(&t, K("h", target), 5));
}
