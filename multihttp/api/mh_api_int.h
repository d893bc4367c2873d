/* Private to the API files (mh_api*.c): the session and transfer behind include/mhttp.h's opaque handles, and the functions they share. */
#ifndef MH_API_INT_H
#define MH_API_INT_H
#include "mhttp.h"
#include "mh_bucket.h"
#include "mh_config.h"
#include "mh_sha256.h"
#include "mh_sink.h"
#include "mh_upstream.h"
#include "mh_split.h"
#include "mh_url.h"

#include <llhttp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#define MH__API_ADDRS 8  /* addresses of a host tried in turn */
#define MH__API_PATHS 16 /* paths reported per transfer: (interface, server) pairs */
#define MH__API_URL_MAX 4096
#define MH__API_REQ_MAX (16 * 1024) /* the request head (the split's own limit) */
#define MH__API_MIRRORS MH_SPLIT_MIRRORS
#define MH__API_REPLICAS MH_SPLIT_PINS

/* The resume file is saved at most this long, or this many bytes written, after the last save
 * (each save costs an fdatasync of the output): a crash refetches at most what arrived since. */
#define MH__RESUME_SAVE_US 1000000u
#define MH__RESUME_SAVE_BYTES (4u << 20)

/* Byte runs written to a file, sorted, disjoint and merged (mh_api_resume.c). */
struct mh__runs {
  struct mh_split_run *v;
  unsigned n, cap;
};

/* A resume file's content. */
struct mh__resume {
  char url[MH__API_URL_MAX];
  uint64_t total;      /* 0: unknown (no resume file: the output's size is what it has) */
  char validator[256]; /* "" when none */
  struct mh__runs runs;
};

/* Options that are a session's default and a transfer's own ("both" in mhttp.h's table), and
 * the transfer-only ones. */
struct mh__opts {
  char cacert[1024];
  int insecure;
  double connect_timeout; /* seconds, 0: the engine's default */
  double max_time;        /* seconds, 0: none */
  int max_redirs;
  char user_agent[256];
  /* transfer only */
  char *headers; /* "Name: value\r\n" lines, owned */
  size_t headers_len;
  char output[MH__API_URL_MAX];
  int cont;
  int has_checksum;
  uint8_t checksum[32];
  unsigned progress_ms;
  uint64_t limit_rate; /* bytes/s read from the network, 0: no limit (changes while it
                          runs: mh__x_rate_set) */
};

struct mhttp_session {
  unsigned flags;
  pthread_mutex_t mu;    /* running, the transfers' outcome and stats snapshot */
  pthread_cond_t cv;     /* a transfer ended; a call ran on the loop */
  struct mh_config cfg;  /* the environment's, then session options (the engine's) */
  struct mh__opts opts;  /* defaults of the transfers' "both" options */
  struct mh_engine *eng; /* made on first need (mh__api_engine); then cfg is fixed */
  uv_loop_t *loop;
  pthread_t loop_tid; /* MHTTP_SESSION_THREAD: its loop thread, once it ran */
  atomic_int have_tid;
  struct mhttp_xfer *xfers; /* every transfer not freed (loop thread, or the caller's) */
  unsigned running;         /* started and not ended (under mu) */
  atomic_int sweep_queued;  /* a cancel sweep is queued on the loop */
  char callmsg[256];        /* what the last refused call found wrong (mhttp_session_errmsg) */
};

enum mh__xstate { MH__X_NEW, MH__X_RESOLVING, MH__X_CONNECTING, MH__X_SPLIT, MH__X_RELAY, MH__X_ENDED };
enum mh__dest { MH__DEST_NONE, MH__DEST_FILE, MH__DEST_FD, MH__DEST_CB };

/* A mirror (mhttp_xfer_add_mirror) and its own lookup on the loop (mh_api_mirror.c). */
struct mh__mirror {
  struct mhttp_xfer *x;
  unsigned idx; /* 1 for the first mirror added (mhttp_path_stats.mirror) */
  struct mh_url u;
  struct mh_tls tls; /* https: its own server name and certificate */
  uv_getaddrinfo_t gai;
  int gai_busy;
  int naddrs; /* 0 until its lookup answered */
  struct sockaddr_storage addrs[MH__API_ADDRS];
  int slot; /* its entry in the transfer's split_mirrors, -1: none */
};

