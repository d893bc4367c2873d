/* Byte-range ledger: a sorted, merged array of extents covering the object exactly once. */
#include "scheduler/ledger.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sched_ledger {
  uint64_t total;         /* SCHED_LEN_UNKNOWN until the probe answers */
  struct sched_extent *v; /* extents, sorted by offset, contiguous, merged */
  size_t n;
  size_t cap;
};

static uint64_t sched__end(const struct sched_extent *e) { return e->off + e->len; }

static bool sched__same(const struct sched_extent *a, const struct sched_extent *b) {
  return a->state == b->state && a->owner == b->owner;
}

/* Extent i joins its neighbours that have its state and owner, so the ledger stays minimal. */
static void sched__merge_at(struct sched_ledger *l, size_t i) {
  if (i + 1 < l->n && sched__same(&l->v[i], &l->v[i + 1])) {
    l->v[i].len += l->v[i + 1].len;
    memmove(&l->v[i + 1], &l->v[i + 2], (l->n - i - 2) * sizeof(l->v[0]));
    l->n--;
  }
  if (i > 0 && sched__same(&l->v[i - 1], &l->v[i])) {
    l->v[i - 1].len += l->v[i].len;
    memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(l->v[0]));
    l->n--;
  }
}

/* Two more slots than now is all one set_range can need (splitting both ends). */
static int sched__reserve(struct sched_ledger *l) {
  if (l->n + 2 <= l->cap)
    return 0;
  size_t cap = l->cap ? l->cap * 2 : 8;
  struct sched_extent *v = realloc(l->v, cap * sizeof(*v));
  if (!v)
    return -ENOMEM;
  l->v = v;
  l->cap = cap;
  return 0;
}

/* Index of the extent containing byte x (x < total); binary search over sorted offsets. */
static size_t sched__find(const struct sched_ledger *l, uint64_t x) {
  size_t lo = 0, hi = l->n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (l->v[mid].off <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* Makes x an extent boundary; returns the index of the extent starting at x (n if x is the end). */
static size_t sched__split(struct sched_ledger *l, uint64_t x) {
  if (l->n == 0 || x >= sched__end(&l->v[l->n - 1]))
    return l->n;
  size_t i = sched__find(l, x);
  if (l->v[i].off == x)
    return i;
  memmove(&l->v[i + 2], &l->v[i + 1], (l->n - i - 1) * sizeof(l->v[0]));
  l->v[i + 1] = l->v[i];
  l->v[i + 1].off = x;
  l->v[i + 1].len = sched__end(&l->v[i]) - x;
  l->v[i].len = x - l->v[i].off;
  l->n++;
  return i + 1;
}

/* True when every byte of [off, off+len) is in `state` (and owned by `owner` if assigned). */
static bool sched__covered(const struct sched_ledger *l, uint64_t off, uint64_t len, enum sched_state state,
                           int owner) {
  if (len == 0 || off > l->total || len > l->total - off)
    return false;
  for (size_t i = sched__find(l, off); i < l->n && l->v[i].off < off + len; i++)
    if (l->v[i].state != state || l->v[i].owner != owner)
      return false;
  return true;
}

/* Sets [off, off+len) (inside the object) to one state and merges it with its neighbours. */
static int sched__set(struct sched_ledger *l, uint64_t off, uint64_t len, enum sched_state state, int owner) {
  int rc = sched__reserve(l);
  if (rc)
    return rc;
  sched__split(l, off + len);
  size_t i = sched__split(l, off);
  size_t j = sched__split(l, off + len); /* index moved if the first split was before it */
  l->v[i] = (struct sched_extent){.off = off, .len = len, .state = state, .owner = owner};
  memmove(&l->v[i + 1], &l->v[j], (l->n - j) * sizeof(l->v[0]));
  l->n -= j - i - 1;
  sched__merge_at(l, i);
  return 0;
}

int sched_ledger_new(uint64_t total, struct sched_ledger **out) {
  if (!out)
    return -EINVAL;
  struct sched_ledger *l = calloc(1, sizeof(*l));
  if (!l)
    return -ENOMEM;
  l->total = total;
  if (total > 0) {
    if (sched__reserve(l)) {
      free(l);
      return -ENOMEM;
    }
    l->v[0] = (struct sched_extent){.off = 0, .len = total, .state = SCHED_MISSING, .owner = SCHED_NOBODY};
    l->n = 1;
  }
  *out = l;
  return 0;
}

void sched_ledger_free(struct sched_ledger *l) {
  if (!l)
    return;
  free(l->v);
  free(l);
}

int sched_ledger_set_total(struct sched_ledger *l, uint64_t total) {
  if (l->total != SCHED_LEN_UNKNOWN)
    return -EALREADY;
  if (total == SCHED_LEN_UNKNOWN)
    return -ERANGE;
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i].state == SCHED_RECEIVED && sched__end(&l->v[i]) > total)
      return -ERANGE;
  /* Cut at the new end: everything past it (missing or assigned) simply does not exist. */
  size_t keep = 0;
  while (keep < l->n && l->v[keep].off < total) {
    if (sched__end(&l->v[keep]) > total)
      l->v[keep].len = total - l->v[keep].off;
    keep++;
  }
  l->n = keep;
  l->total = total;
  return 0;
}

uint64_t sched_ledger_total(const struct sched_ledger *l) { return l->total; }

