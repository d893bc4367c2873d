/* The split's assignment module: which leg asks which range (the plan, the drive loop, early budgets, rescue). */
#ifndef MH_SPLIT_ASSIGN_H
#define MH_SPLIT_ASSIGN_H
#include "mh_split_int.h"

/* mh_split_drive.c */
int mh__next_range(struct mh_split *sp, struct mh__leg *g, uint64_t now, uint64_t max, struct sched_range *r);
void mh__plan(struct mh_split *sp, uint64_t remaining);
void mh__rescue(struct mh_split *sp);
void mh__drive(struct mh_split *sp);
void mh__closing(struct mh_split *sp, const struct mh__leg *g);
void mh__ka_learn(struct mh_split *sp, const struct mh__leg *g);
int mh__close_reopens(const struct mh_split *sp, const struct mh__leg *g);
uint64_t mh__close_range(const struct mh_split *sp, const struct mh__leg *g);

#endif
