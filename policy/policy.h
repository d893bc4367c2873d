/* Path choice: which interface an object (or a connection) goes out on, and which extra paths a split is worth. */
#ifndef MHTTP_POLICY_POLICY_H
#define MHTTP_POLICY_POLICY_H

/*
 * Pure logic: no clock, no I/O, no threads, no globals. The engine takes a snapshot of the
 * metrics store (policy/metrics.h) per interface, adds what only it knows (interface up,
 * idle reusable connection to this origin, metered), and asks:
 *
 *   pol_choose(p, &view, 0, draw, &c)     // the probe, or a connect() with no hint: latency wins
 *   pol_plan(p, &view, size, draw, &plan) // the probe told the size: stay single-path or split
 *   pol_worth_adding(p, &view, on, j, remaining, &g)  // later: is one more path still worth it?
 *
 * Units everywhere: times in microseconds, rates in bytes per second, sizes in bytes.
 * A metric of 0 means "not measured" (or timed out): the metrics paper's default, which a
 * policy does not take into account. A `struct pol` belongs to the engine loop thread; the
 * only state it carries is the round-robin cursor.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POL_MAX_IFACES 8           /* interfaces the store and a view can hold */
#define POL_IFNAME_MAX 16          /* IFNAMSIZ, terminating NUL included */
#define POL_SIZE_UNKNOWN 0         /* object size not known: latency wins */
#define POL_SIZE_BULK (1ULL << 30) /* size assumed for the bulk and stream intents (1 GiB) */

enum pol_kind {
  POL_SINGLE = 0,      /* always the configured interface */
  POL_ROUND_ROBIN = 1, /* interfaces in turn, one object each */
  POL_EAF = 2,         /* earliest arrival first (Socket Intents §IV-D, §V-F) */
  POL_THRESHOLD = 3,   /* latency- vs capacity-dominated, slow-start rounds (IANS §III-C) */
  POL_BIASED = 4,      /* random, probability ∝ 1 / predicted time (metrics paper §4.3) */
};

struct pol_config {
  enum pol_kind kind;
  char single_if[POL_IFNAME_MAX]; /* POL_SINGLE only: the interface name */
  uint64_t init_window;           /* initial congestion window in bytes: 10 segments = 14600 */
  uint64_t round_overhead;        /* bytes of a slow-start round's window that carry no body: the
                            * TCP timestamps option (12 B of each 1460-byte segment, 120 B
                            * of IW10) and one response head (POL_HEAD_ROOM): 1144 */
  double metered_gain;            /* a metered path must cut predicted time by this fraction; 0.2 */
  double split_gain;              /* an extra (unmetered) path must cut it by this fraction; 0.05 */
};

/* What the engine knows about one interface at decision time. The metric fields come from
 * pol_metrics_snapshot; name, usable, reusable and metered from the engine and the config. */
struct pol_path {
  const char *name;     /* borrowed; matched by single:IF; NULL is fine for other policies */
  bool usable;          /* up, has an address (and a server address for this origin) */
  bool reusable;        /* an idle keep-alive connection to this origin exists on it */
  bool metered;         /* costs money: used only past metered_gain */
  uint64_t srtt_min_us; /* minimum SRTT of recent connections; 0 = unknown */
  uint64_t srtt_med_us; /* median SRTT of recent connections; 0 = unknown */
  double max_rate;      /* maximum download rate over the last 5 minutes; 0 = unknown */
  double cur_rate;      /* download rate of the last complete 100 ms bucket */
  uint32_t transfers;   /* active object transfers (not counting the one being decided) */
  uint32_t conns;       /* open upstream connections */
  uint64_t idle_us;     /* reusable: how long that connection has been idle, from the last
                           * response byte it delivered; POL_IDLE_COLD when it never carried
                           * a response (a pre-connect: its window is the initial one). 0 (a
                           * connection busy until now) when the engine does not tell */
  uint64_t window;      /* reusable: the most that connection delivered in one round trip
                           * (the receiver's tcpi_rcv_space: the initial window until a
                           * response filled more), what its server may send in its first
                           * round when the window is open; 0 = unknown (taken as open) */
  uint64_t busy;        /* reusable: bytes already asked on that connection that arrive
                           * before anything asked now (the probe's body still coming when
                           * the plan is made): a new request's answer starts after them */
};

