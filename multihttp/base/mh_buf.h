/* A byte buffer with a ceiling fixed at creation: pending bytes are [off, off+len) of data; memory only while bytes are pending, grown as they need; appends are checked. */
#ifndef MH_BUF_H
#define MH_BUF_H
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct mh_buf {
  char *data;
  size_t cap, off, len;
  size_t alloc; /* bytes allocated at data: grows by doubling up to cap */
};

#define MH_BUF_MIN_ALLOC 4096

/* Sets the ceiling; the memory itself is allocated by the first append (an idle connection
 * costs nothing), only as large as the pending bytes need (a 300-byte request head must not
 * take a 256 KiB ceiling's worth: 1,000 sessions would hold 256 MB of heap), and can be given
 * back with mh_buf_trim() once empty. */
static inline void mh_buf_init(struct mh_buf *b, size_t cap) {
  b->data = NULL;
  b->cap = cap;
  b->off = b->len = b->alloc = 0;
}
static inline void mh_buf_free(struct mh_buf *b) {
  free(b->data);
  b->data = NULL;
  b->off = b->len = b->alloc = 0;
}
/* Gives the memory back when nothing is pending. */
static inline void mh_buf_trim(struct mh_buf *b) {
  if (!b->len && b->data)
    mh_buf_free(b);
}
static inline char *mh_buf_head(struct mh_buf *b) { return b->data + b->off; }
static inline size_t mh_buf_room(const struct mh_buf *b) { return b->alloc - b->off - b->len; }
static inline char *mh_buf_tail(struct mh_buf *b) { return b->data + b->off + b->len; }

/* Drops n pending bytes from the front; an empty buffer rewinds so the whole capacity is free. */
static inline void mh_buf_consume(struct mh_buf *b, size_t n) {
  b->off += n;
  b->len -= n;
  if (!b->len)
    b->off = 0;
}

/* Makes the allocation hold at least `need` bytes (need <= cap): doubling, at most cap. */
static inline int mh_buf_reserve(struct mh_buf *b, size_t need) {
  if (need <= b->alloc)
    return 0;
  size_t a = b->alloc ? b->alloc : MH_BUF_MIN_ALLOC;
  while (a < need)
    a *= 2;
  if (a > b->cap)
    a = b->cap;
  char *d = realloc(b->data, a);
  if (!d)
    return -ENOMEM;
  b->data = d;
  b->alloc = a;
  return 0;
}

/* Appends n bytes; -ENOBUFS when they do not fit under the ceiling (nothing is appended). */
static inline int mh_buf_append(struct mh_buf *b, const void *p, size_t n) {
  if (n > b->cap - b->len)
    return -ENOBUFS;
  if (!n)
    return 0;
  if (n > mh_buf_room(b)) {
    if (b->off) {
      memmove(b->data, b->data + b->off, b->len);
      b->off = 0;
    }
    if (mh_buf_reserve(b, b->len + n) < 0)
      return -ENOMEM;
  }
  memcpy(mh_buf_tail(b), p, n);
  b->len += n;
  return 0;
}
#endif
