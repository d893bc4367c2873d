/* Private to the split's files: the split's and the leg's structs, their states and the inline helpers; the functions they share are declared by module (split_*.h, this folder). */
#ifndef MH_SPLIT_INT_H
#define MH_SPLIT_INT_H
#include "mh_bucket.h"
#include "mh_buf.h"
#include "mh_config.h"
#include "mh_path.h"
#include "mh_paths.h"
#include "mh_policy.h"
#include "mh_range.h"
#include "mh_reasm.h"
#include "mh_sink.h"
#include "mh_split.h"
#include "mh_upstream.h"
#include "policy/admit.h"
#include "scheduler/sched.h"

#include <llhttp.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#define MH__MAX_LEGS 16
/* A response head is parsed whole up to these bounds (curl allows 300 KB of headers); a larger
 * one is not split: the program's own request goes out and its answer is relayed untouched. */
#define MH__MAX_HDRS 1024
#define MH__HEAD_MAX (256 * 1024)      /* names and values of one response head */
#define MH__RAW_CAP (2 * MH__HEAD_MAX) /* probe answer kept for a relay: its whole head fits */
#define MH__REQ_CAP (16 * 1024)        /* the program's request head */
#define MH__MAX_REQ_HDRS 128           /* its header lines (a larger request is relayed) */
#define MH__OUT_CAP (64 * 1024)        /* range requests waiting for a socket */
#define MH__IO MH_SPLIT_IO             /* one leg read, into the env's io buffer */
#define MH__ROUNDS 16
#define MH__TICK_MS 100
#define MH__CONNECT_TIMEOUT_US 5000000ULL
#define MH__STALL_MIN_US 1000000ULL
/* A leg's stall clock restarts only per this many body bytes (or a finished answer), so a
 * server that trickles a few bytes at a time (slow-loris) stalls like a silent one. At 56 kbit/s
 * this is under 0.6 s of data, well inside the stall limit. */
#define MH__PROGRESS_BYTES 4096
/* Plain fetching of an object whose ranges cannot be used (SP_PLAIN): attempts in a row that
 * do not pay for their reconnect before the program sees a reset, and how long one may stay
 * silent. An attempt pays when it brings MH__PLAIN_WORTH bytes (about a new connection's first
 * round trip of data: its handshake cost one round trip) or the rest of the object: an origin
 * that resets every answer after a few bytes would otherwise be asked forever. */
#define MH__PLAIN_TRIES 3
#define MH__PLAIN_WORTH (16 * 1024)
#define MH__PLAIN_STALL_US 30000000ULL
#define MH__PROBE_STALL_US 2000000ULL /* a moved probe's answer (mh__tick) */
#define MH__EARLY_DEPTH 3
/* An origin that closes after every answer (mh__closing): one range per connection, at least
 * this long (more when the object's missing bytes per path are more), so that each range pays
 * back its connection's handshake, request round trip and slow start. */
#define MH__CLOSE_RANGE_MIN (256 * 1024)
#define MH__EARLY_SAMPLES 16

/* Split states; every change goes through mh__set_state(), which logs it. */
enum mh__sp_state {
  SP_PROBE,    /* the probe is out (on the program's connection, or moved to a pooled one on
                  the path the policy picks, mh__probe_move); the other paths connect */
  SP_DISCARD,  /* the probe's answer is unusable but well framed (416, a 206 without a strong
                  validator): its body is skipped, then the program's request goes out
                  unchanged on the same connection (mh__tick gives up on a silent one) */
  SP_VERIFY,   /* managed, but nothing sent to the program yet: the answer for the object's
                  last bytes, asked first and open-ended (mh__next_range), must agree with the
                  probe, so a changing origin or a total that is not the object's is caught
                  before any byte leaks */
  SP_MANAGED,  /* the rewritten 200 went out; bytes are delivered in order */
  SP_PLAIN,    /* the rewritten 200 went out, but the origin's ranges cannot be used exactly:
                  the rest comes as one open-ended range on one connection, asked again after
                  each close, as a resuming client would (mh__go_plain) */
  SP_FINISHED, /* result decided; the session takes over */
};

/* Leg states; every change goes through mh__leg_set_state(), which logs it.
 *   CONNECTING --(writable, no socket error: mh__leg_connected)--> READY
 *   CONNECTING | READY --(failure, close, retirement, plain fallback)--> DEAD
 * DEAD is final: the leg is dropped (mh__leg_drop) or, the program's own, unwatched. Legs handed
 * to the pool (mh__leg_park) leave without a state change. */
