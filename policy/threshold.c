/* threshold — small objects to the lowest latency, large ones by the slow-start rounds model (IANS §III-C, metrics paper §4.1). */
#include "policy/internal.h"

/* Load time of a capacity-dominated object, with the median SRTT (a longer load meets the
 * congestion the other connections meet) and the free capacity:
 * reused with an open window: rtt + size/free; reused past its RTO or with a window its
 * responses never opened: slow-start rounds from that window (pol_start_window,
 * pol_slow_start_time); new: rtt (handshake) + slow-start rounds.
 * For an unknown size, the latency part alone. */
static double pol__threshold_predict(const struct pol *p, const struct pol_path *pp, uint64_t size) {
  if (size == POL_SIZE_UNKNOWN)
    return pol__latency_us(pp);
  double free = pol__free_capacity(pp);
  double rtt = (double)pol__load_rtt(pp);
  if (free < 0 || !(rtt > 0))
    return -1;
  if (pp->reusable) {
    /* open: streams at its share; past its RTO, or never opened that far: slow start from
     * its window (pol_start_window), but no handshake */
    double w = pol_start_window(pp, p->cfg.init_window, free, rtt);
    if (!(w > 0))
      return rtt + (double)size * 1e6 / free;
    return pol_slow_start_time(size, rtt, free, (uint64_t)w);
  }
  return rtt + pol_slow_start_time(size, rtt, free, p->cfg.init_window);
}

/* L is the path where a small object arrives first (lowest min SRTT × 1 reused | 2 new —
 * the paper takes the lowest min SRTT; counting the handshake makes reuse count here too).
 * The object is latency-dominated when L's latency part exceeds its capacity part
 * size/free_L: then L. Otherwise the lowest predicted load time over all paths. */
static int pol__threshold_pick(struct pol *p, const struct pol_view *v, const bool *eligible, const double *t,
                               uint64_t size, double draw, double *pred) {
  (void)p, (void)draw;
  double lat[POL_MAX_IFACES];
  for (unsigned i = 0; i < v->n; i++)
    lat[i] = pol__latency_us(&v->path[i]);
  int l = pol__argmin(v, eligible, lat);
  if (l < 0)
    return pol__fallback(p, v, eligible, pred);
  *pred = lat[l];
  if (size == POL_SIZE_UNKNOWN)
    return l;
  double free = pol__free_capacity(&v->path[l]);
  if (free < 0) {
    *pred = -1; /* capacity unknown: latency wins, but no completion estimate */
    return l;
  }
  double cap_part = (double)size * 1e6 / free;
  if (lat[l] > cap_part) {
    *pred = lat[l] + cap_part;
    return l;
  }
  int i = pol__argmin(v, eligible, t);
  if (i < 0) {
    *pred = -1;
    return l;
  }
  *pred = t[i];
  return i;
}

const struct pol_ops pol__threshold_ops = {
    .name = "threshold",
    .splits = true,
    .predict = pol__threshold_predict,
    .pick = pol__threshold_pick,
};
