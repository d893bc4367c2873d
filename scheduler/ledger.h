/* Byte-range ledger of one object: every byte is missing, assigned to one connection, or received. */
#ifndef MHTTP_SCHEDULER_LEDGER_H
#define MHTTP_SCHEDULER_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An object whose size is not known yet (before the probe's 206) is UINT64_MAX long. */
#define SCHED_LEN_UNKNOWN UINT64_MAX
/* Owner of bytes that are not assigned (missing or received). */
#define SCHED_NOBODY (-1)

enum sched_state {
  SCHED_MISSING = 0,  /* nobody is fetching these bytes: the next chunk comes from here */
  SCHED_ASSIGNED = 1, /* requested on one connection (owner), not arrived yet */
  SCHED_RECEIVED = 2, /* arrived once; never assigned again */
};

/* A half-open byte range [off, off+len). */
struct sched_range {
  uint64_t off;
  uint64_t len;
};

/* One maximal run of bytes in the same state with the same owner. */
struct sched_extent {
  uint64_t off;
  uint64_t len;
  enum sched_state state;
  int owner; /* connection id when ASSIGNED, SCHED_NOBODY otherwise */
};

/* Opaque; the extents are kept sorted, contiguous from 0 to the total, and merged, so the
 * ledger holds at most 2 * (assigned runs) + 1 extents whatever the object size. */
struct sched_ledger;

/* Creates a ledger of `total` bytes (SCHED_LEN_UNKNOWN allowed), all missing. The caller owns
 * *out and frees it with sched_ledger_free. Returns 0 or -ENOMEM/-EINVAL. */
int sched_ledger_new(uint64_t total, struct sched_ledger **out);
/* Frees the ledger; NULL is fine. */
void sched_ledger_free(struct sched_ledger *l);

/* Fixes the size once the probe's Content-Range tells it. Only an unknown size may be set, and
 * bytes past the new end must not have been received. Assigned bytes past the end are dropped.
 * Returns 0, -EALREADY (size already known), or -ERANGE. */
int sched_ledger_set_total(struct sched_ledger *l, uint64_t total);
/* The size, or SCHED_LEN_UNKNOWN. */
uint64_t sched_ledger_total(const struct sched_ledger *l);

/* Assigns to `owner` the lowest missing range, at most max_len bytes long (one contiguous run,
 * so possibly shorter), and writes it to *out. Returns 0, -ENODATA (nothing missing) or
 * -ENOMEM/-EINVAL. */
int sched_ledger_assign(struct sched_ledger *l, int owner, uint64_t max_len, struct sched_range *out);
/* Same from the other end: the last max_len bytes of the highest missing run (an object's
 * last byte is asked early to check the total every answer claims). -EINVAL also while the
 * size is unknown. */
int sched_ledger_assign_last(struct sched_ledger *l, int owner, uint64_t max_len, struct sched_range *out);
/* Marks [off, off+len) received; every byte must be assigned to `owner` (a byte that arrives
 * twice or unasked is a bug upstream). Returns 0 or -EINVAL (nothing changed) or -ENOMEM. */
int sched_ledger_receive(struct sched_ledger *l, int owner, uint64_t off, uint64_t len);
/* Marks every byte of [off, off+len) that has not arrived yet received, whoever it was
 * assigned to (or none): the bytes a re-split gave away still come on the victim's
 * connection, and whichever connection brings a byte first delivers it. Returns how many
 * bytes were new (>= 0), or -EINVAL (range outside the object; nothing changed) or -ENOMEM. */
int64_t sched_ledger_receive_any(struct sched_ledger *l, uint64_t off, uint64_t len);
/* True when every byte of [off, off+len) is assigned to `owner`. */
bool sched_ledger_owned(const struct sched_ledger *l, int owner, uint64_t off, uint64_t len);
/* Moves [off, off+len), all assigned to `from`, to `to` (tail re-split).
 * Returns 0 or -EINVAL (nothing changed) or -ENOMEM. */
int sched_ledger_transfer(struct sched_ledger *l, int from, int to, uint64_t off, uint64_t len);
/* Returns [off, off+len), all assigned to `owner`, to missing (the owner keeps fetching them,
 * but others may ask them too: sched_cede). Returns 0 or -EINVAL (nothing changed) or -ENOMEM. */
int sched_ledger_unassign(struct sched_ledger *l, int owner, uint64_t off, uint64_t len);
/* Returns every byte assigned to `owner` to missing (its connection failed); returns how many. */
uint64_t sched_ledger_release(struct sched_ledger *l, int owner);

/* Bytes in `state` (for ASSIGNED, only those of `owner` unless owner is SCHED_NOBODY). With an
 * unknown size, the open missing tail counts as UINT64_MAX - its offset. */
uint64_t sched_ledger_bytes(const struct sched_ledger *l, enum sched_state state, int owner);
/* Length of the received run starting at byte 0: what reassembly may deliver in order. */
uint64_t sched_ledger_prefix(const struct sched_ledger *l);
/* True when the size is known and every byte is received. */
bool sched_ledger_complete(const struct sched_ledger *l);
/* Number of extents, and extent i copied to *out (0 or -ERANGE): for tests and logs. */
size_t sched_ledger_count(const struct sched_ledger *l);
int sched_ledger_get(const struct sched_ledger *l, size_t i, struct sched_extent *out);
/* Checks the invariants (cover 0..total without overlap or gap, merged, owners consistent).
 * Returns 0 or -EUCLEAN. */
int sched_ledger_check(const struct sched_ledger *l);

#endif
