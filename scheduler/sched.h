/* Chunk scheduler for one object over N connections: mHTTP Algorithm 1, pipelining, tail re-split. */
#ifndef MHTTP_SCHEDULER_SCHED_H
#define MHTTP_SCHEDULER_SCHED_H

/*
 * Pure logic: no clock, no I/O, no callbacks, no threads. Every input, the current time
 * included (now_us, microseconds on any monotonic scale), is an argument, so a trace can be
 * replayed exactly. One scheduler per object; it belongs to whoever created it and is used
 * from one thread (the engine loop). Allocation happens only in sched_new and when the
 * ledger grows (bounded by the number of chunks in flight).
 *
 * The engine drives it like this (the model in tests/model does exactly the same):
 *
 *   sched_new(&cfg, SCHED_LEN_UNKNOWN, &s);       // size unknown until the probe answers
 *   c0 = sched_conn_add(s, now);                   // the program's own connection
 *   sched_next_range(s, c0, now, &r);              // the probe: bytes 0..initial-1
 *   ...206 arrives: sched_set_total(s, TOTAL);     // then open more connections
 *   on every body read:  sched_on_data(s, c, off, len, now)   (discard bytes it did not accept)
 *   on every RTT sample: sched_on_rtt(s, c, rtt_us)           (TCP_INFO, handshake time)
 *   after each event, per connection:
 *     while (sched_want_pipeline(s, c, now)) sched_next_range(s, c, now, &r) -> send Range r;
 *     if it is idle and sched_next_range says -ENODATA: sched_resplit(s, c, now, &victim, &r);
 *   on a dead connection: sched_conn_failed(s, c) (its unreceived bytes become missing again)
 *   sched_done(s) when every byte arrived.
 */

#include <stdbool.h>
#include <stdint.h>

#include "scheduler/ledger.h"

/* Which rule sized a chunk (the four cases of Algorithm 1, plus re-split). */
enum sched_case {
  SCHED_CASE_NONE = 0,
  SCHED_CASE_ALL = 1,     /* case 1: this connection takes all that is left */
  SCHED_CASE_BALANCE = 2, /* case 2: sized so it ends with the others' next chunk */
  SCHED_CASE_TMAX = 3,    /* case 3: T_max worth of bytes (far from the end) */
  SCHED_CASE_PROBE = 4,   /* case 4: first chunk of a connection, min(initial, left); doubled
                             for each further chunk while no throughput sample exists */
  SCHED_CASE_RESPLIT = 5, /* tail taken over from a straggler */
  SCHED_CASE_RESCUE = 6,  /* a stalled connection's bytes asked again elsewhere (sched_rescue) */
};

