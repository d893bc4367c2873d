/* The one clock of the engine and the shim: CLOCK_MONOTONIC in microseconds (uv_hrtime's clock, host-wide, so values compare across threads and processes). */
#ifndef MH_CLOCK_H
#define MH_CLOCK_H
#include <stdint.h>
#include <time.h>

static inline uint64_t mh_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

#endif
