/* An exchange's lifecycle and the relay strategy: request and response bytes pass verbatim over the program's own connection. */
#include "mh_exchange.h"
#include "mh_log.h"
#include "mh_session.h"

#include <errno.h>
#include <stdlib.h>

static const char *const mh__exch_state_names[] = {"REQUEST", "WAITING", "RESPONSE", "DONE"};

struct mh_exchange *mh_exchange_new(struct mh_session *s, unsigned id, const struct mh_strategy *strat) {
  struct mh_exchange *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->sess = s;
  t->id = id;
  t->strat = strat;
  t->state = MH_EXCH_REQUEST;
  mh_buf_init(&t->hold, MH_HOLD_CAP);
  mh_buf_init(&t->adopt_head, MH_HOLD_CAP);
  return t;
}

void mh_exchange_set_state(struct mh_exchange *t, enum mh_exchange_state st) {
  mh_dbg("session %u exchange %u: %s -> %s (%s)", mh_session_id(t->sess), t->id, mh__exch_state_names[t->state],
         mh__exch_state_names[st], t->strat->name);
  t->state = st;
}

void mh_exchange_adopt_forget(struct mh_exchange *t) {
  free(t->adopt_req);
  t->adopt_req = NULL;
  mh_buf_free(&t->adopt_head);
}

void mh_exchange_free(struct mh_exchange *t) {
  mh_buf_free(&t->hold);
  mh_exchange_adopt_forget(t);
  free(t);
}

int mh_exchange_release(struct mh_exchange *t) {
  t->strat = &mh_strategy_relay;
  int rc = t->hold.len ? mh_session_send_upstream(t->sess, mh_buf_head(&t->hold), t->hold.len) : 0;
  mh_buf_free(&t->hold);
  return rc;
}

/* Relay: the request goes to the upstream the program connected to, byte for byte. */
static int mh__relay_req_data(struct mh_exchange *t, const char *data, size_t len) {
  return mh_session_send_upstream(t->sess, data, len);
}

/* Relay: the response reaches the program byte for byte. */
static int mh__relay_resp_data(struct mh_exchange *t, const char *data, size_t len) {
  return mh_session_emit(t->sess, data, len);
}

static int mh__relay_can_splice(struct mh_exchange *t) {
  (void)t;
  return 1;
}

const struct mh_strategy mh_strategy_relay = {
    .name = "relay",
    .req_data = mh__relay_req_data,
    .resp_data = mh__relay_resp_data,
    .can_splice = mh__relay_can_splice,
};

/* Hold: keep the request until it is complete (the session then decides). */
static int mh__hold_req_data(struct mh_exchange *t, const char *data, size_t len) {
  if (mh_buf_append(&t->hold, data, len) == 0)
    return 0;
  int rc = mh_exchange_release(t); /* too long for a head we would rewrite: relay */
  return rc < 0 ? rc : mh_session_send_upstream(t->sess, data, len);
}

const struct mh_strategy mh_strategy_hold = {
    .name = "hold",
    .req_data = mh__hold_req_data,
    .resp_data = mh__relay_resp_data, /* an early answer (before the request ended) is relayed */
    .can_splice = mh__relay_can_splice,
};

static int mh__split_req_data(struct mh_exchange *t, const char *data, size_t len) {
  (void)t, (void)data, (void)len;
  return -EPROTO; /* the request was complete when the split started */
}

static int mh__split_can_splice(struct mh_exchange *t) {
  (void)t;
  return 0;
}

const struct mh_strategy mh_strategy_split = {
    .name = "split",
    .req_data = mh__split_req_data,
    .resp_data = mh__relay_resp_data,
    .can_splice = mh__split_can_splice,
};
