/* What the object learned about how its servers treat its connections: the origin drops pipelined requests, closes after every answer, trickles on some paths; a server's keep-alive limit; reconnects since an answer came whole; a crawl to check. Its state is this file's own. */
#include "split_core.h"
#include "split_leg.h"
#include "mh_log.h"

#include <errno.h>
#include <stdlib.h>

/* Made with the split (mh__origin_new), seen by this file only. */
struct mh__origin {
  int reconnects;  /* rounds of new connections since an answer last came whole */
  int no_pipeline; /* the origin dropped a pipelined request: one at a time */
  /* per server (mh__leg.mirror): the answers a connection carried before it said close (its
   * keep-alive limit, nginx keepalive_requests), 0: none seen yet */
  unsigned ka_answers[MH_SPLIT_MIRRORS + 1];
  int closes;      /* the origin closes after every answer (mh__closing) */
  uint32_t slow;   /* interfaces whose origin answers trickled (mh__slow_mark) */
  int crawl_check; /* a read asked the pump for mh__crawl_everywhere (mh__crawl_ask) */
};

int mh__origin_new(struct mh_split *sp) { return (sp->og = calloc(1, sizeof *sp->og)) ? 0 : -ENOMEM; }

void mh__origin_free(struct mh_split *sp) {
  free(sp->og);
  sp->og = NULL;
}

int mh__reconnect_take(struct mh_split *sp, int limit) {
  if (sp->og->reconnects >= limit)
    return 0;
  sp->og->reconnects++;
  return 1;
}

void mh__reconnects_clear(struct mh_split *sp) { sp->og->reconnects = 0; }

void mh__pipeline_dropped(struct mh_split *sp, const struct mh__leg *g) {
  if (sp->og->no_pipeline)
    return;
  mh_info("split %u: leg %d: no answer to a pipelined request: one request at a time", sp->id, g->idx);
  sp->og->no_pipeline = 1;
}

/* The origin ends the connection after every answer, though ours ask keep-alive: pipelined
 * requests behind an answer are lost and each connection carries one. From now on each leg
 * asks one range (mh__drive), sized by mh__close_range, and its path gets a fresh connection
 * when it closes (mh__close_reopens): the object is still split, one connection per range
 * (DESIGN.md, "Never worse than plain"). */
void mh__closing(struct mh_split *sp, const struct mh__leg *g) {
  if (sp->og->closes)
    return;
  sp->og->closes = 1;
  mh_info("split %u: leg %d (%s): the origin closes after every answer: one range per connection", sp->id, g->idx,
          sp->net.ifaces[g->iface].name);
  mh__note(sp, "closes");
}

int mh__closes(const struct mh_split *sp) { return sp->og->closes; }

/* A server that ends a keep-alive connection after its N-th answer (nginx keepalive_requests)
 * never answers what was pipelined behind that answer, and a request of ours that reaches its
 * socket after it closed makes its kernel reset the connection, losing the answer's unsent tail
 * (mh__leg_renews takes that as the limit, not a failure). g's answer said close after
 * g->answers others: its server's other connections ask no more than that many. The largest
 * count seen is the limit: a pooled connection's answers before this object are not counted. */
void mh__ka_learn(struct mh_split *sp, const struct mh__leg *g) {
  unsigned n = g->answers + 1, *ka = &sp->og->ka_answers[g->mirror];
  if (n <= *ka)
    return;
  *ka = n;
  mh_dbg("split %u: leg %d (%s): its server ends a connection after %u answers: no more asked on one", sp->id, g->idx,
         sp->net.ifaces[g->iface].name, n);
}

/* The requests g may have outstanding: one when the origin drops pipelined requests or closes
 * after every answer; no more than its server's keep-alive limit leaves (at least one, should
 * a connection outlive it). */
unsigned mh__leg_depth(const struct mh_split *sp, const struct mh__leg *g) {
  unsigned depth = sp->og->no_pipeline || sp->og->closes ? 1 : SCHED_MAX_QUEUE, ka = sp->og->ka_answers[g->mirror];
  unsigned left = ka > g->answers ? ka - g->answers : 1;
  return ka && left < depth ? left : depth;
}

uint32_t mh__slow_mark(struct mh_split *sp, uint32_t paths) { return sp->og->slow |= paths; }

int mh__slow_on(const struct mh_split *sp, int i) { return sp->og->slow >> i & 1; }

void mh__crawl_ask(struct mh_split *sp) { sp->og->crawl_check = 1; }

int mh__crawl_asked(struct mh_split *sp) {
  int asked = sp->og->crawl_check;
  sp->og->crawl_check = 0;
  return asked;
}