enum mh__leg_state {
  LEG_CONNECTING, /* its handshake is in flight (a pre-connect taken from the pool too); not
                     known to the scheduler yet, so it asks for nothing */
  LEG_READY,      /* connected: registered with the scheduler (sid), sends requests, is read */
  LEG_DEAD,       /* failed or closed: no more requests, not read */
};

/* What a leg reports to the object (mh__leg_report). A leg is one connection: it connects,
 * sends its requests and reads and checks their answers; what follows from what it meets is
 * the object's to decide, in one place (mh_split_events.c, installed at the split's start). */
enum mh__leg_ev {
  MH__LEG_FAILED,         /* its connection failed, closed or cannot go on (why) */
  MH__LEG_BAD,            /* its answer cannot be used exactly (why) */
  MH__LEG_SLOW,           /* its answer trickles (policy/trickle.h) */
  MH__LEG_STALLED,        /* nothing came for its stall limit with requests outstanding */
  MH__LEG_SAID_CLOSE,     /* an answer's head says its server ends the connection after it */
  MH__LEG_PROBE_HEAD,     /* the probe's answer head is whole */
  MH__LEG_LAST_ANSWER,    /* an answer after which its server closes the connection ended */
  MH__LEG_CARRIED,        /* body bytes came on the carried leg (mh_split_adopt.c) */
  MH__LEG_INTERIM,        /* a 1xx answer on the program's connection ended (mh__probe_interim_ends) */
  MH__LEG_HEDGE_READABLE, /* the hedge's connection has bytes (mh_split_hedge.c) */
};
struct mh__leg;
typedef void (*mh__leg_ev_fn)(struct mh__leg *g, enum mh__leg_ev ev, const char *why);

struct mh__req {
  uint64_t off, len, got;
  int probe;
};

/* The answer a leg is reading (mh_split_answer.c parses it). */
struct mh__answer {
  char *hbuf; /* response head: names and values back to back */
  size_t hlen, hcap;
  size_t (*hoff)[4]; /* per header: name off/len, value off/len */
  size_t nh, hoff_cap;
  int last_was_value, head_overflow;
  int status, interim, discard, resp_started;
  int in_msg;      /* an answer has begun and not ended */
  char reason[64]; /* the answer's reason phrase (a span's 206 head repeats it) */
  size_t reason_len;
  int reason_long; /* it did not fit */
};

/* How a leg's connection ended, or will. */
struct mh__leg_end {
  int eof;        /* its server closed it (not a reset) */
  int reset;      /* its server reset it (ECONNRESET, EPIPE) */
  int cut_body;   /* the server closed inside a body that has a length */
  int said_close; /* an answer said the server ends the connection after it */
  int renewal;    /* it replaces a connection its server ended (mh__leg_renew) */
  int renewed;    /* a connection replacing it was opened */
};

/* A leg's clocks (CLOCK_MONOTONIC, us). */
struct mh__leg_times {
  uint64_t connect_us, progress_us;
  uint64_t hs_us;          /* a pre-connect taken established: its handshake time (first RTT
                              sample) */
  uint64_t rx_us;          /* its last response byte (the server's window was open then); 0 =
                              none yet */
  uint64_t asked_us;       /* its first request of the object (the probe too); 0: none */
  uint64_t progress_bytes; /* body bytes since progress_us last moved */
};

/* Its trickle window (policy/trickle.h). */
struct mh__trickle_win {
  uint64_t t0_us, bytes; /* start (0: none open) and body bytes since */
  uint64_t slot;         /* the window's slot its last byte came in ... */
  unsigned slots;        /* ... and how many of its slots brought bytes */
  int low;               /* its last judged window was POL_TRICKLE_LOW */
  uint64_t rx_us;        /* its window's last body byte (pol_trickle_reopens) */
};

/* Its receive window clamp (mh__leg_clamp, mh_rwnd.h). */
struct mh__leg_rwnd {
  int clamp;             /* TCP_WINDOW_CLAMP set on it, 0: none */
  uint64_t srtt_us;      /* the path's srtt_min the clamp was computed with */
  uint64_t t0_us, bytes; /* bytes read since t0_us (mh_rwnd_grow's interval) */
};

/* Its requests before its first rate sample (pol_admit_early_budget). */
struct mh__leg_early {
  int set;         /* budget was decided (at its first unmeasured request) */
  uint64_t budget; /* bytes it asks before its first rate sample; 0: MH__EARLY_DEPTH chunks */
  uint64_t asked;  /* bytes asked before its first rate sample */
  uint64_t last;   /* 1 + the offset of its last request within the budget (answers come in
                      order: while that one is queued, one of the budget's is out); 0: none */
};

