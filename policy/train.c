/* Link capacity from packet trains: busy stretches of a connection's arrival curve and their rate. */
#include "policy/train.h"

/* Was the interval of dt µs since the stretch's latest sample, in which seg_bytes arrived
 * (0: none), idle for part of it? Only if the link had no segment for this connection for a
 * quarter of a round trip, and it took more than POL_TRAIN_GAP_FACTOR times what those bytes
 * (at least one segment) take at the stretch's rate. The quarter RTT is what keeps a stall
 * after the bottleneck (the emulator, a radio or the receiver late by a millisecond or two,
 * then delivering its backlog at once) inside the stretch, where the stall and its catch-up
 * average to the link's rate: a stretch started at the catch-up would time a burst (demo
 * lte0, 50 Mbit/s: trains of 40-80 segments read up to +34 %). The idle time between
 * slow-start rounds is most of a round trip. Before the stretch has a rate (it is one
 * sample): more than half a round trip, which no two segments of one round are apart while
 * the link is the bottleneck. */
static bool pol__gap(const struct pol_train *tr, uint64_t dt, uint64_t seg_bytes, uint64_t rtt_us) {
  if (dt <= POL_TRAIN_GAP_FLOOR_US)
    return false;
  uint64_t span = tr->t_us - tr->t0_us;
  if (!tr->bytes || !span)
    return dt > rtt_us / 2;
  if (dt <= rtt_us / 4)
    return false;
  if (seg_bytes < tr->mss)
    seg_bytes = tr->mss;
  return (double)dt * (double)tr->bytes > (double)POL_TRAIN_GAP_FACTOR * (double)seg_bytes * (double)span;
}

double pol_train_end(struct pol_train *tr) {
  double rate = 0;
  uint64_t span = tr->t_us - tr->t0_us;
  if (tr->on && tr->mss && tr->bytes >= (uint64_t)POL_TRAIN_MIN_SEGS * tr->mss && span >= POL_TRAIN_MIN_US)
    rate = (double)tr->bytes * 1e6 / (double)span;
  if (tr->on) {
    tr->closed_bytes = tr->bytes;
    tr->closed_us = span;
  }
  tr->on = false;
  tr->bytes = 0;
  return rate;
}

double pol_train_sample(struct pol_train *tr, uint64_t segs, uint64_t rcvd, uint32_t mss, uint64_t rtt_us,
                        uint64_t now_us) {
  if (!tr->seen || segs < tr->last_segs || rcvd < tr->last_rcvd) {
    /* the baseline: bytes counted before it arrived over an unknown time */
    *tr = (struct pol_train){.last_segs = segs, .last_rcvd = rcvd, .mss = mss, .seen = true};
    return 0;
  }
  uint64_t ds = segs - tr->last_segs, dr = rcvd - tr->last_rcvd;
  tr->last_segs = segs;
  tr->last_rcvd = rcvd;
  if (mss > tr->mss)
    tr->mss = mss;
  if (!rtt_us)
    rtt_us = 20000;
  /* A clock that stepped back gives no interval; the sample still counts as the latest. */
  uint64_t dt = now_us > tr->t_us ? now_us - tr->t_us : 0;
  if (!ds)
    return tr->on && pol__gap(tr, dt, 0, rtt_us) ? pol_train_end(tr) : 0;
  double rate = 0;
  if (tr->on && pol__gap(tr, dt, ds * (uint64_t)mss, rtt_us))
    rate = pol_train_end(tr);
  if (!tr->on) {
    /* the first sample of a stretch carries no duration: its bytes are not counted */
    tr->on = true;
    tr->t0_us = tr->t_us = now_us;
    tr->bytes = 0;
    return rate;
  }
  /* segments × MSS over-counts a short segment, the in-order count a filled hole's queue */
  uint64_t add = ds * (uint64_t)mss;
  tr->bytes += dr < add ? dr : add;
  if (now_us > tr->t_us)
    tr->t_us = now_us;
  return rate;
}
