/* Link capacity from packet trains: the arrival rate over a busy stretch of one connection, right for slow-start-limited transfers. */
#ifndef MHTTP_POLICY_TRAIN_H
#define MHTTP_POLICY_TRAIN_H

/*
 * Why: a 100 ms rate bucket holds what the sender put in flight, not what the link can carry.
 * A slow-start-limited object (asym lte0, 100 ms / 20 Mbit/s: rounds of 10, 20, 40 segments
 * per 100 ms for a 100 KiB object) fills one bucket with one round, so the buckets read
 * 0.4-1 MB/s of 2.5 MB/s. Within a round the sender's burst queues at the bottleneck and
 * the segments leave it, and arrive, one per mss/rate (packet-train dispersion): the arrival
 * rate over a busy stretch is the bottleneck rate whatever the window.
 *
 * Input: samples of a connection's cumulative arrival curve (TCP_INFO tcpi_data_segs_in and
 * tcpi_bytes_received at the time the sample is taken: exact at that time however late the
 * reader was). The engine samples at its read events of the connection and at its 100 ms
 * timer. A sample that shows new bytes extends the current busy stretch, unless the time
 * since the previous sample is far longer than those bytes take at the stretch's rate so far
 * and over a quarter of a round trip (an idle gap: then the stretch closes and a new one
 * starts at this sample; shorter pauses are stalls whose catch-up follows, pol__gap). The first
 * sample of a stretch only starts it: its bytes arrived before it, over an unknown time.
 * A stretch counts when it closes with at least POL_TRAIN_MIN_SEGS segments after its first
 * sample and POL_TRAIN_MIN_US of duration; its rate is bytes / duration.
 *
 * Never an over-read by construction: every sample is exact, so bytes / duration between two
 * samples is the true mean arrival rate over that interval; an idle gap wrongly kept inside
 * a stretch only lowers it. What can push it up is arrival bunching after the bottleneck (the
 * emulator or the receiver's softirq running late, then catching up): it shortens the
 * duration by at most that lateness L, so the error is at most L / duration, which the
 * minimum length bounds (asym lte0: 10 segments = 6 ms; an initial window of 10 has 9 after
 * its first, so a lone IW round never counts). Bytes per segment are the smaller
 * of segments × MSS (a short last segment counts full) and the in-order byte count (a hole
 * filled by a retransmission releases the out-of-order queue at once): never more than
 * arrived.
 *
 * Pure: time is an argument (any monotonic µs clock). The caller owns one struct pol_train
 * per connection, zeroed at its start.
 */

#include <stdbool.h>
#include <stdint.h>

#define POL_TRAIN_MIN_SEGS 10u       /* segments after a stretch's first sample */
#define POL_TRAIN_MIN_US 5000u       /* and this long, so scheduling lateness stays small */
#define POL_TRAIN_GAP_FACTOR 3u      /* idle if an interval took 3 × its bytes' time */
#define POL_TRAIN_GAP_FLOOR_US 1000u /* shorter intervals are never idle gaps */

struct pol_train {
  uint64_t t0_us;     /* the stretch's first sample */
  uint64_t t_us;      /* its latest sample with new bytes */
  uint64_t bytes;     /* arrived since the stretch began (after its first sample) */
  uint64_t last_segs; /* the counters at the latest sample */
  uint64_t last_rcvd;
  uint64_t closed_bytes; /* the stretch closed last, counted or not (logs, tests) */
  uint64_t closed_us;
  uint32_t mss; /* largest segment size seen, for the minimum length */
  bool seen;    /* counters valid */
  bool on;      /* a stretch is open */
};

/* Feeds one sample of a connection: data segments received so far (tcpi_data_segs_in),
 * in-order bytes received so far (tcpi_bytes_received), the peer's MSS (tcpi_rcv_mss), the
 * connection's smoothed RTT (tcpi_rtt; 0 unknown: 20 ms assumed) and the time. Returns the
 * rate in bytes/s of a stretch that this sample closed (an idle gap before it), or 0. A
 * sample without new bytes closes an open stretch whose idle time is already a gap, so the
 * engine's timer ends a train without waiting for the next one. Counters that went back
 * (a reused struct) restart the tracking. */
double pol_train_sample(struct pol_train *tr, uint64_t segs, uint64_t rcvd, uint32_t mss, uint64_t rtt_us,
                        uint64_t now_us);

/* The connection closes (or the caller wants the open stretch judged now): returns the open
 * stretch's rate if it counts, else 0, and closes it. */
double pol_train_end(struct pol_train *tr);

#endif
