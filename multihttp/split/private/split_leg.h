/* The split's leg module (leg/): one connection, its requests and answers. */
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

#endif