struct sched_config {
  uint64_t initial_chunk;   /* probe and case-4 size; 32 KiB (mHTTP §6.4) */
  uint64_t probe_chunk;     /* the probe's size when it differs (0: initial_chunk): a probe sized
                               to its own path's round trip must not set every other path's first
                               chunk (a 14.6 KB probe on a 10 ms path made a 100 ms path's first
                               chunks 14.6/29/44 KB, a round trip each); 0 */
  uint64_t min_chunk;       /* smallest request worth its round trip unless less is left; 16 KiB */
  double tmax_rtts;         /* T_max = tmax_rtts · rtl; 20 gives E ≥ 97.5 % of R̄ (§5.2) */
  bool pipeline;            /* issue the next request before the current one drains (MIC §V-C-1) */
  double pipeline_rtts;     /* pipeline when outstanding < pipeline_rtts · R̄ · rtl; 2 (see below) */
  uint32_t max_queue;       /* requests outstanding per connection, at most SCHED_MAX_QUEUE; 4 */
  uint32_t hm_window;       /* harmonic-mean memory in samples, 0 = forever (paper); 64 */
  uint32_t sample_min_us;   /* a throughput sample spans at least this long; 1000 */
  uint32_t default_rtt_us;  /* latency assumed before any sample; 100 ms */
  uint32_t max_conns;       /* connections per object; 8 */
  double resplit_gain_rtts; /* re-split only if the tail ends this many idle-RTTs sooner; 1 */
  /* The bound on requests per object (scheduler/README.md): outside a connection's first
   * rounds (case 4, sched_next_range_sized) and the tail (cases 1 and 2: the object ends within
   * T_max; re-split, rescue; the object's last bytes when less is left) a range is at least
   * max(steady_chunk, floor_rtts · R̄ · rtl, min(object / steady_share, steady_share_cap)); in
   * the tail at least floor_rtts · R̄ · rtl. A range smaller than that is an HTTP exchange per
   * few round trips at the server, and servers that meter each request (nginx limit_rate starts
   * every request's budget afresh) make small ranges look fast, so Algorithm 1 alone would
   * shrink them to min_chunk. 0 turns a term off. */
  uint64_t steady_chunk;     /* 256 KiB */
  double floor_rtts;         /* 2 */
  uint32_t steady_share;     /* 64: at most about 64 steady-state ranges per object... */
  uint64_t steady_share_cap; /* 1 MiB: ...and at most one per MiB on objects past 64 MiB */
  uint64_t tail_chunk;       /* a re-split piece is at least this (less when the balanced tail
                                is less): on a metered server 2 RTTs of the taker's rate are a
                                few KiB, and the tail became dozens of requests; 64 KiB */
  double resplit_piece_rtts; /* 0: a re-split moves the whole balanced tail at once (the
                                split point rests on both rate estimates). > 0: it moves at most
                                this many RTTs of the taker's bytes per call (half that tail
                                when more and the tail exceeds steady_chunk), from the end, and
                                the taker may take the next piece pipelined, so the two meet
                                where they really are, not where the estimates said; 0 */
};
#define SCHED_MAX_QUEUE 8

/* Fills *cfg with the defaults above. */
void sched_config_default(struct sched_config *cfg);

/* Per-connection view, for logs, tests and the simulation. */
struct sched_conn_stats {
  double rate_Bps;           /* R̄, bytes/s; 0 before the first throughput sample */
  double rtl_us;             /* smoothed latency; 0 before the first sample */
  uint32_t samples;          /* throughput samples taken */
  uint32_t chunks;           /* requests issued */
  enum sched_case last_case; /* rule that sized the last request */
  uint64_t last_len;         /* its length */
  uint32_t queued;           /* requests not fully arrived */
  uint64_t outstanding;      /* bytes the connection will still carry (wire bytes) */
  uint64_t owed;             /* of those, bytes the object still needs (live bytes) */
  bool failed;
};

struct sched;

/* Creates a scheduler for an object of total_len bytes (SCHED_LEN_UNKNOWN before the probe).
 * cfg is copied (NULL = defaults). The caller owns *out (sched_free). Returns 0, -EINVAL
 * (nonsense config) or -ENOMEM. */
int sched_new(const struct sched_config *cfg, uint64_t total_len, struct sched **out);
/* Frees it; NULL is fine. */
void sched_free(struct sched *s);

/* Sets the size from the probe's Content-Range; requests past the end are cut short.
 * Returns 0, -EALREADY or -ERANGE (bytes past the end were already received). */
int sched_set_total(struct sched *s, uint64_t total);

/* Sets the probe's size (sched_config.probe_chunk) before it is asked: a probe that moves to
 * another path's connection is sized for that connection's round trip. Returns 0, -EINVAL (0,
 * or a size already known) or -EBUSY (a range was handed out). */
int sched_set_probe_chunk(struct sched *s, uint64_t size);

/* A resumed object: [off, off+len) is at the destination already, so it is never asked for
 * (the ledger marks it received; no connection's statistics change). The size must be known.
 * Returns the bytes that were not received yet (>= 0) or -EINVAL (outside the object). */
int64_t sched_prefill(struct sched *s, uint64_t off, uint64_t len);