/* A path as the transfer reports it (its snapshot under mu). */
struct mh__xpath {
  char iface[16];
  char replica[46];
  unsigned mirror; /* 0: the URL's server; k: the k-th mirror */
  int dropped;     /* mh_split_path.dropped, once seen */
  const char *why;
  int up;
  int told_up, told_dropped;  /* what the event callback was told (PATH_UP / PATH_DOWN) */
  uint64_t bytes, rate_bytes; /* rate_bytes: at the start of the transfer's rate window */
  double rate;
  uint32_t srtt_us;
  unsigned in_flight;
};

/* The header lines of an answer the transfer reads itself (mh_api_relay.c): names and values
 * side by side in buf; lines past its size are not kept (what they say is then unknown). */
#define MH__API_HEAD_MAX (32 * 1024)
#define MH__API_HDRS 96
struct mh__head {
  char buf[MH__API_HEAD_MAX];
  size_t len;
  struct {
    uint32_t off, name_len, value_len;
  } h[MH__API_HDRS];
  unsigned n;
  int in;   /* 0: between lines, 1: in a name, 2: in a value */
  int full; /* a line did not fit: nothing more is kept */
};

/* Where the body goes (mh_api_sink.c). */
struct mh__xdest {
  enum mh__dest kind;
  int fd; /* MH__DEST_FD: the caller's; MH__DEST_FILE: ours, -1 until opened */
  mhttp_write_cb cb;
  int cb_ordered;
  void *cb_arg;
  struct mh_sink sink;      /* the destination's sink, by its kind: what the split delivers into
                               and the transfer's own reading writes through */
  struct mh_sink_file file; /* MH__DEST_FILE: the pwrite at offsets */
  int head_seen;            /* EV_START went out */
  int full;                 /* the destination took fewer bytes than offered */
  int paused;
  uv_poll_t fd_poll; /* MH__DEST_FD that said EAGAIN: writable again */
  int fd_poll_on, fd_poll_init;
  struct mh_sha256 sha; /* ordered destinations: the body as it goes out */
};

/* The transfer's own connection: its lookup and connect (mh_api_xfer.c). */
struct mh__xconn {
  uv_getaddrinfo_t gai;
  int gai_busy;
  struct sockaddr_storage addrs[MH__API_ADDRS];
  int naddrs, next_addr;
  int last_err;  /* -errno of the last failed connect */
  int timed_out; /* a connect timed out */
  struct mh_upstream *up;
  struct mh_tls tls; /* https: the transport of up and of every leg (u.host's name) */
  char iface[16];    /* the interface of up */
  uint64_t t_connect_us;
};

/* Mirrors and pinned replicas (mh_api_mirror.c). */
struct mh__xmirrors {
  struct mh__mirror *mirrors[MH__API_MIRRORS];
  unsigned nmirrors;
  unsigned mgai_busy;                                    /* mirror lookups in flight */
  struct mh_split_mirror split_mirrors[MH__API_MIRRORS]; /* what the split reads */
  struct sockaddr_storage pins[MH__API_REPLICAS];
  char pin_iface[MH__API_REPLICAS][16]; /* "": every interface */
  unsigned npins;
};

/* The request head the transfer sends. */
struct mh__xreq {
  char req[MH__API_REQ_MAX];
  size_t req_len, req_sent;
};

/* Relay: the transfer reads the answer itself (mh_api_relay.c). */
struct mh__xrelay {
  llhttp_t parser;
  int status;
  struct mh__head head; /* the answer's header lines as they arrive */
  int hdr_state;        /* in the value of: 0 a field not read, 3 a Content-Length, 4
                           Repr-Digest, 5 Digest, 6 Content-Digest */
  char hname[16];       /* the current header name while it may still be one we read */
  size_t hname_len;     /* its bytes; past sizeof hname: not one we read */
  uint64_t cl_first;    /* the first Content-Length, while a second one is parsed */
  int cl_again;         /* a second Content-Length is being parsed (curl's leniency) */
  int cl_differs;       /* ... and its value was another: the answer is refused */
  /* the origin's digest fields of the answer read (Repr-Digest, Digest, Content-Digest: for a
   * 200 each names its whole body) and the running hash of its body */
  char dval[512]; /* the current field's value; past its size: not read */
  size_t dval_len;
  struct mh_digest rdig[3];
  int rdig_bad; /* malformed members skipped */
  struct mh_digest_run rrun;
  const char *rfield; /* the field checked; NULL: none */
  int redirect;       /* a 3xx with Location was read */
  char location[MH__API_URL_MAX];
  size_t location_len;
  uint64_t range_from; /* continue: the answer's first byte asked (Range: bytes=F-), 0: none */
  int done_msg;        /* the answer ended (on_message_complete) */
  char *hold;          /* body bytes the destination has not taken yet */
  size_t hold_len, hold_off;
  uint64_t hold_at;    /* their offset */
  uint64_t relay_off;  /* the body's next offset */
  uint64_t relay_base; /* where the answer's body began (a resumed range's first byte) */
  int redirects;
  int adopt_ok;       /* the split declined for one path: a path that appears may take part of
                         the answer read (mh__x_adopt) */
  unsigned adopt_gen; /* the engine's net_gen the paths were counted at */
};

