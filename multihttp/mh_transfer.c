/* Object transfer lifecycle and the relay strategy: request and response bytes pass verbatim over the program's own connection. */
#include "mh_transfer.h"
#include "mh_log.h"
#include "mh_session.h"

#include <stdlib.h>

static const char *const mh__xfer_state_names[] = {"REQUEST", "WAITING", "RESPONSE", "DONE"};

struct mh_transfer *mh_transfer_new(struct mh_session *s, unsigned id, const struct mh_strategy *strat) {
  struct mh_transfer *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->sess = s;
  t->id = id;
  t->strat = strat;
  t->state = MH_XFER_REQUEST;
  return t;
}

void mh_transfer_set_state(struct mh_transfer *t, enum mh_xfer_state st) {
  mh_dbg("session %u transfer %u: %s -> %s (%s)", mh_session_id(t->sess), t->id,
         mh__xfer_state_names[t->state], mh__xfer_state_names[st], t->strat->name);
  t->state = st;
}

void mh_transfer_free(struct mh_transfer *t) { free(t); }

/* Relay: the request goes to the upstream the program connected to, byte for byte. */
static int mh__relay_req_data(struct mh_transfer *t, const char *data, size_t len) {
  return mh_session_send_upstream(t->sess, data, len);
}

/* Relay: the response reaches the program byte for byte. */
static int mh__relay_resp_data(struct mh_transfer *t, const char *data, size_t len) {
  return mh_session_emit(t->sess, data, len);
}

static int mh__relay_can_splice(struct mh_transfer *t) {
  (void)t;
  return 1;
}

const struct mh_strategy mh_strategy_relay = {
    .name = "relay",
    .req_data = mh__relay_req_data,
    .resp_data = mh__relay_resp_data,
    .can_splice = mh__relay_can_splice,
};
