/* The split's assignment module: which leg asks which range (the plan, the drive loop, early budgets, rescue). */
#ifndef MH_SPLIT_ASSIGN_H
#define MH_SPLIT_ASSIGN_H
#include "mh_split_int.h"

/* mh_split_drive.c */
int mh__next_range(struct mh_split *sp, struct mh__leg *g, uint64_t now, uint64_t max, struct sched_range *r);
void mh__plan(struct mh_split *sp, uint64_t remaining);
/* The object's rescues (sp->rc, its own): made with the split (0 or -ENOMEM) and freed (NULL
 * or freed twice: nothing); a stalled leg's bytes asked again elsewhere; the leg a pending one
 * waits for (its taker, connecting; NULL: none). */
int mh__rescues_new(struct mh_split *sp);
void mh__rescues_free(struct mh_split *sp);
void mh__rescue(struct mh_split *sp);
struct mh__leg *mh__rescue_waits(const struct mh_split *sp);
void mh__drive(struct mh_split *sp);
int mh__close_reopens(const struct mh_split *sp, const struct mh__leg *g);
uint64_t mh__close_range(const struct mh_split *sp, const struct mh__leg *g);

#endif
