/* Host-wide metrics records: slot expiry, merge into a policy's path, and the checked little-endian file image. */
#include "policy/store.h"

#include <errno.h>
#include <math.h>
#include <string.h>

void pol_store_init(struct pol_store *s) { memset(s, 0, sizeof *s); }

static int pol__key_eq(const struct pol_store_key *a, const struct pol_store_key *b) {
  return a->netns == b->netns && a->ifindex == b->ifindex && a->family == b->family &&
         !strncmp(a->ifname, b->ifname, POL_IFNAME_MAX) && !memcmp(a->addr, b->addr, sizeof a->addr);
}

static int pol__valid(uint64_t at, uint64_t now) { return at && at <= now && now - at < POL_METRICS_EXPIRY_US; }

/* The newest time in a slot: which 30 s round it belongs to. */
static uint64_t pol__slot_time(const struct pol_store_obs *o) {
  uint64_t t = o->srtt_min_at;
  if (o->srtt_med_at > t)
    t = o->srtt_med_at;
  if (o->max_rate_at > t)
    t = o->max_rate_at;
  return t;
}

static int pol__rec_live(const struct pol_store_rec *r, uint64_t now) {
  for (unsigned i = 0; i < POL_STORE_SLOTS; i++) {
    const struct pol_store_obs *o = &r->slot[i];
    if (pol__valid(o->srtt_min_at, now) || pol__valid(o->srtt_med_at, now) || pol__valid(o->max_rate_at, now))
      return 1;
  }
  return 0;
}

static int pol__trust_live(const struct pol_store_rec *r, uint64_t now) {
  for (unsigned i = 0; i < POL_TRUST_DESTS; i++)
    if (pol_trust_get(&r->trust, r->trust.e[i].dest, now) != POL_TRUST_UNKNOWN)
      return 1;
  return 0;
}

static int pol__key_ok(const struct pol_store_key *k, uint64_t now_us) {
  return k->netns && memchr(k->ifname, 0, POL_IFNAME_MAX) && k->ifname[0] && now_us;
}

/* Path k's record; else a free one, else one with nothing valid, else the least recent (made
 * k's, empty). */
static struct pol_store_rec *pol__rec_for(struct pol_store *s, const struct pol_store_key *k, uint64_t now_us) {
  struct pol_store_rec *victim = NULL;
  int vrank = 3;
  for (unsigned i = 0; i < POL_STORE_RECORDS; i++) {
    struct pol_store_rec *c = &s->rec[i];
    int rank = !c->updated_us ? 0 : !pol__rec_live(c, now_us) && !pol__trust_live(c, now_us) ? 1 : 2;
    if (rank && pol__key_eq(&c->key, k))
      return c;
    if (rank < vrank || (rank == 2 && vrank == 2 && c->updated_us < victim->updated_us)) {
      victim = c;
      vrank = rank;
    }
  }
  memset(victim, 0, sizeof *victim);
  victim->key = *k;
  return victim;
}

int pol_store_trust_put(struct pol_store *s, const struct pol_store_key *k, uint64_t dest, enum pol_trust_state st,
                        uint64_t now_us) {
  if (!pol__key_ok(k, now_us) || !dest || (st != POL_TRUST_AGREED && st != POL_TRUST_DISAGREED))
    return -EINVAL;
  struct pol_store_rec *r = pol__rec_for(s, k, now_us);
  r->updated_us = now_us;
  return pol_trust_note(&r->trust, dest, st, now_us);
}

void pol_store_trust_get(const struct pol_store *s, const struct pol_store_key *k, struct pol_trust *out) {
  memset(out, 0, sizeof *out);
  for (unsigned i = 0; i < POL_STORE_RECORDS; i++)
    if (s->rec[i].updated_us && pol__key_eq(&s->rec[i].key, k))
      *out = s->rec[i].trust;
}

int pol_store_put(struct pol_store *s, const struct pol_store_key *k, const struct pol_store_obs *o, uint64_t now_us) {
  if (!pol__key_ok(k, now_us) || (!o->srtt_min_us && !o->srtt_med_us && !(o->max_rate > 0)))
    return -EINVAL;
  struct pol_store_rec *r = pol__rec_for(s, k, now_us);
  r->updated_us = now_us;
  struct pol_store_obs *sl = &r->slot[(now_us / POL_STORE_SLOT_US) % POL_STORE_SLOTS];
  uint64_t t = pol__slot_time(sl);
  if (t && (t / POL_STORE_SLOT_US != now_us / POL_STORE_SLOT_US || t > now_us))
    memset(sl, 0, sizeof *sl); /* a slot of an older round (or a clock that went back) */
  if (o->srtt_min_us && (!sl->srtt_min_us || o->srtt_min_us <= sl->srtt_min_us)) {
    sl->srtt_min_us = o->srtt_min_us;
    sl->srtt_min_at = now_us;
  }
  if (o->srtt_med_us) {
    sl->srtt_med_us = o->srtt_med_us;
    sl->srtt_med_at = now_us;
  }
  if (o->max_rate > 0 && isfinite(o->max_rate) && o->max_rate >= sl->max_rate) {
    sl->max_rate = o->max_rate;
    sl->max_rate_at = now_us;
  }
  return 0;
}