/* idle_us of a connection whose congestion window is the initial one whatever its age. */
#define POL_IDLE_COLD UINT64_MAX
/* Linux restarts slow start on a connection idle for longer than its RTO
 * (tcp_slow_start_after_idle=1, the default; RFC 5681 §4.1, RFC 7661 §3): the sender's window
 * falls back to the initial one. RTO = srtt + max(4·rttvar, 200 ms) >= srtt + 200 ms, and the
 * server's idle at the request's arrival is ours plus about one round trip, so ours below
 * 200 ms is surely inside it; beyond it the window is taken as closed (a reused connection
 * idle for a second on asym's lte0 delivered 87.8 KB in rounds of 14.6/29/44 KB: 410 ms). */
#define POL_RTO_MIN_US 200000

/* Is pp's reusable connection's window still open (no slow start when it sends again)?
 * reusable and idle_us < POL_RTO_MIN_US. Pure. */
bool pol_window_open(const struct pol_path *pp);

/* The window a transfer on pp starts from, in bytes: 0 = open (it streams at its rate
 * share from the first round), else slow-start rounds of w, 2w, 4w... A new connection or
 * a reused one past its RTO: init_window. A reused one inside its RTO: its window when that
 * is known and below one round trip at `rate` (bytes/s) over `rtt_us`, else open. An idle
 * connection's window is only what its responses filled: asym, an lte0 connection that had
 * carried only 1 KiB objects, 80 ms idle, was planned as open (a 100 KiB object in 125 ms)
 * and took 327 ms in three slow-start rounds. Pure. */
double pol_start_window(const struct pol_path *pp, uint64_t init_window, double rate, double rtt_us);

/* Interfaces by index (the store's index; index order is the configured preference order,
 * which also breaks ties). */
struct pol_view {
  unsigned n;
  struct pol_path path[POL_MAX_IFACES];
};

struct pol_choice {
  int iface;           /* index into the view */
  bool reuse;          /* the prediction assumed the idle connection on that path */
  double predicted_us; /* predicted completion from now; < 0 when metrics cannot tell */
};

struct pol;

/* A policy is this table (h2o balancer style): one prediction model and one pick rule. */
struct pol_ops {
  const char *name;
  bool splits; /* may add paths to an object of known size (pol_plan) */
  /* Predicted completion in µs of `size` bytes on one path (size 0: the arrival of a small
   * object), or -1 when the path's metrics cannot tell. */
  double (*predict)(const struct pol *p, const struct pol_path *pp, uint64_t size);
  /* Picks among paths with eligible[i] set (usable and past the metered gate); t[i] is
   * predict() of each. Writes the prediction it used to *pred. Returns the index or -errno. */
  int (*pick)(struct pol *p, const struct pol_view *v, const bool *eligible, const double *t, uint64_t size,
              double draw, double *pred);
};

/* One configured policy; embed it anywhere. Owned and used by one thread (the engine loop). */
struct pol {
  const struct pol_ops *ops;
  struct pol_config cfg;
  unsigned rr_next; /* round-robin cursor: the index to try first next time */
};

/* Fills *cfg with kind EAF and the defaults above. */
void pol_config_default(struct pol_config *cfg);

/* Parses a policy spec (MHTTP_POLICY): "single:IF", "round-robin", "eaf", "threshold",
 * "biased"; NULL or "" keeps the default (eaf). Only cfg->kind and cfg->single_if change, so
 * call pol_config_default first. Returns 0, or -EINVAL with a one-line message in err
 * (NUL-terminated, truncated to errlen; err may be NULL). */
int pol_parse(const char *spec, struct pol_config *cfg, char *err, size_t errlen);

/* Parses a gain (MHTTP_METERED_GAIN, MHTTP_SPLIT_GAIN): "0.25" or "25%", in [0, 1).
 * `what` names the setting in the message. Returns 0 or -EINVAL with a message in err. */
int pol_parse_gain(const char *what, const char *s, double *out, char *err, size_t errlen);

/* Turns Socket Intents hints (MHTTP_INTENT_SIZE: bytes to be received, with an optional
 * k/M/G suffix in powers of 1024; MHTTP_INTENT_CATEGORY: query, bulk or stream) into the
 * size to decide on: an explicit size wins; query means latency (POL_SIZE_UNKNOWN); bulk and
 * stream mean capacity (POL_SIZE_BULK). Either string may be NULL or "". Returns 0 or -EINVAL
 * with a message in err (*size_hint unchanged). */
