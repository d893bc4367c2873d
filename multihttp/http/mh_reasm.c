/* Reassembly buffer: a sorted list of byte runs in blocks, every block counted against the engine's window. */
#include "mh_reasm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MH__SEG_MIN (64 * 1024) /* block size for appended runs: few mallocs, little slack */

void mh_reasm_init(struct mh_reasm *r, uint64_t pos, struct mh_reasm_budget *budget) {
  r->pos = pos;
  r->head = NULL;
  r->held = 0;
  r->budget = budget;
  r->done = NULL;
}

static void mh__seg_free(struct mh_reasm *r, struct mh_reasm_seg *s) {
  r->held -= s->cap;
  r->budget->used -= s->cap;
  free(s);
}

void mh_reasm_free(struct mh_reasm *r) {
  while (r->head) {
    struct mh_reasm_seg *s = r->head;
    r->head = s->next;
    mh__seg_free(r, s);
  }
  while (r->done) {
    struct mh_reasm_run *d = r->done;
    r->done = d->next;
    free(d);
  }
}

/* Stores [off, off+len), which overlaps nothing held, after *link. */
static int mh__insert(struct mh_reasm *r, struct mh_reasm_seg **link, struct mh_reasm_seg *prev, uint64_t off,
                      const char *data, size_t len) {
  while (len) {
    /* append to the previous block when the run continues it and there is room */
    size_t end = prev ? prev->start + prev->len : 0;
    if (prev && prev->off + prev->len == off && end < prev->cap) {
      size_t n = prev->cap - end < len ? prev->cap - end : len;
      memcpy(prev->data + end, data, n);
      prev->len += n;
      off += n;
      data += n;
      len -= n;
      continue;
    }
    size_t cap = len > MH__SEG_MIN ? len : MH__SEG_MIN;
    /* a block never reaches past the next run: the room would never be used */
    struct mh_reasm_seg *nx = *link;
    if (nx && nx->off - off < cap)
      cap = (size_t)(nx->off - off);
    struct mh_reasm_seg *s = malloc(sizeof *s + cap);
    if (!s)
      return -ENOMEM;
    s->off = off;
    s->start = s->len = 0;
    s->cap = cap;
    s->next = nx;
    *link = s;
    r->held += cap;
    r->budget->used += cap;
    prev = s;
    link = &s->next;
  }
  return 0;
}

static int mh__put(struct mh_reasm *r, uint64_t off, const char *data, size_t len) {
  if (off < r->pos) {
    if (off + len <= r->pos)
      return 0;
    data += r->pos - off;
    len -= (size_t)(r->pos - off);
    off = r->pos;
  }
  struct mh_reasm_seg **link = &r->head, *prev = NULL;
  while (len) {
    struct mh_reasm_seg *s = *link;
    if (s && s->off + s->len <= off) { /* wholly before: move on */
      prev = s;
      link = &s->next;
      continue;
    }
    if (s && s->off <= off) { /* starts inside s: those bytes are held already */
      size_t skip = (size_t)(s->off + s->len - off);
      if (skip >= len)
        return 0;
      off += skip;
      data += skip;
      len -= skip;
      prev = s;
      link = &s->next;
      continue;
    }
    /* a gap before s (or the end): fill it */
    size_t n = s && s->off - off < len ? (size_t)(s->off - off) : len;
    int rc = mh__insert(r, link, prev, off, data, n);
    if (rc < 0)
      return rc;
    off += n;
    data += n;
    len -= n;
    /* re-walk from prev: the insert may have added blocks */
    while (*link != s) {
      prev = *link;
      link = &prev->next;
    }
  }
  return 0;
}

int mh_reasm_put(struct mh_reasm *r, uint64_t off, const char *data, size_t len) {
  if (!r->done)
    return mh__put(r, off, data, len);
  /* bytes delivered ahead of pos are never taken twice: only the pieces between done runs */
  for (const struct mh_reasm_run *d = r->done; d && len; d = d->next) {
    if (d->end <= off)
      continue;
    if (d->off >= off + len)
      break;
    if (d->off > off) {
      size_t n = (size_t)(d->off - off);
      int rc = mh__put(r, off, data, n);
      if (rc < 0)
        return rc;
      off += n;
      data += n;
      len -= n;
    }
    size_t skip = d->end - off < len ? (size_t)(d->end - off) : len;
    off += skip;
    data += skip;
    len -= skip;
  }
  return len ? mh__put(r, off, data, len) : 0;
}

