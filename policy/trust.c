/* Trust of a path per destination: notes of agreement and disagreement, their expiry, merging two views, and the paths a program's connection may be bound to. */
#include "policy/trust.h"

#include <string.h>

uint64_t pol_trust_dest(int family, const uint8_t *addr, size_t len) {
  uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a over the family and the address */
  h = (h ^ (uint8_t)family) * 0x100000001b3ULL;
  for (size_t i = 0; i < len; i++)
    h = (h ^ addr[i]) * 0x100000001b3ULL;
  return h ? h : 1;
}

static uint64_t pol__trust_life(uint32_t st) {
  return st == POL_TRUST_AGREED ? POL_TRUST_AGREED_US : POL_TRUST_DISAGREED_US;
}

static int pol__ent_live(const struct pol_trust_ent *e, uint64_t now) {
  return e->dest && e->at <= now && now - e->at < pol__trust_life(e->state);
}

/* dest's entry in t; else the one to reuse for it: a free or expired one, else the oldest. */
static struct pol_trust_ent *pol__slot(struct pol_trust *t, uint64_t dest, uint64_t now) {
  struct pol_trust_ent *victim = NULL;
  for (unsigned i = 0; i < POL_TRUST_DESTS; i++) {
    struct pol_trust_ent *c = &t->e[i];
    if (c->dest == dest)
      return c;
    if (!victim || (pol__ent_live(victim, now) && (!pol__ent_live(c, now) || c->at < victim->at)))
      victim = c;
  }
  return victim;
}

int pol_trust_note(struct pol_trust *t, uint64_t dest, enum pol_trust_state st, uint64_t now_us) {
  if (!dest || (st != POL_TRUST_AGREED && st != POL_TRUST_DISAGREED))
    return -1;
  struct pol_trust_ent *e = pol__slot(t, dest, now_us);
  if (e->dest == dest && pol__ent_live(e, now_us) && e->state == (uint32_t)st &&
      (st == POL_TRUST_DISAGREED || now_us - e->at < POL_TRUST_REFRESH_US))
    return 0; /* nothing a reader would see differently */
  *e = (struct pol_trust_ent){.dest = dest, .at = now_us, .state = (uint32_t)st};
  return 1;
}

enum pol_trust_state pol_trust_get(const struct pol_trust *t, uint64_t dest, uint64_t now_us) {
  for (unsigned i = 0; i < POL_TRUST_DESTS; i++)
    if (dest && t->e[i].dest == dest)
      return pol__ent_live(&t->e[i], now_us) ? (enum pol_trust_state)t->e[i].state : POL_TRUST_UNKNOWN;
  return POL_TRUST_UNKNOWN;
}

void pol_trust_merge(struct pol_trust *into, const struct pol_trust *from) {
  for (unsigned i = 0; i < POL_TRUST_DESTS; i++) {
    const struct pol_trust_ent *f = &from->e[i];
    if (!f->dest || (f->state != POL_TRUST_AGREED && f->state != POL_TRUST_DISAGREED))
      continue;
    /* f's destination in into, else a free entry, else the oldest: replaced by f when older */
    struct pol_trust_ent *e = &into->e[0];
    for (unsigned k = 0; k < POL_TRUST_DESTS; k++) {
      struct pol_trust_ent *c = &into->e[k];
      if (c->dest == f->dest) {
        e = c;
        break;
      }
      if (e->dest != f->dest && (!c->dest ? e->dest : e->dest && c->at < e->at))
        e = c;
    }
    if (!e->dest || e->at < f->at)
      *e = *f;
  }
}

int pol_link_bad(enum pol_link l) { return l == POL_LINK_NONE || l == POL_LINK_PORTAL || l == POL_LINK_LIMITED; }

uint32_t pol_trust_bindable(const enum pol_trust_state *st, const enum pol_link *link, unsigned n, int kernel) {
  uint32_t m = 0;
  for (unsigned i = 0; i < n && i < 32; i++)
    if ((int)i == kernel || (st[i] == POL_TRUST_AGREED && !(link && pol_link_bad(link[i]))))
      m |= 1u << i;
  return m;
}

int pol_trust_ent_ok(const struct pol_trust_ent *e, uint64_t now_us) {
  if (!e->dest)
    return !e->at && !e->state;
  return (e->state == POL_TRUST_AGREED || e->state == POL_TRUST_DISAGREED) && e->at && e->at <= now_us;
}
