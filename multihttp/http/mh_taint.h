/* Objects whose split failed the origin's digest: a program that got part of a splice must never complete it with a Range, nor meet another split of it. */
#ifndef MH_TAINT_H
#define MH_TAINT_H
#include <stddef.h>
#include <stdint.h>

#define MH_TAINT_MAX 16                    /* objects remembered (the oldest is forgotten) */
#define MH_TAINT_TTL_US (600ull * 1000000) /* how long: a program's retries come well within */

/* A small table per engine, loop thread only; zeroed is empty. */
struct mh_taint {
  uint64_t key[MH_TAINT_MAX];
  uint64_t until_us[MH_TAINT_MAX];
  unsigned next;
};

/* The key of an object: its Host field and request target (FNV-1a, 64 bits). Pure. */
uint64_t mh_taint_key(const char *host, size_t host_len, const char *target, size_t target_len);
/* Remembers an object until now_us + MH_TAINT_TTL_US. */
void mh_taint_add(struct mh_taint *t, uint64_t key, uint64_t now_us);
/* 1 when the object is remembered at now_us. */
int mh_taint_has(const struct mh_taint *t, uint64_t key, uint64_t now_us);

#endif