/* One connection of the object: its requests, the answer it reads, its state. */
struct mh__leg {
  struct mh_split *sp;
  struct mh_upstream *up;
  int idx, sid, iface, primary;
  int mirror; /* 0: the program's server (or a replica of it); k: a leg of sp->own.mirrors[k -
                 1] (its target, Host, transport) */
  int srv;    /* its (interface, server) path (mh__srv_of), -1: none */
  enum mh__leg_state st;
  llhttp_t p;
  struct mh__answer ans;
  struct mh__leg_end end;
  unsigned answers;   /* complete answers read on this connection */
  uint64_t skip;      /* SP_PLAIN: leading bytes of a whole-object 200 to drop */
  int hedge;          /* the hedge: the program's own request, its answer held
                         (mh_split_hedge.c); in no slot of sp->legs until it becomes the plain
                         fetch */
  struct mh_buf hold; /* the hedge's answer as read, not parsed yet */
  int carried;        /* the program's answer relayed before the split took it over
                         (mh_split_adopt): it runs to the object's end, past what it owes,
                         until mh__carried_cut */
  struct mh__req q[SCHED_MAX_QUEUE];
  unsigned qn;
  struct mh_buf out;
  struct mh__leg_times at;
  int watching, paused, no_more;
  struct sockaddr_storage dst; /* the server address this connection goes to */
  int dns_held;                /* kept idle while its interface's resolver answers */
  int rescued;                 /* its stalled bytes were asked again elsewhere (mh__rescue) */
  struct mh__trickle_win tw;
  struct mh__leg_rwnd rw;
  struct mh__leg_early early;
};

/* The program's own Range (mh_rr_request_span): the split fetches that span only. Every offset
 * inside the split (scheduler, ledger, reassembly, leg queues, sp->total) counts from
 * span.first; only the requests (mh__leg_request), the answers' checks (mh__range_head), the
 * head (mh__probe_managed) and the sink's offsets add it. Without a Range: on = 0, first = 0. */
struct mh__span {
  int on;
  uint64_t first, last; /* asked; last is MH_RR_TO_END for "bytes=first-" */
  const char *if_range; /* the program's If-Range value (a view into sp->rq.req), or NULL */
  size_t if_range_len;
};

/* The program's request (mh__split_judge). */
struct mh__request {
  char req[MH__REQ_CAP]; /* as written */
  size_t req_len;
  struct mh_req_view rv;
  struct mh_hdr rhdrs[MH__MAX_REQ_HDRS];
  char host[256];
  struct mh__span span;
};

/* The program's own connection (legs[0] while it serves; mh__start_paths). */
struct mh__prog {
  struct sockaddr_storage dst, local;
  int rebound;                       /* the connect-time choice put it on another interface than
                                        the kernel's (own.plain_src): its answers are checked like
                                        another path's, and a request that must go out again goes
                                        the way plain would have */
  struct sockaddr_storage plain_src; /* the kernel's source address then */
  int plain_iface;                   /* its interface (rebound only) */
  int up_dead, up_eof, up_reset;
  int up_closed; /* the answer to the program's request (the probe's head) says the origin ends
                    the connection: the program sees that after the object; otherwise it gets a
                    working connection back whatever ended its own (a fault or limit our extra
                    ranges met is not the program's) */
};

/* The interfaces towards the program's server, and how they come and go (mh_split_net.c). */
struct mh__net {
  struct mh_iface ifaces[MH_MAX_IFACES];
  int nifaces, primary_iface;
  unsigned gen;                     /* the engine's net_gen this copy of the interfaces follows */
  uint32_t down;                    /* interfaces gone from the kernel's table (bit i) */
  uint32_t lost;                    /* interfaces whose last leg failed with no event (bit i) */
  uint64_t lost_us[MH_MAX_IFACES];  /* when */
  unsigned reprobes[MH_MAX_IFACES]; /* re-probes of each so far */
};

/* The owner's receive rate limit (mh_split_set_rate, mh_split.c); legs read within it. */
struct mh__rate {
  struct mh_bucket bucket; /* rate 0: no limit */
  uv_timer_t timer;        /* legs it holds read again when credit returns */
  unsigned next;           /* the leg that reads first then: every leg gets its turn */
};

/* SP_PLAIN (mh_split_plain.c). */
struct mh__plain {
  int fails; /* attempts in a row that did not pay (MH__PLAIN_WORTH) */
  int eof;   /* the last of them ended with the server's close */
  int whole; /* the origin's ranges fail plainly too: the program's own request instead, its
                first bytes skipped (mh__plain_open) */
};