/* Registers a new connection (established, nothing requested); returns its id (>= 0). Ids are
 * dense and not reused while max_conns suffice; past them the id of a failed connection is given
 * again (its bytes went back to missing in sched_conn_failed: a connection a server ended after
 * many answers is renewed as often as it takes). -ENOSPC when every id is alive. */
int sched_conn_add(struct sched *s, uint64_t now_us);
/* Feeds one round-trip sample (handshake time, TCP_INFO srtt) into rtl's EWMA; the first
 * sample seeds it. Returns 0, -EINVAL or -ENOTCONN (failed connection). */
int sched_on_rtt(struct sched *s, int conn, uint32_t rtt_us);
/* The caller read nothing from conn for a while of its own choosing (its reassembly window
 * full, a rate limit) and reads again now: the time since the last read is not the path's, so
 * the next read starts a new throughput interval instead of ending one. Without this, one read
 * after a long hold (a segment's bytes over seconds) is a sample thousands of times under the
 * path's rate, and the harmonic mean keeps it for dozens of samples. 0, -EINVAL or -ENOTCONN. */
int sched_on_resume(struct sched *s, int conn);
/* One body read on conn: bytes [off, off+len) of the response at the head of its queue
 * (responses arrive in request order). Updates R̄ (bytes/interval since the previous sample
 * on this connection while it had requests outstanding) and the ledger. Every byte that had
 * not arrived yet is received now, whichever connection it was assigned to: bytes a re-split
 * gave away still come on the victim's connection and count if they come first. Returns how
 * many bytes of the read were new to the object (anywhere in it, not necessarily a prefix:
 * the caller keeps the first copy of each byte, as mh_reasm_put does), or -EINVAL,
 * -ENOTCONN, -EPROTO (no request outstanding) or -ERANGE (not the next bytes of the head
 * response). */
int sched_on_data(struct sched *s, int conn, uint64_t off, uint64_t len, uint64_t now_us);

/* The next range to request on conn, sized by Algorithm 1 (lowest missing bytes first), and
 * recorded as outstanding. Returns 0, -ENODATA (nothing missing: try sched_resplit),
 * -EAGAIN (size unknown and the probe is out: wait for sched_set_total), -EBUSY (max_queue
 * requests outstanding), -ENOTCONN, -EINVAL or -ENOMEM. */
int sched_next_range(struct sched *s, int conn, uint64_t now_us, struct sched_range *out);
/* Same, at most max bytes (0: no limit). The caller knows a share Algorithm 1 does not: a
 * policy's plan for a small object gives each path the bytes it delivers by the joint finish,
 * and a longer first request on a path in slow start only lands a round trip later. */
int sched_next_range_upto(struct sched *s, int conn, uint64_t now_us, uint64_t max, struct sched_range *out);
/* Same, but the bytes come from the end of the highest missing run: the engine asks an
 * object's last bytes first, so that the total the probe claimed is checked before the
 * program sees it. -EINVAL while the size is unknown. */
int sched_next_range_last(struct sched *s, int conn, uint64_t now_us, uint64_t max, struct sched_range *out);
/* Same, `size` bytes (fewer when less is missing in one run) whatever Algorithm 1 would say:
 * for a connection without a rate sample whose caller knows how much it delivers before its
 * rate could size anything (the engine's early budget: what its slow start brings by the
 * object's predicted end, where case 4's doubling chunks would leave it idle or short).
 * Recorded as case 4. Same returns as sched_next_range, and -EINVAL for size 0. */
int sched_next_range_sized(struct sched *s, int conn, uint64_t now_us, uint64_t size, struct sched_range *out);
/* How many requests conn, still without a rate sample, should keep queued: `base`, or more
 * when the object is due to finish (finish_us, e.g. the policy's predicted completion) before
 * conn's rate could settle (8 of its round trips from now, as for tail re-splits). Its rate will then
 * never size its requests usefully: the harmonic mean of a path in slow start reads a fraction
 * of what it delivers, and the other paths claim every missing byte meanwhile (demo, 1 MiB:
 * the 50 ms path, 3 chunks queued, carried 248 kB while its slow start could have carried
 * 370 kB; the 10 ms path finished 40 ms after it). So conn keeps as many of its case-4
 * (doubling) chunks queued as slow start from an init_window-byte window delivers in the
 * round trips left (the first one carries the request), at most max_queue − 1 (the last slot
 * is for the request its first rate sample sizes). */
