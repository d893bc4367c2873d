/* Harmonic-mean throughput and EWMA latency estimators (mHTTP §5.2), pure arithmetic. */
#include "scheduler/estimate.h"

void sched_hmean_init(struct sched_hmean *h, uint32_t window) {
  h->mean = 0;
  h->n = 0;
  h->window = window;
}

void sched_hmean_add(struct sched_hmean *h, double sample) {
  if (!(sample > 0))
    return;
  if (h->n == 0) {
    h->mean = sample;
  } else {
    double n = h->n;
    if (h->window && n > h->window - 1)
      n = h->window - 1;
    /* The harmonic mean lets one slow read pull R̄ down a lot and one burst (many bytes
     * delivered by a single read after a stall) push it up little: the conservative side. */
    h->mean = (n + 1) / (n / h->mean + 1 / sample);
  }
  if (h->n < UINT32_MAX)
    h->n++;
}

double sched_rtl_ewma(double rtl, double sample) { return 0.8 * rtl + 0.2 * sample; }
