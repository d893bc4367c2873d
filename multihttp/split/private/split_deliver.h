/* The split's delivery module (deliver/): bytes into the owner's sink, the origin's digest checked on the way. */
#ifndef MH_SPLIT_DELIVER_H
#define MH_SPLIT_DELIVER_H
#include "mh_split_int.h"

/* mh_split_deliver.c */
void mh__sink_writable(struct mh_sink *k, void *arg);
void mh__pass_interim(struct mh_split *sp);
int mh__deliver(struct mh_split *sp);

/* mh_split_digest.c */
void mh__digest_setup(struct mh_split *sp);
size_t mh__digest_allow(struct mh_split *sp, const char *d, size_t len);
void mh__digest_taken(struct mh_split *sp, const char *d, size_t n);

#endif
