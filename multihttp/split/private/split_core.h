/* The split's object module: its state and outcome (core), statistics, the owner's mirrors and pins, a resumed object's runs. */
#ifndef MH_SPLIT_CORE_H
#define MH_SPLIT_CORE_H
#include "mh_split_int.h"

/* mh_split_core.c */
void mh__set_state(struct mh_split *sp, enum mh__sp_state st);
/* The object's key (mh_taint_key of its Host and request target). */
uint64_t mh__object_key(const struct mh_split *sp);
/* Remembers that the object's range answers disagreed with a whole answer (why: for the log):
 * its next download asks it whole (mh_trust_ranges_note). */
void mh__ranges_bad(struct mh_split *sp, const char *why);
void mh__restart(struct mh_split *sp, const char *note, int fresh);
void mh__finish(struct mh_split *sp, enum mh_split_end end);
void mh__verified(struct mh_split *sp);

/* mh_split_stats.c */
void mh__note(struct mh_split *sp, const char *what);
void mh__stats(struct mh_split *sp, enum mh_split_end end);
int mh__srv_of(struct mh_split *sp, int iface, int mirror, const struct sockaddr *addr);
void mh__srv_drop(struct mh_split *sp, const struct mh__leg *g, int err, const char *why);

/* mh_split_mirror.c */
void mh__pins_copy(struct mh_split *sp, const struct mh_split_owner *own);
void mh__mirrors_copy(struct mh_split *sp, const struct mh_split_owner *own);
void mh__mirror_drop(struct mh_split *sp, int mirror, const char *why);

/* mh_split_resume.c */
int mh__have_copy(struct mh_split *sp, const struct mh_split_have *h);
void mh__have_apply(struct mh_split *sp);
void mh__have_free(struct mh_split *sp);

#endif
