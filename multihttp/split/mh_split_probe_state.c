/* The probe's state, private to this file: the connection it went out on, its answer as read (kept for a relay), its head and what it says, the verify phase and the paths that agreed with it. */
#include "split_core.h"
#include "mh_clock.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The probe: the program's request sent with a Range, its answer, and the checks of it
 * (sent, moved and judged by mh_split_probe.c). */
struct mh__probe {
  struct mh_buf raw;    /* probe answer bytes (relay fallback) */
  size_t interim_len;   /* of which complete 1xx answers, passed on before the head */
  size_t interim_sent;  /* of those, already passed to the sink (or dropped: a sink
                           that wants none) */
  char *probe_hbuf;     /* the probe's head, owned: views in probe/phdrs point here */
  struct mh_hdr *phdrs; /* owned, nph entries */
  size_t nph;
  struct mh_probe_info probe; /* views into probe_hbuf; first/last/total in object bytes */
  uint64_t t_probe_us;        /* its usable answer taken, since the start (mh__probe_timed) */
  uint64_t probe_len;         /* bytes the probe asked for (mh__probe_size) */
  struct mh__leg *probe_leg;  /* the connection the probe went out on: legs[0] (the
                                 program's), or a pooled one (mh__probe_move) */
  int probe_iface;            /* its interface (stats) */
  int probe_moved;            /* 1: the probe is not on the program's connection, whose
                                 upstream state must then never be relayed as its answer */
  uint64_t t_verify_us;       /* when SP_VERIFY began */
  int end_agreed;             /* SP_VERIFY: the answer for the object's last bytes agreed with
                                 the probe (mh__verified) */
  char *validator;            /* the probe's If-Range value, NUL-terminated, for the owner
                                 (mh__probe_validator_keep) */
  uint32_t trust_agreed;      /* interfaces noted as agreeing about the server (mh_trust.h) */
};

int mh__probe_new(struct mh_split *sp) {
  if (!(sp->pr = calloc(1, sizeof *sp->pr)))
    return -ENOMEM;
  mh_buf_init(&sp->pr->raw, MH__RAW_CAP);
  return 0;
}

void mh__probe_free(struct mh_split *sp) {
  struct mh__probe *pr = sp->pr;
  if (!pr)
    return;
  mh_buf_free(&pr->raw);
  free(pr->probe_hbuf);
  free(pr->phdrs);
  free(pr->validator);
  free(pr);
  sp->pr = NULL;
}

/* ---- the connection it goes out on ------------------------------------------------------ */

void mh__probe_on(struct mh_split *sp, struct mh__leg *g, int moved) {
  sp->pr->probe_leg = g;
  sp->pr->probe_iface = g->iface;
  sp->pr->probe_moved = moved;
}

struct mh__leg *mh__probe_leg_release(struct mh_split *sp) {
  struct mh__leg *g = sp->pr->probe_leg;
  sp->pr->probe_leg = NULL;
  return g;
}

struct mh__leg *mh__probe_leg(const struct mh_split *sp) {
  return sp->pr->probe_leg;
}

int mh__probe_iface(const struct mh_split *sp) { return sp->pr->probe_iface; }

int mh__probe_moved(const struct mh_split *sp) { return sp->pr->probe_moved; }

/* Answers come in request order: the probe's is due on its connection while it heads the queue. */
int mh__probe_due(const struct mh_split *sp, const struct mh__leg *g) {
  return g == sp->pr->probe_leg && g->qn && g->q[0].probe;
}

void mh__probe_asked(struct mh_split *sp, uint64_t len) { sp->pr->probe_len = len; }

/* ---- its answer as read ----------------------------------------------------------------- */

size_t mh__probe_raw_room(const struct mh_split *sp) { return MH__RAW_CAP - sp->pr->raw.len; }

void mh__probe_raw_keep(struct mh_split *sp, const char *buf, size_t n) { (void)mh_buf_append(&sp->pr->raw, buf, n); }