/* The MHTTP_STATS line (mh_split_stats.c). */
struct mh__report {
  int done;            /* the line is written */
  int pooled;          /* legs taken from the engine's pool (mh__note_pooled) */
  char fallbacks[160]; /* what went otherwise (mh__note), for the line */
};

/* One object being split. Its parts are grouped by the file that keeps them. */
struct mh_split {
  struct mh_split_owner own; /* who started it (its kick; its pointers kept only during the start) */
  struct mh_sink *sink;      /* where the response goes (mh_split_deliver.c) */
  struct mh_split_env *env;  /* own.env: the engine's paths (pool, metrics, resolvers, policy),
                                budget, taint, read buffer */
  uv_loop_t *loop;
  const struct mh_config *cfg;
  enum mh__sp_state state;
  unsigned id;
  uint64_t t_start_us;
  struct mh__request rq;
  struct mh__prog prog;
  struct mh__net net;
  struct mh__leg *legs[MH__MAX_LEGS];
  int nlegs;
  /* the channels up, installed at the start: what the legs report to (mh__leg_report:
   * mh__leg_events), what the result stops above core (mh__finish: mh__hedge_still) */
  struct {
    mh__leg_ev_fn leg;
    void (*finish)(struct mh_split *sp);
  } on;
  struct mh__origin *og;  /* what it learned of its servers' connections (leg/mh_split_origin.c's own) */
  struct mh__hedge *hg;   /* the hedge (mh_split_hedge.c's own) */
  struct mh__rescues *rc; /* its rescues (mh_split_drive.c's own) */
  struct sched *sched;
  /* the probe's own state (mh_split_probe_state.c, private to it) */
  struct mh__probe *pr;
  uint64_t total; /* bytes the split delivers: the object's length, or the program's span's
                     (mh__span) */
  struct mh_reasm ra;
  struct mh__delivery *dl; /* delivery's own state (deliver/, private to it) */
  struct mh__rate rl;
  uv_timer_t tick;
  struct mh_split_result res;
  struct mh__plain plain;
  struct mh__report report;
  struct mh__servers *sv; /* its servers: pool keys, replicas, mirrors, pins, paths (mh_split_servers.c's own) */
  /* planning: the paths' view, the plan, each interface's counts (mh_split_plan.c's own) */
  struct mh__planning *pl;
  struct mh__have *rs; /* a resumed object's runs (mh_split_resume.c's own); NULL: none */
};

/* The admission rules' snapshot of the object (mh__admit): one entry per slot of legs[]. */
struct mh__admit {
  struct pol_admit_obj o;
  struct pol_admit_leg leg[MH__MAX_LEGS];
};

/* What a leg of mirror k (0: the program's server) connects with, is pooled under and names in
 * its Host. */
static inline const struct mh_tls *mh__tls_of(const struct mh_split *sp, int mirror) {
  return mirror ? sp->own.mirrors[mirror - 1].tls : sp->own.tls;
}
/* (its pool key: mh__xport_of, mh_split_servers.c) */
static inline const char *mh__host_of(const struct mh_split *sp, int mirror) {
  return mirror ? sp->own.mirrors[mirror - 1].host : sp->rq.host;
}

/* Microseconds from t to now; 0 when t is later (taken after now was read). */
static inline uint64_t mh__since(uint64_t now, uint64_t t) { return now > t ? now - t : 0; }

/* The owner pumps the split (from an event callback of the split's, never inside the pump). */
static inline void mh__kick(struct mh_split *sp) { sp->own.kick(sp->own.arg); }

static inline void mh__leg_report(struct mh__leg *g, enum mh__leg_ev ev, const char *why) { g->sp->on.leg(g, ev, why); }
/* g's connection failed (why: for the log): the object drops or replaces it. */
static inline void mh__leg_fail(struct mh__leg *g, const char *why) { mh__leg_report(g, MH__LEG_FAILED, why); }
/* g's answer cannot be used exactly (a wrong Content-Range or length, a status other than
 * 206, an unparsable or oversized head, an unsolicited answer). */
static inline void mh__leg_bad(struct mh__leg *g, const char *why) { mh__leg_report(g, MH__LEG_BAD, why); }

/* The functions the split's files share are declared by module, in this folder's headers,
 * lowest first: split_core.h < split_deliver.h < split_leg.h < split_legs.h < split_assign.h <
 * split_start.h < split_events.h. A file includes the headers of its own module and of those
 * below it (tests/multihttp/split_layers.py checks it). */

#endif