uint64_t mh_reasm_filled_to(const struct mh_reasm *r) {
  uint64_t end = r->pos;
  const struct mh_reasm_seg *s = r->head;
  const struct mh_reasm_run *d = r->done;
  for (;;) { /* held and delivered runs both count: neither is asked again */
    if (s && s->off == end) {
      end = s->off + s->len;
      s = s->next;
    } else if (d && d->off == end) {
      end = d->end;
      d = d->next;
    } else {
      return end;
    }
  }
}

size_t mh_reasm_peek(const struct mh_reasm *r, const char **data) {
  const struct mh_reasm_seg *s = r->head;
  if (!s || s->off != r->pos)
    return 0;
  *data = s->data + s->start;
  return s->len;
}

/* Drops the first n bytes of the held runs (delivered), freeing emptied blocks. */
static void mh__consume(struct mh_reasm *r, size_t n) {
  while (n && r->head) {
    struct mh_reasm_seg *s = r->head;
    if (n < s->len) {
      s->start += n;
      s->off += n;
      s->len -= n;
      return;
    }
    n -= s->len;
    r->head = s->next;
    mh__seg_free(r, s);
  }
}

void mh_reasm_skip(struct mh_reasm *r, size_t n) {
  r->pos += n;
  mh__consume(r, n);
}

size_t mh_reasm_peek_any(const struct mh_reasm *r, uint64_t *off, const char **data) {
  const struct mh_reasm_seg *s = r->head;
  if (!s)
    return 0;
  *off = s->off;
  *data = s->data + s->start;
  return s->len;
}

/* Adds [off, end) to the done runs, merged with the runs it touches. 0 or -ENOMEM. */
static int mh__done_add(struct mh_reasm *r, uint64_t off, uint64_t end) {
  struct mh_reasm_run **link = &r->done;
  while (*link && (*link)->end < off)
    link = &(*link)->next;
  struct mh_reasm_run *d = *link;
  if (d && d->end == off) { /* continues d, maybe up to the next one */
    d->end = end;
    struct mh_reasm_run *nx = d->next;
    if (nx && nx->off == end) {
      d->end = nx->end;
      d->next = nx->next;
      free(nx);
    }
    return 0;
  }
  if (d && d->off == end) { /* just before d */
    d->off = off;
    return 0;
  }
  struct mh_reasm_run *nd = malloc(sizeof *nd);
  if (!nd)
    return -ENOMEM;
  *nd = (struct mh_reasm_run){.next = d, .off = off, .end = end};
  *link = nd;
  return 0;
}

/* pos moves past every done run it reached (the gap before it filled). */
static void mh__done_collapse(struct mh_reasm *r) {
  while (r->done && r->done->off <= r->pos) {
    struct mh_reasm_run *d = r->done;
    if (d->end > r->pos)
      r->pos = d->end;
    r->done = d->next;
    free(d);
  }
}

int mh_reasm_mark_done(struct mh_reasm *r, uint64_t off, uint64_t end) {
  if (end <= r->pos || end <= off)
    return 0;
  if (off <= r->pos)
    r->pos = end;
  else if (mh__done_add(r, off, end) < 0)
    return -ENOMEM;
  mh__done_collapse(r);
  return 0;
}

int mh_reasm_skip_any(struct mh_reasm *r, size_t n) {
  struct mh_reasm_seg *s = r->head;
  if (!s || !n)
    return 0;
  if (s->off == r->pos) {
    mh_reasm_skip(r, n);
  } else {
    int rc = mh__done_add(r, s->off, s->off + n);
    if (rc < 0)
      return rc;
    mh__consume(r, n);
  }
  mh__done_collapse(r); /* the gap before a done run filled */
  return 0;
}