int pol_parse_intent(const char *size, const char *category, uint64_t *size_hint, char *err, size_t errlen);

/* Prepares *p for cfg (copied). Returns 0 or -EINVAL (unknown kind, empty single_if, zero
 * init_window, gain outside [0, 1)). */
int pol_init(struct pol *p, const struct pol_config *cfg);

/* Chooses the interface for one object of `size` bytes (POL_SIZE_UNKNOWN: latency wins) or
 * for one connection. draw is a uniform random number in [0, 1), used by biased only.
 * Metered paths are eligible only when no unmetered path is usable or when they cut the
 * best unmetered prediction by metered_gain (single:IF is the user's explicit choice and is
 * never gated). Paths without metrics get no prediction; when no path has one, the lowest
 * latency estimate wins; when no path has a latency either (cold start), the paths in turn
 * from p->rr_next (which moves), so connections opened together spread over all links.
 * Returns 0 with *out filled, -ENETUNREACH (no usable path), -ENODEV (single:IF names no
 * path in the view), -ENETDOWN (single:IF's path is not usable) or -EINVAL (bad draw). */
int pol_choose(struct pol *p, const struct pol_view *v, uint64_t size, double draw, struct pol_choice *out);

/* The result of weighing one more path for a running transfer. */
struct pol_gain {
  double without_us; /* predicted completion on the current paths alone */
  double with_us;    /* predicted completion with the extra path */
  bool worth;        /* with_us cuts without_us by split_gain (metered_gain if metered) */
};

/* Would path j speed up a transfer with `remaining` bytes currently on the paths in mask
 * `on` (bit i = path i)? The current paths deliver their rate share max_rate/max(1,transfers)
 * (the transfer is counted in their transfers); j gets max_rate_j/(transfers_j+1) after
 * paying its handshake (1 RTT, none when reusable) and slow start (init_window doubling per
 * RTT until the share is reached; none when reusable), with its median SRTT (min if no
 * median). Returns 0 with *out filled, -EINVAL (j or a bit of `on` outside the view, j in
 * `on`, empty `on`), -ENETDOWN (j not usable) or -ENODATA (the current paths or j have no
 * metrics); out->worth is false on every error. */
int pol_worth_adding(const struct pol *p, const struct pol_view *v, uint32_t on, unsigned j, uint64_t remaining,
                     struct pol_gain *out);

/* The decision for an object once its size is known. */
struct pol_plan {
  struct pol_choice primary;    /* where the object goes (pol_choose) */
  uint32_t paths;               /* primary plus every extra path worth adding (bit i = path i) */
  double predicted_us;          /* completion over all those paths by the delivery model of
                               * pol_worth_adding, every path paying its own start (so it may
                               * differ from primary.predicted_us, the policy's own model);
                               * primary.predicted_us when the primary has no metrics */
  double share[POL_MAX_IFACES]; /* bytes path i delivers by predicted_us in that model (they
                               * add up to the size); 0 off the plan, and for every path
                               * when the policy does not split or the primary has no
                               * metrics */
};

/* Chooses the primary path as pol_choose does, then, for policies that split (eaf,
 * threshold, biased) and a known size, tries the other usable paths one at a time, fastest
 * alone first, keeping each that cuts the predicted completion by split_gain (metered_gain
 * if metered). Unlike pol_worth_adding, nothing is running yet: every path, the primary
 * included, starts after 1 RTT on a reused connection or 2 RTT plus slow start on a new one.
 * Returns 0 or the errors of pol_choose. */
int pol_plan(struct pol *p, const struct pol_view *v, uint64_t size, double draw, struct pol_plan *out);

/* The probe: the first request of an object whose size is unknown (Range: bytes=0-(N-1)).
 * Nothing can be decided before it answers, so it should cost about one round trip of its
 * path: a 32 KiB probe on a 2 Mbit/s link takes 131 ms of transmission alone, six parallel
 * ones queue for 0.8 s. Socket Intents' proxy used 4-8 KiB ("fits within the initial TCP
 * window"). Two measured limits (bench/pages, bench/split on the testbed): the scheduler
 * takes the probe size as every path's first chunk (case 4, doubling per chunk), so a small
 * probe shrinks the extra paths' first chunks too: below one initial window those chunks
 * leave a new connection's first round trip half empty and their rate samples untrusted
 * (pol_rate_trusted: a 4 KiB explorer chunk measured lte0 at 173 kB/s of 2.5 MB/s); and a
 * cold process's probe below one initial window made 1 MiB and 4 MiB objects slower on demo
 * (bench/split/README.md). Hence the initial window as the floor and no shrinking before a
 * path is measured. */
