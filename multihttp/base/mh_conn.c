/* Reference counting of the connection record shared by the shim (program threads) and the engine (loop thread). */
#include "mh_conn.h"

#include <stdlib.h>

struct mh_conn *mh_conn_new(void) {
  struct mh_conn *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  atomic_init(&c->refs, 1);
  pthread_mutex_init(&c->mu, NULL);
  c->up_fd = -1;
  c->app_fd = -1;
  return c;
}

void mh_conn_ref(struct mh_conn *c) { atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed); }

void mh_conn_unref(struct mh_conn *c) {
  if (c && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1) {
    pthread_mutex_destroy(&c->mu);
    free(c);
  }
}
