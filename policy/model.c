/* The prediction models shared by the policies: EAF time, free capacity, slow-start rounds, delivery curves. */
#include <errno.h>
#include <math.h>

#include "policy/internal.h"
#include "policy/metrics.h"

/* Rates come in bytes per second, times in µs: one conversion, here. */
#define POL__US_PER_S 1e6

double pol__latency_us(const struct pol_path *pp) {
  if (!pp->srtt_min_us)
    return -1;
  /* Socket Intents §V-F: 1 RTT for the request on a reused connection, 2 when a handshake
   * comes first. */
  return (double)pp->srtt_min_us * (pp->reusable ? 1 : 2);
}

bool pol_window_open(const struct pol_path *pp) { return pp->reusable && pp->idle_us < POL_RTO_MIN_US; }

double pol__round_payload(const struct pol *p, double window) {
  double fit = window - (double)p->cfg.round_overhead;
  return fit > window / 2 ? fit : window / 2;
}

double pol__busy_us(const struct pol_path *pp, double rate) {
  return pp->reusable && pp->busy && rate > 0 ? (double)pp->busy * POL__US_PER_S / rate : 0;
}

double pol_start_window(const struct pol_path *pp, uint64_t init_window, double rate, double rtt_us) {
  if (!pol_window_open(pp))
    return (double)init_window;
  if (!pp->window || (double)pp->window >= rate * rtt_us / POL__US_PER_S)
    return 0;
  return (double)pp->window;
}

double pol_eaf_time(const struct pol_path *pp, uint64_t size, uint64_t init_window) {
  double lat = pol__latency_us(pp);
  if (lat < 0 || size == POL_SIZE_UNKNOWN)
    return lat;
  if (!(pp->max_rate > 0))
    return -1;
  /* A reused connection past its RTO sends from the initial window again, one inside it
   * from the window its responses opened (pol_start_window): the request's round trip is
   * the first slow-start round's. */
  double share = pp->max_rate / ((double)pp->transfers + 1);
  double w = pol_start_window(pp, init_window, share, (double)pp->srtt_min_us);
  double wait = pol__busy_us(pp, share) - lat; /* its own queue ahead of the request's answer */
  if (wait < 0)
    wait = 0;
  if (pp->reusable && w > 0)
    return wait + pol_slow_start_time(size, (double)pp->srtt_min_us, share, (uint64_t)w);
  /* size / (max_rate / (active+1)), kept as one product and one division so round numbers
   * stay exact. */
  return lat + wait + (double)size * POL__US_PER_S * ((double)pp->transfers + 1) / pp->max_rate;
}

double pol__free_capacity(const struct pol_path *pp) {
  if (!(pp->max_rate > 0))
    return -1;
  double usage = pp->cur_rate > 0 ? pp->cur_rate / pp->max_rate : 0;
  if (usage > 1)
    usage = 1;
  return pp->max_rate / ((double)pp->conns * usage + 1);
}

uint64_t pol__load_rtt(const struct pol_path *pp) {
  /* IANS §III-C / metrics paper §4.1: a longer load meets the congestion the other
   * connections meet, so the median, not the minimum. */
  return pp->srtt_med_us ? pp->srtt_med_us : pp->srtt_min_us;
}

/* When one curve alone has delivered `bytes`. */
/* The rate at which a slow-start round of c arrives. */
static double pol__burst(const struct pol__curve *c) { return c->burst > c->rate ? c->burst : c->rate; }

static double pol__curve_finish(const struct pol__curve *c, double bytes) {
  if (!(c->rate > 0))
    return -1;
  double a = c->start_us, left = bytes, w = c->init_window;
  double cap = c->rate * c->rtt_us; /* bytes per RTT at the rate share: slow start ends */
  if (w > 0) {
    while (w < cap && left > w) {
      left -= w;
      w *= 2;
      a += c->rtt_us;
    }
    if (w < cap)
      return a + left / pol__burst(c); /* the rest comes within a slow-start round */
  }
  return a + left / c->rate;
}

double pol__curve_bytes(const struct pol__curve *c, double t) {
  if (t <= c->start_us || !(c->rate > 0))
    return 0;
  double a = c->start_us, w = c->init_window, got = 0, cap = c->rate * c->rtt_us;
  if (!(w > 0))
    return c->rate * (t - a);
  double b = pol__burst(c);
  for (;;) {
    if (w >= cap)
      return got + c->rate * (t - a);
    /* This round's window arrives at `burst`, then the path waits for the next round. */
    if (t <= a + w / b)
      return got + b * (t - a);
    got += w;
    if (t <= a + c->rtt_us)
      return got;
    a += c->rtt_us;
    w *= 2;
  }
}

