/* A token bucket for a receive rate limit (the limit-rate option): pure, the time comes in as an argument; the split's legs and the API's one-path transfer read only what it allows. */
#ifndef MH_BUCKET_H
#define MH_BUCKET_H
#include <stddef.h>
#include <stdint.h>

/* The highest rate taken (bytes/s): credit * 1e6 stays far from overflow. */
#define MH_BUCKET_RATE_MAX (1ull << 40)
/* Reads wait for this many bytes of credit (or the whole burst, when it is smaller): a limit
 * reads in a few chunks per interval, not a syscall per byte. */
#define MH_BUCKET_QUANTUM 16384u

struct mh_bucket {
  uint64_t rate;  /* bytes/s; 0: no limit */
  int64_t credit; /* bytes x 1e6 (a read larger than the credit leaves a debt) */
  uint64_t t_us;  /* when credit was last brought up to date */
};

/* Sets the rate (0: none) at now: credit earned so far is kept up to the new burst; a bucket
 * that had no limit starts with one quantum, so the first read goes at once. */
void mh_bucket_set(struct mh_bucket *b, uint64_t rate, uint64_t now_us);
/* Bytes that may be read now, at most want: 0 while the credit is below the quantum; want when
 * there is no limit. */
size_t mh_bucket_avail(const struct mh_bucket *b, uint64_t now_us, size_t want);
/* n bytes were read at now. */
void mh_bucket_take(struct mh_bucket *b, uint64_t now_us, size_t n);
/* Microseconds from now until mh_bucket_avail gives bytes (0: now, or no limit). */
uint64_t mh_bucket_wait_us(const struct mh_bucket *b, uint64_t now_us);
/* The most credit a bucket at rate holds, in bytes: an eighth of a second of it (at least 1). */
uint64_t mh_bucket_burst(uint64_t rate);

#endif
