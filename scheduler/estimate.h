/* Per-connection estimators of mHTTP §5.2: harmonic-mean throughput and EWMA latency. */
#ifndef MHTTP_SCHEDULER_ESTIMATE_H
#define MHTTP_SCHEDULER_ESTIMATE_H

#include <stdint.h>

/* Harmonic mean of throughput samples, updated per read: R̄ ← (n+1) / (n/R̄ + 1/x).
 * The paper counts every sample forever, so after a long transfer a rate change barely moves
 * R̄; a non-zero `window` caps n at window-1, which turns the mean into an exponentially
 * weighted harmonic mean of roughly the last `window` samples. window 0 is the paper's. */
struct sched_hmean {
  double mean;     /* bytes per second; 0 until the first sample */
  uint32_t n;      /* samples seen (saturates at UINT32_MAX) */
  uint32_t window; /* 0 = unbounded (paper) */
};

/* Starts an empty estimator. */
void sched_hmean_init(struct sched_hmean *h, uint32_t window);
/* Adds one sample in bytes per second; samples <= 0 are ignored (a read of nothing says
 * nothing about the path). */
void sched_hmean_add(struct sched_hmean *h, double sample);

/* rtl ← 0.8·rtl + 0.2·sample (TCP-style smoothing, mHTTP §5.2); returns the new value. */
double sched_rtl_ewma(double rtl, double sample);

#endif