/* A split object written to a file, checked against the origin's digest. */
struct mh__xcheck {
  struct mh_digest odigest;  /* the origin's digest */
  const char *odigest_field; /* its field's name */
  int refetched;             /* the file did not match it: fetched again on one path */
};

/* Outcome and statistics: written on the loop under s->mu, read by any thread. */
struct mh__xreport {
  mhttp_code result;       /* MHTTP_E_BUSY until it ended */
  mhttp_code pending_code; /* the first failure seen (MHTTP_OK: none), acted on by settle */
  char errmsg[256];
  char callmsg[256]; /* what the last refused call on it found wrong (caller's thread) */
  int http_status;
  uint64_t total, done, fetched;
  double rate;
  uint64_t rate_t_us, rate_done;
  int split_used;
  struct mh__xpath paths[MH__API_PATHS];
  unsigned npaths;
  uint64_t last_prog_done, last_prog_us;
};

/* Resume (MH__DEST_FILE; mh_api_resume.c). */
struct mh__xresume {
  struct mh__runs written; /* what the output holds (resumed runs included) */
  int written_dirty;
  uint64_t saved_us;
  char validator[256];    /* the split's If-Range value: "" until known (no resume file) */
  int resuming;           /* continue=1 found something to continue */
  struct mh__resume have; /* ... what */
  uint64_t resumed;       /* bytes the split did not fetch again (or before range_from) */
  int restarted;          /* continue found bytes the origin no longer serves: fetched whole */
  uint64_t unsaved;       /* bytes written since the resume file was last saved */
  unsigned save_epoch;    /* saves asked (and removals): only the latest is written (under s->mu) */
  int saving;             /* a save runs on libuv's thread pool (mh__resume_save_async) */
};

struct mhttp_xfer {
  mhttp_session *s;
  struct mhttp_xfer *next;
  struct mh__opts o;
  char url[MH__API_URL_MAX];  /* the URL fetched now (a redirect changes it) */
  char url0[MH__API_URL_MAX]; /* the URL as given: what the resume file names */
  struct mh_url u;            /* the URL fetched now (a redirect changes it) */
  struct mh_url u0;           /* the URL as given: the origin its credentials belong to */
  int started;
  atomic_int cancel_req;
  int freed;   /* mhttp_xfer_free ran: the memory goes when its handles closed */
  int closing; /* handles (timer, poll, upstream, lookup) not yet closed */
  enum mh__xstate st;
  mhttp_event_cb ev_cb;
  void *ev_arg;
  struct mh__xdest dst;
  uv_timer_t timer;    /* progress, timeouts */
  struct mh_bucket rl; /* limit-rate on the transfer's own reads (the split has its own) */
  uv_timer_t rl_timer; /* reading again when the limit has credit */
  struct mh__xconn conn;
  struct mh__xmirrors mir;
  struct mh_split *sp;
  struct mh_split_result split_res; /* how the split ended (the sink's end()), acted on after
                                       its pump */
  uint64_t t_start_us, t_end_us;
  struct mh__xreq rq;
  struct mh__xrelay rd;
  struct mh__xcheck chk;
  struct mh__xreport rep;
  struct mh__xresume rs;
};

