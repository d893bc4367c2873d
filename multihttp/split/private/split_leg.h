/* The split's leg module (leg/): one connection, its requests and answers; what the object learned about its servers' connections. */
#ifndef MH_SPLIT_LEG_H
#define MH_SPLIT_LEG_H
#include "mh_split_int.h"

/* mh_split_leg.c */
void mh__leg_set_state(struct mh__leg *g, enum mh__leg_state st);
struct mh_upstream *mh__connect(struct mh_split *sp, int mirror, const struct sockaddr *src, const char *ifname,
                                const struct sockaddr *dst, mh_upstream_event_cb on_event, void *owner, int *err);
void mh__leg_queue(struct mh__leg *g, const struct sched_range *r, int probe);
/* Bytes read for g earlier (the hedge's held answer): its parser takes them as a read's. */
void mh__leg_feed(struct mh__leg *g, const char *buf, size_t n);
int mh__leg_request(struct mh__leg *g, const struct sched_range *r, int probe, int keep_alive);
/* 1 when the program waits for its next byte and nothing but that byte can move it, while the
 * window is full (an ordered sink; no head or deliverable run held). */
int mh__window_blocks(const struct mh_split *sp);
int mh__leg_may_read(const struct mh__leg *g);
void mh__leg_read(struct mh__leg *g);
void mh__leg_drop(struct mh__leg *g, int abort);
int mh__to_origin(const struct mh_split *sp, const struct mh__leg *g);
void mh__leg_connected(struct mh__leg *g);
void mh__leg_event(struct mh_upstream *up, int status, int events);
void mh__leg_watch(struct mh__leg *g);
struct mh__leg *mh__leg_new(struct mh_split *sp, int iface);
struct mh__leg *mh__leg_open_to(struct mh_split *sp, int i, int mirror, const struct sockaddr *dst);
/* What a leg ended by its server's keep-alive limit is renewed as (mh__leg_renews fills it). */
struct mh__renewal {
  int on, iface, mirror, origin;
  struct sockaddr_storage dst;
};
int mh__leg_renews(const struct mh__leg *g, struct mh__renewal *rn);
int mh__leg_renew(struct mh_split *sp, const struct mh__renewal *rn);
struct mh__leg *mh__leg_open(struct mh_split *sp, int i);
void mh__tick_legs(struct mh_split *sp, uint64_t now);
void mh__crawl_everywhere(struct mh_split *sp);
/* The paths (bits) whose connections to the origin all crawl (creep: pol_trickle_creeping),
 * g's aside (NULL: none). */
uint32_t mh__crawling_paths(struct mh_split *sp, const struct mh__leg *g, int creep);
/* 1 when g's queue holds the request for the object's last bytes. */
int mh__asks_end(const struct mh_split *sp, const struct mh__leg *g);
/* How long g's connection has been idle: since its last response byte (POL_IDLE_COLD: never). */
uint64_t mh__leg_idle_us(const struct mh__leg *g, uint64_t now);
int mh__leg_park(struct mh_split *sp, int i);
int mh__legs_open(const struct mh_split *sp);
/* 1 when g's trickle window crawls (pol_trickle_crawling): its bytes still come, a few a second. */
int mh__leg_crawls(struct mh__leg *g, uint64_t now);

/* mh_split_answer.c */
void mh__head_free(struct mh__leg *g);
int mh__head_views(const struct mh__leg *g, struct mh_hdr **out);
const llhttp_settings_t *mh__answer_settings(void);

/* mh_split_origin.c (sp->og, its own): what the object learned about how its servers treat its
 * connections. Made with the split (0 or -ENOMEM) and freed (NULL or freed twice: nothing). */
int mh__origin_new(struct mh_split *sp);
void mh__origin_free(struct mh_split *sp);
/* No connection is left (mh__ensure_paths): 1, a round of new ones counted, while fewer than
 * limit rounds went since an answer last came whole (mh__reconnects_clear); else 0. */
int mh__reconnect_take(struct mh_split *sp, int limit);
void mh__reconnects_clear(struct mh_split *sp);
/* g's request queued behind a finished answer got no answer: the origin drops pipelined
 * requests, and the object asks one range at a time from now on (logged once). */
void mh__pipeline_dropped(struct mh_split *sp, const struct mh__leg *g);
/* The origin closes after every answer (said on g's first one): one range per connection, a
 * fresh connection after each; mh__closes: 1 from then on. */
void mh__closing(struct mh_split *sp, const struct mh__leg *g);
int mh__closes(const struct mh_split *sp);
/* g's server ended g after g->answers + 1 answers: its keep-alive limit (the largest seen). */
void mh__ka_learn(struct mh_split *sp, const struct mh__leg *g);
/* The requests g may have outstanding, by what its server was learned to do. */
unsigned mh__leg_depth(const struct mh_split *sp, const struct mh__leg *g);
/* Paths (bits) whose origin answers trickled (mh__on_slow): no new connection to the origin
 * there; returns every such path. mh__slow_on: 1 when interface i is one. */
uint32_t mh__slow_mark(struct mh_split *sp, uint32_t paths);
int mh__slow_on(const struct mh_split *sp, int i);
/* A read left a leg's trickle window under a segment: the pump asks mh__crawl_everywhere once
 * (mh__crawl_asked: 1 once after mh__crawl_ask). */
void mh__crawl_ask(struct mh_split *sp);
int mh__crawl_asked(struct mh_split *sp);

#endif
