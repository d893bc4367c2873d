/* The trickle rule: a connection that brings bytes far below its share (policy/trickle.h). */
#include "policy/trickle.h"

static uint64_t pol__trickle_rtt(uint64_t rtt_us) {
  return rtt_us > POL_TRICKLE_MIN_RTT_US ? rtt_us : POL_TRICKLE_MIN_RTT_US;
}

uint64_t pol_trickle_window_us(uint64_t rtt_us) { return POL_TRICKLE_RTTS * pol__trickle_rtt(rtt_us); }

/* A window long enough to hold a per-second pacer's release. */
static uint64_t pol__trickle_paced_us(uint64_t window) {
  return window > POL_TRICKLE_PACED_US ? window : POL_TRICKLE_PACED_US;
}

/* 1 when in's bytes are below both limits (its share, one segment per round trip); *crawls:
 * also below 1/POL_TRICKLE_CRAWL_DIV of a segment per round trip. */
static int pol__trickle_low(const struct pol_trickle_in *in, int *crawls) {
  uint64_t rtt = pol__trickle_rtt(in->rtt_us);
  double secs = (double)in->elapsed_us / 1e6;
  double segs = (double)POL_TRICKLE_SEG * (double)in->elapsed_us / (double)rtt;
  double expect = in->share_Bps > 0 ? in->share_Bps * secs : segs;
  double got = (double)in->bytes;
  *crawls = got * POL_TRICKLE_CRAWL_DIV < segs;
  return !(got * POL_TRICKLE_DIV >= expect || got >= segs);
}

int pol_trickle_crawling(const struct pol_trickle_in *in) {
  int crawls;
  return in->elapsed_us >= pol_trickle_window_us(in->rtt_us) && in->bytes && 2 * in->quiet_us <= in->elapsed_us &&
         pol__trickle_low(in, &crawls) && crawls;
}

int pol_trickle_creeping(const struct pol_trickle_in *in) {
  double segs = (double)POL_TRICKLE_SEG * (double)in->elapsed_us / (double)pol__trickle_rtt(in->rtt_us);
  return pol_trickle_crawling(in) && (double)in->bytes * POL_TRICKLE_CREEP_DIV < segs;
}

int pol_trickle_quiet(const struct pol_trickle_in *in) {
  return in->elapsed_us >= pol_trickle_window_us(in->rtt_us) && in->bytes && 2 * in->quiet_us > in->elapsed_us;
}

enum pol_trickle pol_trickle_judge(const struct pol_trickle_in *in) {
  uint64_t window = pol_trickle_window_us(in->rtt_us), paced = pol__trickle_paced_us(window);
  if (in->elapsed_us < window)
    return POL_TRICKLE_WAIT;
  if (!in->bytes)
    return POL_TRICKLE_FINE;             /* silent: the stall rule decides */
  if (2 * in->quiet_us > in->elapsed_us) /* its bytes came early in the window: more may come */
    return in->elapsed_us >= POL_TRICKLE_QUIET_WINDOWS * paced ? POL_TRICKLE_FINE : POL_TRICKLE_WAIT;
  int crawls;
  if (!pol__trickle_low(in, &crawls))
    return POL_TRICKLE_FINE;
  if (crawls && in->slots >= POL_TRICKLE_EARLY_SLOTS)
    return POL_TRICKLE_SLOW; /* spread over the window: no pacer's dribble */
  if (in->elapsed_us < paced)
    return POL_TRICKLE_WAIT;
  return crawls || in->low_before ? POL_TRICKLE_SLOW : POL_TRICKLE_LOW;
}

int pol_trickle_reopens(uint64_t window_bytes, uint64_t gap_us, uint64_t read_len, uint64_t rtt_us) {
  return window_bytes >= POL_TRICKLE_SEG && read_len < POL_TRICKLE_SEG && gap_us >= pol_trickle_window_us(rtt_us);
}

uint64_t pol_trickle_hedge_wait(const struct pol_hedge_path *p, unsigned n) {
  if (n < 2)
    return UINT64_MAX;
  uint64_t wait = 0;
  for (unsigned i = 0; i < n; i++) {
    if (!p[i].begun || p[i].busy)
      return UINT64_MAX;
    uint64_t need = POL_TRICKLE_HEDGE_RTTS * pol__trickle_rtt(p[i].rtt_us);
    if (p[i].quiet_us < need && need - p[i].quiet_us > wait)
      wait = need - p[i].quiet_us;
  }
  return wait;
}