uint32_t sched_early_depth(const struct sched *s, int conn, uint64_t now_us, uint64_t finish_us, uint64_t init_window,
                           uint32_t base);

/* True when conn should issue a request now: it is idle and bytes are missing, or pipelining
 * is on and its outstanding bytes fell below pipeline_rtts · R̄ · rtl. With exactly R̄·rtl the
 * request reaches the server as it sends its last byte (half an RTT for the request, half for
 * the bytes already in flight); the factor absorbs read granularity and estimate error. */
bool sched_want_pipeline(const struct sched *s, int conn, uint64_t now_us);
/* Tail re-split: with nothing missing, if idle connection idle_conn (with a rate estimate)
 * would finish the end of a straggler's remaining bytes sooner than the straggler, moves them
 * to idle_conn: *victim is the straggler, *out the range to request on idle_conn. The split
 * balances both finish times. With resplit_piece_rtts > 0 at most a piece of that tail moves
 * (resplit_piece_rtts of the taker's bytes; half of a tail past steady_chunk when more),
 * and idle_conn need not be idle, only due for its next pipelined request (sched_want_pipeline's
 * rule): it then keeps eating the straggler's tail from the end, a piece per call, until the
 * gain is gone. Returns 0, -ENODATA (nothing worth taking), -EAGAIN (bytes are still missing:
 * use sched_next_range), -EBUSY (idle_conn is not idle, or not due), -ENOTCONN, -EINVAL. */
int sched_resplit(struct sched *s, int idle_conn, uint64_t now_us, int *victim, struct sched_range *out);
/* After a re-split the victim's server still sends the given-away bytes: sched_on_data takes
 * those that arrive before the taker's copies, so the victim must keep being read while the
 * object is unfinished (sched_conn_stats().owed counts only the bytes it was left with). */

/* Rescue of a stalled connection: the unreceived bytes of victim's earliest request that still
 * owes any move to connection taker, which asks them again, as a re-split does but without
 * comparing rates: the caller saw victim deliver nothing for longer than its retransmission
 * timeout and judged the taker faster (pol_rescue_worth). Called again, it moves the next
 * request's, until the victim owes nothing or taker's queue is full. The victim keeps being
 * read; whichever copy of a byte arrives first counts (sched_on_data). Returns 0 (*out: the
 * range to request on taker), -EBUSY (taker's queue is full), -ENODATA (victim owes nothing it
 * still owns), -EAGAIN (size unknown), -ENOTCONN or -EINVAL. */
int sched_rescue(struct sched *s, int taker, int victim, uint64_t now_us, struct sched_range *out);
/* An answer already under way becomes conn's (a relayed response the engine takes over when a
 * path appears: mh_split_adopt): conn keeps the bytes of its last request that still owes any
 * up to `end`, and those from `end` on become missing, for the others to ask. Its answer still
 * brings them, and they count when they come first (sched_on_data). Returns the bytes given
 * back (> 0), -ENODATA (it owes nothing past end), -ENOTCONN, -EINVAL or -ENOMEM. */
int64_t sched_cede(struct sched *s, int conn, uint64_t end);
/* conn is gone: its unreceived bytes go back to missing for the others. Returns 0 or -EINVAL. */
int sched_conn_failed(struct sched *s, int conn);

/* True when every byte has arrived. */
bool sched_done(const struct sched *s);
/* The scheduler's ledger (owned by it; read-only for callers). */
const struct sched_ledger *sched_ledger(const struct sched *s);
/* Copies conn's statistics to *out. Returns 0 or -EINVAL. */
int sched_conn_stats(const struct sched *s, int conn, struct sched_conn_stats *out);

#endif