int pol_store_get(const struct pol_store *s, const struct pol_store_key *k, uint64_t now_us,
                  struct pol_store_obs *out) {
  memset(out, 0, sizeof *out);
  for (unsigned i = 0; i < POL_STORE_RECORDS; i++) {
    const struct pol_store_rec *r = &s->rec[i];
    if (!r->updated_us || !pol__key_eq(&r->key, k))
      continue;
    for (unsigned j = 0; j < POL_STORE_SLOTS; j++) {
      const struct pol_store_obs *o = &r->slot[j];
      if (o->srtt_min_us && pol__valid(o->srtt_min_at, now_us) &&
          (!out->srtt_min_us || o->srtt_min_us < out->srtt_min_us)) {
        out->srtt_min_us = o->srtt_min_us;
        out->srtt_min_at = o->srtt_min_at;
      }
      if (o->srtt_med_us && pol__valid(o->srtt_med_at, now_us) && o->srtt_med_at > out->srtt_med_at) {
        out->srtt_med_us = o->srtt_med_us;
        out->srtt_med_at = o->srtt_med_at;
      }
      if (o->max_rate > 0 && pol__valid(o->max_rate_at, now_us) && o->max_rate > out->max_rate) {
        out->max_rate = o->max_rate;
        out->max_rate_at = o->max_rate_at;
      }
    }
  }
  return out->srtt_min_us || out->srtt_med_us || out->max_rate > 0 ? 0 : -ENOENT;
}

void pol_store_merge(struct pol_path *p, const struct pol_store_obs *host) {
  if (host->srtt_min_us && (!p->srtt_min_us || host->srtt_min_us < p->srtt_min_us))
    p->srtt_min_us = host->srtt_min_us;
  if (!p->srtt_med_us)
    p->srtt_med_us = host->srtt_med_us;
  /* a median below the minimum would make a model's queueing estimate negative */
  if (p->srtt_med_us && p->srtt_med_us < p->srtt_min_us)
    p->srtt_med_us = p->srtt_min_us;
  if (host->max_rate > p->max_rate)
    p->max_rate = host->max_rate;
}

