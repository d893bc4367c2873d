/* Per-interface metrics store: SRTT min/median, max download rate over 5 minutes (busiest 100 ms bucket or fastest packet train), active counts. */
#ifndef MHTTP_POLICY_METRICS_H
#define MHTTP_POLICY_METRICS_H

/*
 * Fed by the engine's collectors on the loop thread (TCP_INFO of its upstream sockets,
 * byte counters every read, or the interface's rx counter every 100 ms) and read through
 * pol_metrics_snapshot when a policy decides. Pure: now_us (any monotonic microsecond
 * clock, never going backwards) is an argument. Memory is fixed at creation.
 *
 * Expiry follows the metrics paper (§3.2: stored for 5 minutes, then reset to the default
 * 0, which policies ignore):
 * - an SRTT sample counts while now - its time < POL_METRICS_EXPIRY_US; each connection
 *   keeps only its latest sample, so one busy connection cannot outvote the others;
 * - a 100 ms rate bucket b (bytes received during [b·100 ms, (b+1)·100 ms)) counts while
 *   now < (b + 3000)·100 ms, i.e. until 5 minutes after the bucket began;
 * - a train rate (pol_metrics_capacity) counts while now - its time < POL_METRICS_EXPIRY_US
 *   (kept per 1 s slot, so it may count up to 1 s less);
 * - active transfers and connections are state, not measurements: they never expire.
 */

#include <stdint.h>

#include "policy/policy.h"

#define POL_METRICS_EXPIRY_US 300000000ULL /* 5 minutes */
#define POL_BUCKET_US 100000ULL            /* rate sample: 100 ms */
#define POL_WINDOW_BUCKETS 3000u           /* 5 minutes of 100 ms buckets */
#define POL_RTT_SLOTS 16u                  /* connections remembered per interface */
#define POL_CAP_SLOT_US 1000000ULL         /* train rates: the best two per 1 s slot */
#define POL_CAP_SLOTS 300u                 /* 5 minutes of them */

struct pol_metrics;

/* Creates an empty store for POL_MAX_IFACES interfaces (~400 KiB, allocated once). The
 * caller owns *out and frees it with pol_metrics_free. Returns 0 or -ENOMEM. */
int pol_metrics_new(struct pol_metrics **out);
/* Frees the store; NULL is fine. */
void pol_metrics_free(struct pol_metrics *m);

/* Forgets everything about one interface (it went down or changed address: old paths say
 * nothing about the new one). Returns 0 or -EINVAL (iface out of range). */
int pol_metrics_reset(struct pol_metrics *m, unsigned iface);

/* Records the SRTT (TCP_INFO tcpi_rtt) of connection `conn` (any id unique per interface,
 * e.g. the engine's connection id) on an interface, replacing that connection's previous
 * sample; the connection's lowest sample (its handshake time included) is kept too. The
 * snapshot's minimum SRTT is the lowest any live connection has shown (a connection that
 * fills the link's queue soon reports the queue in its SRTT), its median the median of
 * the connections' latest samples. When all POL_RTT_SLOTS are taken, the least recently updated one is replaced.
 * Returns 0 or -EINVAL (iface out of range, srtt 0: the kernel reports 0 in SYN-SENT and
 * TIME-WAIT, which is no sample). */
int pol_metrics_rtt(struct pol_metrics *m, unsigned iface, uint64_t conn, uint64_t srtt_us, uint64_t now_us);

/* Lowers connection `conn`'s lowest estimate to min_rtt_us, the kernel's own minimum over
 * every raw RTT sample of the connection (TCP_INFO tcpi_min_rtt, the SYN's included). The
 * engine samples SRTT at read events and ticks: on a busy machine its first sample can come
 * after a later request's ACK waited behind the link's queue and lifted the SRTT, so the
 * smoothed values alone would not show the path's own latency; the kernel's minimum does not
 * depend on when it is read. The latest SRTT (the median's input) is unchanged.
 * Returns 0, -ENOENT (no sample of that connection yet: record its SRTT first) or -EINVAL
 * (iface out of range, 0 or the kernel's "none yet", UINT32_MAX). */
int pol_metrics_min_rtt(struct pol_metrics *m, unsigned iface, uint64_t conn, uint64_t min_rtt_us, uint64_t now_us);

/* Records the handshake time of a new connection as its first RTT estimate: it counts like
 * an SRTT sample but never overwrites one (TCP_INFO, once it has a value, knows better).
 * Returns 0 or -EINVAL (as pol_metrics_rtt). */
int pol_metrics_handshake(struct pol_metrics *m, unsigned iface, uint64_t conn, uint64_t rtt_us, uint64_t now_us);

/* Adds `bytes` received on an interface at now_us to its current 100 ms bucket (the
 * engine's own byte counters). A time earlier than the current bucket counts in it.
 * Returns 0 or -EINVAL (iface out of range). */
int pol_metrics_bytes(struct pol_metrics *m, unsigned iface, uint64_t bytes, uint64_t now_us);

/* Same, from the interface's cumulative rx byte counter (sees other programs' traffic too;
 * feed either this or pol_metrics_bytes for an interface, not both). The first reading only
 * sets the baseline; a counter that went down (interface re-created) sets a new baseline.
 * Returns 0 or -EINVAL. */
int pol_metrics_rx_counter(struct pol_metrics *m, unsigned iface, uint64_t rx_total, uint64_t now_us);

/* Records the rate (bytes/s) of a packet train that arrived on an interface (policy/train.h:
 * the bottleneck rate, which 100 ms buckets under-read when transfers are slow-start
 * limited). The snapshot's max_rate is the larger of the busiest bucket and the train rate
 * (pol_metrics_train_rate). Returns 0 or -EINVAL (iface out of range, rate not finite and > 0). */
int pol_metrics_capacity(struct pol_metrics *m, unsigned iface, double rate, uint64_t now_us);
/* The interface's train rate as of now_us: the second fastest train of the last 5 minutes
 * (one train timed short is an outlier; a second confirms), 0 with fewer than two. */
double pol_metrics_train_rate(struct pol_metrics *m, unsigned iface, uint64_t now_us);

/* Adjusts the active transfer / open connection count of an interface by delta.
 * Returns 0, or -EINVAL (iface out of range, or the count would go below 0: unchanged). */
int pol_metrics_transfers(struct pol_metrics *m, unsigned iface, int delta);
int pol_metrics_conns(struct pol_metrics *m, unsigned iface, int delta);

/* Fills the metric fields of *out (srtt_min_us, srtt_med_us, max_rate, cur_rate,
 * transfers, conns) as of now_us, dropping what expired; the other fields are untouched.
 * max_rate = max(busiest 100 ms bucket, train rate), cur_rate bucket-based only.
 * The median of an even number of samples is the mean of the middle two. cur_rate is the
 * rate of bucket now/100ms - 1 (the last complete one). Amortised O(1) for the buckets,
 * O(POL_CAP_SLOTS) for the trains, O(POL_RTT_SLOTS²) for the median. Returns 0 or -EINVAL (iface out of range). */
int pol_metrics_snapshot(struct pol_metrics *m, unsigned iface, uint64_t now_us, struct pol_path *out);

#endif
