/* A resumed object: the byte runs its destination holds already are taken out of the split's ledger and reassembly when the probe's answer is the same representation. */
#include "mh_split_int.h"
#include "mh_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int mh__have_copy(struct mh_split *sp, const struct mh_split_have *h) {
  if (!h || !h->n)
    return 0;
  if (!(sp->have = malloc(h->n * sizeof *sp->have)) || (h->validator && !(sp->have_validator = strdup(h->validator)))) {
    mh__have_free(sp);
    return -ENOMEM;
  }
  memcpy(sp->have, h->v, h->n * sizeof *sp->have);
  sp->nhave = h->n;
  sp->have_total = h->total;
  return 0;
}

void mh__have_free(struct mh_split *sp) {
  free(sp->have);
  free(sp->have_validator);
  free(sp->validator);
  sp->have = NULL;
  sp->have_validator = sp->validator = NULL;
  sp->nhave = 0;
}

/* The probe's head is known (its total set in the scheduler): the runs are applied when it is
 * the representation they came from. The object's last byte is always fetched, so one answer
 * past the probe checks the representation before anything is called complete. */
void mh__have_apply(struct mh_split *sp) {
  size_t vlen = 0;
  const char *v = mh_rr_if_range(&sp->probe, &vlen);
  free(sp->validator);
  sp->validator = v ? strndup(v, vlen) : NULL;
  if (!sp->nhave || sp->sink->ops->ordered)
    return;
  uint64_t last_end = sp->have[sp->nhave - 1].off + sp->have[sp->nhave - 1].len;
  if ((sp->have_total ? sp->have_total != sp->total : last_end > sp->total) ||
      (sp->have_validator && (!sp->validator || strcmp(sp->validator, sp->have_validator)))) {
    mh_info("split %u: the origin's representation changed since the partial download: all of it again", sp->id);
    mh__note(sp, "resume-changed");
    return;
  }
  for (unsigned i = 0; i < sp->nhave; i++) {
    uint64_t off = sp->have[i].off, end = off + sp->have[i].len;
    if (end > sp->total - 1)
      end = sp->total - 1;
    if (end <= off)
      continue;
    int64_t fresh = sched_prefill(sp->sched, off, end - off);
    if (fresh < 0 || mh_reasm_mark_done(&sp->ra, off, end) < 0)
      break; /* out of memory: the rest is fetched again, which is only slower */
    sp->resumed += (uint64_t)fresh;
  }
  mh_dbg("split %u: resumed %" PRIu64 " of %" PRIu64 " bytes", sp->id, sp->resumed, sp->total);
}

uint64_t mh_split_resumed(const struct mh_split *sp) { return sp->resumed; }

const char *mh_split_validator(const struct mh_split *sp) { return sp->validator; }