/* Little-endian fields: the image must not depend on struct padding or compiler. */
static void pol__put64(uint8_t *b, uint64_t v) {
  for (int i = 0; i < 8; i++)
    b[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t pol__get64(const uint8_t *b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | b[i];
  return v;
}
static void pol__put32(uint8_t *b, uint32_t v) {
  for (int i = 0; i < 4; i++)
    b[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t pol__get32(const uint8_t *b) {
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}
static uint64_t pol__dbits(double d) {
  uint64_t v;
  memcpy(&v, &d, sizeof v);
  return v;
}
static double pol__bitsd(uint64_t v) {
  double d;
  memcpy(&d, &v, sizeof d);
  return d;
}

/* FNV-1a: catches torn or foreign bytes; the file is not a security boundary (owner-checked). */
static uint64_t pol__fnv(const uint8_t *b, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

int pol_store_encode(const struct pol_store *s, uint64_t boot, uint8_t *buf, size_t cap) {
  if (cap < POL_STORE_FILE_SIZE)
    return -ENOSPC;
  memset(buf, 0, POL_STORE_FILE_SIZE);
  pol__put32(buf, POL_STORE_MAGIC);
  pol__put32(buf + 4, POL_STORE_VERSION);
  pol__put32(buf + 8, POL_STORE_RECORDS);
  pol__put32(buf + 12, POL_STORE_REC_SIZE);
  pol__put64(buf + 16, boot);
  for (unsigned i = 0; i < POL_STORE_RECORDS; i++) {
    const struct pol_store_rec *r = &s->rec[i];
    uint8_t *b = buf + POL_STORE_HDR_SIZE + i * POL_STORE_REC_SIZE;
    if (r->updated_us) {
      pol__put64(b, r->key.netns);
      pol__put32(b + 8, r->key.ifindex);
      memcpy(b + 12, r->key.ifname, POL_IFNAME_MAX);
      b[28] = r->key.family;
      memcpy(b + 32, r->key.addr, 16);
      pol__put64(b + 48, r->updated_us);
      for (unsigned j = 0; j < POL_STORE_SLOTS; j++) {
        const struct pol_store_obs *o = &r->slot[j];
        uint8_t *p = b + 56 + j * 48;
        pol__put64(p, o->srtt_min_us);
        pol__put64(p + 8, o->srtt_min_at);
        pol__put64(p + 16, o->srtt_med_us);
        pol__put64(p + 24, o->srtt_med_at);
        pol__put64(p + 32, pol__dbits(o->max_rate));
        pol__put64(p + 40, o->max_rate_at);
      }
      for (unsigned j = 0; j < POL_TRUST_DESTS; j++) {
        const struct pol_trust_ent *e = &r->trust.e[j];
        uint8_t *p = b + POL_STORE_TRUST_OFF + j * 24;
        pol__put64(p, e->dest);
        pol__put64(p + 8, e->at);
        pol__put32(p + 16, e->state);
      }
    }
    /* a free record is all zero with a checksum too: any flipped byte is caught */
    pol__put64(b + POL_STORE_REC_SIZE - 8, pol__fnv(b, POL_STORE_REC_SIZE - 8));
  }
  return (int)POL_STORE_FILE_SIZE;
}

/* One slot's values as a policy could take them: a time in the future or a value that is not
 * a measurement makes the whole record untrusted. */
static int pol__obs_ok(const struct pol_store_obs *o, uint64_t now) {
  if (o->srtt_min_at > now || o->srtt_med_at > now || o->max_rate_at > now)
    return 0;
  if (!o->srtt_min_us != !o->srtt_min_at || !o->srtt_med_us != !o->srtt_med_at ||
      (o->max_rate != 0) != (o->max_rate_at != 0))
    return 0;
  if (o->srtt_min_us > POL_METRICS_EXPIRY_US || o->srtt_med_us > POL_METRICS_EXPIRY_US)
    return 0; /* an RTT beyond 5 minutes is no RTT */
  return o->max_rate == 0 || (isfinite(o->max_rate) && o->max_rate > 0 && o->max_rate < 1e13);
}

int pol_store_decode(struct pol_store *s, const uint8_t *buf, size_t len, uint64_t boot, uint64_t now_us) {
  pol_store_init(s);
  if (len != POL_STORE_FILE_SIZE || pol__get32(buf) != POL_STORE_MAGIC || pol__get32(buf + 4) != POL_STORE_VERSION ||
      pol__get32(buf + 8) != POL_STORE_RECORDS || pol__get32(buf + 12) != POL_STORE_REC_SIZE ||
      pol__get64(buf + 16) != boot)
    return -EINVAL;
  int kept = 0;
  for (unsigned i = 0; i < POL_STORE_RECORDS; i++) {
    const uint8_t *b = buf + POL_STORE_HDR_SIZE + i * POL_STORE_REC_SIZE;
    if (pol__fnv(b, POL_STORE_REC_SIZE - 8) != pol__get64(b + POL_STORE_REC_SIZE - 8))
      continue;
    struct pol_store_rec r;
    memset(&r, 0, sizeof r);
    r.updated_us = pol__get64(b + 48);
    if (!r.updated_us)
      continue;
    r.key.netns = pol__get64(b);
    r.key.ifindex = pol__get32(b + 8);
    memcpy(r.key.ifname, b + 12, POL_IFNAME_MAX);
    r.key.family = b[28];
    memcpy(r.key.addr, b + 32, 16);
    int ok = r.key.netns && r.key.ifname[0] && memchr(r.key.ifname, 0, POL_IFNAME_MAX) && r.updated_us <= now_us;
    for (unsigned j = 0; ok && j < POL_STORE_SLOTS; j++) {
      struct pol_store_obs *o = &r.slot[j];
      const uint8_t *p = b + 56 + j * 48;
      o->srtt_min_us = pol__get64(p);
      o->srtt_min_at = pol__get64(p + 8);
      o->srtt_med_us = pol__get64(p + 16);
      o->srtt_med_at = pol__get64(p + 24);
      o->max_rate = pol__bitsd(pol__get64(p + 32));
      o->max_rate_at = pol__get64(p + 40);
      ok = pol__obs_ok(o, now_us);
    }
    for (unsigned j = 0; ok && j < POL_TRUST_DESTS; j++) {
      struct pol_trust_ent *e = &r.trust.e[j];
      const uint8_t *p = b + POL_STORE_TRUST_OFF + j * 24;
      e->dest = pol__get64(p);
      e->at = pol__get64(p + 8);
      e->state = pol__get32(p + 16);
      ok = pol_trust_ent_ok(e, now_us) && !pol__get32(p + 20);
    }
    if (!ok)
      continue;
    /* the name is compared with strncmp: bytes after its NUL must not tell records apart */
    size_t nl = strlen(r.key.ifname);
    memset(r.key.ifname + nl, 0, POL_IFNAME_MAX - nl);
    s->rec[i] = r;
    kept++;
  }
  return kept;
}
