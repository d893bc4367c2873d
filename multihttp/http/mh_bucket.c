/* A token bucket for a receive rate limit (mh_bucket.h): credit in bytes x 1e6, earned at the rate, capped at the burst. */
#include "mh_bucket.h"

#define MH__US 1000000ull

uint64_t mh_bucket_burst(uint64_t rate) { return rate / 8 ? rate / 8 : 1; }

/* The credit at now: what b held plus what the time since earned, capped at the burst. A
 * second earns the whole burst already, so a longer gap counts as one (no overflow). */
static int64_t mh__credit(const struct mh_bucket *b, uint64_t now_us) {
  uint64_t dt = now_us > b->t_us ? now_us - b->t_us : 0;
  if (dt > MH__US)
    dt = MH__US;
  int64_t cap = (int64_t)(mh_bucket_burst(b->rate) * MH__US);
  int64_t c = b->credit + (int64_t)(b->rate * dt);
  return c > cap ? cap : c;
}

/* The credit a read waits for: a quantum, or the burst when it is smaller. */
static int64_t mh__need(uint64_t rate) {
  uint64_t q = mh_bucket_burst(rate);
  return (int64_t)((q < MH_BUCKET_QUANTUM ? q : MH_BUCKET_QUANTUM) * MH__US);
}

void mh_bucket_set(struct mh_bucket *b, uint64_t rate, uint64_t now_us) {
  if (rate > MH_BUCKET_RATE_MAX)
    rate = MH_BUCKET_RATE_MAX;
  int64_t c = b->rate ? mh__credit(b, now_us) : 0;
  b->rate = rate;
  b->t_us = now_us;
  if (!rate) {
    b->credit = 0;
    return;
  }
  int64_t cap = (int64_t)(mh_bucket_burst(rate) * MH__US);
  b->credit = c > cap ? cap : c < mh__need(rate) ? mh__need(rate) : c;
}

size_t mh_bucket_avail(const struct mh_bucket *b, uint64_t now_us, size_t want) {
  if (!b->rate)
    return want;
  int64_t c = mh__credit(b, now_us);
  if (c < mh__need(b->rate))
    return 0;
  uint64_t bytes = (uint64_t)c / MH__US;
  return bytes < want ? (size_t)bytes : want;
}

void mh_bucket_take(struct mh_bucket *b, uint64_t now_us, size_t n) {
  if (!b->rate)
    return;
  b->credit = mh__credit(b, now_us) - (int64_t)(n * MH__US);
  b->t_us = now_us > b->t_us ? now_us : b->t_us;
}

uint64_t mh_bucket_wait_us(const struct mh_bucket *b, uint64_t now_us) {
  if (!b->rate)
    return 0;
  int64_t lack = mh__need(b->rate) - mh__credit(b, now_us);
  return lack <= 0 ? 0 : ((uint64_t)lack + b->rate - 1) / b->rate;
}
