/* The engine's table of objects whose split failed the origin's digest (mh_taint.h). */
#include "mh_taint.h"

static uint64_t mh__fnv(uint64_t h, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
  return h;
}

uint64_t mh_taint_key(const char *host, size_t host_len, const char *target, size_t target_len) {
  uint64_t h = mh__fnv(0xcbf29ce484222325ull, host, host_len);
  h = mh__fnv(h, "", 1); /* a separator no Host value holds */
  h = mh__fnv(h, target, target_len);
  return h ? h : 1; /* 0 marks an empty slot */
}

void mh_taint_add(struct mh_taint *t, uint64_t key, uint64_t now_us) {
  for (unsigned i = 0; i < MH_TAINT_MAX; i++)
    if (t->key[i] == key) {
      t->until_us[i] = now_us + MH_TAINT_TTL_US;
      return;
    }
  unsigned i = t->next++ % MH_TAINT_MAX;
  t->key[i] = key;
  t->until_us[i] = now_us + MH_TAINT_TTL_US;
}

int mh_taint_has(const struct mh_taint *t, uint64_t key, uint64_t now_us) {
  for (unsigned i = 0; i < MH_TAINT_MAX; i++)
    if (t->key[i] == key && now_us < t->until_us[i])
      return 1;
  return 0;
}
