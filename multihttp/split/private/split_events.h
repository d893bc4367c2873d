/* The split's events module: the object's handler of its legs' reports (failure, bad answer, trickle, stall, close). */
#ifndef MH_SPLIT_EVENTS_H
#define MH_SPLIT_EVENTS_H
#include "mh_split_int.h"

/* mh_split_events.c */
/* The object's handler of its legs' reports (sp->on.leg). */
void mh__leg_events(struct mh__leg *g, enum mh__leg_ev ev, const char *why);

#endif
