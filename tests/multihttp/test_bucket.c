/* The receive rate limit's token bucket (mh_bucket.h): credit earned at the rate and capped at the burst, reads held below a quantum, the wait until the next read, and a long run's average exactly the rate. */
#include <criterion/criterion.h>

#include "mh_bucket.h"

#define MIB (1u << 20)

Test(bucket, no_limit_allows_everything) {
  struct mh_bucket b = {0};
  mh_bucket_set(&b, 0, 5);
  cr_assert_eq(mh_bucket_avail(&b, 5, 65536), 65536u);
  mh_bucket_take(&b, 5, 65536);
  cr_assert_eq(mh_bucket_avail(&b, 5, 65536), 65536u);
  cr_assert_eq(mh_bucket_wait_us(&b, 5), 0u);
}

/* One step of a table: at t_us, avail(want) gives `got` and take(take) follows; then wait. */
struct step {
  uint64_t t_us;
  size_t want, got, take;
  uint64_t wait_us;
};

static void run(uint64_t rate, const struct step *s, size_t n) {
  struct mh_bucket b = {0};
  mh_bucket_set(&b, rate, 0);
  for (size_t i = 0; i < n; i++) {
    cr_assert_eq(mh_bucket_avail(&b, s[i].t_us, s[i].want), s[i].got, "step %zu: avail %zu, want %zu", i,
                 mh_bucket_avail(&b, s[i].t_us, s[i].want), s[i].got);
    mh_bucket_take(&b, s[i].t_us, s[i].take);
    cr_assert_eq(mh_bucket_wait_us(&b, s[i].t_us), s[i].wait_us, "step %zu: wait %lu, want %lu", i,
                 (unsigned long)mh_bucket_wait_us(&b, s[i].t_us), (unsigned long)s[i].wait_us);
  }
}

Test(bucket, one_mib_per_second) {
  /* 1 MiB/s: burst 131072 B; a new limit starts with one quantum (16384 B) */
  const struct step s[] = {
      {0, 65536, 16384, 16384, 15625},           /* the first read goes at once, then 16384 B take 15.625 ms */
      {10000, 65536, 0, 0, 5625},                /* 10 ms earned 10485 B: below the quantum */
      {15625, 65536, 16384, 16384, 15625},       /* exactly a quantum */
      {1000000, 1 << 20, 131072, 131072, 15625}, /* idle for a second: the burst, not a second's worth */
      {1015625, 8192, 8192, 8192, 7813},         /* a small want takes less; 8192 B owed -> 7.8125 ms, rounded up */
  };
  run(MIB, s, sizeof s / sizeof *s);
}

Test(bucket, small_rate_waits_for_its_burst) {
  /* 800 B/s: burst 100 B, below the quantum: reads of 100 B every 125 ms */
  const struct step s[] = {
      {0, 4096, 100, 100, 125000},
      {100000, 4096, 0, 0, 25000},
      {125000, 4096, 100, 100, 125000},
      {10000000, 4096, 100, 0, 0}, /* a long idle gap still gives only the burst */
  };
  run(800, s, sizeof s / sizeof *s);
}

Test(bucket, a_read_past_the_credit_is_a_debt) {
  struct mh_bucket b = {0};
  mh_bucket_set(&b, 1000000, 0);        /* burst 125000 B */
  mh_bucket_take(&b, 0, 16384 + 50000); /* 50000 B more than the credit */
  cr_assert_eq(mh_bucket_avail(&b, 50000, 4096), 0u);
  cr_assert_eq(mh_bucket_wait_us(&b, 0), 66384u); /* the debt and a quantum at 1 B/us */
}

Test(bucket, changing_the_rate_keeps_earned_credit_up_to_the_new_burst) {
  struct mh_bucket b = {0};
  mh_bucket_set(&b, 8000000, 0); /* burst 1000000 B */
  mh_bucket_take(&b, 0, 16384);
  mh_bucket_set(&b, 8000, 1000000); /* 8 MB earned, the new burst is 1000 B (< quantum) */
  cr_assert_eq(mh_bucket_avail(&b, 1000000, 65536), 1000u);
  mh_bucket_take(&b, 1000000, 1000);
  cr_assert_eq(mh_bucket_wait_us(&b, 1000000), 125000u);
  mh_bucket_set(&b, 0, 1000000); /* lifted */
  cr_assert_eq(mh_bucket_avail(&b, 1000000, 65536), 65536u);
}

Test(bucket, rate_is_capped) {
  struct mh_bucket b = {0};
  mh_bucket_set(&b, UINT64_MAX, 0);
  cr_assert_eq(b.rate, MH_BUCKET_RATE_MAX);
  mh_bucket_take(&b, 0, 1 << 20);
  cr_assert_eq(mh_bucket_avail(&b, 3600ull * 1000000, 65536), 65536u); /* no overflow after an hour */
}

Test(bucket, a_reader_that_reads_all_it_may_gets_the_rate) {
  /* 10 simulated seconds at 1 MB/s, the reader waking when told: 10 MB + the first quantum,
   * never more than the burst ahead */
  struct mh_bucket b = {0};
  uint64_t t = 0, got = 0;
  mh_bucket_set(&b, 1000000, 0);
  while (t <= 10000000) {
    size_t n = mh_bucket_avail(&b, t, 65536);
    mh_bucket_take(&b, t, n);
    got += n;
    cr_assert_leq(got, t + 16384 + 125000);
    t += mh_bucket_wait_us(&b, t) + 1;
  }
  cr_assert_geq(got, 10000000 - 16384);
  cr_assert_leq(got, 10000000 + 16384);
}
