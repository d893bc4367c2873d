/* Discrete-event model of N shaped links, each carrying one HTTP/1.1 connection, that drives the scheduler as the engine will. */
#ifndef MHTTP_TESTS_LINKMODEL_H
#define MHTTP_TESTS_LINKMODEL_H

/*
 * TCP-like timing, no loss: a connection is up one RTT after it starts (handshake); a
 * request reaches the server RTT/2 after it is sent; the server answers requests in order,
 * serialising the body at the link rate in seg_bytes writes; each write arrives RTT/2 after
 * it left and is one client read (sched_on_data). Optional: a rate change or a connection
 * failure at a given time, a head-of-line hold (loss recovery: nothing readable for a while,
 * then all of it at once), and slow start (IW10, doubling per RTT, off by default).
 * Everything is single-threaded and deterministic; time is a double in microseconds.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scheduler/sched.h"

#define LM_MAX_LINKS 4

struct lm_link {
  double mbps;           /* rate, 10^6 bit/s */
  uint32_t rtt_us;       /* round-trip time */
  uint64_t change_at_us; /* if non-zero: the rate becomes change_mbps at this time */
  double change_mbps;
  uint64_t fail_at_us; /* if non-zero: the connection dies at this time */
  uint64_t hold_at_us; /* if non-zero: segments that would reach the client in
                          [hold_at_us, hold_at_us + hold_us) arrive together at its end
                          (a lost segment's retransmission holding back what follows) */
  uint64_t hold_us;
};

struct lm_config {
  struct sched_config sched; /* pipelining on/off lives here */
  uint64_t size;             /* object size, bytes */
  int nlinks;                /* link 0 carries the probe */
  struct lm_link link[LM_MAX_LINKS];
  uint32_t seg_bytes;       /* server write = client read granularity; 8 KiB */
  bool slow_start;          /* TCP slow start per connection; off */
  bool connect_after_probe; /* paper §5.4: open the other connections only once the probe
                               answered; default false: handshake all paths at t = 0 and
                               request on them as soon as the size is known */
};

/* One request as issued. */
struct lm_chunk {
  int link;
  uint64_t off;
  uint64_t len;
  double issued_us;
  enum sched_case kase;
};

struct lm_link_result {
  double finish_us; /* last byte the object needed from this link */
  uint64_t useful;  /* bytes accepted */
  uint64_t wasted;  /* bytes carried that another link had brought first */
  uint32_t chunks;
  double gap_us; /* server idle between responses while requests were expected:
                    the per-chunk round trip pipelining removes */
  uint32_t gaps; /* idle periods counted in gap_us */
  bool failed;
};

struct lm_result {
  double completion_us; /* when the last missing byte arrived */
  double ideal_us;      /* lm_ideal_us of the config */
  struct lm_link_result link[LM_MAX_LINKS];
  struct lm_chunk *chunks; /* issue order; owned, freed by lm_result_free */
  size_t nchunks;
  uint64_t duplicate; /* bytes the scheduler counted new that reassembly already had, or
                         new ones it did not count (must be 0) */
  uint64_t missing;   /* bytes never accepted (must be 0) */
  uint64_t events;
};

/* Defaults: scheduler defaults, seg 8 KiB, no slow start, concurrent connect. */
void lm_config_default(struct lm_config *cfg);

/* Ideal completion: size / Σ rates + one setup, where one setup is a handshake plus one
 * request round trip on the slowest-RTT link (2 · max RTT): the earliest moment every link
 * can be delivering bytes. */
double lm_ideal_us(const struct lm_config *cfg);

/* Runs the model to completion. *res is filled (the caller frees it with lm_result_free).
 * Returns 0, -EINVAL (bad config), -ENOMEM, -EIO (the scheduler returned an error the
 * engine would not expect), or -ETIMEDOUT (no progress: every link failed). */
int lm_run(const struct lm_config *cfg, struct lm_result *res);
void lm_result_free(struct lm_result *res);

#endif