/* mh_api.c */
/* A call refused: what is wrong kept for mhttp_session_errmsg / mhttp_xfer_errmsg; returns code. */
mhttp_code mh__s_refuse(mhttp_session *s, mhttp_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
mhttp_code mh__x_refuse(struct mhttp_xfer *x, mhttp_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
mhttp_code mh__api_engine(mhttp_session *s);
int mh__api_on_loop(mhttp_session *s);
mhttp_code mh__api_sync(mhttp_session *s, void (*fn)(void *), void *arg);
void mh__api_bypass(int on);
void mh__api_ended(mhttp_session *s);
int mh__api_user_begin(void);
void mh__api_user_end(int depth);

/* mh_api_opt.c */
void mh__opts_defaults(struct mh__opts *o);
mhttp_code mh__opts_copy(struct mh__opts *dst, const struct mh__opts *src);
void mh__opts_free(struct mh__opts *o);
/* MHTTP_OK, or the code with what is wrong in why */
mhttp_code mh__opt_session(mhttp_session *s, const char *name, const char *value, char *why, size_t cap);
mhttp_code mh__opt_xfer(struct mh__opts *o, const char *name, const char *value, char *why, size_t cap);
/* A speed as curl's --limit-rate takes it: bytes/s, a decimal, optionally with k/K, m/M or g/G
 * (powers of 1024). 0 or -1. */
int mh__speed(const char *v, uint64_t *out);

/* mh_api_xfer.c (loop thread) */
/* The one place a transfer changes state (logged, as every state machine's change is). */
void mh__x_set_state(struct mhttp_xfer *x, enum mh__xstate st);
void mh__x_begin(struct mhttp_xfer *x);
void mh__x_fail(struct mhttp_xfer *x, mhttp_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void mh__x_settle(struct mhttp_xfer *x);
void mh__x_cancel(struct mhttp_xfer *x);
void mh__x_release(struct mhttp_xfer *x);
void mh__x_done(struct mhttp_xfer *x);
void mh__x_resolve(struct mhttp_xfer *x);
void mh__x_drop_up(struct mhttp_xfer *x, int abort);
void mh__x_event(struct mhttp_xfer *x, mhttp_event_type type, const char *iface, const char *replica);
void mh__x_path_event(struct mhttp_xfer *x, int up, const struct mh__xpath *p, mhttp_code code, const char *message);
void mh__x_closed(struct mhttp_xfer *x);

/* mh_api_relay.c (loop thread) */
void mh__x_relay_start(struct mhttp_xfer *x, const char *raw, size_t raw_len, int resend, int eof);
void mh__x_relay_event(struct mh_upstream *up, int status, int events);
int mh__x_relay_flush(struct mhttp_xfer *x);
/* mh_api_xfer.c: the split's owner record for x (peer: storage for its server's address). */
void mh__x_owner(struct mhttp_xfer *x, struct mh_split_owner *own, struct sockaddr_storage *peer);
/* The option limit-rate changes (or is first applied, at begin) on the loop: the split's and
 * the transfer's own reads follow at once. */
void mh__x_rate_set(struct mhttp_xfer *x, uint64_t rate);

/* mh_api_sink.c (loop thread) */
void mh__x_sink_init(struct mhttp_xfer *x);
ssize_t mh__x_put(struct mhttp_xfer *x, uint64_t off, const char *p, size_t len);
int mh__x_head(struct mhttp_xfer *x, int status, uint64_t total);
void mh__x_writable(struct mhttp_xfer *x);
mhttp_code mh__x_verify(struct mhttp_xfer *x);
int mh__x_file_check(struct mhttp_xfer *x, const struct mh_digest *want);
void mh__x_digest_fail(struct mhttp_xfer *x, int rc);

/* mh_api_resume.c */
int mh__runs_add(struct mh__runs *r, uint64_t off, uint64_t len);
void mh__runs_free(struct mh__runs *r);
char *mh__resume_format(const struct mh__resume *rs, size_t *len);
int mh__resume_parse(const char *text, size_t len, struct mh__resume *rs);
int mh__resume_load(struct mhttp_xfer *x);
/* Saves the resume file now (before the first byte, at the end), or on libuv's thread pool
 * (the periodic save, at most one at a time). Loop thread. */
void mh__resume_save(struct mhttp_xfer *x);
void mh__resume_save_async(struct mhttp_xfer *x);
void mh__resume_done(struct mhttp_xfer *x);
/* A continued transfer read by itself asks from here: the end of the run at byte 0. */
uint64_t mh__resume_from(const struct mhttp_xfer *x);

/* mh_api_mirror.c (loop thread, except the public calls) */
void mh__x_mirrors_resolve(struct mhttp_xfer *x);
void mh__x_mirrors_stop(struct mhttp_xfer *x);
void mh__x_mirrors_free(struct mhttp_xfer *x);
unsigned mh__x_split_mirrors(struct mhttp_xfer *x);
unsigned mh__x_split_pins(const struct mhttp_xfer *x, struct mh_split_pin *out);

/* mh_api_stats.c */
void mh__x_tick_stats(struct mhttp_xfer *x, uint64_t now_us);

#endif
