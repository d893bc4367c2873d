/* Private to deliver/: its state in one split (struct mh__delivery, reached as sp->dl), which the split's other modules change only through split_deliver.h. */
#ifndef MH_DELIVER_INT_H
#define MH_DELIVER_INT_H
#include "mh_buf.h"
#include "mh_digest.h"
#include "mh_split.h"

#include <stddef.h>

/* Integrity (mh_split_digest.c): the origin's digest of the whole object, from the probe. */
struct mh__integrity {
  struct mh_digest digest;         /* alg MH_DIGEST_NONE: none to check */
  const char *digest_field;        /* the field it came from (a string constant) */
  struct mh_digest_run digest_run; /* an ordered sink's bytes, as taken */
  int digest_ok;                   /* every byte hashed and matched: the last byte may go */
  int digest_bad;                  /* they did not match: the object ends as a failed transfer */
};

/* Delivery into the sink (mh_split_deliver.c). */
struct mh__delivery {
  int sink_err;              /* -errno the sink failed with (its end() gets it) */
  struct mh_buf head_out;    /* the rewritten head, before any body byte */
  size_t head_sent;          /* of which the sink took these */
  int draining;              /* delivered; answers still due on the program's connection are read
                                and dropped first (mh__drain_first) */
  enum mh_split_end give_up; /* how the program's connection ends once the bytes held in order
                                reached it (mh__deliver); 0 while trying */
  struct mh__integrity ig;
};

#endif