double pol__finish_us(const struct pol__curve *c, unsigned n, double bytes) {
  if (!(bytes > 0))
    return 0;
  /* The earliest single-curve finish bounds the joint one from above; bisect below it.
   * Delivery is non-decreasing in t, and 200 halvings exhaust a double's precision. */
  double hi = -1;
  for (unsigned i = 0; i < n; i++) {
    double f = pol__curve_finish(&c[i], bytes);
    if (f >= 0 && (hi < 0 || f < hi))
      hi = f;
  }
  if (hi < 0)
    return -1;
  double lo = 0;
  for (int it = 0; it < 200 && hi - lo > 0; it++) {
    double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi)
      break;
    double got = 0;
    for (unsigned i = 0; i < n; i++)
      got += pol__curve_bytes(&c[i], mid);
    if (got >= bytes)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

double pol_slow_start_time(uint64_t size, double rtt_us, double rate, uint64_t init_window) {
  if (!(rtt_us > 0) || !(rate > 0))
    return -1;
  /* The first round arrives one RTT after the request. */
  struct pol__curve c = {
      .start_us = rtt_us, .rtt_us = rtt_us, .rate = rate / POL__US_PER_S, .init_window = (double)init_window};
  return pol__curve_finish(&c, (double)size);
}

bool pol__path_curve(const struct pol *p, const struct pol_path *pp, struct pol__curve *c) {
  uint64_t rtt = pol__load_rtt(pp);
  if (!rtt || !(pp->max_rate > 0))
    return false;
  /* A reused connection whose window is open gets no slow start, as IANS §III-C models it,
   * unless its responses never opened it past a round trip's share (pol_start_window); one
   * idle past its RTO restarts from the initial window (pol_window_open); a new one pays the
   * handshake, then starts from the initial window. */
  double share = pp->max_rate / ((double)pp->transfers + 1);
  /* a busy connection's answer to a request made now starts after its queue, or after the
   * round trip, whichever comes later */
  double start = (double)rtt * (pp->reusable ? 1 : 2), busy = pol__busy_us(pp, share);
  *c = (struct pol__curve){
      .start_us = busy > start ? busy : start,
      .rtt_us = (double)rtt,
      .rate = share / POL__US_PER_S,
      .init_window =
          pp->reusable ? pol_start_window(pp, p->cfg.init_window, share, (double)rtt) : (double)p->cfg.init_window,
  };
  /* a round's window carries the chunk's body and its head: the engine's chunks double from
   * what fits the first round (pol_probe_size's floor), so the curve's rounds do too; rounds
   * counted whole gave asym lte0 a 43 440-byte share = two full rounds of bodies, whose heads
   * pushed its last 3 KB into a third round trip (+100 ms) */
  if (c->init_window > 0)
    c->init_window = pol__round_payload(p, c->init_window);
  return true;
}

bool pol__worth(double without_us, double with_us, double gain) {
  return with_us >= 0 && with_us < without_us && without_us - with_us >= gain * without_us;
}

int pol_worth_adding(const struct pol *p, const struct pol_view *v, uint32_t on, unsigned j, uint64_t remaining,
                     struct pol_gain *out) {
  *out = (struct pol_gain){.without_us = -1, .with_us = -1, .worth = false};
  if (v->n > POL_MAX_IFACES || j >= v->n || !on || (on >> v->n) || (on & (1u << j)))
    return -EINVAL;
  /* The paths already carrying the transfer stream now at their share; the transfer is
   * one of their active transfers already. */
  struct pol__curve c[POL_MAX_IFACES];
  unsigned n = 0;
  for (unsigned i = 0; i < v->n; i++) {
    const struct pol_path *pp = &v->path[i];
    if (!(on & (1u << i)) || !(pp->max_rate > 0))
      continue;
    double share = pp->max_rate / (pp->transfers ? (double)pp->transfers : 1);
    c[n++] = (struct pol__curve){.rate = share / POL__US_PER_S};
  }
  if (!n)
    return -ENODATA;
  out->without_us = pol__finish_us(c, n, (double)remaining);
  out->with_us = out->without_us;
  if (!v->path[j].usable)
    return -ENETDOWN;
  if (!pol__path_curve(p, &v->path[j], &c[n]))
    return -ENODATA;
  out->with_us = pol__finish_us(c, n + 1, (double)remaining);
  double gain = v->path[j].metered ? p->cfg.metered_gain : p->cfg.split_gain;
  out->worth = pol__worth(out->without_us, out->with_us, gain);
  return 0;
}

int pol__argmin(const struct pol_view *v, const bool *eligible, const double *t) {
  int best = -1;
  for (unsigned i = 0; i < v->n; i++)
    if (eligible[i] && t[i] >= 0 && (best < 0 || t[i] < t[best]))
      best = (int)i;
  return best;
}

int pol__fallback(struct pol *p, const struct pol_view *v, const bool *eligible, double *pred) {
  double lat[POL_MAX_IFACES];
  for (unsigned i = 0; i < v->n; i++)
    lat[i] = pol__latency_us(&v->path[i]);
  int best = pol__argmin(v, eligible, lat);
  if (best >= 0) {
    *pred = lat[best];
    return best;
  }
  /* Nothing measured yet: connections opened together at a cold start (a browser-like
   * client's six) would all take the first path and leave the others idle and unmeasured
   * until that one is saturated. Taking the paths in turn spreads them and measures every
   * path at once; a lone first connection still gets the preferred path. */
  *pred = -1;
  for (unsigned k = 0; k < v->n; k++) {
    unsigned i = (p->rr_next + k) % v->n;
    if (eligible[i]) {
      p->rr_next = (i + 1) % v->n;
      return (int)i;
    }
  }
  return -ENETUNREACH;
}

/* When k connections on pp, opened together, have delivered `bytes`: pp's own curve plus
 * k - 1 new ones, each with 1/k of the rate share (their windows fill the same bottleneck). */
static double pol__conns_finish(const struct pol *p, const struct pol_path *pp, uint64_t bytes, unsigned k) {
  struct pol__curve c[POL_CONNS_MAX];
  if (!pol__path_curve(p, pp, &c[0]))
    return -1;
  c[0].rate /= k;
  for (unsigned i = 1; i < k; i++)
    c[i] = (struct pol__curve){.start_us = 2 * c[0].rtt_us,
                               .rtt_us = c[0].rtt_us,
                               .rate = c[0].rate,
                               .init_window = pol__round_payload(p, (double)p->cfg.init_window)};
  return pol__finish_us(c, k, (double)bytes);
}

unsigned pol_path_conns(const struct pol *p, const struct pol_path *pp, uint64_t bytes, unsigned max) {
  if (max > POL_CONNS_MAX)
    max = POL_CONNS_MAX;
  if (max < 2 || !bytes || !pp || pol_window_open(pp))
    return 1;
  double rtt = (double)pol__load_rtt(pp);
  unsigned k = 1;
  double t = pol__conns_finish(p, pp, bytes, 1);
  while (t >= 0 && 2 * k <= max) {
    double t2 = pol__conns_finish(p, pp, bytes, 2 * k);
    if (t2 < 0 || t - t2 < POL_CONNS_GAIN_RTT * rtt)
      break;
    k *= 2;
    t = t2;
  }
  return k;
}

unsigned pol_extra_conns(const struct pol *p, const struct pol_path *pp, unsigned max) {
  if (max < 2 || !pp || !pp->srtt_min_us || !pol_rate_trusted(pp, p->cfg.init_window))
    return 1;
  double bdp = (double)pp->srtt_min_us * pp->max_rate / POL__US_PER_S;
  return bdp >= (double)POL_EXTRA_BDP_WINDOWS * (double)p->cfg.init_window ? max : 1;
}

uint64_t pol_probe_size(const struct pol *p, const struct pol_path *pp, uint64_t cold, uint64_t max) {
  if (!pp || !pp->srtt_min_us || !(pp->max_rate > 0))
    return cold < max ? cold : max;
  uint64_t fit = (uint64_t)pol__round_payload(p, (double)p->cfg.init_window);
  uint64_t lo = fit > POL_PROBE_MIN ? fit : POL_PROBE_MIN;
  if (lo > max)
    lo = max;
  double bdp = (double)pp->srtt_min_us * pp->max_rate / POL__US_PER_S;
  if (bdp <= (double)lo)
    return lo;
  if (bdp >= (double)max)
    return max;
  return (uint64_t)bdp;
}

uint64_t pol_moved_probe_size(const struct pol *p, const struct pol_path *pp, uint64_t base, uint64_t max) {
  if (!pp->reusable || !pol_rate_trusted(pp, p->cfg.init_window))
    return base;
  return pol_probe_size(p, pp, base, max);
}

bool pol_rate_trusted(const struct pol_path *pp, uint64_t init_window) {
  return pp->max_rate > 0 && pp->max_rate * (double)POL_BUCKET_US / POL__US_PER_S >= (double)init_window;
}

bool pol_rescue_worth(const struct pol *p, const struct pol_path *victim, uint64_t stalled_us,
                      const struct pol_path *taker, uint64_t bytes, double *victim_us, double *taker_us) {
  double tv = -1, tt = -1;
  uint64_t rtt = victim->srtt_med_us > victim->srtt_min_us ? victim->srtt_med_us : victim->srtt_min_us;
  if (bytes && victim->srtt_min_us && victim->max_rate > 0) {
    double share = victim->max_rate / ((double)victim->transfers + 1);
    uint64_t seg = p->cfg.init_window / 10 ? p->cfg.init_window / 10 : 1;
    tv = pol_slow_start_time(bytes, (double)victim->srtt_min_us, share, seg);
  }
  /* the taker's slow start counts (pol_plan's delivery model): EAF's streaming model would
   * promise a new lte0 connection 45 kB in 218 ms, which take it 400 ms */
  struct pol__curve c;
  if (bytes && pol__path_curve(p, taker, &c))
    tt = pol__curve_finish(&c, (double)bytes);
  if (victim_us)
    *victim_us = tv;
  if (taker_us)
    *taker_us = tt;
  return rtt && stalled_us >= rtt + POL_RTO_MIN_US && tv >= 0 && tt >= 0 && tt < tv;
}