#define POL_PROBE_MIN 4096 /* floor when the configured initial window is smaller still */

/* The floor is what one initial window carries with the 206's head (init_window less
 * round_overhead): init_window counts 1460-byte segments, but with TCP timestamps (Linux's
 * default) a segment carries 1448, and the head (nginx ~300 B, CDNs up to ~1 KB) comes
 * first. A 14 600 B chunk spilled ~400 B into a second round trip: asym, a pooled lte0 leg
 * restarting slow start delivered its first 14 600 B chunk after 202 ms (2 RTT) instead of
 * ~106 ms, and the doubled chunks after it (29 200, 58 400: cumulative 44 KB, 103 KB against
 * rounds of 43 440, 101 360 B) each spilled too. POL_HEAD_ROOM is that head's allowance. */
#define POL_HEAD_ROOM 1024
#define POL_ROUND_OVERHEAD (10 * 12 + POL_HEAD_ROOM)

/* The largest probe, in init_chunks, on a measured path. The probe is no longer every other
 * path's first chunk (sched_config.probe_chunk), so a long fat path (asym lte0: 100 ms ×
 * 2.4 MB/s = 240 kB) may get its full round trip: a 100 KiB object on a warm connection then
 * arrives in one request instead of a 32 KiB probe and a second round trip for the rest. */
#define POL_PROBE_MAX_CHUNKS 8

/* Probe size for an object whose probe goes on path pp: its bandwidth-delay product (min
 * SRTT × max_rate: what it delivers in one round trip once open), clamped to
 * [max(init_window - round_overhead, POL_PROBE_MIN), max]; cold (the configured init_chunk) when pp is NULL or
 * has no RTT or no rate, and min(cold, max) when max is below that floor. Pure. */
uint64_t pol_probe_size(const struct pol *p, const struct pol_path *pp, uint64_t cold, uint64_t max);

/* Size of a probe that moved (mh_policy_probe_move) from the program's path to pp's pooled
 * connection (pp->reusable), `base` being the probe sized for the program's path: sized as
 * any probe on pp (pol_probe_size: pp's bandwidth-delay product), also when that is less than
 * base (threshold on asym moved lte0 probes to wifi0: a 245 kB probe there carried a whole
 * 100 KiB object at 2 Mbit/s, 1 s, and filled wifi0's queue for every later probe).
 * Whatever the probe leaves is asked when its head is back and answered one round trip
 * later, while the connection would have gone on sending, from its open window or, past its
 * RTO, through its slow-start rounds. asym wget2 many100k: a 13 456 B probe moved to a warm
 * lte0 connection asked the rest of a 100 KiB object 100 ms later; sized to one round of the
 * connection's window (29-47 kB) it still did; sized to lte0's BDP it did not, and the page
 * was faster, also on a connection idle past its RTO (bench/split/README.md has the runs).
 * base on a path whose rate is not measured or not trusted
 * (pol_rate_trusted), or without a pooled connection. Pure. */
uint64_t pol_moved_probe_size(const struct pol *p, const struct pol_path *pp, uint64_t base, uint64_t max);

/* Is pp's max_rate a measurement of the path, or only of what was asked of it? The rate is
 * the busiest 100 ms bucket (POL_BUCKET_US); a bucket holding less than one initial window
 * shows objects that ended before the path was ever busy, not its capacity (asym: a 1 KiB
 * object read 13 kB/s on the 20 Mbit/s lte0, a 1 KiB probe 10 kB/s on wifi0, and EAF then
 * predicted 1.4 s for a 14.6 KB probe there). Trusted: max_rate · bucket >= init_window
 * (146 kB/s with IW10). A path really slower than that is never trusted and is decided on
 * latency, like an unmeasured one. Pure. */
bool pol_rate_trusted(const struct pol_path *pp, uint64_t init_window);

