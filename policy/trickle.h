/* When a connection delivers far below its share: the trickle rule, pure (time and rates are arguments). */
#ifndef MHTTP_POLICY_TRICKLE_H
#define MHTTP_POLICY_TRICKLE_H

/*
 * A connection whose answer still brings bytes, but far fewer than its path gives it, holds
 * its ranges hostage: a replica or an origin that trickles (a few bytes per second), a range
 * answer throttled to a crawl after its first bytes. Silence is not a trickle: a connection
 * that brings nothing is the stall rule's (multihttp/split/leg/mh_split_leg.c).
 *
 * The engine keeps an observation window per connection with requests out: it opens with the
 * first body byte (the wait for an answer is the request's latency, not the connection's
 * rate) and closes when the connection has nothing out, is paused by a full reassembly
 * window, or was judged fine; the engine asks pol_trickle_judge at each tick. A window is
 * judged once it lasted POL_TRICKLE_RTTS of the connection's round trips (each at least
 * POL_TRICKLE_MIN_RTT_US): long enough that a new connection's slow start (its initial
 * window per round trip, doubling) is far above the limits below. It is low when:
 *   - bytes still come: its last one arrived in the second half of the window. Until one
 *     does the window stays open (a trickle paced like the tick would otherwise show only its
 *     opening read in every window), up to POL_TRICKLE_QUIET_WINDOWS paced windows (below):
 *     a burst and then silence is a loss's retransmission timeout or a stall, not a trickle;
 *   - it brought less than 1/POL_TRICKLE_DIV of its share (its path's rate over the
 *     connections and transfers on that path), or of one segment per round trip when the
 *     path's rate is unknown: far below what the path gives, not behind a slower link (whose
 *     own measured rate is low);
 *   - and less than one segment (POL_TRICKLE_SEG) per round trip: no sending TCP connection
 *     is that slow unless its link is, so a path rate measured before the link got busier
 *     never condemns a working connection.
 * A low window that crawls (less than 1/POL_TRICKLE_CRAWL_DIV of a segment per round trip: a
 * few bytes a second) trickles at once when its bytes are spread: they came in at least
 * POL_TRICKLE_EARLY_SLOTS of the window's POL_TRICKLE_SLOT_US slots. Otherwise the verdict
 * waits until the window lasted POL_TRICKLE_PACED_US: a server that paces per second (nginx's
 * limit_rate releases each second's allowance at the second's edge; token buckets refill per
 * second) releases bytes inside every such window, and a shorter one can fall between two
 * releases and see only the segments that dribble at an edge, in one or two clumps. Then a
 * crawl trickles, and a low window trickles when the one before it was low too
 * (in->low_before): a connection held back for a while (competing traffic, a server's pause
 * longer than its pacing period) recovers; a trickle stays low.
 */

#include <stdint.h>

#define POL_TRICKLE_RTTS 4
#define POL_TRICKLE_QUIET_WINDOWS 4
#define POL_TRICKLE_DIV 8
#define POL_TRICKLE_SEG 1448
#define POL_TRICKLE_CRAWL_DIV 8
#define POL_TRICKLE_CREEP_DIV 64
#define POL_TRICKLE_MIN_RTT_US 10000ULL
#define POL_TRICKLE_SLOT_US 50000ULL
#define POL_TRICKLE_EARLY_SLOTS 4
#define POL_TRICKLE_PACED_US 1500000ULL

/* One connection's window, as the engine measured it. */
struct pol_trickle_in {
  uint64_t elapsed_us; /* how long the window has lasted (from its first byte) */
  uint64_t bytes;      /* body bytes the connection brought in it */
  uint64_t quiet_us;   /* how long since its last byte */
  uint64_t rtt_us;     /* its round trip (request latency, else the path's SRTT); 0 = unknown */
  double share_Bps;    /* its share of its path's rate, bytes/s; 0 = unknown */
  unsigned slots;      /* of the window's POL_TRICKLE_SLOT_US slots, how many brought bytes */
  int low_before;      /* its previous window was judged POL_TRICKLE_LOW */
};