int sched_ledger_assign(struct sched_ledger *l, int owner, uint64_t max_len, struct sched_range *out) {
  if (owner < 0 || max_len == 0 || !out)
    return -EINVAL;
  for (size_t i = 0; i < l->n; i++) {
    if (l->v[i].state != SCHED_MISSING)
      continue;
    struct sched_range r = {.off = l->v[i].off, .len = l->v[i].len < max_len ? l->v[i].len : max_len};
    int rc = sched__set(l, r.off, r.len, SCHED_ASSIGNED, owner);
    if (rc)
      return rc;
    *out = r;
    return 0;
  }
  return -ENODATA;
}

int sched_ledger_assign_last(struct sched_ledger *l, int owner, uint64_t max_len, struct sched_range *out) {
  if (owner < 0 || max_len == 0 || !out || l->total == SCHED_LEN_UNKNOWN)
    return -EINVAL;
  for (size_t i = l->n; i-- > 0;) {
    const struct sched_extent *e = &l->v[i];
    if (e->state != SCHED_MISSING)
      continue;
    uint64_t len = e->len < max_len ? e->len : max_len;
    struct sched_range r = {.off = sched__end(e) - len, .len = len};
    int rc = sched__set(l, r.off, r.len, SCHED_ASSIGNED, owner);
    if (rc)
      return rc;
    *out = r;
    return 0;
  }
  return -ENODATA;
}

int sched_ledger_receive(struct sched_ledger *l, int owner, uint64_t off, uint64_t len) {
  if (owner < 0 || !sched__covered(l, off, len, SCHED_ASSIGNED, owner))
    return -EINVAL;
  return sched__set(l, off, len, SCHED_RECEIVED, SCHED_NOBODY);
}

int64_t sched_ledger_receive_any(struct sched_ledger *l, uint64_t off, uint64_t len) {
  if (len == 0 || off > l->total || len > l->total - off)
    return -EINVAL;
  uint64_t end = off + len, x = off;
  int64_t fresh = 0;
  while (x < end) {
    const struct sched_extent *e = &l->v[sched__find(l, x)];
    uint64_t to = sched__end(e) < end ? sched__end(e) : end;
    if (e->state != SCHED_RECEIVED) {
      int rc = sched__set(l, x, to - x, SCHED_RECEIVED, SCHED_NOBODY);
      if (rc)
        return rc; /* bytes before x stay received: they did arrive */
      fresh += (int64_t)(to - x);
    }
    x = to;
  }
  return fresh;
}

bool sched_ledger_owned(const struct sched_ledger *l, int owner, uint64_t off, uint64_t len) {
  return owner >= 0 && sched__covered(l, off, len, SCHED_ASSIGNED, owner);
}

int sched_ledger_transfer(struct sched_ledger *l, int from, int to, uint64_t off, uint64_t len) {
  if (from < 0 || to < 0 || !sched__covered(l, off, len, SCHED_ASSIGNED, from))
    return -EINVAL;
  return sched__set(l, off, len, SCHED_ASSIGNED, to);
}

int sched_ledger_unassign(struct sched_ledger *l, int owner, uint64_t off, uint64_t len) {
  if (owner < 0 || !sched__covered(l, off, len, SCHED_ASSIGNED, owner))
    return -EINVAL;
  return sched__set(l, off, len, SCHED_MISSING, SCHED_NOBODY);
}

uint64_t sched_ledger_release(struct sched_ledger *l, int owner) {
  uint64_t n = 0;
  /* Each pass frees one run; re-scan because merging shifts indices. Runs are few. */
  for (;;) {
    size_t i = 0;
    while (i < l->n && !(l->v[i].state == SCHED_ASSIGNED && l->v[i].owner == owner))
      i++;
    if (i == l->n)
      return n;
    n += l->v[i].len;
    /* Relabel the whole extent in place (needs no new slot, so release cannot fail), then
     * merge it with missing neighbours. */
    l->v[i].state = SCHED_MISSING;
    l->v[i].owner = SCHED_NOBODY;
    sched__merge_at(l, i);
  }
}

uint64_t sched_ledger_bytes(const struct sched_ledger *l, enum sched_state state, int owner) {
  uint64_t n = 0;
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i].state == state && (state != SCHED_ASSIGNED || owner == SCHED_NOBODY || l->v[i].owner == owner))
      n += l->v[i].len;
  return n;
}

uint64_t sched_ledger_prefix(const struct sched_ledger *l) {
  return l->n > 0 && l->v[0].state == SCHED_RECEIVED ? l->v[0].len : 0;
}

bool sched_ledger_complete(const struct sched_ledger *l) {
  return l->total != SCHED_LEN_UNKNOWN && sched_ledger_prefix(l) == l->total;
}

size_t sched_ledger_count(const struct sched_ledger *l) { return l->n; }

int sched_ledger_get(const struct sched_ledger *l, size_t i, struct sched_extent *out) {
  if (i >= l->n)
    return -ERANGE;
  *out = l->v[i];
  return 0;
}

int sched_ledger_check(const struct sched_ledger *l) {
  uint64_t at = 0;
  for (size_t i = 0; i < l->n; i++) {
    const struct sched_extent *e = &l->v[i];
    if (e->off != at || e->len == 0 || e->len > l->total - e->off)
      return -EUCLEAN;
    if ((e->state == SCHED_ASSIGNED) != (e->owner >= 0) || (e->state != SCHED_ASSIGNED && e->owner != SCHED_NOBODY))
      return -EUCLEAN;
    if (i > 0 && sched__same(&l->v[i - 1], e))
      return -EUCLEAN;
    at = sched__end(e);
  }
  return at == l->total ? 0 : -EUCLEAN; /* an unknown size is covered up to UINT64_MAX */
}
