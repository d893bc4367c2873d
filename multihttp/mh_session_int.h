/* Private to the session files (mh_session*.c): the session's struct and state, and the functions they share. */
#ifndef MH_SESSION_INT_H
#define MH_SESSION_INT_H
#include "mh_buf.h"
#include "mh_session.h"
#include "mh_sink.h"
#include "mh_split.h"
#include "mh_exchange.h"
#include "mh_upstream.h"

#include <llhttp.h>
#include <uv.h>

/* Session states; every change goes through mh__sess_set_state(), which logs it. */
enum mh__sess_state {
  MH_SESS_RELAY,   /* requests and responses framed by llhttp, served by exchanges */
  MH_SESS_TUNNEL,  /* blind byte relay: after an upgrade, CONNECT, unparsable or unsolicited bytes */
  MH_SESS_CLOSING, /* handles closing; freed when both close callbacks ran */
};

/* The program's and the origin's HTTP/1.1 streams, as the session frames them (llhttp). */
struct mh__sess_http {
  llhttp_t req_p, resp_p;
  unsigned req_raw : 1;      /* request side no longer HTTP (upgrade/CONNECT/parse error) */
  unsigned req_msg_done : 1; /* parser callback flags, consumed by the feed loops */
  unsigned resp_msg_done : 1;
};

/* The splice pipe bodies go through from the origin to the program (mh_session.c). */
struct mh__sess_pipe {
  int r, w; /* created on first use */
  size_t cap, bytes;
  unsigned broken : 1; /* splice failed once: plain reads from now on */
};

/* The program's side: the engine's end of its socketpair. */
struct mh__sess_prog {
  uv_poll_t poll;
  int fd;
  int watch;
  unsigned eof : 1;  /* the program shut down writing (or closed) */
  unsigned shut : 1; /* we shut down the program's read side (EOF delivered) */
};

struct mh_session {
  struct mh_session *prev, *next;
  unsigned id;
  enum mh__sess_state state;
  struct mh_engine *eng;
  uv_loop_t *loop; /* the engine's */
  struct {
    mh_session_gone_cb cb; /* told when the session is gone */
    void *arg;
  } gone;
  struct mh_conn *conn;

  struct mh__sess_prog prog;
  struct mh_upstream *up; /* primary upstream: the program's own TCP connection */
  int up_watch;

  struct mh_buf up_out;   /* program bytes waiting for the upstream socket */
  struct mh_buf prog_out; /* response bytes waiting for the program */
  struct mh__sess_http http;
  struct mh__sess_pipe pipe;

  struct mh_exchange *exch_head, *exch_tail; /* oldest first: responses arrive in request order */
  struct mh_exchange *req_cur;               /* exchange whose request bytes are arriving */
  unsigned next_exch_id;
  struct mh_split *split;           /* the head exchange is being split (owns up meanwhile) */
  struct mh_sink sink;              /* the program's socket as the split's sink (mh_session_split.c) */
  struct mh_split_result split_res; /* how the split ended (its sink's end()), acted on after its pump */

  unsigned up_shut : 1;    /* we sent FIN upstream */
  unsigned up_wr_dead : 1; /* upstream refuses bytes (reset) */
  unsigned up_eof : 1;     /* upstream sent FIN or was reset */
  unsigned up_reset : 1;   /* ... and it was a reset: the program must see ECONNRESET */
  unsigned closes_left : 2;
};

/* Shared between the session files; each one's contract is the comment at its definition. All
 * run on the engine loop thread. */
/* mh_session.c */
void mh__prog_watch(struct mh_session *s, int pw);
void mh__up_event_cb(struct mh_upstream *up, int status, int events);
void mh__exch_pop(struct mh_session *s);
int mh__resp_feed(struct mh_session *s, const char *data, size_t len);
void mh__resp_eof(struct mh_session *s);
void mh__sess_close(struct mh_session *s, int abort_up);
void mh__sess_kick(void *s);
int mh__flush_step(struct mh_session *s);

/* mh_session_split.c */
int mh__hold_decide(struct mh_session *s, struct mh_exchange *t, int more);
int mh__sess_pump_split(struct mh_session *s);
void mh__adopt_head_seen(struct mh_exchange *t, const char *data, size_t len, int msg_done);
int mh__adopt(struct mh_session *s, struct mh_exchange *t);
void mh__sock_sink_init(struct mh_session *s);

#endif
