/* The daemon's bridge to libmhttp: one embedded session (mhttp_get_fd / mhttp_perform) driven by the daemon's libuv loop; each active download is one transfer to a file, its events turned into the queue's transitions. Loop thread only. */
#ifndef DMN_ENGINE_H
#define DMN_ENGINE_H
#include <jansson.h>
#include <uv.h>

#include "mhttp.h"
#include "queue.h"

struct dmn_engine {
  uv_loop_t *loop;
  mhttp_session *s;
  uv_poll_t poll;
  uv_timer_t timer;
  struct dmn_q *q;      /* set before the first start */
  const json_t *global; /* the global options (dir, continue, user-agent, ...) */
  void **dead;          /* ended transfers, freed once mhttp_perform returned */
  size_t ndead, cap;
  int kicked; /* a transfer started: run the session again at once */
};

/* Makes the session and watches its descriptor on loop. 0, or -1 with err. */
int dmn_engine_init(struct dmn_engine *e, uv_loop_t *loop, const json_t *global, char *err, size_t errlen);
/* The queue's view of the engine (queue.h). */
struct dmn_engine_ops dmn_engine_ops(struct dmn_engine *e);
/* Frees the session (every transfer cancelled, nothing reported to the queue) and closes the
 * loop handles. */
void dmn_engine_close(struct dmn_engine *e);

#endif
