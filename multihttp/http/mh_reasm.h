/* Reassembly of one object's body: out-of-order byte runs held until the bytes before them arrived, under its engine's memory budget. */
#ifndef MH_REASM_H
#define MH_REASM_H
#include <stddef.h>
#include <stdint.h>

/* One run of bytes [off, off+len) at data+start in a block of cap bytes. */
struct mh_reasm_seg {
  struct mh_reasm_seg *next;
  uint64_t off;
  size_t start, len, cap;
  char data[];
};

/* An engine's budget: bytes held by all its objects, and the ceiling (MHTTP_WINDOW). */
struct mh_reasm_budget {
  size_t used, max;
};

/* A run [off, end) delivered ahead of pos (a sink that takes bytes in any order). */
struct mh_reasm_run {
  struct mh_reasm_run *next;
  uint64_t off, end;
};

/* Loop thread only (the budget is a plain counter shared by every object of one engine).
 * pos is the next byte the program gets (for a sink that takes any order: the first byte not
 * yet delivered); segments are sorted, never overlap, and never hold bytes below pos or in a
 * done run. */
struct mh_reasm {
  uint64_t pos;
  struct mh_reasm_seg *head;
  size_t held; /* bytes allocated by this object's segments */
  struct mh_reasm_budget *budget;
  struct mh_reasm_run *done; /* sorted, disjoint, not touching pos; NULL for in-order delivery */
};

/* budget: where r's bytes are counted; must outlive r. */
void mh_reasm_init(struct mh_reasm *r, uint64_t pos, struct mh_reasm_budget *budget);
/* Frees every segment and gives their bytes back to the budget. */
void mh_reasm_free(struct mh_reasm *r);
/* Stores a copy of [off, off+len); bytes below pos or already held are dropped (never
 * replaced: the first copy of a byte wins). Contiguous runs share blocks. The budget may be
 * exceeded by one call (the caller stops reading when it is full). 0 or -ENOMEM. */
int mh_reasm_put(struct mh_reasm *r, uint64_t off, const char *data, size_t len);
/* The end of the bytes held or delivered without a gap from pos: the first byte still to come. */
uint64_t mh_reasm_filled_to(const struct mh_reasm *r);
/* Bytes deliverable now: the run starting exactly at pos (0 when there is a gap). */
size_t mh_reasm_peek(const struct mh_reasm *r, const char **data);
/* Marks n peeked bytes delivered (pos += n), freeing emptied blocks. */
void mh_reasm_skip(struct mh_reasm *r, size_t n);
/* Delivery in any order (a file sink): the lowest run held, wherever it starts (*off), 0 when
 * nothing is held. */
size_t mh_reasm_peek_any(const struct mh_reasm *r, uint64_t *off, const char **data);
/* Marks the first n bytes of the run mh_reasm_peek_any gave delivered: they are remembered so a
 * later copy of them is dropped, and pos moves past every byte delivered without a gap. 0 or
 * -ENOMEM (nothing changed). */
int mh_reasm_skip_any(struct mh_reasm *r, size_t n);
/* Marks [off, end) delivered before anything was held (a resumed object: the destination has
 * those bytes already), for a sink that takes any order: pos moves past it when it starts at
 * pos, else it is remembered as delivered ahead. Runs must come sorted and disjoint, before any
 * mh_reasm_put. 0 or -ENOMEM. */
int mh_reasm_mark_done(struct mh_reasm *r, uint64_t off, uint64_t end);
/* 1 when r's budget has room for another read of `more` bytes. */
static inline int mh_reasm_room(const struct mh_reasm *r, size_t more) {
  return r->budget->used + more <= r->budget->max;
}

#endif
