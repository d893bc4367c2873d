/* Exchanges: one per request of a session, each served by a pluggable strategy (relay now, range splitting later). */
#ifndef MH_EXCHANGE_H
#define MH_EXCHANGE_H
#include <stddef.h>
#include <stdint.h>

#include "mh_buf.h"

struct mh_session;
struct mh_exchange;

/* Transfer states; every change goes through mh_exchange_set_state(), which logs it. */
enum mh_exchange_state {
  MH_EXCH_REQUEST,  /* the program's request is still arriving (headers or body) */
  MH_EXCH_WAITING,  /* request complete, no final response byte yet */
  MH_EXCH_RESPONSE, /* final response headers seen, body in progress */
  MH_EXCH_DONE,     /* response complete; the exchange leaves the queue */
};

/* How one request is served. Strategies receive the program's request bytes and the response
 * bytes of the session's primary upstream, and emit program-bound bytes with
 * mh_session_emit(). Loop thread only. */
struct mh_strategy {
  const char *name;
  /* Bytes of this request, in order, as the program wrote them. 0 or -errno. */
  int (*req_data)(struct mh_exchange *t, const char *data, size_t len);
  /* Response bytes from the primary upstream belonging to this exchange. 0 or -errno. */
  int (*resp_data)(struct mh_exchange *t, const char *data, size_t len);
  /* 1 when body bytes may bypass user space (splice) straight to the program. */
  int (*can_splice)(struct mh_exchange *t);
};

extern const struct mh_strategy mh_strategy_relay;
/* Hold: the request's bytes are kept (up to MH_HOLD_CAP) until it is complete, so the session
 * can decide whether to split it (mh_split) or relay it; too long a head falls back to relay. */
extern const struct mh_strategy mh_strategy_hold;
/* Split: served by the session's mh_split; the session does not read its upstream meanwhile. */
extern const struct mh_strategy mh_strategy_split;
#define MH_HOLD_CAP (16 * 1024)

struct mh_exchange {
  struct mh_exchange *next; /* session queue, oldest first (responses come in this order) */
  struct mh_session *sess;
  const struct mh_strategy *strat;
  unsigned id;
  enum mh_exchange_state state;
  int method;         /* enum llhttp_method */
  int upgrade;        /* request asked for Upgrade/CONNECT: the response may end HTTP */
  int status;         /* final status code, 0 until known */
  uint64_t body_left; /* raw body bytes still due (Content-Length framing) */
  int body_until_eof; /* close-delimited body */
  struct mh_buf hold; /* request bytes held by the hold strategy */
  /* A request the split declined for one path (mh_split_start: -ENETUNREACH) is kept while its
   * answer is relayed, with that answer's head: a path that appears may take part of the rest
   * (mh_split_adopt). adopt_req NULL: nothing kept. */
  char *adopt_req;
  size_t adopt_req_len;
  struct mh_buf adopt_head; /* the answer's head as it came, while it comes */
  unsigned adopt_gen;       /* the engine's net_gen the paths were counted at */
  uint64_t body_len;        /* the answer's Content-Length (body_left counts down from it) */
  int adopt_closes;         /* the answer says the origin ends the connection after it */
};

/* Drops what was kept for mh_split_adopt. */
void mh_exchange_adopt_forget(struct mh_exchange *t);

/* Hold strategy: sends the held bytes upstream and relays from now on. 0 or -errno. */
int mh_exchange_release(struct mh_exchange *t);

/* Allocates a exchange served by `strat`; NULL on ENOMEM. */
struct mh_exchange *mh_exchange_new(struct mh_session *s, unsigned id, const struct mh_strategy *strat);
void mh_exchange_set_state(struct mh_exchange *t, enum mh_exchange_state st);
void mh_exchange_free(struct mh_exchange *t);

#endif
