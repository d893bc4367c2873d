/* A resumed object: the byte runs its destination holds already are taken out of the split's ledger and reassembly when the probe's answer is the same representation. */
#include "split_core.h"
#include "mh_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* What the destination holds, private to this file. */
struct mh__have {
  struct mh_split_run *have; /* owned copy of own.have's runs */
  unsigned nhave;
  uint64_t have_total;
  char *have_validator; /* NULL: none known */
  uint64_t resumed;     /* bytes taken from them */
};

int mh__have_copy(struct mh_split *sp, const struct mh_split_have *h) {
  if (!h || !h->n)
    return 0;
  if (!(sp->rs = calloc(1, sizeof *sp->rs)) || !(sp->rs->have = malloc(h->n * sizeof *sp->rs->have)) ||
      (h->validator && !(sp->rs->have_validator = strdup(h->validator)))) {
    mh__have_free(sp);
    return -ENOMEM;
  }
  memcpy(sp->rs->have, h->v, h->n * sizeof *sp->rs->have);
  sp->rs->nhave = h->n;
  sp->rs->have_total = h->total;
  return 0;
}

void mh__have_free(struct mh_split *sp) {
  if (sp->rs) {
    free(sp->rs->have);
    free(sp->rs->have_validator);
    free(sp->rs);
    sp->rs = NULL;
  }
}

/* The probe's head is known (its total set in the scheduler): the runs are applied when it is
 * the representation they came from. The object's last byte is always fetched, so one answer
 * past the probe checks the representation before anything is called complete. */
void mh__have_apply(struct mh_split *sp) {
  const char *validator = mh__probe_validator_keep(sp); /* the owner's, whatever it holds */
  struct mh__have *rs = sp->rs;
  if (!rs || sp->sink->ops->ordered)
    return;
  uint64_t last_end = rs->have[rs->nhave - 1].off + rs->have[rs->nhave - 1].len;
  if ((rs->have_total ? rs->have_total != sp->total : last_end > sp->total) ||
      (rs->have_validator && (!validator || strcmp(validator, rs->have_validator)))) {
    mh_info("split %u: the origin's representation changed since the partial download: all of it again", sp->id);
    mh__note(sp, "resume-changed");
    return;
  }
  for (unsigned i = 0; i < rs->nhave; i++) {
    uint64_t off = rs->have[i].off, end = off + rs->have[i].len;
    if (end > sp->total - 1)
      end = sp->total - 1;
    if (end <= off)
      continue;
    int64_t fresh = sched_prefill(sp->sched, off, end - off);
    if (fresh < 0 || mh_reasm_mark_done(&sp->ra, off, end) < 0)
      break; /* out of memory: the rest is fetched again, which is only slower */
    rs->resumed += (uint64_t)fresh;
  }
  mh_dbg("split %u: resumed %" PRIu64 " of %" PRIu64 " bytes", sp->id, rs->resumed, sp->total);
}

uint64_t mh_split_resumed(const struct mh_split *sp) { return sp->rs ? sp->rs->resumed : 0; }
