/* The split's leg-set module: which legs exist (the policy view, opening and dropping, replicas and mirrors, paths that come and go), the hedge and the plain fallback. */
#ifndef MH_SPLIT_LEGS_H
#define MH_SPLIT_LEGS_H
#include "mh_split_int.h"

/* mh_split_view.c */
void mh__build_view(struct mh_split *sp);
const struct pol_admit_obj *mh__admit(const struct mh_split *sp, struct mh__admit *a);

/* mh_split_hedge.c (sp->hg, its own) */
/* Its state made with its timer, the split's last part (0 or -ENOMEM), and freed (the timer
 * closed; NULL: nothing); mh__hedge_still: the hedge inert at the result (sp->on.finish). */
int mh__hedge_new(struct mh_split *sp);
void mh__hedge_free(struct mh_split *sp);
void mh__hedge_still(struct mh_split *sp);
void mh__hedge_arm(struct mh_split *sp);
void mh__hedge_read(struct mh__leg *g);
void mh__hedge_feed(struct mh__leg *g);
void mh__hedge_drop(struct mh_split *sp, const char *why);
struct mh__leg *mh__hedge_take(struct mh_split *sp);

/* mh_split_plain.c */
void mh__plain_whole(struct mh_split *sp, const char *why);
void mh__plain_lost(struct mh__leg *g);
void mh__go_plain(struct mh_split *sp, const char *why);

/* mh_split_legs.c */
unsigned mh__alive_count(const struct mh_split *sp, int i);
void mh__mirror_legs(struct mh_split *sp, uint64_t now);
void mh__replicas_update(struct mh_split *sp);
void mh__open_replicas(struct mh_split *sp);
void mh__open_extras(struct mh_split *sp);
void mh__program_path_leg(struct mh_split *sp);
int mh__live_legs(const struct mh_split *sp);
void mh__ensure_paths(struct mh_split *sp);
/* keep: a leg that stays whatever it carries (a pending rescue's taker: mh__rescue_waits) */
void mh__release_spares(struct mh_split *sp, const struct mh__leg *keep);
void mh__standby_open(struct mh_split *sp);
void mh__replica_legs(struct mh_split *sp, int i, int mirror, const char *host, const struct sockaddr_storage *a,
                      int n);

/* mh_split_net.c */
void mh__net_lost(struct mh_split *sp, const struct mh__leg *g, uint64_t now);
void mh__net_silent(struct mh_split *sp, int i, uint64_t now);
void mh__net_tick(struct mh_split *sp, uint64_t now);

#endif
