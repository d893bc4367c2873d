/* Integrity fields of an answer: Repr-Digest and Content-Digest (RFC 9530) and Digest (RFC 3230) parsed to one expected sha-256 or sha-512, and the running hash that checks bytes against it. */
#ifndef MH_DIGEST_H
#define MH_DIGEST_H
#include "mh_range.h"
#include "mh_sha256.h"
#include "mh_sha512.h"

#include <stddef.h>
#include <stdint.h>

enum mh_digest_alg { MH_DIGEST_NONE = 0, MH_DIGEST_SHA256 = 1, MH_DIGEST_SHA512 = 2 };

/* One expected digest: the strongest algorithm a field named that this file knows. */
struct mh_digest {
  int alg;       /* enum mh_digest_alg; NONE: nothing usable */
  uint8_t d[64]; /* its bytes (32 for sha-256) */
};

/* The field value v[0..len) of Repr-Digest or Content-Digest: an RFC 8941 dictionary whose
 * members are `sha-256=:BASE64:` or `sha-512=:BASE64:` (parameters after them are skipped).
 * Unknown algorithms are ignored; a member that is not well formed, or a known algorithm whose
 * value does not decode to its length, is skipped and counted in *malformed (the caller logs
 * it). A later member of the same algorithm replaces an earlier one (RFC 8941 §3.2). Fills out
 * (sha-512 over sha-256 when both came) and returns 1, or 0 when nothing usable was named (out
 * untouched). Pure; several lines of a field are fed one after another into the same out. */
int mh_digest_parse_sf(const char *v, size_t len, struct mh_digest *out, int *malformed);
/* The same for RFC 3230's Digest: `SHA-256=BASE64, SHA-512=BASE64` (names in any case). */
int mh_digest_parse_3230(const char *v, size_t len, struct mh_digest *out, int *malformed);
/* The digest a response head names for its whole representation: Repr-Digest, else Digest
 * (RFC 3230's instance digest), else, when content_is_whole (a 200, or a 206 of every byte),
 * Content-Digest. *field names the one taken; *malformed counts the members skipped. 1 when
 * one was found, else 0. Pure. */
int mh_digest_of_head(const struct mh_hdr *h, size_t n, int content_is_whole, struct mh_digest *out, const char **field,
                      int *malformed);
/* "sha-256", "sha-512" or "none". */
const char *mh_digest_alg_name(int alg);

/* A running hash of the algorithm of an expected digest. */
struct mh_digest_run {
  int alg;
  union {
    struct mh_sha256 s256;
    struct mh_sha512 s512;
  } u;
};
void mh_digest_run_init(struct mh_digest_run *r, int alg);
void mh_digest_run_update(struct mh_digest_run *r, const void *p, size_t len);
/* Finishes the hash: 0 when it equals want, -1 when it does not. */
int mh_digest_run_check(struct mh_digest_run *r, const struct mh_digest *want);

#endif