/* How many connections path pp gets for the `bytes` a plan expects it to carry (pol_plan.share),
 * at most max (0 counts as 1). A connection's first rounds carry the initial window, then
 * double per round trip until they fill the path's share of rate × RTT; k connections opened
 * together carry k initial windows, so the path leaves slow start log2(k) round trips sooner
 * (demo, 1 MiB: lte0, 50 ms, slow-started from IW10 for most of the object). The count doubles
 * (1, 2, 4 ...) while the doubled set delivers `bytes` at least POL_CONNS_GAIN_RTT round trips
 * sooner in the delivery model of pol_plan: the first connection is pp's own (a reused one
 * from 1 RTT, a new one after its handshake), every added one new (2 RTT, initial window),
 * each with 1/k of the rate share max_rate / (transfers + 1). Never more than one on a path
 * whose reused connection has its window open (pol_window_open: it streams, a new connection
 * would start a handshake and a slow start behind it), nor on one without an RTT or rate.
 * Pure. */
#define POL_CONNS_GAIN_RTT 0.5
unsigned pol_path_conns(const struct pol *p, const struct pol_path *pp, uint64_t bytes, unsigned max);

/* How many connections path pp gets when a probe goes out elsewhere, before the size is known
 * (the engine opens them with the probe, mh__open_extras): max (0 counts as 1) on a path whose
 * bandwidth-delay product (min SRTT × max_rate, a trusted rate) is at least
 * POL_EXTRA_BDP_WINDOWS initial windows, else 1. Such a path spends an object's first round
 * trips in slow start, where k connections carry k initial windows per round, and a
 * connection there costs a long handshake: one opened with the probe is ready when the plan
 * wants it, and one the object did not need goes to the pool for the next object's probe
 * (asym: lte0's pool was empty at most probes of a browser-like client, so their lte0 part
 * waited for a handshake and a slow start). A short or narrow path (sym-high: 25 kB per
 * round trip) gains nothing from a second connection. Pure. */
#define POL_EXTRA_BDP_WINDOWS 4
unsigned pol_extra_conns(const struct pol *p, const struct pol_path *pp, unsigned max);

/* Rescue of a stalled connection (the engine's mh__rescue). A connection on path victim that
 * has delivered nothing for stalled_us, at least its round trip (the larger of min and median
 * SRTT: a loaded queue is part of it) plus POL_RTO_MIN_US, is waiting for its sender's
 * retransmission timeout; once that fires the sender goes on from one segment (RFC 5681 §3.1,
 * init_window / 10), so its `bytes` left arrive in slow-start rounds from there at the path's
 * rate share. Asking them again on taker (pol_plan's delivery model: a reused connection
 * from its window, or a new one after its handshake, in slow-start rounds) is worth it when
 * that is predicted sooner. asym, curl --parallel many100k:
 * about one run in three lost one lte0 segment, and the 100 KiB object behind it took 1.1-1.4 s
 * instead of 0.15-0.45 s. Returns true when worth it; *victim_us and *taker_us (may be NULL)
 * get both predictions (µs, -1 without metrics). Pure. */
bool pol_rescue_worth(const struct pol *p, const struct pol_path *victim, uint64_t stalled_us,
                      const struct pol_path *taker, uint64_t bytes, double *victim_us, double *taker_us);

/* Model helpers, exported for the engine's logs and for tests. */

/* EAF prediction: size / (max_rate / (transfers+1)) + RTT·(1 if reuse else 2), with the
 * minimum SRTT; size 0 gives the latency part alone. A reused connection whose window has
 * closed (pol_window_open false) restarts from the initial window: it delivers in slow-start
 * rounds, pol_slow_start_time(size, RTT, share, init_window). Returns µs, or -1 without metrics. */
double pol_eaf_time(const struct pol_path *pp, uint64_t size, uint64_t init_window);

/* Time in µs from sending a request on an established connection to the last byte of
 * `size` bytes, for round-trip time rtt_us and rate share `rate`: slow start sends
 * init_window, then double, once per RTT, each round arriving at rate `rate`, until a round
 * reaches rate·rtt (the share is reached); the rest then streams at `rate`.
 * k rounds: k·rtt + (bytes of the last round or the rest) / rate. */
double pol_slow_start_time(uint64_t size, double rtt_us, double rate, uint64_t init_window);

#endif