enum pol_trickle {
  POL_TRICKLE_WAIT, /* the window is too short to tell: keep it */
  POL_TRICKLE_FINE, /* it delivers (or is silent: the stall rule's): start a new window */
  POL_TRICKLE_SLOW, /* it trickles: its ranges go elsewhere */
  POL_TRICKLE_LOW,  /* below the limits once, not a crawl: a new window, remembered */
};

/* The shortest window a connection with round trip rtt_us (0 = unknown) is judged over, µs. */
uint64_t pol_trickle_window_us(uint64_t rtt_us);

/* The verdict on one window. Pure. */
enum pol_trickle pol_trickle_judge(const struct pol_trickle_in *in);

/* 1 when the window so far is a crawl, whatever its slots: it lasted POL_TRICKLE_RTTS round
 * trips, its bytes still come and are below both limits and 1/POL_TRICKLE_CRAWL_DIV of a
 * segment per round trip. Once another path's connection to the same server was judged
 * POL_TRICKLE_SLOW, the server's answers are the trouble and a crawling window on this path
 * is the same trickle seen earlier in its life: the engine need not wait for its own slots. */
int pol_trickle_crawling(const struct pol_trickle_in *in);

/* 1 when the window so far is a crawl (pol_trickle_crawling) below 1/POL_TRICKLE_CREEP_DIV of a
 * segment per round trip: far below what a per-second pacer dribbles between its releases
 * (nginx's limit_rate: 1 672 B in 483 ms at 51 ms round trips, 1/8 of a segment per round
 * trip), while 100 B/s is 1/140 at 10 ms round trips. Every path's connections creeping at once
 * is the origin pacing its answers, with no connection's own verdict first. */
int pol_trickle_creeping(const struct pol_trickle_in *in);

/* 1 when the window so far says nothing of the connection's present rate: it lasted
 * POL_TRICKLE_RTTS round trips, but its bytes came in its first half and none since (a new
 * range's first burst before its answer slowed to a crawl, a loss's retransmission timeout).
 * Such a connection does not contradict its path's other connections crawling. */
int pol_trickle_quiet(const struct pol_trickle_in *in);

/* 1 when a read of read_len bytes, gap_us after the window's last one, starts a new window
 * rather than joining the open one that holds window_bytes: the open window holds at least a
 * segment (a burst at the path's speed), was then quiet for a whole window of round trips
 * (pol_trickle_window_us of rtt_us), and this read is less than a segment. Left in the
 * window, the burst would hold it "fine" until its next judgement, a tick and a read late
 * for an answer that went to a crawl after its first bytes. */
int pol_trickle_reopens(uint64_t window_bytes, uint64_t gap_us, uint64_t read_len, uint64_t rtt_us);

/* The hedge: when every path's connections to the origin went quiet at once after their
 * answers began, the engine sends the program's own request once more on the program's path
 * and holds its answer as it comes. If the quiet is a trickle (its verdict waits for the
 * crawl's next read, a pacing period later) that answer is the plain fetch, its first bytes
 * already received; if no verdict comes it is reset when the object ends, having cost one
 * connection and at most its hold (1 MiB). Quiet means no byte for POL_TRICKLE_HEDGE_RTTS of
 * a path's round trips (each at least POL_TRICKLE_MIN_RTT_US): a connection that sends gives a
 * read every round trip, and a loss repaired by fast retransmit costs one. */
#define POL_TRICKLE_HEDGE_RTTS 3

/* One path's connections to the origin, as the hedge rule reads them. */
struct pol_hedge_path {
  int begun;         /* one of them has an answer under way (its head came) */
  int busy;          /* one is paused by a full window, or the probe is still out on it:
                        its quiet is ours, not the origin's */
  uint64_t quiet_us; /* since the last byte any of them read */
  uint64_t rtt_us;   /* the path's round trip; 0 = unknown */
};

/* µs until every one of the n paths has been quiet for POL_TRICKLE_HEDGE_RTTS round trips with
 * an answer begun, if no byte comes meanwhile: 0 now, UINT64_MAX never (fewer than two paths,
 * or one without an answer begun, or busy). Pure. */
uint64_t pol_trickle_hedge_wait(const struct pol_hedge_path *p, unsigned n);

#endif
