/* Pure logic of the link emulator: value parsing, the per-direction shaper (loss, drop-tail
 * queue, rate, delay, jitter), the frame ring and the control-command parser. No I/O and no
 * clock here: every function that depends on time takes `now` (CLOCK_MONOTONIC ns) as an
 * argument, so tests replay exact traces. */
#ifndef LE_CORE_H
#define LE_CORE_H

#include <stddef.h>
#include <stdint.h>

#define LE_NS_PER_SEC 1000000000ull
#define LE_NS_PER_MS 1000000ull
/* Queue limit when none is given: one bandwidth-delay product (rate x RTT), never below this. */
#define LE_QUEUE_MIN_DEFAULT (64u * 1024u)

/* ---- value parsing: 0 on success, -EINVAL on a malformed or out-of-range value ---- */

/* "20mbit", "500kbit", "1gbit", "64000" (bit/s), "2.5mbps" (bytes/s x8), "0" = unlimited. */
int le_parse_rate(const char *s, uint64_t *bps);
/* "64k", "1m", "1500", "2MiB" -> bytes (k/m/g are powers of 1024). */
int le_parse_size(const char *s, uint64_t *bytes);
/* Milliseconds as a float ("10", "0.5") -> ns; at most one hour. */
int le_parse_ms(const char *s, uint64_t *ns);
/* Probability in [0,1], or a percentage "1%". */
int le_parse_prob(const char *s, double *p);

/* ---- PRNG: xoshiro256** seeded by splitmix64; deterministic for a given seed ---- */
typedef struct {
  uint64_t s[4];
} le_rng;
void le_rng_seed(le_rng *r, uint64_t seed);
uint64_t le_rng_next(le_rng *r);
/* Uniform double in [0,1). */
double le_rng_unit(le_rng *r);

/* ---- shaper: one direction of the link ---- */

/* Configuration of one direction. `rate_bps` 0 means unlimited. `queue_bytes` 0 means
 * "default": one bandwidth-delay product at the current rate and 2 x delay, min 64 KiB. */
typedef struct {
  uint64_t rate_bps;
  uint64_t delay_ns;
  uint64_t jitter_ns;
  double loss;
  uint64_t queue_bytes;
} le_cfg;

/* Counters of one direction. `frames`/`bytes` count frames forwarded (admitted and sent);
 * bytes are L3 bytes (see le_l3_bytes). */
typedef struct {
  uint64_t rx_frames;   /* frames offered to the shaper */
  uint64_t frames;      /* frames delivered (sent on the far interface) */
  uint64_t bytes;       /* L3 bytes delivered */
  uint64_t drops_loss;  /* random loss */
  uint64_t drops_queue; /* drop-tail at the rate limiter, or frame ring full */
  uint64_t drops_down;  /* link administratively down (incl. flushed frames) */
  uint64_t drops_tx;    /* the kernel refused the transmit */
} le_stats;

/* Per-direction state. Departures are computed when a frame arrives (virtual clock), so a
 * late wake-up never accumulates into a rate error: frame i leaves the rate limiter at
 * max(arrival_i, end_{i-1}) + bytes_i*8/rate and is delivered `delay` later. */
typedef struct {
  le_cfg cfg;
  uint64_t busy_until;   /* ns: when the rate limiter finishes serialising admitted frames */
  uint64_t last_deliver; /* ns: latest delivery time handed out (jitter never reorders) */
  le_rng rng;
} le_shaper;

typedef enum {
  LE_PASS = 0,
  LE_DROP_LOSS,
  LE_DROP_QUEUE,
} le_verdict;

void le_shaper_init(le_shaper *sh, const le_cfg *cfg, uint64_t seed);
/* Effective queue limit in bytes (the configured one, else the BDP default). */
uint64_t le_queue_limit(const le_cfg *cfg);
/* Bytes still waiting in (or being serialised by) the rate limiter at `now`. */
uint64_t le_backlog(const le_shaper *sh, uint64_t now);
/* Serialisation time of `bytes` at `rate_bps` (0 when unlimited), rounded to nearest ns. */
uint64_t le_tx_ns(uint64_t bytes, uint64_t rate_bps);
/* Offers a frame of `l3_bytes` arriving at `now`. On LE_PASS stores its delivery time in
 * *deliver_at; on a drop leaves the state as it was (except the PRNG). */
le_verdict le_admit(le_shaper *sh, uint64_t now, uint64_t l3_bytes, uint64_t *deliver_at);
/* Link went down: forget the backlog (the caller flushes its ring). */
void le_shaper_reset(le_shaper *sh, uint64_t now);

/* L3 bytes a frame costs on the link: the frame without its Ethernet header (14 bytes, 18
 * with one VLAN tag), i.e. what tbf/netem users call the packet size. A GSO super-frame of
 * `gso_segs` > 1 segments counts each segment's headers (`hdr_len` = L2..L4 header bytes). */
uint64_t le_l3_bytes(const uint8_t *frame, size_t len, unsigned gso_segs, size_t hdr_len);

