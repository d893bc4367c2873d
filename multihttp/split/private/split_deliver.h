/* The split's delivery module (deliver/): bytes into the owner's sink, the origin's digest checked on the way. */
#ifndef MH_SPLIT_DELIVER_H
#define MH_SPLIT_DELIVER_H
#include "mh_split_int.h"

/* mh_split_deliver.c */
/* Its state made (0 or -ENOMEM) and freed (NULL or freed twice: nothing). */
int mh__deliver_new(struct mh_split *sp);
void mh__deliver_free(struct mh_split *sp);
/* The rewritten head (len bytes) the sink gets before any body byte. 0 or -ENOMEM. */
int mh__deliver_head(struct mh_split *sp, const char *head, size_t len);
/* 1 while the rewritten head is not all with the sink. */
int mh__deliver_head_due(const struct mh_split *sp);
/* No path can bring the rest: once the bytes held in order reached the sink, the object ends
 * with end (MH_SPLIT_END_RESET or _EOF). */
void mh__deliver_give_up(struct mh_split *sp, enum mh_split_end end);
/* -errno the sink failed with, 0 while it has not. */
int mh__deliver_err(const struct mh_split *sp);
void mh__sink_writable(struct mh_sink *k, void *arg);
void mh__pass_interim(struct mh_split *sp);
int mh__deliver(struct mh_split *sp);

/* mh_split_digest.c */
void mh__digest_setup(struct mh_split *sp);
size_t mh__digest_allow(struct mh_split *sp, const char *d, size_t len);
void mh__digest_taken(struct mh_split *sp, const char *d, size_t n);

#endif
