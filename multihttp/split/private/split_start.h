/* The split's start module: the probe and its verdict, the object's start, pump and tick, a relayed answer adopted. */
#ifndef MH_SPLIT_START_H
#define MH_SPLIT_START_H
#include "mh_split_int.h"

/* mh_split_probe.c */
void mh__verify_plain(struct mh_split *sp);
uint64_t mh__probe_size(const struct mh_split *sp);
uint64_t mh__probe_cap(const struct mh_split *sp, uint64_t n);
uint64_t mh__span_end(const struct mh_split *sp, uint64_t total);
void mh__seed_rtt(struct mh_split *sp, struct mh__leg *g);
struct mh__leg *mh__probe_move(struct mh_split *sp, struct mh__leg *g0, uint64_t probe_size);
void mh__probe_fallback(struct mh_split *sp, const char *why);
void mh__probe_head(struct mh_split *sp, struct mh__leg *g);

/* mh_split.c */
int mh__split_new(const struct mh_split_owner *own, uv_loop_t *loop, struct mh_upstream *up, const char *req,
                  size_t req_len, struct mh_sink *sink, uint64_t total, uint64_t pos, struct mh_split **out);

/* mh_split_adopt.c */
void mh__carried_cut(struct mh__leg *g);
/* Whether a relayed answer's head (len bytes, a whole head) can be split exactly from where
 * the program is: its lines into h (at most cap; *n of them) and its validators into *info.
 * NULL when it can, else why not (a static string). Pure. */
const char *mh__adopt_judge(const char *head, size_t len, uint64_t total, struct mh_hdr *h, size_t cap, size_t *n,
                            struct mh_probe_info *info);

#endif
