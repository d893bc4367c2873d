/* A split's integrity check beyond validators: the origin's Repr-Digest / Digest over the assembled object, its last byte held back from an ordered sink until the hash of everything matched. */
#include "split_core.h"
#include "split_deliver.h"
#include "private/deliver_int.h"
#include "mh_clock.h"
#include "mh_log.h"

#include <inttypes.h>
#include <string.h>

/* The probe's head named a digest of the whole representation (Repr-Digest, Digest; a probe
 * that brought every byte also Content-Digest): checked when the split fetches all of it (a
 * span is part of it; it is checked by nobody here). Only an ordered sink is hashed by the
 * split (in order, as taken); a sink taking any order is checked by its owner at the end
 * (mh_split_digest). */
void mh__digest_setup(struct mh_split *sp) {
  struct mh__integrity *ig = &sp->dl->ig;
  const char *field;
  int bad = 0;
  const struct mh_hdr *h;
  size_t nh = mh__probe_hdrs(sp, &h);
  int whole = sp->rq.span.first == 0 && sp->total == mh__probe_info(sp)->total;
  int found = whole && mh_digest_of_head(h, nh, mh__probe_end(sp) >= sp->total, &ig->digest, &field, &bad);
  if (bad)
    mh_info("split %u: %d malformed member(s) of the probe's digest fields ignored", sp->id, bad);
  if (!found) {
    ig->digest.alg = MH_DIGEST_NONE;
    return;
  }
  ig->digest_field = field;
  mh_digest_run_init(&ig->digest_run, ig->digest.alg);
  mh_dbg("split %u: the object is checked against its %s (%s)", sp->id, field, mh_digest_alg_name(ig->digest.alg));
}

int mh_split_digest(const struct mh_split *sp, struct mh_digest *out, const char **field) {
  const struct mh__integrity *ig = &sp->dl->ig;
  *out = ig->digest;
  *field = ig->digest_field;
  return ig->digest.alg != MH_DIGEST_NONE;
}

/* How many of the len bytes at the reassembly's position d an ordered sink may be offered now:
 * all but the object's last byte, which waits until the hash of every byte before it and of
 * it matched the digest. On a mismatch sets digest_bad (and the result's) and returns 0 (the caller ends the
 * object as a failed transfer). */
size_t mh__digest_allow(struct mh_split *sp, const char *d, size_t len) {
  struct mh__integrity *ig = &sp->dl->ig;
  if (ig->digest.alg == MH_DIGEST_NONE || ig->digest_ok || !sp->sink->ops->ordered)
    return len;
  uint64_t pos = sp->ra.pos, last = sp->total - 1;
  if (pos + len <= last)
    return len;
  if (pos < last)
    return (size_t)(last - pos);
  mh_digest_run_update(&ig->digest_run, d, 1); /* the last byte, held until now */
  if (mh_digest_run_check(&ig->digest_run, &ig->digest) == 0) {
    ig->digest_ok = 1;
    mh_dbg("split %u: %" PRIu64 " bytes match the %s", sp->id, sp->total, ig->digest_field);
    return len;
  }
  ig->digest_bad = sp->res.digest_bad = 1;
  if (sp->env) /* the program holds part of a splice: its retries must not complete it */
    mh_taint_add(&sp->env->taint, mh__object_key(sp), mh_now_us());
  mh_info("split %u: the assembled object (%" PRIu64 " bytes) does not match the origin's %s (%s): "
          "a path served other bytes; the object ends as a failed transfer",
          sp->id, sp->total, ig->digest_field, mh_digest_alg_name(ig->digest.alg));
  return 0;
}

/* The n bytes at d an ordered sink took go into the running hash (the last byte is hashed by
 * mh__digest_allow, before it is offered). */
void mh__digest_taken(struct mh_split *sp, const char *d, size_t n) {
  struct mh__integrity *ig = &sp->dl->ig;
  if (ig->digest.alg == MH_DIGEST_NONE || ig->digest_ok || !sp->sink->ops->ordered)
    return;
  mh_digest_run_update(&ig->digest_run, d, n);
}
