/* The daemon's downloads and their queue as aria2 keeps them: active, waiting (with paused ones, in position order) and stopped lists, max-concurrent-downloads, the status transitions and the notifications they raise. Pure: the engine is reached through dmn_engine_ops. Runs on the daemon's loop thread. */
#ifndef DMN_QUEUE_H
#define DMN_QUEUE_H
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

enum dmn_status { DMN_ACTIVE, DMN_WAITING, DMN_PAUSED, DMN_ERROR, DMN_COMPLETE, DMN_REMOVED };
/* aria2's word for a status: "active", "waiting", "paused", "error", "complete", "removed". */
const char *dmn_status_name(enum dmn_status s);

struct dmn_dl {
  uint64_t gid;
  enum dmn_status status;
  char *uri;               /* the first URI (owned) */
  json_t *uris;            /* every URI, strings: the first and its mirrors (owned) */
  json_t *opts;            /* the download's own options: aria2 names, string values (owned) */
  char *path;              /* the output file once chosen (owned), NULL before */
  uint64_t total;          /* the body's length, 0 while unknown (as aria2 shows it) */
  uint64_t done;           /* bytes in the file */
  double rate;             /* bytes/s */
  unsigned connections;    /* paths carrying bytes now */
  int error_code;          /* aria2's errorCode of an "error" download, else 0 */
  char *error_msg;         /* its errorMessage (owned), NULL when none */
  enum dmn_status stop_to; /* DMN_PAUSED or DMN_REMOVED while an active one is being stopped,
                              else DMN_ACTIVE */
  void *xfer;              /* the engine's transfer while active (the engine's) */
};

/* One (interface, server) path of an active download, for getServers. */
struct dmn_path {
  char iface[16];
  char addr[46];
  double rate;
  uint64_t bytes;
  uint32_t srtt_us;
  int up;
};

/* What the queue asks of the engine. start: begin d (its xfer set); 0, or -1 (errorCode 1) or
 * aria2's errorCode (> 0) with err filled when it cannot start (the download then ends in
 * "error"). stop: end d's transfer early; dmn_q_ended follows, maybe from a later loop turn.
 * refresh: update d's total, done, rate and connections. paths: up to max paths of an active d;
 * returns how many. */
struct dmn_engine_ops {
  int (*start)(void *ctx, struct dmn_dl *d, char *err, size_t errlen);
  void (*stop)(void *ctx, struct dmn_dl *d);
  void (*refresh)(void *ctx, struct dmn_dl *d);
  unsigned (*paths)(void *ctx, const struct dmn_dl *d, struct dmn_path *out, unsigned max);
  void *ctx;
  /* the rate limits (max-download-limit, max-overall-download-limit) changed: applied to the
   * active downloads at once; NULL: none */
  void (*limits)(void *ctx);
};

/* event: aria2's notification method ("aria2.onDownloadStart", ...). */
typedef void (*dmn_notify_fn)(void *arg, const char *event, uint64_t gid);

struct dmn_list {
  struct dmn_dl **v;
  size_t n, cap;
};

struct dmn_q {
  struct dmn_list active, waiting, stopped;
  unsigned max_active;    /* max-concurrent-downloads */
  unsigned max_results;   /* stopped downloads kept (aria2's max-download-result) */
  uint64_t stopped_total; /* downloads that ever stopped (numStoppedTotal) */
  struct dmn_engine_ops eng;
  dmn_notify_fn notify;
  void *notify_arg;
};

void dmn_q_init(struct dmn_q *q, const struct dmn_engine_ops *eng, dmn_notify_fn notify, void *arg);
/* Frees every download (the engine must have ended its transfers). */
void dmn_q_free(struct dmn_q *q);

/* A new waiting download of uris (a non-empty array of strings) with its options; both taken
 * (also on failure: NULL). */
struct dmn_dl *dmn_dl_new(uint64_t gid, json_t *uris, json_t *opts);
void dmn_dl_free(struct dmn_dl *d);

/* Queues d (taken) at position pos of the waiting list (< 0 or beyond: at its end), then
 * starts what max_active allows. Returns d's position in the waiting list, or -1 when it started. */
long dmn_q_add(struct dmn_q *q, struct dmn_dl *d, long pos);
/* The download of gid in any list, NULL when none. */
struct dmn_dl *dmn_q_find(const struct dmn_q *q, uint64_t gid);
/* Starts waiting downloads while fewer than max_active are active. */
void dmn_q_fill(struct dmn_q *q);

/* pause: a waiting one becomes paused now; an active one is stopped and becomes paused when
 * its transfer ended. -1 when d is neither (already paused, or stopped). */
int dmn_q_pause(struct dmn_q *q, struct dmn_dl *d);
/* A paused download becomes waiting again (and may start). -1 when d is not paused. */
int dmn_q_unpause(struct dmn_q *q, struct dmn_dl *d);
/* remove: a waiting or paused one becomes removed now, an active one once its transfer ended.
 * -1 when d already stopped. */
int dmn_q_remove(struct dmn_q *q, struct dmn_dl *d);
/* The engine's report that d's transfer ended: ok, or aria2's errorCode and a message. */
void dmn_q_ended(struct dmn_q *q, struct dmn_dl *d, int ok, int error_code, const char *msg);
/* Moves a waiting or paused d: how is "POS_SET", "POS_CUR" or "POS_END" (aria2's
 * changePosition). Returns the new position, -1 when d is not in the waiting list, -2 for a
 * bad how. */
long dmn_q_move(struct dmn_q *q, struct dmn_dl *d, long pos, const char *how);
/* Forgets a stopped d: 0, or -1 when d is not stopped. */
int dmn_q_forget(struct dmn_q *q, struct dmn_dl *d);
/* Forgets every stopped download. */
void dmn_q_purge(struct dmn_q *q);
/* The rate of each of n active downloads (bytes/s, 0: none) from aria2's
 * max-overall-download-limit (overall, 0: none) and each one's max-download-limit (lim[i], 0:
 * none): equal shares of overall, and what a download's lower own limit leaves of its share
 * goes to the others; without overall, each its own. */
void dmn_q_share(uint64_t overall, size_t n, const uint64_t *lim, uint64_t *out);

#endif