void mh__probe_interim_ends(struct mh_split *sp, size_t after) { sp->pr->interim_len = sp->pr->raw.len - after; }

/* The kept bytes from the first one not passed on, len of them (*p untouched when none: the
 * buffer may have no memory yet). */
static size_t mh__probe_unsent(const struct mh_split *sp, size_t end, const char **p) {
  const struct mh__probe *pr = sp->pr;
  size_t len = end - pr->interim_sent;
  if (len && p)
    *p = pr->raw.data + pr->raw.off + pr->interim_sent;
  return len;
}

size_t mh__probe_interim(const struct mh_split *sp, const char **p) {
  return mh__probe_unsent(sp, sp->pr->interim_len, p);
}

void mh__probe_interim_sent(struct mh_split *sp, size_t n) { sp->pr->interim_sent += n; }

size_t mh__probe_relay(const struct mh_split *sp, const char **p) { return mh__probe_unsent(sp, sp->pr->raw.len, p); }

/* ---- its head and what it says ---------------------------------------------------------- */

void mh__probe_take_head(struct mh_split *sp, char *buf, struct mh_hdr *h, size_t n, const struct mh_probe_info *info) {
  struct mh__probe *pr = sp->pr;
  free(pr->probe_hbuf);
  free(pr->phdrs);
  pr->probe_hbuf = buf;
  pr->phdrs = h;
  pr->nph = n;
  pr->probe = *info;
}

const struct mh_probe_info *mh__probe_info(const struct mh_split *sp) { return &sp->pr->probe; }

size_t mh__probe_hdrs(const struct mh_split *sp, const struct mh_hdr **h) {
  *h = sp->pr->phdrs;
  return sp->pr->nph;
}

uint64_t mh__probe_end(const struct mh_split *sp) { return sp->total ? sp->pr->probe.last + 1 - sp->rq.span.first : 0; }

const char *mh__probe_if_range(const struct mh_split *sp, size_t *len) { return mh_rr_if_range(&sp->pr->probe, len); }

const char *mh__probe_validator_keep(struct mh_split *sp) {
  size_t vlen = 0;
  const char *v = mh__probe_if_range(sp, &vlen);
  free(sp->pr->validator);
  sp->pr->validator = v ? strndup(v, vlen) : NULL;
  return sp->pr->validator;
}

/* (the owner may ask once the split is freed: nothing then) */
const char *mh_split_validator(const struct mh_split *sp) { return sp->pr ? sp->pr->validator : NULL; }

void mh__probe_timed(struct mh_split *sp) { sp->pr->t_probe_us = mh_now_us() - sp->t_start_us; }

/* ---- the verify phase ------------------------------------------------------------------- */

void mh__probe_verify_begins(struct mh_split *sp) { sp->pr->t_verify_us = mh_now_us(); }

int mh__probe_verify_overdue(const struct mh_split *sp) {
  return mh_now_us() - sp->pr->t_verify_us > MH__PROBE_STALL_US;
}

void mh__probe_agree_end(struct mh_split *sp) { sp->pr->end_agreed = 1; }

int mh__probe_end_agreed(const struct mh_split *sp) { return sp->pr->end_agreed; }

/* ---- the paths that agreed with it, its members of the stats line ----------------------- */

int mh__probe_trust_once(struct mh_split *sp, int iface) {
  if (sp->pr->trust_agreed >> iface & 1)
    return 0;
  sp->pr->trust_agreed |= 1u << iface;
  return 1;
}

int mh__probe_stats(const struct mh_split *sp, char *out, size_t cap) {
  const struct mh__probe *pr = sp->pr;
  return snprintf(out, cap, "\"probe_ms\":%.1f,\"probe_bytes\":%" PRIu64 ",\"probe_iface\":\"%s\",\"probe_moved\":%s",
                  pr->t_probe_us / 1000.0, pr->probe_len,
                  sp->net.ifaces[pr->probe_iface >= 0 ? pr->probe_iface : 0].name, pr->probe_moved ? "true" : "false");
}