/* ---- GSO segmentation: a veth peer with TSO/GSO on hands over TCP (or UDP-L4) super-frames
 * up to 64 KiB; cutting them into wire-size frames here keeps pacing and loss per segment. */

enum { LE_GSO_TCP4 = 1, LE_GSO_TCP6, LE_GSO_UDP_L4 };

typedef struct {
  int kind;        /* LE_GSO_* */
  size_t l3off;    /* IP header offset (14, or 18 with a VLAN tag) */
  size_t l4off;    /* TCP/UDP header offset */
  size_t hdr_len;  /* all headers: bytes copied in front of each segment */
  size_t seg_size; /* payload bytes per segment (the last may be shorter) */
  unsigned segs;   /* number of segments */
  int ipv6;
} le_gso_plan;

/* Plans the segmentation of `frame` (Ethernet, `len` bytes) whose L4 header starts at
 * `csum_start` and whose payload is cut every `gso_size` bytes. Returns 0, or -EINVAL for a
 * frame it cannot segment (the caller drops it). */
int le_gso_plan_make(le_gso_plan *p, const uint8_t *frame, size_t len, int kind, size_t gso_size, size_t csum_start);
/* Writes segment `i` (< p->segs) into `out` (room for hdr_len + seg_size bytes) with its
 * lengths, IPv4 id and checksum, TCP sequence number, flags and L4 checksum complete.
 * Returns the segment's length. */
size_t le_gso_segment(const le_gso_plan *p, const uint8_t *frame, size_t len, unsigned i, uint8_t *out);
/* Internet checksum (RFC 1071) of `len` bytes added to `sum`, not yet folded/complemented. */
uint32_t le_csum_add(uint32_t sum, const uint8_t *data, size_t len);
uint16_t le_csum_fold(uint32_t sum);

/* ---- frame ring: FIFO of variable-size frames in one preallocated byte area ---- */

/* Frames leave in arrival order, which is also delivery order because delivery times are
 * non-decreasing (constant delay; jitter is clamped to keep order). Single-threaded. */
typedef struct {
  uint8_t *buf; /* owned by the caller; capacity bytes, 8-aligned */
  size_t cap;
  size_t head; /* offset of the oldest record */
  size_t tail; /* offset where the next record goes */
  size_t used; /* bytes of records incl. headers and wrap padding */
  size_t frames;
  uint64_t l3_bytes; /* sum of l3 bytes of queued frames */
} le_ring;

typedef struct {
  uint64_t due; /* delivery time, ns */
  uint32_t len; /* frame bytes following the record header */
  uint32_t l3;  /* L3 bytes the frame counts for */
  uint32_t pad; /* 0: a frame; 1: wrap marker (skip to offset 0) */
  uint32_t reserved;
} le_rec;

void le_ring_init(le_ring *r, uint8_t *buf, size_t cap);
/* Reserves room for a frame of `len` bytes due at `due`; returns where to copy it, or NULL
 * when the ring is full (the caller drops the frame). */
uint8_t *le_ring_push(le_ring *r, uint64_t due, uint32_t len, uint32_t l3);
/* Oldest frame or NULL when empty; *data points into the ring until le_ring_pop. */
const le_rec *le_ring_peek(const le_ring *r, const uint8_t **data);
/* Oldest frame after `prev` (for batching several due frames before popping them). */
const le_rec *le_ring_next(const le_ring *r, const le_rec *prev, const uint8_t **data);
void le_ring_pop(le_ring *r);
void le_ring_clear(le_ring *r);

/* ---- control commands ---- */

enum {
  LE_DIR_AB = 1,
  LE_DIR_BA = 2,
  LE_DIR_BOTH = 3,
};

/* Which keys of a `set` command were given. */
enum {
  LE_SET_RATE = 1 << 0,
  LE_SET_DELAY = 1 << 1,
  LE_SET_LOSS = 1 << 2,
  LE_SET_QUEUE = 1 << 3,
  LE_SET_JITTER = 1 << 4,
};

typedef enum {
  LE_CMD_SET = 1,
  LE_CMD_DOWN,
  LE_CMD_UP,
  LE_CMD_STATS,
  LE_CMD_QUIT,
} le_cmd_kind;

typedef struct {
  le_cmd_kind kind;
  int dirs;   /* LE_DIR_* for set */
  int mask;   /* LE_SET_* for set */
  le_cfg val; /* values of the keys in mask */
} le_cmd;

/* Parses one command line (no trailing newline needed). Returns 0, or -EINVAL with a
 * one-line reason in err (NUL-terminated, at most errlen bytes). */
int le_cmd_parse(const char *line, le_cmd *cmd, char *err, size_t errlen);
/* Applies the keys of a `set` to a configuration. */
void le_cfg_apply(le_cfg *cfg, const le_cmd *cmd);

/* Formats one direction's counters as "PFX.frames=N PFX.bytes=N ..." into out; returns the
 * length written (snprintf semantics). */
int le_stats_format(char *out, size_t outlen, const char *pfx, const le_stats *st, uint64_t queue_bytes,
                    uint64_t ring_frames);

#endif
